"""Window functions: random windows over random tables against DuckDB, the frame kernels
against plain loops, and the plan shape (a windowed SELECT gets steps of its own).

The SQL-level behaviour, with expected rows DuckDB produced, is in tests/sql/window/*.test.
"""

from __future__ import annotations

import datetime as dt
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
    "lag(x IGNORE NULLS)", "lead(s, 2, 'none' IGNORE NULLS)",
    "count(*)", "count(x)", "sum(x)", "avg(y)", "min(s)", "max(y)", "sum(y)", "min(x)",
] + ["array_agg(x)", "list(s)", "string_agg(s)", "string_agg(x, '-')", "listagg(y, '')",
     "group_concat(d, ' ')", "string_agg(ts)"]
# their values come in window order, so they need windows without peers
FRAME_LISTS = ("array_agg", "list", "string_agg", "listagg", "group_concat")
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
        "d": pa.array([None if v is None else dt.date(2024, 1, 1) + dt.timedelta(days=v)
                       for v in draw(st.lists(st.one_of(st.none(), st.integers(-40, 40)),
                                              min_size=n, max_size=n))], pa.date32()),
        "ts": pa.array([None if v is None else dt.datetime(2024, 2, 28) + dt.timedelta(hours=v)
                        for v in draw(st.lists(st.one_of(st.none(), st.integers(-900, 900)),
                                               min_size=n, max_size=n))], pa.timestamp("ms")),
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
    if keys and function not in WHOLE_PARTITION_ONLY and draw(st.integers(0, 2)) == 0:
        return _range_offset_window(draw, partition, function)
    if keys and draw(st.booleans()):
        start = draw(st.sampled_from(BOUNDS[:-1]))
        later = BOUNDS[max(BOUNDS.index(start), 1):]
        if start.endswith("FOLLOWING"):
            later = later[1:]
        end = draw(st.sampled_from(later))
        kind = draw(st.sampled_from(["ROWS", "RANGE", "GROUPS"] if all(
            b.startswith(("UNBOUNDED", "CURRENT")) for b in (start, end)) else ["ROWS", "GROUPS"]))
        frame = f"{kind} BETWEEN {start} AND {end}"
    order_dependent = not function.startswith(("rank", "dense_rank", "percent_rank",
                                                "cume_dist", "count(", "sum(", "avg(",
                                                "min(", "max(", "stddev", "var_", "bool_"))
    if unique or order_dependent or frame.startswith("ROWS"):
        keys = keys + ["id"]
    order = f"ORDER BY {', '.join(keys)}" if keys else ""
    return f"{function} OVER ({' '.join(p for p in (partition, order, frame) if p)})"


RANGE_KEYS = ["x", "x DESC", "y", "y DESC", "x NULLS FIRST", "y DESC NULLS FIRST", "d",
              "d DESC", "ts", "ts DESC NULLS FIRST"]
NUMBER_OFFSETS = ["0", "1", "2", "1.5", "0.25", "10"]
INTERVAL_OFFSETS = ["INTERVAL 1 DAY", "INTERVAL 2 DAYS", "INTERVAL 36 HOURS",
                    "INTERVAL 1 MONTH", "INTERVAL '1 day 6 hours'"]


