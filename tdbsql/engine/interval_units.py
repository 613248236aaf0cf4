"""DuckDB's INTERVAL units and the ranges of an interval's parts: one table, one check.

An INTERVAL is DuckDB's (months, days, microseconds), the months and days 32-bit integers and
the microseconds a 64-bit one.  ``UNITS`` gives each unit as those three parts; the other
tables are read off it.  ``outside`` is the one range check: which values an integer of so
many bits cannot hold.
"""

from __future__ import annotations

import numpy as np

# unit -> (months, days, microseconds) of one of it
UNITS = {"millennium": (12_000, 0, 0), "century": (1_200, 0, 0), "decade": (120, 0, 0),
         "year": (12, 0, 0), "quarter": (3, 0, 0), "month": (1, 0, 0), "week": (0, 7, 0),
         "day": (0, 1, 0), "hour": (0, 0, 3_600_000_000), "minute": (0, 0, 60_000_000),
         "second": (0, 0, 1_000_000), "millisecond": (0, 0, 1_000), "microsecond": (0, 0, 1)}
MONTHS_PER = {unit: months for unit, (months, _, _) in UNITS.items() if months}
DAYS_PER = {unit: days for unit, (_, days, _) in UNITS.items() if days}
US_PER = {unit: micros for unit, (_, _, micros) in UNITS.items() if micros}
US_PER_DAY = 86_400_000_000
SECONDS_PER_DAY = 86_400
DAYS_PER_MONTH = 30  # where DuckDB measures an INTERVAL by one number (interval_micros)


def field_of(unit: str) -> tuple[int, int]:
    """(the part one ``unit`` lies in: 0 months, 1 days, 2 microseconds; how many of that
    part it is)."""
    parts = UNITS[unit]
    field = next(i for i, amount in enumerate(parts) if amount)
    return field, parts[field]


def outside(values, bits: int):
    """Which of ``values`` (a number, or a numpy array of integers, floats or Python ints) a
    signed ``bits``-bit integer cannot hold; a NaN counts as outside."""
    with np.errstate(invalid="ignore"):
        return np.logical_not((values >= -2 ** (bits - 1)) & (values < 2 ** (bits - 1)))
