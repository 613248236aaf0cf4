"""TileDB CHAR attributes are bytes to ``tiledb`` (its Arrow reader: large_binary,
fixed_size_binary) and so BLOBs to tdbsql, whatever they hold: a column's type never depends
on its cells (before, a CHAR column read as string when every cell read was valid UTF-8 and as
binary otherwise -- per query, even per streamed part).  SQL on them answers what DuckDB
answers on the cells ``tiledb`` reads, pushed-down comparisons included (a string constant is
read as DuckDB reads it as a BLOB: ``'\\x80z'`` is two bytes)."""

from __future__ import annotations

import duckdb
import numpy as np
import pyarrow as pa
import pytest

from history_helpers import duckdb_after_delete, sorted_rows, tiledb
import tdbsql
from tdbsql.errors import SqlError

VAR = [b"ab", b"\x80z", b"", b"zz", b"ok", b"\xff"]
FIXED = [b"abc", b"\xff\x00q", b"zzz", b"abd", b"\x80\x80\x80", b"a\x00\x00"]


@pytest.fixture
def path(tmp_path):
    path = str(tmp_path / "a")
    schema = tiledb.ArraySchema(
        domain=tiledb.Domain(tiledb.Dim("x", domain=(0, 99), tile=10, dtype=np.int64)),
        sparse=True, attrs=[tiledb.Attr("c", dtype=bytes, var=True),
                            tiledb.Attr("f", dtype="S3")])
    tiledb.Array.create(path, schema)
    with tiledb.open(path, "w", timestamp=1) as A:
        A[np.arange(len(VAR))] = {"c": np.array(VAR, dtype=object),
                                  "f": np.array(FIXED, dtype="S3")}
    return path


def _oracle(path) -> pa.Table:
    with tiledb.open(path) as A:
        table = A.query(return_arrow=True).df[:]
    return table.select(["x", "c", "f"])


def test_char_is_binary_whatever_the_cells_hold(path):
    for where in ("", "WHERE x = 0", "WHERE x = 1"):  # valid UTF-8 only, then not
        table = tdbsql.query(f"SELECT c, f FROM array {where}", path)
        assert table.schema.types == [pa.binary(), pa.binary()]
    assert tdbsql.query("SELECT typeof(c), typeof(f) FROM array LIMIT 1", path).to_pylist() == \
        [{"typeof(c)": "BLOB", "typeof(f)": "BLOB"}]
    assert tdbsql.query("SELECT c FROM array ORDER BY x", path).column("c").to_pylist() == VAR


QUERIES = ["SELECT x FROM t WHERE c = 'ab' ORDER BY x",
           "SELECT x FROM t WHERE c = '\\x80z' ORDER BY x",
           "SELECT x FROM t WHERE c > '\\x7F' ORDER BY x",
           "SELECT x FROM t WHERE c IN ('ok', '\\xFF') ORDER BY x",
           "SELECT x FROM t WHERE f = 'abc' ORDER BY x",
           "SELECT x FROM t WHERE f >= 'abd' ORDER BY x",
           "SELECT x, hex(c), octet_length(c), CAST(c AS VARCHAR) FROM t ORDER BY x",
           "SELECT min(c), max(c), count(DISTINCT f) FROM t",
           "SELECT c, count(*) FROM t GROUP BY c ORDER BY c"]


@pytest.mark.parametrize("sql", QUERIES)
def test_as_duckdb_on_what_tiledb_reads(path, sql):
    oracle = duckdb.connect()
    oracle.register("t", _oracle(path))
    assert tdbsql.connect().register("t", path).sql(sql).fetchall() == oracle.sql(sql).fetchall()


@pytest.mark.parametrize("sql", ["SELECT x FROM t WHERE c LIKE 'a%'", "SELECT upper(c) FROM t",
                                 "SELECT x FROM t WHERE c = 'é'"])
def test_what_duckdb_refuses_on_a_blob(path, sql):
    oracle = duckdb.connect()
    oracle.register("t", _oracle(path))
    with pytest.raises(duckdb.Error):
        oracle.sql(sql).fetchall()
    with pytest.raises(SqlError):
        tdbsql.connect().register("t", path).sql(sql).fetchall()


@pytest.mark.parametrize("where", ["c = '\\x80z'", "c IN ('ab', '\\xFF')", "f = '\\xFF\\x00q'",
                                   "c <> 'zz'"])
def test_delete_reads_the_string_as_a_blob(path, where):
    source = _oracle(path)
    tdbsql.connect().register("t", path).sql(f"DELETE FROM t WHERE {where}")
    want = sorted_rows(duckdb_after_delete(source, where), ["x"])
    with tiledb.open(path) as A:
        theirs = sorted_rows(A.query(return_arrow=True).df[:].select(["x", "c", "f"]), ["x"])
    assert theirs == want
