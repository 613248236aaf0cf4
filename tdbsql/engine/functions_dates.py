"""Date functions beyond date_part / date_trunc, registered into ``functions.REGISTRY``.

In: evaluated arguments and the ``Call``.  Out: an Arrow value.  DuckDB's semantics:
``date_diff(part, start, end)`` counts the part's boundaries crossed (``'minute'`` from 10:00:59
to 10:01:00 is 1), ``date_sub`` the whole parts between them; ``last_day`` is a DATE; ``dayname`` / ``monthname`` are English;
``make_date`` refuses a day its month does not have and reaches DuckDB's whole DATE range,
BC years too (``make_date(n)`` is n days from 1970-01-01); ``epoch_ms(n)`` is a TIMESTAMP,
``epoch_ms(t)`` a BIGINT; ``to_timestamp(seconds)`` a TIMESTAMP WITH TIME ZONE; ``strftime``
and ``strptime`` take DuckDB's format specifiers (``time_format``, ``time_parse``).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import UnsupportedSql
from . import datetime_ops as dto
from .frame import broadcast
from .functions import per_distinct, python_map, register
from .interval_parts import epoch_ticks, is_interval_value
from .interval_units import outside
from .time_format import compile_format
from .time_parse import DateError, ParseError, time_parser
from .functions_age import stamps_us, whole_months  # registers age, time_bucket, to_days ...
from .value_types import kind, null_like, null_rows, plain, valid_rows

_US = {**dto.US_PER, "day": dto.US_PER_DAY}  # microseconds per unit
_MONTHS = dto.MONTHS_PER


# parts date_diff counts as another, as DuckDB: the days' parts (day of the week, of the
# year, Julian day) as days, 'epoch' as seconds, 'yearweek' as weeks
_COUNTED_AS = {"dow": "day", "isodow": "day", "doy": "day", "julian": "day",
               "epoch": "second", "yearweek": "week"}


@register("datediff", 3, aliases=("date_diff",))
def _date_diff(ctx, end, start, part):
    """sqlglot hands the arguments as (end, start, part)."""
    if not isinstance(plain(part), pa.Scalar):  # a part per row
        return per_distinct(lambda e, s, p: _date_diff(ctx, e, s, p), [end, start], [part])
    name = _part_name(ctx, part, 2)
    if name is None:
        return null_like(plain(end), pa.int64())
    unit = dto.spelled(name)
    unit = _COUNTED_AS.get(unit, unit)
    start, end, times = _temporal_pair(ctx, unit, start, 1, end, 0)
    if times:  # boundaries crossed from midnight on
        per = _US[unit]
        micros = [pc.cast(pc.cast(v, pa.time64("us")), pa.int64()) for v in (start, end)]
        return pc.subtract(*(pc.divide(v, per) for v in reversed(micros)))
    if unit in _US:
        per = _US[unit]
        return pc.subtract(dto.epoch_micros(end, per), dto.epoch_micros(start, per))
    if unit == "week":  # whole weeks between the days (DuckDB: days / 7, toward zero)
        days = pc.subtract(dto.epoch_micros(end, _US["day"]), dto.epoch_micros(start, _US["day"]))
        return _toward_zero_div(days, 7)
    if unit == "isoyear":
        return pc.subtract(dto.arrow_calendar(end).year(pc.iso_year),
                           dto.arrow_calendar(start).year(pc.iso_year))
    if unit in _MONTHS:
        return pc.subtract(_in_units(end, unit), _in_units(start, unit))
    raise ctx.error(f"unsupported date part {name!r}", 2)


_SUB_US = {**_US, "week": 7 * _US["day"]}
_SUB_COUNTED_AS = {**_COUNTED_AS, "isoyear": "year"}  # date_sub's whole ISO years: years
_TIME_UNITS = ("microsecond", "millisecond", "second", "minute", "hour")


@register("date_sub", 3, aliases=("datesub",))
def _date_sub(ctx, part, start, end):
    """Whole parts from start to end, toward zero (``day`` counts 24 hours, ``month``
    complete months: 01-31 to 02-29 is one, the end being its month's last day); of two
    TIMEs the parts up to hours."""
    if not isinstance(plain(part), pa.Scalar):  # a part per row
        return per_distinct(lambda s, e, p: _date_sub(ctx, p, s, e), [start, end], [part])
    name = _part_name(ctx, part, 0)
    unit = None if name is None else dto.spelled(name)
    unit = _SUB_COUNTED_AS.get(unit, unit)
    if unit is not None and unit not in _SUB_US and unit not in _MONTHS:
        try:
            dto.normalise_part(name)
        except dto.DatetimeError:
            raise ctx.error(f"unknown date part {name!r}", 0) from None
        raise UnsupportedSql(f"date_sub() in {name!r} is not supported")
    start, end, times = _temporal_pair(ctx, unit, start, 1, end, 2)
    if unit is None:  # a NULL part: NULL, as in DuckDB
        return null_like(end, pa.int64())
    if isinstance(start, pa.Scalar) and isinstance(end, pa.Scalar):
        return _date_sub(ctx, part, pa.repeat(start, 1), end)[0]
    rows = len(start) if isinstance(end, pa.Scalar) else len(end)
    a, b = broadcast(start, rows), broadcast(end, rows)
    if times:
        a, b = (pc.cast(pc.cast(v, pa.time64("us")), pa.int64()) for v in (a, b))
    early, late = (np.asarray(pc.fill_null(v, 0).to_numpy(zero_copy_only=False), np.int64)
                   if times else stamps_us(v) for v in (a, b))
    if unit in _MONTHS:
        elapsed, per = whole_months(late, early), _MONTHS[unit]
    else:
        elapsed, per = (late - early).astype(np.int64), _SUB_US[unit]
    whole = np.sign(elapsed) * (np.abs(elapsed) // per)
    return pa.array(whole, pa.int64(), mask=null_rows(a) | null_rows(b))


def _temporal_pair(ctx, unit: str | None, start, start_index: int, end, end_index: int):
    """(start, end, both TIMEs?) of date_diff / date_sub: two DATEs / TIMESTAMPs or two
    TIMEs, the latter counted in microseconds up to hours, as DuckDB."""
    start = ctx.temporal(start, start_index, times=True)
    end = ctx.temporal(end, end_index, times=True)
    times = [kind(v.type) == "time" for v in (start, end)]
    if any(times) and not all(times):
        raise ctx.error(f"{ctx.written_name} of {start.type} and {end.type} is not defined")
    if all(times) and unit is not None and unit not in _TIME_UNITS:
        raise ctx.error(f'"time" units "{unit}" not recognized: {ctx.written_name} of two '
                        "TIMEs counts microseconds up to hours")
    return start, end, all(times)


def _part_name(ctx, part: pa.Scalar, index: int) -> str | None:
    """The name of the part date_diff / date_sub count (a constant string), None for NULL."""
    name = part.as_py()
    return name if isinstance(name, str) else \
        ctx.constant(ctx.string(part, index), index, "date part")


def _in_units(value, unit: str):
    """The count of ``unit``s (month ... millennium) from year 0 to the value, cut toward
    zero as DuckDB's date_diff counts them: quarters of the month number (year * 12 + month
    - 1), decades, centuries and millennia of the year."""
    calendar = dto.arrow_calendar(value)
    years = calendar.year()
    if unit not in ("month", "quarter"):
        return pc.divide(years, _MONTHS[unit] // 12)
    months = pc.add(pc.multiply(years, 12),
                    pc.subtract(pc.cast(pc.month(calendar.moved), pa.int64()), 1))
    return pc.divide(months, _MONTHS[unit])  # integer division truncates toward zero


def _toward_zero_div(value, divisor: int):
    return pc.divide(value, divisor)


@register("last_day", 1)
def _last_day(ctx, value):
    """The last day of the value's month, as a DATE."""
    value = ctx.temporal(value, 0)
    if pa.types.is_timestamp(value.type) and value.type.tz is not None:
        value = pc.cast(value, pa.timestamp(value.type.unit))  # UTC's day, not the zone's
    days = value if pa.types.is_date(value.type) else pc.cast(value, pa.date32())
    return _numpy_dates(days, lambda d: ((d.astype("M8[M]") + 1).astype("M8[D]")
                                         - np.timedelta64(1, "D")))


