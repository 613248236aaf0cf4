"""A DELETE comparison of a datetime field with a date/time string, as DuckDB makes it.

DuckDB casts the string to the column's SQL type, and so does this module, with the engine's
own cast (``engine.value_types.cast_string_scalar``: any spelling DuckDB reads --
``1970-1-1``, ``24:00:00``, ``(BC)`` years -- and a UTC offset or zone name ignored, as a
TIMESTAMP ignores it): to DATE by dropping the time of day (``DATETIME_DAY``, and
``DATETIME_WEEK``, which reads as the DATE of its first day); to TIMESTAMP_S / _MS /
TIMESTAMP / _NS by rounding to that unit, half away from zero
(``s <= '1970-01-01 00:00:01.5'`` is ``s <= 2 s``).  ``epoch`` is 1970-01-01 and
``infinity`` / ``-infinity`` (``inf`` ...: ``datetime_ops.special_stamp``) are DuckDB's
infinite values, stored as the type's extreme counts, after / before every other value
(which the engine's CAST refuses, having no date functions that respect them; a DELETE
only compares).  ``DATETIME_HR`` and ``DATETIME_MIN`` read
as TIMESTAMP_S, so the string is rounded to seconds and then compared exactly with hours or
minutes: ``h < '1970-01-01 00:30'`` holds for ``h < 1 h`` (``in_field_units`` gives the
fraction, ``storage.integer_comparisons`` the integer comparison).  Other units (years,
months, ps, fs, as) read as raw counts and are left to the caller.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pyarrow as pa

from ..datatypes import Datatype

# the unit SQL compares a datetime field's values in (its Arrow type's unit); a time field's
# is DuckDB's TIME (microseconds) but for TIME_NS (nanoseconds)
SQL_UNITS = {Datatype.DATETIME_DAY: "D", Datatype.DATETIME_WEEK: "D",
             Datatype.DATETIME_HR: "s", Datatype.DATETIME_MIN: "s", Datatype.DATETIME_SEC: "s",
             Datatype.DATETIME_MS: "ms", Datatype.DATETIME_US: "us", Datatype.DATETIME_NS: "ns",
             **dict.fromkeys((Datatype.TIME_HR, Datatype.TIME_MIN, Datatype.TIME_SEC,
                              Datatype.TIME_MS, Datatype.TIME_US), "us"),
             Datatype.TIME_NS: "ns"}
TIMES = frozenset({Datatype.TIME_HR, Datatype.TIME_MIN, Datatype.TIME_SEC, Datatype.TIME_MS,
                    Datatype.TIME_US, Datatype.TIME_NS})

# DuckDB's infinite DATE and TIMESTAMP values: the extreme counts of its storage
INFINITE = {"D": 2**31 - 1, "s": 2**63 - 1, "ms": 2**63 - 1, "us": 2**63 - 1, "ns": 2**63 - 1}


def in_field_units(text: str, datatype: Datatype, unit: str,
                   sql_unit: str | None = None) -> Fraction:
    """The instant ``text`` names, cast as DuckDB casts it to the field's SQL type (or to the
    type of unit ``sql_unit``: a typed literal's own), in the field's stored ``unit`` (a
    fraction of one when finer); ``ValueError`` if it is none."""
    sql_unit = SQL_UNITS[datatype] if sql_unit is None else sql_unit
    count = time_count(text, sql_unit) if datatype in TIMES else sql_count(text, sql_unit)
    return Fraction(count) * _seconds(sql_unit) / _seconds(unit)


def _seconds(unit: str) -> Fraction:
    """One ``unit`` in seconds, exactly."""
    return Fraction(int(np.timedelta64(1, unit).astype("m8[ns]").astype(np.int64)), 10**9)


def sql_count(text: str, sql_unit: str) -> int:
    """The string as DuckDB casts it to the SQL type (a count of ``sql_unit``)."""
    from ..engine import datetime_ops as dto
    from ..engine.value_types import cast_string_scalar

    special = dto.special_stamp(text)
    if special in ("infinity", "-infinity"):
        return -INFINITE[sql_unit] if special[0] == "-" else INFINITE[sql_unit]
    if special == "epoch":
        return 0
    target = pa.date32() if sql_unit == "D" else pa.timestamp(sql_unit)
    return cast_string_scalar(pa.scalar(text), target).value


def time_count(text: str, sql_unit: str) -> int:
    """The string as DuckDB casts it to TIME (microseconds since midnight; ``24:00:00`` a
    whole day) or TIME_NS (nanoseconds)."""
    from ..engine import datetime_ops as dto

    return dto.parse_time_ns(text) if sql_unit == "ns" else dto.parse_time(text)
