"""Aggregation in two phases, for rows that arrive batch by batch (a streamed scan).

``partial(step, frame, runner)`` groups one batch and keeps, per group, the batch's key values
and a small *state* per aggregate call.  ``combine(step, partials, runner, names)`` regroups
the partial rows of all batches by key (first-appearance order; many rows partition by
partition of the key range, ``engine.key_partitions``) and folds the states:

=====================  ========================================  ===============================
function               state per group                           folded by
=====================  ========================================  ===============================
count(*), count(x)     the count                                 sum of counts
count_if(p)            the count of true (NULL: only NULLs)      sum of counts
sum(x)                 the sum (NULL without values)             sum of sums
avg(x)                 sum, count                                sum of sums / sum of counts
min, max, bool_and/or  the batch's min / max                     min / max of those
first                  the batch's first value                   the first batch's
any_value              the batch's first non-NULL value          the first non-NULL of those
var/stddev (samp/pop)  count, mean, squared deviations (Welford)  Chan's parallel update
string_agg             the batch's values joined (NULL: none)    joined again, in batch order
skewness, kurtosis     count and sums of x .. x^4                sums
corr, covar, regr_*    count, means, co-moment, squared          Chan's parallel update
                       deviations, sums of x and y
product, bit_*, last,  ``engine.folds``' states                  ``engine.folds.fold_states``
arg_max, kahan_sum ...
=====================  ========================================  ===============================

The holistic functions (median, quantiles, mode, entropy, approx_count_distinct) need all of a
group's values at once: a step with one runs the ordinary way, over all its rows.

Calls with DISTINCT or an ORDER BY of their own (``engine.ordered_aggregates``), array_agg
and anything else without such a state make the step run the ordinary way (``streamable``).  Result types are those of ``engine.grouping``: an integer
sum too large for int64 is exact (decimal128(38, 0)), otherwise int64.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from ..errors import UnsupportedSql
from . import folds, statistics
from .aggregate_step import (
    Grouped, aggregate_calls, call_spec, call_text, filter_of, finish_aggregate, group_value,
    star_operands,
)
from .frame import Frame, unified_type
from .grouping import (
    Groups, aggregate, distinct_pairs, exact_integers, group_ids, rows_by_group, variance_result,
    variance_state,
)
from .hash_table import as_array
from .key_partitions import KeyPartitions, key_partitions
from .ordered_aggregates import has_ordered_argument
from .string_agg import joined_per_group, separator_value

_FOLDABLE = ("count_star", "count", "count_if", "first", "any_value", "sum", "avg", "min", "max",
             "bool_and", "bool_or", "stddev_samp", "stddev_pop", "var_samp", "var_pop",
             "string_agg", *folds.FOLDS, *statistics.MOMENTS, *statistics.PAIRS)


# DISTINCT calls whose state is each group's distinct values (``_distinct_state``); min and
# max over distinct values are min and max
_DISTINCT_FOLDABLE = ("count", "sum", "avg")
_EXTREMES = ("min", "max")
_DISTINCT = "distinct "  # a DISTINCT call's state names its function so


def streamable(step, distinct: bool = False) -> bool:
    """Can every aggregate call of ``step`` be computed from per-batch states (with
    ``distinct``, calls with DISTINCT too: see ``_distinct_state``)?"""
    stars = star_operands(step)
    if has_ordered_argument(step):
        return False
    try:
        specs = [call_spec(filter_of(call)[0], stars) for expression in step.aggregations
                 for call in aggregate_calls(expression.unalias())]
    except UnsupportedSql:
        return False  # the ordinary path reports it
    return all(func in _FOLDABLE and (not unique or func in _EXTREMES or
                                      distinct and func in _DISTINCT_FOLDABLE)
               for func, _, unique in specs)


@dataclass(frozen=True)
class Partial:
    """One batch's groups: key values and, per call (by its SQL text), its state arrays.
    ``grouped``: a row per group (a batch's); False when rows may share a key (tiles
    answered from metadata, ``engine.metadata_groups``: a row per tile)."""

    keys: dict[str, pa.Array]
    states: dict[str, tuple[str, pa.DataType | None, list]]  # func, argument type, arrays
    count: int
    grouped: bool = True

    @property
    def nbytes(self) -> int:
        """Bytes of the buffers held, whole, as ``memory.frame_bytes`` counts them (Arrow's
        ``nbytes`` walks a slice's offsets: 2 us a call, 1-2 ms of Q1's 25)."""
        return sum(key.get_total_buffer_size() for key in self.keys.values()) + sum(
            array.get_total_buffer_size() for _, _, arrays in self.states.values()
            for array in arrays)


def step_calls(step) -> dict[str, exp.AggFunc]:
    """The distinct aggregate calls of ``step`` by their SQL text."""
    return {call.sql(): call for expression in step.aggregations
            for call in aggregate_calls(expression.unalias())}


def partial(step, calls: dict, frame: Frame, runner) -> Partial | None:
    """The states of one batch (``calls``: ``step_calls(step)``), or None for a batch without
    rows (it adds nothing)."""
    if frame.length == 0:
        return None
    grouped = Grouped(step, frame, runner)
    memo: dict = {}
    states = {text: _state(call, grouped, memo) for text, call in calls.items()}
    return Partial(grouped.keys, states, grouped.groups.count)


def _state(call, grouped: Grouped, memo: dict) -> tuple[str, pa.DataType | None, list]:
    """The call's state arrays; ``memo`` shares a per-group reduction between calls of one
    batch (``sum(x)`` and ``avg(x)`` both need the sums of ``x``; not across FILTERs)."""
    inputs = grouped.inputs_of(call)
    func, values, groups = inputs.func, inputs.values, inputs.groups
    if inputs.distinct and func in _DISTINCT_FOLDABLE:
        return _DISTINCT + func, values.type, [_distinct_state(values, groups)]
    if func == "count_star":
        return func, None, [aggregate("count_star", None, groups)]

    def reduced(name: str) -> pa.Array:
        key = (name, _argument_key(inputs.argument), inputs.filter_key)
        if key not in memo:
            memo[key] = aggregate(name, values, groups)
        return memo[key]

    if func == "avg":
        arrays = [reduced("sum"), reduced("count")]
    elif func in ("sum", "count"):
        arrays = [reduced(func)]
    elif func.startswith(("var", "stddev")):
        arrays = [pa.array(a) for a in variance_state(func, values, groups)]
    elif func in folds.FOLDS:
        arrays = folds.state(func, values, groups, inputs.other)
    elif func in statistics.MOMENTS or func in statistics.PAIRS:
        arrays = [pa.array(a) for a in statistics.state(func, values, groups, inputs.other)]
    else:  # the batch's own value is the state (min, max, first, string_agg, ...)
        arrays = [group_value(func, values, groups, separator=inputs.separator)]
    return func, values.type, arrays


def _distinct_state(values: pa.Array, groups: Groups) -> pa.Array:
    """A DISTINCT call's state: each group's distinct non-NULL values, as a list (text and
    bytes as their large types, dictionaries decoded: one list type for every batch)."""
    values = as_array(values)
    if pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    if pa.types.is_string(values.type) or pa.types.is_binary(values.type):
        values = values.cast(pa.large_binary() if pa.types.is_binary(values.type)
                             else pa.large_string())
    kept = np.flatnonzero(values.is_valid().to_numpy(zero_copy_only=False))
    values, groups = distinct_pairs(values.take(pa.array(kept)), groups.subset(kept))
    order, offsets = rows_by_group(groups.ids, groups.count)
    return pa.LargeListArray.from_arrays(pa.array(offsets), values.take(pa.array(order)))


def _distinct_fold(func: str, lists: pa.Array, groups: Groups) -> pa.Array:
    """A DISTINCT call's value per group from the batches' lists of distinct values."""
    parents = pc.list_parent_indices(lists).to_numpy(zero_copy_only=False)
    return aggregate(func, pc.list_flatten(lists), groups.subset(parents), distinct=True)


def _argument_key(argument: exp.Expression):
    """Equal keys for arguments with equal values: a column by its name, anything else by
    identity (the planner names a repeated expression once, as an operand column)."""
    if isinstance(argument, exp.Column):
        return argument.table, argument.name
    return id(argument)


def combine(step, partials: list[Partial], runner, input_names) -> Frame:
    """The step's output from the states of every batch (at least one).  Many partial rows
    are regrouped partition by partition of their key range, on the pool
    (``engine.key_partitions``)."""
    keys = {name: concat_arrays([p.keys[name] for p in partials]) for name in step.group}
    rows = sum(p.count for p in partials)
    if keys and len(partials) == 1 and partials[0].grouped:  # its rows are its groups
        order = np.arange(rows, dtype=np.int64)
        parts = KeyPartitions([order], [Groups(order, rows, order)])
    else:
        parts = key_partitions(list(keys.values()), rows) if keys else None
        if parts is None:
            groups = group_ids(list(keys.values())) if keys else Groups.single(rows)
            parts = KeyPartitions([np.arange(rows, dtype=np.int64)], [groups])
    finals: dict[str, pa.Array] = {}

    def call_value(call) -> pa.Array:
        text = call_text(runner, call)
        if text not in finals:
            func, arg_type, _ = partials[0].states[text]
            columns = [concat_arrays([p.states[text][2][i] for p in partials])
                       for i in range(len(partials[0].states[text][2]))]
            separator = separator_value(filter_of(call)[0], _operands(step), runner.sql) \
                if func == "string_agg" else None

            def fold(states: list[pa.Array], groups: Groups) -> pa.Array:
                if func == "string_agg":
                    return joined_per_group(states[0], groups, separator)
                return _fold(func, arg_type, states, groups)

            finals[text] = _whole(parts, fold, columns)
        return finals[text]

    first = pa.array(parts.first)
    group_keys = {name: key.take(first) for name, key in keys.items()}
    return finish_aggregate(step, runner, group_keys, parts.count, call_value, input_names)


# calls whose states fold into one state of their kind (``merged``)
_REFOLDED = ("count_star", "count", "count_if", "sum", "avg", "min", "max", "bool_and",
             "bool_or", "first", "any_value")


def merged(partials: list[Partial]) -> Partial | None:
    """The batches' ``partials`` (in batch order) as one: their rows regrouped by key and
    each group's states folded into one state of its kind -- when every call's does
    (count, sum, avg, min, max, ...); else None.  Many batches' states of the same groups
    (a streamed join's: every batch meets most customers of TPC-H Q13) then stay in check."""
    first = partials[0]
    if not all(func in _REFOLDED for func, _, _ in first.states.values()):
        return None
    keys = {name: concat_arrays([p.keys[name] for p in partials]) for name in first.keys}
    rows = sum(p.count for p in partials)
    groups = group_ids(list(keys.values())) if keys else Groups.single(rows)
    states = {}
    for text, (func, arg_type, arrays) in first.states.items():
        columns = [concat_arrays([p.states[text][2][i] for p in partials])
                   for i in range(len(arrays))]
        states[text] = (func, arg_type, [_sum(columns[0], arg_type, groups),
                                         _count(columns[1], groups)] if func == "avg"
                        else [_fold(func, arg_type, columns, groups)])
    taken = pa.array(groups.first)
    return Partial({name: key.take(taken) for name, key in keys.items()}, states,
                   groups.count)


def _whole(parts: KeyPartitions, fold, columns: list[pa.Array]) -> pa.Array:
    """``fold(columns, groups)`` over all rows: in one piece, or partition by partition."""
    if len(parts.rows) == 1:
        return fold(columns, parts.groups[0])
    return concat_arrays(parts.fold(fold, columns))


def _operands(step) -> dict[str, exp.Expression]:
    return {operand.alias_or_name: operand.unalias() for operand in step.operands}


def _fold(func: str, arg_type, columns: list[pa.Array], groups: Groups) -> pa.Array:
    if func.startswith(_DISTINCT):
        return _distinct_fold(func[len(_DISTINCT):], columns[0], groups)
    if func in ("count_star", "count"):
        return _count(columns[0], groups)
    if func == "count_if":  # a sum of the batches' counts: NULL when every one was NULL
        return aggregate("sum", columns[0], groups)
    if func in ("first", "any_value"):  # the batches' values in batch order
        return group_value(func, columns[0], groups)
    if func == "sum":
        return _sum(columns[0], arg_type, groups)
    if func == "avg":
        return _mean(_sum(columns[0], arg_type, groups), _count(columns[1], groups))
    if func.startswith(("var", "stddev")):
        return _variance(func, columns, groups)
    if func in folds.FOLDS:
        return folds.fold_states(func, columns, groups)
    if func in statistics.MOMENTS or func in statistics.PAIRS:
        parts = [np.asarray(c.to_numpy(zero_copy_only=False)) for c in columns]
        return statistics.result(func, statistics.fold_state(func, parts, groups.ids,
                                                             groups.count))
    return aggregate(func, columns[0], groups)  # min, max, bool_and, bool_or


def _count(counts: pa.Array, groups: Groups) -> pa.Array:
    return pc.fill_null(aggregate("sum", counts, groups), 0)


def _sum(sums: pa.Array, arg_type, groups: Groups) -> pa.Array:
    """Sum of partial sums; an integer column's sum is int64 whenever it fits."""
    total = aggregate("sum", sums, groups)
    integer = pa.types.is_integer(arg_type) or pa.types.is_boolean(arg_type)
    if integer and pa.types.is_decimal(total.type):
        return exact_integers([None if v is None else int(v) for v in total.to_pylist()])
    return total


def _mean(totals: pa.Array, counts: pa.Array) -> pa.Array:
    n = counts.to_numpy(zero_copy_only=False)
    if pa.types.is_decimal(totals.type) and totals.type.scale == 0:  # exact int / int
        means = np.array([0.0 if v is None or c == 0 else int(v) / int(c)
                          for v, c in zip(totals.to_pylist(), n.tolist())], np.float64)
    else:
        if not pa.types.is_integer(totals.type):  # int64 sums divide exactly as they are
            totals = pc.cast(totals, pa.float64())
        sums = totals.fill_null(0).to_numpy(zero_copy_only=False)
        with np.errstate(invalid="ignore", divide="ignore"):
            means = sums / np.maximum(n, 1)
    mask = n == 0
    return pa.array(means, pa.float64(), mask=mask if mask.any() else None)


def _variance(func: str, columns: list[pa.Array], groups: Groups) -> pa.Array:
    """Chan et al.'s pairwise update: counts add, means weight by count, squared deviations
    add plus each part's count times its mean's squared distance from the whole's."""
    counts, means, squares = (np.asarray(c.to_numpy(zero_copy_only=False)) for c in columns)
    size, ids = groups.count, groups.ids
    present = counts > 0  # a part without values says nothing (its mean is a placeholder)
    weights = np.where(present, counts, 0).astype(np.float64)
    n = np.bincount(ids, weights=weights, minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.bincount(ids, weights=np.where(present, weights * means, 0.0),
                           minlength=size) / np.maximum(n, 1)
        deviation = np.where(present, means - mean[ids], 0.0)
        m2 = (np.bincount(ids, weights=np.where(present, squares, 0.0), minlength=size)
              + np.bincount(ids, weights=weights * deviation * deviation, minlength=size))
    return variance_result(func, np.rint(n).astype(np.int64), m2)


def concat_arrays(arrays: list[pa.Array]) -> pa.Array:
    """Arrays of one logical column from several batches as one (``unified_type``)."""
    arrays = [a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a for a in arrays]
    if len(arrays) == 1:
        return arrays[0]
    target = unified_type([a.type for a in arrays])
    arrays = [a if a.type == target else pc.cast(a, target) for a in arrays]
    return pa.concat_arrays(arrays)
