"""Split a boolean expression into its top-level AND terms, join terms back, and strip table
qualifiers (a scan sees its own column names)."""

from __future__ import annotations

from sqlglot import exp

from .correlated import Correlated


def conjuncts(node: exp.Expression | None) -> list[exp.Expression]:
    if node is None:
        return []
    if isinstance(node, exp.Paren):
        return conjuncts(node.this)
    if isinstance(node, exp.And):
        return conjuncts(node.this) + conjuncts(node.expression)
    if isinstance(node, exp.Boolean) and node.this:
        return []  # TRUE: sqlglot writes "ON TRUE AND TRUE" once it lifts the join keys out
    return [node]


def and_all(terms: list[exp.Expression]) -> exp.Expression | None:
    if not terms:
        return None
    result = terms[0]
    for term in terms[1:]:
        result = exp.and_(result, term, copy=False)
    return result


def tables_of(node: exp.Expression) -> set[str]:
    """The table qualifiers of the columns ``node`` reads ('' for an unqualified one)."""
    return {column.table for column in node.find_all(exp.Column)}


# x > ALL (SELECT ...) has no Subquery; a correlated one is a Correlated call
SUBQUERIES = (exp.Subquery, exp.Exists, exp.Any, exp.All, Correlated)


def has_subquery(*nodes: exp.Expression | None) -> bool:
    """Does any of ``nodes`` hold a subquery (its result is cached per node, so such a node
    is never copied)?"""
    return any(node is not None and node.find(*SUBQUERIES) is not None for node in nodes)


def is_settled(position: int, settled: int) -> bool:
    """Is conjunct ``position`` (``conjuncts`` order) marked in the ``settled`` bit set (the
    zone maps showed it true for every cell of a tile; positions from 64 on never are)?"""
    return position < 64 and bool(settled >> position & 1)


def without_settled(node: exp.Expression | None, settled: int) -> exp.Expression | None:
    """``node`` without the conjuncts whose position (``conjuncts`` order, below 64) has its
    bit set in ``settled`` -- those the zone maps showed true for every cell of a tile; None
    when nothing is left.  The kept terms are copies (``node`` may be in use on other
    threads); a condition holding a subquery is kept whole (its result is cached per node)."""
    if not settled or node is None or has_subquery(node):
        return node
    return and_all([term.copy() for position, term in enumerate(conjuncts(node))
                    if not is_settled(position, settled)])


def unqualified(node: exp.Expression | None) -> exp.Expression | None:
    """``node`` with table qualifiers dropped: the scan sees its own column names."""
    if node is None:
        return None
    return node.transform(
        lambda n: exp.column(n.name, quoted=True) if isinstance(n, exp.Column) else n)
