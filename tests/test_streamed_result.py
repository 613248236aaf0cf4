"""Results given part by part (``engine.streamed_result``, ``tdbsql.result``): a query that is
one array scan with row-by-row steps over it streams its result, so a budget far below the
result's size still reads it all through ``fetch_record_batch``, the Arrow stream protocol,
``fetchone`` / ``fetchmany`` and the command line's file formats, while holding it whole
(``arrow``, ``fetchall``) is checked against the budget.  Every way out gives the rows
``tiledb`` reads, and other plans stay whole tables."""

from __future__ import annotations

import csv

import numpy as np
import pyarrow as pa
import pytest
import tiledb

import tdbsql
from tdbsql.engine import scan_step

N = 120_000  # 3.4 MB of int64 / float64 / short strings; the small budget is 1 MB


@pytest.fixture(scope="module")
def array(tmp_path_factory) -> str:
    uri = str(tmp_path_factory.mktemp("streamed") / "a")
    dom = tiledb.Domain(tiledb.Dim("id", domain=(0, 10**9), tile=10**6, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=4000, attrs=[
        tiledb.Attr("x", dtype=np.float64), tiledb.Attr("s", dtype=str, var=True)]))
    ids = np.arange(N, dtype=np.int64) * 5
    with tiledb.open(uri, "w") as A:
        A[ids] = {"x": ids / 7.0, "s": np.array([f"r{i % 977}" for i in range(N)], dtype=object)}
    return uri


@pytest.fixture
def small_chunks(monkeypatch):
    """Scan chunks of 5,000 cells: the result comes in 24 parts."""
    monkeypatch.setattr(scan_step, "CHUNK_CELLS", 5000)


def _con(path: str, memory_mb=None) -> tdbsql.Connection:
    return tdbsql.connect(memory_mb=memory_mb).register("t", path)


def _oracle(path: str) -> pa.Table:
    with tiledb.open(path) as A:
        data = A.query(order="G")[:]
    return pa.table({"id": data["id"], "x": data["x"], "s": pa.array(list(data["s"]))})


def test_which_results_stream(array):
    con = _con(array)
    for sql in ("SELECT * FROM t", "SELECT id, x * 2 AS y FROM t WHERE x > 3",
                "SELECT upper(s) FROM t LIMIT 5",
                "WITH c AS (SELECT id, s FROM t) SELECT s FROM c WHERE id % 2 = 0",
                "SELECT * FROM t ORDER BY x"):  # sorted on disk past the budget
        assert con.sql(sql).streamed, sql
    for sql in ("SELECT * FROM t ORDER BY x LIMIT 3", "SELECT count(*) FROM t",
                "SELECT DISTINCT s FROM t", "SELECT id, sum(x) OVER () FROM t",
                "SELECT * FROM t LIMIT 10%", "SELECT a.id FROM t a JOIN t b USING (id)"):
        assert not con.sql(sql).streamed, sql


def test_a_result_bigger_than_the_budget_streams_out_whole(array, small_chunks):
    want = _oracle(array)
    result = _con(array, 1).sql("SELECT id, x, s FROM t")
    assert result.streamed and result.columns == ["id", "x", "s"]
    batches = list(result.fetch_record_batch(rows_per_batch=3000))
    assert max(b.num_rows for b in batches) <= 3000
    assert pa.Table.from_batches(batches).equals(want)
    # the Arrow stream protocol: a fresh stream on every call, over the same rows
    for _ in range(2):
        assert pa.RecordBatchReader.from_stream(result).read_all().equals(want)
    with pytest.raises(tdbsql.MemoryLimitError, match=r"the scan of 't'.*1\.0 MB"):
        result.arrow()  # held whole: past the budget
    with pytest.raises(tdbsql.MemoryLimitError):
        _con(array, 1).sql("SELECT id, x, s FROM t").fetchall()


def test_fetchone_and_fetchmany_walk_the_parts(array, small_chunks):
    want = _oracle(array).slice(0, 12_000)
    rows = list(zip(*(c.to_pylist() for c in want.columns)))
    result = _con(array).sql("SELECT id, x, s FROM t WHERE id < 60000")
    got = [result.fetchone(), result.fetchone()]
    got += result.fetchmany(7001)  # across two parts
    while batch := result.fetchmany(997):
        got += batch
    assert got == rows and result.fetchone() is None and result.fetchmany(3) == []
    assert result.fetchall() == rows  # every row, whatever was fetched before
    assert result.arrow().equals(want) and len(result) == 12_000 and not result.streamed


@pytest.mark.parametrize("limit, offset", [(0, 0), (1, 0), (4999, 1), (5001, 4999),
                                           (30_000, 90_000), (10, 200_000)])
def test_offset_and_limit_count_across_the_parts(array, small_chunks, limit, offset):
    got = _con(array).sql(f"SELECT id, s FROM t LIMIT {limit} OFFSET {offset}")
    assert got.streamed
    assert got.arrow().equals(_oracle(array).select(["id", "s"]).slice(offset, limit))


