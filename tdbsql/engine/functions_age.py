"""``age(ts, ts)``, ``time_bucket`` and the ``to_*`` INTERVAL constructors, registered into
``functions.REGISTRY``.

In: evaluated arguments and the ``Call``.  Out: an Arrow value, NULL where an argument is.

- ``age(end, start)``: the INTERVAL in years, months, days and time of day between two
  DATEs / TIMESTAMPs, as DuckDB (PostgreSQL's rule): the fields are subtracted and a
  negative one borrows from the next (a day from the month of the earlier value:
  ``age('2024-03-01', '2024-01-31')`` is 1 month 1 day), the sign of the whole when end is
  before start.  The one-argument form reads the clock and is not offered.
- ``whole_months`` counts complete months for ``functions_dates``' date_sub.
- ``time_bucket(width, ts[, origin | offset])``: the start of ``ts``'s bucket.  A width of
  days / time counts from ``2000-01-03`` (a Monday), a width of months from ``2000-01-01``
  (then the width may have no days or time: DuckDB's error); a TIMESTAMP / DATE third
  argument is the origin, an INTERVAL one an offset added to every bucket.  A DATE gives a
  DATE, a TIMESTAMP WITH TIME ZONE one (buckets in UTC: tdbsql has no session zone).
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import datetime_ops as dto
from . import interval_amounts, interval_rows
from ..errors import SqlError
from .frame import broadcast
from .functions import register
from .value_types import kind, null_like, null_rows, plain

_EPOCH = dt.datetime(1970, 1, 1)
_DAY_ORIGIN_US = (dt.datetime(2000, 1, 3) - _EPOCH) // dt.timedelta(microseconds=1)
_MONTH_ORIGIN = 2000 * 12  # months since year 0 of 2000-01


@register("age", 2)
def _age(ctx, end, start):
    end, start = ctx.temporal(end, 0), ctx.temporal(start, 1)
    if isinstance(end, pa.Scalar) and isinstance(start, pa.Scalar):
        return _age(ctx, pa.repeat(end, 1), start)[0]
    rows = len(start) if isinstance(end, pa.Scalar) else len(end)
    a, b = broadcast(end, rows), broadcast(start, rows)
    nulls = null_rows(a) | null_rows(b)
    months, days, micros = _ages(stamps_us(a), stamps_us(b))
    return interval_rows.built(months, days, micros, ~nulls, ctx.error)


def stamps_us(values) -> np.ndarray:
    """DATE / TIMESTAMP values as datetime64[us] (NULLs as the epoch, masked by the caller)."""
    return np.asarray(pc.fill_null(dto.epoch_micros(values), 0).to_numpy(zero_copy_only=False),
                      np.int64).astype("datetime64[us]")


def _ages(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(months, days, microseconds) from each ``b`` to its ``a``, PostgreSQL's way: the
    later one's fields minus the earlier one's, a negative field borrowing from the next (a
    day borrows the length of the earlier one's month), the sign of the whole when ``a`` is
    before ``b``."""
    negative = a < b
    late, early = np.where(negative, b, a), np.where(negative, a, b)
    (late_month, late_day, late_time), (early_month, early_day, early_time) = \
        _fields(late), _fields(early)
    months = late_month - early_month  # years * 12 + months, borrowed below as a whole
    days, micros = late_day - early_day, late_time - early_time
    borrow = micros < 0
    micros[borrow] += dto.US_PER_DAY
    days[borrow] -= 1
    lengths = dto.month_lengths(early.astype("datetime64[M]"))
    while (days < 0).any():  # once: a day difference is never below minus a month
        borrow = days < 0
        days[borrow] += lengths[borrow]
        months[borrow] -= 1
    sign = np.where(negative, -1, 1)
    return months * sign, days * sign, micros * sign


