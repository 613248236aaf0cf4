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

from ..errors import SqlError, UnsupportedSql
from ..planner import aggregate_names as names
from ..planner.function_names import FUNCTION_NAMES
from . import statistics
from .arithmetic import OPERATOR_CALLS
from .folds import FOLDS, fold
from .frame import Frame, null_padded, rows_only
from .functions import registry
from .grouping import AGGREGATES, Groups, aggregate, first_rows, group_ids
from .histogram import histogram
from .histogram_bins import binned_histogram
from .holistic import HOLISTIC, Fractions, holistic
from .list_lambdas import LAMBDA_CALLS
from .ordered_aggregates import ORDER_SENSITIVE, OrderedArgument, ordered_rows
from .project import filter_project
from .string_agg import joined_per_group, separator_value

FUNCTIONS = {  # sqlglot aggregate -> engine.grouping function, or one of group_value's own
    exp.Count: "count", exp.Sum: "sum", exp.Avg: "avg", exp.Min: "min", exp.Max: "max",
    exp.Stddev: "stddev_samp", exp.StddevSamp: "stddev_samp", exp.StddevPop: "stddev_pop",
    exp.Variance: "var_samp", exp.VariancePop: "var_pop",
    exp.LogicalAnd: "bool_and", exp.LogicalOr: "bool_or",
    exp.CountIf: "count_if", exp.ArrayAgg: "array_agg", exp.First: "first",
    exp.AnyValue: "any_value", exp.GroupConcat: "string_agg",
    exp.Median: "median", exp.PercentileCont: "quantile_cont",
    exp.PercentileDisc: "quantile_disc", exp.Quantile: "quantile_disc", exp.Mode: "mode",
    exp.ArgMax: "arg_max", exp.ArgMin: "arg_min", exp.Last: "last", exp.Corr: "corr",
    exp.CovarPop: "covar_pop", exp.CovarSamp: "covar_samp", exp.RegrSlope: "regr_slope",
    exp.RegrIntercept: "regr_intercept", exp.RegrR2: "regr_r2", exp.RegrCount: "regr_count",
    exp.RegrAvgx: "regr_avgx", exp.RegrAvgy: "regr_avgy", exp.RegrSxx: "regr_sxx",
    exp.RegrSyy: "regr_syy", exp.RegrSxy: "regr_sxy", exp.Skewness: "skewness",
    exp.Kurtosis: "kurtosis", names.KurtosisPop: "kurtosis_pop", names.Entropy: "entropy",
    exp.ApproxDistinct: "approx_count_distinct", exp.BitwiseAndAgg: "bit_and",
    exp.BitwiseOrAgg: "bit_or", exp.BitwiseXorAgg: "bit_xor", names.Product: "product",
    names.KahanSum: "kahan_sum", names.Favg: "favg", names.Geomean: "geomean",
    names.Histogram: "histogram",
    names.Mad: "mad", names.Sem: "sem", names.WeightedAvg: "weighted_avg",
    names.ArgMaxNull: "arg_max_null", names.ArgMinNull: "arg_min_null",
}
# functions of two columns: (y, x) of the statistics, (value, key) of arg_max / arg_min,
# (value, weight) of weighted_avg
PAIRED = frozenset(statistics.PAIRS) | {"arg_max", "arg_min", "arg_max_null", "arg_min_null",
                                        "weighted_avg"}
_FRACTION_TAKING = ("quantile_cont", "quantile_disc")
# the same by SQL name (window calls reach the engine by name: ``planner.windows``)
FUNCTIONS_BY_NAME = {name.lower(): func for cls, func in FUNCTIONS.items()
                     for name in cls.sql_names()} | {"string_agg": "string_agg",
                                                     "listagg": "string_agg",
                                                     "bit_and": "bit_and", "bit_or": "bit_or",
                                                     "bit_xor": "bit_xor"}
