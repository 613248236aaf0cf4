"""A DELETE comparison of an integer field with a constant that is none of its values
(``i < 2.5``, ``i = 1.5``, ``u > -1``, ``i <= 99999999999``), as the same comparison with one
that is, so that a TileDB delete commit (which compares in the field's own type) removes
exactly the cells DuckDB's DELETE does.

DuckDB compares an integer with a DECIMAL constant (``2.5``) exactly, and with a DOUBLE one
(``2.5e0``) as DOUBLEs -- exact too while the constant is below 2**53 in magnitude, as every
integer with an exact DOUBLE sorts where it should; past that a 64-bit integer rounds on its
way to DOUBLE and the comparison is refused.  On integers ``i < 2.5`` is ``i < 3``,
``i <= 2.5`` is ``i <= 2``, ``i > 2.5`` is ``i > 2``, ``i >= 2.5`` is ``i >= 3``; ``i = 2.5``
holds for no value and ``i <> 2.5`` for every one, as do comparisons past the type's range:
those become ``i < min`` (no value) and ``i >= min`` (every value).  On NULL cells the
condition stays NULL, which ``storage.delete_write_back`` takes care of.

The API is ``storage.float_comparisons``'s: ``comparison``, ``members``, ``no_value`` and
``every_value`` of the field's numpy dtype, the numbers given as values of that dtype.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import numpy as np

from ..errors import UnsupportedSql
from ..format.delete_condition import ConditionOp

DOUBLE_EXACT = 2**53


def comparison(op: ConditionOp, value: int | Decimal | float,
               dtype: np.dtype) -> tuple[ConditionOp, np.integer]:
    """``field op value`` on integers of ``dtype`` as ``field op' n`` with ``n`` in range."""
    limits = np.iinfo(dtype)
    lo, hi = int(limits.min), int(limits.max)
    never, always = no_value(dtype), every_value(dtype)
    if isinstance(value, float) and math.isinf(value):  # past every value of the type
        value = lo - 1 if value < 0 else hi + 1
    _refuse_rounding(value, dtype)
    exact = Fraction(value)
    if op == ConditionOp.EQ or op == ConditionOp.NE:
        if exact.denominator != 1 or not lo <= exact <= hi:
            return never if op == ConditionOp.EQ else always
        return op, dtype.type(int(exact))
    # i < v is i < ceil(v), i >= v is i >= ceil(v); i <= v is i <= floor(v), i > v is i > floor(v)
    n = math.ceil(exact) if op in (ConditionOp.LT, ConditionOp.GE) else math.floor(exact)
    upward = op in (ConditionOp.LT, ConditionOp.LE)  # holds below a bound, not above one
    strict_low = n <= lo if op in (ConditionOp.LT, ConditionOp.GE) else n < lo
    strict_high = n > hi if op in (ConditionOp.LT, ConditionOp.GE) else n >= hi
    if strict_low:
        return never if upward else always
    if strict_high:
        return always if upward else never
    return op, dtype.type(n)


def no_value(dtype: np.dtype) -> tuple[ConditionOp, np.integer]:
    """A comparison no value of the integer type satisfies: ``i < min``."""
    return ConditionOp.LT, dtype.type(np.iinfo(dtype).min)


def every_value(dtype: np.dtype) -> tuple[ConditionOp, np.integer]:
    """A comparison every value of the integer type satisfies: ``i >= min``."""
    return ConditionOp.GE, dtype.type(np.iinfo(dtype).min)


def members(values, dtype: np.dtype) -> list[np.integer]:
    """The IN-list constants that are values of the integer type (the others match none):
    those whose equality ``comparison`` does not turn into ``no_value``."""
    never = no_value(dtype)
    return [n for op, n in (comparison(ConditionOp.EQ, value, dtype) for value in values)
            if (op, n) != never]


def _refuse_rounding(value, dtype: np.dtype) -> None:
    if isinstance(value, float) and abs(value) >= DOUBLE_EXACT and np.dtype(dtype).itemsize == 8 \
            and not math.isinf(value):
        raise UnsupportedSql(f"DELETE: comparing a 64-bit integer with the DOUBLE {value!r} "
                             "is done in DOUBLE, which rounds the integers; write the "
                             "constant without an exponent to compare exactly")