def _range_offset_window(draw, partition: str, function: str) -> str:
    """``function OVER (... ORDER BY key RANGE BETWEEN ...)`` with an offset on one side at
    least: one ORDER BY key (a number, date or timestamp; ties are peers, so only functions
    that do not depend on the order among peers)."""
    key = draw(st.sampled_from(RANGE_KEYS))
    column = key.split()[0]
    offsets = INTERVAL_OFFSETS if column == "ts" else NUMBER_OFFSETS if column in "xy" else \
        ["0", "1", "3"] + INTERVAL_OFFSETS
    if column == "x":
        offsets = [o for o in offsets if "." not in o] + ["1.5"]
    if column == "d":
        offsets = [o for o in offsets if "." not in o]

    def bound(sides: list[str]) -> tuple[int, str]:
        """(place from preceding to following, text) of a bound on one of ``sides``."""
        side = draw(st.sampled_from(sides))
        if side == "CURRENT ROW":
            return 2, side
        if side.startswith("UNBOUNDED"):
            return (0 if side.endswith("PRECEDING") else 4), side
        return (1 if side == "PRECEDING" else 3), f"{draw(st.sampled_from(offsets))} {side}"

    while True:
        (first, start), (last, end) = bound(["UNBOUNDED PRECEDING", "PRECEDING", "CURRENT ROW",
                                             "FOLLOWING"]), \
            bound(["PRECEDING", "CURRENT ROW", "FOLLOWING", "UNBOUNDED FOLLOWING"])
        if (1 in (first, last) or 3 in (first, last)) and not (first >= 2 and last < first):
            break
    if function.startswith(("row_number", "lag", "lead", "first_value", "last_value",
                            "nth_value", "ntile") + FRAME_LISTS):
        function = draw(st.sampled_from([f for f in FUNCTIONS if f.startswith(
            ("count", "sum", "avg", "min", "max", "rank", "dense_rank", "percent_rank",
             "cume_dist"))]))
    order = f"ORDER BY {key} RANGE BETWEEN {start} AND {end}"
    return f"{function} OVER ({' '.join(p for p in (partition, order) if p)})"


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
    assert_window_equals_duckdb(table, window)


def assert_window_equals_duckdb(table: pa.Table, window: str) -> None:
    """``SELECT id, <window> FROM t ORDER BY id`` gives DuckDB's rows over ``table``."""
    sql = f"SELECT id, {window} AS w FROM t ORDER BY id"
    con = tdbsql.connect()
    con.register_arrow("t", table)
    got = _rows(con.sql(sql).arrow())
    oracle = duckdb.connect()
    oracle.register("t", table)
    want = _rows(oracle.sql(sql).arrow().read_all()
                 if hasattr(oracle.sql(sql).arrow(), "read_all") else oracle.sql(sql).arrow())
    assert_same_rows(got, want, rel=1e-9)


_AGGREGATES = ("count(", "sum(", "avg(", "min(", "max(", "stddev", "var_", "bool_") + FRAME_LISTS
FILTER_CONDITIONS = ["x > 0", "s IS NOT NULL", "y < 2", "g = 1", "x IS NULL OR y > 0", "NULL",
                     "id % 3 <> 1"]


@st.composite
def filtered_windows(draw) -> str:
    """A random aggregate window call (whole partition or moving frame) with FILTER."""
    window = draw(windows().filter(lambda w: w.startswith(_AGGREGATES)))
    condition = draw(st.sampled_from(FILTER_CONDITIONS))
    return window.replace(" OVER (", f" FILTER (WHERE {condition}) OVER (", 1)


@settings(**SETTINGS)
@given(table=tables(), window=filtered_windows())
def test_random_filtered_windows_equal_duckdb(table, window):
    """FILTER (WHERE ...) on window aggregates: the frames stay, the aggregate reads the rows
    of each frame where the condition is true."""
    assert_window_equals_duckdb(table, window)


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


@settings(deadline=None, derandomize=True, max_examples=100)
@given(values=st.lists(st.one_of(st.floats(-1e12, 1e12), st.sampled_from([1e300, -1e300, 5e302])),
                       min_size=1, max_size=60),
       data=st.data())
def test_tree_frame_sums_match_fsum(values, data):
    """A frame's sum comes from its own rows: huge values outside it (1e300 before the frame
    cancelled every small value in it, in the running sums this replaced) change nothing."""
    array = np.array(values)
    size = 1 << (len(array) - 1).bit_length()
    high, low = np.empty(2 * size), np.empty(2 * size)
    kernels.sum_tree(array, np.ones(len(array), bool), high, low)
    start = data.draw(st.integers(0, len(array) - 1))
    end = data.draw(st.integers(start, len(array)))
    got = np.empty(1)
    kernels.tree_frame_sums(high, low, np.array([start]), np.array([end]), got)
    frame = values[start:end]
    if max((abs(v) for v in frame), default=0) < 1e299:  # no huge value inside: all digits
        assert got[0] == pytest.approx(math.fsum(frame), rel=1e-12, abs=1e-3)


