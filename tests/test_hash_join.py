"""hash_join: unit tests and a hypothesis differential test against DuckDB."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import duckdb
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tdbsql.engine.hash_join import JOIN_KINDS, hash_join
from tdbsql.errors import UnsupportedSql


def _pairs(left_idx, right_idx):
    return list(zip(left_idx.tolist(), right_idx.tolist()))


# --- unit tests ----------------------------------------------------------------------------


def test_inner_join_order_left_rows_then_right_rows():
    left = [pa.array([2, 1, 2, None, 9])]
    right = [pa.array([2, None, 1, 2])]
    assert _pairs(*hash_join(left, right, "inner")) == [(0, 0), (0, 3), (1, 2), (2, 0), (2, 3)]


def test_values_under_null_keys_never_match():
    """A NULL slot's buffer value (here equal to a real key on the other side) is ignored."""
    left = [pa.array(np.array([3, 3, 4]), mask=np.array([False, True, False]))]
    right = [pa.array(np.array([3, 4, 4]), mask=np.array([False, False, True]))]
    assert _pairs(*hash_join(left, right, "inner")) == [(0, 0), (2, 1)]
    floats = [pa.array(np.array([3.0, 3.0]), mask=np.array([True, False]))]
    assert _pairs(*hash_join(floats, right, "inner")) == [(1, 0)]
    strings = [pa.array(["a", None, "b"])[1:]]
    assert _pairs(*hash_join(strings, [pa.array(["b", "a"])], "left")) == [(0, -1), (1, 0)]


def test_outer_joins_mark_missing_side_with_minus_one():
    left = [pa.array([1, None, 5])]
    right = [pa.array([None, 1, 7, 1])]
    assert _pairs(*hash_join(left, right, "left")) == [(0, 1), (0, 3), (1, -1), (2, -1)]
    assert _pairs(*hash_join(left, right, "right")) == [(0, 1), (0, 3), (-1, 0), (-1, 2)]
    assert _pairs(*hash_join(left, right, "full")) == [(0, 1), (0, 3), (1, -1), (2, -1),
                                                       (-1, 0), (-1, 2)]


def test_semi_and_anti_return_left_rows_only():
    left = [pa.array(["a", None, "b", "a", "ü"])]
    right = [pa.array(["a", "a", None, "ü"])]
    semi, none = hash_join(left, right, "semi")
    assert semi.tolist() == [0, 3, 4] and none is None
    anti, none = hash_join(left, right, "anti")
    assert anti.tolist() == [1, 2] and none is None


def test_multi_column_keys_null_in_any_column_never_matches():
    left = [pa.array([1, 1, 2, None]), pa.array(["x", None, "y", "x"])]
    right = [pa.array([1, 1, 2, None]), pa.array(["x", None, "y", "x"])]
    assert _pairs(*hash_join(left, right, "inner")) == [(0, 0), (2, 2)]


def test_mixed_key_types():
    assert _pairs(*hash_join([pa.array([1, 2, 3], pa.int32())],
                             [pa.array([3.0, 1.5, 1.0])], "inner")) == [(0, 2), (2, 0)]
    assert _pairs(*hash_join([pa.array(["a", "b"], pa.large_string())],
                             [pa.array(["b", "a"]).dictionary_encode()], "inner")) == [(0, 1),
                                                                                       (1, 0)]
    assert _pairs(*hash_join([pa.array([-1, 5], pa.int64())],
                             [pa.array([2**64 - 1, 5], pa.uint64())], "inner")) == [(1, 1)]
    dates = pa.array([dt.date(2020, 1, 2), dt.date(2020, 1, 3)])
    stamps = pa.array([dt.datetime(2020, 1, 3), dt.datetime(2020, 1, 2, 12)],
                      pa.timestamp("us"))
    assert _pairs(*hash_join([dates], [stamps], "inner")) == [(1, 0)]


def test_extreme_probe_codes_outside_a_direct_box():
    # the build side spans a tiny box at INT64_MIN; INT64_MAX - INT64_MIN wraps around
    left = [pa.array([2**63 - 1, -(2**63)]), pa.array(["a", "a"])]
    right = [pa.array([-(2**63), -(2**63)]), pa.array(["", "a"])]
    assert _pairs(*hash_join(left, right, "inner")) == [(1, 1)]


