"""TIMESTAMPs and TIMEs from their parts, registered into ``functions.REGISTRY``:
``make_timestamp(year, month, day, hour, minute, seconds)`` and ``make_time(hour, minute,
seconds)``, each part a constant or a column.

As DuckDB: the seconds are a DOUBLE, their fraction rounded to the microsecond; a month or
day the calendar does not have is ``Date out of range``, an hour past 24, a minute past 59
or seconds outside 0..60 ``Time out of range`` (24:00:00 and a 60th second roll over into
the next day or minute); years outside 1 .. 9999 (DuckDB's BC years) are UnsupportedSql.
NULL in any part: NULL.

``make_timestamptz`` (a TIMESTAMP WITH TIME ZONE; tdbsql's session is UTC, so a zone other
than UTC is UnsupportedSql) is ICU's, lenient: each part is added to the one before (month 13
is January of the next year, -1 hours the day before's 23:00), the seconds truncated to an
INTEGER and their fraction rounded to the microsecond; ``make_timestamptz(n)`` is n
microseconds since the epoch.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

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


@register("make_timestamptz", 1, 7)
def _make_timestamptz(ctx, *parts):
    utc = pa.timestamp("us", tz="UTC")
    if len(parts) == 1:
        return pc.cast(ctx.integer(parts[0], 0), pa.timestamp("us")).cast(utc)
    if len(parts) not in (6, 7):
        raise ctx.error(f"takes 1, 6 or 7 argument(s), got {len(parts)}")
    if len(parts) == 7:
        zone = ctx.constant(ctx.string(parts[6], 6), 6, "time zone")
        if zone is None:
            return pa.scalar(None, utc)
        if zone.upper() not in ("UTC", "ETC/UTC", "GMT"):
            raise UnsupportedSql(f"make_timestamptz() in time zone {zone!r} is not supported "
                                 "(tdbsql's session is UTC)")
    (year, month, day, hour, minute, seconds), valid, constant = _columns(ctx, parts[:5],
                                                                          parts[5])
    whole = np.trunc(seconds)
    bad = valid & ~(np.abs(whole) < 2**31)  # NaN too
    if bad.any():
        raise ctx.error(f"Type DOUBLE with value {seconds[int(np.argmax(bad))]} can't be cast "
                        "because the value is out of range for the destination type INT32", 5)
    whole = np.where(valid, whole, 0)
    fraction = (np.where(valid, seconds, 0) - whole) * _US_PER_SECOND
    months = (year - 1970) * 12 + month - 1
    days = np.where(valid, months, 0).astype("datetime64[M]").astype("datetime64[D]") \
        .astype(np.int64) + day - 1
    micros = (((days * 24 + hour) * 60 + minute) * 60 + whole.astype(np.int64)) * \
        _US_PER_SECOND + (np.sign(fraction) * np.floor(np.abs(fraction) + 0.5)).astype(np.int64)
    years = micros.astype("datetime64[us]").astype("datetime64[Y]").astype(np.int64) + 1970
    if (valid & ((years < 1) | (years > 9999))).any():
        raise UnsupportedSql("make_timestamptz() of a year outside 1 .. 9999 is not supported")
    return _answer(micros, valid, utc, constant)
