"""Streamed scans and two-phase aggregation (``engine.pipeline``, ``engine.partial_aggregate``)
over an array of many small tiles, against DuckDB on the cells ``tiledb`` reads; and the
decoded-tile cache (``storage.tile_cache``)."""

from __future__ import annotations

import math
import os

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
import tiledb

import tdbsql
from sql_fixtures import duckdb_over, oracle_table
from tdbsql.storage.tile_cache import TileCache, tile_cache

N = 400
CAPACITY = 8  # 50 tiles: every query runs over many batches


@pytest.fixture(scope="module")
def tiles(tmp_path_factory) -> str:
    uri = str(tmp_path_factory.mktemp("streaming") / "t")
    rng = np.random.default_rng(7)
    dom = tiledb.Domain(tiledb.Dim("id", domain=(1, 100_000), tile=1000, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=CAPACITY, attrs=[
        tiledb.Attr("g", dtype=str, var=True, nullable=True),
        tiledb.Attr("k", dtype=np.int32, nullable=True),
        tiledb.Attr("big", dtype=np.int64),
        tiledb.Attr("x", dtype=np.float64, nullable=True),
    ]))
    ids = np.arange(1, N + 1, dtype=np.int64) * 7
    groups = np.array(["red", "green", "blue", "über"], dtype=object)[rng.integers(0, 4, N)]
    null = rng.random((3, N)) < 0.1
    with tiledb.open(uri, "w") as A:
        A[ids] = {
            "g": pa.array(list(groups), pa.string(), mask=null[0]),
            "k": pa.array(rng.integers(-9, 10, N).astype(np.int32), pa.int32(), mask=null[1]),
            # sums of a few hundred of these pass int64 (DuckDB: HUGEINT; tdbsql: decimal)
            "big": np.full(N, 2**61, dtype=np.int64) + rng.integers(0, 1000, N),
            "x": pa.array(rng.integers(-400, 400, N) / 8.0, pa.float64(), mask=null[2]),
        }
    return uri


@pytest.fixture(scope="module")
def oracle(tiles):
    return duckdb_over(tiles)


AGGREGATES = ("count(*), count(k), sum(k), avg(k), min(k), max(k), sum(x), avg(x), min(x), "
              "max(x), var_samp(x), var_pop(x), stddev_samp(k), stddev_pop(k), "
              "bool_and(k > -9), bool_or(k > 8), count_if(x > 0), min(g), max(g)")

QUERIES = [
    f"SELECT g, {AGGREGATES} FROM t GROUP BY g",
    f"SELECT {AGGREGATES} FROM t",
    f"SELECT {AGGREGATES} FROM t WHERE id BETWEEN 300 AND 2100 AND x > -20",
    "SELECT g, sum(big), avg(big), min(big) FROM t GROUP BY g",
    "SELECT sum(big) FROM t",
    "SELECT k % 3 AS m, sum(x) AS s, count(*) AS n FROM t GROUP BY m HAVING count(*) > 5",
    "SELECT g, k, count(*) FROM t WHERE k BETWEEN -2 AND 2 GROUP BY g, k",
    "SELECT count(*), sum(k), avg(x), min(g) FROM t WHERE k > 100",  # no row passes
    "SELECT g, count(*) FROM t WHERE k > 100 GROUP BY g",
    "SELECT sum(x) / count(x) + max(k) AS e, g IS NULL AS n FROM t GROUP BY g IS NULL",
    "SELECT id, g, x FROM t WHERE k = 3 AND id > 700",
    "SELECT g, count(*) FROM t WHERE id % 5 = 0 GROUP BY ALL",
    "SELECT g, count(*) FILTER (WHERE k > 0), sum(x) FILTER (WHERE k < 0), avg(big) FILTER "
    "(WHERE x IS NULL), var_samp(x) FILTER (WHERE id > 1000) FROM t GROUP BY g",
    "SELECT count(*) FILTER (WHERE id > 700), min(g) FILTER (WHERE k = 3), count(k) FROM t",
    # expressions over a grouped expression beside aggregates (read through the group key)
    "SELECT length(upper(g)) + count(*) AS n, upper(g) || '!' AS u, sum(x) FROM t "
    "GROUP BY upper(g) ORDER BY upper(g)",
    "SELECT (k % 3) * 10 + count(*) AS v, sum(x) - k % 3 AS s FROM t WHERE id > 500 "
    "GROUP BY k % 3 HAVING k % 3 IS NULL OR (k % 3) + count(*) > 30",
]


