"""The parts of an INTERVAL, as DuckDB's ``date_part`` / ``extract`` / ``year(i)`` ... give
them: each from the interval's own fields, not a normalised length -- years and months from its
months (``'14 months'`` is year 1, month 2, quarter 1), days from its days, hours down to
microseconds from its time (``'100 hours'`` is hour 100), every part keeping the sign (C's
truncating division).  ``epoch`` counts a year as 365.25 days and a month as 30; ``epoch_ms``
... ``epoch_ns`` count every month as 30 days.  A part an interval has not (``dow``,
``week``) is DuckDB's error.  ``date_trunc(unit, interval)`` cuts the field of the unit toward
zero to a whole number of units and zeroes the finer fields (``interval_trunc``).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from . import datetime_ops as dto
from .interval_rows import built, fields
from .interval_units import SECONDS_PER_DAY, UNITS, US_PER, field_of

_US_PER_MINUTE, _US_PER_HOUR = US_PER["minute"], US_PER["hour"]


def is_interval_value(value) -> bool:
    """An INTERVAL argument: Arrow month_day_nano values or a duration (``ts - ts``)."""
    return pa.types.is_interval(value.type) or pa.types.is_duration(value.type)


def interval_part(name: str, value):
    """``date_part(name, value)`` of INTERVAL values (an array or a scalar): BIGINT, epoch
    DOUBLE; NULL stays NULL."""
    part = dto.spelled(name)
    if part not in _PARTS:
        if part in dto.PARTS:
            raise dto.DatetimeError(f'"interval" units "{part}" not recognized')
        raise dto.DatetimeError(f'extract specifier "{name}" not recognized')
    return _per_row(value, _PARTS[part], pa.float64() if part == "epoch" else pa.int64())


def interval_trunc(name: str, value):
    """``date_trunc(name, value)`` of INTERVAL values: an INTERVAL ('year' of ``27 months 17
    days`` is 2 years)."""
    unit = dto.spelled(name)
    if unit not in _TRUNC:
        if unit in dto.PARTS:
            raise dto.DatetimeError("Specifier type not implemented for DATETRUNC")
        raise dto.DatetimeError(f'extract specifier "{name}" not recognized')
    field, size = _TRUNC[unit]
    if isinstance(value, pa.Scalar):
        return interval_trunc(name, pa.array([value.as_py()], value.type))[0]
    cut = list(fields(value))
    cut[field] = _toward_zero(cut[field], size) * size
    for finer in range(field + 1, 3):
        cut[finer] = np.zeros(len(value), np.int64)
    return built(*cut, _no_error)


# unit -> (the field it cuts: 0 months, 1 days, 2 microseconds; the size of one unit in it);
# the parts that are no unit cut as the unit they count in
_TRUNC = {unit: field_of(unit) for unit in UNITS} | {
    part: field_of(unit) for part, unit in (
        ("isoyear", "year"), ("yearweek", "week"), ("dow", "day"), ("isodow", "day"),
        ("doy", "day"), ("julian", "day"), ("epoch", "second"))}


def epoch_ticks(value, per_second: int):
    """``epoch_ms`` / ``epoch_us`` / ``epoch_ns`` of INTERVALs: BIGINT ticks, every month 30
    days (a fraction of a millisecond cut toward zero); past BIGINT DuckDB's error."""
    def ticks(months, days, micros):
        if per_second < 1_000_000:
            time = _toward_zero(micros, 1_000_000 // per_second)
        else:
            time = micros.astype(object) * (per_second // 1_000_000)
        whole = dto.interval_micros(months.astype(object), days, 0) * per_second // 1_000_000 \
            + time
        if any(not -2**63 <= tick < 2**63 for tick in whole):
            raise dto.DatetimeError(f"Could not convert Interval to {_TICKS[per_second]}")
        return whole.astype(np.int64)
    return _per_row(value, ticks, pa.int64())


_TICKS = {1_000: "Milliseconds", 1_000_000: "Microseconds", 1_000_000_000: "Nanoseconds"}


def _per_row(value, compute, type_: pa.DataType):
    if isinstance(value, pa.Scalar):
        return _per_row(pa.array([value.as_py()], value.type), compute, type_)[0]
    months, days, micros, valid = fields(value)
    return pa.array(compute(months, days, micros), type_, mask=~valid)


def _no_error(text: str):
    raise AssertionError(text)  # a cut interval's fields fit as the whole one's did


def _toward_zero(numbers: np.ndarray, by: int) -> np.ndarray:
    """``numbers / by`` cut toward zero, as C++ divides."""
    return np.sign(numbers) * (np.abs(numbers) // by)


def _remainder(numbers: np.ndarray, by: int) -> np.ndarray:
    """``numbers % by`` with the sign of ``numbers``, as C++'s."""
    return numbers - _toward_zero(numbers, by) * by


def _epoch(months, days, micros):
    years = _toward_zero(months, 12)
    whole_days = years * 365.25 + _remainder(months, 12) * dto.DAYS_PER_MONTH + days
    return whole_days * SECONDS_PER_DAY + micros / 1e6


_PARTS = {
    "year": lambda m, d, u: _toward_zero(m, 12),
    "month": lambda m, d, u: _remainder(m, 12),
    "quarter": lambda m, d, u: _toward_zero(_remainder(m, 12), 3) + 1,
    "decade": lambda m, d, u: _toward_zero(m, 120),
    "century": lambda m, d, u: _toward_zero(m, 1200),
    "millennium": lambda m, d, u: _toward_zero(m, 12000),
    "day": lambda m, d, u: d,
    "hour": lambda m, d, u: _toward_zero(u, _US_PER_HOUR),
    "minute": lambda m, d, u: _toward_zero(_remainder(u, _US_PER_HOUR), _US_PER_MINUTE),
    "second": lambda m, d, u: _toward_zero(_remainder(u, _US_PER_MINUTE), 1_000_000),
    "millisecond": lambda m, d, u: _toward_zero(_remainder(u, _US_PER_MINUTE), 1_000),
    "microsecond": lambda m, d, u: _remainder(u, _US_PER_MINUTE),
    "epoch": _epoch,
}
