"""Select items that sqlglot would name after the column they read, named as DuckDB does.

sqlglot's optimizer names an unaliased ``CAST(x AS INTEGER)`` (``x::INTEGER``, TRY_CAST) ``x``,
the name of the column inside, and then binds ``ORDER BY x`` to that item: ``SELECT
x::INTEGER FROM t ORDER BY x`` sorted the integers where DuckDB, whose name for the item is
``CAST(x AS INTEGER)``, sorts by the column ``x`` itself (strings '10' before '9').  Each such
item is aliased by its DuckDB name before the optimizer runs, in every SELECT (the outermost,
a set operation's branches, IN / EXISTS / scalar subqueries; a derived table's items are
named already: ``subquery_names``), so that a bare name in ORDER BY, QUALIFY or a window
means the column.
"""

from __future__ import annotations

from sqlglot import exp

from .column_names import column_name


def alias_shadowing_items(tree: exp.Expression) -> exp.Expression:
    """Alias every unaliased select item that is no column but that sqlglot names after one
    by its DuckDB name (in place)."""
    for select in list(tree.find_all(exp.Select)):
        for item in list(select.expressions):
            if _shadows(item):
                item.replace(exp.Alias(this=item.copy(),
                                       alias=exp.to_identifier(column_name(item), quoted=True)))
    return tree


def _shadows(item: exp.Expression) -> bool:
    return isinstance(item, (exp.Cast, exp.TryCast)) and bool(item.output_name)
