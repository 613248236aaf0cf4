"""Aggregates over joins whose source array is far bigger than the memory budget, fed by its
scan batch by batch (``engine.streamed_join``): results against DuckDB over the same rows,
the streaming seen in EXPLAIN ANALYZE, and the ordinary join at a budget the source fits.

The probe arrays ``f`` and ``g`` (120,000 rows, 6.6 MB as Arrow) are over three times the
budget ``SMALL_MB``; the other inputs are small.  Before the streamed join every query of
``QUERIES`` stopped with MemoryLimitError at that budget ("the scan of 'f' needs 3.7 MB",
4.7 MB with more columns read; "the scan of 'g' needs 3.1 MB" at ``MERGING_MB``).  Calls
with DISTINCT stream too (each batch's distinct values per group are its state).  So did
the queries with f on the other side of a two-input join (right of LEFT, left of RIGHT,
FULL, second of an inner join) or not first among several inner joins before f streamed
there too: "the scan of 'f' needs 3.2 to 6.5 MB", "the join with 'f' needs 3.4 / 2.1 MB";
and a batch of rows joining many ("the join with '_u_0' needs 3.5 MB") before such a batch
was joined in halves.
"""

from __future__ import annotations

import duckdb
import numpy as np
import pyarrow as pa
import pytest
import tiledb

import tdbsql
from sql_fixtures import assert_same_rows, oracle_of

N = 120_000
SMALL_MB = 2
STREAMED = "Streamed: "


def _sparse(uri: str, dim: tuple, attrs: list, capacity: int = 2000) -> str:
    name, high = dim
    domain = tiledb.Domain(tiledb.Dim(name, domain=(0, high), tile=high + 1, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=domain, sparse=True, capacity=capacity,
                                                attrs=attrs))
    return uri


def _facts(uri: str, seed: int, writes: int = 1, capacity: int = 2000) -> str:
    """The probe: keys into ``d`` (NULL for some, past its keys for others), a second key,
    a text key, a group column, a measure and some padding.  ``writes`` > 1 writes the same
    coordinates again with other values: the newest wins (fragments to merge)."""
    _sparse(uri, ("id", 10**6), [
        tiledb.Attr("k", dtype=np.int64, nullable=True),
        tiledb.Attr("k2", dtype=np.int32),
        tiledb.Attr("s", dtype=str, var=True, nullable=True),
        tiledb.Attr("b", dtype=np.int32),
        tiledb.Attr("v", dtype=np.float64, nullable=True),
        tiledb.Attr("pad", dtype=str, var=True),
    ], capacity)
    rng = np.random.default_rng(seed)
    rows = N
    for timestamp in range(1, writes + 1):
        keys = rng.integers(0, 1200, rows)
        null = rng.random((3, rows)) < 0.05
        with tiledb.open(uri, "w", timestamp=timestamp) as A:
            A[np.arange(rows, dtype=np.int64) * 3] = {
                "k": pa.array(keys, pa.int64(), mask=null[0]),
                "k2": (keys % 7).astype(np.int32),
                "s": pa.array([f"n{k % 60}" for k in keys], pa.string(), mask=null[1]),
                "b": rng.integers(0, 4, rows).astype(np.int32),
                "v": pa.array(rng.integers(-400, 400, rows) / 8.0, pa.float64(), mask=null[2]),
                "pad": np.array([f"padding-{i % 997:05d}-{timestamp}" for i in range(rows)],
                                dtype=object),
            }
    return uri


def _dims(uri: str) -> str:
    """One row per key 0..999; names repeat (a text key with duplicates)."""
    _sparse(uri, ("k", 999), [tiledb.Attr("name", dtype=str, var=True),
                              tiledb.Attr("grp", dtype=np.int32),
                              tiledb.Attr("k2", dtype=np.int32),
                              tiledb.Attr("w", dtype=np.float64)], capacity=500)
    keys = np.arange(1000, dtype=np.int64)
    with tiledb.open(uri, "w") as A:
        A[keys] = {"name": np.array([f"n{k % 50}" for k in keys], dtype=object),
                   "grp": (keys % 10).astype(np.int32), "k2": (keys % 7).astype(np.int32),
                   "w": keys / 4.0}
    return uri


