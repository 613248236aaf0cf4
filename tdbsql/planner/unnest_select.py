"""``unnest(...)`` in the select list of a grouped or DISTINCT query, made a projection over
the grouped rows, as DuckDB evaluates it (after GROUP BY / HAVING, before DISTINCT / ORDER BY).

sqlglot's planner would take ``unnest(list(x))`` for an aggregate and group by ``unnest(l)``
under DISTINCT; so such a SELECT becomes a SELECT over a derived table computing everything
but the unnests (``engine/unnest.py`` then repeats the rows):

    SELECT DISTINCT k, unnest(list(x)) AS u FROM t GROUP BY k ORDER BY u
    -> SELECT DISTINCT "k", "u" FROM (
         SELECT "__q"."__unnest_0" AS "k", unnest("__q"."__unnest_1") AS "u"
         FROM (SELECT k AS "__unnest_0", list(x) AS "__unnest_1" FROM t GROUP BY k) AS "__q"
       ) ORDER BY u

(without DISTINCT, the middle SELECT is the query).
Only where every unnest is a whole select item and ORDER BY names output columns (by name or
position); other such queries stay as they are (and are refused downstream).
"""

from __future__ import annotations

from sqlglot import exp

from .column_names import column_name

_INPUT = "__unnest_input"
_ROWS = "__unnest_rows"


def subqueries_in_unnest(tree: exp.Expression) -> exp.Expression:
    """``tree`` with each subquery written as unnest's argument (``unnest((SELECT ...))``)
    in parentheses: sqlglot's scopes take a query right under unnest for a table function's
    and never qualify its columns; in parentheses it is an ordinary subquery."""
    for call in tree.find_all(exp.Explode):
        if isinstance(call.this, exp.Query):
            call.set("this", exp.Paren(this=call.this))
    return tree


def unnest_after_grouping(tree: exp.Expression) -> exp.Expression:
    """``tree`` with each grouped or DISTINCT SELECT that unnests rewritten (see above)."""
    for select in list(tree.find_all(exp.Select)):
        if _needs_rewrite(select):
            rewritten = _rewritten(select)
            if select is tree:
                tree = rewritten
            else:
                select.replace(rewritten)
    return tree


def _unnest_of(item: exp.Expression) -> exp.Explode | None:
    inner = item.this if isinstance(item, exp.Alias) else item
    return inner if isinstance(inner, exp.Explode) else None


def _own(item: exp.Expression, select: exp.Select, kind) -> list:
    """The ``kind`` nodes of select item ``item`` that belong to ``select``, not to a
    subquery inside it (``unnest((SELECT list(x) FROM t))`` is not grouped)."""
    return [node for node in item.find_all(kind) if node.find_ancestor(exp.Select) is select]


def _needs_rewrite(select: exp.Select) -> bool:
    items = select.expressions
    if not any(_own(item, select, exp.Explode) for item in items):
        return False
    grouped = select.args.get("group") is not None or select.args.get("having") is not None \
        or any(_own(item, select, exp.AggFunc) for item in items)
    distinct = select.args.get("distinct") is not None
    if not (grouped or distinct) or select.args.get("distinct") is not None and \
            select.args["distinct"].args.get("on") is not None:
        return False
    if any(_own(item, select, exp.Explode) and _unnest_of(item) is None for item in items):
        return False
    if any(isinstance(item, exp.Star) or _own(item, select, exp.Window) for item in items):
        return False
    names = {column_name(item) for item in items}
    order = select.args.get("order")
    for ordered in (order.expressions if order else []):
        key = ordered.this
        if not ((isinstance(key, exp.Literal) and key.is_int) or
                (isinstance(key, exp.Column) and not key.table and key.name in names)):
            return False
    return True


def _rewritten(select: exp.Select) -> exp.Select:
    inner = select.copy()
    outer_items, inner_items = [], []
    for index, item in enumerate(select.expressions):
        explode = _unnest_of(item)
        name = column_name(item)
        if explode is None:
            hidden = f"__unnest_{index}"
            inner_items.append(exp.alias_(item.unalias().copy(), hidden, quoted=True))
            outer_items.append(exp.alias_(exp.column(hidden, _INPUT, quoted=True), name,
                                          quoted=True))
        else:
            hidden = f"__unnest_{index}"
            inner_items.append(exp.alias_(explode.this.copy(), hidden, quoted=True))
            call = exp.Explode(this=exp.column(hidden, _INPUT, quoted=True))
            outer_items.append(exp.alias_(call, name, quoted=True))
    for key in ("order", "limit", "offset", "distinct", "with"):
        inner.set(key, None)
    inner.set("expressions", inner_items)
    outer = exp.select(*outer_items).from_(exp.Subquery(
        this=inner, alias=exp.TableAlias(this=exp.to_identifier(_INPUT, quoted=True))))
    top = outer
    if select.args.get("distinct") is not None:  # DISTINCT over the unnested rows
        names = [column_name(item) for item in outer_items]
        top = exp.select(*[exp.alias_(exp.column(name, _ROWS, quoted=True), name, quoted=True)
                           for name in names]).from_(exp.Subquery(
            this=outer, alias=exp.TableAlias(this=exp.to_identifier(_ROWS, quoted=True))))
    for key in ("order", "limit", "offset", "distinct", "with"):
        if select.args.get(key) is not None:
            top.set(key, select.args[key].copy())
    return top
