"""An INTERVAL times or divided by a number, as DuckDB: ``INTERVAL 1 DAY * n``,
``n * INTERVAL '2 hours'``, ``INTERVAL (qty) DAY * 1.5``, ``INTERVAL '1 month' / 7``.

An integer count multiplies each part (``interval_rows.scaled``).  A DOUBLE (a DECIMAL or a
FLOAT counts as one) multiplies the months and the days, keeps their whole parts and cascades
the fractions down -- a month is 30 days, a day 86,400 seconds, each remainder rounded to the
microsecond -- into the days and the microseconds, as PostgreSQL's ``interval_mul`` that DuckDB
follows; nothing cascades up.  ``/ x`` is ``* (1.0 / x)`` of any number, a zero divisor beside
a value DuckDB's division-by-zero error.  Over ``rows`` rows, the interval side an array or a
constant (``interval_rows``); NULL on either side gives NULL.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from . import datetime_ops as dto
from .frame import broadcast
from .interval_rows import built, kind_of, parts, scaled, as_rows
from .interval_units import SECONDS_PER_DAY, outside
from .value_types import cast_value, plain, valid_rows



def arithmetic(op: str, left, right, rows: int, error):
    """``interval * number``, ``number * interval`` or ``interval / number`` over ``rows``
    rows; None if DuckDB has no such operation."""
    if op == "multiply" and kind_of(left) != "interval":
        left, right = right, left
    number_kind = kind_of(right)
    if kind_of(left) != "interval" or op not in ("multiply", "divide") or \
            number_kind not in ("int", "uint", "float", "decimal", "null"):
        return None
    intervals = as_rows(left, rows, error)
    numbers = broadcast(plain(right), rows)
    if op == "multiply" and number_kind in ("int", "uint", "null"):
        return scaled(numbers, intervals, error)
    valid = valid_rows(numbers)
    factors = np.asarray(cast_value(numbers, pa.float64()).fill_null(1.0).to_numpy(
        zero_copy_only=False), np.float64)
    if op == "divide":
        if (valid & valid_rows(intervals) & (factors == 0)).any():
            raise error("Division by zero")
        with np.errstate(divide="ignore"):
            factors = 1.0 / np.where(valid, factors, 1.0)
    text = "Overflow in INTERVAL division" if op == "divide" else \
        "Overflow in multiplication of INTERVAL."
    return _times_fractions(intervals, factors, valid, lambda: error(text), error)


def _times_fractions(intervals, factors: np.ndarray, valid: np.ndarray, overflow, error):
    """Each interval times its DOUBLE factor, the fractions of months and days cascading
    down; ``overflow()`` the error for a part that does not fit."""
    months, days, micros, valid_intervals = parts(intervals)
    valid = valid & valid_intervals
    with np.errstate(invalid="ignore", over="ignore"):
        month_product, day_product = months * factors, days * factors
        bad = outside(month_product, 32) | outside(day_product, 32)
        whole_months, whole_days = np.trunc(month_product), np.trunc(day_product)
        month_rest = _to_micro((month_product - whole_months) * dto.DAYS_PER_MONTH)
        day_rest = np.trunc(month_rest)
        seconds = _to_micro((day_product - whole_days + month_rest - day_rest) *
                            SECONDS_PER_DAY)
        carried = np.where(np.abs(seconds) >= SECONDS_PER_DAY,
                           np.trunc(seconds / SECONDS_PER_DAY), 0.0)
        seconds -= carried * SECONDS_PER_DAY
        total_micros = np.rint(micros.astype(np.float64) * factors + seconds * 1e6)
        bad |= outside(total_micros, 64)
    if (bad & valid).any():
        raise overflow()
    keep = valid & ~bad
    return built(np.where(keep, whole_months, 0).astype(np.int64),
                 np.where(keep, whole_days + carried + day_rest, 0).astype(np.int64),
                 np.where(keep, total_micros, 0).astype(np.int64), valid, error)


def _to_micro(seconds: np.ndarray) -> np.ndarray:
    """Rounded to the nearest millionth, halves to even (PostgreSQL's TSROUND)."""
    return np.rint(seconds * 1e6) / 1e6
