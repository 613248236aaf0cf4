"""Streamed aggregates over many groups: accumulators indexed by an integer key
(``engine.dense_groups``, from ``engine.scan_sums``) and partial states regrouped partition by
partition of the key range (``engine.key_partitions``) equal DuckDB over the cells ``tiledb``
reads -- with negative keys, keys rising along the scan, keys too spread for the accumulators,
a memory budget too small for them, NULL keys, and min / max of dates and timestamps."""

from __future__ import annotations

import math

import duckdb
import numpy as np
import pyarrow as pa
import pytest
import tiledb
from hypothesis import given, settings
from hypothesis import strategies as st

import tdbsql
from sql_fixtures import assert_same_table, duckdb_over
from tdbsql.engine import dense_groups, key_partitions, scan_step, streamed_aggregate
from tdbsql.engine.dense_groups import Accumulator, DenseGroups, Slots
from tdbsql.engine.scan_sums import ScanSums
from tdbsql.kernels import aggregate as agg_kernels
from tdbsql.kernels import expression_sums as K

N = 6000


def _array(uri: str, keys: dict, nullable: bool = False) -> str:
    """A sparse array of ``N`` cells along ``d``: the integer columns ``keys`` and float
    values ``x`` (large and small terms, an infinity and a NaN) and ``y``."""
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 10**6), tile=1000, dtype=np.int64))
    attrs = [tiledb.Attr(name, dtype=np.int64, nullable=nullable) for name in keys]
    attrs += [tiledb.Attr("x", dtype=np.float64), tiledb.Attr("y", dtype=np.float64)]
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=200,
                                                attrs=attrs))
    rng = np.random.default_rng(3)
    x = rng.standard_normal(N) * 10.0 ** rng.integers(-3, 12, N)
    x[[17, 4000]] = math.inf, math.nan
    with tiledb.open(uri, "w") as A:
        A[np.arange(N) * 7] = {**keys, "x": x, "y": rng.integers(0, 100, N) / 8.0}
    return uri


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch):
    monkeypatch.setattr(scan_step, "CHUNK_CELLS", 700)  # ~9 chunks on each thread


@pytest.fixture
def dense_spy(monkeypatch):
    """The groups each query's accumulators held (one entry per streamed aggregate)."""
    seen = []
    real = ScanSums.dense_partial

    def spy(self, array, dense):
        partial = real(self, array, dense)
        seen.append(0 if partial is None else partial.count)
        return partial

    monkeypatch.setattr(ScanSums, "dense_partial", spy)
    return seen


def _check(uri: str, sql: str, **connect) -> None:
    got = tdbsql.connect(**connect).register("t", uri).sql(sql).arrow()
    assert_same_table(got, duckdb_over(uri).sql(sql).arrow())


SQL = [
    "SELECT g, sum(x), avg(y), count(*), sum(x * (1 - y)) FROM t GROUP BY g",
    "SELECT g, min(x), max(x), min(h), max(h), count(*) FROM t GROUP BY g",
    "SELECT g FROM t GROUP BY g HAVING sum(y) > 40",
    "SELECT g, count(*) FROM t WHERE d > 9000 GROUP BY g",
]


@pytest.mark.parametrize("sql", SQL)
def test_negative_keys(tmp_path, dense_spy, sql):
    rng = np.random.default_rng(1)
    uri = _array(str(tmp_path / "neg"), {"g": rng.integers(-3000, 3000, N),
                                         "h": rng.integers(-2**62, 2**62, N)})
    _check(uri, sql)
    assert dense_spy and dense_spy[0] > 2000