def test_frame_sums_beside_huge_values():
    """Running sums lose a frame's digits after 1e300: those frames come from the tree."""
    table = pa.table({"id": pa.array(range(8), pa.int64()),
                      "v": pa.array([1e300, 1.5, 2.25, -1e300, 4.0, 1e300, 0.125, 3.0])})
    con = tdbsql.connect()
    con.register_arrow("t", table)
    got = con.sql("SELECT sum(v) OVER (ORDER BY id ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING) "
                  "FROM t ORDER BY id").arrow().column(0).to_pylist()
    assert got[1:3] == [3.75, 2.25 - 1e300] and got[6] == 3.125


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


SPECIAL = pa.table({
    "id": pa.array(range(1, 10), pa.int64()),
    "f": pa.array([1.0, math.nan, None, -2.0, math.inf, -math.inf, 1.0, math.nan, 0.5]),
    "u": pa.array([1, 2, 3, 250, None, 7, 7, 0, 9], pa.uint8()),
    "i": pa.array([2**31 - 2, -2**31 + 1, 0, 5, None, 7, 7, 8, 9], pa.int32()),
    "b": pa.array([2**63 - 1, -2**63, 0, 5, None, 7, 7, 8, 9], pa.int64()),
})
SPECIAL_CASES = [
    # moving-frame sums: past int64 (-2**63 included), unsigned, booleans
    "sum(b) OVER (ORDER BY id ROWS 1 PRECEDING)",
    "sum(u) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING)",
    "avg(u) OVER (ORDER BY id ROWS 2 PRECEDING)",
    "sum(u > 5) OVER (ORDER BY id ROWS 1 PRECEDING)",
    # NaN sorts above every number (also DESC and NULLS FIRST), inf - inf is NaN
    "sum(id) OVER (ORDER BY f RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING)",
    "sum(id) OVER (ORDER BY f DESC RANGE BETWEEN 1 PRECEDING AND 0.5 FOLLOWING)",
    "sum(id) OVER (ORDER BY f NULLS FIRST RANGE BETWEEN 2 FOLLOWING AND UNBOUNDED FOLLOWING)",
    "sum(id) OVER (ORDER BY f DESC NULLS FIRST RANGE BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)",
    "sum(id) OVER (ORDER BY f RANGE BETWEEN 'inf'::DOUBLE FOLLOWING AND UNBOUNDED FOLLOWING)",
    "row_number() OVER (ORDER BY f DESC, id)",
    "row_number() OVER (ORDER BY f NULLS FIRST, id)",
    # integer keys: a fractional offset compares exactly, a big one saturates
    "sum(id) OVER (ORDER BY b RANGE BETWEEN 1.5 PRECEDING AND 0.5 FOLLOWING)",
    "sum(id) OVER (ORDER BY b DESC RANGE BETWEEN 2.5 FOLLOWING AND 100.5 FOLLOWING)",
    "sum(id) OVER (ORDER BY i RANGE BETWEEN 1e30 PRECEDING AND 2e9 PRECEDING)",
    "sum(id) OVER (ORDER BY i RANGE BETWEEN 'inf'::DOUBLE PRECEDING AND CURRENT ROW)",
    "sum(id) OVER (ORDER BY u RANGE BETWEEN 300 PRECEDING AND 1 FOLLOWING)",
    "sum(id) OVER (ORDER BY u DESC RANGE BETWEEN 300 FOLLOWING AND 4000000000 FOLLOWING)",
]
SPECIAL_ERRORS = [
    "sum(id) OVER (ORDER BY f RANGE BETWEEN 'inf'::DOUBLE PRECEDING AND CURRENT ROW)",  # inf-inf
    "sum(id) OVER (ORDER BY f RANGE BETWEEN 'nan'::DOUBLE PRECEDING AND CURRENT ROW)",
    "sum(id) OVER (ORDER BY i RANGE BETWEEN -1 PRECEDING AND CURRENT ROW)",
    "sum(id) OVER (ORDER BY u RANGE BETWEEN 2 PRECEDING AND CURRENT ROW)",  # 1 - 2 in UTINYINT
    "sum(id) OVER (ORDER BY u RANGE BETWEEN CURRENT ROW AND 6 FOLLOWING)",  # 250 + 6
    "sum(id) OVER (ORDER BY u DESC RANGE BETWEEN 1 FOLLOWING AND 3 FOLLOWING)",  # 0 - 1
    "sum(id) OVER (ORDER BY i RANGE BETWEEN CURRENT ROW AND 2 FOLLOWING)",  # INTEGER overflow
    "sum(id) OVER (ORDER BY b DESC RANGE BETWEEN 1 PRECEDING AND CURRENT ROW)",
    "rank() OVER (ORDER BY u, id RANGE BETWEEN 1 PRECEDING AND CURRENT ROW)",
    "sum(id) OVER (ORDER BY f RANGE BETWEEN NULL PRECEDING AND CURRENT ROW)",
]


