"""DuckDB aggregates sqlglot has no node for, as aggregate nodes; ordered-set calls
(``percentile_cont(q) WITHIN GROUP (ORDER BY x)``) as the plain calls DuckDB binds them to.

sqlglot reads ``product(x)``, ``kurtosis_pop(x)``, ``entropy(x)``, ``kahan_sum(x)`` (also
``fsum`` / ``sumkahan``), ``favg(x)``, ``geomean(x)`` (also ``geometric_mean``),
``histogram(x)``, ``mad(x)``, ``sem(x)`` and ``weighted_avg(x, w)`` (also ``wavg``) as
``exp.Anonymous`` calls: to its planner and to the grouping checks they would be scalar
functions reading ungrouped columns.  ``AGGREGATE_PARSERS`` makes the parser build the
aggregate nodes below instead (``planner.parse``), which plan like ``sum``.

``within_group_calls`` rewrites what DuckDB's parser rewrites: ``percentile_cont(q) WITHIN
GROUP (ORDER BY x)`` is ``quantile_cont(x, q)`` (``percentile_disc``: ``quantile_disc``), and
with ``DESC`` the fractions are negated (a negative fraction counts from the top, as in
DuckDB); ``mode() WITHIN GROUP (ORDER BY x)`` is ``mode(x ORDER BY x)`` (ties go to the first
value in that order).  sqlglot's planner only sees an aggregate's own arguments, never the
``WITHIN GROUP`` clause around it, so the rewrite must come before planning.
"""

from __future__ import annotations

from sqlglot import exp

from ..errors import SqlError


class Product(exp.Expression, exp.AggFunc):
    arg_types = {"this": True}


class KurtosisPop(exp.Expression, exp.AggFunc):
    arg_types = {"this": True}


class Entropy(exp.Expression, exp.AggFunc):
    arg_types = {"this": True}


class KahanSum(exp.Expression, exp.AggFunc):
    arg_types = {"this": True}
    _sql_names = ["KAHAN_SUM", "FSUM", "SUMKAHAN"]


class Histogram(exp.Expression, exp.AggFunc):
    arg_types = {"this": True, "expression": False}  # DuckDB's bins: refused by the engine


class Favg(exp.Expression, exp.AggFunc):
    arg_types = {"this": True}


class Geomean(exp.Expression, exp.AggFunc):
    """DuckDB's macro ``exp(avg(ln(x)))``: no DISTINCT, FILTER or ORDER BY on it, but over a
    window, where DuckDB takes all three."""

    arg_types = {"this": True}
    _sql_names = ["GEOMEAN", "GEOMETRIC_MEAN"]


class Mad(exp.Expression, exp.AggFunc):
    """The median absolute deviation."""

    arg_types = {"this": True}


class Sem(exp.Expression, exp.AggFunc):
    """The standard error of the mean."""

    arg_types = {"this": True}


class WeightedAvg(exp.Expression, exp.AggFunc):
    """DuckDB's macro ``sum(x * w) / sum(CASE WHEN x IS NOT NULL THEN w ELSE 0 END)``: no
    DISTINCT, FILTER or ORDER BY on it, and no window (two aggregates)."""

    arg_types = {"this": True, "expression": True}
    _sql_names = ["WEIGHTED_AVG", "WAVG"]


class ArgMaxNull(exp.Expression, exp.AggFunc):
    """arg_max over the rows whose key is not NULL, a NULL value included."""

    arg_types = {"this": True, "expression": True}


class ArgMinNull(exp.Expression, exp.AggFunc):
    arg_types = {"this": True, "expression": True}


AGGREGATE_PARSERS = {name: cls.from_arg_list
                     for cls in (Product, KurtosisPop, Entropy, KahanSum, Favg, Geomean,
                                 Histogram, Mad, Sem, WeightedAvg, ArgMaxNull, ArgMinNull)
                     for name in cls.sql_names()}
# count_star() is count(*)
AGGREGATE_PARSERS["COUNT_STAR"] = lambda args: exp.Count(this=exp.Star(), big_int=True) \
    if not args else exp.Anonymous(this="count_star", expressions=args)
# DuckDB's other names of aggregates sqlglot has nodes for: mean is avg, arbitrary is first
AGGREGATE_PARSERS.update({"MEAN": exp.Avg.from_arg_list, "ARBITRARY": exp.First.from_arg_list})
_MACRO_ERROR = ('Function "{}" is a Macro Function. "DISTINCT", "FILTER", and "ORDER BY" are '
                "only applicable to window and aggregate functions.")


def within_group_calls(tree: exp.Expression, sql: str) -> exp.Expression:
    """``tree`` with its ordered-set calls rewritten (see the module docstring), and
    DuckDB's error for DISTINCT, FILTER or ORDER BY on geomean and weighted_avg (macros)."""
    from .parse import span_of  # parse reads AGGREGATE_PARSERS from here

    for call in list(tree.find_all(Geomean, WeightedAvg)):
        parent = call.parent
        if isinstance(call, Geomean) and (isinstance(parent, exp.Window) or (
                isinstance(parent, exp.Filter) and isinstance(parent.parent, exp.Window))):
            continue  # over a window DuckDB runs it as an aggregate: all three apply
        name = call.sql_name().lower()
        if isinstance(call.this, (exp.Distinct, exp.Order)) or (
                isinstance(parent, exp.Filter) and parent.this is call):
            raise SqlError(_MACRO_ERROR.format(name), sql, span_of(call))
        if isinstance(call, WeightedAvg) and isinstance(parent, exp.Window):
            raise SqlError("Window function macro bodies must contain exactly one aggregate "
                           "function", sql, span_of(call))
    for node in list(tree.find_all(exp.WithinGroup)):
        rewritten = _plain_call(node)
        if rewritten is not None:
            rewritten.meta.update(node.this.meta)
            node.replace(rewritten)
    return tree


def _plain_call(node: exp.WithinGroup) -> exp.Expression | None:
    call, order = node.this, node.expression
    if not isinstance(order, exp.Order) or len(order.expressions) != 1:
        return None
    key = order.expressions[0]
    if isinstance(call, exp.Mode) and call.this is None:
        return exp.Mode(this=exp.Order(this=key.this.copy(), expressions=[key.copy()]))
    if isinstance(call, (exp.PercentileCont, exp.PercentileDisc)) and \
            call.args.get("expression") is None:
        fraction = call.this.copy()
        if key.args.get("desc"):
            fraction = _negated(fraction)
        return type(call)(this=key.this.copy(), expression=fraction)
    return None


def _negated(fraction: exp.Expression) -> exp.Expression:
    if isinstance(fraction, exp.Array):
        return exp.Array(expressions=[_negated(f) for f in fraction.expressions])
    return exp.Neg(this=exp.Paren(this=fraction))
