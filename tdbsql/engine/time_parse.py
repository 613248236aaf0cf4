"""``strptime`` / ``try_strptime``: text read by a DuckDB format (``engine.time_format``'s
specifiers), as DuckDB reads it.

Leading and trailing whitespace is skipped and a run of whitespace in the format matches a run
in the text; other literal characters must match exactly.  A number is 1 to its specifier's
width of digits (``%d`` takes ``5`` and ``05``, ``%Y`` up to four digits), range-checked
(``%m`` 1-12, ``%H`` 0-23, ``%y`` 0-99 with 69-99 the 1900s); ``%f`` / ``%g`` / ``%n`` are
fractions of a second, their digits scaled to the width (``.12`` by ``%g`` is 120 ms); names
(``%a %A %b %B``) and ``%p`` are matched without regard to case, weekday names checked but
unused.  The day comes from y/m/d when ``%d`` or ``%m`` is given; otherwise from the first
of ``%j`` (day of the year, running on past its end), ``%U`` / ``%W`` (week numbers,
with ``%w``) or ``%G`` / ``%V`` / ``%u`` (ISO weeks) after the year.  ``%z`` (``+HH``,
``+HHMM``, ``+HH:MM``) or ``%Z`` (a zone name) make the value a TIMESTAMP WITH TIME ZONE, in
UTC; ``%n`` makes it TIMESTAMP_NS.  Text that does not match is a ``ParseError``; a day its
month does not have a ``DateError`` (DuckDB's conversion error); ``try_strptime`` reads both
as NULL.  Values are returned as integers since the epoch, in the result type's unit.
"""

from __future__ import annotations

import calendar
import datetime as dt
import functools
import zoneinfo

import pyarrow as pa

from ..errors import UnsupportedSql
from .time_format import DAY_NAMES, MONTH_NAMES, format_pieces

_SPACES = " \t\n\v\f\r"
_WIDTHS = {"w": 1, "u": 1, "g": 3, "j": 3, "-j": 3, "Y": 4, "G": 4, "f": 6, "n": 9,
           **{code: 2 for code in ("d", "-d", "m", "-m", "y", "-y", "H", "-H", "I", "-I",
                                    "M", "-M", "S", "-S", "U", "W", "V")}}
_RANGES = {"d": (1, 31), "m": (1, 12), "y": (0, 99), "H": (0, 23), "I": (1, 12), "M": (0, 59),
           "S": (0, 59), "w": (0, 6), "u": (1, 7), "U": (0, 53), "W": (0, 53), "V": (1, 53),
           "j": (1, 366), "G": (0, 9999)}
_FRACTIONS = {"f": 1_000, "g": 1_000_000, "n": 1}  # nanoseconds per unit of the last digit
_NAMES = {"a": [d[:3] for d in DAY_NAMES], "A": list(DAY_NAMES),
          "b": [m[:3] for m in MONTH_NAMES], "h": [m[:3] for m in MONTH_NAMES],
          "B": list(MONTH_NAMES)}  # a month's index is its number - 1


class ParseError(ValueError):
    """The text does not match the format (the detail names what was expected)."""


class DateError(ValueError):
    """The text matched, but names a day its month does not have (DuckDB's conversion
    error, ``Date out of range: 2024-2-30``), or an unknown time zone."""


class TimeParser:
    """One format, split once; ``parse(text)`` reads a value."""

    def __init__(self, fmt: str):
        self.fmt = fmt
        self.pieces = format_pieces(fmt)  # ValueError for a format DuckDB refuses
        codes = {piece[0] for piece in self.pieces if isinstance(piece, tuple)}
        self.unit = "ns" if "n" in codes else "us"
        self.type = pa.timestamp(self.unit, tz="UTC" if codes & {"z", "Z"} else None)

    def parse(self, text: str) -> int:
        """``text`` as a timestamp in the result type's unit since the epoch."""
        fields = _Fields()
        text = text.lstrip(_SPACES)
        special = text.rstrip(_SPACES).lower()
        if special in ("infinity", "-infinity"):
            raise UnsupportedSql(f"strptime() of {text!r}: infinite timestamps are not supported")
        if special != "epoch":
            pos = 0
            for piece in self.pieces:
                if isinstance(piece, str):
                    pos = _literal(text, pos, piece)
                else:
                    pos = fields.read(piece[0], text, pos)
            if text[pos:].strip(_SPACES):
                raise ParseError("Full specifier did not match: trailing characters")
            nanos = fields.nanos_since_epoch()
        else:
            nanos = 0
        return nanos if self.unit == "ns" else nanos // 1000


