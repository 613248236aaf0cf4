"""GROUP BY past the memory budget: partial groups partitioned on disk
(``engine.spilled_aggregate``), results against DuckDB over the same rows.

The array ``t`` (150,000 rows in 75 tiles) has 20,000 distinct keys spread over every tile,
read in chunks of ``CHUNK_CELLS`` cells (fewer than a scan's default: a big array's scan
makes many chunks): each chunk makes up to 10,000 partial groups, over 100,000 in all --
several MB of partial states, while the groups themselves fit ``SMALL_MB``.  Before the
spill every query of ``QUERIES`` and ``ORDERED`` stopped at that budget with
MemoryLimitError ("the aggregate step 't' needs 2.7 MB of intermediate results, more than
the memory budget of 1.5 MB" for the first; ``test_the_old_path_stopped_at_this_budget``
shows it with the spill turned off).  ``g`` holds the same kind of rows written twice over
the same coordinates (the newest wins), read at ``MERGING_MB``; ``d`` names the keys (a join
streamed batch by batch, ``engine.streamed_join``, spills the same way).
"""

from __future__ import annotations

import os

import duckdb
import numpy as np
import pyarrow as pa
import pytest
import tiledb

import tdbsql
from sql_fixtures import assert_same_rows, assert_same_table, oracle_of
from tdbsql.engine import hash_partitions, scan_step, spilled_aggregate

N = 150_000
KEYS = 20_000
SMALL_MB = 1.5
MERGING_MB = 6  # the overlapping fragments of ``g`` are merged within it
NEWEST = "SELECT k, count(*) AS n, sum(i) AS s, avg(f) AS a, max(c) AS c FROM g GROUP BY k"
CHUNK_CELLS = 10_000
SPILLED = "Spilled past the memory budget: "


def _rows(uri: str, seed: int, writes: int = 1) -> str:
    """Keys of every kind: an int64 ``k`` (NULL for some), a long text ``s`` and a short
    one ``c`` (NULL for some), a date ``d``; measures ``i`` (int32) and ``f`` (float64, NULL
    for some)."""
    domain = tiledb.Domain(tiledb.Dim("id", domain=(0, 10**7), tile=10**7, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=domain, sparse=True, capacity=2000, attrs=[
        tiledb.Attr("k", dtype=np.int64, nullable=True),
        tiledb.Attr("s", dtype=str, var=True, nullable=True),
        tiledb.Attr("c", dtype=str, var=True),
        tiledb.Attr("d", dtype="datetime64[D]"),
        tiledb.Attr("i", dtype=np.int32),
        tiledb.Attr("f", dtype=np.float64, nullable=True),
    ]))
    rng = np.random.default_rng(seed)
    for timestamp in range(1, writes + 1):
        keys = rng.integers(0, KEYS, N)
        null = rng.random((3, N)) < 0.03
        with tiledb.open(uri, "w", timestamp=timestamp) as A:
            A[np.arange(N, dtype=np.int64) * 7] = {
                "k": pa.array(keys, pa.int64(), mask=null[0]),
                "s": pa.array([f"customer-{k % 15000:06d}-{k % 3}" for k in keys], pa.string(),
                              mask=null[1]),
                "c": np.array([f"c{k % 4000}" for k in keys], dtype=object),
                "d": (np.datetime64("2001-01-01") + keys % 9000).astype("datetime64[D]"),
                "i": rng.integers(-50, 100, N).astype(np.int32),
                "f": pa.array(rng.integers(-800, 800, N) / 8.0, pa.float64(), mask=null[2]),
            }
    return uri


def _dims(uri: str) -> str:
    """One row per key of ``t``: a name and a group (keys past 19,000 have none)."""
    domain = tiledb.Domain(tiledb.Dim("k", domain=(0, KEYS), tile=KEYS + 1, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=domain, sparse=True, capacity=5000, attrs=[
        tiledb.Attr("name", dtype=str, var=True), tiledb.Attr("grp", dtype=np.int32)]))
    keys = np.arange(19_000, dtype=np.int64)
    with tiledb.open(uri, "w") as A:
        A[keys] = {"name": np.array([f"name-{k % 7000}" for k in keys], dtype=object),
                   "grp": (keys % 100).astype(np.int32)}
    return uri