def _numpy_dates(days, fn):
    if isinstance(days, pa.Scalar):  # as an array: a Python date ends in year 9999
        return _numpy_dates(pa.repeat(days, 1), fn)[0]
    if isinstance(days, pa.ChunkedArray):
        days = days.combine_chunks()
    as_numpy = days.fill_null(0).to_numpy(zero_copy_only=False).astype("M8[D]")
    return pa.array(fn(as_numpy), pa.date32(), mask=days.is_null().to_numpy(zero_copy_only=False))


@register("dayname", 1)
def _dayname(ctx, value):
    return _formatted(ctx.temporal(value, 0), "%A")


@register("monthname", 1)
def _monthname(ctx, value):
    return _formatted(ctx.temporal(value, 0), "%B")


def _formatted(value, code: str):
    """A name by Arrow's strftime, of the timestamp as it is (a cast to seconds fails on a
    fraction of a second), moved near 1970 where Arrow names it right."""
    return pc.strftime(dto.to_timestamp(dto.arrow_calendar(value).moved), format=code,
                       locale="C")


@register("date_from_parts", 1, 3, aliases=("make_date",))
def _make_date(ctx, year, month=None, day=None):
    """make_date(year, month, day); make_date(days) counts days from 1970-01-01;
    make_date({'year': y, 'month': m, 'day': d}) takes the parts from a STRUCT, as DuckDB."""
    if month is None and day is None and pa.types.is_struct(year.type):
        names = sorted(year.type.field(i).name for i in range(year.type.num_fields))
        if names != ["day", "month", "year"]:
            raise ctx.error("a STRUCT of the parts needs exactly the fields year, month and "
                            f"day, got {year.type}", 0)
        year, month, day = (pc.struct_field(year, name) for name in ("year", "month", "day"))
    if month is None and day is None:
        days = ctx.integer(year, 0)
        try:
            return pc.cast(pc.cast(days, pa.int32()), pa.date32())
        except pa.ArrowInvalid:
            raise ctx.error("Date out of range: the day number is past the DATE range",
                            0) from None
    if day is None:
        raise ctx.error("takes 1 or 3 argument(s), got 2")
    parts = [ctx.integer(part, index) for index, part in enumerate((year, month, day))]
    rows = max((len(p) for p in parts if not isinstance(p, pa.Scalar)), default=1)
    columns = [broadcast(p, rows) for p in parts]
    years, months, days = (np.asarray(c.fill_null(1).to_numpy(zero_copy_only=False), np.int64)
                           for c in columns)
    valid = np.logical_and.reduce([valid_rows(c) for c in columns])
    numbers = _dates_of_parts(ctx, years, months, days, valid)
    dates = pa.array(numbers.astype(np.int32), mask=~valid).cast(pa.date32())
    return dates if any(not isinstance(p, pa.Scalar) for p in parts) else dates[0]


