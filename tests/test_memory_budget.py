"""The query memory budget (``engine.memory``): what must be held whole is counted, a query
past the budget stops with ``MemoryLimitError`` naming the step, streamed work stays within a
budget far below the data's size, and results under the budget are DuckDB's."""

from __future__ import annotations

import duckdb
import numpy as np
import pyarrow as pa
import pytest
import tiledb

import tdbsql
from sql_fixtures import oracle_table

N = 200_000  # 3.2 MB of two int64/float64 columns; the small budget below is 1 MB


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> str:
    uri = str(tmp_path_factory.mktemp("memory") / "big")
    dom = tiledb.Domain(tiledb.Dim("id", domain=(0, 10**9), tile=10**6, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=5000, attrs=[
        tiledb.Attr("g", dtype=np.int32), tiledb.Attr("x", dtype=np.float64)]))
    rng = np.random.default_rng(3)
    with tiledb.open(uri, "w") as A:
        A[np.arange(N, dtype=np.int64) * 3] = {
            "g": rng.integers(0, 7, N).astype(np.int32), "x": rng.random(N)}
    return uri


@pytest.fixture(scope="module")
def overlapping(tmp_path_factory) -> str:
    """Two writes over the same coordinates: reading them merges (newest wins)."""
    uri = str(tmp_path_factory.mktemp("memory") / "overlap")
    dom = tiledb.Domain(tiledb.Dim("id", domain=(0, 10**6), tile=1000, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=1000,
                                                attrs=[tiledb.Attr("x", dtype=np.float64)]))
    ids = np.arange(100_000, dtype=np.int64)
    for ts, scale in ((1, 1.0), (2, 2.0)):
        with tiledb.open(uri, "w", timestamp=ts) as A:
            A[ids] = {"x": ids * scale}
    return uri


def _con(path: str, memory_mb=None) -> tdbsql.Connection:
    return tdbsql.connect(memory_mb=memory_mb).register("t", path)


def test_streamed_aggregate_fits_a_budget_far_below_the_data(big):
    got = _con(big, 1).sql("SELECT g, count(*) AS n, sum(x) AS s, min(id) AS lo FROM t "
                           "GROUP BY g ORDER BY g").fetchall()
    duck = duckdb.connect()
    duck.register("t", oracle_table(big))
    want = duck.sql("SELECT g, count(*), sum(x), min(id) FROM t GROUP BY g ORDER BY g").fetchall()
    assert [(g, n, lo) for g, n, _, lo in got] == [(g, n, lo) for g, n, _, lo in want]
    assert [s for *_, s, _ in got] == pytest.approx([s for *_, s, _ in want], rel=1e-12)


def test_materialised_scan_and_sort_past_the_budget_stop_clearly(big):
    with pytest.raises(tdbsql.MemoryLimitError, match=r"scan of 't'.*1\.0 MB.*TDBSQL_MEMORY_MB"):
        _con(big, 1).sql("SELECT id, x FROM t").fetchall()
    # a sort past the budget goes to disk (engine/external_sort.py), unless its key is a list
    with pytest.raises(tdbsql.MemoryLimitError, match=r"needs more than the memory budget, "
                                                      r"and a list"):
        _con(big, 7).sql("SELECT id, x FROM t ORDER BY [x]").fetchall()
    assert _con(big, 7).sql("SELECT id, x FROM t ORDER BY x, id").fetchall() == \
        _con(big, 256).sql("SELECT id, x FROM t ORDER BY x, id").fetchall()
    # the same queries with room run, and the error is an OperationalError (PEP 249)
    assert issubclass(tdbsql.MemoryLimitError, tdbsql.OperationalError)
    assert _con(big, 64).sql("SELECT id FROM t ORDER BY x LIMIT 2").arrow().num_rows == 2


def test_join_output_past_the_budget_stops_before_it_is_built(big):
    sql = "SELECT a.id, b.x FROM t a JOIN t b ON a.g = b.g WHERE a.id < 3000 AND b.id < 3000"
    with pytest.raises(tdbsql.MemoryLimitError, match="join with 'b'"):
        _con(big, 1).sql(sql).fetchall()
    rows = _con(big, 256).sql(sql).arrow().num_rows
    duck = duckdb.connect()
    duck.register("t", oracle_table(big))
    assert rows == duck.sql(sql).fetchall().__len__()


