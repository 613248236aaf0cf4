"""Window functions: random windows over random tables against DuckDB, the frame kernels
against plain loops, and the plan shape (a windowed SELECT gets steps of its own).

The SQL-level behaviour, with expected rows DuckDB produced, is in tests/sql/window/*.test.
"""

from __future__ import annotations

import math

import duckdb
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tdbsql
from sql_fixtures import assert_same_rows
from tdbsql.kernels import window as kernels

SETTINGS = dict(deadline=None, derandomize=True, max_examples=150,
                suppress_health_check=[HealthCheck.too_slow])

FUNCTIONS = [
    "row_number()", "rank()", "dense_rank()", "percent_rank()", "cume_dist()", "ntile(3)",
    "lag(x)", "lead(x, 2)", "lag(s, 1, 'none')", "first_value(x)", "last_value(s)",
    "nth_value(x, 2)", "first_value(x IGNORE NULLS)", "last_value(s IGNORE NULLS)",
    "count(*)", "count(x)", "sum(x)", "avg(y)", "min(s)", "max(y)", "sum(y)", "min(x)",
]
WHOLE_PARTITION_ONLY = ["stddev_samp(y)", "var_pop(x)", "bool_or(x > 2)", "count(DISTINCT g)"]
BOUNDS = ["UNBOUNDED PRECEDING", "3 PRECEDING", "1 PRECEDING", "CURRENT ROW", "1 FOLLOWING",
          "2 FOLLOWING", "UNBOUNDED FOLLOWING"]


@st.composite
def tables(draw) -> pa.Table:
    n = draw(st.integers(0, 30))
    ints = st.one_of(st.none(), st.integers(-3, 5))
    return pa.table({
        "id": pa.array(range(n), pa.int64()),
        "g": pa.array(draw(st.lists(st.one_of(st.none(), st.integers(0, 2)), min_size=n,
                                    max_size=n)), pa.int64()),
        "x": pa.array(draw(st.lists(ints, min_size=n, max_size=n)), pa.int64()),
        # quarters add up exactly, so float sums do not depend on the order of addition
        "y": pa.array([None if v is None else v / 4 for v in
                       draw(st.lists(st.one_of(st.none(), st.integers(-40, 40)),
                                     min_size=n, max_size=n))], pa.float64()),
        "s": pa.array(draw(st.lists(st.one_of(st.none(), st.sampled_from(["a", "b", "Ä", ""])),
                                    min_size=n, max_size=n)), pa.string()),
    })


@st.composite
def windows(draw) -> str:
    partition = draw(st.sampled_from(["", "PARTITION BY g", "PARTITION BY s",
                                      "PARTITION BY g, s"]))
    keys = draw(st.lists(st.sampled_from(["x", "s", "y", "x DESC", "s DESC NULLS FIRST",
                                          "y NULLS FIRST"]), max_size=2, unique=True))
    unique = draw(st.booleans())  # ties broken by id: every function is deterministic
    function = draw(st.sampled_from(FUNCTIONS + WHOLE_PARTITION_ONLY))
    if function in WHOLE_PARTITION_ONLY:
        frame = draw(st.sampled_from(["", "ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED "
                                          "FOLLOWING"]))
        order = f"ORDER BY {', '.join(keys + ['id'])}" if frame else ""
        return f"{function} OVER ({' '.join(p for p in (partition, order, frame) if p)})"
    frame = ""
    if keys and draw(st.booleans()):
        start = draw(st.sampled_from(BOUNDS[:-1]))
        later = BOUNDS[max(BOUNDS.index(start), 1):]
        if start.endswith("FOLLOWING"):
            later = later[1:]
        end = draw(st.sampled_from(later))
        kind = draw(st.sampled_from(["ROWS", "RANGE"])) if all(
            b.startswith(("UNBOUNDED", "CURRENT")) for b in (start, end)) else "ROWS"
        frame = f"{kind} BETWEEN {start} AND {end}"
    order_dependent = not function.startswith(("rank", "dense_rank", "percent_rank",
                                                "cume_dist", "count(", "sum(", "avg(",
                                                "min(", "max(", "stddev", "var_", "bool_"))
    if unique or order_dependent or frame.startswith("ROWS"):
        keys = keys + ["id"]
    order = f"ORDER BY {', '.join(keys)}" if keys else ""
    return f"{function} OVER ({' '.join(p for p in (partition, order, frame) if p)})"


def _rows(table: pa.Table) -> list[tuple]:
    columns = [c.to_pylist() for c in table.columns]
    return [tuple(_normal(v) for v in row) for row in zip(*columns)]


def _normal(value):
    if hasattr(value, "as_integer_ratio") and not isinstance(value, (bool, float)):
        return int(value) if value == int(value) else float(value)  # DuckDB's HUGEINT/DECIMAL
    return value


