"""The row count of LIMIT / OFFSET / FETCH, as DuckDB reads it, made a plain integer literal.

sqlglot's planner takes the count's text as an int.  DuckDB casts a constant count to BIGINT:
``LIMIT 3 + 2`` is 5, ``LIMIT 2.5`` 3 (rounded half away from zero), ``LIMIT '3'`` 3; ``LIMIT
ALL`` and ``LIMIT NULL`` are no limit.  A negative count is its binder error, a count read from
a subquery is refused by name, anything else is the SqlError naming what was written.
"""

from __future__ import annotations

import decimal

from sqlglot import exp
from sqlglot.optimizer.simplify import simplify

from ..errors import SqlError, UnsupportedSql
from .parse import span_of


def constant_count(node: exp.Expression, count: exp.Expression | None, sql: str) -> None:
    """``count`` (the row count of ``node``) replaced by its integer literal, in place."""
    if count is None or (isinstance(node, exp.Limit) and
                         (isinstance(count, exp.Null) or node.is_limit_all)):
        return  # no count, or no limit
    if any(count.find_all(exp.Query)):
        raise UnsupportedSql(f"{node.key.upper()} with a subquery as its row count is not "
                             f"supported: {count.sql(dialect='duckdb')!r}")
    value = _value(count)
    if value is None:
        raise SqlError(f"{node.key.upper()} takes a non-negative integer constant, not "
                       f"{count.sql()!r}", sql, span_of(count))
    if value < 0:
        raise SqlError("LIMIT/OFFSET cannot be negative", sql, span_of(count))
    count.replace(exp.Literal.number(value))


def _value(count: exp.Expression) -> int | None:
    """The count as DuckDB's BIGINT cast gives it, or None when it is no constant number."""
    if any(count.find_all(exp.Column)):
        return None
    folded = count if isinstance(count, exp.Literal) else simplify(count.copy(), dialect="duckdb")
    negative = isinstance(folded, exp.Neg)
    if negative:
        folded = folded.this
    if not isinstance(folded, exp.Literal):
        return None
    try:
        number = decimal.Decimal(folded.name.strip())
    except decimal.InvalidOperation:
        return None
    if not number.is_finite():
        return None
    whole = int(number.to_integral_value(rounding=decimal.ROUND_HALF_UP))
    return -whole if negative else whole
