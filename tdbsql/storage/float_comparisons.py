"""A DELETE comparison of a FLOAT (float32) field with DOUBLE constants (``f = 0.1e0``,
``f < 1e30``, ``f IN (0.1e0, 2)``), as the same comparison with float32 values, so that a TileDB
delete commit (which compares in the field's own type) removes exactly the cells DuckDB's
DELETE does.

DuckDB compares a FLOAT with an integer or DECIMAL constant as FLOATs (the constant rounded to
float32), but as soon as one constant of the comparison (of an IN list, of a BETWEEN) is a
DOUBLE it widens the cell and every constant to DOUBLE and compares exactly: ``0.1f = 0.1e0``
is false.  Rounding the constant to float32 instead would delete cells DuckDB keeps.  So a
constant that is no float32 value gives: ``f = c`` no value, ``f <> c`` every value (NaN too:
SQL orders it above every number), ``f < c`` / ``f <= c`` ``f <=`` the largest float32 below
``c``, ``f > c`` / ``f >= c`` ``f >=`` the smallest above it (infinities included, so
constants past float32's range work too); IN-list members that are no float32 value match
nothing and are dropped.  NaN cells are judged by ``storage.delete_write_back`` from the
rewritten comparison, which holds for NaN exactly where the original does.

The API is ``storage.integer_comparisons``'s: ``comparison``, ``members``, ``no_value`` and
``every_value`` of the field's numpy dtype (float32; a float64 field compares exactly).
"""

from __future__ import annotations

import numpy as np

from ..format.delete_condition import ConditionOp



def comparison(op: ConditionOp, value, dtype: np.dtype) -> tuple[ConditionOp, np.floating]:
    """``field op value`` on float cells widened to DOUBLE, as ``field op' f`` on cells of
    ``dtype`` (``value`` a DOUBLE, or an integer or DECIMAL that DuckDB casts to one)."""
    value = float(value)
    rounded = _rounded(value, dtype)
    if float(rounded) == value:
        return op, rounded
    if op == ConditionOp.EQ:
        return no_value(dtype)
    if op == ConditionOp.NE:
        return every_value(dtype)
    if op in (ConditionOp.LT, ConditionOp.LE):
        below = rounded if float(rounded) < value else _next(rounded, -np.inf)
        return ConditionOp.LE, below
    above = rounded if float(rounded) > value else _next(rounded, np.inf)
    return ConditionOp.GE, above


def members(values, dtype: np.dtype) -> list[np.floating]:
    """The IN-list constants (as DOUBLEs) that are values of ``dtype`` (the others match
    none)."""
    return [_rounded(v, dtype) for v in values if float(_rounded(v, dtype)) == float(v)]


def no_value(dtype: np.dtype) -> tuple[ConditionOp, np.floating]:
    """A comparison no cell satisfies, NaN neither: ``f < -inf``."""
    return ConditionOp.LT, dtype.type(-np.inf)


def every_value(dtype: np.dtype) -> tuple[ConditionOp, np.floating]:
    """A comparison every number satisfies (and NaN in SQL): ``f >= -inf``."""
    return ConditionOp.GE, dtype.type(-np.inf)


def _rounded(value, dtype: np.dtype) -> np.floating:
    with np.errstate(over="ignore"):  # past the type's range: an infinity
        return dtype.type(float(value))


def _next(value: np.floating, toward: float) -> np.floating:
    with np.errstate(over="ignore"):  # from the largest value: an infinity
        return np.nextafter(value, value.dtype.type(toward))
