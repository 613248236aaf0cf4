"""INSERT INTO a sparse array SELECT ...: the query's rows written a chunk at a time and the
chunks merged into one fragment (``insert_query``).  With chunks of a few rows every INSERT
below goes through several parts and the merge; the array reads as DuckDB's table after the
same statements, ``tiledb`` reads the same cells, and an error leaves the array as it was."""

from __future__ import annotations

import os

import duckdb
import numpy as np
import pytest

tiledb = pytest.importorskip("tiledb")

import tdbsql  # noqa: E402
from tdbsql import insert_query  # noqa: E402
from tdbsql import schema as S  # noqa: E402
from tdbsql.errors import DataError, MemoryLimitError  # noqa: E402
from tdbsql.storage.writer import create  # noqa: E402


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch):
    monkeypatch.setattr(insert_query, "CHUNK_ROWS", 7)


def _array(path: str, dups: bool, string_dim: bool = False) -> str:
    dim = S.Dim("k", "ascii") if string_dim else S.Dim("k", "int64", (0, 10**7), 100)
    create(path, S.Schema([dim], [S.Attr("v", "int32"), S.Attr("s", "string", nullable=True)],
                          allows_duplicates=dups, capacity=5))
    return path


def _fragments(path: str) -> list[str]:
    return sorted(os.listdir(os.path.join(path, "__fragments")))


def _tiledb_rows(path: str) -> list[tuple]:
    with tiledb.open(path) as A:
        table = A.query(return_arrow=True).df[:]
    return sorted((tuple(row.values()) for row in table.select(["k", "v", "s"]).to_pylist()),
                  key=repr)


@pytest.mark.parametrize("dups", [False, True])
@pytest.mark.parametrize("string_dim", [False, True])
def test_chunks_merged_into_one_fragment_as_duckdb(tmp_path, dups, string_dim):
    path = _array(str(tmp_path / "a"), dups, string_dim)
    con = tdbsql.connect()
    con.register("t", path)
    duck = duckdb.connect()
    key_type = "VARCHAR" if string_dim else "BIGINT"
    duck.sql(f"CREATE TABLE t (k {key_type}, v INTEGER, s VARCHAR)")
    key = "'k' || lpad(CAST(i AS VARCHAR), 4, '0')" if string_dim else "i"
    statements = [
        f"INSERT INTO t SELECT {key}, i * 3, CASE WHEN i % 4 = 0 THEN NULL ELSE 'x' || i END "
        "FROM range(0, 60, 2) r(i)",
        f"INSERT INTO t SELECT {key}, -i, 'odd' FROM range(1, 40, 2) r(i)",
        "INSERT INTO t SELECT k, v + 1000, s FROM t WHERE v < 0",  # reads what it writes
    ]
    for number, statement in enumerate(statements):
        if not dups and number == 2:
            continue  # the same keys again: refused below
        before = _fragments(path)
        count = con.sql(statement).fetchall()
        assert count == duck.sql(statement).fetchall()
        assert len(_fragments(path)) == len(before) + 1  # one fragment a statement
    query = "SELECT k, v, s FROM t ORDER BY k, v"
    assert con.sql(query).fetchall() == duck.sql(query).fetchall()
    assert _tiledb_rows(path) == sorted(duck.sql("SELECT k, v, s FROM t").fetchall(), key=repr)


def test_a_duplicate_across_chunks_is_refused_and_nothing_written(tmp_path):
    path = _array(str(tmp_path / "a"), dups=False)
    con = tdbsql.connect()
    con.register("t", path)
    con.sql("INSERT INTO t SELECT i, i, NULL FROM range(20) r(i)")
    before = _fragments(path)
    # rows 3 and 17 share k = 103: they fall in different chunks of 7
    with pytest.raises(DataError, match=r"duplicate coordinates \(103\): the array does not allow"):
        con.sql("INSERT INTO t SELECT CASE WHEN i = 17 THEN 103 ELSE i + 100 END, i, NULL "
                "FROM range(20) r(i)")
    assert _fragments(path) == before  # no part, no merged fragment left behind
    assert con.sql("SELECT count(*) FROM t").fetchall() == [(20,)]