CORRELATED = ("SELECT count(*) AS n FROM t WHERE t.id < 30000 AND x > (SELECT avg(t2.x) "
              "FROM t AS t2 WHERE t2.g = t.g AND t2.id <> t.id AND t2.id < 30000)")


def test_key_matches_a_condition_still_tests_are_counted_before_they_are_made(big,
                                                                               monkeypatch):
    """A decorrelated equality beside an inequality matches 10,000 outer rows with 1,400
    inner rows each on g: 14M pairs (224 MB of indices) are refused before they are made
    (a median: the join made whole), and with room they are tested in blocks of 1Mi pairs
    (the columns the condition reads gathered for one block at a time) to DuckDB's answer.
    An avg, with partial states, is fed t2 batch by batch (``engine.streamed_join``): a
    batch whose matches are refused is joined in halves, so it answers within 64 MB too."""
    from tdbsql.engine import hash_join

    def never(*args):
        raise AssertionError("the pairs were made")
    median = CORRELATED.replace("avg(", "median(")
    with monkeypatch.context() as patched:
        patched.setattr(hash_join.join_kernels, "join_fill", never)
        with pytest.raises(tdbsql.MemoryLimitError, match="join with 't2'"):
            _con(big, 64).sql(median).fetchall()
    duck = duckdb.connect()
    duck.register("t", oracle_table(big))
    for sql in (CORRELATED, median):
        assert _con(big, 2048).sql(sql).fetchall() == duck.sql(sql).fetchall()
    assert _con(big, 64).sql(CORRELATED).fetchall() == duck.sql(CORRELATED).fetchall()


def test_merging_overlapping_fragments_counts_the_cells_it_holds(overlapping):
    with pytest.raises(tdbsql.MemoryLimitError, match="merging the overlapping fragments"):
        _con(overlapping, 1).sql("SELECT sum(x) FROM t WHERE x > 5").fetchall()
    got = _con(overlapping, 64).sql("SELECT sum(x) AS s FROM t WHERE x > 5").fetchall()
    assert got == [(float(sum(i * 2.0 for i in range(100_000) if i * 2.0 > 5)),)]


def _dense_column(uri: str, values: np.ndarray, tile: int) -> str:
    """A 1-D dense array ``r`` of int64 ``v``, one cell per value."""
    dom = tiledb.Domain(tiledb.Dim("r", domain=(0, len(values) - 1), tile=tile, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=False,
                                                attrs=[tiledb.Attr("v", dtype=np.int64)]))
    with tiledb.open(uri, "w") as A:
        A[0:len(values)] = values
    return uri


def test_dense_result_box_past_the_budget_is_refused_before_allocation(tmp_path):
    uri = _dense_column(str(tmp_path / "dense"), np.arange(1_000_000, dtype=np.int64), 100_000)
    # read in slabs of five tile rows: a slab is the most the scan holds
    with pytest.raises(tdbsql.MemoryLimitError, match="500,000-cell result box"):
        _con(uri, 2).sql("SELECT r, v FROM t WHERE v % 2 = 0").fetchall()
    assert _con(uri, 2).sql("SELECT r, v FROM t WHERE r < 1000 AND v % 2 = 0").arrow() \
        .num_rows == 500


def test_an_aggregate_streams_through_a_dense_box_past_the_budget(tmp_path):
    """A dense box is read in slabs (``engine.dense_scan``): the scan holds a few, never the
    box (36 MB with its coordinates, under a 12 MB budget)."""
    uri = _dense_column(str(tmp_path / "big"), np.arange(2_000_000, dtype=np.int64) % 1000,
                        50_000)
    con = _con(uri, 12)
    assert con.sql("SELECT sum(v) AS s, count(*) AS n, max(r) AS m FROM t WHERE v >= 10 "
                   "AND v < 500").fetchall() == [(sum(range(10, 500)) * 2000, 490 * 2000,
                                                  1_999_499)]
    with pytest.raises(tdbsql.MemoryLimitError):  # the rows themselves are the caller's
        con.sql("SELECT r, v FROM t").fetchall()