def _engines(table: pa.Table):
    """tdbsql and DuckDB, each with ``table`` registered as ``t``."""
    con = tdbsql.connect()
    con.register_arrow("t", table)
    oracle = duckdb.connect()
    oracle.register("t", table)
    return con, oracle


@pytest.mark.parametrize("window", SPECIAL_CASES)
def test_range_offsets_on_special_values_equal_duckdb(window):
    sql = f"SELECT id, {window} AS w FROM t ORDER BY id"
    con, oracle = _engines(SPECIAL)
    assert _rows(con.sql(sql).arrow()) == [tuple(_normal(v) for v in row)
                                           for row in oracle.sql(sql).fetchall()]


@pytest.mark.parametrize("window", SPECIAL_ERRORS)
def test_range_offsets_duckdb_rejects_are_sql_errors(window):
    sql = f"SELECT id, {window} AS w FROM t ORDER BY id"
    con, oracle = _engines(SPECIAL)
    with pytest.raises(duckdb.Error):
        oracle.sql(sql).fetchall()
    with pytest.raises(tdbsql.SqlError):
        con.sql(sql).fetchall()


def test_range_bounds_kernel_equals_a_plain_search():
    keys = np.array([1.0, 2.0, 2.0, 5.0, math.inf, math.nan, math.nan])
    n = len(keys)
    lo, hi = np.zeros(n, np.int64), np.full(n, n, np.int64)
    for descending in (False, True):
        ordered = keys[::-1].copy() if descending else keys
        for inclusive in (False, True):
            for target in (0.0, 2.0, 3.0, math.inf, math.nan):
                targets = np.full(n, target)
                out = np.empty(n, np.int64)
                kernels.range_bounds(ordered, targets, lo, hi, descending, inclusive, out)

                def rank(v):  # NaN above every number
                    return (1, 0.0) if math.isnan(v) else (0, v)

                def before(k):
                    a, b = rank(k), rank(target)
                    if descending:
                        a, b = b, a
                    return a < b or (inclusive and a == b)
                want = next((p for p in range(n) if not before(ordered[p])), n)
                assert (out == want).all(), (descending, inclusive, target)


def test_calls_over_one_window_share_its_layout(monkeypatch):
    """rank/row_number/sum over the same PARTITION BY and ORDER BY sort the rows once; a call
    over another window sorts again."""
    from tdbsql.engine import window_functions

    built = []
    original = window_functions.Layout.of.__func__

    def counting(cls, ev, node):
        built.append(node.sql())
        return original(cls, ev, node)

    monkeypatch.setattr(window_functions.Layout, "of", classmethod(counting))
    table = pa.table({"g": [1, 1, 2, 2, 2], "x": [3.0, 1.0, 2.0, 2.0, None]})
    con, oracle = _engines(table)
    sql = ("SELECT g, x, rank() OVER w AS r, row_number() OVER w AS rn, sum(x) OVER w AS s, "
           "count(*) OVER (ORDER BY x) AS c FROM t WINDOW w AS (PARTITION BY g ORDER BY x) "
           "ORDER BY g, x NULLS LAST")
    assert con.sql(sql).fetchall() == oracle.sql(sql).fetchall()
    assert len(built) == 2
    assert not window_functions._LAYOUTS  # freed with the step's rows