# the planner's messages know the engine's functions (planner.function_names)
FUNCTION_NAMES.update(FUNCTIONS_BY_NAME, registry(), LAMBDA_CALLS, OPERATOR_CALLS)


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
    body, calls = runner.query.derived("aggregate output", lambda: _around(expression),
                                       expression)
    if body is None:
        return call_value(calls[0])
    values = {f"__agg{i}": call_value(call) for i, call in enumerate(calls)}
    columns = {**per_group, **values}
    table = pa.table(columns) if columns else rows_only(count)
    return runner.column(Frame({None: table}, count), body)


def _around(expression: exp.Expression) -> tuple[exp.Expression | None, list]:
    """(a copy of the output ``expression`` reading its aggregate calls as the columns
    ``__agg<i>``, the calls themselves), or (None, [call]) when it is one bare call; worked
    out once a plan, so the calls are the plan's own nodes (``call_text``)."""
    body = expression.unalias()
    if isinstance(body, (exp.AggFunc, exp.Filter)):
        return None, [body]
    calls, body = aggregate_calls(body), body.copy()
    for i, call in enumerate(aggregate_calls(body)):
        call.replace(exp.column(f"__agg{i}", quoted=True))
    return body, calls


def call_text(runner, call: exp.Expression) -> str:
    """The SQL text of an aggregate call, the key of its states (``step_calls``), generated
    once a plan (sqlglot takes 0.1-0.2 ms a call)."""
    return runner.query.derived("call text", call.sql, call)


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
    ``engine.grouping.AGGREGATES`` or one of ``group_value``'s own (count_if, array_agg,
    string_agg, first, any_value)."""
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


def extra_arguments(func: str, call: exp.AggFunc) -> tuple[exp.Expression | None,
                                                          exp.Expression | None]:
    """(the second column, the quantile fraction) a call of ``func`` takes beside its value,
    each None where it takes none: ``corr(y, x)``'s x, ``arg_max(x, y)``'s y,
    ``quantile_cont(x, q)``'s q."""
    if func in PAIRED:
        if call.expression is None:
            raise SqlError(f"{func}() takes two arguments")
        return call.expression, None
    if func in _FRACTION_TAKING:
        node = call.args.get("quantile") if isinstance(call, exp.Quantile) else call.expression
        if node is None:
            raise SqlError(f"No function matches the given name and argument types: {func}() "
                           "takes a value and a quantile")
        return None, node
    return None, None


def star_operands(step) -> set[str]:
    """Operand names standing for ``*``: sqlglot plans COUNT(*) as COUNT(_a_0), _a_0 = *."""
    return {op.alias_or_name for op in step.operands if isinstance(op.unalias(), exp.Star)}


def is_count_star(call: exp.AggFunc, stars: set[str]) -> bool:
    argument = call.this
    return isinstance(call, exp.Count) and (
        argument is None or isinstance(argument, exp.Star)
        or (isinstance(argument, exp.Column) and argument.name in stars))


