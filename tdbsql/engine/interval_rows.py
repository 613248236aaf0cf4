"""INTERVALs that differ from row to row -- ``n * INTERVAL '1 hour'``, ``INTERVAL (n) DAY``
and ``to_days(n)`` (``interval_amounts``) -- as Arrow month_day_nano arrays, and a
DATE or TIMESTAMP plus or minus them, as DuckDB: the months first (a day past the target
month's end clamps to its last day), then the days and the time.  A constant INTERVAL stays a
``datetime_ops.Interval``; NULL amounts give NULL intervals and NULL sums.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import datetime_ops as dto
from .frame import broadcast
from .interval_units import outside
from .value_types import kind, plain, valid_rows



def is_rows(value) -> bool:
    """An interval per row (an Arrow month_day_nano array)."""
    return not isinstance(value, (pa.Scalar, dto.Interval)) and \
        pa.types.is_interval(value.type)


def scaled(counts, intervals, error) -> pa.Array:
    """``counts * intervals`` row by row (``intervals`` an interval array, or one
    ``dto.Interval`` for every row), as DuckDB's INTERVAL * BIGINT: each count must fit an
    INTEGER, the months and days a 32-bit integer and the microseconds a 64-bit one."""
    rows = len(counts)
    months, days, micros, valid = parts(as_rows(intervals, rows, error))
    valid = valid & valid_rows(counts)
    try:
        n = np.where(valid, np.asarray(counts.cast(pa.int64()).fill_null(0).to_numpy(
            zero_copy_only=False), np.int64), 0)
    except pa.ArrowInvalid:  # a UBIGINT past BIGINT
        raise error(dto.count_past_integer(pc.max(counts).as_py())) from None
    past = outside(n, 32)
    if past.any():
        raise error(dto.count_past_integer(int(n[past][0])))
    try:
        micros = np.asarray(pc.multiply_checked(pa.array(micros), pa.array(n)), np.int64)
    except pa.ArrowInvalid:
        raise error(dto.INTERVAL_RANGE) from None
    return built(months * n, days * n, micros, valid, error)


def parts(values) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(months, days, microseconds, valid) of an interval array."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    cells = np.frombuffer(values.buffers()[1], _CELL)[values.offset:values.offset + len(values)]
    return (cells["months"].astype(np.int64), cells["days"].astype(np.int64),
            cells["nanos"] // 1000, valid_rows(values))


_CELL = np.dtype([("months", "<i4"), ("days", "<i4"), ("nanos", "<i8")])


def fields(values) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(months, days, microseconds, valid) of intervals or of ``ts - ts`` durations (as the
    days and microseconds DuckDB holds them: ``of_durations``), an array or chunked array."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if pa.types.is_duration(values.type):
        values = of_durations(values, len(values), _never)
    return parts(values)


def _never(text: str):
    raise AssertionError(text)  # a duration's whole days always fit 32 bits


def built(months, days, micros, valid, error) -> pa.Array:
    """An interval array of int64 ``months``, ``days`` and ``micros``, NULL where not
    ``valid``; ``error(text)`` when a part does not fit."""
    if (dto.off_interval_range(months, days, micros) & valid).any():
        raise error(dto.INTERVAL_RANGE)
    dto.check_arrow_time(int(np.abs(micros[valid]).max(initial=0)))
    cells = np.zeros(len(months), _CELL)
    cells["months"], cells["days"] = np.where(valid, months, 0), np.where(valid, days, 0)
    cells["nanos"] = np.where(valid, micros, 0) * 1000
    bitmap = None if valid.all() else pa.py_buffer(np.packbits(valid, bitorder="little"))
    return pa.Array.from_buffers(pa.month_day_nano_interval(), len(months),
                                 [bitmap, pa.py_buffer(cells)])


def arithmetic(op: str, left, right, rows: int, error):
    """``left op right`` for + and -, over ``rows`` rows, where one side is an interval
    (per row, a constant or a NULL INTERVAL) and the other an interval or a DATE, TIMESTAMP
    or TIME (a value per row or a constant); None if DuckDB has no such operation."""
    if op not in ("add", "subtract"):
        return None
    if op == "add" and kind_of(left) == "interval":
        left, right = right, left  # interval + date: date + interval
    if kind_of(right) != "interval":
        return None
    intervals = as_rows(right, rows, error)
    sign = 1 if op == "add" else -1
    if kind_of(left) == "interval":
        (am, ad, au, av), (bm, bd, bu, bv) = parts(as_rows(left, rows, error)), parts(intervals)
        return built(am + sign * bm, ad + sign * bd, au + sign * bu, av & bv, error)
    if kind_of(left) in ("date", "timestamp"):
        return _shifted(left, intervals, sign, rows, error)
    if kind_of(left) == "time":  # only the time part counts, wrapping around midnight
        _, _, micros, valid = parts(intervals)
        moved = dto.add_time_micros(broadcast(plain(left), rows), pa.array(sign * micros))
        return pc.if_else(pa.array(valid), moved, None)
    return None


def of_durations(durations, rows: int, error) -> pa.Array:
    """An INTERVAL computed from timestamps (``ts - ts``: an Arrow duration, or a constant
    one) as DuckDB holds it, over ``rows`` rows: the whole days and the microseconds left,
    both with the sign of the whole."""
    micros = pc.cast(broadcast(plain(durations), rows), pa.duration("us")).cast(pa.int64())
    valid = valid_rows(micros)
    micros = np.asarray(micros.fill_null(0).to_numpy(zero_copy_only=False), np.int64)
    days = np.sign(micros) * (np.abs(micros) // dto.US_PER_DAY)
    return built(np.zeros(rows, np.int64), days, micros - days * dto.US_PER_DAY, valid, error)


def durations_as_intervals(value, error):
    """``value`` itself, or if it is a ``ts - ts`` duration (an array or a scalar) the
    INTERVAL DuckDB holds for it (``of_durations``)."""
    if not pa.types.is_duration(value.type):
        return value
    if isinstance(value, pa.Scalar):
        return of_durations(value, 1, error)[0]
    return of_durations(value, len(value), error)


def negated(intervals, error) -> pa.Array:
    """``-intervals`` (an interval array): each part negated, DuckDB's error past its range."""
    months, days, micros, valid = parts(intervals)
    if (dto.is_least_part(months, days, micros) & valid).any():
        raise error(dto.NEGATION_OVERFLOW)
    return built(-months, -days, -micros, valid, error)


def kind_of(value) -> str:
    return "interval" if isinstance(value, dto.Interval) or pa.types.is_interval(value.type) \
        else kind(value.type)


def as_rows(value, rows: int, error) -> pa.Array:
    """An interval per row: ``value`` itself if it is one, else its constant (an Interval, an
    Arrow interval scalar, NULL too) repeated."""
    if is_rows(value):
        return broadcast(value, rows)
    interval = value if isinstance(value, dto.Interval) else dto.Interval.of_arrow(value)
    filled = interval or dto.Interval()
    return built(np.full(rows, filled.months, np.int64), np.full(rows, filled.days, np.int64),
                 np.full(rows, filled.micros, np.int64), np.full(rows, interval is not None),
                 error)


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
            interval = dto.parse_interval(text)
        except dto.DatetimeError as err:
            if not safe:
                raise error(str(err)) from None
            valid[i] = False
            continue
        months[i], days[i], micros[i] = interval.months, interval.days, interval.micros
    return built(months, days, micros, valid, error).take(
        pc.index_in(strings, value_set=distinct))
