"""The Aggregate step: GROUP BY keys -> group ids -> aggregate kernels -> HAVING -> projections.

sqlglot's planner hands us ``operands`` (aggregate inputs that are expressions, e.g.
``l_extendedprice * (1 - l_discount) AS _a_0``), ``group`` (``_g0 -> expr``) and
``aggregations``: whole output expressions containing aggregate calls (``SUM(_a_0) / COUNT(*)
AS x``).  Each aggregate call is computed per group by ``engine.grouping``; what surrounds it is
evaluated afterwards over one row per group.  Without GROUP BY there is exactly one group, even
over no rows (``SELECT count(*) FROM empty`` is one row: 0).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from ..errors import UnsupportedSql
from .frame import Frame, null_padded, rows_only
from .grouping import Groups, aggregate, first_rows, group_ids
from .project import filter_project

FUNCTIONS = {  # sqlglot aggregate -> engine.grouping function, or count_if / array_agg / first
    exp.Count: "count", exp.Sum: "sum", exp.Avg: "avg", exp.Min: "min", exp.Max: "max",
    exp.Stddev: "stddev_samp", exp.StddevSamp: "stddev_samp", exp.StddevPop: "stddev_pop",
    exp.Variance: "var_samp", exp.VariancePop: "var_pop",
    exp.LogicalAnd: "bool_and", exp.LogicalOr: "bool_or",
    exp.CountIf: "count_if", exp.ArrayAgg: "array_agg", exp.First: "first",
    exp.AnyValue: "any_value",
}
# the same by SQL name (window calls reach the engine by name: ``planner.windows``)
FUNCTIONS_BY_NAME = {name.lower(): func for cls, func in FUNCTIONS.items()
                     for name in cls.sql_names()}


def run_aggregate(step, inputs: Frame, runner) -> Frame:
    grouped = Grouped(step, inputs, runner)
    return finish_aggregate(step, runner, grouped.keys, grouped.groups.count, grouped.call,
                            list(inputs.tables))


def finish_aggregate(step, runner, keys: dict[str, pa.Array], count: int, call_value,
                     input_names) -> Frame:
    """The step's output from one row per group: the group ``keys``, each aggregate call's
    value (``call_value(call)``), the expressions around the calls, then HAVING and the
    projections.  ``input_names``: the table aliases the step consumed (they see its output)."""
    # an expression reads a key as ``<step>._g<i>`` (``planner.group_keys``), a grouped
    # column also by its qualified name
    per_group = dict(keys)
    for name, node in step.group.items():
        per_group[f"{step.name}.{name}"] = keys[name]
        if isinstance(node, exp.Column):
            per_group.setdefault(_qualified(node), keys[name])
    columns = dict(keys)
    for expression in step.aggregations:
        columns[expression.alias_or_name] = _output(expression, per_group, count, call_value,
                                                    runner)
    table = pa.table(columns) if columns else rows_only(count)
    frame = Frame({step.name: table, **{name: table for name in input_names}}, count)
    return filter_project(runner, step, frame)


def _output(expression: exp.Expression, per_group: dict, count: int, call_value,
            runner) -> pa.Array:
    """One output of the step: its aggregate calls per group, then the expression around them,
    evaluated over one row per group."""
    body = expression.unalias().copy()
    if isinstance(body, (exp.AggFunc, exp.Filter)):
        return call_value(body)
    values = {}
    for i, call in enumerate(aggregate_calls(body)):
        values[f"__agg{i}"] = call_value(call)
        call.replace(exp.column(f"__agg{i}", quoted=True))
    columns = {**per_group, **values}
    table = pa.table(columns) if columns else rows_only(count)
    return runner.column(Frame({None: table}, count), body)


def aggregate_calls(body: exp.Expression) -> list[exp.AggFunc | exp.Filter]:
    """The aggregate calls of an output expression (not those nested in another call); a call
    with ``FILTER (WHERE ...)`` comes as its ``exp.Filter`` node (see ``filter_of``)."""
    if isinstance(body, (exp.AggFunc, exp.Filter)):
        return [body]
    calls = [n for n in body.find_all(exp.AggFunc) if _outermost(n)]
    return [c.parent if isinstance(c.parent, exp.Filter) else c for c in calls]


def filter_of(call: exp.AggFunc | exp.Filter) -> tuple[exp.AggFunc, exp.Expression | None]:
    """The aggregate call of an ``aggregate_calls`` entry and its FILTER condition (None
    without one): the call then aggregates only the rows where the condition is true."""
    if isinstance(call, exp.Filter):
        return call.this, call.expression.this
    return call, None


def call_spec(call: exp.AggFunc, stars: set[str]) -> tuple[str, exp.Expression | None, bool]:
    """(function, argument, distinct) of an aggregate call; function is one of
    ``engine.grouping.AGGREGATES`` or count_if / array_agg / first."""
    if is_count_star(call, stars):
        return "count_star", None, False
    argument, distinct = call.this, isinstance(call.this, exp.Distinct)
    if distinct:
        if len(argument.expressions) != 1:
            raise UnsupportedSql(f"{call.sql()!r}: DISTINCT over several columns")
        argument = argument.expressions[0]
    func = FUNCTIONS.get(type(call))
    if func is None:
        raise UnsupportedSql(f"aggregate function {call.sql()!r} is not supported")
    return func, argument, distinct


def star_operands(step) -> set[str]:
    """Operand names standing for ``*``: sqlglot plans COUNT(*) as COUNT(_a_0), _a_0 = *."""
    return {op.alias_or_name for op in step.operands if isinstance(op.unalias(), exp.Star)}


def is_count_star(call: exp.AggFunc, stars: set[str]) -> bool:
    argument = call.this
    return isinstance(call, exp.Count) and (
        argument is None or isinstance(argument, exp.Star)
        or (isinstance(argument, exp.Column) and argument.name in stars))


class Grouped:
    """The step's input rows with its operands evaluated and its group ids found."""

    def __init__(self, step, inputs: Frame, runner):
        self.runner, self.inputs = runner, inputs
        self._filters: dict[str, tuple[np.ndarray, Groups]] = {}
        self.stars = star_operands(step)
        self.flat = inputs.flat()
        for operand in step.operands:
            if operand.alias_or_name not in self.stars:
                self.flat = self.flat.append_column(operand.alias_or_name,
                                                    self.values(operand.unalias()))
        keys = [self.values(node) for node in step.group.values()]
        self.groups = group_ids(keys) if keys else Groups.single(inputs.length)
        first = pa.array(self.groups.first)
        self.keys = {name: key.take(first) for name, key in zip(step.group, keys)}

    def values(self, node: exp.Expression) -> pa.Array:
        return self.runner.column(self.inputs, node, self.flat)

    def call(self, call: exp.AggFunc | exp.Filter) -> pa.Array:
        """The value of one aggregate call (an ``aggregate_calls`` entry) per group."""
        inputs = self.inputs_of(call)
        return group_value(inputs.func, inputs.values, inputs.groups, inputs.distinct)

    def inputs_of(self, call: exp.AggFunc | exp.Filter) -> CallInputs:
        """What one aggregate call aggregates: with FILTER, only the rows where its condition
        is true (every group stays, maybe without rows)."""
        agg, condition = filter_of(call)
        func, argument, distinct = call_spec(agg, self.stars)
        values = None if func == "count_star" else self.values(argument)
        if condition is None:
            return CallInputs(func, argument, values, self.groups, distinct, None)
        key = condition.sql()
        rows, groups = self._filtered_groups(key, condition)
        if values is not None:
            values = values.take(pa.array(rows))
        return CallInputs(func, argument, values, groups, distinct, key)

    def _filtered_groups(self, key: str, condition) -> tuple[np.ndarray, Groups]:
        """(rows, their groups) where a FILTER condition holds, worked out once per batch for
        all the calls sharing it (``count(*) FILTER (WHERE c), sum(x) FILTER (WHERE c)``)."""
        if key not in self._filters:
            rows = np.flatnonzero(self.runner.mask(self.inputs, condition, self.flat))
            self._filters[key] = rows, self.groups.subset(rows)
        return self._filters[key]