def test_registered_arrow_tables_are_the_callers_memory():
    table = pa.table({"a": np.arange(N), "b": np.ones(N)})  # 3.2 MB, budget 1 MB
    con = tdbsql.connect(memory_mb=1).register_arrow("t", table)
    assert con.sql("SELECT sum(b) AS s, max(a) AS m FROM t").fetchall() == [(float(N), N - 1)]
    with pytest.raises(tdbsql.MemoryLimitError):  # a sorted copy is the query's own
        con.sql("SELECT a FROM t ORDER BY b DESC").fetchall()


def test_list_functions_count_against_the_connections_budget(monkeypatch):
    """``range()`` as a list checks what it would build against ``connect(memory_mb=...)``
    (it read only $TDBSQL_MEMORY_MB and the default), and under the budget answers."""
    monkeypatch.delenv("TDBSQL_MEMORY_MB", raising=False)
    with pytest.raises(tdbsql.MemoryLimitError, match="memory budget of 1.0 MB"):
        tdbsql.connect(memory_mb=1).sql("SELECT range(0, 10000000)").fetchall()
    assert tdbsql.connect(memory_mb=1).sql("SELECT len(range(0, 1000))").fetchall() == [(1000,)]


def test_a_budget_of_a_few_kb_is_named_in_kb():
    """A budget under 0.1 MB said 'needs 0.0 MB ..., more than the memory budget of 0.0 MB'."""
    con = tdbsql.connect(memory_mb=0.02)
    with pytest.raises(tdbsql.MemoryLimitError, match=r"needs 0\.8 MB .* budget of 20\.5 KB"):
        con.sql("SELECT list(range) FROM range(100000)").fetchall()


def test_bad_budgets_are_interface_errors(big, monkeypatch):
    for bad in (0, -1, "lots", True):
        with pytest.raises(tdbsql.InterfaceError, match="memory_mb"):
            tdbsql.connect(memory_mb=bad)
    monkeypatch.setenv("TDBSQL_MEMORY_MB", "lots")
    with pytest.raises(tdbsql.InterfaceError, match="TDBSQL_MEMORY_MB"):
        _con(big).sql("SELECT count(*) FROM t").fetchall()
    monkeypatch.setenv("TDBSQL_MEMORY_MB", "1")
    with pytest.raises(tdbsql.MemoryLimitError, match="1.0 MB"):
        _con(big).sql("SELECT id, x FROM t").fetchall()


def test_cli_names_the_budget(big, monkeypatch, capsys):
    from tdbsql.cli import main

    monkeypatch.setenv("TDBSQL_MEMORY_MB", "1")
    code = main(["query", "SELECT id, x FROM array", big])
    assert code != 0
    err = capsys.readouterr().err
    assert "memory budget" in err and "Traceback" not in err


def test_budget_reaches_the_one_liners_and_the_cli_flag(big, capsys):
    from tdbsql.cli import main

    with pytest.raises(tdbsql.MemoryLimitError, match="1.0 MB"):
        tdbsql.query("SELECT id, x FROM array", big, memory_mb=1)
    assert tdbsql.query("SELECT count(*) AS n FROM array", big, memory_mb=1) \
        .column("n").to_pylist() == [N]
    assert main(["query", "SELECT id, x FROM array", big, "--memory-mb", "1"]) != 0
    assert "memory budget of 1.0 MB" in capsys.readouterr().err
    assert main(["query", "SELECT count(*) FROM array", big, "--memory-mb", "1",
                 "--format", "csv"]) == 0
    assert str(N) in capsys.readouterr().out


