"""TIMESTAMPs and TIMEs from their parts, registered into ``functions.REGISTRY``:
``make_timestamp(year, month, day, hour, minute, seconds)`` and ``make_time(hour, minute,
seconds)``, each part a constant or a column.

As DuckDB: the seconds are a DOUBLE, their fraction rounded to the microsecond; a month or
day the calendar does not have is ``Date out of range``, an hour past 24, a minute past 59
or seconds outside 0..60 ``Time out of range`` (24:00:00 and a 60th second roll over into
the next day or minute); years outside 1 .. 9999 (DuckDB's BC years) are UnsupportedSql.
NULL in any part: NULL.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..errors import UnsupportedSql
from .frame import broadcast
from .datetime_ops import month_lengths
from .functions import register
from .value_types import valid_rows

_US_PER_SECOND = 1_000_000


def _columns(ctx, integers, seconds):
    """The integer parts and the seconds as numpy arrays of one length, where all are valid,
    and whether every argument was a constant."""
    values = [ctx.integer(v, i) for i, v in enumerate(integers)]
    values.append(ctx.double(seconds, len(integers)))
    constant = all(isinstance(v, pa.Scalar) for v in values)
    rows = next((len(v) for v in values if not isinstance(v, pa.Scalar)), 1)
    arrays = [broadcast(v, rows) for v in values]
    valid = np.logical_and.reduce([valid_rows(a) for a in arrays])
    numbers = [np.asarray(a.fill_null(0).to_numpy(zero_copy_only=False)) for a in arrays]
    return numbers, valid, constant


def _time_micros(ctx, hour, minute, seconds, valid) -> np.ndarray:
    """Microseconds into the day (24:00:00 is a whole day), or DuckDB's error."""
    whole = np.trunc(seconds)  # DuckDB rounds the fraction alone, half away from zero
    fraction = (seconds - whole) * _US_PER_SECOND
    micros = whole * _US_PER_SECOND + np.sign(fraction) * np.floor(np.abs(fraction) + 0.5)
    bad = valid & ((hour < 0) | (hour > 24) | (minute < 0) | (minute > 59) | (micros < 0)
                   | (micros > 60 * _US_PER_SECOND)
                   | ((hour == 24) & ((minute > 0) | (micros > 0))))
    if bad.any():
        k = int(np.argmax(bad))
        raise ctx.error(f"Time out of range: {hour[k]}:{minute[k]}:{seconds[k]}")
    return (hour * 3600 + minute * 60) * _US_PER_SECOND + micros.astype(np.int64)


def _answer(micros: np.ndarray, valid: np.ndarray, out_type: pa.DataType, constant: bool):
    answer = pa.array(np.where(valid, micros, 0), pa.int64(),
                      mask=None if valid.all() else ~valid).cast(out_type)
    return answer[0] if constant else answer


@register("timestamp_from_parts", 6, aliases=("make_timestamp",))
def _make_timestamp(ctx, year, month, day, hour, minute, seconds):
    (year, month, day, hour, minute, seconds), valid, constant = _columns(
        ctx, (year, month, day, hour, minute), seconds)
    if (valid & ((year < 1) | (year > 9999))).any():
        raise UnsupportedSql("make_timestamp() of a year outside 1 .. 9999 is not supported")
    in_calendar = (month >= 1) & (month <= 12) & (day >= 1)
    first = (np.clip(year, 1, 9999) - 1970).astype("datetime64[Y]") + \
        (np.clip(month, 1, 12) - 1).astype("timedelta64[M]")
    month_days = month_lengths(first)
    bad = valid & ~(in_calendar & (day <= month_days))
    if bad.any():
        k = int(np.argmax(bad))
        raise ctx.error(f"Date out of range: {year[k]}-{month[k]}-{day[k]}")
    days = first.astype("datetime64[D]").astype(np.int64) + np.clip(day, 1, 31) - 1
    micros = days * 86_400 * _US_PER_SECOND + _time_micros(ctx, hour, minute, seconds, valid)
    return _answer(micros, valid, pa.timestamp("us"), constant)


@register("time_from_parts", 3, aliases=("make_time",))
def _make_time(ctx, hour, minute, seconds):
    (hour, minute, seconds), valid, constant = _columns(ctx, (hour, minute), seconds)
    micros = _time_micros(ctx, hour, minute, seconds, valid)  # 24:00:00 is DuckDB's too
    return _answer(micros, valid, pa.time64("us"), constant)