def test_float_keys_match_negative_zero_and_nan():
    left = [pa.array([0.0, float("nan"), None])]
    right = [pa.array([-0.0, float("nan"), None])]
    assert _pairs(*hash_join(left, right, "inner")) == [(0, 0), (1, 1)]


def test_empty_sides():
    empty = [pa.array([], pa.int64())]
    some = [pa.array([1, 2])]
    assert _pairs(*hash_join(empty, some, "full")) == [(-1, 0), (-1, 1)]
    assert _pairs(*hash_join(some, empty, "left")) == [(0, -1), (1, -1)]
    assert hash_join(some, empty, "anti")[0].tolist() == [0, 1]
    assert hash_join(empty, empty, "inner")[0].tolist() == []


def test_all_null_build_side_and_null_type():
    assert _pairs(*hash_join([pa.array([1])], [pa.nulls(2, pa.int64())], "right")) == [
        (-1, 0), (-1, 1)]
    assert _pairs(*hash_join([pa.array([1])], [pa.nulls(1)], "left")) == [(0, -1)]


@pytest.mark.parametrize("spread", [1, 10**12])  # direct lookup and hashed table
def test_large_join_against_numpy(spread):
    rng = np.random.default_rng(7)
    left = rng.integers(0, 5000, 20_000) * spread
    right = rng.integers(0, 8000, 10_000) * spread
    left_idx, right_idx = hash_join([pa.array(left)], [pa.array(right)], "inner")
    assert np.array_equal(left[left_idx], right[right_idx])
    expected = sum(int(np.count_nonzero(right == value)) for value in np.unique(left)
                   for _ in range(int(np.count_nonzero(left == value))))
    assert left_idx.size == expected
    assert np.all(np.diff(left_idx) >= 0)


def test_unsupported_key_pairs_are_named():
    with pytest.raises(UnsupportedSql, match="date32"):
        hash_join([pa.array([dt.date(2020, 1, 1)])], [pa.array([dt.time(1)])], "inner")


# --- differential test against DuckDB ------------------------------------------------------

_TEXT = st.one_of(st.none(), st.sampled_from(["", "a", "b", "é", "日本", "a\u0301"]))
_FLOAT = st.one_of(st.none(), st.sampled_from([0.0, -0.0, 1.0, 2.0, float("nan")]))
_INT = st.one_of(st.none(), st.integers(-2, 3), st.sampled_from([-(2**63), 2**63 - 1]))
_ROW = st.tuples(_INT, _TEXT, _FLOAT)
_KEY_SETS = [["i"], ["s"], ["f"], ["i", "s"], ["s", "f", "i"], [("i", "f")]]
_SQL_KIND = {"inner": "JOIN", "left": "LEFT JOIN", "right": "RIGHT JOIN", "full": "FULL JOIN",
             "semi": "SEMI JOIN", "anti": "ANTI JOIN"}


def _table(rows) -> pa.Table:
    columns = list(zip(*rows)) if rows else [[]] * 3
    return pa.table({"i": pa.array(columns[0], pa.int64()), "s": pa.array(columns[1]
                                                                           , pa.string()),
                     "f": pa.array(columns[2], pa.float64()),
                     "rid": pa.array(np.arange(len(rows)), pa.int64())})


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(left_rows=st.lists(_ROW, max_size=25), right_rows=st.lists(_ROW, max_size=25),
       keys=st.sampled_from(_KEY_SETS), how=st.sampled_from(JOIN_KINDS))
