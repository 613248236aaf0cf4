"""group_ids + aggregate: unit tests and a hypothesis differential test against DuckDB."""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal

import duckdb
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tdbsql.engine.grouping import AGGREGATES, Groups, aggregate, group_ids
from tdbsql.errors import UnsupportedSql

# --- unit tests ----------------------------------------------------------------------------


def test_ids_dense_in_first_appearance_order_with_null_group():
    groups = group_ids([pa.array([7, None, 3, 7, None, 5])])
    assert groups.ids.tolist() == [0, 1, 2, 0, 1, 3]
    assert groups.count == 4
    assert groups.first.tolist() == [0, 1, 2, 5]


def test_multi_column_keys_strings_and_ints():
    groups = group_ids([pa.array(["a", "é", "a", None, "a"]), pa.array([1, 1, 1, 1, None])])
    assert groups.ids.tolist() == [0, 1, 0, 2, 3]


def test_null_differs_from_zero_and_empty_string():
    assert group_ids([pa.array([0, None, 0])]).ids.tolist() == [0, 1, 0]
    assert group_ids([pa.array(["", None, ""])]).ids.tolist() == [0, 1, 0]


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.one_of(st.none(), st.binary(max_size=9)), max_size=40), st.integers(0, 3))
def test_short_and_long_string_keys_group_by_value(cells, start):
    """Keys of at most 7 bytes are packed into codes, longer ones dictionary-encoded: either
    way one group per distinct value (b"a" and b"a\\0" differ), NULL its own, sliced too."""
    for arrow_type in (pa.binary(), pa.large_binary()):
        array = pa.array([b"pad"] * start + cells, arrow_type).slice(start)
        groups = group_ids([array])
        first_seen = list(dict.fromkeys(cells))
        assert groups.count == len(first_seen)
        assert [first_seen[i] for i in groups.ids] == cells


def test_float_keys_fold_negative_zero_and_nans():
    nan_other = np.frombuffer(np.array([0x7FF8000000000001], np.uint64).tobytes(), np.float64)[0]
    keys = pa.array([0.0, -0.0, float("nan"), -float("nan"), nan_other, None, 1.5])
    assert group_ids([keys]).ids.tolist() == [0, 0, 1, 1, 1, 2, 3]


def test_chunked_and_dictionary_keys():
    chunked = pa.chunked_array([pa.array(["x", "y"]), pa.array(["y", "x", "z"])])
    dictionary = pa.array(["x", "y", "y", "x", "z"]).dictionary_encode()
    assert group_ids([chunked]).ids.tolist() == [0, 1, 1, 0, 2]
    assert group_ids([dictionary]).ids.tolist() == [0, 1, 1, 0, 2]
    two_dictionaries = pa.chunked_array([pa.array(["x", "y"]).dictionary_encode(),
                                         pa.array(["y", "z"]).dictionary_encode()])
    assert group_ids([two_dictionaries]).ids.tolist() == [0, 1, 1, 2]
    assert aggregate("max", two_dictionaries, Groups.single(4)).to_pylist() == ["z"]


def test_temporal_and_bool_keys():
    dates = pa.array([dt.date(2020, 1, 1), None, dt.date(2020, 1, 1)], pa.date32())
    stamps = pa.array([1, 1, 2], pa.timestamp("ns"))
    flags = pa.array([True, False, None])
    assert group_ids([dates, stamps]).ids.tolist() == [0, 1, 2]
    assert group_ids([flags]).ids.tolist() == [0, 1, 2]