@settings(**SETTINGS)
@given(table=tables(), window=windows())
def test_random_windows_equal_duckdb(table, window):
    sql = f"SELECT id, {window} AS w FROM t ORDER BY id"
    con = tdbsql.connect()
    con.register_arrow("t", table)
    got = _rows(con.sql(sql).arrow())
    oracle = duckdb.connect()
    oracle.register("t", table)
    want = _rows(oracle.sql(sql).arrow().read_all()
                 if hasattr(oracle.sql(sql).arrow(), "read_all") else oracle.sql(sql).arrow())
    assert_same_rows(got, want, rel=1e-9)


@settings(**SETTINGS)
@given(table=tables(), window=windows(), limit=st.integers(1, 5))
def test_random_windows_in_a_subquery_equal_duckdb(table, window, limit):
    """The window step inside a CTE, filtered and limited outside (top-N per partition)."""
    sql = (f"WITH w AS (SELECT id, g, {window} AS w FROM t WHERE x IS DISTINCT FROM 0) "
           f"SELECT id, w FROM w WHERE g IS NOT NULL ORDER BY id LIMIT {limit}")
    con = tdbsql.connect()
    con.register_arrow("t", table)
    oracle = duckdb.connect()
    oracle.register("t", table)
    result = oracle.sql(sql).arrow()
    want = _rows(result.read_all() if hasattr(result, "read_all") else result)
    assert_same_rows(_rows(con.sql(sql).arrow()), want, rel=1e-9)


@settings(deadline=None, derandomize=True, max_examples=200)
@given(values=st.lists(st.one_of(st.none(), st.integers(-5, 5)), max_size=40),
       before=st.integers(0, 4), after=st.integers(-2, 4), largest=st.booleans(),
       cut=st.integers(0, 40))
def test_sliding_extreme_equals_a_plain_loop(values, before, after, largest, cut):
    """Two partitions (cut at ``cut``), ROWS BETWEEN ``before`` PRECEDING AND ``after``
    FOLLOWING (negative: preceding): the queue kernel finds each frame's extreme."""
    n = len(values)
    cut = min(cut, n)
    position = np.arange(n, dtype=np.int64)
    part_start = np.where(position < cut, 0, cut)
    part_end = np.where(position < cut, cut, n)
    start = np.clip(position - before, part_start, part_end)
    end = np.maximum(np.clip(position + after + 1, part_start, part_end), start)
    ranks = np.array([0 if v is None else v for v in values], np.int64)
    valid = np.array([v is not None for v in values], bool)
    found = np.empty(n, np.int64)
    kernels.sliding_extreme(ranks, valid, start, end, largest, np.empty(max(n, 1), np.int64),
                            found)
    for i in range(n):
        frame = [v for v in values[start[i]:end[i]] if v is not None]
        if not frame:
            assert found[i] == -1
        else:
            assert values[found[i]] == (max(frame) if largest else min(frame))
            assert start[i] <= found[i] < end[i]


@settings(deadline=None, derandomize=True, max_examples=100)
@given(values=st.lists(st.floats(-1e12, 1e12), min_size=1, max_size=60),
       data=st.data())
def test_compensated_prefix_frame_sums_match_fsum(values, data):
    array = np.array(values)
    high, low = np.empty(len(array) + 1), np.empty(len(array) + 1)
    kernels.compensated_prefix(array, np.ones(len(array), bool), high, low)
    start = data.draw(st.integers(0, len(array) - 1))
    end = data.draw(st.integers(start, len(array)))
    got = (high[end] - high[start]) + (low[end] - low[start])
    assert got == pytest.approx(math.fsum(values[start:end]), rel=1e-12, abs=1e-3)


def test_infinities_and_nan_stay_inside_their_frames():
    table = pa.table({"id": pa.array(range(6), pa.int64()),
                      "v": pa.array([1.0, math.inf, 2.0, -math.inf, 3.0, math.nan])})
    con = tdbsql.connect()
    con.register_arrow("t", table)
    got = con.sql("SELECT sum(v) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) "
                  "FROM t ORDER BY id").arrow().column(0).to_pylist()
    assert got[:4] == [1.0, math.inf, math.inf, -math.inf]
    assert got[4] == -math.inf and math.isnan(got[5])


def test_window_step_in_the_plan():
    con = tdbsql.connect()
    con.register_arrow("t", pa.table({"k": [1, 2, 2], "v": [1.0, 2.0, 3.0]}))
    text = con.explain("SELECT k, sum(v) OVER (PARTITION BY k) AS s FROM t ORDER BY k")
    assert "OVER (PARTITION BY" in text
    assert con.sql("SELECT k, sum(v) OVER (PARTITION BY k) AS s FROM t ORDER BY k, s") \
        .fetchall() == [(1, 1.0), (2, 5.0), (2, 5.0)]


def test_large_integer_frame_sums_are_exact():
    big = 2**62
    con = tdbsql.connect()
    con.register_arrow("t", pa.table({"id": [1, 2, 3], "v": [big, big, -big]}))
    got = con.sql("SELECT sum(v) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) "
                  "FROM t ORDER BY id").arrow().column(0).to_pylist()
    assert [int(v) for v in got] == [big, 2 * big, 0]
