"""``CAST(2.5 AS DOUBLE)``: a decimal literal cast to DOUBLE stays a DOUBLE after optimizing.

In DuckDB ``2.5`` is a DECIMAL, whose casts round half away from zero (``CAST(2.5 AS
INTEGER)`` is 3, ``CAST(1.005 AS DECIMAL(10,2))`` is 1.01); ``2.5::DOUBLE`` is a DOUBLE, whose
casts round to even (2) and from its binary value (1.00).  The engine types the bare literal
as DuckDB does (a decimal128, ``engine/decimals.py``).  sqlglot types it DOUBLE and its
optimizer drops the "redundant" cast, which would leave the bare literal, read as a DECIMAL.
So before the optimizer such a literal is written in exponent form (``2.5e0``), the form of a
DOUBLE literal, which the cast may then drop.
"""

from __future__ import annotations

from sqlglot import exp

_DOUBLE = (exp.DataType.Type.DOUBLE,)


def double_literals(tree: exp.Expression) -> exp.Expression:
    """Decimal literals under a CAST to DOUBLE in exponent form (in place: a literal is never
    the root).

    >>> import sqlglot
    >>> double_literals(sqlglot.parse_one("SELECT 2.5::DOUBLE, -1.5::DOUBLE, 2.5",
    ...                                   read="duckdb")).sql("duckdb")
    'SELECT CAST(2.5e0 AS DOUBLE), -CAST(1.5e0 AS DOUBLE), 2.5'
    """
    for cast in list(tree.find_all(exp.Cast)):
        if cast.to.this not in _DOUBLE:
            continue
        literal = cast.this.this if isinstance(cast.this, exp.Neg) else cast.this
        if isinstance(literal, exp.Literal) and not literal.is_string \
                and "." in literal.this and "e" not in literal.this.lower():
            literal.replace(exp.Literal.number(literal.this + "e0"))
    return tree