def _dates_of_parts(ctx, years, months, days, valid) -> np.ndarray:
    """Days since 1970 of each (year, month, day) (int64 arrays), DuckDB's errors for a
    part out of range where ``valid``; ignored elsewhere."""
    wide = valid & outside(years, 32)
    if wide.any():
        raise ctx.error(f"Type INT64 with value {years[wide][0]} can't be cast because the "
                        "value is out of range for the destination type INT32", 0)
    safe_years = np.where(valid, years, 1970)
    safe_months = np.where(valid & (months >= 1) & (months <= 12), months, 1)
    starts = ((safe_years - 1970) * 12 + safe_months - 1).astype("M8[M]")
    first = starts.astype("M8[D]").astype(np.int64)
    lengths = dto.month_lengths(starts)
    numbers = first + days - 1
    bad = valid & ((months < 1) | (months > 12) | (days < 1) | (days > lengths) |
                   (numbers < dto.FIRST_DAY) | (numbers > dto.LAST_DAY))
    if bad.any():
        row = int(np.argmax(bad))
        raise ctx.error(f"Date out of range: {years[row]}-{months[row]}-{days[row]}")
    return np.where(valid, numbers, 0)


@register("unix_to_time", 1, 2)
def _unix_to_time(ctx, value, scale=None):
    """to_timestamp(seconds) (scale None), epoch_ms(n) (scale 3) and make_timestamp(n)
    (microseconds, scale 6) as sqlglot names them; epoch_ms of a DATE / TIMESTAMP is its
    milliseconds since the epoch instead, of a TIME since midnight."""
    value = plain(value)
    if scale is None:
        seconds = ctx.double(value, 0)
        try:  # NaN, infinities and counts past int64 microseconds do not convert
            micros = pc.cast(pc.round(pc.multiply(seconds, 1e6)), pa.int64())
        except pa.ArrowInvalid:
            raise ctx.error("Epoch seconds out of range for TIMESTAMP WITH TIME ZONE") from None
        return pc.cast(micros, pa.timestamp("us", tz="UTC"))
    if scale.as_py() == 3 and is_interval_value(value):  # its milliseconds, a month 30 days
        return _interval_ticks(ctx, value, 1_000)
    if scale.as_py() == 3 and pa.types.is_time(value.type):  # milliseconds since midnight
        if value.type == pa.time64("ns"):  # DuckDB's conversion error
            raise ctx.error("there is no epoch_ms() of a TIME_NS (cast it to TIME)", 0)
        return dto.time_ticks(value, 1_000)
    if pa.types.is_date(value.type):
        return dto.epoch_micros(value, 1000)
    if kind(value.type) == "timestamp":  # microseconds to milliseconds as DuckDB casts them
        stamps = pc.cast(dto.epoch_micros(value), pa.timestamp("us"))  # (a TIMESTAMP_NS rounded first)
        return pc.cast(dto.to_coarser_unit(stamps, pa.timestamp("ms")), pa.int64())
    digits = scale.as_py()  # epoch_ms: 3, make_timestamp(microseconds): 6
    if digits not in (3, 6):
        raise UnsupportedSql(f"{ctx.written_name}() of a count of 10**-{digits} seconds is "
                             "not supported")
    count = ctx.integer(value, 0)
    try:
        return pc.cast(pc.multiply_checked(count, 10 ** (6 - digits)), pa.timestamp("us"))
    except pa.ArrowInvalid:
        raise ctx.error("Could not convert Timestamp(MS) to Timestamp(US)") from None