def test_an_empty_result_keeps_its_columns(array, small_chunks):
    result = _con(array).sql("SELECT id, s, x / 2 AS h FROM t WHERE x < -1")
    table = pa.RecordBatchReader.from_stream(result).read_all()
    assert table.num_rows == 0 and table.schema.names == ["id", "s", "h"]
    assert table.schema.types == [pa.int64(), pa.string(), pa.float64()]


def test_the_command_line_writes_a_streamed_result_part_by_part(array, small_chunks,
                                                                tmp_path, capsys):
    from tdbsql.cli import main

    out = tmp_path / "out.csv"
    assert main(["query", "SELECT id, s FROM array", array, "--format", "csv",
                 "--output", str(out), "--memory-mb", "1"]) == 0
    with open(out, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    want = _oracle(array)
    assert rows[0] == ["id", "s"] and len(rows) == N + 1  # one header, then every row
    assert rows[1:] == [[str(i), s] for i, s in zip(want["id"].to_pylist(),
                                                    want["s"].to_pylist())]
    parquet = tmp_path / "out.parquet"
    assert main(["query", "SELECT * FROM array", array, "--format", "parquet",
                 "--output", str(parquet), "--memory-mb", "1"]) == 0
    import pyarrow.parquet as pq

    assert pq.read_table(parquet).equals(want)
    # an aligned table needs every row first: held whole, past the budget it is refused
    assert main(["query", "SELECT * FROM array", array, "--memory-mb", "1"]) == 1
    assert "memory budget" in capsys.readouterr().err


def test_a_part_that_cannot_take_the_first_parts_types_is_named():
    """Parts must share the first part's schema: a NULL-typed column is cast to it; a string
    column turned binary in a later part (bytes that are not UTF-8) is a DataError naming
    it, while the whole table unifies the column as binary."""
    from tdbsql.result import Parts, Result

    def parts():
        yield pa.table({"k": [1, 2], "s": ["a", "b"], "n": pa.array([1.5, None])})
        yield pa.table({"k": [3], "s": pa.array([b"\xff"], pa.binary()),
                        "n": pa.nulls(1)})

    result = Result(parts=Parts(parts(), parts, lambda held: None))
    with pytest.raises(tdbsql.DataError, match="column 's' changes type"):
        result.fetch_record_batch().read_all()
    whole = result.arrow()
    assert whole.schema.field("s").type == pa.binary() and whole["n"].to_pylist() == [1.5, None,
                                                                                     None]
    ok = Result(parts=Parts(iter([pa.table({"n": [1.5]}), pa.table({"n": pa.nulls(1)})]),
                            None, lambda held: None))
    assert ok.fetchmany(5) == [(1.5,), (None,)]


def test_read_again_it_is_the_same_query_over_the_same_fragments(small_chunks, tmp_path):
    """Reading a streamed result a second way runs its scan again over the names and
    fragments of its first run: a name registered again, a closed connection or a fragment
    written since change nothing."""
    uri = str(tmp_path / "b")
    dom = tiledb.Domain(tiledb.Dim("id", domain=(0, 10**6), tile=1000, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=1000,
                                                attrs=[tiledb.Attr("v", dtype=np.int64)]))
    ids = np.arange(20_000, dtype=np.int64)
    with tiledb.open(uri, "w") as A:
        A[ids] = {"v": ids * 2}
    want = [(i, 2 * i) for i in range(20_000)]
    con = _con(uri)
    result = con.sql("SELECT id, v FROM t")
    assert result.fetchone() == (0, 0)
    con.register("t", pa.table({"id": [1], "v": [5]}))
    with tiledb.open(uri, "w") as A:  # overwrites cell 1 in a newer fragment
        A[np.array([1], dtype=np.int64)] = {"v": np.array([-1])}
    assert result.fetchall() == want
    con.close()
    assert pa.RecordBatchReader.from_stream(result).read_all().num_rows == 20_000
    assert _con(uri).sql("SELECT v FROM t WHERE id = 1").fetchall() == [(-1,)]


def test_a_part_that_fails_fails_every_later_fetch(small_chunks, tmp_path):
    """A CAST that fails in the 20th part raises there, and again on every fetch after it:
    the rows after the failing part are unknown, so no fetch may answer 'no more rows'."""
    uri = str(tmp_path / "c")
    dom = tiledb.Domain(tiledb.Dim("id", domain=(0, 10**6), tile=1000, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=1000,
                                                attrs=[tiledb.Attr("s", dtype=str, var=True)]))
    ids = np.arange(120_000, dtype=np.int64)
    with tiledb.open(uri, "w") as A:
        A[ids] = {"s": np.array([str(i) if i < 100_000 else "x" for i in ids], dtype=object)}
    result = _con(uri).sql("SELECT CAST(s AS INTEGER) AS n FROM t")
    assert result.streamed and result.fetchmany(3) == [(0,), (1,), (2,)]
    with pytest.raises(tdbsql.Error, match="x"):
        result.fetchmany(200_000)
    for fetch in (lambda: result.fetchone(), lambda: result.fetchmany(1)):
        with pytest.raises(tdbsql.Error, match="x"):
            fetch()
