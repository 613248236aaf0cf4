"""count / sum / avg / min / max of the right rows a range join matches with each left row,
from running states over the sorted right rows: no pair is made.

A range join's matches of a left row (``engine.range_join.RangeMatches``) are a run of the
right rows sorted by the compared value; every run starts at the first of them (``x > y``,
``x >= y``: a prefix) or every run ends at the last (``x < y``, ``x <= y``: a suffix).  The
state of every prefix -- or every suffix -- of the sorted rows (``kernels.running``: the
count of values, their sum, minimum and maximum) answers a left row's aggregates by its run's
length: O(m) for the states and O(1) per left row after the O((n + m) log m) of sorting and
binary search, instead of a pair per match.  A 200K-row self-correlation
(``b.id < a.id``) has 20 billion pairs and 200K runs.

For an aggregate grouped by the left rows (``engine.join_aggregate``: a group per left row
with a match) over that join alone -- no other condition, no projection between them --
whose GROUP BY keys read the left rows alone and whose calls are ``count(*)`` and count /
sum / avg / min / max of an expression of the right rows (without FILTER or ORDER BY, and
DISTINCT only for min / max).  The values are the aggregate step's (``engine.grouping``):
counts, minima and maxima exact; integer sums exact, int64 (a running sum past int64 leaves
the query to the blocks); float sums compensated, each run summed from its own end of the
sorted rows -- never the difference of two sums -- as the pairs would be summed in sorted
order.  Anything else returns None: the blocks run.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from sqlglot import exp

from ..errors import UnsupportedSql
from ..kernels.running import running_float, running_int
from ..planner.conjuncts import tables_of
from .aggregate_step import aggregate_calls, call_spec, call_text, finish_aggregate, star_operands
from .frame import Frame
from .grouping import kernel_valid, restore_type
from .hash_table import float64_values, int64_values, is_integer_like
from .ordered_aggregates import has_ordered_argument
from .range_join import RangeMatches

_RUNNING = ("count_star", "count", "sum", "avg", "min", "max")


def range_aggregate(runner, step, matches, source: Frame, right: Frame) -> Frame | None:
    """The Aggregate ``step``'s frame over the pairs of ``matches`` (the join of ``source``
    and ``right``), or None when it is not of the shape above."""
    if not isinstance(matches, RangeMatches):
        return None
    calls = runner.query.derived("range aggregate calls", lambda: _calls(step), step)
    left_only = set(source.tables) - set(right.tables)
    right_only = set(right.tables) - set(source.tables)
    if calls is None or not all(tables_of(key) <= left_only for key in step.group.values()) \
            or not all(node is None or _reads_only(node, right_only)
                       for _, node in calls.values()):
        return None
    rows = np.flatnonzero(matches.counts > 0)  # the left rows with a match: a group each
    values = _call_values(runner, calls, matches, right, rows)
    if values is None:
        return None
    take = pa.array(rows)
    keys = {name: runner.column(source, key).take(take) for name, key in step.group.items()}
    return finish_aggregate(step, runner, keys, len(rows),
                            lambda call: values[call_text(runner, call)],
                            [*source.tables, *right.tables])


def _call_values(runner, calls: dict, matches: RangeMatches, right: Frame,
                 rows: np.ndarray) -> dict[str, pa.Array] | None:
    """{call's SQL: its value for each left row of ``rows``}, or None if one is not answered
    here; an argument's running states are worked out once for all its calls."""
    # a left row's run is the prefix of its length, or the suffix from its start
    slots = (matches.counts if matches.prefix else matches.start)[rows]
    states: dict[str, _Running | None] = {}
    values = {}
    for text, (func, node) in calls.items():
        if func == "count_star":
            values[text] = pa.array(matches.counts[rows], pa.int64())
            continue
        key = node.sql()
        if key not in states:
            states[key] = _running(runner.column(right, node), matches)
        value = None if states[key] is None else states[key].value(func, slots)
        if value is None:
            return None
        values[text] = value
    return values


def _reads_only(node: exp.Expression, tables: set) -> bool:
    """Does ``node`` read columns, all of ``tables``?"""
    read = tables_of(node)
    return bool(read) and read <= tables


def _calls(step) -> dict[str, tuple[str, exp.Expression | None]] | None:
    """{call's SQL: (function, its argument with the step's operands read through)} of
    every aggregate call of ``step``, or None when one is not a running aggregate."""
    if has_ordered_argument(step):
        return None
    stars = star_operands(step)
    operands = {op.alias_or_name: op.unalias() for op in step.operands}
    found = {}
    for expression in step.aggregations:
        for call in aggregate_calls(expression.unalias()):
            if isinstance(call, exp.Filter):
                return None
            try:
                func, argument, distinct = call_spec(call, stars)
            except UnsupportedSql:
                return None  # the ordinary path reports it
            if func not in _RUNNING or (distinct and func not in ("min", "max")):
                return None
            if isinstance(argument, exp.Column) and not argument.table and \
                    argument.name in operands:
                argument = operands[argument.name]
            found[call.sql()] = (func, argument)
    return found


@dataclass(frozen=True)
class _Running:
    """The running states of one argument over the sorted right rows (``kernels.running``),
    by slot: a run's length (a prefix) or start (a suffix)."""

    arrow_type: pa.DataType
    floating: bool
    counts: np.ndarray
    sums: np.ndarray | None  # None: a sum passed int64, or the type does not sum
    mins: np.ndarray
    maxs: np.ndarray

    def value(self, func: str, slots: np.ndarray) -> pa.Array | None:
        """``func``'s value for the runs at ``slots`` (None: not answered here)."""
        counts = self.counts[slots]
        if func == "count":
            return pa.array(counts, pa.int64())
        missing = counts == 0
        mask = missing if missing.any() else None
        result_type = pa.float64() if self.floating else pa.int64()
        if func in ("min", "max"):
            extremes = (self.mins if func == "min" else self.maxs)[slots]
            return restore_type(pa.array(extremes, result_type, mask=mask), self.arrow_type)
        if self.sums is None:
            return None
        sums = self.sums[slots]
        if func == "sum":
            return pa.array(sums, result_type, mask=mask)
        with np.errstate(invalid="ignore", divide="ignore"):
            means = sums / np.maximum(counts, 1)  # as ``engine.grouping``'s avg
        return pa.array(means, pa.float64(), mask=mask)


def _running(values: pa.Array, matches: RangeMatches) -> _Running | None:
    """The running states of ``values`` (one per right row) over ``matches``' sorted right
    rows -- from the last one when the runs are suffixes -- or None for a type they do not
    cover (strings, decimals, uint64, ...)."""
    kind = values.type
    floating = pa.types.is_floating(kind)
    if not (floating or is_integer_like(kind)) or pa.types.is_uint64(kind):
        return None
    size = len(matches.order) + 1
    counts = np.empty(size, np.int64)
    valid = kernel_valid(values)
    from_end = not matches.prefix
    if floating:
        sums, mins, maxs = (np.empty(size, np.float64) for _ in range(3))
        running_float(float64_values(values, copy=False), valid, matches.order, from_end,
                      counts, sums, mins, maxs)
    else:
        sums, mins, maxs = (np.empty(size, np.int64) for _ in range(3))
        overflow = running_int(int64_values(values, copy=False), valid, matches.order,
                               from_end, counts, sums, mins, maxs)
        if overflow or pa.types.is_temporal(kind):  # dates and times are not summed
            sums = None
    return _Running(kind, floating, counts, sums, mins, maxs)