def assert_streamed_equals_duckdb(tiles: str, oracle, sql: str) -> None:
    """``sql`` over table ``t`` gives DuckDB's rows in tdbsql (over the array) and DuckDB."""
    got = tdbsql.query(sql.replace("FROM t", "FROM array"), tiles)
    want = oracle.sql(sql).arrow()
    want = want.read_all() if isinstance(want, pa.RecordBatchReader) else want
    assert _same(_rows(got), _rows(want)), (sql, _rows(got)[:5], _rows(want)[:5])


def _rows(table: pa.Table) -> list[tuple]:
    return sorted((tuple(_plain(v) for v in row.values()) for row in table.to_pylist()),
                  key=lambda r: tuple((v is None, str(v)) for v in r))


def _plain(value):
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    if hasattr(value, "as_integer_ratio") and not isinstance(value, (int, float)):
        return int(value) if value == int(value) else float(value)  # decimal
    return value


def _same(got: list[tuple], want: list[tuple]) -> bool:
    if len(got) != len(want):
        return False
    for a_row, b_row in zip(got, want):
        for a, b in zip(a_row, b_row):
            if isinstance(a, float) or isinstance(b, float):
                if a is None or b is None or not math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9):
                    return False
            elif a != b:
                return False
    return True


@pytest.mark.parametrize("sql", QUERIES)
def test_streamed_results_equal_duckdb(tiles, oracle, sql):
    assert_streamed_equals_duckdb(tiles, oracle, sql)


@pytest.mark.parametrize("sql", [
    "SELECT id, k FROM t WHERE id BETWEEN 300 AND 2100 AND k >= -9",
    "SELECT k, count(*), sum(id) FROM t WHERE id BETWEEN 300 AND 2100 AND k >= -9 GROUP BY k",
])
def test_conjuncts_settled_by_zone_maps_are_not_tested_again(tiles, oracle, monkeypatch, sql):
    """Tiles inside the id range do not test it again; tiles whose k is never NULL (k >= -9
    for every value) do not test k; tiles with both settled test nothing."""
    from tdbsql.engine.scan import TileScan
    from tdbsql.engine.scan_step import ArrayScan
    from tdbsql.planner.conjuncts import conjuncts

    tested, batches = [], []
    task_filter, pieces = TileScan.task_filter, ArrayScan.pieces

    def spy_filter(self, task, condition):
        result = task_filter(self, task, condition)
        residual = [c.sql() for c in conjuncts(result.residual)]
        tested.append(tuple(sorted([t.column for t in result.tests] + residual)))
        return result

    def spy_pieces(self, chunk, condition, **options):
        batches.extend(chunk)
        return pieces(self, chunk, condition, **options)

    monkeypatch.setattr(TileScan, "task_filter", spy_filter)
    monkeypatch.setattr(ArrayScan, "pieces", spy_pieces)
    assert_streamed_equals_duckdb(tiles, oracle, sql)
    # settled whole: nothing to test, or an ALWAYS tile that is not filtered at all
    assert () in tested or len(tested) < len(batches)
    assert ("k",) in tested  # inside the range, a NULL in k: the stored-value test on k
    assert any("id" in entry for entry in tested)  # at an edge of the range


def test_streamed_aggregate_runs_in_batches(tiles):
    text = tdbsql.explain("SELECT g, sum(x) FROM array WHERE id > 350 GROUP BY g", tiles,
                          analyze=True)
    assert "rows=" in text
    # one tile is left out by its MBR; the streamed scan reports its rows and funnel
    assert f"rows={N - 350 // 7:,}" in text, text


