"""Date and time operations of the SQL evaluator, with DuckDB's semantics, over Arrow arrays.

In: Arrow date32 / timestamp / time values (arrays, chunked arrays or scalars) and ``Interval``
literals.  Out: Arrow values.  DuckDB's rules followed here: ``date + INTERVAL`` gives a
TIMESTAMP; ``time + INTERVAL`` a TIME (around the clock); ``date + time`` a TIMESTAMP;
``date + integer`` a DATE; ``date - date`` a BIGINT number of days; ``timestamp - timestamp`` an
interval (an Arrow duration); adding months clamps the day to the end of the month
(Jan 31 + 1 month = Feb 29 in a leap year); EXTRACT returns BIGINT (``epoch`` a DOUBLE);
``date_trunc`` returns a TIMESTAMP.  Month arithmetic runs vectorised in numpy's datetime64.
"""

from __future__ import annotations

import datetime as dt
import decimal
import functools
import math
import re
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import UnsupportedSql
from .arrow_calendar import CYCLE_DAYS, CYCLE_YEARS, arrow_calendar, floor_div
from .zone_offsets import fixed_zone
from .interval_units import (DAYS_PER, DAYS_PER_MONTH, MONTHS_PER, UNITS, US_PER, US_PER_DAY,
                             outside)

# DuckDB's spellings of date parts and interval units (its GetDatePartSpecifier), one table
# for INTERVAL units, extract / date_part and date_trunc; each checks the names it allows
SPELLINGS = {
    **dict.fromkeys(("years", "y", "yr", "yrs"), "year"),
    **dict.fromkeys(("months", "mon", "mons"), "month"),
    **dict.fromkeys(("days", "d", "dayofmonth"), "day"),
    **dict.fromkeys(("dayofweek", "weekday"), "dow"), "dayofyear": "doy",
    **dict.fromkeys(("weeks", "w", "weekofyear"), "week"), "quarters": "quarter",
    **dict.fromkeys(("hours", "h", "hr", "hrs"), "hour"),
    **dict.fromkeys(("minutes", "m", "min", "mins"), "minute"),
    **dict.fromkeys(("seconds", "s", "sec", "secs"), "second"),
    **dict.fromkeys(("milliseconds", "ms", "msec", "msecs", "msecond", "mseconds"),
                    "millisecond"),
    **dict.fromkeys(("microseconds", "us", "usec", "usecs", "usecond", "useconds"),
                    "microsecond"),
    **dict.fromkeys(("decades", "dec", "decs"), "decade"),
    **dict.fromkeys(("centuries", "cent", "c"), "century"),
    **dict.fromkeys(("millenniums", "millennia", "mil", "mils", "millenium"), "millennium"),
}
PER_SECOND = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}  # timestamp unit -> ticks per second


class DatetimeError(ValueError):
    """A bad date/time input; the evaluator turns it into an ``SqlError`` with the span."""


NEGATION_OVERFLOW = "Overflow in negation of numeric value!"
INTERVAL_RANGE = ("INTERVAL out of range: its months and days must fit an INTEGER, its "
                  "microseconds a BIGINT")


def count_past_integer(count: int) -> str:
    """DuckDB's error for an INTERVAL * count whose count does not fit an INTEGER."""
    return (f"Type INT64 with value {count} can't be cast because the value is out of range "
            f"for the destination type INT32")


def off_interval_range(months, days, micros):
    """Which intervals DuckDB cannot hold (numbers, or numpy arrays of them): months or days
    outside -2**31 .. 2**31 - 1, microseconds outside BIGINT.  Constants (``Interval``) and
    columns (``interval_rows.built``) both ask it."""
    return outside(months, 32) | outside(days, 32) | outside(micros, 64)


# the most microseconds of time an Arrow month_day_nano interval holds (in nanoseconds)
_ARROW_MAX_MICROS = (2**63 - 1) // 1000


def check_arrow_time(largest_micros: int) -> None:
    """Refuse an INTERVAL whose time (``largest_micros``, the largest of its or a column's
    absolute microseconds) Arrow cannot hold: DuckDB holds up to 2**63 microseconds, Arrow
    2**63 nanoseconds."""
    if largest_micros > _ARROW_MAX_MICROS:
        raise UnsupportedSql("an INTERVAL of more than 292 years of time (hours, minutes, "
                             "...) is not supported: Arrow holds it in nanoseconds")


def is_least_part(months, days, micros):
    """Is a part (numbers, or numpy arrays of them) at its least value, whose negation
    DuckDB refuses: -2**31 months or days, -2**63 microseconds?"""
    return (months == -2**31) | (days == -2**31) | (micros == -2**63)


def interval_micros(months, days, micros):
    """An INTERVAL's length in microseconds, as DuckDB measures one where it needs a single
    number (fetchall's timedelta, ``df()``, ``median``, ``epoch_us``, a series' direction):
    a month 30 days, a day 24 hours.  Numbers or numpy arrays (int64 ones may overflow: pass
    Python ints, floats or object arrays where the result can pass 2**63)."""
    return (months * DAYS_PER_MONTH + days) * US_PER_DAY + micros


