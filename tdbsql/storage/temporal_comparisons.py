"""A DELETE comparison of a datetime field with a date/time string, as DuckDB makes it.

DuckDB casts the string to the column's SQL type: to DATE by dropping the time of day
(``DATETIME_DAY``, and ``DATETIME_WEEK``, which reads as the DATE of its first day); to
TIMESTAMP_S / _MS / TIMESTAMP / _NS by rounding to that unit, half away from zero
(``s <= '1970-01-01 00:00:01.5'`` is ``s <= 2 s``).  ``DATETIME_HR`` and ``DATETIME_MIN`` read
as TIMESTAMP_S, so the string is rounded to seconds and then compared exactly with hours or
minutes: ``h < '1970-01-01 00:30'`` holds for ``h < 1 h`` (``in_field_units`` gives the
fraction, ``storage.integer_comparisons`` the integer comparison).  Other units (years, months, ps, fs, as) read as raw counts and are left to
the caller.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..datatypes import Datatype

# the unit SQL compares a datetime field's values in (its Arrow type's unit)
SQL_UNITS = {Datatype.DATETIME_DAY: "D", Datatype.DATETIME_WEEK: "D",
             Datatype.DATETIME_HR: "s", Datatype.DATETIME_MIN: "s", Datatype.DATETIME_SEC: "s",
             Datatype.DATETIME_MS: "ms", Datatype.DATETIME_US: "us", Datatype.DATETIME_NS: "ns"}


def in_field_units(text: str, datatype: Datatype, unit: str) -> Fraction:
    """The instant ``text`` names, cast as DuckDB casts it to the field's SQL type, in the
    field's stored ``unit`` (a fraction of one when finer); ``ValueError`` if it is none."""
    sql_unit = SQL_UNITS[datatype]
    count = _sql_count(np.datetime64(text), sql_unit)
    per_unit = int(np.timedelta64(1, unit).astype(f"m8[{sql_unit}]").astype(np.int64))
    return Fraction(count, per_unit)


def _sql_count(value: np.datetime64, sql_unit: str) -> int:
    """The string's instant as DuckDB casts it to the SQL type (a count of ``sql_unit``)."""
    if sql_unit == "D" or _finer_or_same(sql_unit, np.datetime_data(value.dtype)[0]):
        return int(value.astype(f"M8[{sql_unit}]").astype(np.int64))  # DATE: the day it is in
    unit = np.datetime_data(value.dtype)[0]
    count = int(value.astype(np.int64))
    step = int(np.timedelta64(1, sql_unit).astype(f"m8[{unit}]").astype(np.int64))
    whole, rest = divmod(abs(count), step)
    rounded = whole + (2 * rest >= step)  # half away from zero
    return rounded if count >= 0 else -rounded


def _finer_or_same(unit: str, than: str) -> bool:
    return np.timedelta64(1, than) >= np.timedelta64(1, unit)
