"""Dates and timestamps far from 1970 made readable by Arrow's calendar kernels.

Arrow's calendar kernels (``year``, ``month``, ``iso_week``, ``day_of_year``,
``floor_temporal``, ``strftime``...) hold the year in 16 bits: before -32768 or after 32767
they answer wrong (``year`` of 252000-01-01 is -10144), while DuckDB's TIMESTAMP reaches
290309 BC .. 294247 and its DATE millions of years.  The Gregorian calendar repeats every 400
years (146,097 days, a whole number of weeks), and 2,000 years keep decades, centuries and
millennia too, so a value is moved by whole 2,000-year cycles into 1970..3969, read there,
and the years moved are added back (``ArrowCalendar.year``), or a timestamp computed from the
moved value is moved back (``ArrowCalendar.back``).

In: Arrow date32 / timestamp / time values (arrays, chunked arrays or scalars, any unit,
with or without a time zone).  Out: an ``ArrowCalendar``.  Values already in Arrow's range are not
moved (nanosecond timestamps never need to be: they end in 1677 and 2262).
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

CYCLE_YEARS = 2_000
CYCLE_DAYS = 730_485  # days in 2,000 Gregorian years
_SAFE_DAYS = 10_000_000  # days from 1970 within which Arrow's kernels are right (year 29349)
_PYTHON_SAFE_DAYS = 700_000  # ... and Python's datetime (years 53..3886; it has 1..9999)
TICKS_PER_DAY = {"s": 86_400, "ms": 86_400_000, "us": 86_400_000_000,
                 "ns": 86_400_000_000_000}
# the days from 1970 of 0001-01-01 and 9999-12-31: Python's date range
PYTHON_FIRST_DAY, PYTHON_LAST_DAY = -719_162, 2_932_896


@dataclass(frozen=True)
class ArrowCalendar:
    """``moved``: the values moved by whole 2,000-year cycles into Arrow's range (the same
    type); ``cycles``: how many cycles each was moved back by (int64, per row), or None
    when none was moved."""

    moved: object
    cycles: object
    ticks_per_cycle: int

    def year(self, kernel=pc.year):
        """A year kernel's (``pc.year``, ``pc.iso_year``) answer for the original values,
        as int64."""
        years = pc.cast(kernel(self.moved), pa.int64())
        if self.cycles is None:
            return years
        return pc.add(years, self.years_moved())

    def years_moved(self):
        """The years each value was moved back by (int64; a multiple of 2,000)."""
        return pc.multiply(self.cycles, CYCLE_YEARS)

    def back(self, stamps):
        """Timestamps (or dates) computed from ``moved`` (a truncation, a month added)
        moved back by the cycles the originals were moved."""
        if self.cycles is None:
            return stamps
        # the cycles' ticks in two halves (and the odd one of a DATE's days): 147 cycles of
        # microseconds pass int64 though the value moved back is in range
        half, odd = divmod(self.ticks_per_cycle, 2)
        try:
            shift = pc.multiply_checked(self.cycles, half)
            ticks = pc.add_checked(pc.add_checked(_ticks(stamps), shift), shift)
            if odd:
                ticks = pc.add_checked(ticks, self.cycles)
        except pa.ArrowInvalid:
            from .datetime_ops import OUT_OF_RANGE, DatetimeError  # it imports this module
            raise DatetimeError(OUT_OF_RANGE) from None
        return _of_ticks(ticks, stamps.type)


def arrow_calendar(value, python: bool = False) -> ArrowCalendar:
    """``value`` (DATE or TIMESTAMP; a TIME, which has no year, is left as it is) as an
    ``ArrowCalendar``; with ``python`` moved for Python's datetime instead of Arrow."""
    if pa.types.is_time(value.type):
        return ArrowCalendar(value, None, 0)
    per_day = 1 if pa.types.is_date(value.type) else TICKS_PER_DAY[value.type.unit]
    per_cycle = CYCLE_DAYS * per_day
    ticks = _ticks(value)
    bounds = pc.min_max(ticks)
    low, high = bounds["min"].as_py(), bounds["max"].as_py()
    safe = (_PYTHON_SAFE_DAYS if python else _SAFE_DAYS) * per_day
    if low is None or -safe <= low and high <= safe:
        return ArrowCalendar(value, None, per_cycle)
    cycles = floor_div(ticks, per_cycle)
    moved = pc.subtract(ticks, pc.multiply(cycles, per_cycle))
    return ArrowCalendar(_of_ticks(moved, value.type), cycles, per_cycle)


def _ticks(value):
    """Days (a DATE) or ticks (a TIMESTAMP) since 1970-01-01 as int64."""
    if pa.types.is_date(value.type):
        return pc.cast(pc.cast(value, pa.int32()), pa.int64())
    return pc.cast(value, pa.int64())


def _of_ticks(ticks, target: pa.DataType):
    """int64 days or ticks back as a DATE or TIMESTAMP of type ``target``."""
    if pa.types.is_date(target):
        return pc.cast(pc.cast(ticks, pa.int32()), target)
    return pc.cast(ticks, target)


def floor_div(value, divisor: int):
    """int64 ``value // divisor`` rounding down, exactly (arrays, chunked arrays or scalars;
    NULL stays NULL)."""
    quotient = pc.divide(value, divisor)  # integer division truncates toward zero
    adjust = pc.and_(pc.not_equal(pc.multiply(quotient, divisor), value), pc.less(value, 0))
    return pc.subtract(quotient, pc.cast(adjust, pa.int64()))
