"""Subqueries compared with a value must return as many columns as the value has: one for
``x IN (SELECT ...)`` and ``x > ANY (SELECT ...)``, n for ``(a, b) IN (SELECT ...)``.  DuckDB's
binder refuses the others ("Subquery returns 2 columns - expected 1"); unchecked, the engine
compared ``x`` with the first column and answered.  Runs after ``qualify`` has expanded ``*``,
so a subquery's width is its select list's length.  (A scalar subquery's width is checked
when it runs, ``engine.subqueries``; EXISTS takes any width.)  A derived table may not be
given more column names than it has columns (``(SELECT 1, 2) AS z(a, b, c)``), as in DuckDB.
"""

from __future__ import annotations

from sqlglot import exp

from ..errors import SqlError
from .parse import span_over


def check_subquery_widths(expression: exp.Expression) -> exp.Expression:
    """``expression`` unchanged; an SqlError for the first subquery of the wrong width."""
    for node in expression.find_all(exp.In, exp.Any, exp.All):
        if isinstance(node, exp.In):
            query, value = node.args.get("query"), node.this
        else:
            query, value = node.this, node.parent.this if isinstance(
                node.parent, exp.Binary) else None
        width = _width(query)
        expected = len(value.expressions) if isinstance(value, exp.Tuple) else 1
        if width is not None and width != expected:
            raise SqlError(f"subquery returns {width} columns - expected {expected}",
                           span=span_over(query))
    return expression


def check_derived_widths(tree: exp.Expression, sql: str) -> exp.Expression:
    """``tree`` unchanged; an SqlError for a derived table given more column names than its
    select list has items (before ``qualify``, which drops such names; a ``*`` list is
    counted once expanded, by ``rename_table_columns`` for tables)."""
    for derived in tree.find_all(exp.Subquery):  # FROM (...) AS z(a, b, c)
        alias = derived.args.get("alias")
        if not isinstance(alias, exp.TableAlias):
            continue  # a scalar subquery's item alias
        width = _width(derived.this)
        if width is not None and len(alias.columns) > width:
            raise SqlError(f'table "{alias.name}" has {width} columns available but '
                           f"{len(alias.columns)} columns specified", sql, span_over(alias))
    return tree


def _width(query: exp.Expression | None) -> int | None:
    """The number of columns ``query`` (a subquery or query; a set operation's first branch)
    returns, if its select list is known (no ``*`` left)."""
    items = query.selects if isinstance(query, exp.Query) else []
    return None if not items or any(item.is_star for item in items) else len(items)
