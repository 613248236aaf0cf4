"""Timestamp series: the values ``range`` / ``generate_series`` make from a DATE or TIMESTAMP
``start`` towards ``stop`` by an INTERVAL ``step``, for the table function
(``engine.series``, one series) and the list function (``engine.functions_lists``, one
series a row) alike.

As DuckDB: each step adds the interval to the previous value, months first with the day
clamped to the month's end, then days and microseconds (``2024-01-31 + 1 month`` is Feb 29,
then Mar 29).  A step without months is a fixed number of microseconds (``integer_series``,
all rows at once); one with months is walked value by value.  Values are microseconds since
the epoch (UTC instants for a TIMESTAMP WITH TIME ZONE); a zero step gives no values.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from .datetime_ops import US_PER_DAY, interval_micros, month_lengths
from .integer_series import series_counts, series_values

_INT64_MAX = 2**63 - 1


def series_steps(start: np.ndarray, stop: np.ndarray, months: np.ndarray, days: np.ndarray,
                 micros: np.ndarray, inclusive: bool,
                 check: Callable[[int], None]) -> tuple[np.ndarray, np.ndarray]:
    """(counts, values) of one series per row (int64 arrays): the values of every row's
    series one after another; ``check(count)`` is told the values made so far before they
    are made (row caps, memory budgets)."""
    fixed = months == 0
    sizes = np.clip(days.astype(object) * US_PER_DAY + micros.astype(object),
                    -_INT64_MAX, _INT64_MAX).astype(np.int64)  # past int64: one value
    counts = np.where(fixed, series_counts(start, stop, sizes, inclusive), 0)
    check(int(counts.sum()))
    walked = {}
    for row in np.flatnonzero(~fixed):
        walked[row] = _walk(int(start[row]), int(stop[row]), int(months[row]), int(days[row]),
                            int(micros[row]), inclusive, int(counts.sum()), check)
        counts[row] = len(walked[row])
    values = series_values(start, np.where(fixed, sizes, 0), np.where(fixed, counts, 0))
    if not walked:
        return counts, values
    pieces, taken = [], 0
    for row, count in enumerate(counts.tolist()):
        if row in walked:
            pieces.append(np.array(walked[row], np.int64))
        else:
            pieces.append(values[taken:taken + count])
            taken += count
    return counts, np.concatenate(pieces) if pieces else values


def _walk(start: int, stop: int, months: int, days: int, micros: int, inclusive: bool,
          before: int, check) -> list[int]:
    """One series whose step has months, value by value (``before`` values made already)."""
    forward = interval_micros(months, days, micros) > 0
    values = []
    current = start
    while (current < stop or (inclusive and current == stop)) if forward else \
            (current > stop or (inclusive and current == stop)):
        values.append(current)
        if len(values) % (1 << 20) == 0:
            check(before + len(values))
        current = _add_interval(current, months, days, micros)
    check(before + len(values))
    return values


def _add_interval(micros_since_epoch: int, months: int, days: int, micros: int) -> int:
    """A timestamp plus an interval, as DuckDB adds one: months (the day clamped to the
    month's last), then days, then microseconds.  In numpy's proleptic calendar, so years
    past 9999 and before 1 step as the rest (Python's datetime stops at both)."""
    day_number, time_of_day = divmod(micros_since_epoch, US_PER_DAY)
    date = np.datetime64(day_number, "D")
    month = date.astype("datetime64[M]")
    moved = month + months
    day = min(int((date - month.astype("datetime64[D]")).astype(np.int64)),
              int(month_lengths(np.array([moved]))[0]) - 1)
    moved_day = int(moved.astype("datetime64[D]").astype(np.int64)) + day
    return (moved_day + days) * US_PER_DAY + time_of_day + micros