def test_values_under_nulls_and_sliced_arrays_are_ignored():
    """Values are read from the Arrow buffers: whatever a NULL slot holds must not matter,
    and a slice's offset (also within a bitmap byte) must be honoured."""
    mask = np.array([False, True, True, False, True, False])
    ints = pa.array(np.array([5, 7, 9, 5, 5, 2**40]), mask=mask)
    floats = pa.array(np.array([0.5, 1.0, np.nan, 0.5, 0.5, 3.0]), mask=mask)
    flags = pa.array([True, None, None, True, None, False])
    for keys in (ints, floats, flags):
        assert group_ids([keys]).ids.tolist() == [0, 1, 1, 0, 1, 2]
    groups = Groups(np.array([0, 0, 1, 1, 1, 1]), 2, np.array([0, 2]))
    assert aggregate("sum", ints, groups).to_pylist() == [5, 5 + 2**40]
    assert aggregate("max", floats, groups).to_pylist() == [0.5, 3.0]
    assert aggregate("bool_or", flags, groups).to_pylist() == [True, True]
    assert aggregate("count", ints, groups).to_pylist() == [1, 2]
    tail = slice(3, 6)
    for values in (ints, floats, flags):
        sliced = values[tail]
        assert group_ids([sliced]).ids.tolist() == [0, 1, 2]
        assert aggregate("count", sliced, Groups.single(3)).to_pylist() == [2]
    assert aggregate("min", ints[tail], Groups.single(3)).to_pylist() == [5]
    assert aggregate("bool_and", flags[tail], Groups.single(3)).to_pylist() == [False]


@pytest.mark.parametrize("spread", [1, 10**12])  # direct lookup and hashed table
def test_many_groups_grow_the_table(spread):
    rng = np.random.default_rng(1)
    keys = rng.integers(0, 20_000, 100_000) * spread
    groups = group_ids([pa.array(keys)])
    _, first_rows, inverse = np.unique(keys, return_index=True, return_inverse=True)
    order = np.argsort(first_rows)
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    assert groups.count == first_rows.size
    assert np.array_equal(groups.ids, rank[inverse])
    assert np.array_equal(groups.first, np.sort(first_rows))


def test_extreme_integer_keys_hash_correctly():
    keys = pa.array([-(2**63), 2**63 - 1, 0, -(2**63), 2**63 - 1])
    assert group_ids([keys]).ids.tolist() == [0, 1, 2, 0, 1]
    unsigned = pa.array([2**64 - 1, 0, 2**64 - 1], pa.uint64())
    assert group_ids([unsigned]).ids.tolist() == [0, 1, 0]


def test_zero_rows_single_group_gives_count_zero_and_null_sum():
    groups = Groups.single(0)
    empty = pa.array([], pa.int64())
    assert aggregate("count_star", None, groups).to_pylist() == [0]
    assert aggregate("count", empty, groups).to_pylist() == [0]
    for func in ("sum", "avg", "min", "max", "stddev_samp", "var_pop"):
        assert aggregate(func, empty, groups).to_pylist() == [None], func


def test_zero_rows_zero_groups():
    groups = group_ids([pa.array([], pa.string())])
    assert groups.count == 0
    assert aggregate("sum", pa.array([], pa.float64()), groups).to_pylist() == []


def test_integer_sum_overflow_falls_back_to_exact_decimal():
    values = pa.array([2**62, 2**62, 2**62, -5, 1])
    groups = Groups(np.array([0, 0, 0, 1, 1]), 2, np.array([0, 3]))
    result = aggregate("sum", values, groups)
    assert result.type == pa.decimal128(38, 0)
    assert result.to_pylist() == [Decimal(3 * 2**62), Decimal(-4)]
    assert aggregate("avg", values, groups).to_pylist() == [float(2**62), -2.0]


def test_unsigned_sum_exact():
    values = pa.array([2**64 - 1, 2**64 - 1, 3], pa.uint64())
    assert aggregate("sum", values, Groups.single(3)).to_pylist() == [Decimal(2**65 + 1)]
    small = pa.array([1, 2], pa.uint64())
    assert aggregate("sum", small, Groups.single(2)).to_pylist() == [3]