def test_keys_rising_along_the_scan_grow_the_accumulators(tmp_path, dense_spy, monkeypatch):
    grown = []
    real = Slots.grown
    monkeypatch.setattr(Slots, "grown", lambda self, *a: grown.append(a[1:]) or real(self, *a))
    uri = _array(str(tmp_path / "rising"), {"g": np.arange(N) // 2 + 10**12,
                                            "h": np.arange(N)})
    _check(uri, SQL[0])
    assert dense_spy == [N // 2]
    assert 0 < len(grown) < 9  # to twice the size, not every chunk


def test_keys_too_spread_go_the_usual_way(tmp_path, dense_spy):
    """Keys mostly in 0 .. 2000, but the last tiles' far away: those chunks are grouped on
    their own, and their partials combine with the accumulators' groups."""
    g = np.random.default_rng(2).integers(0, 2000, N)
    g[-1500:] += 10**15
    g[-1] = -(2**63)  # the ends of int64 too
    g[-2] = 2**63 - 1
    uri = _array(str(tmp_path / "spread"), {"g": g, "h": g})
    _check(uri, SQL[0])
    _check(uri, SQL[1])
    assert 0 < dense_spy[0] < len(np.unique(g))


def test_a_small_memory_budget_leaves_the_accumulators_out(tmp_path, dense_spy):
    uri = _array(str(tmp_path / "budget"), {"g": np.arange(N) * 10, "h": np.arange(N)})
    _check(uri, SQL[0], memory_mb=2)  # 60K slots of 24 bytes: more than half of it
    assert dense_spy[0] < N  # the accumulators stopped growing: later chunks went on alone
    _check(uri, SQL[0])
    assert dense_spy[1] == N


def test_one_thread(tmp_path, dense_spy, monkeypatch):
    monkeypatch.setenv("TDBSQL_THREADS", "1")
    uri = _array(str(tmp_path / "one"), {"g": np.arange(N) % 777, "h": np.arange(N)})
    _check(uri, SQL[0])
    assert dense_spy == [777]


# -- partial states regrouped by partitions of the key range ---------------------------------

PARTITIONED = [
    "SELECT g, sum(x), count(*), avg(y), count(g) FROM t GROUP BY g",
    "SELECT g, h, sum(y), min(x), max(y) FROM t GROUP BY g, h",
    "SELECT h % 7 AS k, g, stddev_samp(y), first(y) FROM t GROUP BY k, g",
    "SELECT CAST(g AS VARCHAR) AS s, string_agg(CAST(y AS VARCHAR), ','), "
    "product(y + 1) FROM t GROUP BY s",
    "SELECT x, count(*) FROM t GROUP BY x",
]


@pytest.mark.parametrize("sql", PARTITIONED)
def test_partitions_of_the_key_range_with_null_keys(tmp_path, monkeypatch, sql):
    monkeypatch.setattr(key_partitions, "PARTITION_ROWS", 64)
    used = []
    real = key_partitions.key_partitions
    monkeypatch.setattr("tdbsql.engine.partial_aggregate.key_partitions",
                        lambda keys, n: used.append(1) or real(keys, n))
    rng = np.random.default_rng(4)
    g = pa.array(rng.integers(-50_000, 50_000, N), mask=rng.random(N) < 0.05)
    h = pa.array(rng.integers(0, 3, N), mask=rng.random(N) < 0.3)
    uri = _array(str(tmp_path / "nulls"), {"g": g, "h": h}, nullable=True)
    _check(uri, sql)
    assert used


def test_partitions_over_the_whole_int64_range():
    keys = [pa.array([2**63 - 1, -(2**63), 0, 5, -(2**63), 2**63 - 1] * 30_000)]
    parts = key_partitions.key_partitions(keys, len(keys[0]))
    assert parts is not None and len(parts.rows) == 2
    assert parts.count == 4
    assert sorted(keys[0].take(pa.array(parts.first)).to_pylist()) == \
        [-(2**63), 0, 5, 2**63 - 1]


# -- the accumulators ------------------------------------------------------------------------

LAYOUT = {"sums": Accumulator("sums", 1), "low": Accumulator("min", dtype=np.dtype(np.int64))}


def test_few_keys_past_the_ends_widen_by_a_sixteenth_on_both_sides():
    groups = DenseGroups(LAYOUT, slot_limit=10**9, room=10**12)
    assert groups._cover(100, 1699)
    assert groups._cover(99, 1700)  # 2 more: 1600 // 16 = 100 slack, half on each side
    assert groups.span == (99 - 50, 1600 + 2 + 100)


def test_many_keys_past_the_end_double_the_span():
    groups = DenseGroups(LAYOUT, slot_limit=10**9, room=10**12)
    assert groups._cover(0, 999)
    assert groups._cover(1000, 1999)
    assert groups.span == (0, 3000)
    assert groups._cover(2500, 2999)  # inside: nothing changes
    assert groups.span == (0, 3000)


def test_the_slot_limit_and_the_room_refuse_a_range():
    assert not DenseGroups(LAYOUT, slot_limit=1000, room=10**12)._cover(0, 1000)
    assert DenseGroups(LAYOUT, slot_limit=1001, room=10**12)._cover(0, 1000)
    per_slot = dense_groups.slot_bytes(LAYOUT)
    assert per_slot == 3 * 8 + 8
    assert not DenseGroups(LAYOUT, slot_limit=10**9, room=1000 * per_slot - 1)._cover(0, 999)
    groups = DenseGroups(LAYOUT, slot_limit=1500, room=10**12)
    assert groups._cover(0, 999) and groups._cover(1000, 1499)
    assert groups.span == (0, 1500)  # the doubling stops at the limit
    with groups.slots(0, 1499) as slots:
        assert (slots.low, slots.size) == (0, 1500)
    with groups.slots(1500, 1500) as slots:
        assert slots is None


def test_sets_merge_into_one():
    groups = DenseGroups(LAYOUT, slot_limit=10**6, room=10**9)
    with groups.slots(10, 19) as one, groups.slots(12, 13) as two:
        assert one is not two
        for slots, key, value in ((one, 10, 1.5), (two, 13, 2.0), (two, 10, 1e17)):
            slot = key - slots.low
            slots.arrays["sums"][slot, 0] += 1
            slots.arrays["sums"][slot, 1], error = agg_kernels.two_sum(
                slots.arrays["sums"][slot, 1], value)
            slots.arrays["sums"][slot, 2] += error
            slots.arrays["low"][slot] = min(slots.arrays["low"][slot], -key)
    merged = groups.merged()
    records = merged.arrays["sums"]
    assert merged.low == 10 and list(np.flatnonzero(records[:, 0])) == [0, 3]
    assert records[0, 1] + records[0, 2] == 1e17 + 1.5  # the error term kept the 1.5
    assert list(merged.arrays["low"][[0, 3]]) == [-10, -13]


def test_extremes_order_nan_above_every_number():
    for want_max, start in ((False, np.nan), (True, -np.inf)):
        out = np.full(3, start)
        values = np.array([np.nan, 1.0, np.nan, -np.inf, 2.0])
        agg_kernels.extremes_into(values, np.array([0, 1, 1, 2, 2]), want_max, out)
        expected = [np.nan, np.nan, 2.0] if want_max else [np.nan, 1.0, -np.inf]
        np.testing.assert_array_equal(out, expected)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.integers(1, 4000), st.integers(1, 300), st.integers(0, 2**32 - 1))
