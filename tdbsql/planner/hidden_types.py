"""An optimizer rule run with some nodes' inferred types swapped, then put back.

sqlglot's rules read the types ``annotate_types`` inferred, and some of those are not DuckDB's
(``kept_casts``, ``extract_operands``).  Rather than copy a rule to change one decision, the
rule runs with the nodes that decision reads showing another type for that run only.
"""

from __future__ import annotations

from typing import Callable, Iterable

from sqlglot import exp


def types_swapped(rule, swaps: Callable[[exp.Expression], Iterable[tuple]]):
    """``rule`` run with each node ``swaps(expression)`` gives (``(node, type shown)``)
    typed so, every node's own type put back after."""
    def apply(expression, **kwargs):
        hidden = []
        for node, shown in list(swaps(expression)):
            hidden.append((node, node.type))
            node.type = shown
        try:
            return rule(expression, **kwargs)
        finally:
            for node, kind in hidden:
                node.type = kind
    apply.__name__ = getattr(rule, "__name__", "rule")
    return apply