def test_min_max_keep_types():
    groups = Groups.single(3)
    for array in (pa.array([3, 1, 2], pa.int16()), pa.array([1.5, -2.0, 0.0], pa.float32()),
                  pa.array([dt.date(2021, 1, 2), dt.date(2020, 5, 1), None]),
                  pa.array([5, 9, 7], pa.timestamp("ms", "UTC")),
                  pa.array(["b", "ä", "z"]), pa.array([b"\x00", b"\xff", b""]),
                  pa.array([Decimal("1.25"), Decimal("-3.50"), None], pa.decimal128(6, 2)),
                  pa.array([2**64 - 1, 1, 2], pa.uint64()), pa.array([True, False, True])):
        values = [v for v in array.to_pylist() if v is not None]
        assert aggregate("min", array, groups).type == array.type
        assert aggregate("min", array, groups).to_pylist() == [min(values)]
        assert aggregate("max", array, groups).to_pylist() == [max(values)]


def test_float_min_max_nan_is_largest():
    values = pa.array([1.0, float("nan"), -0.0])
    assert aggregate("min", values, Groups.single(3)).to_pylist() == [-0.0]
    assert math.isnan(aggregate("max", values, Groups.single(3)).to_pylist()[0])


def test_float_sum_is_compensated():
    values = pa.array([0.1] * 10 + [1e100, 1.0, -1e100])
    groups = Groups(np.array([0] * 10 + [1, 1, 1]), 2, np.array([0, 10]))
    assert aggregate("sum", values, groups).to_pylist() == [1.0, 1.0]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.floats(-1e12, 1e12)), max_size=300),
       st.booleans())
def test_float_sums_match_exact_sums_per_group(rows, many_groups):
    """Both accumulator layouts (two lanes for few groups, one for many) give each group's
    sum as exactly as math.fsum, up to a few ulps of the summed magnitudes."""
    spread = 5000 if many_groups else 1  # over 4096 groups: the one-lane layout
    ids = np.array([g * spread for g, _ in rows], np.int64)
    count = 6 * spread
    groups = Groups(ids, count, np.full(count, -1, np.int64))
    values = pa.array([v for _, v in rows], pa.float64())
    sums = aggregate("sum", values, groups).to_pylist()
    for group in range(count):
        members = [v for g, v in rows if g * spread == group]
        if not members:
            assert sums[group] is None
            continue
        scale = math.fsum(abs(v) for v in members)
        assert abs(sums[group] - math.fsum(members)) <= 1e-15 * scale + 1e-300


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(1, 80)), min_size=1, max_size=12),
       st.data())
def test_float_sums_over_long_runs_match_exact_sums(runs, data):
    """Rows in long runs of one group take sum_float_runs (few id changes): still each group's
    sum as exactly as math.fsum, NaN/inf as IEEE adds give them."""
    ids = np.concatenate([np.full(length, group, np.int64) for group, length in runs])
    values = data.draw(st.lists(st.floats(-1e12, 1e12), min_size=len(ids), max_size=len(ids)))
    groups = Groups(ids, 4, np.full(4, -1, np.int64))
    sums = aggregate("sum", pa.array(values, pa.float64()), groups).to_pylist()
    for group in range(4):
        members = [v for g, v in zip(ids.tolist(), values) if g == group]
        if not members:
            assert sums[group] is None
            continue
        scale = math.fsum(abs(v) for v in members)
        assert abs(sums[group] - math.fsum(members)) <= 1e-15 * scale + 1e-300


def test_float_sum_runs_and_lanes_agree_on_special_values():
    """NaN and infinities through the run kernel and the lane kernel: the same sums."""
    from tdbsql.engine import grouping

    values = pa.array([1.0, float("inf"), 2.0, 3.0, float("nan"), 4.0, float("-inf"), 5.0] * 40)
    ids = np.repeat(np.arange(4, dtype=np.int64), 80)
    results = []
    for runs_from in (32, 0):
        grouping._RUNS_FROM, saved = runs_from, grouping._RUNS_FROM
        try:
            groups = Groups(ids, 4, np.arange(0, 320, 80, dtype=np.int64))
            results.append(aggregate("sum", values, groups).to_pylist())
        finally:
            grouping._RUNS_FROM = saved
    assert [str(v) for v in results[0]] == [str(v) for v in results[1]]


