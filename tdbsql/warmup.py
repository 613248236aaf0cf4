"""``tdbsql warmup``: compile and cache the Numba kernels once, right after install.

Numba caches compiled kernels on disk (``cache=True``), so only the first process pays for
compiling.  This writes a small array with the common filters into a temporary directory and runs
the usual operators over it (scan with pruning, filter, group, join, sort, set operation,
consolidation), so later queries start from cached kernels.
"""

from __future__ import annotations

import os
import tempfile
import time

import numpy as np


def warmup() -> float:
    """Run the warm-up workload; returns the seconds it took."""
    import tdbsql

    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="tdbsql-warmup-") as root:
        path = os.path.join(root, "a")
        tdbsql.create(path, _schema(tdbsql))
        rng = np.random.default_rng(0)
        for part in range(2):
            tdbsql.write(path, _cells(rng, 5000), timestamp=1000 + part)
        con = tdbsql.connect().register("a", path)
        for sql in _QUERIES:
            con.sql(sql).arrow()
        tdbsql.consolidate(path)
        con.sql("SELECT count(*) FROM a").arrow()
        # one fragment, read as the tile cache holds it: the second time by the tiles'
        # dictionary codes (storage.tile_codes)
        one = os.path.join(root, "b")
        tdbsql.create(one, _schema(tdbsql))
        tdbsql.write(one, _cells(rng, 5000))
        con.register("b", one)
        for _ in range(2):
            for sql in _CODED:
                con.sql(sql).arrow()
    return time.perf_counter() - started


def _cells(rng, n: int) -> dict:
    return {"d": rng.integers(0, 100_000, n), "t": rng.integers(0, 1_000, n),
            "x": rng.integers(-1000, 1000, n), "y": rng.normal(size=n),
            "p": rng.integers(0, 11, n) / 100.0, "s": [f"k{i % 97}" for i in range(n)]}


def _schema(tdbsql):
    return tdbsql.Schema(
        [tdbsql.Dim("d", "int64", (0, 100_000), 1000), tdbsql.Dim("t", "int64", (0, 1_000), 100)],
        [tdbsql.Attr("x", "int64", filters=[tdbsql.Delta(), tdbsql.BitWidthReduction(),
                                             tdbsql.Zstd(3)]),
         tdbsql.Attr("y", "float64", filters=[tdbsql.ByteShuffle(), tdbsql.Lz4()]),
         tdbsql.Attr("p", "float64", filters=[tdbsql.Zstd(1)]),
         tdbsql.Attr("s", "ascii", filters=[tdbsql.Zstd(1)])],
        sparse=True, capacity=1000)


_QUERIES = (
    "SELECT * FROM a WHERE d BETWEEN 10 AND 50000 AND x > 0 ORDER BY y LIMIT 10",
    "SELECT s, count(*), sum(x), avg(y), min(x), max(y), stddev(y) FROM a GROUP BY s",
    "SELECT count(DISTINCT s), bool_or(x > 0) FROM a WHERE s LIKE 'k1%'",
    "SELECT p.s, count(*) FROM a p JOIN a q ON p.d = q.d AND p.t = q.t GROUP BY p.s",
    "SELECT d FROM a WHERE x < 0 EXCEPT SELECT d FROM a WHERE y > 0",
    # float keys span no small box: the hashed group table, build and probe
    "SELECT p.y, count(*) FROM a p JOIN a q ON p.y = q.y GROUP BY p.y",
    # groups that follow the cells' order: the run kernel of float sums
    "SELECT d // 10000, sum(y) FROM a GROUP BY 1",
    # sums of arithmetic straight from the tiles, by a short string and by an integer
    # (engine.scan_sums: TPC-H Q1's shape)
    "SELECT s, sum(y), sum(y * (1 - y)), avg(y), count(*) FROM a GROUP BY s",
    "SELECT t, sum(-y + 2) FROM a GROUP BY t",
    # two keys in one box; rows ordered by group (ARRAY_AGG, windows)
    "SELECT s, d % 7, array_agg(x), sum(x) OVER (PARTITION BY s) FROM a GROUP BY s, d % 7, x",
    # a correlated inequality: running states over the sorted inner rows
    # (engine.range_aggregate), integer and float
    "SELECT count(*) FROM a p WHERE p.y > (SELECT avg(q.y) + min(q.t) FROM a q WHERE q.x < p.x)",
)
# over tiles read by their codes: TPC-H Q1's shape (a short string key, a float of few
# values), Q6's (an interval of codes), an IN list of a float's values
_CODED = (
    "SELECT s, sum(p), sum(y * (1 - p)), avg(p), count(*) FROM b GROUP BY s",
    "SELECT sum(y * p) FROM b WHERE p BETWEEN 0.02 AND 0.05",
    "SELECT count(*) FROM b WHERE p IN (0.01, 0.07)",
)
