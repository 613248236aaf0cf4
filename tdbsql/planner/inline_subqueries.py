"""Uncorrelated subqueries evaluated after grouping stay in their expression.

sqlglot's ``unnest_subqueries`` turns an uncorrelated subquery in HAVING (or in the select list
or ORDER BY of a grouped SELECT) into a join with the FROM rows, made *before* the grouping:

- ``HAVING EXISTS (SELECT ...)`` becomes ``LEFT JOIN (SELECT ...) ON TRUE`` with ``HAVING NOT
  MAX(_u.col) IS NULL``: every input row is repeated once per subquery row, so ``count(*)`` and
  ``sum`` are multiplied (and the one-row check of a scalar subquery then refuses it);
- ``HAVING count(*) IN (SELECT ...)`` becomes a join on ``count(*) = _u.x``, an aggregate
  read before there are groups;
- a scalar subquery becomes a CROSS JOIN, which over a subquery of no rows drops every group
  where SQL gives the value NULL -- anywhere, also in WHERE: ``WHERE (SELECT x FROM t WHERE
  false) IS NULL`` kept no row.

Such a subquery does not read the outer row, so ``engine.subqueries`` runs it once and puts its
value (a boolean, a membership test with SQL's NULL rules, a constant) in the expression, which
is what the query means.  This rule hides those subqueries (and every uncorrelated scalar
subquery without an aggregate call) from sqlglot's rule (their own nested
subqueries are still unnested, each as a query of its own) and puts them back.

After grouping, not one with an aggregate call in it: sqlglot's planner would compute that call
in the outer query's Aggregate step.  A scalar subquery that aggregates without GROUP BY / HAVING / LIMIT /
OFFSET has exactly one row, so sqlglot's CROSS JOIN is right and it goes there; any other (an
EXISTS or IN over an aggregating query, a grouped scalar subquery) is refused by name.
"""

from __future__ import annotations

import re

from sqlglot import exp
from sqlglot.optimizer.unnest_subqueries import unnest_subqueries

from ..errors import UnsupportedSql
from .grouped_columns import is_grouped, is_window_function
from .correlated import is_value
from .table_refs import inside, local_names


def unnest_subqueries_before_grouping(expression: exp.Expression) -> exp.Expression:
    """sqlglot's ``unnest_subqueries`` except for the subqueries the module keeps in place."""
    kept = []
    for node in list(expression.find_all(exp.Exists, exp.Subquery, exp.All)):
        query = node.this
        if not isinstance(query, exp.Query) or node.parent is None or not is_value(node):
            continue
        correlated = _correlated(query)
        if _select_item(node) and not correlated:
            continue
        if isinstance(node, exp.All) and not correlated and not _after_grouping(node):
            continue  # x op ALL (SELECT ...) without a Subquery: sqlglot leaves it in place
            # (after grouping it takes it for a scalar: HAVING x <> MAX(_u.col), a CROSS JOIN)
        if correlated and not _decorrelated_by_us(node):
            continue
        after = not correlated and _after_grouping(node)
        if not (correlated or after or _beside_window_aggregate(node) or (
                isinstance(node, exp.Subquery) and not isinstance(node.parent, exp.In)
                and not _one_row(query)) or (
                isinstance(node.parent, (exp.In, exp.Any)) and not _filter_only(node.parent))):
            continue
        if any(node is not other and inside(node, other) for other, _, _ in kept):
            continue  # inside one already kept: goes with it
        if after and is_grouped(query):
            if isinstance(node, exp.Subquery) and _one_row(query) and \
                    not isinstance(node.parent, exp.In):
                continue
            raise UnsupportedSql(f"a subquery with an aggregate after GROUP BY / in HAVING is "
                                 f"not supported here: {node.sql(dialect='duckdb')!r}")
        placeholder = exp.Literal.string(f"__tdbsql_kept_subquery_{len(kept)}")
        query.replace(placeholder)
        kept.append((node, placeholder, query))
    expression = unnest_subqueries(expression)
    for _node, placeholder, query in kept:
        # found again by its text: sqlglot moves the subquery holding it (an IN around it
        # becomes a CTE) as a copy, which left the literal in place: ``NOT v IN (0)``
        unnested = _own_names(unnest_subqueries(query), placeholder.this)
        for spot in list(expression.find_all(exp.Literal)):
            if spot.is_string and spot.this == placeholder.this:
                spot.replace(unnested.copy())
    return expression


def _select_item(node: exp.Expression) -> bool:
    """Is ``node`` an item of a select list (an expression, though its parent is a query)?"""
    parent = node.parent
    return isinstance(parent, exp.Select) and any(item is node for item in parent.expressions)


def _own_names(query: exp.Expression, tag: str) -> exp.Expression:
    """``query`` with the ``_u_<n>`` names sqlglot's unnesting gave it made its own: each
    unnesting counts from ``_u_0``, and two CTEs ``_u_0`` in one query read each other's rows
    (a scalar subquery's one-row CTE became the kept IN's key list)."""
    prefix = tag.rsplit("_", 1)[-1]

    def rename(node):
        if isinstance(node, exp.Identifier) and re.fullmatch(r"_u_\d+", node.name):
            return exp.to_identifier(f"_k{prefix}{node.name}", quoted=node.quoted)
        return node
    return query.transform(rename)


def _after_grouping(node: exp.Expression) -> bool:
    """Is ``node`` in HAVING, ORDER BY or the select list of a grouped SELECT (its nearest
    one)?"""
    child, parent = node, node.parent
    while parent is not None and not isinstance(parent, exp.Select):
        child, parent = parent, parent.parent
    if parent is None or not is_grouped(parent):
        return False
    return child is parent.args.get("having") or child is parent.args.get("order") or \
        child in parent.expressions