def test_first_is_the_first_cell_in_global_order(tiles):
    got = tdbsql.query("SELECT g, first(k) AS f FROM array GROUP BY g", tiles).to_pylist()
    cells = oracle_table(tiles).to_pylist()  # global order: by id
    want = {}
    for cell in cells:
        want.setdefault(cell["g"], cell["k"])
    assert {r["g"]: r["f"] for r in got} == want


def test_integer_sum_past_int64_is_exact(tiles):
    got = tdbsql.query("SELECT sum(big) AS s FROM array", tiles).column("s")[0].as_py()
    want = sum(int(v) for v in oracle_table(tiles).column("big").to_pylist())
    assert want > 2**63 and int(got) == want


def test_same_answer_with_one_thread(tiles, monkeypatch):
    sql = f"SELECT g, {AGGREGATES} FROM array GROUP BY g"
    parallel = tdbsql.query(sql, tiles)
    monkeypatch.setenv("TDBSQL_THREADS", "1")
    assert _same(_rows(tdbsql.query(sql, tiles)), _rows(parallel))


def test_batches_with_bytes_that_are_not_utf8(tmp_path):
    """A string tile holding invalid UTF-8 is binary; the other batches follow it."""
    uri = str(tmp_path / "bytes")
    dom = tiledb.Domain(tiledb.Dim("id", domain=(1, 100), tile=10, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=2, attrs=[
        tiledb.Attr("s", dtype=bytes, var=True)]))
    values = [b"a", b"b", b"c", b"\xff\xfe", b"a", b"d"]
    with tiledb.open(uri, "w") as A:
        A[np.arange(1, 7)] = {"s": np.array(values, dtype=object)}
    rows = tdbsql.query("SELECT s FROM array", uri).column("s").to_pylist()
    assert rows == values
    counts = tdbsql.query("SELECT s, count(*) AS n FROM array GROUP BY s", uri).to_pylist()
    assert {r["s"]: r["n"] for r in counts} == {b"a": 2, b"b": 1, b"c": 1, b"\xff\xfe": 1,
                                                b"d": 1}


# -- the tile cache ------------------------------------------------------------------------


def test_cache_evicts_least_recently_used():
    cache = TileCache(100)
    cache.put("a", "A", 40)
    cache.put("b", "B", 40)
    assert cache.get("a") == ("A", True)  # the first hit; now b is the least recently used
    cache.put("c", "C", 40)
    assert cache.held == 80 and cache.get("b") == (None, False)
    assert cache.get("a") == ("A", False) and cache.get("c") == ("C", True)
    cache.put("a", "A2", 30)  # replaced (a tile given its codes): still hit before
    assert cache.held == 70 and cache.get("a") == ("A2", False)
    cache.put("huge", "H", 101)  # larger than the budget: never held
    assert cache.get("huge") == (None, False) and cache.held == 70


def test_repeated_query_is_served_from_cache(tiles):
    sql = "SELECT g, sum(x) FROM array GROUP BY g"
    first = tdbsql.query(sql, tiles)
    hits = tile_cache().hits
    again = tdbsql.query(sql, tiles)
    assert tile_cache().hits > hits
    assert _rows(first) == _rows(again)


def test_rewritten_file_is_not_served_from_cache(tmp_path):
    uri = str(tmp_path / "c")
    dom = tiledb.Domain(tiledb.Dim("id", domain=(1, 100), tile=10, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, attrs=[
        tiledb.Attr("a", dtype=np.int64, filters=tiledb.FilterList([tiledb.ZstdFilter()]))]))
    with tiledb.open(uri, "w") as A:
        A[np.arange(1, 11)] = {"a": np.arange(10, dtype=np.int64)}
    assert tdbsql.query("SELECT sum(a + 0) AS s FROM array", uri).column("s")[0].as_py() == 45
    frag = os.path.join(uri, "__fragments", os.listdir(os.path.join(uri, "__fragments"))[0])
    data = os.path.join(frag, "a0.tdb")
    raw = bytearray(open(data, "rb").read())
    raw[-4:] = b"\x00\x00\x00\x00"  # damage the zstd frame's end
    with open(data, "r+b") as f:
        f.write(raw)
    os.utime(data, ns=(os.stat(data).st_atime_ns, os.stat(data).st_mtime_ns + 1_000_000))
    with pytest.raises(tdbsql.TdbsqlError):
        tdbsql.query("SELECT sum(a + 0) AS s FROM array", uri)