@register("epoch_ms", 1)
def _epoch_ms(ctx, value):
    return _unix_to_time(ctx, value, pa.scalar(3))


@register("epoch_us", 1)
def _epoch_us(ctx, value):
    if pa.types.is_time(plain(value).type):
        return dto.time_ticks(plain(value), 10**6)
    if is_interval_value(plain(value)):
        return _interval_ticks(ctx, plain(value), 1_000_000)
    return dto.epoch_micros(ctx.temporal(value, 0))


def _interval_ticks(ctx, value, per_second: int):
    try:
        return epoch_ticks(value, per_second)
    except dto.DatetimeError as err:
        raise ctx.error(str(err), 0) from None


@register("epoch_ns", 1)
def _epoch_ns(ctx, value):
    if pa.types.is_time(plain(value).type):
        return dto.time_ticks(plain(value), 10**9)
    if is_interval_value(plain(value)):
        return _interval_ticks(ctx, plain(value), 1_000_000_000)
    value = ctx.temporal(value, 0)
    if pa.types.is_timestamp(value.type) and value.type.unit == "ns":  # its own count
        return pc.cast(value, pa.int64())
    try:
        return pc.multiply_checked(dto.epoch_micros(value), 1000)
    except pa.ArrowInvalid:
        raise ctx.error("a TIMESTAMP past 2262 has no nanoseconds since the epoch in a "
                        "BIGINT", 0) from None


@register("time_to_str", 2, aliases=("strftime",))
def _strftime(ctx, value, format_):
    code = ctx.constant(ctx.string(format_, 1), 1, "format")
    value = ctx.temporal(value, 0)
    if code is None:
        return null_like(value, pa.string())
    try:
        render = compile_format(code)
    except ValueError as err:
        raise ctx.error(str(err), 1) from None
    calendar = dto.arrow_calendar(value, python=True)  # Python's datetime ends in 9999
    stamps = pc.cast(dto.to_timestamp(calendar.moved), pa.timestamp("us"))
    if calendar.cycles is None:
        return python_map(render, pa.string(), stamps)
    return python_map(render, pa.string(), stamps, calendar.years_moved())


@register("str_to_time", 2, aliases=("strptime",))
def _strptime(ctx, text, format_):
    return _parsed(ctx, text, format_, strict=True)


@register("try_strptime", 2)
def _try_strptime(ctx, text, format_):
    return _parsed(ctx, text, format_, strict=False)


def _parsed(ctx, text, format_, strict: bool):
    """strptime / try_strptime (``engine.time_parse``): text that does not match the format,
    or names a day its month lacks, is an error -- or NULL with ``try_``.  The format is a
    constant string or a list of them (the first that matches reads a value)."""
    formats = ctx.constant(format_, 1, "format")
    if isinstance(formats, list):
        if not formats:
            raise ctx.error("strptime format list must not be empty", 1)
        formats = [f for f in formats if f is not None]
    elif formats is not None and not isinstance(formats, str):
        raise ctx.error(f"expects a format string, got {format_.type}", 1)
    if not formats:
        return null_like(plain(text), pa.timestamp("us"))
    try:
        parsers = [time_parser(f) for f in ([formats] if isinstance(formats, str) else formats)]
    except ValueError as err:
        raise ctx.error(str(err), 1) from None
    if len({str(p.type) for p in parsers}) > 1:
        raise UnsupportedSql(f"{ctx.written_name}() with formats of different result types "
                             "(with and without %z / %Z / %n) is not supported")

    def parse(value):
        for parser in parsers:
            try:
                return parser.parse(value)
            except ParseError:
                continue
            except DateError as err:
                if strict:
                    raise ctx.error(str(err)) from None
                return None
        if not strict:
            return None
        try:
            parsers[0].parse(value)
        except ParseError as err:  # the first format's reason, as DuckDB reports it
            raise ctx.error(f'Could not parse string "{value}" according to format '
                            f'specifier "{parsers[0].fmt}" ({err})') from None
    return python_map(parse, parsers[0].type, ctx.string(text, 0))
