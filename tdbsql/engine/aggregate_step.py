"""The Aggregate step: GROUP BY keys -> group ids -> aggregate kernels -> HAVING -> projections.

sqlglot's planner hands us ``operands`` (aggregate inputs that are expressions, e.g.
``l_extendedprice * (1 - l_discount) AS _a_0``), ``group`` (``_g0 -> expr``) and
``aggregations``: whole output expressions containing aggregate calls (``SUM(_a_0) / COUNT(*)
AS x``).  Each aggregate call is computed per group by ``engine.grouping``; what surrounds it is
evaluated afterwards over one row per group.  Without GROUP BY there is exactly one group, even
over no rows (``SELECT count(*) FROM empty`` is one row: 0).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from ..errors import UnsupportedSql
from .frame import Frame, broadcast
from .grouping import Groups, aggregate, group_ids
from .project import project

_FUNCTIONS = {
    exp.Sum: "sum", exp.Avg: "avg", exp.Min: "min", exp.Max: "max",
    exp.Stddev: "stddev_samp", exp.StddevSamp: "stddev_samp", exp.StddevPop: "stddev_pop",
    exp.Variance: "var_samp", exp.VariancePop: "var_pop",
    exp.LogicalAnd: "bool_and", exp.LogicalOr: "bool_or",
}


def run_aggregate(step, inputs: Frame, runner) -> Frame:
    flat = inputs.flat()
    stars = set()
    for operand in step.operands:
        if isinstance(operand.unalias(), exp.Star):  # COUNT(*) arrives as COUNT(_a_0), _a_0 = *
            stars.add(operand.alias_or_name)
            continue
        value = broadcast(runner.evaluate(inputs, operand.unalias(), flat), inputs.length)
        flat = flat.append_column(operand.alias_or_name, value)
    keys = [broadcast(runner.evaluate(inputs, node, flat), inputs.length)
            for node in step.group.values()]
    groups = group_ids(keys) if keys else _one_group(inputs.length)
    columns = {name: key.take(pa.array(groups.first)) for name, key in zip(step.group, keys)}
    per_group = dict(columns)
    for node, name in zip(step.group.values(), step.group):
        if isinstance(node, exp.Column):
            per_group[_qualified(node)] = columns[name]
    for expression in step.aggregations:
        columns[expression.alias_or_name] = _aggregation(expression, flat, groups, per_group,
                                                         runner, inputs, stars)
    table = pa.table(columns) if columns else pa.table({"__row": pa.nulls(groups.count)})
    frame = Frame({step.name: table, **{name: table for name in inputs.tables}}, groups.count)
    if step.condition is not None:
        frame = frame.filter(runner.mask(frame, step.condition))
    if step.projections:
        return Frame.single(step.name, project(runner, frame, step.projections))
    return frame


def _one_group(rows: int) -> Groups:
    return Groups(np.zeros(rows, dtype=np.int64), 1, np.zeros(1, dtype=np.int64))


def _qualified(column: exp.Column) -> str:
    return f"{column.table}.{column.name}" if column.table else column.name


def _aggregation(expression, flat: pa.Table, groups: Groups, per_group: dict, runner, inputs,
                 stars: set):
    """One output of the step: its aggregate calls per group, then the expression around them."""
    body = expression.unalias().copy()
    calls = [node for node in body.find_all(exp.AggFunc) if _outermost(node)]
    values = {}
    for i, call in enumerate(calls):
        name = f"__agg{i}"
        values[name] = _call(call, flat, groups, runner, inputs, stars)
        if call is body:
            return values[name]
        call.replace(exp.column(name, quoted=True))
    table = pa.table({**per_group, **values}) if (per_group or values) else None
    group_frame = Frame({None: table}, groups.count) if table is not None else \
        Frame({}, groups.count)
    return broadcast(runner.evaluate(group_frame, body), groups.count)


def _outermost(node: exp.Expression) -> bool:
    parent = node.parent
    while parent is not None:
        if isinstance(parent, exp.AggFunc):
            return False
        parent = parent.parent
    return True


def _call(call: exp.AggFunc, flat: pa.Table, groups: Groups, runner, inputs,
          stars: set) -> pa.Array:
    argument = call.this
    distinct = isinstance(argument, exp.Distinct)
    if distinct:
        if len(argument.expressions) != 1:
            raise UnsupportedSql(f"{call.sql()!r}: DISTINCT over several columns")
        argument = argument.expressions[0]
    if isinstance(call, exp.Count):
        if argument is None or isinstance(argument, exp.Star) or \
                (isinstance(argument, exp.Column) and argument.name in stars):
            return aggregate("count_star", None, groups)
        return aggregate("count", _values(argument, flat, runner, inputs), groups,
                         distinct=distinct)
    if isinstance(call, exp.CountIf):
        hits = pc.cast(_values(argument, flat, runner, inputs), pa.int64())
        return pc.fill_null(aggregate("sum", hits, groups), 0)
    if isinstance(call, exp.ArrayAgg):
        return _list_per_group(_values(argument, flat, runner, inputs), groups)
    if isinstance(call, (exp.First, exp.AnyValue)):
        return _values(argument, flat, runner, inputs).take(pa.array(groups.first))
    func = _FUNCTIONS.get(type(call))
    if func is None:
        raise UnsupportedSql(f"aggregate function {call.sql()!r} is not supported")
    values = _values(argument, flat, runner, inputs)
    if func in ("min", "max") and pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    return aggregate(func, values, groups, distinct=distinct)


def _list_per_group(values: pa.Array, groups: Groups) -> pa.Array:
    """ARRAY_AGG: each group's values (NULLs included) in input order, as a list."""
    order = np.argsort(groups.ids, kind="stable")
    counts = np.bincount(groups.ids, minlength=groups.count)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    return pa.ListArray.from_arrays(pa.array(offsets), values.take(pa.array(order)))


def _values(argument, flat: pa.Table, runner, inputs) -> pa.Array:
    return broadcast(runner.evaluate(inputs, argument, flat), inputs.length)