def test_each_data_file_is_stated_once_per_query(tmp_path, monkeypatch):
    # the tile cache's identity stat gives the read-ahead its file size: no second stat
    uri = str(tmp_path / "c")
    dom = tiledb.Domain(tiledb.Dim("id", domain=(1, 1000), tile=10, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=10, attrs=[
        tiledb.Attr("a", dtype=np.int64), tiledb.Attr("s", dtype=str, var=True)]))
    with tiledb.open(uri, "w") as A:
        A[np.arange(1, 101)] = {"a": np.arange(100, dtype=np.int64),
                                "s": np.array([f"s{i}" for i in range(100)], dtype=object)}
    stats = []
    real_stat = os.stat

    def stat(path, *args, **kwargs):
        stats.append(os.fspath(path))
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat)
    got = tdbsql.query("SELECT sum(a + 0) AS t, max(s) AS m FROM array", uri)
    monkeypatch.undo()
    assert got.to_pylist() == [{"t": 4950, "m": "s99"}]
    for name in ("a0.tdb", "a1.tdb", "a1_var.tdb"):
        assert sum(p.endswith(os.sep + name) for p in stats) == 1, name


def test_encrypted_tiles_are_not_cached(tmp_path):
    key = "0123456789abcdeF0123456789abcdeF"
    uri = str(tmp_path / "enc")
    dom = tiledb.Domain(tiledb.Dim("id", domain=(1, 100), tile=10, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, attrs=[
        tiledb.Attr("a", dtype=np.int64)]), key=key)
    with tiledb.open(uri, "w", key=key) as A:
        A[np.arange(1, 11)] = {"a": np.arange(10, dtype=np.int64)}
    before = (tile_cache().hits, tile_cache().misses)
    for _ in range(2):
        assert tdbsql.query("SELECT sum(a) AS s FROM array WHERE a >= 0", uri,
                            key=key).column("s")[0].as_py() == 45
    assert (tile_cache().hits, tile_cache().misses) == before
    with pytest.raises(tdbsql.EncryptionKeyError):
        tdbsql.query("SELECT sum(a) FROM array", uri, key="x" * 32)


# -- GROUP BY dimensions from tile metadata ------------------------------------------------------


@pytest.fixture(scope="module")
def days(tmp_path_factory) -> str:
    """20 days x 16 cells, 8 cells a tile: every tile holds one day, except where a day's
    cells are cut by the second fragment (day 7 overwritten in part, later)."""
    uri = str(tmp_path_factory.mktemp("groups") / "days")
    dom = tiledb.Domain(tiledb.Dim("day", domain=(0, 99), tile=10, dtype=np.int32),
                        tiledb.Dim("k", domain=(0, 999), tile=1000, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=8, attrs=[
        tiledb.Attr("v", dtype=np.int64),
        tiledb.Attr("x", dtype=np.float64, nullable=True),
        tiledb.Attr("t", dtype="datetime64[D]")]))
    day = np.repeat(np.arange(20, dtype=np.int32), 16)
    k = np.tile(np.arange(16, dtype=np.int64), 20)
    rng = np.random.default_rng(3)
    x = rng.integers(-50, 50, len(day)) / 4.0
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[day, k] = {"v": day.astype(np.int64) * 100 + k,
                     "x": pa.array(x, mask=(k % 5 == 0)),
                     "t": np.datetime64("2020-01-01") + (day * 3 + k).astype("timedelta64[D]")}
    with tiledb.open(uri, "w", timestamp=2) as A:
        A[np.full(3, 7, np.int32), np.arange(3, dtype=np.int64)] = {
            "v": np.array([-1, -2, -3], np.int64), "x": np.array([9.0, 9.5, 10.0]),
            "t": np.array(["1999-01-01"] * 3, dtype="datetime64[D]")}
    return uri


