"""DELETE ... WHERE x IS [NOT] NULL on fields of every kind.  The commit never holds TileDB's
own NULL test (an empty value ``tiledb`` cannot read back); ``tiledb`` and tdbsql read what
DuckDB's DELETE keeps of the same rows, and every kept cell is as it was (the cells written
back are exact)."""

from __future__ import annotations

import glob
import math
import os

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from history_helpers import duckdb_after_delete, tiledb
import tdbsql
from tdbsql import schema as S
from tdbsql.errors import SqlError, UnsupportedSql
from tdbsql.format.delete_condition import ConditionOp, ExprNode, parse_delete_condition
from tdbsql.storage.writer import create, delete, write

_X = list(range(8))
_NULLS = {"c": {0, 3}, "a": {1, 3, 5}, "b": {2}, "d": {0, 7}, "g": {4, 5}, "u": {6}}


def _values(name: str, values: list) -> list:
    return [None if x in _NULLS[name] else v for x, v in zip(_X, values)]


def _source() -> pa.Table:
    """The rows as DuckDB holds them (``c`` as plain bytes: DuckDB has no fixed-size binary)."""
    return pa.table({
        "x": pa.array(_X, pa.int64()),
        "c": pa.array(_values("c", [b"abc", b"y\x00z", b"", b"q", b"zzz", b"a\x00\x00",
                                    b"\x00\x00\x00", b"mno"]), pa.binary()),
        "a": pa.array(_values("a", ["", "p", "\x00", "q", "r", "s", "", "t"]), pa.string()),
        "b": pa.array(_values("b", [True, False] * 4), pa.bool_()),
        "d": pa.array(_values("d", list(range(-3, 5))), pa.int32()).cast(pa.date32()),
        "g": pa.array(_values("g", [float("nan"), 0.0, -0.0, 1.5, 2.0, 3.0, -1.0, 9.0]),
                      pa.float32()),
        "u": pa.array(_values("u", [0, 1, 2, 3, 65535, 5, 6, 7]), pa.uint16()),
    })


def _array(path: str) -> pa.Table:
    create(path, S.Schema([S.Dim("x", "int64", (0, 99), 10)],
                          [S.Attr("c", "char", cell_val_num=3, nullable=True),
                           S.Attr("a", "ascii", nullable=True),
                           S.Attr("b", "bool", nullable=True),
                           S.Attr("d", "datetime64[D]", nullable=True),
                           S.Attr("g", "float32", nullable=True),
                           S.Attr("u", "uint16", nullable=True)]))
    source = _source()
    c = [None if v is None else v.ljust(3, b"\0") for v in source.column("c").to_pylist()]
    write(path, source.set_column(1, "c", pa.array(c, pa.binary(3))), timestamp=10)
    # the cells as DuckDB compares them: c padded to its 3 bytes
    return source.set_column(1, "c", pa.array(c, pa.binary()))


WHERES = ["c IS NULL", "c IS NOT NULL", "a IS NULL", "a IS NOT NULL", "b IS NULL",
          "NOT (b IS NULL)", "d IS NULL", "d NOTNULL", "g IS NULL", "g IS NOT NULL",
          "u ISNULL", "u IS NOT NULL", "x IS NULL", "x IS NOT NULL",
          "a IS NULL AND c IS NOT NULL", "a IS NULL OR g > 1", "g < 1 OR u IS NULL",
          "NOT (g IS NOT NULL OR d > '1970-01-01')", "u IS NOT NULL AND b = TRUE",
          "(a IS NULL OR c IS NULL) AND NOT (u IS NULL)", "g IS NULL OR g <> 1.5",
          # x IS [NOT] TRUE / FALSE: b = TRUE, u <> 0 ..., the NOT forms also where x is NULL
          "b IS TRUE", "b IS FALSE", "b IS NOT TRUE", "b IS NOT FALSE", "g IS TRUE",
          "g IS FALSE", "g IS NOT TRUE", "g IS NOT FALSE", "u IS TRUE", "u IS NOT FALSE",
          "u IS NOT TRUE", "u IS FALSE", "x IS TRUE", "x IS NOT TRUE", "x IS FALSE",
          "b IS NOT TRUE AND u IS NOT FALSE", "NOT (b IS TRUE) OR g IS FALSE",
          "NOT (u IS NOT TRUE)",
          # names in any case, as DuckDB's
          "G IS TRUE", "A IS NULL", "U IS NOT FALSE AND B IS NOT NULL"]


