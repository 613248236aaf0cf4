"""INTERVAL comparisons, as DuckDB makes them.

A month counts 30 days and a day 24 hours: each side is normalised -- whole days carried
out of the microseconds and whole 30-day months out of the days, rounding down, so that only
the months may be negative -- and the (months, days, microseconds) compared in that order:
``INTERVAL 1 MONTH = INTERVAL 30 DAY``, ``INTERVAL 2 DAY = INTERVAL 48 HOUR``, ``INTERVAL
'1 month -1 day' = INTERVAL 29 DAY``, ``INTERVAL 1 DAY < INTERVAL 25 HOUR``.

In: two intervals -- ``datetime_ops.Interval`` constants, Arrow month_day_nano values (per
row: ``to_days(n)``, ``age(...)``) or durations (``ts - ts``) -- and an Arrow comparison
name (``equal``, ``less``...).  Out: a boolean array, or a scalar when both are constants;
NULL where either side is.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import datetime_ops as dto
from .frame import broadcast
from .interval_rows import built, parts
from .value_types import kind, valid_rows



def is_interval(value) -> bool:
    """An INTERVAL: a constant, Arrow month_day_nano values or a duration (``ts - ts``)."""
    return isinstance(value, dto.Interval) or pa.types.is_interval(value.type) or \
        kind(value.type) == "duration"


def both_intervals(left, right) -> bool:
    """Are ``left`` and ``right`` two intervals (one of them may be an untyped NULL)?"""
    def null(value) -> bool:
        return not isinstance(value, dto.Interval) and kind(value.type) == "null"
    return (is_interval(left) or null(left)) and (is_interval(right) or null(right)) and \
        not (null(left) and null(right))


def compare_intervals(op: str, left, right):
    """``left <op> right`` for two intervals (see above)."""
    (lm, ld, lu, lv), (rm, rd, ru, rv) = _normalised(left), _normalised(right)
    less = (lm < rm) | (lm == rm) & ((ld < rd) | (ld == rd) & (lu < ru))
    equal = (lm == rm) & (ld == rd) & (lu == ru)
    answer = {"equal": equal, "not_equal": ~equal, "less": less, "less_equal": less | equal,
              "greater": ~(less | equal), "greater_equal": ~less}[op]
    valid = lv & rv
    if all(_is_constant(v) for v in (left, right)):
        return pa.scalar(bool(answer[0]) if valid[0] else None, pa.bool_())
    return pa.array(np.broadcast_to(answer, valid.shape), mask=~valid)


def sort_parts(values) -> list[pa.Array]:
    """Interval values (an Arrow month_day_nano array) as their normalised months, days and
    microseconds (int64 arrays, NULL where the value is): sorted by them in turn, they sort
    as they compare (ORDER BY)."""
    *numbers, valid = _normalised(values)
    return [pa.array(part, mask=~valid) for part in numbers]


def _is_constant(value) -> bool:
    return isinstance(value, (dto.Interval, pa.Scalar))


def _normalised(value):
    """(months, days, microseconds, valid) numpy arrays (one entry for a constant) of
    ``value``, normalised (see above)."""
    if isinstance(value, pa.Scalar) and pa.types.is_interval(value.type):
        value = dto.Interval.of_arrow(value)
    if value is None or not isinstance(value, dto.Interval) and kind(value.type) == "null":
        rows = 1 if value is None or isinstance(value, pa.Scalar) else len(value)
        zeros = np.zeros(rows, np.int64)
        months, days, micros, valid = zeros, zeros, zeros, np.zeros(rows, bool)
    elif isinstance(value, dto.Interval):
        months, days, micros = (np.array([part], np.int64)
                                for part in (value.months, value.days, value.micros))
        valid = np.ones(1, bool)
    elif kind(value.type) == "duration":
        micros = pc.cast(pc.cast(value, pa.duration("us")), pa.int64())
        if isinstance(micros, pa.Scalar):
            micros = pa.repeat(micros, 1)
        if isinstance(micros, pa.ChunkedArray):
            micros = micros.combine_chunks()
        valid = valid_rows(micros)
        micros = np.asarray(micros.fill_null(0).to_numpy(zero_copy_only=False), np.int64)
        months = days = np.zeros(len(micros), np.int64)
    else:
        months, days, micros, valid = parts(value)
    whole_days = micros // dto.US_PER_DAY  # rounding down: every part but the months >= 0
    days = days + whole_days
    whole_months, days = np.divmod(days, dto.DAYS_PER_MONTH)
    return months + whole_months, days, micros - whole_days * dto.US_PER_DAY, valid


def group_extremes(values: pa.Array, group_ids: np.ndarray, groups: int,
                   want_max: bool) -> pa.Array:
    """min / max of interval ``values`` (an Arrow month_day_nano array) per group (the
    ``group_ids`` of the rows, 0 .. ``groups`` - 1), by the order above: of equal ones
    (``1 month``, ``30 days``) the last row's value, as DuckDB; NULL for a group of NULLs."""
    months, days, micros, valid = _normalised(values)
    sign = -1 if want_max else 1
    rows = np.flatnonzero(valid)
    order = rows[np.lexsort((-rows, sign * micros[rows], sign * days[rows],
                             sign * months[rows], group_ids[rows]))]
    bests = np.full(groups, -1, np.int64)
    bests[group_ids[order][::-1]] = order[::-1]  # each group's first row in that order
    return values.take(pa.array(bests, mask=bests < 0))


def frame_ranks(values: pa.Array, largest: bool) -> np.ndarray:
    """Distinct ranks (int64, from 0) of interval ``values`` in the order above, equal ones
    apart by position so that the later row is the better -- ranks higher for a max
    (``largest``), lower for a min: a frame's min / max is then the last of its equal
    extremes, as DuckDB's."""
    months, days, micros, _ = _normalised(values)
    positions = np.arange(len(values))
    order = np.lexsort((positions if largest else -positions, micros, days, months))
    ranks = np.empty(len(order), np.int64)
    ranks[order] = np.arange(len(order))
    return ranks


def normalised_parts(values: pa.Array) -> list[np.ndarray]:
    """Interval ``values``' normalised months, days and microseconds (int64 numpy, 0 where
    NULL): sorted by them in turn, they sort as they compare."""
    return list(_normalised(values)[:3])


def field_extreme(values: list, greatest: bool, error):
    """``greatest`` / ``least`` of INTERVALs (arrays or scalars), as DuckDB picks them: by
    their fields as they stand -- months, then days, then microseconds -- not by the length
    its comparisons normalise (``greatest(INTERVAL 1 MONTH, INTERVAL 31 DAY)`` is 1 month);
    NULLs skipped, NULL when all are."""
    rows = max((len(v) for v in values if not isinstance(v, pa.Scalar)), default=1)
    best = None
    for value in values:
        fields = parts(broadcast(value, rows))
        if best is None:
            best = fields
            continue
        (m, d, u, valid), (bm, bd, bu, bvalid) = fields, best
        beyond = (m > bm) | ((m == bm) & ((d > bd) | ((d == bd) & (u > bu)))) if greatest \
            else (m < bm) | ((m == bm) & ((d < bd) | ((d == bd) & (u < bu))))
        take = valid & (~bvalid | beyond)
        best = tuple(np.where(take, new, old) for new, old in zip(fields, best))
    result = built(*best, error)
    return result[0] if all(isinstance(v, pa.Scalar) for v in values) else result