@functools.lru_cache(maxsize=64)
def time_parser(fmt: str) -> TimeParser:
    return TimeParser(fmt)


def _literal(text: str, pos: int, literal: str) -> int:
    at = 0
    while at < len(literal):
        if literal[at] in _SPACES:  # a run of spaces matches a run of spaces
            if pos >= len(text) or text[pos] not in _SPACES:
                raise ParseError(f"Space does not match, expected {literal}")
            while pos < len(text) and text[pos] in _SPACES:
                pos += 1
            while at < len(literal) and literal[at] in _SPACES:
                at += 1
            continue
        if pos >= len(text) or text[pos] != literal[at]:
            raise ParseError(f"Literal does not match, expected {literal}")
        pos, at = pos + 1, at + 1
    return pos


class _Fields:
    """What the text said so far, and where its day comes from (``anchor``: "" until a
    specifier decides it; "md" for y/m/d, else the code of ``%j``, ``%U``, ``%W``, ``%G`` or
    ``%V``, or "y" after a year alone)."""

    def __init__(self):
        self.year, self.month, self.day = 1900, 1, 1
        self.hour = self.minute = self.second = self.nanos = 0
        self.offset: int | None = None  # minutes east of UTC (%z)
        self.zone: str | None = None  # %Z
        self.ampm: str | None = None
        self.anchor = ""
        self.yearday = self.weekno = self.weekday = 0
        self.has_weekday = False
        self.iso_year = self.iso_week = self.iso_weekday = None

    def read(self, code: str, text: str, pos: int) -> int:
        if code in _WIDTHS:
            start = pos
            while pos < len(text) and pos - start < _WIDTHS[code] and text[pos].isdigit() \
                    and text[pos].isascii():
                pos += 1
            if pos == start:
                raise ParseError("Expected a number")
            digits = text[start:pos]
            if code in _FRACTIONS:
                self.nanos = int(digits) * 10 ** (_WIDTHS[code] - len(digits)) * _FRACTIONS[code]
            else:
                self.number(code.lstrip("-"), int(digits))
            return pos
        if code in _NAMES:
            return self.name(code, text, pos)
        if code == "p":
            marker = text[pos:pos + 2].lower()
            if marker not in ("am", "pm"):
                raise ParseError("Expected AM/PM")
            self.ampm = marker
            return pos + 2
        if code == "z":
            return self.utc_offset(text, pos)
        start = pos = len(text) - len(text[pos:].lstrip(_SPACES))  # %Z
        while pos < len(text) and (text[pos].isalnum() or text[pos] in "_/+-"):
            pos += 1
        if pos == start:
            raise ParseError("Empty Time Zone name")
        self.zone = text[start:pos]
        return pos

    def number(self, code: str, number: int) -> None:
        low, high = _RANGES.get(code, (0, 9999))
        if not low <= number <= high:
            raise ParseError(f"%{code} out of range, expected a value between {low} and {high}")
        if code in ("d", "m"):
            setattr(self, "day" if code == "d" else "month", number)
            self.anchor = "md"
        elif code in ("y", "Y"):
            self.year = number if code == "Y" else number + (1900 if number >= 69 else 2000)
            if self.anchor in ("", "G", "V"):
                self.anchor = "y"
        elif code in ("H", "I"):
            self.hour = number
        elif code in ("M", "S"):
            setattr(self, "minute" if code == "M" else "second", number)
        elif code == "w":
            self.weekday, self.has_weekday = number, True
        elif code == "u":
            if self.iso_weekday is not None:
                raise ParseError("Multiple ISO weekday offsets specified")
            self.iso_weekday = number
        elif code in ("U", "W"):
            self.weekno = number
            self.anchor_on(code, ("", "y"), ("md",), "Multiple week offsets specified")
        elif code == "j":
            self.yearday = number
            self.anchor_on(code, ("", "y"), ("md",), "Multiple year offsets specified")
        else:  # G, V
            name = "iso_year" if code == "G" else "iso_week"
            if self.anchor in ("G", "V"):  # an ISO date so far: each part once
                if getattr(self, name) is not None:
                    raise ParseError(f"Multiple ISO {'year' if code == 'G' else 'week'} "
                                     "offsets specified")
            else:  # a year beside %G is only checked, beside %V an error
                self.anchor_on(code, ("",), ("md", "y") if code == "G" else ("md",),
                               "Incompatible ISO offset specified")
            setattr(self, name, number)

    def anchor_on(self, code: str, free: tuple, checked: tuple, clash: str) -> None:
        """``code`` decides the day if the anchor so far is one of ``free``; beside one of
        ``checked`` it is only range-checked; beside any other it is the error ``clash``."""
        if self.anchor in free:
            self.anchor = code
        elif self.anchor not in checked:
            raise ParseError(clash)

    def name(self, code: str, text: str, pos: int) -> int:
        for index, name in enumerate(_NAMES[code]):
            if text[pos:pos + len(name)].lower() == name.lower():
                if code in ("b", "h", "B"):
                    self.month = index + 1
                return pos + len(name)
        raise ParseError(f"Expected a {'day' if code in 'aA' else 'month'} name")

    def utc_offset(self, text: str, pos: int) -> int:
        sign = text[pos:pos + 1]
        hours = text[pos + 1:pos + 3]
        if sign not in ("+", "-") or len(hours) != 2 or not hours.isdigit():
            raise ParseError("Expected +HH[MM] or -HH[MM]")
        pos += 3
        colon = text[pos:pos + 1] == ":"  # taken even when no minutes follow it
        pos += colon
        minutes = text[pos:pos + 2]
        if len(minutes) == 2 and (colon or minutes[0].isdigit()):  # minutes follow
            if not minutes.isdigit():
                raise ParseError("Expected +HH[MM] or -HH[MM]")
            pos += 2
        else:
            minutes = "00"
        self.offset = (1 if sign == "+" else -1) * (int(hours) * 60 + int(minutes))
        return pos

    # -- the value ---------------------------------------------------------------------------

    def nanos_since_epoch(self) -> int:
        hour = self.hour
        if self.ampm is not None:
            if hour > 12:
                raise ParseError(f"Invalid hour: {hour} AM/PM, expected an hour within the "
                                 "range [0..12]")
            hour = hour % 12 + (12 if self.ampm == "pm" else 0)
        days = self.days_since_epoch()
        minutes = days * 1440 + hour * 60 + self.minute
        if self.zone is not None:  # an unknown name is an error beside %z too
            zone = _zone_offset(self.zone, days, hour, self.minute, self.second)
            minutes -= zone if self.offset is None else self.offset
        elif self.offset is not None:
            minutes -= self.offset
        return (minutes * 60 + self.second) * 1_000_000_000 + self.nanos

    def days_since_epoch(self) -> int:
        if self.anchor in ("G", "V"):
            year = 1900 if self.iso_year is None else self.iso_year
            jan4 = _days(year, 1, 4)
            week1 = jan4 - (jan4 + 3) % 7  # the Monday on or before January 4 (epoch: Thu)
            return week1 + ((self.iso_week or 1) - 1) * 7 + (self.iso_weekday or 1) - 1
        if self.anchor in ("U", "W"):
            monday_first = self.anchor == "W"
            weekday = (self.weekday + 7 - monday_first) % 7 if self.has_weekday else 0
            jan1 = _days(self.year, 1, 1)
            start = jan1 - (jan1 + 3) % 7 - (not monday_first)  # week 1's first day
            if start >= jan1:
                start -= 7  # the days before it are week 0
            return start + self.weekno * 7 + weekday
        if self.anchor == "j":
            return _days(self.year, 1, 1) + self.yearday - 1
        if self.day > calendar.monthrange(self.year, self.month)[1]:
            raise DateError(f"Date out of range: {self.year}-{self.month}-{self.day}")
        return _days(self.year, self.month, self.day)


def _days(year: int, month: int, day: int) -> int:
    """Days from 1970-01-01 to a proleptic Gregorian date (any year, 0 too)."""
    year -= month <= 2
    era = year // 400
    of_era = year - era * 400
    of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    of_era_days = of_era * 365 + of_era // 4 - of_era // 100 + of_year
    return era * 146097 + of_era_days - 719468


def _zone_offset(name: str, days: int, hour: int, minute: int, second: int) -> int:
    """Minutes east of UTC of the zone ``name`` at that local wall time."""
    zone = _zone(name)
    local = dt.datetime(1970, 1, 1) + dt.timedelta(days=days, hours=hour, minutes=minute,
                                                   seconds=second)
    return int(local.replace(tzinfo=zone).utcoffset().total_seconds() // 60)


@functools.lru_cache(maxsize=256)
def _zone(name: str) -> zoneinfo.ZoneInfo:
    """A time zone by name, without regard to case (as DuckDB's ICU)."""
    for candidate in [name] + sorted(z for z in _zone_names() if z.lower() == name.lower()):
        try:
            return zoneinfo.ZoneInfo(candidate)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            continue
    raise DateError(f"Unknown TimeZone '{name}'!")


@functools.lru_cache(maxsize=1)
def _zone_names() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones())
