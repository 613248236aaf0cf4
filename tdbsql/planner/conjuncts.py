"""Split a boolean expression into its top-level AND terms, and join terms back."""

from __future__ import annotations

from sqlglot import exp


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