def test_float_sum_infinities_follow_ieee():
    values = pa.array([1.0, float("inf"), float("inf"), float("-inf"), float("inf"), 3.0])
    groups = Groups(np.array([0, 0, 1, 1, 2, 2]), 3, np.array([0, 2, 4]))
    out = aggregate("sum", values, groups).to_pylist()
    assert out[0] == float("inf") and math.isnan(out[1]) and out[2] == float("inf")


def test_variance_small_groups_and_bool_aggregates():
    groups = Groups(np.array([0, 1, 1, 2]), 3, np.array([0, 1, 3]))
    values = pa.array([4.0, 1.0, 3.0, None])
    assert aggregate("stddev_samp", values, groups).to_pylist() == [None, math.sqrt(2), None]
    assert aggregate("var_pop", values, groups).to_pylist() == [0.0, 1.0, None]
    flags = pa.array([True, True, False, None])
    assert aggregate("bool_and", flags, groups).to_pylist() == [True, False, None]
    assert aggregate("bool_or", flags, groups).to_pylist() == [True, True, None]


def test_distinct_dedups_per_group():
    groups = Groups(np.array([0, 0, 0, 1, 1, 1]), 2, np.array([0, 3]))
    values = pa.array([2, 2, None, 2, 3, 3])
    assert aggregate("count", values, groups, distinct=True).to_pylist() == [1, 2]
    assert aggregate("sum", values, groups, distinct=True).to_pylist() == [2, 5]


def test_unsupported_inputs_name_the_problem():
    with pytest.raises(UnsupportedSql, match="sum"):
        aggregate("sum", pa.array(["a"]), Groups.single(1))
    with pytest.raises(UnsupportedSql, match="median"):
        aggregate("median", pa.array([1]), Groups.single(1))
    with pytest.raises(UnsupportedSql, match="union"):  # lists, structs and maps are keys
        group_ids([pa.UnionArray.from_sparse(pa.array([0], pa.int8()),
                                             [pa.array([1]), pa.array(["a"])])])


def test_structs_group_field_by_field():
    """Equal structs share a group, NULL fields equal (DuckDB), a NULL struct its own."""
    keys = pa.array([{"a": 1, "b": None}, {"a": 2, "b": "x"}, {"a": 1, "b": None}, None,
                     {"a": None, "b": None}], pa.struct([("a", pa.int64()), ("b", pa.string())]))
    assert group_ids([keys]).ids.tolist() == [0, 1, 0, 2, 3]


# --- differential test against DuckDB ------------------------------------------------------

_TEXT = st.one_of(st.none(), st.sampled_from(["", "a", "b", "ab", "é", "日本", "a\u0301", "Z",
                                              "\U0001f600", "\x7f", "ß", "a\x00b"]))
_FLOAT = st.one_of(st.none(), st.sampled_from([0.0, -0.0, 1.5, -2.25, 1e10, 0.1, float("nan"),
                                               3.0, -1e-3]))
_INT = st.one_of(st.none(), st.integers(-3, 3), st.integers(-(2**40), 2**40))
_ROWS = st.lists(st.tuples(st.integers(0, 3) | st.none(), _TEXT, _FLOAT, _INT, st.booleans()
                           | st.none()), max_size=40)
_KEY_SETS = [["k"], ["s"], ["f"], ["k", "s"], ["s", "f", "k"], ["b", "k"]]
_FUNCS = ["count", "sum", "avg", "min", "max", "stddev_samp", "stddev_pop", "var_samp",
          "var_pop"]


