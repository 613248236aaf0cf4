"""ASOF JOIN (``engine.asof_join``) against DuckDB on random tables: NULL keys and times,
every inequality, inner, LEFT, RIGHT and FULL, a key (``=`` or ``IS NOT DISTINCT FROM``), none
or USING, conditions on either side in ON (inner and LEFT: DuckDB refuses them beside RIGHT and
FULL) and WHERE.  The right rows' times are distinct, so each left row's nearest match is one
row (of ties, DuckDB's pick is not defined)."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sql_fixtures import arrow_engines

keys = st.none() | st.integers(0, 3)
times = st.none() | st.integers(-20, 20)
left_rows = st.lists(st.tuples(keys, times), max_size=40)
right_rows = st.lists(st.tuples(keys, times), max_size=40, unique_by=lambda row: row[1])
joins = st.sampled_from(["ASOF JOIN", "ASOF LEFT JOIN", "ASOF RIGHT JOIN", "ASOF FULL JOIN"])
keyings = st.sampled_from(["", "l.k = r.k AND ", "l.k IS NOT DISTINCT FROM r.k AND "])
conditions = st.sampled_from([
    "", " AND r.v % 2 = 0", " AND l.v % 3 <> 0", " AND r.t * 2 > -10 AND l.k IS NOT NULL"])
wheres = st.sampled_from(["", " WHERE r.v % 2 = 1", " WHERE l.v > 5", " WHERE r.v IS NULL"])


def _table(rows: list[tuple]) -> pa.Table:
    return pa.table({"k": pa.array([k for k, _ in rows], pa.int32()),
                     "t": pa.array([t for _, t in rows], pa.int64()),
                     "v": pa.array(range(len(rows)), pa.int64())})


def _same_as_duckdb(left: list, right: list, sql: str) -> None:
    ours, oracle = arrow_engines(_table(left), "l")
    right_table = _table(right)
    ours.register("r", right_table)
    oracle.register("r", right_table)
    got = sorted(ours.sql(sql).fetchall(), key=repr)
    want = sorted(oracle.sql(sql).fetchall(), key=repr)
    assert got == want, sql


@settings(max_examples=200, deadline=None, derandomize=True)
@given(left_rows, right_rows, st.sampled_from([">=", ">", "<=", "<"]), joins, keyings,
       conditions, wheres)
def test_asof_join_equals_duckdb(left, right, op, join, keying, condition, where):
    if join in ("ASOF RIGHT JOIN", "ASOF FULL JOIN"):
        condition = ""
    on = f"{keying}l.t {op} r.t{condition}"
    _same_as_duckdb(left, right, f"SELECT l.v, r.v, r.t FROM l {join} r ON {on}{where}")


@settings(max_examples=100, deadline=None, derandomize=True)
@given(left_rows, right_rows, joins, st.sampled_from(["k, t", "t"]),
       st.sampled_from(["", " WHERE t % 2 = 0", " WHERE r.v IS NULL", " WHERE l.k = 1"]))
def test_asof_join_using_equals_duckdb(left, right, join, using, where):
    """USING: its last name is ``l.t >= r.t``; ``k`` and ``t`` are the merged columns."""
    _same_as_duckdb(left, right, f"SELECT {using}, l.v, r.v FROM l {join} r USING ({using}){where}")


def _mixed_tables():
    import datetime as dt
    from decimal import Decimal as D

    left = pa.table({
        "k": [1, 1, 2, 2, 1],
        "d": [dt.date(2024, 1, 2), dt.date(2024, 1, 5), dt.date(2024, 1, 3), None,
              dt.date(2023, 1, 1)],
        "s": ["b", "d", "a", "zz", "c"], "f": [1.5, float("nan"), 2.0, -0.0, 3.0],
        "m": pa.array([D("1.10"), D("2.50"), D("0.01"), None, D("9.99")], pa.decimal128(10, 2))})
    right = pa.table({
        "k": [1, 1, 2, 2],
        "ts": [dt.datetime(2024, 1, 1, 12), dt.datetime(2024, 1, 4), dt.datetime(2024, 1, 2, 23),
               dt.datetime(2024, 1, 3)],
        "s": ["a", "c", "a", "y"], "f": [1.0, float("nan"), 0.0, 5.0],
        "m": pa.array([D("1.1"), D("2.0"), D("0.005"), D("3")], pa.decimal128(10, 3)),
        "v": [10, 20, 30, 40]})
    return left, right


@pytest.mark.parametrize("on", ["l.d >= r.ts", "l.d <= r.ts", "l.s >= r.s", "l.s > r.s",
                                "l.f >= r.f", "l.f <= r.f", "l.m >= r.m", "l.m < r.m"])
def test_asof_join_compares_in_duckdbs_type(on):
    """A DATE beside a TIMESTAMP, text, DECIMALs of two scales, floats with NaN (above every
    number) and -0.0 (equal to 0.0): the nearest row as DuckDB finds it."""
    left, right = _mixed_tables()
    ours, oracle = arrow_engines(left, "l")
    ours.register("r", right)
    oracle.register("r", right)
    sql = f"SELECT l.k, l.s, r.v FROM l ASOF LEFT JOIN r ON l.k = r.k AND {on}"
    assert sorted(ours.sql(sql).fetchall(), key=repr) == \
        sorted(oracle.sql(sql).fetchall(), key=repr)