@pytest.fixture(scope="module")
def paths(tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("spilled_aggregate")
    return {"t": _rows(str(root / "t"), 5), "g": _rows(str(root / "g"), 6, writes=2),
            "d": _dims(str(root / "d"))}


@pytest.fixture(scope="module")
def oracle(paths) -> duckdb.DuckDBPyConnection:
    return oracle_of(paths)


@pytest.fixture(autouse=True)
def chunks(monkeypatch) -> None:
    monkeypatch.setattr(scan_step, "CHUNK_CELLS", CHUNK_CELLS)


@pytest.fixture()
def spill_dir(monkeypatch, tmp_path) -> str:
    monkeypatch.setenv("TDBSQL_SPILL_DIR", str(tmp_path))
    return str(tmp_path)


def _connect(paths: dict, memory_mb=None) -> tdbsql.Connection:
    con = tdbsql.connect(memory_mb=memory_mb)
    for name, path in paths.items():
        con.register(name, path)
    return con


QUERIES = [
    # an integer key with NULLs; count, sum, avg, min of text, max of dates
    "SELECT k, count(*) AS n, sum(i) AS s, avg(f) AS a, min(s) AS lo, max(d) AS hi "
    "FROM t GROUP BY k",
    # a long text key with NULLs; the variances
    "SELECT s, count(f) AS n, stddev_samp(f) AS sd, var_pop(i) AS v FROM t GROUP BY s",
    # two keys: short text and date; bool_and / bool_or, a sum of an expression
    "SELECT c, d, sum(f * 2) AS s, bool_and(i > -45) AS b1, bool_or(i > 95) AS b2 "
    "FROM t GROUP BY c, d",
    # a decimal key
    "SELECT CAST(k % 9000 AS DECIMAL(12, 2)) + 0.5 AS q, count(*) AS n, sum(i) AS s "
    "FROM t GROUP BY q",
    # HAVING
    "SELECT k, sum(i) AS s, max(f) AS m FROM t GROUP BY k HAVING count(*) > 9",
    # WHERE below, and a FILTER clause
    "SELECT d, s, count(*) AS n, sum(i) FILTER (WHERE f > 0) AS pos FROM t "
    "WHERE i % 3 = 0 GROUP BY d, s",
    # ROLLUP: a spilled aggregate per grouping set
    "SELECT k, c, count(*) AS n, sum(i) AS s FROM t GROUP BY ROLLUP (k, c)",
    # string_agg without ORDER BY: each partition keeps its rows in scan order
    "SELECT k, string_agg(c, ',') AS cs, count(*) AS n FROM t GROUP BY k",
    # the key an expression; expressions over the aggregates
    "SELECT k % 17000 AS m, sum(i) * 2 + count(*) AS x, min(c) || '/' || max(c) AS r "
    "FROM t GROUP BY m",
]

ORDERED = [
    # ORDER BY / LIMIT above the spilled aggregate
    "SELECT s, sum(f) AS total FROM t GROUP BY s ORDER BY total DESC NULLS LAST, s LIMIT 10",
    # the aggregate in a subquery feeding IN (TPC-H Q18's shape)
    "SELECT count(*), sum(i), min(k) FROM t "
    "WHERE k IN (SELECT k FROM t GROUP BY k HAVING sum(i) > 700)",
    "SELECT count(*), max(n) FROM (SELECT c, d, count(*) AS n FROM t GROUP BY c, d) AS x",
    # over a join streamed batch by batch (``engine.streamed_join``), DISTINCT too
    "SELECT d.name, t.c, count(*) AS n, sum(t.f) AS s, count(DISTINCT t.i) AS u FROM t "
    "JOIN d ON t.k = d.k GROUP BY d.name, t.c ORDER BY n DESC, d.name, t.c LIMIT 20",
    "SELECT d.grp, count(*) AS n, sum(x) AS s FROM (SELECT t.k, sum(t.i) AS x FROM t "
    "LEFT JOIN d ON t.k = d.k GROUP BY t.k) AS u LEFT JOIN d ON u.k = d.k GROUP BY d.grp "
    "ORDER BY d.grp NULLS FIRST",
]


@pytest.mark.parametrize("sql", QUERIES)
def test_grouped_past_the_budget_spills_and_answers(paths, oracle, spill_dir, sql):
    con = _connect(paths, SMALL_MB)
    assert_same_table(con.sql(sql).arrow(), oracle.sql(sql).arrow(),
                      rel=1e-9)
    assert SPILLED in con.explain(sql, analyze=True)
    assert os.listdir(spill_dir) == []  # the partitions' files are removed


def test_overlapping_fragments_newest_wins(paths, oracle, spill_dir):
    con = _connect(paths, MERGING_MB)
    assert_same_table(con.sql(NEWEST).arrow(), oracle.sql(NEWEST).arrow(), rel=1e-9)
    assert SPILLED in con.explain(NEWEST, analyze=True)


@pytest.mark.parametrize("sql", ORDERED)
def test_queries_above_a_spilled_aggregate(paths, oracle, spill_dir, sql):
    con = _connect(paths, SMALL_MB)
    assert_same_rows(con.sql(sql).fetchall(), oracle.sql(sql).fetchall(), rel=1e-9)
    text = con.explain(sql, analyze=True)
    # a streamed join's batches meet the same groups: their states may be regrouped into
    # one set (``PartialGroups`` with ``regroup``) and fit without spilling
    assert SPILLED in text or ("Streamed:" in text and " JOIN " in sql)


@pytest.mark.parametrize("sql, memory_mb", [(sql, SMALL_MB) for sql in QUERIES + ORDERED] +
                         [(NEWEST, MERGING_MB)])
def test_the_old_path_stopped_at_this_budget(paths, monkeypatch, sql, memory_mb):
    """With the spill turned off the same queries stop where they always did."""
    monkeypatch.setattr(spilled_aggregate, "_spillable", lambda step, partials: False)
    monkeypatch.setattr(spilled_aggregate, "merged", lambda partials: None)  # nor regrouped
    with pytest.raises(tdbsql.MemoryLimitError, match="the aggregate step"):
        _connect(paths, memory_mb).sql(sql).fetchall()


@pytest.mark.parametrize("sql", [QUERIES[0], QUERIES[2]])
def test_a_partition_too_big_is_split_again(paths, oracle, spill_dir, monkeypatch, sql):
    """Two partitions where far more are needed (the scan's partial groups underestimated):
    each is split again, by further digits of the keys' hash, until it fits."""
    monkeypatch.setattr(spilled_aggregate, "SHARE", 0.01)
    con = _connect(paths, SMALL_MB)
    assert_same_table(con.sql(sql).arrow(), oracle.sql(sql).arrow(), rel=1e-9)
    text = con.explain(sql, analyze=True)
    assert "to 2 partitions on disk (" in text and " split again, into 2, 2" in text
    assert os.listdir(spill_dir) == []


def test_a_result_past_the_budget_still_stops_and_leaves_no_file(paths, spill_dir):
    """A group per row: the partial groups spill, but the result itself does not fit."""
    with pytest.raises(tdbsql.MemoryLimitError, match="the aggregate step 't'"):
        _connect(paths, SMALL_MB).sql("SELECT id + 1 AS j, k, count(*) AS n FROM t "
                                      "GROUP BY j, k").fetchall()
    assert os.listdir(spill_dir) == []


def test_what_fits_runs_as_before(paths, oracle):
    sql = QUERIES[0]
    con = _connect(paths)
    assert_same_table(con.sql(sql).arrow(), oracle.sql(sql).arrow(),
                      rel=1e-9)
    assert SPILLED not in con.explain(sql, analyze=True)


def test_explain_analyze_says_how_it_spilled(paths, spill_dir):
    text = _connect(paths, SMALL_MB).explain(QUERIES[0], analyze=True)
    line = next(line for line in text.splitlines() if SPILLED in line)
    assert "partial groups" in line and "partitions on disk" in line and " MB)" in line


def test_holistic_and_list_keys_stay_on_the_old_path(paths, oracle, spill_dir):
    """median needs a group's values at once, and a list key is not hashed by value: past
    the budget both stop as before; at a budget they fit they answer."""
    for sql in ("SELECT k, median(f) AS m FROM t GROUP BY k",
                "SELECT [k, i % 2] AS l, count(*) AS n FROM t GROUP BY l"):
        with pytest.raises(tdbsql.MemoryLimitError):
            _connect(paths, SMALL_MB).sql(sql).fetchall()
        assert_same_table(_connect(paths).sql(sql).arrow(),
                          oracle.sql(sql).arrow(), rel=1e-9)


def test_a_spill_folder_that_cannot_be_made_is_an_operational_error(paths, monkeypatch):
    monkeypatch.setenv("TDBSQL_SPILL_DIR", "/nonexistent/spill")
    with pytest.raises(tdbsql.OperationalError, match="GROUP BY past the memory budget .* "
                                                      "'/nonexistent/spill'"):
        _connect(paths, SMALL_MB).sql(QUERIES[0]).fetchall()


def test_equal_keys_share_a_partition_whatever_their_arrow_type():
    """One key, one partition, in every batch: dictionary or plain text, string or
    large_string, int32 or int64; NULLs too."""
    text = ["a", None, "a much longer text value", "", "b"]
    for arrays in ([pa.array(text), pa.array(text, pa.large_string()),
                    pa.array(text).dictionary_encode()],
                   [pa.array([1, None, 7, -3, 2**31 - 1], pa.int32()),
                    pa.array([1, None, 7, -3, 2**31 - 1], pa.int64())]):
        parts = [hash_partitions.partitions([array], 7) for array in arrays]
        for other in parts[1:]:
            assert other.tolist() == parts[0].tolist()
        assert all(0 <= p < 7 for p in parts[0])
    dates = pa.array([0, 5, None], pa.date32())
    values = pa.array([1, 2, None], pa.decimal128(12, 2))
    two = hash_partitions.partitions([dates, values], 64)
    again = hash_partitions.partitions([dates.slice(1), values.slice(1)], 64)
    assert two.tolist()[1:] == again.tolist()
    many = hash_partitions.partitions([pa.array(np.arange(10_000))], 8)
    assert np.bincount(many, minlength=8).min() > 1000  # spread over every partition
