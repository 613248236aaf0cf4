"""An aggregate over an equi-join whose groups are the left rows, aggregated before the join.

TPC-H Q13 counts each customer's orders: ``customer LEFT JOIN orders ON c_custkey =
o_custkey GROUP BY c_custkey`` with ``count(o_orderkey)``.  Joined first, that is 1.5M
joined rows gathered and grouped back into 150K groups.  When every GROUP BY key is a column
of the left input and one of them is distinct and never NULL over its rows, each group is one
left row with the right rows its join key matches, so every aggregate call over right
columns is that call over the right rows of one join key value: the right rows are grouped by
their join key (1.5M orders into 100K counts), and each left row takes its key's values by
one join of unique keys.  Only the right rows of keys some left row has are aggregated (an
argument is never evaluated over a row the join drops).  A left row matching nothing takes,
in a LEFT join, the call over one row of NULLs (its argument evaluated there:
``count(x)`` 0, ``count(*)`` 1, ``sum(x)`` NULL, ``sum(coalesce(x, 0))`` 0) and is dropped
by an INNER one.  Two right keys the join takes as equal (an int64 and a double past 2**53)
would give a left row two groups: then the join runs first.  The expressions around the calls, HAVING and the projections run as usual
(``aggregate_step.finish_aggregate``).

The shape (``eager_join``): an Aggregate whose one input is a Join step of one INNER or LEFT
entry with equality keys (one or several) and no other condition, no residual condition, projections or
LIMIT; GROUP BY keys that are all columns of the left input; calls without ORDER BY whose
arguments and FILTER conditions read the right input only (DISTINCT per key too); nothing
reading a subquery.  At run
time a GROUP BY key must be distinct and never NULL over the left rows
(``groups_by_left_rows``); otherwise the join and the aggregate run the
ordinary way.  A right input deferred for the keys joined (``engine.deferred_inputs``) is
read for the left rows' keys first.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pyarrow as pa
from sqlglot import exp, planner

from ..errors import SqlError, UnsupportedSql
from ..planner.conjuncts import conjuncts, has_subquery
from .aggregate_step import aggregate_calls, call_spec, call_text, filter_of, finish_aggregate, \
    run_aggregate, star_operands
from .deferred_inputs import Deferred, run_deferred
from .frame import Frame
from .grouping import Groups, aggregate, group_ids
from .hash_join import hash_join

_DECOMPOSED = ("count", "count_star", "sum", "avg", "min", "max")


def eager_join(runner, step) -> planner.Join | None:
    """The Join step below an Aggregate ``step`` of the shape above, or None."""
    if not isinstance(step, planner.Aggregate) or len(step.dependencies) != 1 or not step.group:
        return None
    join = next(iter(step.dependencies))
    if not isinstance(join, planner.Join) or len(join.joins) != 1 or \
            len(join.dependents) != 1 or len(join.dependencies) != 2 or \
            join.limit is not math.inf or join.offset or join.projections or \
            runner.residual(join) is not None:
        return None
    (name, entry), = join.joins.items()
    if (entry.get("side") or "").upper() not in ("", "INNER", "LEFT") or \
            not entry.get("source_key") or conjuncts(entry.get("condition")) or \
            name in runner.query.scalar_subqueries or \
            has_subquery(*step.operands, *step.group.values(), *step.aggregations,
                         step.condition, *step.projections):
        return None
    left = join.source_name
    if not all(isinstance(key, exp.Column) and key.table == left
               for key in step.group.values()):
        return None
    for expression in step.aggregations:
        for call in aggregate_calls(expression.unalias()):
            try:
                argument = _right_argument(step, call, name)
            except (SqlError, UnsupportedSql):  # the ordinary way says so, as it always did
                return None
            if argument is False:
                return None
    return join


def _right_argument(step, call, right: str):
    """A call's argument over the right input (None for ``count(*)``), or False when the
    call is not one this runs: ORDER BY, not decomposed per key, or an argument or FILTER
    condition reading anything but the right input's columns."""
    agg, condition = filter_of(call)
    if condition is not None and not _reads_only(condition, right):
        return False
    func, argument, _ = call_spec(agg, star_operands(step))
    if func not in _DECOMPOSED:
        return False
    if func == "count_star":
        return None
    operands = {op.alias_or_name: op.unalias() for op in step.operands}
    if isinstance(argument, exp.Column) and not argument.table and argument.name in operands:
        argument = operands[argument.name]
    if isinstance(argument, exp.Order) or not _reads_only(argument, right):
        return False
    return argument


def _reads_only(node: exp.Expression, right: str) -> bool:
    """Does ``node`` read columns, all of the right input?"""
    columns = list(node.find_all(exp.Column))
    return bool(columns) and all(column.table == right for column in columns)