def test_array_agg_first_and_any_value_follow_window_order():
    table = pa.table({"k": [1, 1, 2, 2, 2], "v": [None, 5, 3, None, 7],
                      "s": [None, "b", None, "c", "d"]})
    con, oracle = _engines(table)
    whole = "ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING"
    sql = (f"SELECT k, v, array_agg(v) OVER (PARTITION BY k ORDER BY v DESC {whole}), "
           f"first(s) OVER (PARTITION BY k ORDER BY v {whole}), "
           f"any_value(s) OVER (PARTITION BY k ORDER BY v {whole}) FROM t ORDER BY k, v")
    assert con.sql(sql).fetchall() == oracle.sql(sql).fetchall()


LIST_TABLE = pa.table({
    "k": pa.array([1, 1, 1, 1, 2, 2, None], pa.int64()),
    "o": pa.array([4, 1, 3, 2, 1, 2, 1], pa.int64()),
    "v": pa.array([None, 5, 3, None, 7, 1, 2], pa.int32()),
    "f": pa.array([0.5, None, 1.0, -2.0, 3.25, None, 1e20]),
    "s": pa.array([None, "b", "Ä", "", "d", None, "x"]),
    "d": pa.array([dt.date(2024, 1, i) if i else None for i in (1, 2, None, 4, 5, 6, 7)]),
    "b": pa.array([True, None, False, True, None, False, True]),
})


@pytest.mark.parametrize("call", [
    "array_agg(v)", "list(s)", "array_agg(f)", "array_agg(d)", "array_agg(b)",
    "array_agg(v) FILTER (WHERE v > 2)", "list(s) FILTER (WHERE b)",
    "string_agg(f, ';')", "string_agg(d)", "listagg(b, ' ')", "group_concat(v)",
    "string_agg(s, '') FILTER (WHERE o > 1)", "array_agg(v ORDER BY f DESC NULLS FIRST)",
    "list(s ORDER BY s)", "string_agg(s, ',' ORDER BY d NULLS LAST)",
    "array_agg(v ORDER BY b, o) FILTER (WHERE o < 4)"])
@pytest.mark.parametrize("frame", [
    "ROWS BETWEEN 2 PRECEDING AND CURRENT ROW", "ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING",
    "ROWS BETWEEN 2 FOLLOWING AND 3 FOLLOWING", "ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING",
    "RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING", "GROUPS BETWEEN CURRENT ROW AND 1 FOLLOWING", ""])
def test_lists_and_texts_over_moving_frames_equal_duckdb(call, frame):
    """array_agg / string_agg over moving frames: NULL values kept in lists and skipped in
    texts, FILTER's rejected rows left out, an empty frame NULL, an ORDER BY in the call
    ordering each frame's values; results and types as DuckDB's (a list of the value's type,
    VARCHAR)."""
    sql = f"SELECT k, o, {call} OVER (PARTITION BY k ORDER BY o DESC {frame}) AS w FROM t " \
          "ORDER BY k, o"
    con, oracle = _engines(LIST_TABLE)
    got = con.sql(sql).arrow()
    want = oracle.sql(sql).arrow()
    want = want.read_all() if hasattr(want, "read_all") else want
    assert got.column("w").to_pylist() == want.column("w").to_pylist()
    got_type, want_type = got.schema.field("w").type, want.schema.field("w").type
    if pa.types.is_list(want_type):  # DuckDB names the list's field "l", Arrow "item"
        got_type, want_type = got_type.value_type, want_type.value_type
    assert got_type == want_type


@pytest.mark.parametrize("call", [
    "count(DISTINCT v)", "count(DISTINCT s)", "sum(DISTINCT v)", "avg(DISTINCT v)",
    "sum(DISTINCT f)", "array_agg(DISTINCT b)", "list(DISTINCT s) FILTER (WHERE o > 1)",
    "string_agg(DISTINCT s, '|')", "count(DISTINCT d) FILTER (WHERE b)"])
@pytest.mark.parametrize("frame", [
    "ROWS BETWEEN 2 PRECEDING AND CURRENT ROW", "ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING",
    "ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING",
    "ROWS BETWEEN 2 PRECEDING AND 1 FOLLOWING EXCLUDE CURRENT ROW",
    "RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING", ""])
