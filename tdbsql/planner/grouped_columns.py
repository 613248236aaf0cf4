"""A grouped SELECT may read a column only through a GROUP BY key or inside an aggregate.

``SELECT k, v FROM t GROUP BY k`` and ``SELECT v, count(*) FROM t`` are wrong SQL; without this
check the engine would find ``t.v`` missing from the aggregate's output at run time and report
an unknown column.  DuckDB says: column "v" must appear in the GROUP BY clause or must be part
of an aggregate function.  So does ``check_grouped_columns``, with the column underlined --
unless the column is read by a call of an unknown name (``prodct(x)``, a misspelt aggregate):
then the function is the mistake, and the error names it (``planner.function_names``).

It runs on the optimized tree, before the window steps are split off (``planner.windows``) and
before conditions are simplified (which could rewrite ``HAVING k + 1 > 2`` past the GROUP BY key
``k + 1``).  There every column names its table, and a column without a table in ORDER BY /
QUALIFY names an output alias, and a bare ``JOIN ... USING`` column is the column DuckDB binds
(``planner.using_columns``).  A SELECT is grouped when it has GROUP BY or HAVING or an
aggregate of its own (an aggregate that is the function of a window call is not one).  In its
select list, HAVING, ORDER BY and QUALIFY a column of one of its own FROM sources is fine:

* inside a subtree equal to a GROUP BY key (any part of a ROLLUP / CUBE / GROUPING SETS);
* inside an aggregate call (with its FILTER / WITHIN GROUP): that is what is grouped;
* anywhere under a window call but in the window's arguments, FILTER, PARTITION BY and
  ORDER BY, which are read per group (``sum(sum(v)) OVER (ORDER BY k)``);
* in a nested subquery, unless it is a correlated reference to this SELECT's sources
  (``(SELECT max(x) FROM s WHERE s.k = t.v)`` needs ``t.v`` grouped; a nested source with
  the same alias shadows the outer one).

Columns of the CTEs the optimizer makes when it decorrelates subqueries (``_u_N``) are its own
doing and not checked.  Anything else (a column of an outer query, a lambda parameter) is left
alone, so a valid query is never refused.
"""

from __future__ import annotations

from sqlglot import exp

from ..errors import SqlError
from .function_names import unknown_call, unknown_function
from .parse import span_of

# what may wrap an aggregate call (FILTER, WITHIN GROUP, IGNORE / RESPECT NULLS)
AGGREGATE_WRAPPERS = (exp.Filter, exp.WithinGroup, exp.IgnoreNulls, exp.RespectNulls)


def check_grouped_columns(tree: exp.Expression, sql: str) -> None:
    """Raise an SqlError for the first column a grouped SELECT reads ungrouped."""
    for select in tree.find_all(exp.Select):
        if not is_grouped(select):
            continue
        keys = _group_keys(select.args.get("group"))
        sources = select_sources(select)
        if keys is None or not sources:
            continue
        for part in _after_grouping(select):
            column = _ungrouped(part, keys, sources)
            if column is not None:
                call = unknown_call(column, part)
                if call is not None:  # ``prodct(x)``: the name is the mistake, not x
                    raise unknown_function(call.name, sql, span_of(call))
                raise ungrouped_error(column, sql)


def ungrouped_error(column: exp.Column, sql: str) -> SqlError:
    """DuckDB's error for a column read outside GROUP BY keys and aggregates."""
    return SqlError(f'column "{column.name}" must appear in the GROUP BY clause or must be '
                    "part of an aggregate function", sql, span_of(column))


def is_grouped(select: exp.Select) -> bool:
    """Does ``select`` aggregate its rows: GROUP BY, HAVING, or an aggregate call of its own
    (not a window call's function) in its select list, HAVING, ORDER BY or QUALIFY?"""
    if select.args.get("group") is not None or select.args.get("having") is not None:
        return True
    return any(agg.find_ancestor(exp.Select) is select and not is_window_function(agg)
               for part in _after_grouping(select) for agg in part.find_all(exp.AggFunc))


def _after_grouping(select: exp.Select) -> list[exp.Expression]:
    """The parts of a SELECT evaluated once per group."""
    parts = list(select.expressions)
    for key in ("having", "qualify"):
        clause = select.args.get(key)
        if clause is not None:
            parts.append(clause.this)
    order = select.args.get("order")
    if order is not None:
        parts += [ordered.this for ordered in order.expressions]
    return parts


def _group_keys(group: exp.Group | None) -> set[exp.Expression] | None:
    """The GROUP BY keys; every part of a ROLLUP / CUBE / GROUPING SETS counts as one.  None
    when the keys cannot be told (``GROUP BY ALL`` over ``*``)."""
    if group is None:
        return set()
    keys = set()
    for key in group.iter_expressions():
        if key.find(exp.Star):
            return None
        if isinstance(key, (exp.Rollup, exp.Cube, exp.GroupingSets)):
            keys.update(node for node in key.walk() if isinstance(node, exp.Expression))
        keys.add(key)
    return keys


def source_clauses(select: exp.Select) -> list[exp.Expression]:
    """A SELECT's FROM clause and its JOINs, in order (their ``this`` is the source)."""
    first = select.args.get("from_")
    return ([first] if first is not None else []) + list(select.args.get("joins") or [])


def select_sources(select: exp.Select) -> set[str]:
    """The aliases of a SELECT's own FROM and JOIN sources (not the optimizer's ``_u_N``)."""
    names = {clause.this.alias_or_name for clause in source_clauses(select)}
    return {name for name in names if name and not name.startswith("_u_")}


def _ungrouped(node: exp.Expression, keys: set[exp.Expression],
               sources: set[str]) -> exp.Column | None:
    """The first column of ``sources`` that ``node`` reads outside GROUP BY keys and
    aggregates, or None."""
    if node in keys or is_aggregate(node):
        return None
    if isinstance(node, exp.Column):
        return node if node.table in sources else None
    if isinstance(node, exp.Select):  # a nested query: its own sources shadow ours
        sources = sources - select_sources(node)
        if not sources:
            return None
    if isinstance(node, exp.Window):
        function, parts = node.this, []
        while isinstance(function, AGGREGATE_WRAPPERS):
            if isinstance(function, exp.Filter):  # the condition is read per group too
                parts.append(function.expression.this)
            function = function.this
        parts += list(function.iter_expressions()) + list(node.args.get("partition_by") or [])
        order = node.args.get("order")
        if order is not None:
            parts += [ordered.this for ordered in order.expressions]
    else:
        parts = list(node.iter_expressions())
    for part in parts:
        column = _ungrouped(part, keys, sources)
        if column is not None:
            return column
    return None


def is_aggregate(node: exp.Expression) -> bool:
    """Is ``node`` an aggregate call (through its wrappers; GROUPING() is not one)?"""
    while isinstance(node, AGGREGATE_WRAPPERS):
        node = node.this
    return isinstance(node, exp.AggFunc) and not isinstance(node, (exp.Grouping,
                                                                     exp.GroupingId))


def is_window_function(agg: exp.Expression) -> bool:
    """Is ``agg`` the function of a window call (``sum(x) OVER (...)``)?"""
    node = agg
    while isinstance(node.parent, AGGREGATE_WRAPPERS):
        node = node.parent
    return isinstance(node.parent, exp.Window) and node.parent.this is node