def test_slot_sums_equal_exact_sums(n, groups, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n) * 10.0 ** rng.integers(-3, 12, n)
    y = rng.standard_normal(n)
    slots = rng.integers(0, groups, n).astype(np.int64)
    code = np.array([(K.MULTIPLY, 6, 0, 1)], np.int64)  # x * y
    results = np.array([0, 6], np.int64)
    records = np.zeros((groups, 5))
    none, no_codes = np.empty(0), np.empty(0, np.uint8)
    half = n // 2  # in two calls, and two sets added
    other = np.zeros_like(records)
    for part, into in ((slice(0, half), records), (slice(half, n), other)):
        K.fold_slot_sums(code, np.empty(0), results, (x[part], y[part]) + (none,) * 4,
                         (no_codes,) * 6, (none,) * 6, slots[part], into,
                         np.empty((K.COLUMNS + 1, K.BLOCK)))
    K.add_slot_sums(other, records)
    for group in range(groups):
        rows = slots == group
        assert records[group, 0] == rows.sum()
        for e, values in enumerate((x, x * y)):
            exact = math.fsum(values[rows])
            got = records[group, 1 + 2 * e] + records[group, 2 + 2 * e]
            assert abs(got - exact) <= 1e-15 * math.fsum(np.abs(values[rows])) + 1e-300


def test_the_accumulators_stay_small_enough_for_the_caches():
    assert streamed_aggregate.DENSE_SET_BYTES <= 32 << 20


# -- min / max of dates and timestamps: their int64 counts on the integer path ---------------

DATED = "SELECT g, min(day), max(day), min(ts), max(ts), count(*), avg(y) FROM t GROUP BY g"


