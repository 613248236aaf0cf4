"""A CAST to a number, date/time or INTERVAL type stays, whatever type sqlglot infers for its
operand.

sqlglot's ``canonicalize`` drops a CAST whose operand it has typed as the target already.
Its types are not DuckDB's, nor tdbsql's: a decimal literal is a DOUBLE to it, so
``CAST(i * 0.5 AS DOUBLE)`` lost its cast and returned the DECIMAL ``i * 0.5`` (so did
``CAST(round(d, 1) AS DOUBLE)`` of a DECIMAL column); ``j + 1`` of an INTEGER column is an
INTEGER to it where tdbsql computes a BIGINT, so ``CAST(j + 1 AS INTEGER)`` came back a
BIGINT and ``CAST(j * 200000000 AS INTEGER)`` past INTEGER's range was no error; ``ts - ts``
is a TIMESTAMP to it where it is an INTERVAL, so ``CAST(ts - ts AS TIMESTAMP)`` returned the
INTERVAL where DuckDB has no such cast.  A cast to the type a value already has costs
nothing in the engine, so every cast to such a type is kept.

In: the rule (sqlglot's ``canonicalize``).  Out: the same rule, run with the inferred types
of those casts' operands hidden (the only thing the dropping reads), then put back.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.optimizer.canonicalize import canonicalize

from .hidden_types import types_swapped

_KEPT = exp.DataType.NUMERIC_TYPES | exp.DataType.TEMPORAL_TYPES | {exp.DataType.Type.INTERVAL}


def casts_kept(rule):
    """``rule``, or for sqlglot's ``canonicalize`` ``keep_casts(rule)``: for the optimizer's
    rule tuple."""
    return keep_casts(rule) if rule is canonicalize else rule


def keep_casts(rule):
    """``rule`` leaving every CAST to a number, date/time or INTERVAL type in place.

    >>> import sqlglot
    >>> from sqlglot.optimizer.annotate_types import annotate_types
    >>> def tree():
    ...     return annotate_types(sqlglot.parse_one("SELECT CAST(t.x * 0.5 AS DOUBLE) FROM t",
    ...                                             read="duckdb"), schema={"t": {"x": "INT"}})
    >>> canonicalize(tree()).sql("duckdb")
    'SELECT (t.x * 0.5) FROM t'
    >>> keep_casts(canonicalize)(tree()).sql("duckdb")
    'SELECT CAST(t.x * 0.5 AS DOUBLE) FROM t'
    """
    return types_swapped(rule, lambda expression: (
        (cast.this, None) for cast in expression.find_all(exp.Cast)
        if cast.to.this in _KEPT and cast.this is not None and cast.this.type is not None))
