"""DuckDB's ``strftime`` format: the specifiers it knows, rendered from a Python datetime
(``format_pieces`` splits a format for ``engine.time_parse`` too, which reads text by it).

In: a format string, checked once with DuckDB's errors for an unknown specifier or a trailing
``%``.  Out: a function from ``datetime.datetime`` to the text DuckDB prints: English names
whatever the locale, four-digit years (``0044``; ``-4`` and ``252000`` as they are), ``%g``
/ ``%n`` milliseconds / nanoseconds, ``%c`` / ``%x`` / ``%X`` / ``%T`` in ISO form (DuckDB
has no locale), ``%z`` ``+00`` and ``%Z`` empty (no session time zone).  C's other codes (``%e``, ``%s``, ``%D``...) are errors,
as in DuckDB.
"""

from __future__ import annotations

import datetime as dt
from typing import Callable

# English names, as DuckDB writes (and ``time_parse`` reads) them
DAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August",
               "September", "October", "November", "December")


def _day_of_year(t: dt.datetime) -> int:
    return t.timetuple().tm_yday


def _week_sunday_first(t: dt.datetime) -> int:
    """C's %U: weeks starting on Sunday, days before the year's first Sunday in week 0."""
    return (_day_of_year(t) - 1 + 7 - (t.weekday() + 1) % 7) // 7


def _week_monday_first(t: dt.datetime) -> int:
    return (_day_of_year(t) - 1 + 7 - t.weekday()) // 7


def _year_text(year: int) -> str:
    """DuckDB's %Y / %G: four digits for years 0..9999, else the number as it is."""
    return f"{year:04d}" if 0 <= year <= 9999 else str(year)


# each specifier's text of a datetime and the years to add to it (``compile_format``)
_YEARS: dict[str, Callable[[dt.datetime, int], str]] = {
    "y": lambda t, years: f"{abs(t.year + years) % 100:02d}",
    "-y": lambda t, years: str(abs(t.year + years) % 100),
    "Y": lambda t, years: _year_text(t.year + years),
    "G": lambda t, years: _year_text(t.isocalendar()[0] + years),
}
_SPECIFIERS: dict[str, Callable[[dt.datetime], str]] = {
    "a": lambda t: DAY_NAMES[t.weekday()][:3], "A": lambda t: DAY_NAMES[t.weekday()],
    "w": lambda t: str((t.weekday() + 1) % 7), "u": lambda t: str(t.isoweekday()),
    "d": lambda t: f"{t.day:02d}", "-d": lambda t: str(t.day),
    "b": lambda t: MONTH_NAMES[t.month - 1][:3], "h": lambda t: MONTH_NAMES[t.month - 1][:3],
    "B": lambda t: MONTH_NAMES[t.month - 1],
    "m": lambda t: f"{t.month:02d}", "-m": lambda t: str(t.month),
    "V": lambda t: f"{t.isocalendar()[1]:02d}",
    "H": lambda t: f"{t.hour:02d}", "-H": lambda t: str(t.hour),
    "I": lambda t: f"{t.hour % 12 or 12:02d}", "-I": lambda t: str(t.hour % 12 or 12),
    "p": lambda t: "AM" if t.hour < 12 else "PM",
    "M": lambda t: f"{t.minute:02d}", "-M": lambda t: str(t.minute),
    "S": lambda t: f"{t.second:02d}", "-S": lambda t: str(t.second),
    "f": lambda t: f"{t.microsecond:06d}", "g": lambda t: f"{t.microsecond // 1000:03d}",
    "n": lambda t: f"{t.microsecond * 1000:09d}",
    "j": lambda t: f"{_day_of_year(t):03d}", "-j": lambda t: str(_day_of_year(t)),
    "U": lambda t: f"{_week_sunday_first(t):02d}", "W": lambda t: f"{_week_monday_first(t):02d}",
    "z": lambda t: "+00", "Z": lambda t: "",
}
_EXPANSIONS = {"c": "%Y-%m-%d %H:%M:%S", "x": "%Y-%m-%d", "X": "%H:%M:%S", "T": "%H:%M:%S"}


def compile_format(fmt: str) -> Callable[..., str]:
    """The renderer of ``fmt``: ``render(t, years=0)``, the text of the datetime ``t``
    moved ``years`` later (a multiple of 400, for years past Python's 1..9999: the
    calendar repeats).  ValueError (DuckDB's message) for a specifier DuckDB lacks."""
    pieces = [_piece(p[0]) if isinstance(p, tuple) else p for p in format_pieces(fmt)]
    return lambda t, years=0: "".join(p if isinstance(p, str) else p(t, years) for p in pieces)


def _piece(code: str) -> Callable[[dt.datetime, int], str]:
    if code in _YEARS:
        return _YEARS[code]
    text = _SPECIFIERS[code]
    return lambda t, years: text(t)


def format_pieces(fmt: str) -> list:
    """``fmt`` as its literal texts (``str``) and its specifiers (1-tuples of the code:
    ``("-d",)``), ``%c`` / ``%x`` / ``%X`` / ``%T`` written out and ``%%`` a literal ``%``;
    ValueError (DuckDB's message) for a trailing ``%`` or a specifier DuckDB lacks."""
    pieces: list = []
    pos = 0
    while (mark := fmt.find("%", pos)) >= 0:
        pieces.append(fmt[pos:mark])
        code = fmt[mark + 1:mark + 3] if fmt[mark + 1:mark + 2] == "-" else fmt[mark + 1:mark + 2]
        if code == "":
            raise ValueError(f"Failed to parse format specifier {fmt}: Trailing format "
                             f"character %")
        if code == "%":
            pieces.append("%")
        elif code in _EXPANSIONS:
            pieces.extend(format_pieces(_EXPANSIONS[code]))
        elif code in _SPECIFIERS or code in _YEARS:
            pieces.append((code,))
        else:
            raise ValueError(f"Failed to parse format specifier {fmt}: Unrecognized format "
                             f"for strftime/strptime: %{code}")
        pos = mark + 1 + len(code)
    pieces.append(fmt[pos:])
    merged: list = []  # adjacent literals as one (``%%`` beside text)
    for piece in pieces:
        if isinstance(piece, str) and merged and isinstance(merged[-1], str):
            merged[-1] += piece
        elif piece != "":
            merged.append(piece)
    return merged