def test_joins_match_duckdb(left_rows, right_rows, keys, how):
    left, right = _table(left_rows), _table(right_rows)
    pairs = [key if isinstance(key, tuple) else (key, key) for key in keys]
    left_idx, right_idx = hash_join([left[lk] for lk, _ in pairs], [right[rk] for _, rk in pairs],
                                    how)
    con = duckdb.connect()
    con.register("l", left)
    con.register("r", right)
    on = " AND ".join(f"l.{lk} = r.{rk}" for lk, rk in pairs)
    if how in ("semi", "anti"):
        got = con.sql(f"SELECT l.rid FROM l {_SQL_KIND[how]} r ON {on}").fetchall()
        assert right_idx is None
        assert left_idx.tolist() == sorted(row[0] for row in got)
        return
    got = con.sql(f"SELECT l.rid, r.rid FROM l {_SQL_KIND[how]} r ON {on}").fetchall()
    expected = sorted((-1 if a is None else a, -1 if b is None else b) for a, b in got)
    ours = _pairs(left_idx, right_idx)
    assert sorted(ours) == expected
    _check_order(ours)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(left_rows=st.lists(_ROW, max_size=25),
       right_rows=st.lists(_ROW, max_size=25, unique_by=lambda row: row[0]),
       how=st.sampled_from(JOIN_KINDS))
def test_joins_on_unique_build_keys_match_duckdb(left_rows, right_rows, how):
    """A build side whose every row is a group of its own (a dimension's keys) pairs each
    probe row with its one row directly (``kernels.join.unique_join_fill``)."""
    test_joins_match_duckdb.hypothesis.inner_test(left_rows, right_rows, ["i"], how)


def _check_order(pairs):
    """Left-driven pairs in (left, right) order first, then unmatched right rows in order."""
    driven = [pair for pair in pairs if pair[0] >= 0]
    lonely = [pair for pair in pairs if pair[0] < 0]
    assert pairs == driven + lonely
    assert driven == sorted(driven, key=lambda pair: (pair[0],))
    for index in range(1, len(driven)):
        if driven[index][0] == driven[index - 1][0]:
            assert driven[index][1] > driven[index - 1][1]
    assert lonely == sorted(lonely)


# --- a build side kept for batch after batch (engine/build_side.py) -------------------------

_KEY_TYPES = {
    "int64": (pa.int64(), st.integers(-5, 30)),
    "int32 beside int64": (pa.int32(), st.integers(-5, 30)),
    "int64 beside double": (pa.int64(), st.integers(-5, 30)),
    "uint64": (pa.uint64(), st.integers(0, 30) | st.just(2**64 - 3)),
    "double": (pa.float64(), st.sampled_from([0.0, -0.0, 1.5, 2.0, float("nan"), 7.0])),
    "text": (pa.string(), st.sampled_from(["a", "bb", "", "a longer key text", "z"])),
    "decimal": (pa.decimal128(6, 2), st.sampled_from([0, 1, 2, 15]).map(
        lambda v: Decimal(v) / 4)),
    "date": (pa.date32(), st.dates(dt.date(2020, 1, 1), dt.date(2020, 1, 9))),
}
_RIGHT_TYPES = {"int32 beside int64": pa.int64(), "int64 beside double": pa.float64(),
                "uint64": pa.int64()}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.lists(st.sampled_from(sorted(_KEY_TYPES)), min_size=1, max_size=2),
       st.integers(0, 40), st.lists(st.integers(0, 30), min_size=1, max_size=4))
def test_a_kept_build_side_matches_hash_join_batch_by_batch(data, kinds, right_rows, batches):
    """Every probe batch is matched as ``hash_join`` matches it, the build side coded once
    (text and DECIMALs through its dictionary, several keys packed into one box)."""
    from tdbsql.engine.build_side import BuildSide

    def keys(rows: int, side: str) -> list[pa.Array]:
        columns = []
        for kind in kinds:
            arrow_type, values = _KEY_TYPES[kind]
            if side == "right":
                arrow_type = _RIGHT_TYPES.get(kind, arrow_type)
            drawn = data.draw(st.lists(st.none() | values, min_size=rows, max_size=rows))
            if pa.types.is_int64(arrow_type) and kind == "uint64":
                drawn = [None if v is None or v >= 2**63 else v for v in drawn]
            columns.append(pa.array(drawn, arrow_type))
        return columns

    right = keys(right_rows, "right")
    built = BuildSide(right, probes=100)
    for rows in batches:
        left = keys(rows, "left")
        want = hash_join(left, right, "inner")
        got = built.pairs(left, None)
        assert _pairs(*got) == _pairs(*want)
    if right_rows:
        assert built.built is not None  # coded once, on the first batch
