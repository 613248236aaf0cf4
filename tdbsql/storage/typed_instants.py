"""A DELETE comparison of a datetime or time field with a typed literal, as DuckDB makes it.

``DATE '2024-01-13'``, ``TIMESTAMP[_S|_MS|_NS] '...'``, ``TIME '...'`` -- or the same string
CAST to one of those types (``'2024-01-13'::DATE``) -- is a value of its own type: DuckDB
casts the string to that type (``TIMESTAMP_S '... 00:00:01.5'`` is second 2, as the cast
rounds) and then compares it with the column in the finer of the two types, exactly.  So a
TIMESTAMP_S column is not rounded to the literal's microseconds nor the literal to seconds:
``s <= TIMESTAMP '1970-01-01 00:00:01.5'`` holds for second 1, not 2 (a plain string would be
cast to the column's type first: ``storage.temporal_comparisons``), and a DATE column compared
with ``TIMESTAMP '2024-01-13 12:00'`` is a day before or after it, never equal.  The literal
becomes a fraction of the field's stored unit, which ``storage.integer_comparisons`` compares
with the stored counts.

A TIME literal beside a DATE or TIMESTAMP column, or the reverse, is DuckDB's conversion error
(``SqlError``); a TIMESTAMPTZ literal (its instant depends on the session's time zone), an
infinite one and a field SQL reads as a raw count (years, months, ps ...) are
``UnsupportedSql``.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from sqlglot import exp

from ..datatypes import type_info
from .temporal_comparisons import SQL_UNITS, TIMES, in_field_units

_T = exp.DataType.Type
# a typed literal's unit: a count of days, seconds ... (TIME: microseconds since midnight)
_LITERAL_UNITS = {_T.DATE: "D", _T.TIMESTAMP: "us", _T.TIMESTAMPNTZ: "us", _T.DATETIME: "us",
                  _T.TIMESTAMP_S: "s", _T.TIMESTAMP_MS: "ms", _T.TIMESTAMP_NS: "ns",
                  _T.TIME: "us"}


@dataclass(frozen=True)
class TypedInstant:
    """A typed date/time literal: its string, its SQL type and that type's unit."""

    text: str
    sql_type: str
    unit: str

    @property
    def is_time(self) -> bool:
        return self.sql_type == "TIME"


def typed_instant(e) -> TypedInstant | None:
    """``e`` as a typed date/time literal, else None (a TIMESTAMPTZ one refused)."""
    if not (isinstance(e, exp.Cast) and isinstance(e.this, exp.Literal) and e.this.is_string):
        return None
    kind = e.to.this
    if kind in (_T.TIMESTAMPTZ, _T.TIMESTAMPLTZ):
        from ..errors import UnsupportedSql

        raise UnsupportedSql(f"DELETE conditions with a TIMESTAMPTZ literal ({e.sql()!r}) are "
                             "not supported: its instant depends on the session's time zone")
    unit = _LITERAL_UNITS.get(kind)
    if unit is None:
        return None
    return TypedInstant(e.this.this, e.to.sql(dialect="duckdb"), unit)


def instant_in_field_units(instant: TypedInstant, datatype) -> Fraction:
    """The literal's value in the field's stored unit (a fraction when between two), to be
    compared exactly.  ``TypeError`` when DuckDB cannot compare the two types (a TIME with a
    DATE or TIMESTAMP), ``ValueError`` when the string is no value of the literal's type,
    ``OverflowError`` for an infinite one."""
    if (datatype in TIMES) != instant.is_time:
        raise TypeError(f"a {instant.sql_type} cannot be compared with this column")
    from ..engine.datetime_ops import special_stamp

    if not instant.is_time and special_stamp(instant.text) in ("infinity", "-infinity"):
        raise OverflowError(f"{instant.text!r} is infinite")
    return in_field_units(instant.text, datatype, type_info(datatype).unit, instant.unit)


def compares_instants(datatype) -> bool:
    """Does SQL read the field as a DATE, TIMESTAMP or TIME (so a typed literal compares)?"""
    return datatype in SQL_UNITS
