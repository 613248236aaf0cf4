"""DELETE answers DuckDB's ``Count``: the rows visible at the delete's timestamp on which the
condition is TRUE -- the newest version of each cell, earlier deletes applied, each duplicate a
row, nothing written after that timestamp."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pytest

import tdbsql
from tdbsql import schema as S
from tdbsql.storage.writer import create, delete, write


def _create(path: str, dups: bool = False) -> None:
    create(path, S.Schema([S.Dim("x", "int64", (0, 99), 10)],
                          [S.Attr("n", "int32", nullable=True)], allows_duplicates=dups))


def _rows(xs, ns) -> pa.Table:
    return pa.table({"x": pa.array(xs, pa.int64()), "n": pa.array(ns, pa.int32())})


def _duckdb_count(rows: pa.Table, where: str) -> int:
    con = duckdb.connect()
    con.register("src", rows)
    con.sql("CREATE TABLE t AS SELECT * FROM src")
    return con.execute(f"DELETE FROM t WHERE {where}").fetchone()[0]


@pytest.mark.parametrize("where", ["n > 4", "n < 4", "n IS NULL", "n IS NOT NULL OR x = 1",
                                   "x >= 0", "n = 100"])
def test_newest_versions_and_earlier_deletes(tmp_path, where):
    path = str(tmp_path / "a")
    _create(path)
    write(path, _rows([1, 2, 3, 4, 5], [9, 9, 1, None, 6]), timestamp=10)
    write(path, _rows([1, 2], [1, None]), timestamp=20)  # 1 and 2 no longer hold 9
    delete(path, "n = 6", timestamp=25)  # 5 is gone
    visible = tdbsql.query("SELECT * FROM array", path)
    assert sorted(visible.column("x").to_pylist()) == [1, 2, 3, 4]
    con = tdbsql.connect().register("t", path)
    got = con.sql(f"DELETE FROM t WHERE {where}").arrow()
    assert got.schema == pa.schema([("Count", pa.int64())])
    assert got.column("Count").to_pylist() == [_duckdb_count(visible, where)]


def test_each_duplicate_is_a_row(tmp_path):
    path = str(tmp_path / "a")
    _create(path, dups=True)
    write(path, _rows([1, 1, 2], [5, 5, 5]), timestamp=10)
    write(path, _rows([1], [7]), timestamp=20)
    rows = tdbsql.query("SELECT * FROM array", path)
    assert delete(path, "n > 4", timestamp=30).deleted == _duckdb_count(rows, "n > 4") == 4


def test_cells_written_after_the_timestamp_are_not_counted(tmp_path):
    path = str(tmp_path / "a")
    _create(path)
    write(path, _rows([1, 2], [5, 6]), timestamp=10)
    write(path, _rows([3], [7]), timestamp=30)
    commit = delete(path, "n > 4", timestamp=20)
    assert commit.deleted == 2  # 3 came after the delete: neither deleted nor counted
    assert commit.name.startswith("__20_20_") and commit.name.endswith(".del")
    assert tdbsql.query("SELECT x FROM array", path).column("x").to_pylist() == [3]
