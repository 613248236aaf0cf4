"""DuckDB's names for the columns of a derived table or a CTE.

sqlglot's optimizer names an unaliased select item of a subquery ``_col_N``; DuckDB names it
as it names a result column (``count_star()``, ``(a + 1)``: ``planner.column_names``), and a
name that repeats an earlier one (case-insensitively) gets ``_1``, ``_2``, ... -- after the
alias's column list renamed the first columns: ``(SELECT a, a FROM t) s`` has ``a``, ``a_1``,
``(SELECT a, a FROM t) s(x)`` has ``x``, ``a``.  Aliasing the items so before the optimizer
runs shows those names through ``*`` and lets the outer query read them
(``SELECT "count_star()" FROM (SELECT count(*) FROM t)``).  A select list with a ``*`` is
not deduplicated (the star's names are not known yet); its other items are named all the same.
"""

from __future__ import annotations

from sqlglot import exp

from .column_names import column_name
from .table_aliases import unique_names


def name_subquery_columns(tree: exp.Expression) -> exp.Expression:
    """Alias every select item of each derived table and CTE by its DuckDB name (in place)."""
    for node in list(tree.find_all(exp.Subquery, exp.CTE)):
        if isinstance(node, exp.Subquery) and not isinstance(node.parent, (exp.From, exp.Join)):
            continue  # IN / EXISTS / scalar subqueries: their names are never seen
        alias = node.args.get("alias")
        renamed = [column.name for column in alias.columns] if alias is not None else []
        for select in _branches(node.this):
            _name_items(select, renamed)
    return tree


def _branches(query: exp.Expression) -> list[exp.Select]:
    """The SELECTs of a query: itself, or each side of its UNION / INTERSECT / EXCEPT."""
    if isinstance(query, exp.SetOperation):
        return _branches(query.this) + _branches(query.expression)
    return [query] if isinstance(query, exp.Select) else []


def _name_items(select: exp.Select, renamed: list[str]) -> None:
    items = select.expressions
    if any(item.is_star for item in items):
        names = [None if item.is_star or isinstance(item, (exp.Alias, exp.Column))
                 else column_name(item) for item in items]
    else:
        names = unique_names([renamed[i] if i < len(renamed) else column_name(item)
                              for i, item in enumerate(items)])
    select.set("expressions", [_aliased(item, name) for item, name in zip(items, names)])


def _aliased(item: exp.Expression, name: str | None) -> exp.Expression:
    """``item`` under the name ``name`` (None, or already its name: as it is)."""
    if name is None or (isinstance(item, (exp.Alias, exp.Column)) and item.alias_or_name == name):
        return item
    value = item.unalias() if isinstance(item, exp.Alias) else item
    # not exp.alias_, which gives a (scalar) subquery a table alias instead
    return exp.Alias(this=value, alias=exp.to_identifier(name, quoted=True))