def run_eager_aggregate(runner, step: planner.Aggregate, join: planner.Join,
                        inputs: dict) -> Frame:
    """The Aggregate ``step``'s frame from its join's inputs (by step name; the right one
    maybe ``deferred_inputs.Deferred``, run here for the left rows' keys): aggregated before
    the join, or -- no GROUP BY key distinct over the left rows -- joined and aggregated."""
    (name, entry), = join.joins.items()
    left, right = inputs[join.source_name], inputs[name]
    left_keys = [runner.column(left, key) for key in entry["source_key"]]
    if isinstance(right, Deferred):
        right = inputs[name] = run_deferred(runner, right, left_keys[right.position])
    if not groups_by_left_rows(step, left, right):
        return joined_then_aggregated(runner, step, join, inputs)
    started = time.perf_counter()
    right_keys = [runner.column(right, key) for key in entry["join_key"]]
    by_key = group_ids(right_keys)
    outer = (entry.get("side") or "").upper() == "LEFT"
    first = pa.array(by_key.first)
    left_idx, key_idx = hash_join(left_keys, [key.take(first) for key in right_keys],
                                  "left" if outer else "inner")
    if len(left_idx) > 1 and bool(np.any(left_idx[1:] == left_idx[:-1])):
        # distinct right keys equal as the join compares them (an int64 and a double
        # beyond 2**53): a left row meets several groups, so join first
        return joined_then_aggregated(runner, step, join, inputs)
    matched = key_idx >= 0
    # only the right rows some left row joins are aggregated: a call's argument is not
    # evaluated over rows the join drops (a cast of one of them may fail)
    joined_keys = np.zeros(by_key.count, bool)
    joined_keys[key_idx[matched]] = True
    kept = np.flatnonzero(joined_keys[by_key.ids])
    groups = by_key if len(kept) == right.length else by_key.subset(kept)
    rows_of_keys = right if len(kept) == right.length else right.take(kept)
    # a left row matching nothing meets one row of NULLs (LEFT): its calls see that row
    nulls = right.take(pa.array([None], pa.int64()))
    rows = pa.array(np.where(matched, key_idx, by_key.count))
    single = Groups.single(1)
    values: dict[str, pa.Array] = {}

    def call_value(call) -> pa.Array:
        text = call_text(runner, call)
        if text not in values:
            argument = _right_argument(step, call, name)
            agg, condition = filter_of(call)
            func, _, distinct = call_spec(agg, star_operands(step))
            per_key = _per_group(runner, func, argument, condition, distinct, rows_of_keys,
                                 groups)
            alone = _per_group(runner, func, argument, condition, distinct, nulls, single)
            values[text] = pa.concat_arrays([per_key, alone.cast(per_key.type)]).take(rows)
        return values[text]

    taken = pa.array(left_idx)
    keys = {key_name: runner.column(left, key).take(taken)
            for key_name, key in step.group.items()}
    frame = finish_aggregate(step, runner, keys, len(left_idx), call_value,
                             [*left.tables, *right.tables])
    runner.record(join, int(matched.sum()), time.perf_counter() - started,
                  how=f"Aggregated before the join: {right.length:,} rows of {name} into "
                      f"{by_key.count:,} groups by the join key, joined to "
                      f"{left.length:,} rows of {join.source_name}")
    return frame


def _per_group(runner, func: str, argument, condition, distinct: bool, rows: Frame,
               groups: Groups) -> pa.Array:
    """One call's value per group of ``rows``: with FILTER over the rows where its condition
    is true only (every group stays, maybe without rows), with DISTINCT over distinct
    values."""
    column = None if argument is None else runner.column(rows, argument)
    if condition is not None:
        kept = np.flatnonzero(runner.mask(rows, condition))
        groups = groups.subset(kept)
        column = None if column is None else column.take(pa.array(kept))
    return aggregate(func, column, groups, distinct=distinct)


def joined_then_aggregated(runner, step, join, inputs: dict) -> Frame:
    """The ordinary way: the join's rows made, then aggregated."""
    started = time.perf_counter()
    joined = runner.join_frame(join, inputs)
    runner.record(join, joined.length, time.perf_counter() - started)
    return run_aggregate(step, joined, runner)


def groups_by_left_rows(step, source: Frame, right: Frame) -> bool:
    """Is a GROUP BY key of ``step`` a column of the left input alone whose values are
    distinct and never NULL over its rows (each group then holds one left row's pairs)?"""
    for key in step.group.values():
        if not isinstance(key, exp.Column) or key.table not in source.tables or \
                key.table in right.tables:
            continue
        table = source.tables[key.table]
        if key.name not in table.column_names:
            continue
        values = table.column(key.name)
        if values.null_count == 0 and group_ids([values]).count == source.length:
            return True
    return False