def test_a_bad_value_in_a_later_chunk_names_its_row_and_writes_nothing(tmp_path):
    path = _array(str(tmp_path / "a"), dups=True)
    con = tdbsql.connect()
    con.register("t", path)
    with pytest.raises(DataError, match=r"rows counted from row 14 "):
        con.sql("INSERT INTO t SELECT i, CASE WHEN i = 15 THEN NULL ELSE i END, NULL "
                "FROM range(20) r(i)")
    assert _fragments(path) == []


def test_insert_select_past_the_memory_budget_streams(tmp_path, monkeypatch):
    monkeypatch.setattr(insert_query, "CHUNK_ROWS", 50_000)
    source = str(tmp_path / "src")
    dom = tiledb.Domain(tiledb.Dim("k", domain=(0, 10**9), tile=10**6, dtype=np.int64))
    tiledb.Array.create(source, tiledb.ArraySchema(domain=dom, sparse=True, capacity=5000, attrs=[
        tiledb.Attr("v", dtype=np.int32), tiledb.Attr("s", dtype=str, nullable=True)]))
    n = 200_000
    with tiledb.open(source, "w") as A:
        A[np.arange(n, dtype=np.int64) * 7] = {
            "v": np.arange(n, dtype=np.int32),
            "s": np.array([f"s{i % 1000}" for i in range(n)], dtype=object)}
    target = _array(str(tmp_path / "dst"), dups=False)
    con = tdbsql.connect(memory_mb=2)  # the rows take about 4 MB
    con.register("src", source)
    con.register("t", target)
    with pytest.raises(MemoryLimitError):
        con.sql("SELECT * FROM src").arrow()
    assert con.sql("INSERT INTO t SELECT k, v, s FROM src").fetchall() == [(n,)]
    assert len(_fragments(target)) == 1
    with tiledb.open(target) as A:
        data = A[:]
    assert np.array_equal(data["k"], np.arange(n) * 7)
    assert np.array_equal(data["v"], np.arange(n))


def test_many_parts_merge_a_few_at_a_time(tmp_path, monkeypatch):
    """40 parts of 7 rows, merged FAN_IN = 4 at a time: never more than 4 parts lend cells
    at once, and the array holds what DuckDB's table does."""
    from tdbsql.storage import fragment_consolidation

    monkeypatch.setattr(insert_query, "FAN_IN", 4)
    widest = []
    merged = fragment_consolidation.merged

    def counting(schema, runs):
        widest.append(len(runs))
        return merged(schema, runs)

    monkeypatch.setattr(fragment_consolidation, "merged", counting)
    path = _array(str(tmp_path / "a"), dups=False)
    con = tdbsql.connect()
    con.register("t", path)
    statement = "INSERT INTO t SELECT i * 3 % 280, i, 's' || i FROM range(280) r(i)"
    assert con.sql(statement).fetchall() == [(280,)]
    assert max(widest) == 4 and len(_fragments(path)) == 1
    duck = duckdb.connect()
    duck.sql("CREATE TABLE t (k BIGINT, v INTEGER, s VARCHAR)")
    duck.sql(statement)
    query = "SELECT k, v, s FROM t ORDER BY k"
    assert con.sql(query).fetchall() == duck.sql(query).fetchall()


def test_copy_from_parquet_streams_into_one_fragment(tmp_path):
    """COPY t FROM 'f.parquet' is INSERT INTO t SELECT * FROM 'f.parquet': written in parts
    (7 rows each here) merged into one fragment."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = _array(str(tmp_path / "a"), dups=False)
    source = str(tmp_path / "rows.parquet")
    pq.write_table(pa.table({"k": pa.array(range(100, 0, -1), pa.int64()),
                             "v": pa.array(range(100), pa.int32()),
                             "s": pa.array([None if i % 3 else f"s{i}" for i in range(100)])}),
                   source)
    con = tdbsql.connect()
    con.register("t", path)
    assert con.sql(f"COPY t FROM '{source}'").fetchall() == [(100,)]
    assert len(_fragments(path)) == 1
    assert _tiledb_rows(path) == sorted(
        ((100 - i, i, None if i % 3 else f"s{i}") for i in range(100)), key=repr)