@dataclass(frozen=True)
class Interval:
    """A SQL INTERVAL literal, kept as DuckDB keeps it: months, days and microseconds."""

    months: int = 0
    days: int = 0
    micros: int = 0

    def __neg__(self) -> Interval:
        """The negated interval, as DuckDB's: each part negated, an error for one at its
        least value (``NEGATION_OVERFLOW``)."""
        if is_least_part(self.months, self.days, self.micros):
            raise DatetimeError(NEGATION_OVERFLOW)
        return Interval(-self.months, -self.days, -self.micros)

    def __add__(self, other: Interval) -> Interval:
        """The sum, if DuckDB holds it (``checked``): it adds the parts as 32-bit and 64-bit
        integers and refuses an overflow."""
        return Interval(self.months + other.months, self.days + other.days,
                        self.micros + other.micros).checked()

    def times(self, count: int) -> Interval:
        """The interval ``count`` times, as DuckDB's INTERVAL * INTEGER: the count an
        INTEGER, the months and days 32-bit and the microseconds 64-bit, else an error."""
        if outside(count, 32):
            raise DatetimeError(count_past_integer(count))
        return Interval(self.months * count, self.days * count, self.micros * count).checked()

    def checked(self) -> Interval:
        """The interval, if DuckDB holds it: 32-bit months and days, 64-bit microseconds."""
        if off_interval_range(self.months, self.days, self.micros):
            raise DatetimeError(INTERVAL_RANGE)
        return self

    @classmethod
    def of_arrow(cls, value: pa.Scalar) -> Interval | None:
        """An Arrow month_day_nano scalar (``to_days(3)``) as an Interval, None for NULL."""
        if not value.is_valid:
            return None
        months, days, nanos = value.value
        return cls(months, days, nanos // 1000)

    def as_arrow(self) -> pa.Scalar:
        """The interval as an Arrow month_day_nano scalar (``check_arrow_time``)."""
        check_arrow_time(abs(self.micros))
        return pa.scalar(pa.MonthDayNano([self.months, self.days, self.micros * 1000]),
                         pa.month_day_nano_interval())

    def as_timedelta(self) -> dt.timedelta:
        """The interval as a timedelta (months count 30 days, as DuckDB prints them)."""
        return dt.timedelta(microseconds=interval_micros(self.months, self.days, self.micros))


def parse_interval(amount: str) -> Interval:
    """An INTERVAL's text as DuckDB reads it: ``'2 hours'``, ``'1 year 2 months'``, ``'1 day
    10:30:00'``, a bare number of seconds (``INTERVAL '3' DAY``, an amount and a unit, is
    ``interval_amounts``'s), perhaps after an ``@`` (``'@ 1 day'``) and, without a time,
    ending in ``ago``, which negates it (``'1 day ago'``).  A number starts with a digit
    and has no ``+`` sign (``'+1 day'``, ``'.5'`` are no intervals)."""
    text = amount.strip(SPACES)
    body = text[1:].lstrip(SPACES) if text.startswith("@") else text
    if re.fullmatch(r"-?\d+(\.\d*)?", body, re.ASCII):  # a bare number counts seconds
        return _interval_part(body, "second").checked()
    clock = _INTERVAL_CLOCK.search(body)
    head = body if clock is None else body[:clock.start()]
    ago = clock is None and re.search(r"[A-Za-z]\s+ago$", head, re.IGNORECASE | re.ASCII) is not None
    if ago:
        head = head[:-3]
    parts = _INTERVAL_PART.findall(head)
    if not (parts or clock) or _INTERVAL_PART.sub("", head).strip(SPACES):
        raise DatetimeError(f"cannot read INTERVAL {text!r}")
    total = Interval()
    for number, word in parts:
        total = total + _interval_part(number, word)
    if clock is not None:
        micros = _clock_micros(clock.group(2), body[clock.end():], text)
        total = total + Interval(micros=-micros if clock.group(1) else micros)
    return -total.checked() if ago else total.checked()


# an amount and a unit in an interval's text ('2 hours', '-1.5days', '5. days')
_INTERVAL_PART = re.compile(r"(-?\d+(?:\.\d*)?)\s*([A-Za-z]+)", re.ASCII)


# a time of day in an interval's text ('1 day 10:30:00', '-23:59:59.999999'): its sign, hours
_INTERVAL_CLOCK = re.compile(r"(-?)(\d+):", re.ASCII)
# after the hours' colon: nothing, minutes, minutes and a colon, or minutes and seconds with
# any fraction -- and then DuckDB reads no further ('01:00:00 2 hours' is one hour)
_INTERVAL_CLOCK_REST = re.compile(r"(?:(\d{1,2})(?::(\d{1,2})(?:\.(\d*))?|:)?)?", re.ASCII)


def _clock_micros(hours: str, rest: str, text: str) -> int:
    """The microseconds of the time ``hours:rest`` as DuckDB reads it: up to 9 digits of
    hours, minutes and seconds below 60, the fraction's first 6 digits."""
    found = _INTERVAL_CLOCK_REST.match(rest)
    minutes, seconds, fraction = found.groups()
    complete = seconds is not None or found.end() == len(rest)  # H:M trails nothing
    if len(hours) > 9 or not complete or int(minutes or 0) >= 60 or int(seconds or 0) >= 60 \
            or (minutes is None and rest):
        raise DatetimeError(f"cannot read INTERVAL {text!r}")
    whole = (int(hours) * 60 + int(minutes or 0)) * 60 + int(seconds or 0)
    return whole * US_PER["second"] + int((fraction or "")[:6].ljust(6, "0"))


def spelled(name: str) -> str:
    """The date part or unit ``name`` stands for (``'yrs'`` -> ``'year'``), lower-cased."""
    name = name.lower()
    return SPELLINGS.get(name, name)


def _interval_part(number: str, word: str) -> Interval:
    """``number word`` of an INTERVAL's text, as DuckDB reads it: years (decades ...) to the
    nearest month; a fraction of a quarter, month, week or day cascading down (a month is 30
    days, a day 86,400 seconds: ``'1.5 months'`` is 1 month 15 days); the microseconds rounded
    half away from zero, but a fraction of a microsecond dropped."""
    unit = spelled(word)
    if unit not in UNITS:
        raise DatetimeError(f"unknown INTERVAL unit {word!r}")
    amount = decimal.Decimal(number)
    if unit in US_PER:
        micros = amount * US_PER[unit]
        return Interval(micros=int(micros if unit == "microsecond" else
                                   micros.to_integral_value(decimal.ROUND_HALF_UP)))
    if MONTHS_PER.get(unit, 0) >= 12:
        return Interval(int((amount * MONTHS_PER[unit]).to_integral_value(
            decimal.ROUND_HALF_UP)))
    months = amount * MONTHS_PER.get(unit, 0)
    days = (months - int(months)) * DAYS_PER_MONTH + amount * DAYS_PER.get(unit, 0)
    micros = ((days - int(days)) * US_PER_DAY).to_integral_value(decimal.ROUND_HALF_UP)
    return Interval(int(months), int(days), int(micros))


class _NotADate(ValueError):
    """A string that is not shaped like a date (not merely a day or hour out of range)."""


# the days (since 1970) of DuckDB's first and last DATE, 5877642-06-25 (BC) and 5881580-07-10,
# and the microseconds of its first and last TIMESTAMP, 290309-12-22 (BC) and 294247-01-10
FIRST_DAY, LAST_DAY = (int(np.datetime64(text, "D").astype(np.int64))
                       for text in ("-5877641-06-25", "5881580-07-10"))
_FIRST_MICROS, _LAST_MICROS = -9_223_372_022_400_000_000, 2**63 - 2
_EPOCH = dt.datetime(1970, 1, 1)


# DuckDB's special DATE / TIMESTAMP strings (any case, spaces around) and what each names
_SPECIAL_STAMPS = {"epoch": "epoch", "infinity": "infinity", "inf": "infinity",
                   "-infinity": "-infinity", "-inf": "-infinity"}


def special_stamp(text: str) -> str | None:
    """``'epoch'``, ``'infinity'`` or ``'-infinity'`` if ``text`` is one of DuckDB's special
    DATE / TIMESTAMP strings (``'Epoch'``, ``' inf'``, ``'-INFINITY'``), else None."""
    return _SPECIAL_STAMPS.get(text.strip(SPACES).lower())


def _is_epoch(text: str, type_name: str) -> bool:
    """Is ``text`` DuckDB's ``'epoch'`` (1970-01-01)?  Its infinite DATEs and TIMESTAMPs
    are refused: the engine has no value after (before) every other one, which every date
    function would have to respect (DuckDB's ``year('infinity'::DATE)`` is NULL)."""
    special = special_stamp(text)
    if special in ("infinity", "-infinity"):
        raise UnsupportedSql(f"the {special} {type_name} ({text.strip()!r}) is not "
                             "supported: tdbsql has no infinite dates or timestamps")
    return special == "epoch"


def parse_date(text: str) -> int:
    """A DATE literal as days since 1970-01-01; like DuckDB, a time part is allowed and
    dropped, a year may have more than four digits, be negative or be followed by ``(BC)``;
    ``'epoch'`` is 1970-01-01 (``_is_epoch``).  Errors are worded as DuckDB's."""
    if _is_epoch(text, "DATE"):
        return 0
    try:
        stamp, days = _parse_datetime(text, date_only=True)
        days += (stamp.date() - _EPOCH.date()).days
        if not FIRST_DAY <= days <= LAST_DAY:
            raise ValueError(text)
        return days
    except _NotADate:
        raise DatetimeError(f'invalid date field format: "{text}", expected format is '
                            "(YYYY-MM-DD)") from None
    except ValueError:
        raise DatetimeError(f'date field value out of range: "{text}"') from None


def parse_timestamp(text: str, zone: bool = False) -> int:
    """A TIMESTAMP literal as microseconds since 1970-01-01, read as DuckDB reads one: the
    year as ``parse_date`` reads it, and after the time a UTC offset (``+02``, ``-05:30``,
    ``+0530``, ``Z``) or a space and a time zone name (``UTC``, ``Europe/Berlin``) may
    follow.  A TIMESTAMP ignores it (``'10:00+02'`` is 10:00); with ``zone`` (TIMESTAMP WITH
    TIME ZONE) it applies, and the result is UTC's.  ``'epoch'`` is 1970-01-01
    (``_is_epoch``)."""
    if _is_epoch(text, "TIMESTAMP"):
        return 0
    try:
        stamp, days = _parse_datetime(text, zone)
        micros = (stamp - _EPOCH) // dt.timedelta(microseconds=1) + days * US_PER_DAY
        if not _FIRST_MICROS <= micros <= _LAST_MICROS:
            raise ValueError(text)
        return micros
    except _NotADate:
        raise DatetimeError(f'invalid timestamp field format: "{text}", expected format is '
                            "(YYYY-MM-DD HH:MM[:SS[.US]][±HH[:MM[:SS]]| ZONE])") from None
    except _UnknownZone as err:
        raise DatetimeError(f"Unknown TimeZone '{err}'!") from None
    except ValueError:
        raise DatetimeError(f'timestamp field value out of range: "{text}"') from None


def parse_timestamp_ns(text: str, zone: bool = False) -> int:
    """A TIMESTAMP_NS literal as nanoseconds since 1970-01-01: ``parse_timestamp``'s
    microseconds and the 7th to 9th digits of the seconds' fraction (DuckDB drops later ones)."""
    micros = parse_timestamp(text, zone)
    fraction = _FRACTION.search(text)
    extra = fraction.group(1)[6:9].ljust(3, "0") if fraction else "000"
    return micros * 1000 + int(extra)


SPACES = " \t\n\v\f\r"  # the white space DuckDB skips around a value (ASCII only)
_FRACTION = re.compile(r":\d{1,2}\.(\d*)", re.ASCII)  # the seconds' fraction (no offset has one)


class _UnknownZone(ValueError):
    """A time zone name that is not in the tz database."""


# a date: year, month and day apart by one of DuckDB's separators, the same twice
# ('2024-01-31', '2024/1/31', '2024\\01\\31', '2024 01 31'), perhaps then `` (BC)``
_DATE = re.compile(r"(-?\d+)([-/\\ ])(\d{1,2})\2(\d{1,2})(?i:( \(bc\)))?", re.ASCII)
# the clock after a date ('T' or whitespace between), then an offset or `` ZONE`` (a name of
# the characters DuckDB allows in one: ' (BC)' after a time is no zone)
_CLOCK = re.compile(r"(?:T\s*|\s+)(\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d*))?)?"
                    r"(?:(Z|[+-]\d\d(?::?\d\d(?::?\d\d)?)?)| ([\w/+:-]+))?", re.ASCII)


def _parse_datetime(text: str, zone: bool = False,
                    date_only: bool = False) -> tuple[dt.datetime, int]:
    """(the datetime written -- a year outside Python's 1..9999, or one a UTC offset carries
    past them, moved by whole 2,000-year cycles into 1970..3969, where the calendar repeats;
    a zone's rules apply to the real year otherwise -- and the days it was moved back by)."""
    cleaned = text.strip(SPACES)
    day = _DATE.match(cleaned)
    if not day or day.group(5) and int(day.group(1)) < 1:  # no year 0 BC
        raise _NotADate(text)
    if not date_only and day.end() == len(cleaned) and text.rstrip(SPACES) != text:
        raise _NotADate(text)  # DuckDB's TIMESTAMP takes no spaces after a date alone
    year = 1 - int(day.group(1)) if day.group(5) else int(day.group(1))
    cycles = 0 if 1 <= year <= 9999 else (year - 1970) // CYCLE_YEARS
    base = dt.datetime(year - cycles * CYCLE_YEARS, int(day.group(3)), int(day.group(4)))
    try:
        stamp = _clock(cleaned, day.end(), base, text, zone, date_only)
    except OverflowError:  # '0001-01-01 00:00+01' is in the year 0
        cycles = (year - 1970) // CYCLE_YEARS
        base = dt.datetime(year - cycles * CYCLE_YEARS, int(day.group(3)), int(day.group(4)))
        stamp = _clock(cleaned, day.end(), base, text, zone, date_only)
    return stamp, cycles * CYCLE_DAYS


def _clock(cleaned: str, start: int, base: dt.datetime, text: str, zone: bool,
           date_only: bool) -> dt.datetime:
    """``base`` (the date) at the time written from ``start`` of ``cleaned``, if any."""
    if start == len(cleaned):
        return base
    clock = _CLOCK.fullmatch(cleaned, start)
    if not clock:
        raise _NotADate(text)
    hour, minute, second, fraction, offset, zone_name = clock.groups()
    if offset is None and zone_name is None and \
            text[len(text.rstrip(SPACES)):][:1] not in ("", " "):
        raise _NotADate(text)  # as DuckDB: a clock without a zone ends, or a space follows it
    hour, minute, second = int(hour), int(minute), int(second or 0)
    if hour == 24 and minute == second == 0 and not (fraction or "").strip("0"):
        if date_only:  # a DATE keeps its day
            return base
        hour, base = 0, base + dt.timedelta(days=1)  # DuckDB reads 24:00:00 as midnight after
    stamp = base.replace(hour=hour, minute=minute, second=second,
                         microsecond=int((fraction or "")[:6].ljust(6, "0")))
    if not zone:
        return stamp  # DuckDB's TIMESTAMP keeps the wall-clock time and drops the zone
    if zone_name is not None:
        try:
            return stamp - wall_offset(stamp, time_zone(zone_name))
        except OverflowError:  # moved a cycle, the zone's rules would be another year's
            raise UnsupportedSql(f"the TIMESTAMP WITH TIME ZONE {text.strip()!r}: a time "
                                 "zone name in the years 1 and 9999 is not supported") from None
    return stamp - _offset(offset)


def wall_offset(wall: dt.datetime, zone: dt.tzinfo) -> dt.timedelta:
    """``zone``'s UTC offset at the wall-clock time ``wall`` (naive).  A time the zone's
    change skips or repeats takes the smaller offset, as DuckDB (ICU) reads it: the offset
    before a skip, the later one of a repeat."""
    return min(wall.replace(tzinfo=zone, fold=fold).utcoffset() for fold in (0, 1))


def _offset(text: str | None) -> dt.timedelta:
    """``+HH[[:]MM[[:]SS]]`` or ``Z`` as a timedelta (any number of hours, as DuckDB)."""
    if text is None or text == "Z":
        return dt.timedelta(0)
    digits = text[1:].replace(":", "")
    parts = [int(digits[i:i + 2]) for i in range(0, len(digits), 2)] + [0, 0]
    amount = dt.timedelta(hours=parts[0], minutes=parts[1], seconds=parts[2])
    return -amount if text[0] == "-" else amount


def time_zone(name: str) -> dt.tzinfo:
    """The tz database zone ``name`` (any case: ``america/new_york``), or one of the fixed
    offsets DuckDB reads besides (``GMT+1``, ``UTC-05``: ``zone_offsets``)."""
    import zoneinfo

    fixed = fixed_zone(name)
    if fixed is not None:
        return fixed
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        pass
    spelled_so = _zone_names().get(name.lower())
    if spelled_so is None:
        raise _UnknownZone(name)
    return zoneinfo.ZoneInfo(spelled_so)


@functools.cache
def _zone_names() -> dict[str, str]:
    import zoneinfo

    return {name.lower(): name for name in zoneinfo.available_timezones()}


# a TIME's text as DuckDB reads it: H:M and nothing after, or H:M: and its seconds and
# fraction (each may be left out) and then anything, unread (a UTC offset, a zone name)
_TIME = re.compile(r"\s*(\d{1,2}):(\d{1,2})(?:\Z|:(?:\Z|(\d{1,2})(?:\.(\d*))?))", re.ASCII)


def parse_time(text: str) -> int:
    """A TIME as DuckDB reads one, in microseconds since midnight: ``H:M``, or
    ``H:M:S[.ffffff]`` before anything it does not read (``'10:00:00+05'``, ``'10:00:00
    UTC'``), digits past microseconds cut; ``24:00:00`` (no fraction) is the end of the day,
    a whole day's microseconds, which DuckDB keeps apart from midnight; else, as DuckDB's last
    chance, the time of day of a TIMESTAMP's text (``'2024-01-31 10:30 UTC'`` is 10:30; a
    date alone, or ``'epoch'``, is midnight)."""
    match = _TIME.match(text)
    try:
        if match is not None:
            hour, minute, second, fraction = match.groups()
            micros = int((fraction or "")[:6].ljust(6, "0"))
            if int(hour) == 24 and int(minute) == int(second or 0) == micros == 0:
                return US_PER_DAY
            clock = dt.time(int(hour), int(minute), int(second or 0), micros)
            return ((clock.hour * 60 + clock.minute) * 60 + clock.second) * 1_000_000 + micros
        return parse_timestamp(text) % US_PER_DAY
    except (ValueError, UnsupportedSql):  # DatetimeError too; an infinity has no time
        pass
    raise DatetimeError(f'time field value out of range: "{text}", expected format is '
                        "([YYYY-MM-DD ]HH:MM:SS[.MS])")


def parse_time_ns(text: str) -> int:
    """``parse_time``'s TIME in nanoseconds, with the 7th to 9th digits of the seconds'
    fraction (DuckDB's TIME_NS; later digits dropped)."""
    micros = parse_time(text)
    match = _TIME.match(text) or _FRACTION.search(text)  # a TIMESTAMP's time of day too
    fraction = (match.group(4) if match.re is _TIME else match.group(1)) if match else None
    extra = int((fraction or "")[6:9].ljust(3, "0"))
    if micros == US_PER_DAY and extra:
        raise DatetimeError(f'time field value out of range: "{text}", expected format is '
                            "([YYYY-MM-DD ]HH:MM:SS[.MS])")
    return micros * 1000 + extra


# --- arithmetic -----------------------------------------------------------------------------


def finest_unit(units) -> str:
    """The finest of some timestamp units ("s" < "ms" < "us" < "ns")."""
    return max(units, key=PER_SECOND.__getitem__)


def to_timestamp(value, unit: str = "us"):
    """Dates become midnight timestamps (DuckDB's implicit DATE -> TIMESTAMP); a date past
    the TIMESTAMP range is a ``DatetimeError``."""
    if pa.types.is_timestamp(value.type):
        return value
    try:
        return pc.cast(value, pa.timestamp(unit))
    except pa.ArrowInvalid:
        raise DatetimeError(OUT_OF_RANGE) from None


def to_coarser_unit(stamps, target: pa.DataType):
    """TIMESTAMP -> a coarser TIMESTAMP_S / _MS / _US, rounding half away from zero as DuckDB
    (Arrow's safe cast refuses any fraction)."""
    digits = round(math.log10(PER_SECOND[stamps.type.unit] // PER_SECOND[target.unit]))
    ticks = pc.cast(stamps, pa.int64())
    rounded = pc.round(ticks, ndigits=-digits, round_mode="half_towards_infinity")
    return pc.cast(pc.divide(rounded, 10**digits), target)


def epoch_micros(value, per: int = 1):
    """DATE / TIMESTAMP values as int64 counts of ``per`` microseconds (a whole number of
    them in a day) since the epoch, rounded down (a TIMESTAMP_NS first rounded to
    microseconds, as DuckDB casts it); a DATE counted from its days, as DuckDB does, so one
    past the TIMESTAMP range counts too."""
    if pa.types.is_date(value.type):
        try:
            return pc.multiply_checked(date_diff_days(value, pa.scalar(0, pa.date32())),
                                       US_PER_DAY // per)
        except pa.ArrowInvalid:
            raise DatetimeError(f"the DATE is past the BIGINT range of {per} "
                                "microseconds since 1970") from None
    if value.type.unit == "ns":  # to microseconds as DuckDB casts: half away from zero
        value = to_coarser_unit(value, pa.timestamp("us", tz=value.type.tz))
    micros = pc.cast(pc.cast(value, pa.timestamp("us", tz=value.type.tz)), pa.int64())
    return micros if per == 1 else floor_div(micros, per)


def add_interval(value, interval: Interval):
    """``date|timestamp + INTERVAL`` -> timestamp (calendar-aware months)."""
    stamps = to_timestamp(value)
    if interval.months:
        stamps = add_months(stamps, interval.months)
    offset = interval.days * US_PER_DAY + interval.micros
    if offset:
        if offset % (10**6 // min(PER_SECOND[stamps.type.unit], 10**6)):
            # finer than a TIMESTAMP_S / _MS holds: microseconds, DuckDB's TIMESTAMP result
            stamps = pc.cast(stamps, pa.timestamp("us", tz=stamps.type.tz))
        unit = stamps.type.unit
        ticks = PER_SECOND[unit]
        amount = offset * (ticks // 10**6) if ticks >= 10**6 else offset // (10**6 // ticks)
        try:
            stamps = pc.add_checked(stamps, pa.scalar(amount, pa.duration(unit)))
        except (OverflowError, pa.ArrowInvalid):  # past int64 ticks, or the sum is
            raise DatetimeError(OUT_OF_RANGE) from None
    return stamps


def add_months(stamps, months):
    """Add ``months`` (a number, or an int64 array: one per row) with DuckDB's day clamping.
    Arrow extracts year/month/day (``arrow_calendar``); the first day and length of each
    target month come from a small table over the months present."""
    if isinstance(stamps, pa.Scalar):
        return add_months(pa.repeat(stamps, 1), months)[0]
    stamp_type = stamps.type
    per_day = 86_400 * PER_SECOND[stamp_type.unit]
    ticks = pc.cast(stamps, pa.int64())
    time_of_day = pc.subtract(ticks, pc.multiply(floor_div(ticks, per_day), per_day))
    calendar = arrow_calendar(stamps)
    year, month = calendar.year(), pc.cast(pc.month(calendar.moved), pa.int64())
    total = pc.add(pc.add(pc.multiply(year, 12), month), pc.subtract(months, 1))  # target month
    bounds = pc.min_max(total)
    if not bounds["min"].is_valid:  # all NULL
        return stamps
    low, high = bounds["min"].as_py(), bounds["max"].as_py()
    if low < _FIRST_MONTH or high > _LAST_MONTH:
        raise DatetimeError(OUT_OF_RANGE)
    first_days, lengths = _month_table(low, high)
    index = pc.subtract(total, low)
    day = pc.min_element_wise(pc.cast(pc.day(calendar.moved), pa.int64()),
                              pc.take(lengths, index))
    day_number = pc.add(pc.take(first_days, index), pc.subtract(day, 1))
    try:
        moved = pc.add_checked(pc.multiply_checked(day_number, per_day), time_of_day)
    except pa.ArrowInvalid:
        raise DatetimeError(OUT_OF_RANGE) from None
    return pc.cast(moved, stamp_type)


OUT_OF_RANGE = "Date and time not in timestamp range"
# the months (year * 12 + month - 1) a microsecond TIMESTAMP reaches
_FIRST_MONTH, _LAST_MONTH = (
    int(np.datetime64(ticks, "us").astype("datetime64[M]").astype(np.int64)) + 1970 * 12
    for ticks in (-2**63 + 1, 2**63 - 1))


def _month_table(low: int, high: int) -> tuple[pa.Array, pa.Array]:
    """Days since 1970-01-01 of the first day, and the day count, of months ``low..high``
    (a month number is year * 12 + month - 1)."""
    months = (np.arange(low, high + 1, dtype=np.int64) - 1970 * 12).astype("datetime64[M]")
    starts = months.astype("datetime64[D]").astype(np.int64)
    return pa.array(starts), pa.array(month_lengths(months))


def month_lengths(months: np.ndarray) -> np.ndarray:
    """The day count (int64) of each month of a datetime64[M] array."""
    return ((months + 1).astype("datetime64[D]") - months.astype("datetime64[D]")) \
        .astype(np.int64)


def micros_as_times(micros, target: pa.DataType = pa.time64("us"), unit: str = "us"):
    """int64 microseconds (or ``unit``s) since midnight as TIMEs of ``target``'s unit (a whole
    day is 24:00:00, kept as DuckDB keeps it: Arrow's value one past its last time of day)."""
    return pc.cast(pc.cast(micros, pa.time64(unit)), target, safe=False)


def rounded_to_micros(times, target: pa.DataType):
    """TIME_NS values as TIMEs of ``target``, rounded to the microsecond half up, as DuckDB's
    cast rounds them (23:59:59.9999995 becomes 24:00:00, the end of the day)."""
    nanos = pc.cast(times, pa.int64())
    return micros_as_times(pc.divide(pc.add(nanos, 500), 1000), target)


def time_ticks(times, per_second: int):
    """TIMEs (any unit) as whole ``per_second`` ticks since midnight, the rest cut, as
    DuckDB's epoch_ms / epoch_us / epoch_ns count them (a TIME_NS its own nanoseconds)."""
    if times.type == pa.time64("ns"):
        nanos = pc.cast(times, pa.int64())
        return nanos if per_second == 10**9 else pc.divide(nanos, 10**9 // per_second)
    micros = _micros_of_day(times)
    if per_second >= 10**6:
        return pc.multiply(micros, per_second // 10**6)
    return pc.divide(micros, 10**6 // per_second)


def end_of_day(times):
    """Where TIMEs (any unit) are 24:00:00, DuckDB's end of the day."""
    return pc.equal(_micros_of_day(times), US_PER_DAY)


def _time_part(part: str, times):
    """A part of the clock of TIMEs, counted from their microseconds (24:00:00 is hour 24)."""
    micros = _micros_of_day(times)
    if part == "hour":
        return pc.divide(micros, 3_600_000_000)
    of_minute = pc.subtract(micros, pc.multiply(pc.divide(micros, 60_000_000), 60_000_000))
    if part == "minute":
        return pc.subtract(pc.divide(micros, 60_000_000),
                           pc.multiply(pc.divide(micros, 3_600_000_000), 60))
    return pc.divide(of_minute, {"second": 1_000_000, "millisecond": 1000,
                                 "microsecond": 1}[part])


def _micros_of_day(times):
    """TIME values (any Arrow time unit) as int64 microseconds since midnight (nanoseconds
    cut, as DuckDB's TIME holds microseconds)."""
    return pc.cast(pc.cast(times, pa.time64("us"), safe=False), pa.int64())


def _arithmetic_micros(times):
    """``_micros_of_day`` of the TIMEs an arithmetic operator takes: DuckDB has none for a
    TIME_NS (no ``TIME_NS + INTERVAL``, no ``DATE + TIME_NS``), nor do we."""
    if times.type == pa.time64("ns"):
        raise DatetimeError("no arithmetic on a TIME_NS (DuckDB has none): cast it to TIME")
    return _micros_of_day(times)


def add_time_interval(times, interval: Interval):
    """``TIME + INTERVAL`` -> TIME, as DuckDB: only the interval's time part counts (its days
    and months are dropped) and the clock wraps around midnight (23:00 + 2 hours = 01:00)."""
    micros = pc.add(_arithmetic_micros(times), interval.micros % US_PER_DAY)
    wrapped = pc.if_else(pc.greater_equal(micros, US_PER_DAY),
                         pc.subtract(micros, US_PER_DAY), micros)
    return pc.cast(wrapped, pa.time64("us"))


def add_time_micros(times, micros):
    """``TIME + INTERVAL`` for an INTERVAL computed from timestamps (BIGINT microseconds, a
    value per row): the clock wraps around midnight, as ``add_time_interval``."""
    total = pc.add_checked(_arithmetic_micros(times), micros)
    rest = pc.subtract(total, pc.multiply(pc.divide(total, US_PER_DAY), US_PER_DAY))
    wrapped = pc.if_else(pc.less(rest, 0), pc.add(rest, US_PER_DAY), rest)
    return pc.cast(wrapped, pa.time64("us"))


def date_at_time(dates, times):
    """``DATE + TIME`` -> the TIMESTAMP at that time of that day."""
    offsets = pc.cast(_arithmetic_micros(times), pa.duration("us"))
    return pc.add_checked(to_timestamp(dates), offsets)


def add_days(value, days):
    """``date + integer`` -> date."""
    total = pc.add_checked(pc.cast(pc.cast(value, pa.int32()), pa.int64()), days)
    return pc.cast(pc.cast(total, pa.int32()), pa.date32())


def date_diff_days(left, right):
    """``date - date`` -> BIGINT days."""
    return pc.subtract_checked(pc.cast(pc.cast(left, pa.int32()), pa.int64()),
                               pc.cast(pc.cast(right, pa.int32()), pa.int64()))


def common_timestamp(left, right):
    """Both sides as timestamps of one unit (the finer one)."""
    units = [v.type.unit for v in (left, right) if pa.types.is_timestamp(v.type)]
    unit = finest_unit(units) if units else "us"
    return (pc.cast(to_timestamp(left, unit), pa.timestamp(unit)),
            pc.cast(to_timestamp(right, unit), pa.timestamp(unit)))


# --- extract and date_trunc -----------------------------------------------------------------

PARTS = ("year", "quarter", "month", "day", "dow", "isodow", "doy", "week", "isoyear",
         "yearweek", "hour", "minute", "second", "millisecond", "microsecond", "epoch",
         "julian", "decade", "century", "millennium", "era", "timezone", "timezone_hour",
         "timezone_minute")
_ZONE_PARTS = ("timezone", "timezone_hour", "timezone_minute")
TIME_PARTS = ("hour", "minute", "second", "millisecond", "microsecond", "epoch", *_ZONE_PARTS)
# DuckDB's spellings of each part (GetDatePartSpecifier)
_JULIAN_EPOCH = 2_440_588  # the Julian day number of 1970-01-01


def normalise_part(name: str) -> str:
    part = spelled(name)
    if part not in PARTS:
        raise DatetimeError(f"unknown date part {name!r} (known: {', '.join(PARTS)})")
    return part


def extract(part: str, value):
    """EXTRACT(part FROM value) for a date, timestamp or time (of a TIME only the parts of
    the clock, as DuckDB): BIGINT, ``epoch`` and ``julian`` (the Julian day, with the time
    of day as its fraction) DOUBLE."""
    part = normalise_part(part)
    if pa.types.is_time(value.type) and part not in TIME_PARTS:
        raise DatetimeError(f"there is no {part} in a TIME (only {', '.join(TIME_PARTS)})")
    if part in _ZONE_PARTS:  # no session time zone: every value is UTC's
        if pa.types.is_date(value.type):
            raise DatetimeError(f"there is no {part} in a DATE")
        return _zeros(value)
    if part == "epoch":
        return _epoch(value)
    if part == "julian":
        return pc.add(pc.divide(_epoch(value), 86400.0), float(_JULIAN_EPOCH))
    if pa.types.is_date(value.type) and part in TIME_PARTS:  # a DATE is at midnight
        return _zeros(value)
    if pa.types.is_time(value.type):
        return _time_part(part, value)
    return pc.cast(_PART_FUNCS[part](arrow_calendar(value)), pa.int64())


def _zeros(value):
    """BIGINT 0 for each value, NULL for NULL."""
    return pc.if_else(pc.is_valid(value), pa.scalar(0, pa.int64()), pa.scalar(None, pa.int64()))


def _epoch(value):
    if pa.types.is_date(value.type):
        days = pc.cast(pc.cast(value, pa.int32()), pa.float64())
        return pc.multiply(days, 86400.0)
    if pa.types.is_time(value.type):  # a TIME_NS's nanoseconds cut, as DuckDB's
        return pc.divide(pc.cast(_micros_of_day(value), pa.float64()), 1e6)
    if value.type.unit == "ns":  # DuckDB counts a TIMESTAMP_NS's rounded microseconds
        value = to_coarser_unit(value, pa.timestamp("us", tz=value.type.tz))
    per_second = float(PER_SECOND[value.type.unit])  # ticks past 2**53 round, as DuckDB's
    ticks = pc.cast(pc.cast(value, pa.int64()), pa.float64(), safe=False)
    return pc.divide(ticks, per_second)


def _seconds_scaled(value, scale: int):
    """The minute's seconds in 1/``scale`` seconds, counted down from its microseconds; a
    TIMESTAMP_NS's from its epoch rounded to microseconds first, as DuckDB counts them
    (23:59:59.9999999 then gives 0 microseconds though its second is 59)."""
    if pa.types.is_timestamp(value.type):
        epoch = epoch_micros(value)
        micros = pc.subtract(epoch, pc.multiply(floor_div(epoch, 60_000_000), 60_000_000))
    else:
        micros = pc.add(pc.multiply(pc.cast(pc.second(value), pa.int64()), 1_000_000),
                        pc.add(pc.multiply(pc.cast(pc.millisecond(value), pa.int64()), 1000),
                               pc.cast(pc.microsecond(value), pa.int64())))
    return pc.divide(micros, 1_000_000 // scale)


def _kernel(function, **options):
    """A part Arrow reads alike in every 2,000-year cycle, from an ``ArrowCalendar``."""
    return lambda calendar: function(calendar.moved, **options)


def _yearweek(calendar):
    """DuckDB's ISO year * 100 + ISO week, the week negated in years up to 0."""
    years = calendar.year(pc.iso_year)
    weeks = pc.cast(pc.iso_week(calendar.moved), pa.int64())
    return pc.add(pc.multiply(years, 100),
                  pc.if_else(pc.greater(years, 0), weeks, pc.negate(weeks)))


def _centuries(years, per: int):
    """DuckDB's century / millennium of a year: years 1..100 are century 1, years 0..-99
    century -1 (and so on by hundreds or thousands)."""
    return pc.if_else(pc.greater(years, 0), pc.add(pc.divide(pc.subtract(years, 1), per), 1),
                      pc.subtract(pc.divide(years, per), 1))


# each part of an ``ArrowCalendar``; integer division truncates toward zero, as DuckDB's
_PART_FUNCS = {
    "year": lambda c: c.year(), "quarter": _kernel(pc.quarter), "month": _kernel(pc.month),
    "day": _kernel(pc.day),
    "dow": _kernel(pc.day_of_week, count_from_zero=True, week_start=7),
    "isodow": _kernel(pc.day_of_week, count_from_zero=False, week_start=1),
    "doy": _kernel(pc.day_of_year), "week": _kernel(pc.iso_week),
    "isoyear": lambda c: c.year(pc.iso_year),
    "hour": _kernel(pc.hour), "minute": _kernel(pc.minute), "second": _kernel(pc.second),
    "millisecond": lambda c: _seconds_scaled(c.moved, 1000),
    "microsecond": lambda c: _seconds_scaled(c.moved, 1_000_000),
    "yearweek": _yearweek,
    "decade": lambda c: pc.divide(c.year(), 10),
    "century": lambda c: _centuries(c.year(), 100),
    "millennium": lambda c: _centuries(c.year(), 1000),
    "era": lambda c: pc.if_else(pc.greater(c.year(), 0), 1, 0),
}

_YEARS_PER = {"decade": 10, "century": 100, "millennium": 1000}
TRUNC_UNITS = ("millennium", "century", "decade", "isoyear", "year", "quarter", "month", "week",
               "day", "hour", "minute", "second", "millisecond", "microsecond")

# parts DuckDB's date_trunc takes as the unit they count in: a day of the week / year, a
# Julian day, a week of the ISO year, seconds since the epoch
_TRUNC_AS = {"dow": "day", "isodow": "day", "doy": "day", "julian": "day", "yearweek": "week",
             "epoch": "second"}


def date_trunc(unit: str, value):
    """date_trunc('unit', value) -> TIMESTAMP (weeks start on Monday, as ISO and DuckDB; a
    decade, century or millennium starts in the year cut toward zero to a multiple of 10,
    100, 1000, as DuckDB's; an ISO year on the Monday of its week 1)."""
    name = spelled(unit)
    name = _TRUNC_AS.get(name, name)
    if name not in TRUNC_UNITS:
        raise DatetimeError(f"unknown date_trunc unit {unit!r} (known: {', '.join(TRUNC_UNITS)})")
    stamps = to_timestamp(value)
    if name in _YEARS_PER:
        return _first_of_years(stamps, _YEARS_PER[name])
    calendar = arrow_calendar(stamps)
    if name == "isoyear":
        return calendar.back(_iso_year_start(calendar.moved))
    return calendar.back(pc.floor_temporal(calendar.moved, multiple=1, unit=name,
                                           week_starts_monday=True))


def _first_of_years(stamps, multiple: int):
    """January 1 of each value's year cut toward zero to a multiple of ``multiple``."""
    if isinstance(stamps, pa.Scalar):
        return _first_of_years(pa.repeat(stamps, 1), multiple)[0]
    if isinstance(stamps, pa.ChunkedArray):
        stamps = stamps.combine_chunks()
    years = pc.divide(arrow_calendar(stamps).year(), multiple)  # toward zero
    since_1970 = pc.subtract(pc.multiply(pc.fill_null(years, 0), multiple), 1970)
    starts = since_1970.to_numpy().astype("M8[Y]").astype(f"M8[{stamps.type.unit}]")
    return pa.array(starts.astype(np.int64), pa.int64(),
                    mask=pc.is_null(stamps).to_numpy(zero_copy_only=False)).cast(stamps.type)


def _iso_year_start(stamps):
    """The Monday of ISO week 1 of each value's ISO year."""
    per_day = 86_400 * PER_SECOND[stamps.type.unit]
    days_back = pc.add(pc.multiply(pc.subtract(pc.cast(pc.iso_week(stamps), pa.int64()), 1), 7),
                       pc.cast(pc.day_of_week(stamps), pa.int64()))  # Monday is 0
    midnight = pc.cast(pc.floor_temporal(stamps, unit="day"), pa.int64())
    return pc.cast(pc.subtract(midnight, pc.multiply(days_back, per_day)), stamps.type)