def _dated_array(uri: str, g, day, ts) -> str:
    """A sparse array of ``N`` cells along ``d`` written as two fragments: the integer key
    ``g``, a date ``day``, a millisecond timestamp ``ts`` (nullable when given as masked
    Arrow arrays) and float values ``y``."""
    nullable = isinstance(day, pa.Array)
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 10**6), tile=1000, dtype=np.int64))
    attrs = [tiledb.Attr("g", dtype=np.int64, nullable=isinstance(g, pa.Array)),
             tiledb.Attr("day", dtype="datetime64[D]", nullable=nullable),
             tiledb.Attr("ts", dtype="datetime64[ms]", nullable=nullable),
             tiledb.Attr("y", dtype=np.float64)]
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=200,
                                                attrs=attrs))
    y = np.random.default_rng(5).integers(0, 100, N) / 8.0
    for part in (slice(0, N // 2), slice(N // 2, N)):
        with tiledb.open(uri, "w") as A:
            A[np.arange(N)[part] * 7] = {"g": g[part], "day": day[part], "ts": ts[part],
                                         "y": y[part]}
    return uri


def _dates(rng, null_share: float = 0.0):
    """Random dates (1900 .. 2100) and millisecond timestamps (either side of 1970), masked
    Arrow arrays with about ``null_share`` NULLs when it is not 0."""
    day = rng.integers(-25_000, 47_000, N)
    ts = rng.integers(-2 * 10**12, 4 * 10**12, N)
    if not null_share:
        return day.astype("datetime64[D]"), ts.astype("datetime64[ms]")
    return (pa.array(day.astype(np.int32), pa.int32(), mask=rng.random(N) < null_share)
            .view(pa.date32()),
            pa.array(ts, pa.int64(), mask=rng.random(N) < null_share).view(pa.timestamp("ms")))


@pytest.mark.parametrize("spread", [False, True], ids=["dense", "chunk_by_chunk"])
def test_date_and_timestamp_extremes_take_the_integer_path(tmp_path, dense_spy, monkeypatch,
                                                           spread):
    rng = np.random.default_rng(6)
    g = rng.integers(-400, 400, N) * (10**9 if spread else 1)
    uri = _dated_array(str(tmp_path / "dated"), g, *_dates(rng))
    folded = []
    real = ScanSums.partial
    monkeypatch.setattr(ScanSums, "partial",
                        lambda self, *a: folded.append(1) or real(self, *a))
    got = tdbsql.connect().register("t", uri).sql(DATED).arrow()
    assert got.schema.field(1).type == pa.date32()
    assert got.schema.field(3).type == pa.timestamp("ms")
    assert_same_table(got, duckdb_over(uri).sql(DATED).arrow())
    assert folded  # the chunks were summed from their tiles ...
    assert (dense_spy[0] == 0) == spread  # ... into the accumulators when the keys are dense


def test_nulls_in_the_dates_and_the_key(tmp_path):
    rng = np.random.default_rng(7)
    g = pa.array(rng.integers(0, 500, N), mask=rng.random(N) < 0.05)
    uri = _dated_array(str(tmp_path / "nulls"), g, *_dates(rng, null_share=0.2))
    _check(uri, DATED)
    _check(uri, DATED.replace("GROUP BY g", "WHERE y > 5 GROUP BY g"))


def test_nat_in_a_date_that_holds_no_null_is_null(tmp_path):
    """TileDB's NaT (int64's smallest) reads as NULL: a chunk holding one goes the usual way,
    the integer kernels would take it for the smallest date."""
    rng = np.random.default_rng(8)
    g = rng.integers(0, 300, N)
    day, ts = _dates(rng)
    day[[5, 3100]] = np.datetime64("NaT")
    uri = _dated_array(str(tmp_path / "nat"), g, day, ts)
    got = tdbsql.connect().register("t", uri).sql(DATED).arrow()
    y = np.random.default_rng(5).integers(0, 100, N) / 8.0
    days = day.astype(np.int64)
    want = pa.table({"g": g, "day": pa.array(days.astype(np.int32), mask=days == -(2**63))
                     .view(pa.date32()), "ts": ts, "y": y})
    oracle = duckdb.connect()
    oracle.register("t", want)
    assert_same_table(got, oracle.sql(DATED).arrow())