def _beside_window_aggregate(node: exp.Expression) -> bool:
    """Is ``node`` in a SELECT that does not group but has an aggregate as a window function
    in its select list?  sqlglot's unnesting takes any aggregate call there for grouping and
    wraps the subquery's value in MAX(), which makes the SELECT one row:
    ``SELECT count(*) OVER () = (SELECT count(*) FROM t) FROM t`` gave one row, not one per
    row of t."""
    select = node.find_ancestor(exp.Select)
    return select is not None and not is_grouped(select) and any(
        is_window_function(agg) and agg.find_ancestor(exp.Select) is select
        for item in select.expressions for agg in item.find_all(exp.AggFunc))


def _decorrelated_by_us(node: exp.Expression) -> bool:
    """Is ``node`` a correlated subquery that sqlglot's unnesting gets wrong, so that
    ``planner.correlated`` takes it?  sqlglot decorrelates ``x IN (SELECT ... WHERE inner =
    outer)`` into a per-key list and ``ARRAY_ANY``: right as a filter, but as a value it is
    NULL where no inner row matches the key (SQL: FALSE) and FALSE where x or a listed value
    is NULL (SQL: NULL); ``x op ALL (...)`` becomes an ``ARRAY_ALL`` the engine lacks; a
    scalar subquery that does not aggregate becomes an ``ARRAY_AGG`` of its rows (compared
    as a list, or one of them taken where SQL wants an error for more than one)."""
    parent = node.parent
    if isinstance(node, exp.All) or isinstance(parent, exp.All) or _skips_a_level(node) or \
            _nested_reads_outside(node.this) or _several_correlated_tests(node.this):
        return True
    if isinstance(node, exp.Subquery) and not isinstance(parent, (exp.In, exp.Any)) and \
            not _one_row(node.this):
        return True  # a scalar of rows, not an aggregate: sqlglot takes ARRAY_AGG of them
    return isinstance(parent, (exp.In, exp.Any)) and not _filter_only(parent)


def _skips_a_level(node: exp.Expression) -> bool:
    """Does the subquery ``node`` read a column of a query further out than the one it is
    in?  sqlglot unnests it into the query it is in, keyed on a column that query does not
    have (``dept.city = (SELECT city FROM dept d2 WHERE d2.dept_id = emp.dept_id)`` inside
    a subquery over dept compared the city with a list)."""
    enclosing = node.find_ancestor(exp.Select)
    if enclosing is None:
        return False
    sources = [enclosing.args.get("from_")] + list(enclosing.args.get("joins") or [])
    own = {s.this.alias_or_name for s in sources if s is not None}
    local = local_names(node.this)
    return any(c.table and c.table not in local and c.table not in own
               for c in node.this.find_all(exp.Column))


def _nested_reads_outside(query: exp.Expression) -> bool:
    """Does a subquery nested in ``query`` read a column of a query outside ``query``?
    sqlglot unnests ``query`` by its own correlated predicates into a derived table of the
    outer FROM, where that nested reference has no row to read (``(SELECT count(*) FROM u
    WHERE u.k = o.k AND EXISTS (SELECT 1 FROM o o2 WHERE o2.id < o.id))``: unknown column
    ``o.id``)."""
    local = local_names(query)
    for nested in query.find_all(exp.Subquery, exp.Exists):
        if nested is query or not isinstance(nested.this, exp.Query):
            continue
        if any(c.table and c.table not in local for c in nested.this.find_all(exp.Column)):
            return True
    return False


def _several_correlated_tests(query: exp.Expression) -> bool:
    """Has ``query``'s WHERE more than one condition reading the outer row that is not an
    equality (``i.w > o.v AND o.v > 1``)?  sqlglot's unnesting collects the inner values of
    those in a list of STRUCTs per key and tests them in a lambda, which the engine cannot
    evaluate (``struct()``)."""
    where = query.args.get("where") if isinstance(query, exp.Select) else None
    if where is None:
        return False
    local = local_names(query)
    tests = [part for part in where.this.flatten() if not isinstance(part, exp.EQ) and any(
        c.table and c.table not in local for c in part.find_all(exp.Column))]
    return len(tests) > 1


def _filter_only(test: exp.Expression) -> bool:
    """Is the truth of ``test`` (``x IN (SELECT ...)``, ``x = ANY (SELECT ...)``) only used to
    keep rows: a WHERE condition or under AND / OR there?  Elsewhere it is a value: NULL when
    nothing matches and the subquery has a NULL, which the optimizer's join (FALSE then)
    loses -- ``WHERE (x IN (SELECT ...)) IS NULL`` kept no row, nor did ``NOT`` over it; a
    filter drops NULL and FALSE alike."""
    node = test
    while isinstance(node.parent, (exp.And, exp.Or, exp.Paren)):
        node = node.parent
    return isinstance(node.parent, (exp.Where, exp.Having))


def _one_row(query: exp.Expression) -> bool:
    """Does ``query`` surely return one row: an aggregating SELECT (``is_grouped``: not a
    window call or a nested query's aggregate) without GROUP BY, HAVING, LIMIT or OFFSET?"""
    return isinstance(query, exp.Select) and not any(
        query.args.get(key) for key in ("group", "having", "limit", "offset", "qualify")) and \
        is_grouped(query)


def _correlated(query: exp.Expression) -> bool:
    """Does a column in ``query`` (at any depth) name a table defined outside it?"""
    local = local_names(query)
    return any(c.table and c.table not in local for c in query.find_all(exp.Column))