def _table(rows) -> pa.Table:
    columns = list(zip(*rows)) if rows else [[]] * 5
    return pa.table({"k": pa.array(columns[0], pa.int32()), "s": pa.array(columns[1], pa.string()),
                     "f": pa.array(columns[2], pa.float64()), "v": pa.array(columns[3], pa.int64()),
                     "b": pa.array(columns[4], pa.bool_())})


def _norm_key(value):
    if isinstance(value, float):
        return "NaN" if math.isnan(value) else value + 0.0
    return value


def _close(ours, theirs, scale) -> bool:
    if ours is None or theirs is None:
        return ours is None and theirs is None
    if isinstance(theirs, float) or isinstance(ours, float):
        if math.isnan(theirs) or math.isnan(ours):
            return math.isnan(theirs) and math.isnan(ours)
        if math.isinf(theirs) or math.isinf(ours):
            return ours == theirs
        return math.isclose(ours, theirs, rel_tol=1e-9, abs_tol=1e-9 * (scale or 0.0) + 1e-12)
    return ours == theirs


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=_ROWS, keys=st.sampled_from(_KEY_SETS),
       column=st.sampled_from(["v", "f", "k", "s"]), distinct=st.booleans())
def test_group_by_matches_duckdb(rows, keys, column, distinct):
    funcs = ["count", "min", "max"] if column == "s" else _FUNCS
    table = _table(rows)
    groups = group_ids([table[key] for key in keys])
    ours = {}
    for group in range(groups.count):
        key = tuple(_norm_key(table[k][int(groups.first[group])].as_py()) for k in keys)
        ours[key] = group
    assert len(ours) == groups.count
    results = {func: aggregate(func, table[column], groups, distinct=distinct).to_pylist()
               for func in funcs}
    results["count_star"] = aggregate("count_star", None, groups).to_pylist()
    results["bool_and"] = aggregate("bool_and", table["b"], groups).to_pylist()
    results["bool_or"] = aggregate("bool_or", table["b"], groups).to_pylist()
    dist = "DISTINCT " if distinct else ""
    scale = f"sum(abs({column}))" if column != "s" else "NULL"
    select = ", ".join([f"{func}({dist}{column})" for func in funcs]
                       + ["count(*)", "bool_and(b)", "bool_or(b)", scale])
    con = duckdb.connect()
    con.register("t", table)
    got = con.sql(f"SELECT {', '.join(keys)}, {select} FROM t GROUP BY ALL").fetchall()
    assert len(got) == groups.count
    names = funcs + ["count_star", "bool_and", "bool_or"]
    for row in got:
        group = ours[tuple(_norm_key(value) for value in row[:len(keys)])]
        expected = row[len(keys):]
        scale = float(expected[-1]) if expected[-1] is not None else 0.0
        for name, theirs in zip(names, expected):
            theirs = int(theirs) if isinstance(theirs, Decimal) else theirs
            mine = results[name][group]
            tol = scale * (1e3 if name.startswith(("std", "var")) else 1)
            assert _close(mine, theirs, tol), (name, keys, column, mine, theirs)


def test_every_aggregate_name_is_handled():
    groups = Groups.single(2)
    for func in AGGREGATES:
        values = pa.array([True, False]) if func.startswith("bool") else pa.array([1, 2])
        assert len(aggregate(func, None if func == "count_star" else values, groups)) == 1


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 6), max_size=60))
def test_rows_by_group_is_a_stable_sort_of_the_ids(ids):
    """kernels.group_order: the counting sort equals numpy's stable argsort, with each group's
    start in the order."""
    from tdbsql.engine.grouping import rows_by_group

    ids = np.array(ids, np.int64)
    order, starts = rows_by_group(ids, 7)
    assert order.tolist() == np.argsort(ids, kind="stable").tolist()
    assert starts.tolist() == [0] + np.cumsum(np.bincount(ids, minlength=7)).tolist()