@pytest.mark.parametrize("where", WHERES)
def test_null_tests_delete_as_duckdb(tmp_path, where):
    path = str(tmp_path / "a")
    source = _array(path)
    before = tdbsql.query("SELECT * FROM array ORDER BY x", path)
    tdbsql.connect().register("t", path).sql(f"DELETE FROM t WHERE {where}")
    want = sorted(duckdb_after_delete(source, where).column("x").to_pylist())
    with tiledb.open(path) as A:
        assert sorted(A.query(attrs=["a", "b", "d", "g", "u"])[:]["x"].tolist()) == want
    after = tdbsql.query("SELECT * FROM array ORDER BY x", path)
    assert after.column("x").to_pylist() == want
    kept = pc.is_in(before.column("x"), value_set=pa.array(want, pa.int64()))
    assert _rows(after) == _rows(before.filter(kept))
    for del_file in glob.glob(os.path.join(path, "__commits", "*.del")):
        _assert_no_empty_value(parse_delete_condition(open(del_file, "rb").read(), del_file))


def _rows(table: pa.Table) -> list[dict]:
    """Rows as dicts, NaN as a string so that it equals itself."""
    return [{k: "NaN" if isinstance(v, float) and math.isnan(v) else v for k, v in row.items()}
            for row in table.to_pylist()]


def _assert_no_empty_value(node) -> None:
    if isinstance(node, ExprNode):
        for child in node.children:
            _assert_no_empty_value(child)
    else:
        assert node.value, node  # TileDB reads an empty value back as a comparison with it


def test_a_string_dimension(tmp_path):
    path = str(tmp_path / "a")
    create(path, S.Schema([S.Dim("k", "ascii")], [S.Attr("x", "int64")]))
    write(path, {"k": ["", "a", "b"], "x": [0, 1, 2]}, timestamp=10)
    delete(path, "k IS NULL OR k = 'a'", timestamp=20)
    with tiledb.open(path) as A:
        assert sorted(A[:]["x"].tolist()) == [0, 2]
    assert tdbsql.query("SELECT x FROM array ORDER BY x", path).column("x").to_pylist() == [0, 2]
    delete(path, "k IS NOT NULL AND x > 0", timestamp=30)
    assert tdbsql.query("SELECT x FROM array", path).column("x").to_pylist() == [0]


@pytest.mark.parametrize("dtype", ["blob", "STRING_UTF16", "GEOM_WKB"])
@pytest.mark.parametrize("where", ["b IS NULL", "b IS NOT NULL", "b = 'x'", "b IN ('x', 'yz')"])
def test_a_delete_tiledb_cannot_evaluate_is_refused(tmp_path, dtype, where):
    """A condition on a var-sized field TileDB's query conditions cannot compare (anything but
    CHAR / ASCII / UTF-8 text) is UnsupportedSql and nothing is written: the commit made the
    whole array unreadable to tiledb ("Value node non-empty attribute may only be var-sized
    for ASCII strings")."""
    path = str(tmp_path / "a")
    create(path, S.Schema([S.Dim("x", "int64", (0, 9), 5)],
                          [S.Attr("b", dtype, var=True, nullable=True), S.Attr("v", "int32")]))
    cells = pa.array(["x", None, "yz"]) if dtype.startswith("STRING") else \
        pa.array([b"x", None, b"yz"], pa.binary())
    write(path, {"x": [1, 2, 3], "b": cells,
                 "v": pa.array([1, 2, 3], pa.int32())}, timestamp=10)
    commits = set(os.listdir(os.path.join(path, "__commits")))
    with pytest.raises(UnsupportedSql, match="compare only CHAR, ASCII and UTF-8"):
        delete(path, where, timestamp=20)
    assert set(os.listdir(os.path.join(path, "__commits"))) == commits
    with tiledb.open(path) as A:
        assert sorted(A.query(attrs=["v"])[:]["v"].tolist()) == [1, 2, 3]


