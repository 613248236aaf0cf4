"""INTERVALs of an amount of one unit, as DuckDB builds them: ``to_years(n)`` ...
``to_microseconds(n)`` and ``INTERVAL (x) unit``, per row or of a constant.

``to_seconds`` and ``to_milliseconds`` take a DOUBLE (a DECIMAL or integer converts to one):
the microseconds are the amount times a million (a thousand), rounded half to even.  The other
``to_*`` take an INTEGER (years, quarters, months, weeks, days, decades, centuries, millennia)
or a BIGINT (hours, minutes, microseconds): a fraction is DuckDB's binder error, a count past
the type its conversion error.  ``INTERVAL (x) unit`` reads ``x`` as a DOUBLE and, but for
seconds and milliseconds, cuts it toward zero before converting it (``INTERVAL (1.5) HOUR``
is one hour).  A part past DuckDB's range -- 32-bit months and days, 64-bit microseconds -- is
its error ``Interval value 3000000000 hours out of range``.  NULL amounts give NULL.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from . import datetime_ops as dto
from .interval_rows import built
from .interval_units import UNITS, outside
from .value_types import cast_value, kind, valid_rows

_FRACTIONAL = ("second", "millisecond")  # their to_* take a DOUBLE
_BIGINT_COUNTS = ("hour", "minute", "microsecond")  # their to_* take a BIGINT, others INTEGER
_PLURALS = {"century": "centuries", "millennium": "millennia"}


def of_counts(counts, unit: str, error, name: str) -> pa.Array:
    """``to_<unit>(counts)`` (``name`` the function as written) of an array of numbers."""
    unit = dto.spelled(unit)
    if unit in _FRACTIONAL:
        if kind(counts.type) not in ("int", "uint", "float", "decimal", "null"):
            raise error(f"No function matches the given name and argument types "
                        f"'{name}({counts.type})'")
        return built(*_fraction_parts(_doubles(counts, error), unit, error), error)
    if kind(counts.type) not in ("int", "uint", "null"):
        raise error(f"No function matches the given name and argument types "
                    f"'{name}({counts.type})'; it takes a whole number")
    valid = valid_rows(counts)
    try:
        whole = np.asarray(counts.cast(pa.int64()).fill_null(0).to_numpy(
            zero_copy_only=False), np.int64)
    except pa.ArrowInvalid:  # a UBIGINT past BIGINT
        raise error(f"No function matches the given name and argument types "
                    f"'{name}({counts.type})'") from None
    if unit not in _BIGINT_COUNTS:
        _check_argument(whole, valid, unit, "INT64", error)
    return built(*_count_parts(whole, valid, unit, error), error)


def amount_parts(amounts, unit: str, error):
    """(months, days, microseconds, valid) of ``INTERVAL (amounts) unit`` (an array): each
    amount read as a DOUBLE, cut toward zero unless the unit is seconds or milliseconds."""
    if dto.spelled(unit) not in UNITS:
        raise error(f"unknown INTERVAL unit {unit!r}")
    unit = dto.spelled(unit)
    doubles = _doubles(amounts, error)
    if unit in _FRACTIONAL:
        return _fraction_parts(doubles, unit, error)
    numbers, valid = doubles
    whole = np.trunc(numbers)
    _check_argument(whole, valid, unit, "DOUBLE", error)
    return _count_parts(whole.astype(np.int64), valid, unit, error)


def of_amounts(amounts, unit: str, error) -> pa.Array:
    """``INTERVAL (amounts) unit`` of an array (``amount_parts``)."""
    return built(*amount_parts(amounts, unit, error), error)


def _doubles(values, error) -> tuple[np.ndarray, np.ndarray]:
    """The values as DOUBLEs (NULLs as 0) and which are valid."""
    try:
        doubles = cast_value(values, pa.float64())
    except ValueError as err:
        raise error(str(err)) from None
    return (np.asarray(doubles.fill_null(0.0).to_numpy(zero_copy_only=False), np.float64),
            valid_rows(doubles))


def _check_argument(numbers: np.ndarray, valid: np.ndarray, unit: str, source: str,
                    error) -> None:
    """DuckDB's conversion error for a count past the INTEGER (BIGINT) its to_* takes."""
    bits = 64 if unit in _BIGINT_COUNTS else 32
    bad = valid & outside(numbers, bits)
    if bad.any():
        value = numbers[bad][0]
        shown = repr(float(value)) if source == "DOUBLE" else str(int(value))
        raise error(f"Type {source} with value {shown} can't be cast because the value is "
                    f"out of range for the destination type INT{bits}")


def _count_parts(counts: np.ndarray, valid: np.ndarray, unit: str, error):
    """(months, days, microseconds, valid) of whole ``counts`` of ``unit``."""
    months, days, micros = UNITS[unit]
    per, limit = (months or days, 2**31) if months or days else (micros, 2**63)
    counts = np.where(valid, counts, 0)
    bad = (counts < -(limit // per)) | (counts > (limit - 1) // per)
    if bad.any():
        raise error(f"Interval value {int(counts[bad][0])} {_plural(unit)} out of range")
    return counts * months, counts * days, counts * micros, valid


def _fraction_parts(doubles, unit: str, error):
    """(months, days, microseconds, valid) of DOUBLE amounts of seconds or milliseconds:
    the microseconds rounded half to even, as DuckDB's cast of a DOUBLE to BIGINT."""
    numbers, valid = doubles
    with np.errstate(invalid="ignore", over="ignore"):
        micros = numbers * UNITS[unit][2]
        bad = valid & outside(micros, 64)
    if bad.any():
        raise error(f"Interval value {numbers[bad][0]:f} {_plural(unit)} out of range")
    zeros = np.zeros(len(numbers), np.int64)
    return zeros, zeros, np.rint(np.where(valid, micros, 0.0)).astype(np.int64), valid


def _plural(unit: str) -> str:
    return _PLURALS.get(unit, unit + "s")
