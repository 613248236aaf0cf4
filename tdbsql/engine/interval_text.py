"""INTERVALs as text, as DuckDB's VARCHAR cast prints them: ``1 year 2 months 3 days
04:05:06.007``, each part with its own sign (``-10 months -3 days 04:05:06.007``), zero parts
left out, the time as hours (any number of them), minutes and seconds with the fraction's
trailing zeros dropped, and ``00:00:00`` for an empty interval.  An interval computed from
timestamps (``ts - ts``, an Arrow duration) prints as the days and time DuckDB holds it as.
"""

from __future__ import annotations

import pyarrow as pa

from . import datetime_ops as dto
from . import interval_rows
from .interval_units import US_PER



def interval_text(value):
    """An INTERVAL (a constant ``Interval``, an Arrow interval or duration, scalar or array)
    as DuckDB's text; NULL stays NULL."""
    if isinstance(value, dto.Interval):
        return pa.scalar(_text(value.months, value.days, value.micros), pa.string())
    if isinstance(value, pa.Scalar):
        return interval_text(pa.array([value.as_py()], value.type))[0]
    months, days, micros, valid = interval_rows.fields(value)
    texts = [_text(int(m), int(d), int(u)) if ok else None
             for m, d, u, ok in zip(months, days, micros, valid)]
    return pa.array(texts, pa.string())


def _text(months: int, days: int, micros: int) -> str:
    """One interval's text (DuckDB's ``IntervalToStringCast::Format``)."""
    years = -(-months // 12) if months < 0 else months // 12  # toward zero, as C++
    words = [_counted(years, "year"), _counted(months - 12 * years, "month"),
             _counted(days, "day")]
    parts = [word for word in words if word]
    if micros:
        parts.append(_clock(micros))
    return " ".join(parts) or "00:00:00"


def _counted(amount: int, unit: str) -> str:
    if amount == 0:
        return ""
    return f"{amount} {unit}" if amount in (1, -1) else f"{amount} {unit}s"


def _clock(micros: int) -> str:
    """The time part: ``-04:05:06.007``, hours past 99 in as many digits as they need."""
    sign = "-" if micros < 0 else ""
    hours, rest = divmod(abs(micros), US_PER["hour"])
    minutes, rest = divmod(rest, US_PER["minute"])
    seconds, fraction = divmod(rest, US_PER["second"])
    text = f"{sign}{hours:02d}:{minutes:02d}:{seconds:02d}"
    return f"{text}.{fraction:06d}".rstrip("0") if fraction else text
