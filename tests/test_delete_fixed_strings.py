"""DELETE on fixed-size string fields: TileDB compares a CHAR cell by its first byte only (as a
signed char) except in IN / NOT IN, and refuses to read an array whose delete condition holds a
member of another size than a cell.  ``=`` / ``<>`` / IN become IN / NOT IN of the strings that
fill a cell; ordering a CHAR field is refused.  ``tiledb`` and tdbsql read what DuckDB's DELETE
leaves."""

from __future__ import annotations

import os

import duckdb
import pyarrow as pa
import pytest

from history_helpers import tiledb
import tdbsql
from tdbsql import schema as S
from tdbsql.errors import UnsupportedSql
from tdbsql.storage.writer import create, delete, write

CELLS = [b"abc", b"abz", b"b\x00\x00", b"aaa", b"\xffab"]


def _array(path: str, dtype: str) -> None:
    create(path, S.Schema([S.Dim("x", "int64", (0, 99), 10)],
                          [S.Attr("c", dtype, cell_val_num=3)]))
    write(path, {"x": pa.array(range(len(CELLS)), pa.int64()),
                 "c": pa.array(CELLS, pa.binary(3))}, timestamp=10)


@pytest.mark.parametrize("dtype", ["char", "ascii"])
@pytest.mark.parametrize("where", ["c = 'abz'", "c <> 'abz'", "c IN ('abc', 'aaa')",
                                   "c NOT IN ('abc')", "c IN ('ab')", "c = 'ab'", "c <> 'abcd'",
                                   "c NOT IN ('a', 'b')", "c IN ('ab', 'abz') OR x = 0"])
def test_delete_matches_duckdb(tmp_path, dtype, where):
    path = str(tmp_path / "a")
    _array(path, dtype)
    oracle = duckdb.connect()
    oracle.register("src", tdbsql.query("SELECT * FROM array", path))
    want = [r[0] for r in oracle.sql(f"SELECT x FROM src WHERE NOT ({where}) ORDER BY x")
            .fetchall()]
    delete(path, where, timestamp=20)
    with tiledb.open(path) as A:  # reads at all: no member of another size
        assert sorted(A.query(attrs=[]).multi_index[0:99]["x"].tolist()) == want
    assert tdbsql.query("SELECT x FROM array ORDER BY x", path).column("x").to_pylist() == want


def test_ordering_a_char_field_is_refused(tmp_path):
    path = str(tmp_path / "a")
    _array(path, "char")
    listing = sorted(os.listdir(os.path.join(path, "__commits")))
    for where in ("c < 'b'", "c >= 'abd'", "NOT (c > 'a')"):
        with pytest.raises(UnsupportedSql, match="first byte only"):
            delete(path, where)
    assert sorted(os.listdir(os.path.join(path, "__commits"))) == listing