DAY_QUERIES = [
    "SELECT day, count(*), sum(v), min(v), max(v), count(x), sum(x), min(x), max(t) FROM t "
    "GROUP BY day",
    "SELECT day, count(*), sum(v) FROM t WHERE day BETWEEN 3 AND 12 GROUP BY day",
    "SELECT day, max(v) - min(v) AS spread, avg(v) FROM t WHERE v >= 0 GROUP BY day",
    "SELECT day, count(*) FROM t WHERE v > 1000 GROUP BY day HAVING count(*) > 10",
    # every tile from metadata, two a day: the one partial's rows are tiles, not groups
    "SELECT day, count(*), sum(v) FROM t WHERE day BETWEEN 8 AND 12 GROUP BY day",
]


@pytest.mark.parametrize("sql", DAY_QUERIES)
def test_groups_by_dimension_from_metadata_equal_duckdb(days, sql):
    want = duckdb_over(days).sql(sql).arrow()
    want = want.read_all() if isinstance(want, pa.RecordBatchReader) else want
    got = tdbsql.query(sql.replace("FROM t", "FROM array"), days)
    assert _same(_rows(got), _rows(want)), (sql, _rows(got)[:4], _rows(want)[:4])


def test_groups_by_dimension_leave_answered_tiles_unread(days):
    text = tdbsql.explain("SELECT day, count(*), sum(v), max(t) FROM array GROUP BY day", days,
                          analyze=True)
    # 40 + 1 tiles: day 7's first tile (k 0..7) and the second fragment's tile (day 7, k 0..2)
    # overlap, so both are decoded and merged (8 cells); the other 39 come from metadata
    assert "39 answered from metadata" in text and "8 cells" in text, text


def test_funnel_counted_once_when_every_tile_is_pruned(tiles):
    text = tdbsql.explain("SELECT id FROM array WHERE k > 100", tiles, analyze=True)
    assert "Fragments: 1 -> 1 (timestamps) -> 1 (non-empty domain)" in text, text
    assert f"Tiles: {N // CAPACITY} -> {N // CAPACITY} (MBRs / space tiles) -> 0 (zone maps)" \
        in text, text


def test_disjoint_fragments_stream_and_overlapping_ones_merge(tmp_path):
    """Without duplicates, fragments whose non-empty domains are apart need no merge (the scan
    streams); once one overlaps another, the newest cell per coordinate wins again."""
    from tdbsql.engine.sparse_scan import SparseScan
    from tdbsql.storage.array import Array

    uri = str(tmp_path / "frags")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 999), tile=100, dtype=np.int64),
                        tiledb.Dim("s", domain=(None, None), tile=None, dtype="ascii"))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=4, attrs=[
        tiledb.Attr("v", dtype=np.int64)]))
    for ts, (lo, word) in enumerate([(0, "a"), (100, "b"), (200, "a")], start=1):
        with tiledb.open(uri, "w", timestamp=ts) as A:
            d = np.arange(lo, lo + 10, dtype=np.int64)
            A[d, np.array([word] * 10, dtype=object)] = {"v": d * ts}
    sql = "SELECT d, s, v FROM array ORDER BY d, s"
    want = [(int(d), w, int(d) * ts) for ts, (lo, w) in enumerate([(0, "a"), (100, "b"),
                                                                      (200, "a")], start=1)
            for d in range(lo, lo + 10)]
    assert SparseScan(Array(uri), ["d", "v"], {}).streamable
    assert _tuples(tdbsql.query(sql, uri)) == want == _tiledb_rows(uri)
    with tiledb.open(uri, "w", timestamp=9) as A:  # overwrites d = 105..107 of fragment 2
        A[np.array([105, 106, 107]), np.array(["b", "b", "b"], dtype=object)] = {
            "v": np.array([-1, -2, -3])}
    assert not SparseScan(Array(uri), ["d", "v"], {}).streamable
    want = [(d, w, {105: -1, 106: -2, 107: -3}.get(d, v)) for d, w, v in want]
    assert _tuples(tdbsql.query(sql, uri)) == want == _tiledb_rows(uri)


def _tuples(table: pa.Table) -> list[tuple]:
    return [tuple(row.values()) for row in table.to_pylist()]


