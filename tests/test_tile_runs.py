"""Runs of tiles (``storage.tiles.TileReader.read_run``, ``SparseScan.runs``): a streamed
sparse scan reads each whole run of ``RUN_TILES`` neighbouring tiles that the pruning kept
alike as one task, and the cache keeps the run in place of its tiles.  Every query here runs
cold, warm (runs cached), warm again (runs coded) and after queries that read single tiles
of cached runs (pruned to parts of a run, or keyed by a join), each equal to DuckDB over the
cells ``tiledb`` reads."""

from __future__ import annotations

import numpy as np
import pytest
import tiledb

import tdbsql
from sql_fixtures import assert_same_table, duckdb_over
from tdbsql.engine.sparse_scan import SparseScan, TileTask
from tdbsql.storage.tile_cache import tile_cache
from tdbsql.storage.tiles import RUN_TILES

CAPACITY = 16
CELLS = 31 * CAPACITY - 5  # 31 tiles: three whole runs of 8 and a last run of 7


@pytest.fixture(scope="module")
def runs_array(tmp_path_factory) -> str:
    """Two fragments with disjoint domains (the second: 3 tiles, one short run), strings of
    every length around the gather's 16-byte fast path, a nullable integer, few-valued
    floats (coded once a run is read again) and a flag over 7 bytes in one tile only."""
    uri = str(tmp_path_factory.mktemp("runs") / "t")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 10**6), tile=10**5, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=CAPACITY, attrs=[
        tiledb.Attr("s", dtype=str, var=True, filters=[tiledb.ZstdFilter()]),
        tiledb.Attr("flag", dtype=str, var=True),
        tiledb.Attr("i", dtype=np.int64, nullable=True),
        tiledb.Attr("x", dtype=np.float64, filters=[tiledb.ZstdFilter()]),
    ]))
    rng = np.random.default_rng(7)
    for first, count in ((0, CELLS), (500_000, 3 * CAPACITY - 1)):
        d = first + np.arange(count, dtype=np.int64) * 3
        flags = np.array(["A", "N", "R"], dtype=object)[rng.integers(0, 3, count)]
        if first == 0:
            flags[5 * CAPACITY + 3] = "a flag of more than 7 bytes"
        with tiledb.open(uri, "w") as A:
            A[d] = {"s": np.array(["x" * int(n) for n in rng.integers(0, 40, count)], object),
                    "flag": flags,
                    "i": np.ma.masked_array(rng.integers(-50, 50, count),
                                            mask=rng.random(count) < 0.2),
                    "x": rng.integers(0, 8, count) / 4.0}
    return uri


QUERIES = [
    "SELECT d, s, flag, i, x FROM t",
    "SELECT flag, count(*), sum(x), avg(x), min(i), max(s) FROM t GROUP BY flag",
    "SELECT d, s FROM t WHERE length(s) BETWEEN 10 AND 20 AND x < 1",
    "SELECT count(*), sum(i) FROM t WHERE x IN (0.25, 1.5) AND flag <> 'N'",
    "SELECT d, i FROM t WHERE d BETWEEN 40 AND 700 OR d > 500100",  # parts of runs
    "SELECT flag, sum(x * (1 - x)) FROM t WHERE i IS NOT NULL GROUP BY flag",
    "SELECT t.d, t.s FROM t JOIN (SELECT d FROM t WHERE d % 97 = 0) k ON t.d = k.d",
]


@pytest.fixture(scope="module")
def oracle(runs_array):
    return duckdb_over(runs_array)


@pytest.mark.parametrize("sql", QUERIES)
def test_runs_give_duckdbs_rows_cold_warm_and_sliced(runs_array, oracle, sql):
    tile_cache().clear()
    con = tdbsql.connect().register("t", runs_array)
    want = oracle.sql(sql).to_arrow_table()  # a table: compared five times
    for other in (None, QUERIES[0], QUERIES[4], QUERIES[6], None):
        if other is not None:
            con.sql(other).arrow()  # leaves runs, or single tiles cut from them, cached
        assert_same_table(con.sql(sql).arrow(), want)


def test_whole_runs_alike_become_one_task(runs_array):
    """Whole runs of tiles pruned alike are one task each; a run the pruning cut, or whose
    tiles differ in their classes, stays tile by tile."""
    scan = SparseScan(tdbsql.open(runs_array), ["d", "x"], {})
    tiles = scan.tasks()
    assert [(t.frag_idx, t.tile_idx, t.span) for t in scan.runs(tiles)] == \
        [(0, 0, 8), (0, 8, 8), (0, 16, 8), (0, 24, 7), (1, 0, 3)]
    assert sum(scan.task_cells(t) for t in scan.runs(tiles)) == CELLS + 3 * CAPACITY - 1
    cut = [t for t in tiles if not (t.frag_idx == 0 and t.tile_idx == 9)]
    assert [(t.tile_idx, t.span) for t in scan.runs(cut)][:9] == \
        [(0, 8)] + [(i, 1) for i in range(8, 16) if i != 9] + [(16, 8)]
    mixed = list(tiles)
    mixed[17] = TileTask(0, 17, True, False, True)  # an ALWAYS tile among MAYBE ones
    assert [(t.tile_idx, t.span) for t in scan.runs(mixed)][2:11] == \
        [(i, 1) for i in range(16, 24)] + [(24, 7)]
    assert RUN_TILES == 8
