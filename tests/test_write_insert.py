"""INSERT through SQL onto the writer: enumerated attributes take their labels, nullable
attributes may be left out; checked by reading back with ``tiledb``."""

from __future__ import annotations

import os

import numpy as np
import pytest

tiledb = pytest.importorskip("tiledb")

import tdbsql  # noqa: E402
from tdbsql import schema as S  # noqa: E402
from tdbsql.errors import DataError  # noqa: E402
from tdbsql.storage.writer import create  # noqa: E402


@pytest.fixture()
def table(tmp_path):
    path = str(tmp_path / "a")
    create(path, S.Schema([S.Dim("x", "int64", (0, 99), 10)],
                          [S.Attr("c", "int8", enumeration="colour"),
                           S.Attr("w", "int8", enumeration="weight", nullable=True),
                           S.Attr("n", "float64", nullable=True)],
                          enumerations=[S.Enumeration("colour", ["red", "green", "blue"]),
                                        S.Enumeration("weight", [0.5, 1.5, 2.5])]))
    return path, tdbsql.connect().register("t", path)


def _rows(path):
    with tiledb.open(path) as A:
        got = A.query(return_arrow=True).df[0:99].sort_by("x")
    return [tuple(r.values()) for r in got.to_pylist()]


def test_insert_labels_and_omitted_nullable_attributes(table):
    path, con = table
    assert con.sql("INSERT INTO t VALUES (1, 'blue', 2.5, 0.25)").fetchall() == [(1,)]
    assert con.sql("INSERT INTO t (c, x) VALUES ('red', 2), ('green', 3)").fetchall() == [(2,)]
    # enumerated columns read as labels and write back as labels
    assert con.sql("INSERT INTO t SELECT x + 10, c, w, n FROM t").fetchall() == [(3,)]
    expected = [(1, "blue", 2.5, 0.25), (2, "red", None, None), (3, "green", None, None)]
    expected += [(x + 10, c, w, n) for x, c, w, n in expected]
    assert _rows(path) == expected
    assert con.sql("SELECT x, c FROM t WHERE c = 'green' ORDER BY x").fetchall() == [
        (3, "green"), (13, "green")]


def test_insert_column_lists_match_names_in_any_case(table):
    """As DuckDB (and UPDATE's SET, and tables made by CREATE TABLE): INSERT INTO t (X, C)."""
    path, con = table
    assert con.sql("INSERT INTO t (C, X) VALUES ('red', 4)").fetchall() == [(1,)]
    assert _rows(path) == [(4, "red", None, None)]


def test_insert_errors_name_the_field_or_label(table):
    path, con = table
    with pytest.raises(DataError, match=r"column 'c', row 1: 'pink' is not a label"):
        con.sql("INSERT INTO t VALUES (1, 'red', NULL, NULL), (2, 'pink', NULL, NULL)")
    with pytest.raises(DataError, match=r"column 'w', row 0: 9\.0 is not a label"):
        con.sql("INSERT INTO t VALUES (1, 'red', 9, NULL)")
    with pytest.raises(tdbsql.SqlError, match="attribute 'c'"):
        con.sql("INSERT INTO t (x) VALUES (1)")
    with pytest.raises(tdbsql.SqlError, match="dimension 'x'"):
        con.sql("INSERT INTO t (c) VALUES ('red')")
    with pytest.raises(DataError, match=r"dimension 'x', row 1: coordinate 200 is outside the "
                                        r"domain \[0, 99\]"):
        con.sql("INSERT INTO t VALUES (1, 'red', NULL, NULL), (200, 'red', NULL, NULL)")
    assert os.listdir(os.path.join(path, "__fragments")) == []