@dataclass(frozen=True)
class CallInputs:
    """What an aggregate call aggregates (``Grouped.inputs_of``); ``filter_key`` tells calls
    with different FILTERs apart (None without one)."""

    func: str
    argument: exp.Expression | None
    values: pa.Array | None
    groups: Groups
    distinct: bool
    filter_key: str | None


def group_value(func: str, values: pa.Array | None, groups: Groups,
                distinct: bool = False) -> pa.Array:
    """One value per group of ``func`` (a ``call_spec`` function) over ``values``: for
    GROUP BY and for window aggregates over whole partitions."""
    if func == "count_star":
        return aggregate("count_star", None, groups)
    if func == "count_if":
        return pc.fill_null(aggregate("sum", pc.cast(values, pa.int64()), groups), 0)
    if func == "array_agg":
        return _list_per_group(values, groups)
    if func == "first":
        return values.take(null_padded(groups.first))  # a group without rows: NULL
    if func == "any_value":  # DuckDB: the first value that is not NULL
        return values.take(null_padded(_first_valid(values, groups)))
    if func in ("min", "max") and pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    return aggregate(func, values, groups, distinct=distinct)


def _first_valid(values: pa.Array, groups: Groups) -> np.ndarray:
    """Per group the first row whose value is not NULL, -1 for none."""
    valid = values.is_valid().to_numpy(zero_copy_only=False)
    return first_rows(np.where(valid, groups.ids, -1), groups.count)


def _qualified(column: exp.Column) -> str:
    return f"{column.table}.{column.name}" if column.table else column.name


def _outermost(node: exp.Expression) -> bool:
    parent = node.parent
    while parent is not None:
        if isinstance(parent, exp.AggFunc):
            return False
        parent = parent.parent
    return True


def _list_per_group(values: pa.Array, groups: Groups) -> pa.Array:
    """ARRAY_AGG: each group's values (NULLs included) in input order, as a list."""
    order, starts = groups.row_order()
    return pa.ListArray.from_arrays(pa.array(starts.astype(np.int32)),
                                    values.take(pa.array(order)))