def _duplicates(uri: str) -> str:
    """Keys 0..299, each on three rows (a build side with duplicate keys)."""
    _sparse(uri, ("id", 10**4), [tiledb.Attr("k", dtype=np.int64),
                                 tiledb.Attr("tag", dtype=np.int32)], capacity=300)
    ids = np.arange(900, dtype=np.int64)
    with tiledb.open(uri, "w") as A:
        A[ids] = {"k": ids % 300, "tag": (ids // 300).astype(np.int32)}
    return uri


def _groups(uri: str) -> str:
    _sparse(uri, ("grp", 99), [tiledb.Attr("label", dtype=str, var=True)], capacity=100)
    grp = np.arange(8, dtype=np.int64)  # groups 8 and 9 of d have no label
    with tiledb.open(uri, "w") as A:
        A[grp] = {"label": np.array([f"g{g % 3}" for g in grp], dtype=object)}
    return uri


@pytest.fixture(scope="module")
def paths(tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("streamed_join")
    return {"f": _facts(str(root / "f"), 1), "g": _facts(str(root / "g"), 2, writes=2, capacity=250),
            "d": _dims(str(root / "d")), "dup": _duplicates(str(root / "dup")),
            "e": _groups(str(root / "e"))}


def _connect(paths: dict, memory_mb=None) -> tdbsql.Connection:
    con = tdbsql.connect(memory_mb=memory_mb)
    for name, path in paths.items():
        con.register(name, path)
    return con


@pytest.fixture(scope="module")
def oracle(paths) -> duckdb.DuckDBPyConnection:
    return oracle_of(paths)


# TPC-H Q13's shape: f right of a LEFT join, grouped by d's rows (d.k * 2 past f's keys for
# d.k >= 600)
Q13_SHAPE = ("SELECT c, count(*) FROM (SELECT d.k, count(f.v) AS c FROM d LEFT JOIN f "
             "ON d.k * 2 = f.k AND f.v > -40 GROUP BY d.k) GROUP BY c ORDER BY 1")
QUERIES = [
    # one join, NULL keys and keys without a match dropped
    "SELECT d.name, count(*), sum(f.v), avg(d.w) FROM f JOIN d ON f.k = d.k "
    "GROUP BY d.name ORDER BY 1",
    # a chain of three inputs
    "SELECT e.label, count(*), sum(f.v * d.w) FROM f JOIN d ON f.k = d.k "
    "JOIN e ON d.grp = e.grp GROUP BY e.label ORDER BY 1",
    # LEFT: the unmatched source rows (NULL keys too) in a group of NULLs
    "SELECT d.grp, count(*), count(d.k), sum(f.v), min(d.name) FROM f LEFT JOIN d "
    "ON f.k = d.k GROUP BY d.grp ORDER BY 1 NULLS FIRST",
    # LEFT then INNER on the left join's columns
    "SELECT e.label, count(*), max(f.v) FROM f LEFT JOIN d ON f.k = d.k AND d.w > 10 "
    "JOIN e ON d.grp = e.grp GROUP BY e.label ORDER BY 1",
    # GROUP BY columns of both sides, HAVING
    "SELECT f.b, d.grp, count(*) AS n, min(f.v), max(d.name) FROM f JOIN d ON f.k = d.k "
    "GROUP BY f.b, d.grp HAVING count(*) > 2300 ORDER BY 1, 2",
    # duplicate keys on the build side: each source row once per match
    "SELECT dup.tag, count(*), sum(f.v), sum(f.k) FROM f JOIN dup ON f.k = dup.k "
    "GROUP BY dup.tag ORDER BY 1",
    # two key columns (packed into one box position), and a text key (the build side's
    # dictionary) with NULLs
    "SELECT d.grp, count(*), sum(f.v) FROM f JOIN d ON f.k = d.k AND f.k2 = d.k2 "
    "GROUP BY d.grp ORDER BY 1",
    "SELECT f.b, count(*), count(f.v), stddev_samp(f.v) FROM f JOIN d ON f.s = d.name "
    "GROUP BY f.b ORDER BY 1",
    # an ON condition beyond the keys, a WHERE over both sides, no GROUP BY
    "SELECT count(*), sum(f.v), min(d.w) FROM f JOIN d ON f.k = d.k AND f.v < d.w "
    "WHERE f.b <> 2 OR d.grp = 3",
    # DISTINCT: each batch's distinct values per group, counted / summed over all batches
    "SELECT d.grp, count(DISTINCT f.b), count(DISTINCT d.name), sum(DISTINCT f.k), "
    "avg(DISTINCT f.k2), min(DISTINCT f.v), count(*) FROM f JOIN d ON f.k = d.k "
    "GROUP BY d.grp ORDER BY 1",
    "SELECT count(DISTINCT f.s), count(DISTINCT f.k2) FROM f LEFT JOIN dup ON f.k = dup.k "
    "WHERE dup.tag IS NULL OR dup.tag = 1",
    # the probe merges two overlapping fragments, the newest version of each row kept
    # (a merge holds a few tiles of both: MERGING_MB)
    "SELECT d.grp, count(*), sum(g.v), max(g.pad) FROM g JOIN d ON g.k = d.k "
    "GROUP BY d.grp ORDER BY 1",
    # f right of a LEFT join: f's batches joined to d, then d's rows no batch matched; Q13's
    # shape (aggregated before the join at a budget f fits), the states regrouped as they grow
    Q13_SHAPE,
    "SELECT d.grp, count(*), count(f.k), sum(f.v), min(f.s) FROM d LEFT JOIN f "
    "ON d.k * 2 = f.k AND f.b <> 3 GROUP BY d.grp ORDER BY 1",
    # an ON condition over both sides, tested on each batch's pairs
    "SELECT d.grp, count(*), count(f.v), avg(f.v) FROM d LEFT JOIN f "
    "ON d.k = f.k AND f.v > d.w / 20 GROUP BY 1 ORDER BY 1",
    "SELECT count(DISTINCT f.k), count(DISTINCT d.name), count(*) FROM d LEFT JOIN f "
    "ON d.k * 2 = f.k",
    # RIGHT with f on the left, FULL either way round: d's unmatched rows at the end, f's
    # (NULL keys, keys past d's) padded in their batch
    "SELECT d.name, count(*), count(f.id), sum(f.v) FROM f RIGHT JOIN d "
    "ON f.k = d.k AND f.b = 1 AND f.v < -45 GROUP BY d.name ORDER BY 1",
    "SELECT d.grp, f.b, count(*), count(d.k), count(f.k), sum(f.v) FROM f FULL JOIN d "
    "ON f.k = d.k AND f.v > 45 GROUP BY 1, 2 ORDER BY 1 NULLS FIRST, 2 NULLS FIRST",
    "SELECT d.grp, count(*), count(d.k), count(f.k), max(f.v) FROM d FULL JOIN f "
    "ON d.k = f.k AND f.v > 45 GROUP BY 1 ORDER BY 1 NULLS FIRST",
    # f second: an inner join turned around, a RIGHT join seen as f LEFT JOIN d
    "SELECT d.grp, count(*), sum(f.v) FROM d JOIN f ON d.k = f.k GROUP BY 1 ORDER BY 1",
    "SELECT dup.tag, count(*), sum(f.v) FROM dup JOIN f ON dup.k = f.k AND f.s <> 'n3' "
    "GROUP BY 1 ORDER BY 1",
    "SELECT d.grp, count(*), sum(f.v) FROM d RIGHT JOIN f ON d.k = f.k "
    "GROUP BY 1 ORDER BY 1 NULLS FIRST",
    # f not first among several inner joins: they run from f (f read for d's keys, all of
    # f's, was refused: f streams whole); two keys and a condition tested once d is there;
    # a LEFT join after them; joins written as WHERE terms
    "SELECT e.label, count(*), sum(f.v) FROM d JOIN f ON d.k = f.k JOIN e ON d.grp = e.grp "
    "GROUP BY 1 ORDER BY 1",
    "SELECT e.label, count(*), sum(f.v * d.w) FROM e JOIN d ON e.grp = d.grp JOIN f "
    "ON f.k = d.k AND f.k2 = d.k2 AND f.v < d.w GROUP BY 1 ORDER BY 1",
    "SELECT d.grp, count(*), count(e.label), sum(f.v) FROM d JOIN f ON d.k = f.k "
    "LEFT JOIN e ON d.grp = e.grp GROUP BY 1 ORDER BY 1",
    "SELECT dup.tag, count(*), sum(f.v) FROM dup, d, f WHERE dup.k = d.k AND f.k = d.k "
    "AND f.b <> dup.tag GROUP BY 1 ORDER BY 1",
    # a batch whose matches are refused is joined in halves: each f row meets a list of 300
    # keys (a correlated IN, decorrelated to a LEFT join on b with array_agg)
    "SELECT f.b, count(*) FROM f WHERE f.k IN (SELECT dup.k FROM dup WHERE dup.tag = f.b) "
    "GROUP BY f.b ORDER BY 1",
]
MERGING_MB = 3  # g's two writes of 120,000 rows, newest kept, hold more per slab


@pytest.mark.parametrize("sql", QUERIES, ids=range(len(QUERIES)))
def test_streamed_join_matches_duckdb_far_past_the_budget(paths, oracle, sql):
    con = _connect(paths, MERGING_MB if " g " in sql else SMALL_MB)
    assert_same_rows(con.sql(sql).fetchall(), oracle.sql(sql).fetchall(), rel=1e-9)
    text = con.explain(sql, analyze=True)
    assert STREAMED in text and "hashed once" in text, text


def test_a_source_that_fits_streams_when_its_joined_rows_do_not(paths, oracle):
    """20,000 rows of f fit, but each joins 3 x 3 rows of dup: 180,000 joined rows do not
    (before: "the join with 'b' needs 2.3 MB")."""
    sql = ("SELECT a.tag, b.tag, count(*), sum(f.v) FROM f JOIN dup AS a ON f.k = a.k "
           "JOIN dup AS b ON f.k = b.k WHERE f.id < 60000 GROUP BY 1, 2 ORDER BY 1, 2")
    con = _connect(paths, SMALL_MB)
    assert_same_rows(con.sql(sql).fetchall(), oracle.sql(sql).fetchall(), rel=1e-9)
    assert STREAMED in con.explain(sql, analyze=True)


def test_a_source_that_fits_joins_the_ordinary_way(paths, oracle):
    sql = QUERIES[1]
    con = _connect(paths)
    assert_same_rows(con.sql(sql).fetchall(), oracle.sql(sql).fetchall(), rel=1e-9)
    text = con.explain(sql, analyze=True)
    assert STREAMED not in text and "Join f  [rows=" in text


def test_an_aggregate_without_partial_states_still_stops_clearly(paths, oracle):
    """median has no per-batch state: the join is made whole, refused past the budget with
    the step named, answered at a budget it fits."""
    sql = "SELECT d.grp, median(f.v) FROM f JOIN d ON f.k = d.k GROUP BY 1 ORDER BY 1"
    with pytest.raises(tdbsql.MemoryLimitError, match="the scan of 'f'"):
        _connect(paths, SMALL_MB).sql(sql).fetchall()
    assert_same_rows(_connect(paths, 64).sql(sql).fetchall(), oracle.sql(sql).fetchall())


def test_the_aggregate_past_the_budget_is_still_refused(paths):
    """Streaming bounds the join's rows, and the partial groups spill to disk
    (``engine.spilled_aggregate``), but the result, a group per source row, does not fit."""
    sql = "SELECT f.id, d.name, sum(f.v) FROM f JOIN d ON f.k = d.k GROUP BY 1, 2"
    with pytest.raises(tdbsql.MemoryLimitError, match="the aggregate step"):
        _connect(paths, SMALL_MB).sql(sql).fetchall()


def test_q13_shape_that_fits_aggregates_before_the_join(paths, oracle):
    """At a budget f fits, the LEFT join grouped by d's rows runs as before: f's rows
    aggregated per key, then joined (``eager_aggregate``)."""
    sql = Q13_SHAPE
    con = _connect(paths)
    assert_same_rows(con.sql(sql).fetchall(), oracle.sql(sql).fetchall(), rel=1e-9)
    text = con.explain(sql, analyze=True)
    assert STREAMED not in text and "Aggregated before the join" in text, text