def test_null_test_is_the_only_form_of_null(tmp_path):
    """``x = NULL`` (NULL everywhere), a list column's ``IS TRUE`` and NULL test are refused
    before anything is written; an unknown column is an SqlError."""
    path = str(tmp_path / "a")
    create(path, S.Schema([S.Dim("x", "int64", (0, 99), 10)],
                          [S.Attr("v", "int32", var=True, nullable=True),
                           S.Attr("n", "float64", nullable=True)]))
    write(path, {"x": [1], "v": pa.array([[1]], pa.list_(pa.int32())), "n": [1.0]},
          timestamp=10)
    commits = set(os.listdir(os.path.join(path, "__commits")))
    for where, error, match in (("n = NULL", UnsupportedSql, "comparison with NULL"),
                                ("n IN (1, NULL)", UnsupportedSql, "a NULL in an IN list"),
                                ("n NOT IN (NULL)", UnsupportedSql, "a NULL in an IN list"),
                                ("v IS TRUE", SqlError, "list of INT32"),
                                ("v IS NULL", UnsupportedSql, "list of numbers"),
                                ("n + 1 IS NULL", UnsupportedSql, "tests a column"),
                                ("nope IS NULL", SqlError, "unknown column 'nope'")):
        with pytest.raises(error, match=match):
            delete(path, where)
    assert set(os.listdir(os.path.join(path, "__commits"))) == commits


def test_the_null_test_nodes_stored(tmp_path):
    path = str(tmp_path / "a")
    create(path, S.Schema([S.Dim("x", "int64", (0, 99), 10)],
                          [S.Attr("n", "float64", nullable=True)]))
    write(path, {"x": [1, 2], "n": [None, 1.0]}, timestamp=10)
    delete(path, "n IS NULL", timestamp=20)
    (del_file,) = glob.glob(os.path.join(path, "__commits", "*.del"))
    stored = parse_delete_condition(open(del_file, "rb").read(), del_file)
    # kept: the cells where n is not NULL, n IN (m) OR n NOT IN (m)
    assert [c.op for c in stored.children] == [ConditionOp.IN, ConditionOp.NOT_IN]
    assert stored.children[0].members == stored.children[1].members == (b"\0" * 8,)
    assert tdbsql.query("SELECT x FROM array", path).column("x").to_pylist() == [2]


@pytest.mark.parametrize("cond", ["s == None", "s != None", "s == None or n < 2"])
def test_reads_null_tests_written_by_tiledb(tmp_path, cond):
    """``tiledb`` writes its NULL test as an empty value and reads it back as a comparison with
    ``''`` (``s == None`` also deletes the empty strings); tdbsql reads the same cells."""
    import numpy as np
    from history_helpers import assert_same

    uri = str(tmp_path / "a")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 99), tile=10, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, attrs=[
        tiledb.Attr("s", dtype=str, var=True, nullable=True),
        tiledb.Attr("n", dtype=np.int32, nullable=True)]))
    with tiledb.open(uri, "w", timestamp=10) as A:
        A[np.arange(6)] = {"s": np.array(["a", None, "", "c", None, "d"], dtype=object),
                           "n": pa.array([0, 1, 2, None, 4, 5], pa.int32())}
    with tiledb.open(uri, "d", timestamp=20) as A:
        A.query(cond=cond).submit()
    rows = assert_same(uri)
    assert rows["x"] == {"s == None": [0, 3, 5], "s != None": [2],
                         "s == None or n < 2": [5]}[cond]
    assert_same(uri, 15)


def test_truth_tests_of_other_columns_are_refused(tmp_path):
    """``IS TRUE`` of a date or a text (DuckDB casts text to BOOLEAN by its spelling) is
    refused by name before anything is written."""
    path = str(tmp_path / "a")
    _array(path)
    commits = set(os.listdir(os.path.join(path, "__commits")))
    for where in ("d IS TRUE", "a IS NOT FALSE", "x + 1 IS TRUE"):
        with pytest.raises(UnsupportedSql, match="IS"):
            delete(path, where)
    assert set(os.listdir(os.path.join(path, "__commits"))) == commits