def _tiledb_rows(uri: str) -> list[tuple]:
    with tiledb.open(uri) as A:
        cells = A.query(return_arrow=True).df[:]
    rows = [(int(d), s.decode() if isinstance(s, bytes) else s, int(v))
            for d, s, v in zip(cells.column("d").to_pylist(), cells.column("s").to_pylist(),
                               cells.column("v").to_pylist())]
    return sorted(rows)


def test_expressions_around_metadata_aggregates(days):
    """Ungrouped count/sum/min/max come from metadata also inside larger expressions."""
    sql = "SELECT sum(v) / count(*) AS m, max(v) - min(v) AS r, count(x) + 1 AS c FROM t"
    got = tdbsql.query(sql.replace("FROM t", "FROM array"), days)
    assert _same(_rows(got), duckdb_over(days).sql(sql).fetchall())
    text = tdbsql.explain(sql.replace("FROM t", "FROM array"), days, analyze=True)
    assert "39 answered from metadata" in text, text


def test_chunks_gather_neighbouring_tiles(tiles, oracle, monkeypatch):
    """A streamed scan reads chunks of several tiles (the steps above run once per chunk),
    every kept tile exactly once, in order; results equal DuckDB's."""
    from tdbsql.engine import scan_step
    from tdbsql.engine.scan_step import ArrayScan

    monkeypatch.setattr(scan_step, "SERIAL_CELLS", 0)  # as if the array were large
    chunks = []
    tasks = ArrayScan.tasks

    def spy_tasks(self):
        chunks.extend(tasks(self))
        return chunks

    monkeypatch.setattr(ArrayScan, "tasks", spy_tasks)
    sql = "SELECT g, count(*), sum(x) FROM t WHERE id > 70 GROUP BY g"
    assert_streamed_equals_duckdb(tiles, oracle, sql)
    flat = [task for chunk in chunks for task in chunk]
    assert 1 < len(chunks) < len(flat)
    assert [t.tile_idx for t in flat] == sorted({t.tile_idx for t in flat})


@pytest.mark.parametrize("sql", [
    "SELECT sum(x), count(*) FROM t WHERE k > 0 AND id > 50",
    "SELECT g, sum(x) FROM t WHERE k > 0 AND id > 50 GROUP BY g",
    "SELECT g, x FROM t WHERE k > 0 AND id > 50",
])
def test_columns_only_the_scan_condition_reads_stay_unconverted(tiles, oracle, monkeypatch, sql):
    """Once the stored-value filter applied ``k > 0 AND id > 50``, neither column is turned
    into Arrow: nothing above the scan reads them (a streamed scan, or the scan of the tiles
    an aggregate's metadata does not answer)."""
    from tdbsql.engine import metadata_residual, scan_step

    converted = set()
    to_arrow = scan_step.column_to_arrow

    def spy(array, name, column):
        converted.add(name)
        return to_arrow(array, name, column)

    monkeypatch.setattr(scan_step, "column_to_arrow", spy)
    monkeypatch.setattr(metadata_residual, "column_to_arrow", spy)
    assert_streamed_equals_duckdb(tiles, oracle, sql)
    assert converted and not converted & {"k", "id"}


def test_a_small_scan_stays_on_the_calling_thread(tiles, oracle, monkeypatch):
    """Below SERIAL_CELLS the chunks run on the calling thread (the pool costs more than it
    gains); above it they go to the pool.  Results are the same."""
    from tdbsql.engine import pipeline, scan_step

    pooled = []
    real = pipeline.map_ordered

    def spy(fn, items, window=None):
        pooled.append(True)
        return real(fn, items, window)

    monkeypatch.setattr(pipeline, "map_ordered", spy)
    sql = "SELECT g, sum(x), count(*) FROM t WHERE id > 100 GROUP BY g"
    want = oracle.sql(sql).arrow()
    want = want.read_all() if isinstance(want, pa.RecordBatchReader) else want
    for serial_cells, expect_pool in ((1 << 22, False), (0, True)):
        pooled.clear()
        monkeypatch.setattr(scan_step, "SERIAL_CELLS", serial_cells)
        got = tdbsql.query(sql.replace("FROM t", "FROM array"), tiles)
        assert _same(_rows(got), _rows(want))
        assert bool(pooled) == expect_pool


