"""DELETE comparing a number or BOOLEAN column with a string (``i = '1'``, ``f = 'NaN'``,
``b = 'yes'``) or testing a BOOLEAN column alone (``WHERE b``, ``WHERE NOT b``): the string is
read as DuckDB casts it to the column's type, NaN compares as SQL orders it (equal to itself,
above every number), and ``tiledb`` and tdbsql read what DuckDB's DELETE leaves."""

from __future__ import annotations

import math
import os

import pyarrow as pa
import pytest

from history_helpers import duckdb_after_delete, sorted_rows, tiledb
import tdbsql
from tdbsql import schema as S
from tdbsql.errors import SqlError, UnsupportedSql
from tdbsql.storage.writer import create, delete, write

COLUMNS = ["x", "i", "u", "f", "r", "b"]
WHERES = [
    # integers: DuckDB's string-to-integer cast (spaces, fractions rounding, hex, underscores)
    "i = '1'", "i = ' 1 '", "i = '1.5'", "i < '1.5'", "i >= '0x2'", "i = '1_0'",
    "i IN ('1', '2')", "i IN ('1', 3)", "i NOT IN ('-3', '4')", "i BETWEEN '0' AND '2'",
    "'2' = i", "u = '255'", "u < '-0'", "i = '1e0'",
    # floats: NaN equal to itself and above every number, infinities by name
    "f = 'NaN'", "f = 'nan'", "f <> 'NaN'", "f < 'NaN'", "f <= 'NaN'", "f > 'NaN'",
    "f >= 'NaN'", "f > 'inf'", "f = 'Infinity'", "f = '-inf'", "f = ' 1.5 '", "f = '1.5e0'",
    "f IN ('NaN', 1.5)", "f IN ('NaN')", "f NOT IN ('NaN', '-inf')", "f BETWEEN 1 AND 'NaN'",
    "f BETWEEN 'NaN' AND 'NaN'", "NOT (f = 'NaN')", "'nan' = f", "f = 'NaN' OR i = 1",
    "r = '0.1'", "r = 'NaN'", "r <> 'nan'", "r < '0.2'", "r IN ('NaN', '0.1')", "r > '-inf'",
    # a string beside a number on a FLOAT column: all compared as FLOATs (0.1 is 0.1f)
    "r IN ('1', 0.1)", "r BETWEEN '0' AND 0.1", "r IN ('NaN', '0.25', 0.1)",
    # booleans: the column alone, and strings DuckDB reads as booleans
    "b", "NOT b", "b AND i = 1", "NOT b OR f = 'NaN'", "b = 'true'", "b = 'yes'", "b = 'T'",
    "b <> '0'", "b IN ('f')", "NOT (NOT b)",
]


def _source() -> pa.Table:
    nan, inf = math.nan, math.inf
    return pa.table({
        "x": pa.array(range(10), pa.int64()),
        "i": pa.array([-3, 0, 1, 2, 3, 4, 10, None, 1, 2], pa.int32()),
        "u": pa.array([0, 1, 2, 255, 254, 3, 4, 5, 6, 7], pa.uint8()),
        "f": pa.array([nan, 1.5, -inf, inf, 0.0, None, -0.0, nan, 2.0, 0.1], pa.float64()),
        "r": pa.array([0.1, nan, -inf, None, 0.25, 1.0, nan, 0.0, inf, -1.0], pa.float32()),
        "b": pa.array([True, False, None, True, False, True, None, False, True, False]),
    })


def _array(path: str) -> pa.Table:
    create(path, S.Schema([S.Dim("x", "int64", (0, 99), 10)],
                          [S.Attr("i", "int32", nullable=True), S.Attr("u", "uint8"),
                           S.Attr("f", "float64", nullable=True),
                           S.Attr("r", "float32", nullable=True),
                           S.Attr("b", "bool", nullable=True)]))
    source = _source()
    write(path, source, timestamp=10)
    return source


@pytest.mark.parametrize("where", WHERES)
def test_delete_matches_duckdb(tmp_path, where):
    path = str(tmp_path / "a")
    source = _array(path)
    tdbsql.connect().register("t", path).sql(f"DELETE FROM t WHERE {where}")
    want = _nan_as_text(sorted_rows(duckdb_after_delete(source, where), ["x"]))
    with tiledb.open(path) as A:
        theirs = sorted_rows(A.query(return_arrow=True).df[:].select(COLUMNS), ["x"])
    assert _nan_as_text(theirs) == want
    ours = sorted_rows(tdbsql.query("SELECT * FROM array", path), ["x"])
    assert _nan_as_text(ours) == want


def test_the_count_is_duckdbs(tmp_path):
    path = str(tmp_path / "a")
    _array(path)
    con = tdbsql.connect().register("t", path)
    assert con.sql("DELETE FROM t WHERE f = 'NaN'").fetchall() == [(2,)]
    assert con.sql("DELETE FROM t WHERE NOT b").fetchall() == [(3,)]  # x = 7 went first


@pytest.mark.parametrize("where, error, message", [
    ("i = 'abc'", SqlError, "column 'i': Could not convert string 'abc' to INT32"),
    ("i = '99999999999'", SqlError, "Could not convert string '99999999999' to INT32"),
    ("u > '-1'", SqlError, "Could not convert string '-1' to UINT8"),
    ("f = '0x10'", SqlError, "Could not convert string '0x10' to DOUBLE"),
    ("b = 'on'", SqlError, "Could not convert string 'on' to BOOL"),
    ("i IN ('1.5', 3.5)", UnsupportedSql, "common type"),
    ("r IN ('0.1', 0.1e0)", UnsupportedSql, "common type"),
    ("b IN ('t', 0)", UnsupportedSql, "common type"),
    ("i", UnsupportedSql, "BOOLEAN columns"),
])
def test_refused_before_anything_is_written(tmp_path, where, error, message):
    """DuckDB refuses the strings it cannot read as the column's type (an SqlError here
    too); strings DuckDB reads in another type than the column's are not supported."""
    import duckdb

    path = str(tmp_path / "a")
    source = _array(path)
    if error is SqlError:
        with pytest.raises(duckdb.ConversionException):
            duckdb_after_delete(source, where)
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        delete(path, where)
    assert not [f for f in os.listdir(os.path.join(path, "__commits")) if f.endswith(".del")]


def test_the_unreadable_string_is_underlined(tmp_path):
    path = str(tmp_path / "a")
    _array(path)
    sql = "DELETE FROM t WHERE i IN (1, 'x1')"
    with pytest.raises(SqlError) as caught:
        tdbsql.connect().register("t", path).sql(sql)
    assert sql[slice(*caught.value.span)] == "'x1'"


def _nan_as_text(rows: dict[str, list]) -> dict[str, list]:
    return {k: ["NaN" if isinstance(v, float) and math.isnan(v) else v for v in vs]
            for k, vs in rows.items()}

