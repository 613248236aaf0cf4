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
"""

from __future__ import annotations

import numpy as np

from ..format.delete_condition import ConditionOp

NO_VALUE = (ConditionOp.LT, np.float32(-np.inf))  # false for every cell, NaN too
EVERY_VALUE = (ConditionOp.GE, np.float32(-np.inf))  # true for every number, and NaN in SQL


def float32_comparison(op: ConditionOp, value) -> tuple[ConditionOp, np.float32]:
    """``field op value`` on float32 cells widened to DOUBLE, as ``field op' f`` on float32
    (``value`` a DOUBLE, or an integer or DECIMAL that DuckDB casts to one)."""
    value = float(value)
    rounded = _rounded(value)
    if float(rounded) == value:
        return op, rounded
    if op == ConditionOp.EQ:
        return NO_VALUE
    if op == ConditionOp.NE:
        return EVERY_VALUE
    if op in (ConditionOp.LT, ConditionOp.LE):
        below = rounded if float(rounded) < value else _next(rounded, -np.inf)
        return ConditionOp.LE, below
    above = rounded if float(rounded) > value else _next(rounded, np.inf)
    return ConditionOp.GE, above


def float32_members(values) -> list[np.float32]:
    """The IN-list constants (as DOUBLEs) that are float32 values (the others match none)."""
    return [_rounded(v) for v in values if float(_rounded(v)) == float(v)]


def _rounded(value) -> np.float32:
    with np.errstate(over="ignore"):  # past float32's range: an infinity
        return np.float32(float(value))


def _next(value: np.float32, toward: float) -> np.float32:
    with np.errstate(over="ignore"):  # from the largest float32: an infinity
        return np.nextafter(value, np.float32(toward))
