"""Every aggregate tdbsql has, as a window function over the frame kinds it reads, against
DuckDB: a whole ordered partition, the running default frame, a moving ROWS frame (with and
without FILTER), frames empty at the start, RANGE and GROUPS frames with EXCLUDE; and the
navigation and ranking functions with an ORDER BY of their own.

Over ``dx`` (tests/sql_fixtures.py: NaN, +-inf, -0.0, NULLs, ties).  The window orders end
with the unique ``id`` wherever the aggregate depends on the order of its rows, so every
query has one right answer; both engines refusing a call passes (``differential_check``).
"""

from __future__ import annotations

import pytest

import sqllogic
from sql_fixtures import sql_arrays

__all__ = ["sql_arrays"]  # the session fixture, used by name

CALLS = [
    "count(*)", "sum(v)", "sum(f)", "avg(r)", "min(s)", "max(d)", "max(f)", "any_value(s)",
    "approx_count_distinct(g)", "arg_max(s, v)", "min_by(s, ts)", "array_agg(v)",
    "bit_xor(v)", "bool_and(f > 0)", "corr(f, v)", "covar_samp(v, g)", "count_if(v > 0)",
    "entropy(v)", "favg(f)", "first(v)", "last(s)", "kahan_sum(r)", "geomean(r)",
    "histogram(s)", "kurtosis(f)", "median(d)", "mode(g)", "quantile_cont(f, 0.25)",
    "quantile_disc(v, [0.1, 0.9])", "product(v)", "regr_slope(f, v)", "skewness(f)",
    "stddev(v)", "string_agg(s, '|')", "listagg(s ORDER BY ts DESC, id)",
    "mode(v ORDER BY id DESC)", "first(s ORDER BY f, id)",
]
FRAMES = [
    "PARTITION BY g ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING",
    "PARTITION BY g ORDER BY id",
    "ORDER BY id ROWS BETWEEN 2 PRECEDING AND 1 FOLLOWING",
    "PARTITION BY g ORDER BY id ROWS BETWEEN 3 PRECEDING AND 1 PRECEDING",
    "ORDER BY v RANGE BETWEEN 2 PRECEDING AND 2 FOLLOWING EXCLUDE CURRENT ROW",
    "ORDER BY g GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW EXCLUDE GROUP",
]
# these read their rows in window order: over RANGE / GROUPS frames the order of peers is
# DuckDB's own, so those frames only with an ORDER BY of the call's
_ORDER_SENSITIVE = ("any_value(", "arg_max(", "min_by(", "array_agg(", "string_agg(",
                    "first(v)", "last(", "mode(g)", "favg(", "kahan_sum(", "sum(f)", "avg(r)")


def _queries():
    for call in CALLS:
        for frame in FRAMES:
            if frame.split()[3] in ("RANGE", "GROUPS") and call.startswith(_ORDER_SENSITIVE):
                continue
            yield f"SELECT id, {call} OVER ({frame}) FROM dx"
        yield f"SELECT id, {call} FILTER (WHERE id % 3 <> 0) OVER ({FRAMES[2]}) FROM dx"


# navigation and ranking functions with an ORDER BY of their own (unique keys: DuckDB orders
# rows equal on them its own way), over frames holding the row and frames leaving it out
ORDERED_CALLS = [
    "first_value(s ORDER BY f DESC, id)", "last_value(v ORDER BY d, id IGNORE NULLS)",
    "nth_value(f, 2 ORDER BY ts, id)", "lead(s, 1, '-' ORDER BY r, id)",
    "lag(v, 2 ORDER BY id DESC IGNORE NULLS)", "row_number(ORDER BY s, id)",
    "rank(ORDER BY g)", "cume_dist(ORDER BY f)", "percent_rank(ORDER BY d DESC)",
    "ntile(3 ORDER BY ts DESC, id)",
]
ORDERED_FRAMES = [
    "PARTITION BY g", "PARTITION BY g ORDER BY id",
    "ORDER BY v, id ROWS BETWEEN 2 PRECEDING AND 2 FOLLOWING",
    "ORDER BY id ROWS BETWEEN 1 FOLLOWING AND 3 FOLLOWING",
]


def _ordered_queries():
    for call in ORDERED_CALLS:
        for frame in ORDERED_FRAMES:
            yield f"SELECT id, {call} OVER ({frame}) FROM dx"


@pytest.fixture(scope="module")
def engines(sql_arrays):
    return sqllogic.differential_engines(sql_arrays, "dx")


@pytest.mark.parametrize("query", list(_queries()))
def test_aggregate_over_window(engines, query):
    sqllogic.differential_check(engines, query, False)


@pytest.mark.parametrize("query", list(_ordered_queries()))
def test_ordered_navigation_and_ranking(engines, query):
    sqllogic.differential_check(engines, query, False)
