"""EXTRACT's operand is cast to a TIMESTAMP only when it is a string.

sqlglot's ``canonicalize`` wraps the operand of every EXTRACT not typed DATE / TIMESTAMP in a
CAST to DATETIME -- an INTERVAL too, so ``extract(hour FROM INTERVAL '100 hours')`` became a
cast DuckDB does not have (DuckDB gives the interval's hour, 100).  The engine's date_part
reads dates, timestamps, times and intervals as they are, and a string constant as a
TIMESTAMP, so only a string operand keeps sqlglot's cast.

In: the rule (``canonicalize``, maybe wrapped).  Out: the same rule, run with every other
EXTRACT operand typed TIMESTAMP (the only thing the coercion reads), its type put back after.
"""

from __future__ import annotations

from sqlglot import exp

from .hidden_types import types_swapped

_STAMP = exp.DataType.build("TIMESTAMP")


def extract_operands_kept(rule):
    """``rule``, or for sqlglot's ``canonicalize`` (however wrapped) the rule leaving
    non-string EXTRACT operands uncast: for the optimizer's rule tuple."""
    if getattr(rule, "__name__", None) != "canonicalize":
        return rule
    return types_swapped(rule, lambda expression: (
        (extract.expression, _STAMP) for extract in expression.find_all(exp.Extract)
        if extract.expression is not None
        and not extract.expression.is_type(*exp.DataType.TEXT_TYPES)))