class Grouped:
    """The step's input rows with its operands evaluated and its group ids found.  An operand
    written with ORDER BY holds its argument; the ORDER BY keys are evaluated when a call
    needs its rows in that order (``engine.ordered_aggregates``)."""

    def __init__(self, step, inputs: Frame, runner):
        self.runner, self.inputs = runner, inputs
        self._filters: dict[str, tuple[np.ndarray, Groups]] = {}
        self._sort_keys: dict[str, list] = {}
        self.stars = star_operands(step)
        self.operands = {op.alias_or_name: op.unalias() for op in step.operands}
        self.ordered = {name: OrderedArgument.of(node) for name, node in self.operands.items()
                        if isinstance(node, exp.Order)}
        self.flat = inputs.flat()
        for name, node in self.operands.items():
            if name not in self.stars:
                argument = self.ordered[name].argument if name in self.ordered else node
                self.flat = self.flat.append_column(name, self.values(argument))
        keys = [self.values(node) for node in step.group.values()]
        self.groups = group_ids(keys) if keys else Groups.single(inputs.length)
        first = pa.array(self.groups.first)
        self.keys = {name: key.take(first) for name, key in zip(step.group, keys)}

    def values(self, node: exp.Expression) -> pa.Array:
        return self.runner.column(self.inputs, node, self.flat)

    def call(self, call: exp.AggFunc | exp.Filter) -> pa.Array:
        """The value of one aggregate call (an ``aggregate_calls`` entry) per group."""
        inputs = self.inputs_of(call)
        return group_value(inputs.func, inputs.values, inputs.groups, inputs.distinct,
                           inputs.separator, other=inputs.other, fractions=inputs.fractions,
                           bins=inputs.bins, budget=self.runner.budget)

    def inputs_of(self, call: exp.AggFunc | exp.Filter) -> CallInputs:
        """What one aggregate call aggregates: with FILTER, only the rows where its condition
        is true (every group stays, maybe without rows); with ORDER BY (for a function whose
        value depends on it), those rows in that order."""
        agg, condition = filter_of(call)
        func, argument, distinct = call_spec(agg, self.stars)
        values = None if func == "count_star" else self.values(argument)
        separator = separator_value(agg, self.operands, self.runner.sql) \
            if func == "string_agg" else None
        other_node, fraction_node = extra_arguments(func, agg)
        other = None if other_node is None else self.values(other_node)
        fractions = None if fraction_node is None else self._fractions(func, fraction_node)
        bins = self._bins(agg.expression) if func == "histogram" and agg.expression else None
        ordered = self._ordered_argument(argument)
        distinct = distinct or (ordered is not None and ordered.distinct)
        in_order = ordered is not None and func in ORDER_SENSITIVE
        if condition is None and not in_order:
            return CallInputs(func, argument, values, self.groups, distinct, None, separator,
                              other, fractions, bins)
        key, rows, groups = None, None, self.groups
        if condition is not None:
            key = condition.sql()
            rows, groups = self._filtered_groups(key, condition)
        if in_order:
            rows = ordered_rows(self._keys_of(argument.name, ordered), rows,
                                self.inputs.length)
            groups = self.groups.subset(rows)
            key = f"{key or ''} ORDER BY {argument.name}"
        if values is not None:
            values = values.take(pa.array(rows))
        if other is not None:
            other = other.take(pa.array(rows))
        return CallInputs(func, argument, values, groups, distinct, key, separator, other,
                          fractions, bins)

    def _fractions(self, func: str, node: exp.Expression) -> Fractions:
        """A quantile call's fractions: a constant, evaluated once (sqlglot plans it as an
        operand of the step)."""
        return Fractions.of(func, self._written(node), self._constant)

    def _bins(self, node: exp.Expression) -> pa.Scalar:
        """A binned histogram's bounds: a constant list, evaluated once."""
        node = self._written(node)
        if any(isinstance(part, exp.Column) for part in node.walk()):
            raise UnsupportedSql(f"histogram(x, bins) with bins that are not constant: "
                                 f"{node.sql(dialect='duckdb')!r}")
        return self._constant(node)

    def _written(self, node: exp.Expression) -> exp.Expression:
        """``node`` with the step's operands it reads put back as written, also inside a
        list (``shared_operands``)."""
        def inline(part):
            if isinstance(part, exp.Column) and not part.table and part.name in self.operands:
                return self.operands[part.name].transform(inline)
            return part

        return node.transform(inline)

    def _constant(self, node: exp.Expression) -> pa.Scalar:
        from .evaluate import evaluate  # it reaches the window functions, which reach this

        return evaluate(pa.table({}), node, self.runner.sql)

    def _ordered_argument(self, argument) -> OrderedArgument | None:
        """The ORDER BY an argument was written with (checked), None without one."""
        if not isinstance(argument, exp.Column) or argument.table:
            return None
        ordered = self.ordered.get(argument.name)
        if ordered is not None:
            ordered.check(self.runner.sql)
        return ordered

    def _keys_of(self, name: str, ordered: OrderedArgument) -> list:
        """The ORDER BY keys' values of the ordered operand ``name`` (evaluated once)."""
        if name not in self._sort_keys:
            self._sort_keys[name] = [(self.values(key.this), key) for key in ordered.keys]
        return self._sort_keys[name]

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
    with different FILTERs or ORDER BYs apart (None without either)."""

    func: str
    argument: exp.Expression | None
    values: pa.Array | None
    groups: Groups
    distinct: bool
    filter_key: str | None
    separator: str | None = None  # string_agg's
    other: pa.Array | None = None  # the second column of a PAIRED function
    fractions: Fractions | None = None  # a quantile's
    bins: pa.Scalar | None = None  # a binned histogram's bounds (a list)


def group_value(func: str, values: pa.Array | None, groups: Groups,
                distinct: bool = False, separator: str | None = None, *,
                other: pa.Array | None = None, fractions: Fractions | None = None,
                bins: pa.Scalar | None = None, budget=None) -> pa.Array:
    """One value per group of ``func`` (a ``call_spec`` function) over ``values``, which come
    in the order the function takes them: for GROUP BY and for window aggregates over whole
    partitions.  ``separator``: string_agg's (None: NULL); ``other``: the second column of a
    ``PAIRED`` function; ``fractions``: a quantile's; ``bins``: a binned histogram's bounds;
    ``budget``: the query's memory budget
    (the holistic functions' sort is counted against it)."""
    if func == "count_star":
        return aggregate("count_star", None, groups)
    if distinct and func not in AGGREGATES:  # aggregate() takes DISTINCT itself
        rows = _first_of_each_value(values, groups, other)
        values, groups = values.take(pa.array(rows)), groups.subset(rows)
        other = None if other is None else other.take(pa.array(rows))
        distinct = False
    if func in HOLISTIC:
        return holistic(func, values, groups, fractions, budget)
    if func == "histogram":
        return histogram(values, groups, budget) if bins is None else \
            binned_histogram(values, groups, bins)
    if func in FOLDS:
        return fold(func, values, groups, other)
    if func in statistics.MOMENTS or func in statistics.PAIRS:
        return statistics.result(func, statistics.state(func, values, groups, other))
    if func == "count_if":  # DuckDB 2: NULL over no rows or only NULLs, as a sum
        return aggregate("sum", pc.cast(values, pa.int64()), groups)
    if func == "array_agg":
        return _list_per_group(values, groups)
    if func == "string_agg":
        return joined_per_group(values, groups, separator)
    if func == "first":
        return values.take(null_padded(groups.first))  # a group without rows: NULL
    if func == "any_value":  # DuckDB: the first value that is not NULL
        return values.take(null_padded(_first_valid(values, groups)))
    if func in ("min", "max") and pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    return aggregate(func, values, groups, distinct=distinct)


def _first_of_each_value(values: pa.Array, groups: Groups,
                         other: pa.Array | None = None) -> np.ndarray:
    """DISTINCT for the functions ``aggregate`` does not run (count_if, array_agg,
    string_agg, first, any_value, ...): the rows first holding each distinct (group, value)
    pair -- (group, value, other) for two columns -- in the order the rows come (an ORDER
    BY's, for those that follow it)."""
    keys = [pa.array(groups.ids), values] + ([] if other is None else [other])
    return np.sort(group_ids(keys).first)


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
    """ARRAY_AGG: each group's values (NULLs included) in input order, as a list; NULL for a
    group without rows (a FILTER left none, or no rows at all), as in DuckDB."""
    order, starts = groups.row_order()
    empty = np.diff(starts) == 0
    return pa.ListArray.from_arrays(pa.array(starts.astype(np.int32)),
                                    values.take(pa.array(order)),
                                    mask=pa.array(empty) if empty.any() else None)