@pytest.mark.parametrize("statement", [
    "INSERT INTO t VALUES (1, 1.5, 2.5)",           # DECIMAL -> integer: half away from zero
    "INSERT INTO t VALUES (2, 2.5e0, 0.5e0)",       # DOUBLE -> integer: half to even
    "INSERT INTO t VALUES (3, '3.5', '254.5')",     # numeric strings: half away from zero
    "INSERT INTO t VALUES (4, 1, 1), (5, -2.5, 7.49)",  # rows of different types
    "INSERT INTO t SELECT 6, 7.5, 8.5e0",
    "INSERT INTO t (x, i) VALUES (7, -1.5e0)",
])
def test_insert_rounds_numbers_into_integers_as_duckdb(tmp_path, statement):
    import duckdb

    path = str(tmp_path / "a")
    create(path, S.Schema([S.Dim("x", "int64", (0, 99), 10)],
                          [S.Attr("i", "int32", nullable=True), S.Attr("u", "uint8", nullable=True)]))
    tdbsql.connect().register("t", path).sql(statement)
    oracle = duckdb.connect()
    oracle.sql("CREATE TABLE t (x BIGINT, i INTEGER, u UTINYINT)")
    oracle.sql(statement)
    assert _rows(path) == oracle.sql("SELECT * FROM t ORDER BY x").fetchall()


@pytest.mark.parametrize("statement,culprit", [
    ("INSERT INTO t VALUES (1, 1, 255.5)", "255.5"),   # rounds to 256
    ("INSERT INTO t VALUES (1, 1e10, 1)", "1e10"),
    ("INSERT INTO t VALUES (1, 'nan', 1)", "'nan'"),
    ("INSERT INTO t VALUES (1, 1, 1), (2, 2, -0.5)", "0.5"),  # the minus sign has no place
])
def test_insert_refuses_numbers_out_of_an_integer_range(tmp_path, statement, culprit):
    import duckdb

    path = str(tmp_path / "a")
    create(path, S.Schema([S.Dim("x", "int64", (0, 99), 10)],
                          [S.Attr("i", "int32"), S.Attr("u", "uint8")]))
    with pytest.raises(tdbsql.SqlError, match="cannot be stored as") as caught:
        tdbsql.connect().register("t", path).sql(statement)
    assert statement[slice(*caught.value.span)] == culprit
    oracle = duckdb.connect()
    oracle.sql("CREATE TABLE t (x BIGINT, i INTEGER, u UTINYINT)")
    with pytest.raises(duckdb.ConversionException):
        oracle.sql(statement)
    assert not os.path.exists(os.path.join(path, "__fragments")) or \
        not os.listdir(os.path.join(path, "__fragments"))


def test_cells_of_several_values_null_whole_or_refused(tmp_path):
    """A cell of several numbers is NULL as a whole (a nullable field) or holds every value:
    a NULL inside one cannot be stored (it was written as 0).  VALUES rows mixing NULL
    cells and lists of a nested type went through a pyarrow SystemError."""
    path = str(tmp_path / "m")
    create(path, S.Schema([S.Dim("k", "int64", (0, 9), 5)],
                          [S.Attr("m", "int32", cell_val_num=3),
                           S.Attr("n", "float64", cell_val_num=2, nullable=True),
                           S.Attr("v", "int16", var=True, nullable=True)]))
    con = tdbsql.connect().register("a", path)
    for sql, column in [("INSERT INTO a VALUES (1, [1, NULL, 3], [1.0, 2.0], [1])", "m"),
                        ("INSERT INTO a VALUES (1, [1, 2, 3], [NULL, 2.0], [1])", "n"),
                        ("INSERT INTO a VALUES (1, [1, 2, 3], NULL, [1, NULL])", "v")]:
        with pytest.raises(DataError, match=rf"column '{column}', row 0: a NULL value inside"):
            con.sql(sql)
    assert con.sql("INSERT INTO a VALUES (4, [1, 2, 3], NULL, NULL), "
                   "(5, [4, 5, 6], [1, 2], [])").fetchall() == [(2,)]
    with pytest.raises(DataError, match="a NULL value inside"):
        con.sql("UPDATE a SET m = [7, NULL, 9]")
    with tiledb.open(path) as A:
        got = A.query(attrs=["m"])[:]
    order = np.argsort(got["k"])
    assert got["k"][order].tolist() == [4, 5]
    assert [list(cell) for cell in got["m"][order]] == [[1, 2, 3], [4, 5, 6]]
    assert con.sql("SELECT * FROM a ORDER BY k").fetchall() == [
        (4, [1, 2, 3], None, None), (5, [4, 5, 6], [1.0, 2.0], [])]
