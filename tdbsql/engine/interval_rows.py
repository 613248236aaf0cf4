"""INTERVALs that differ from row to row -- ``INTERVAL (n) DAY``, ``n * INTERVAL '1 hour'``,
``to_days(n)`` and the other ``to_*`` constructors -- as Arrow month_day_nano arrays, and a
DATE or TIMESTAMP plus or minus them, as DuckDB: the months first (a day past the target
month's end clamps to its last day), then the days and the time.  A constant INTERVAL stays a
``datetime_ops.Interval``; NULL amounts give NULL intervals and NULL sums.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import datetime_ops as dto
from ..errors import UnsupportedSql
from .frame import broadcast
from .value_types import kind, valid_rows

# unit -> (months, days, microseconds) of one of it
_UNITS = {"millennium": (12_000, 0, 0), "century": (1_200, 0, 0), "decade": (120, 0, 0),
          "year": (12, 0, 0), "quarter": (3, 0, 0), "month": (1, 0, 0), "week": (0, 7, 0),
          "day": (0, 1, 0), "hour": (0, 0, 3_600_000_000), "minute": (0, 0, 60_000_000),
          "second": (0, 0, 1_000_000), "millisecond": (0, 0, 1_000),
          "microsecond": (0, 0, 1)}
_INT32 = 2**31
_MAX_MICROS = (2**63 - 1) // 1000  # an Arrow month_day_nano interval's time, in nanoseconds


def is_rows(value) -> bool:
    """An interval per row (an Arrow month_day_nano array)."""
    return not isinstance(value, (pa.Scalar, dto.Interval)) and \
        pa.types.is_interval(value.type)


def constant(value: pa.Scalar) -> dto.Interval | None:
    """An Arrow interval scalar (``to_days(3)``) as the evaluator's constant, None for NULL."""
    if not value.is_valid:
        return None
    months, days, nanos = value.value
    return dto.Interval(months, days, nanos // 1000)


def of_amounts(amounts, unit: str, error) -> pa.Array:
    """``INTERVAL (n) unit`` for integer amounts ``n`` (an array)."""
    if kind(amounts.type) in ("float", "decimal"):  # DuckDB rounds them its own way
        raise UnsupportedSql(f"an INTERVAL of a fractional amount per row ({amounts.type}) "
                             "is not supported")
    if kind(amounts.type) not in ("int", "uint", "null"):
        raise error(f"an INTERVAL amount must be a number, not {amounts.type}")
    return scaled(amounts, dto.Interval(*_UNITS[dto.spelled(unit)]), error)


def scaled(counts, interval: dto.Interval, error) -> pa.Array:
    """``counts * interval``, one interval per count (an integer array)."""
    valid = valid_rows(counts)
    n = counts.cast(pa.int64()).fill_null(0)
    try:
        months, days, micros = (
            np.asarray(pc.multiply_checked(n, part).to_numpy(zero_copy_only=False), np.int64)
            for part in (interval.months, interval.days, interval.micros))
    except pa.ArrowInvalid:
        raise error("INTERVAL out of range") from None
    return built(months, days, micros, valid, error)


def parts(values) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(months, days, microseconds, valid) of an interval array."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    cells = np.frombuffer(values.buffers()[1], _CELL)[values.offset:values.offset + len(values)]
    return (cells["months"].astype(np.int64), cells["days"].astype(np.int64),
            cells["nanos"] // 1000, valid_rows(values))


_CELL = np.dtype([("months", "<i4"), ("days", "<i4"), ("nanos", "<i8")])


def built(months, days, micros, valid, error) -> pa.Array:
    """An interval array of int64 ``months``, ``days`` and ``micros``, NULL where not
    ``valid``; ``error(text)`` when a part does not fit."""
    if (np.abs(months[valid]) >= _INT32).any() or (np.abs(days[valid]) >= _INT32).any():
        raise error("INTERVAL out of range")
    if (np.abs(micros[valid]) > _MAX_MICROS).any():
        raise UnsupportedSql("an INTERVAL per row of more than 292 years of time (hours, "
                             "minutes, ...) is not supported: Arrow holds it in nanoseconds")
    cells = np.zeros(len(months), _CELL)
    cells["months"], cells["days"] = np.where(valid, months, 0), np.where(valid, days, 0)
    cells["nanos"] = np.where(valid, micros, 0) * 1000
    bitmap = None if valid.all() else pa.py_buffer(np.packbits(valid, bitorder="little"))
    return pa.Array.from_buffers(pa.month_day_nano_interval(), len(months),
                                 [bitmap, pa.py_buffer(cells)])


def arithmetic(op: str, left, right, error):
    """``left op right`` where one side is an interval per row (the other: a DATE /
    TIMESTAMP, an interval constant or per row), or a count per row times an INTERVAL
    constant; None if DuckDB has no such operation (or it is not one of these)."""
    if op == "multiply":  # a count per row times an INTERVAL constant
        count, interval = (right, left) if isinstance(left, dto.Interval) else (left, right)
        if isinstance(interval, dto.Interval) and not isinstance(count, dto.Interval) and \
                kind(count.type) in ("int", "uint"):
            return scaled(count, interval, error)
        return None
    if op not in ("add", "subtract"):
        return None
    rows = len(left) if not isinstance(left, (pa.Scalar, dto.Interval)) else len(right)
    if op == "add" and kind_of(left) == "interval":
        left, right = right, left  # interval + date: date + interval
    if kind_of(left) == "interval" and kind_of(right) == "interval":
        a, b = (_as_rows(v, rows, error) for v in (left, right))
        sign = 1 if op == "add" else -1
        (am, ad, au, av), (bm, bd, bu, bv) = parts(a), parts(b)
        return built(am + sign * bm, ad + sign * bd, au + sign * bu, av & bv, error)
    if kind_of(left) in ("date", "timestamp") and kind_of(right) == "interval":
        return _shifted(left, _as_rows(right, rows, error), 1 if op == "add" else -1, rows,
                        error)
    return None


def kind_of(value) -> str:
    return "interval" if isinstance(value, dto.Interval) or pa.types.is_interval(value.type) \
        else kind(value.type)


def _as_rows(value, rows: int, error) -> pa.Array:
    if is_rows(value):
        return value
    interval = value if isinstance(value, dto.Interval) else constant(value)
    ones = pa.array(np.ones(rows, np.int64), mask=None if interval is not None else
                    np.ones(rows, bool))
    return scaled(ones, interval or dto.Interval(), error)


def _shifted(stamps, intervals: pa.Array, sign: int, rows: int, error) -> pa.Array:
    """DATE / TIMESTAMP ``stamps`` plus (``sign`` -1: minus) each row's interval: a TIMESTAMP
    (WITH TIME ZONE for one), as DuckDB's; past the TIMESTAMP range, DuckDB's error."""
    stamps = dto.to_timestamp(broadcast(stamps, rows))
    result_type = pa.timestamp("us", stamps.type.tz)  # TIMESTAMP_S etc. give TIMESTAMP
    stamps = pc.cast(stamps, pa.timestamp("us"))  # the UTC instants, months counted in UTC
    months, days, micros, valid = parts(intervals)
    valid = valid & valid_rows(stamps)
    try:
        if months.any():
            stamps = dto.add_months(stamps, pa.array(sign * months))
        offsets = pc.add_checked(pc.multiply_checked(pa.array(days), dto.US_PER_DAY),
                                 pa.array(micros))
        moved = pc.add_checked(pc.cast(stamps, pa.int64()), pc.multiply_checked(offsets, sign))
    except (dto.DatetimeError, pa.ArrowInvalid):
        raise error(dto.OUT_OF_RANGE) from None
    return pc.if_else(valid, moved, None).cast(result_type)


def of_strings(strings, safe: bool, error) -> pa.Array:
    """CAST of strings (an array, chunked or a scalar) to INTERVAL, each read as an INTERVAL
    literal's text ('2 days', '1 year 3 hours'): NULL stays NULL; a text that is no interval
    is NULL when ``safe`` (TRY_CAST), else ``error(message)``.  Each distinct text is read
    once."""
    if isinstance(strings, pa.Scalar):
        return of_strings(pa.array([strings.as_py()], pa.string()), safe, error)[0]
    if isinstance(strings, pa.ChunkedArray):
        strings = strings.combine_chunks()
    if pa.types.is_dictionary(strings.type):
        strings = strings.dictionary_decode()
    distinct = pc.unique(strings.drop_null())
    months, days, micros = (np.zeros(len(distinct), np.int64) for _ in range(3))
    valid = np.ones(len(distinct), bool)
    for i, text in enumerate(distinct.to_pylist()):
        try:
            interval = dto.parse_interval(text, None)
        except dto.DatetimeError as err:
            if not safe:
                raise error(str(err)) from None
            valid[i] = False
            continue
        months[i], days[i], micros[i] = interval.months, interval.days, interval.micros
    return built(months, days, micros, valid, error).take(
        pc.index_in(strings, value_set=distinct))