def test_distinct_over_moving_frames_equals_duckdb(call, frame):
    """count / sum / avg / array_agg / string_agg (DISTINCT ...) over moving frames: each
    value once (its first row in window order; array_agg keeps one NULL, the others skip
    NULLs), FILTER and EXCLUDE applied first, as DuckDB."""
    sql = f"SELECT k, o, {call} OVER (PARTITION BY k ORDER BY o DESC {frame}) AS w FROM t " \
          "ORDER BY k, o"
    con, oracle = _engines(LIST_TABLE)
    want = oracle.sql(sql).arrow()
    want = want.read_all() if hasattr(want, "read_all") else want
    assert con.sql(sql).arrow().column("w").to_pylist() == want.column("w").to_pylist()


@pytest.mark.parametrize("call", [
    "median(v)", "quantile_cont(f, 0.25)", "quantile_disc(v, 0.5)", "mode(s)",
    "stddev_samp(f)", "var_pop(v)", "bool_and(b)", "count_if(b)", "arg_max(s, v)",
    "corr(v, f)", "any_value(s)", "median(DISTINCT v)", "median(v) FILTER (WHERE o > 1)",
    "product(v)", "quantile_cont(v, [0.25, 0.75])", "median(d)", "entropy(v)", "bit_or(v)",
    "string_agg(DISTINCT s ORDER BY s)", "list(DISTINCT v ORDER BY v DESC)"])
@pytest.mark.parametrize("frame", [
    "ROWS BETWEEN 2 PRECEDING AND CURRENT ROW", "ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING",
    "ROWS BETWEEN 2 PRECEDING AND 1 FOLLOWING EXCLUDE CURRENT ROW",
    "RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING",
    "GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW EXCLUDE TIES"])
def test_every_aggregate_over_moving_frames_equals_duckdb(call, frame):
    """Aggregates beyond count / sum / avg / min / max / array_agg / string_agg over moving
    frames: each row's frame rows (FILTER's, in window order or the call's ORDER BY) are a
    group of their own; empty frames as DuckDB (count_if NULL, entropy 0)."""
    sql = f"SELECT k, o, {call} OVER (PARTITION BY k ORDER BY o DESC {frame}) AS w FROM t " \
          "ORDER BY k, o"
    con, oracle = _engines(LIST_TABLE)
    want = oracle.sql(sql).fetchall()
    got = con.sql(sql).fetchall()
    assert len(got) == len(want)
    for (_, _, a), (_, _, b) in zip(got, want):
        if isinstance(a, float) and isinstance(b, float):
            assert a == pytest.approx(b, rel=1e-9, nan_ok=True)
        else:
            assert a == b


def test_frame_lists_are_checked_against_the_memory_budget():
    """A running array_agg over n rows holds n(n+1)/2 values: past the budget it is refused
    before it is built."""
    table = pa.table({"i": pa.array(range(4000), pa.int64()), "s": ["some text"] * 4000})
    con = tdbsql.connect(memory_mb=20)
    con.register_arrow("t", table)
    for call in ("array_agg(i)", "string_agg(s)"):
        with pytest.raises(tdbsql.MemoryLimitError, match=rf"window function {call[:-3]}"):
            con.sql(f"SELECT {call} OVER (ORDER BY i) FROM t").fetchall()
    moving = con.sql("SELECT len(string_agg(s) OVER (ORDER BY i ROWS 2 PRECEDING)) FROM t "
                     "ORDER BY i DESC LIMIT 1").fetchall()
    assert moving == [(29,)]


def test_frame_outputs_past_arrow_offsets_are_refused(monkeypatch):
    """One result column holds at most 2**31 - 1 list values or text bytes (Arrow's 32-bit
    offsets): more is refused by name, not overflowed."""
    from tdbsql.engine import window_lists

    monkeypatch.setattr(window_lists, "_OFFSET_LIMIT", 10)
    con, _ = _engines(LIST_TABLE)
    for call in ("array_agg(v)", "string_agg(s)"):
        with pytest.raises(tdbsql.UnsupportedSql, match="more than the 10 an Arrow column"):
            con.sql(f"SELECT {call} OVER (ORDER BY o ROWS 3 PRECEDING) FROM t").fetchall()