def test_unnest_and_lambdas_count_the_rows_they_repeat(monkeypatch):
    """unnest and a lambda repeat a row's columns for each of its elements: the copies are
    checked against ``connect(memory_mb=...)`` before they are made (one 10 kB string
    repeated 100,000 times is ~1 GB), and only the columns read are repeated, so the same
    queries without the wide column answer under the budget."""
    monkeypatch.delenv("TDBSQL_MEMORY_MB", raising=False)
    con = tdbsql.connect(memory_mb=16)
    wide = "(SELECT repeat('x', 10000) AS s, 3 AS k)"
    for sql in (f"SELECT unnest(range(100000)) AS u, s FROM {wide}",
                f"SELECT unnest(range(100000)) AS u FROM {wide} ORDER BY s, u",
                f"SELECT list_transform(range(100000), lambda x: s) FROM {wide}",
                f"SELECT list_filter(range(100000), lambda x: x < length(s)) FROM {wide}"):
        with pytest.raises(tdbsql.MemoryLimitError, match="memory budget of 16.0 MB"):
            con.sql(sql).fetchall()
    assert con.sql(f"SELECT count(*), sum(u + k) FROM (SELECT unnest(range(100000)) AS u, k "
                   f"FROM {wide})").fetchall() == [(100000, 4999950000 + 300000)]
    assert con.sql(f"SELECT len(list_filter(range(100000), lambda x: x < k)) "
                   f"FROM {wide}").fetchall() == [(3,)]


def test_window_extremes_over_per_row_offsets_count_their_table(monkeypatch):
    """min / max over ROWS offsets read per row (frames stepping back) use a sparse table of
    n log n positions (``engine.frame_minimum``): past the budget it is refused by name, under
    it answered."""
    monkeypatch.delenv("TDBSQL_MEMORY_MB", raising=False)
    n = 200_000  # the table: 8 bytes x 200K x 18 levels = 28.8 MB
    table = pa.table({"id": np.arange(n), "v": np.arange(n) % 1000})
    sql = ("SELECT max(w) AS m FROM (SELECT min(v) OVER (ORDER BY id ROWS BETWEEN id * 7 % 5 "
           "PRECEDING AND CURRENT ROW) AS w FROM t)")
    with pytest.raises(tdbsql.MemoryLimitError, match=r"the window function min\(\)"):
        tdbsql.connect(memory_mb=20).register_arrow("t", table).sql(sql).fetchall()
    oracle = duckdb.connect()
    oracle.register("t", table)
    want = oracle.sql(sql).fetchall()
    assert tdbsql.connect(memory_mb=200).register_arrow("t", table).sql(sql).fetchall() == want


def test_a_small_budget_bounds_the_tile_cache_and_the_chunks(tmp_path):
    """Under memory_mb=4 the tile cache keeps at most 1 MB and a scan's chunks shrink; a
    query with the default budget lets the cache grow back to its configured size."""
    import numpy as np
    import tiledb

    from tdbsql.engine.scan_step import CHUNK_CELLS, budget_chunk_cells
    from tdbsql.storage.tile_cache import tile_cache

    uri = str(tmp_path / "wide")
    dom = tiledb.Domain(tiledb.Dim("i", domain=(0, 10**6), tile=1000, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=10_000, attrs=[
        tiledb.Attr("x", dtype=np.float64), tiledb.Attr("y", dtype=np.float64)]))
    n = 400_000
    with tiledb.open(uri, "w") as A:
        A[np.arange(n, dtype=np.int64)] = {"x": np.ones(n), "y": np.arange(n, dtype=np.float64)}
    cache = tile_cache()
    cache.clear()
    small = tdbsql.connect(memory_mb=4).register("t", uri)
    assert small.sql("SELECT sum(y) FROM t WHERE x > 0").fetchall() == [(n * (n - 1) / 2,)]
    assert cache.budget == (4 << 20) // 4 and cache.held <= cache.budget
    schema = tdbsql.open(uri).schema
    assert budget_chunk_cells(4 << 20, schema, ["i", "x", "y"]) == (4 << 20) // (16 * 24)
    assert budget_chunk_cells(8 << 30, schema, ["i", "x", "y"]) == CHUNK_CELLS
    tdbsql.connect().register("t", uri).sql("SELECT sum(y) FROM t").fetchall()
    assert cache.budget == cache.configured