_FILTER_AGGS = ["count(*)", "count(k)", "sum(k)", "avg(x)", "min(x)", "max(g)", "sum(big)",
                "var_pop(x)", "bool_or(k > 0)", "count(DISTINCT g)", "any_value(k)"]
_FILTER_CONDS = ["k > 0", "x < 0", "g = 'red'", "k IS NULL", "id % 3 = 0", "x > 100",
                 "g IS NOT NULL AND k < 5"]


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.sampled_from(_FILTER_AGGS), st.sampled_from(_FILTER_CONDS)),
                min_size=1, max_size=4),
       st.sampled_from(["", "g", "k % 3"]), st.sampled_from(["", "WHERE id > 500"]))
def test_filtered_aggregates_give_duckdbs_rows(tiles, oracle, calls, group, where):
    """Random aggregates with FILTER (WHERE ...), streamed over many tiles (the DISTINCT and
    any_value ones through the ordinary path), against DuckDB."""
    items = [f"{agg} FILTER (WHERE {cond})" for agg, cond in calls]
    if any(agg.startswith("any_value") for agg, _ in calls):
        items = [i if not i.startswith("any_value") else f"count(*) FILTER (WHERE {c})"
                 for i, (_, c) in zip(items, calls)]  # any_value's pick differs by engine
    select = ", ".join(([group] if group else []) + items)
    sql = f"SELECT {select} FROM t {where}" + (f" GROUP BY {group}" if group else "")
    assert_streamed_equals_duckdb(tiles, oracle, sql)


_STRING_ARGS = ["g", "k", "x", "id"]
_SEPARATORS = ["", ", '|'", ", ''", ", ' - '", ", NULL"]
_CALL_ORDERS = ["", " ORDER BY id DESC", " ORDER BY x DESC NULLS FIRST, id",
                " ORDER BY k, g DESC, id"]


@st.composite
def _string_agg_call(draw) -> str:
    """string_agg (any spelling) or an ordered array_agg / first, maybe with DISTINCT (then
    ordered by its argument), ORDER BY and FILTER."""
    argument = draw(st.sampled_from(_STRING_ARGS))
    name = draw(st.sampled_from(["string_agg", "listagg", "group_concat", "array_agg",
                                 "first"]))
    separator = draw(st.sampled_from(_SEPARATORS)) if name.endswith(("agg", "concat")) \
        and name != "array_agg" else ""
    order = draw(st.sampled_from(_CALL_ORDERS))
    if name in ("array_agg", "first") and not order:
        order = " ORDER BY id"
    distinct = name != "first" and draw(st.booleans())
    if distinct:
        order = draw(st.sampled_from(["", f" ORDER BY {argument}",
                                      f" ORDER BY {argument} DESC NULLS FIRST"]))
        if not order and name == "array_agg":
            order = f" ORDER BY {argument}"
        call = f"{name}(DISTINCT {argument}{separator}{order})"
    else:
        call = f"{name}({argument}{separator}{order})"
    condition = draw(st.sampled_from(["", "k > 0", "x < 0", "g = 'red'", "id % 3 = 0"]))
    if condition:
        call = f"{call} FILTER (WHERE {condition})"
    if distinct and not order:  # DuckDB's order of distinct values is its hash table's
        call = f"length({call})"
    return call


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(_string_agg_call(), min_size=1, max_size=3),
       st.sampled_from(["", "g", "k % 3"]), st.sampled_from(["", "WHERE id > 500"]))
def test_string_agg_gives_duckdbs_rows(tiles, oracle, calls, group, where):
    """Random string_agg calls (separators, NULL ones too, DISTINCT, ORDER BY, FILTER), and
    array_agg / first with ORDER BY, grouped or not, over many tiles (streamed unless DISTINCT
    or ORDER BY), against DuckDB; without ORDER BY both take the cells in global order."""
    select = ", ".join(([group] if group else []) + calls)
    sql = f"SELECT {select} FROM t {where}" + (f" GROUP BY {group}" if group else "")
    assert_streamed_equals_duckdb(tiles, oracle, sql)