def _fields(stamps: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(months since year 0, day of month, microseconds into the day) of datetime64[us]."""
    month = stamps.astype("datetime64[M]")
    day = stamps.astype("datetime64[D]")
    return (month.astype(np.int64) + 1970 * 12,
            (day - month.astype("datetime64[D]")).astype(np.int64) + 1,
            (stamps - day.astype("datetime64[us]")).astype(np.int64))


def whole_months(late: np.ndarray, early: np.ndarray) -> np.ndarray:
    """Complete months from each ``early`` to its ``late`` (datetime64[us]; negative when
    ``late`` is before), DuckDB's way: when the later one is on the last day of its month,
    an earlier day past it (or a later time on it) counts as that last day, so 01-31 to
    02-29 is a month."""
    negative = late < early
    late, early = np.where(negative, early, late), np.where(negative, late, early)
    (late_month, late_day, late_time), (early_month, early_day, early_time) = \
        _fields(late), _fields(early)
    month_days = dto.month_lengths(late.astype("datetime64[M]"))
    early_day = np.where((late_day == month_days) & (early_day > month_days), month_days,
                         early_day)
    short = (late_day < early_day) | ((late_day == early_day) & (late_time < early_time))
    months = late_month - early_month - short
    return np.where(negative, -months, months)


@register("time_bucket", 2, 3, aliases=("date_bin",))
def _time_bucket(ctx, width, value, third=None):
    width = _width(ctx, width)
    value = plain(value)
    if kind(value.type) == "null":
        return null_like(value, pa.timestamp("us"))
    is_date = kind(value.type) == "date"
    stamps = ctx.temporal(value, 1)
    zone = stamps.type.tz if pa.types.is_timestamp(stamps.type) else None
    micros = dto.epoch_micros(stamps)
    offset, origin = 0, None
    if third is not None:
        third = plain(third)
        if isinstance(third, pa.Scalar) and not third.is_valid:
            return null_like(value, value.type if is_date else stamps.type)
        if pa.types.is_interval(third.type):
            if not isinstance(third, pa.Scalar):
                raise ctx.error("the offset must be a constant", 2)
            shift = dto.Interval.of_arrow(third)
            if shift.months:
                raise SqlError("time_bucket(): an offset in months is not supported", ctx.sql)
            offset = shift.days * dto.US_PER_DAY + shift.micros
        else:
            origin = dto.epoch_micros(ctx.temporal(third, 2))
    shifted = pc.subtract(micros, offset)
    if width.months:
        buckets = _month_buckets(shifted, width.months, origin)
    else:
        buckets = _fixed_buckets(shifted, width.days * dto.US_PER_DAY + width.micros, origin)
    result = pc.cast(pc.add(buckets, offset), pa.int64()).cast(pa.timestamp("us", zone))
    return pc.cast(result, pa.date32()) if is_date else result


def _width(ctx, width) -> dto.Interval:
    width = plain(width)
    if not isinstance(width, pa.Scalar) or not pa.types.is_interval(width.type):
        raise ctx.error("the bucket width must be a constant INTERVAL", 0)
    if not width.is_valid:
        raise ctx.error("the bucket width must not be NULL", 0)
    interval = dto.Interval.of_arrow(width)
    if interval.months and (interval.days or interval.micros):
        raise SqlError("Month intervals cannot have day or time component", ctx.sql)
    # DuckDB weighs a width without months by its whole length: '1 day -1 hour' is 23 hours
    length = interval.months if interval.months else \
        interval.days * dto.US_PER_DAY + interval.micros
    if length <= 0:
        raise SqlError("Period must be greater than 0", ctx.sql)
    return interval


def _fixed_buckets(micros, width: int, origin):
    base = _DAY_ORIGIN_US if origin is None else origin
    since = pc.subtract(micros, base)
    steps = dto.floor_div(since, width)
    return pc.add(pc.multiply(steps, width), base)


def _month_buckets(micros, months: int, origin):
    """The first instant of each value's bucket of ``months`` months (its month index,
    floored to the origin's, as months since the epoch; the origin's day is dropped, as
    DuckDB drops it), over all rows at once; the origin may be a column."""
    if isinstance(micros, pa.Scalar):
        return _month_buckets(pa.array([micros.as_py()], pa.int64()), months, origin)[0]
    index = _month_index(micros)
    base = _MONTH_ORIGIN - 1970 * 12 if origin is None else _month_index(origin)
    start = base + (index - base) // months * months  # months since 1970-01
    first = start.astype("datetime64[M]").astype("datetime64[us]").astype(np.int64)
    nulls = null_rows(micros) if origin is None or isinstance(origin, pa.Scalar) else \
        null_rows(micros) | null_rows(origin)
    return pa.array(first, pa.int64(), mask=nulls)


def _month_index(micros):
    """Months since 1970-01 of microsecond timestamps (an int64 array or scalar; NULLs as
    the epoch, masked by the caller)."""
    if isinstance(micros, pa.Scalar):
        return _month_index(pa.array([micros.as_py()], pa.int64()))[0]
    stamps = np.asarray(pc.fill_null(micros, 0).to_numpy(zero_copy_only=False), np.int64)
    return stamps.astype("datetime64[us]").astype("datetime64[M]").astype(np.int64)



# --- to_years ... to_microseconds: an INTERVAL of n units -----------------------------------

def _interval_of(unit: str):
    def impl(ctx, count):
        count = plain(count)
        intervals = interval_amounts.of_counts(broadcast(count, 1), unit, ctx.error,
                                               ctx.written_name)
        return intervals[0] if isinstance(count, pa.Scalar) else intervals
    return impl


for _unit, _name in (("millennium", "to_millennia"), ("century", "to_centuries"),
                     ("decade", "to_decades"), ("year", "to_years"), ("quarter", "to_quarters"),
                     ("month", "to_months"), ("week", "to_weeks"), ("day", "to_days"),
                     ("hour", "to_hours"), ("minute", "to_minutes"), ("second", "to_seconds"),
                     ("millisecond", "to_milliseconds"), ("microsecond", "to_microseconds")):
    register(_name, 1)(_interval_of(_unit))
