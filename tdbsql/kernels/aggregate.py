"""Per-group aggregate accumulators (the inner loops of the hash aggregate).

In: ``ids`` (int64 group id per row; rows with id -1 are ignored), the values as a writable
C-contiguous int64 or float64 array, and ``valid`` (uint8, 1 = not NULL; an empty array
means "no NULLs").  Out: per-group accumulators the caller allocates zeroed (or as stated) with
one slot per group; ``counts[g]`` always receives the number of non-NULL values of group ``g``,
so the caller can turn empty groups into NULL.

Float sums are compensated (exact error terms per add), which agrees with DuckDB's compensated double sum to the
last bits on ordinary data; variances use Welford's update in row order.  bool_and / bool_or
are ``min_max`` over 0/1 values.  Integer and float sums stay two kernels: one detects
overflow, the other compensates rounding.
"""

from __future__ import annotations

import numpy as np

from . import jit


@jit
def count_valid(ids, valid, counts):
    """``counts[g]`` += number of rows of group ``g`` that are not NULL; returns rows counted."""
    has_valid = valid.shape[0] > 0
    total = 0
    for row in range(ids.shape[0]):
        group = ids[row]
        if group < 0 or (has_valid and valid[row] == 0):
            continue
        counts[group] += 1
        total += 1
    return total


@jit
def sum_int(values, valid, ids, sums, counts):
    """Wrapping int64 sums per group; returns 1 if any group's sum overflowed, else 0."""
    has_valid = valid.shape[0] > 0
    overflow = 0
    for row in range(ids.shape[0]):
        group = ids[row]
        if group < 0 or (has_valid and valid[row] == 0):
            continue
        before = sums[group]
        value = values[row]
        after = before + value
        # two's-complement overflow: both operands differ in sign from the result
        if ((before ^ after) & (value ^ after)) < 0:
            overflow = 1
        sums[group] = after
        counts[group] += 1
    return overflow


@jit
def sum_int_split(values, unsigned, valid, ids, highs, lows, counts):
    """Exact integer sums as two int64 halves: ``sum = highs * 2**32 + lows``.

    Each value is split into its high 32 bits (signed, or unsigned when ``unsigned`` is set, the
    values then being uint64 bit-cast to int64) and its low 32 bits, so neither half-sum can
    overflow before 2**31 rows.  Returns the number of values summed.
    """
    has_valid = valid.shape[0] > 0
    total = 0
    low_mask = np.int64(0xFFFFFFFF)
    for row in range(ids.shape[0]):
        group = ids[row]
        if group < 0 or (has_valid and valid[row] == 0):
            continue
        value = values[row]
        if unsigned:
            high = np.int64(np.uint64(value) >> np.uint64(32))
        else:
            high = value >> 32
        highs[group] += high
        lows[group] += value & low_mask
        counts[group] += 1
        total += 1
    return total


@jit
def sum_float(values, valid, ids, sums, compensations, counts):
    """Compensated float64 sums; the caller adds ``compensations`` to finite sums.  Unlike the
    other kernels, ``counts`` is only filled when ``valid`` is given: without NULLs every row
    with a group id counts, which the caller knows (``Groups.sizes``).

    Each add's exact rounding error comes from Knuth's branch-free TwoSum (the error
    Neumaier's step finds with a comparison, which costs more here).  With few groups,
    consecutive rows often hit the same group, and each row would wait for the previous one's
    add and store; so even and odd rows go to two lanes of accumulators (independent chains),
    merged at the end.  Many groups spread rows anyway: one lane.
    """
    ngroups = sums.shape[0]
    lanes = 2 if ngroups <= 4096 else 1
    lane_sums = np.zeros(lanes * ngroups)
    lane_comps = np.zeros(lanes * ngroups)
    if valid.shape[0] > 0:
        for row in range(ids.shape[0]):
            group = ids[row]
            if group < 0 or valid[row] == 0:
                continue
            slot = lanes * group + (row & (lanes - 1))
            lane_comps[slot] += _two_sum_error(lane_sums, slot, values[row])
            counts[group] += 1
    else:
        for row in range(ids.shape[0]):
            group = ids[row]
            if group >= 0:
                slot = lanes * group + (row & (lanes - 1))
                lane_comps[slot] += _two_sum_error(lane_sums, slot, values[row])
    for slot in range(lanes * ngroups):
        group = slot // lanes
        sums[group], error = neumaier(sums[group], lane_sums[slot])
        compensations[group] += error + lane_comps[slot]
    return ngroups


@jit
def sum_float_runs(values, ids, sums, compensations):
    """``sum_float`` for rows without NULLs that come in long runs of one group (data sorted
    by something the groups follow, as TPC-H Q1's flags follow the ship date): a run is summed
    in two register accumulators, even and odd rows, each add's exact error kept (TwoSum), and
    written back once, instead of a load, add and store a row through memory."""
    ngroups = sums.shape[0]
    acc = np.zeros(2 * ngroups)
    err = np.zeros(2 * ngroups)
    n = ids.shape[0]
    row = 0
    while row < n:
        group = ids[row]
        if group < 0:
            row += 1
            continue
        s0 = acc[2 * group]
        s1 = acc[2 * group + 1]
        e0 = 0.0
        e1 = 0.0
        while row + 1 < n and ids[row] == group and ids[row + 1] == group:
            s0, e = two_sum(s0, values[row])
            e0 += e
            s1, e = two_sum(s1, values[row + 1])
            e1 += e
            row += 2
        if row < n and ids[row] == group:
            s0, e = two_sum(s0, values[row])
            e0 += e
            row += 1
        acc[2 * group] = s0
        acc[2 * group + 1] = s1
        err[2 * group] += e0
        err[2 * group + 1] += e1
    for slot in range(2 * ngroups):
        group = slot // 2
        sums[group], error = neumaier(sums[group], acc[slot])
        compensations[group] += error + err[slot]
    return ngroups


@jit(inline="always")
def two_sum(total, value):
    """``(total + value, its exact rounding error)`` without a branch (Knuth's TwoSum)."""
    after = total + value
    moved = after - total
    return after, (total - (after - moved)) + (value - moved)


@jit(inline="always")
def _two_sum_error(sums, slot, value):
    """``sums[slot] += value``; returns the add's exact rounding error."""
    sums[slot], error = two_sum(sums[slot], value)
    return error


@jit
def neumaier(total, value):
    """``(total + value, its rounding error)``, the error exact (Neumaier's step); the float-sum
    kernels here and the window frames' running sums (``kernels/window.py``) use it."""
    after = total + value
    if abs(total) >= abs(value):
        return after, (total - after) + value
    return after, (value - after) + total


@jit(inline="always")
def sql_less(a, b):
    """``a < b`` in SQL order, where NaN is above every number and equal to NaN (for
    integers plain ``<``: ``x != x`` is constant false for them).  The one place min / max,
    running states and window frames order numbers by."""
    return a == a and (b != b or a < b)


@jit
def min_max(values, valid, ids, want_max, out, counts):
    """Per-group minimum (``want_max`` false) or maximum of int64 or float64 values, NaN
    ordered above every number (as DuckDB); ``out`` has the values' dtype.  (``x != x`` is
    the NaN test: constant false for integers, so the int64 specialisation loses nothing.)"""
    has_valid = valid.shape[0] > 0
    total = 0
    for row in range(ids.shape[0]):
        group = ids[row]
        if group < 0 or (has_valid and valid[row] == 0):
            continue
        value = values[row]
        current = out[group]
        if counts[group] == 0:
            out[group] = value
        elif sql_less(current, value) if want_max else sql_less(value, current):
            out[group] = value
        counts[group] += 1
        total += 1
    return total


@jit
def welford(values, valid, ids, counts, means, squares):
    """Welford's running mean and sum of squared deviations (``squares``) per group."""
    has_valid = valid.shape[0] > 0
    total = 0
    for row in range(ids.shape[0]):
        group = ids[row]
        if group < 0 or (has_valid and valid[row] == 0):
            continue
        value = values[row]
        count = counts[group] + 1
        counts[group] = count
        delta = value - means[group]
        means[group] += delta / count
        squares[group] += delta * (value - means[group])
        total += 1
    return total


@jit
def extremes_into(values, ids, want_max, out):
    """``out[ids[row]]`` = the SQL minimum (``want_max`` false) or maximum of itself and
    ``values[row]``, for accumulators that start at a value every input replaces or equals:
    the type's largest integer for min and smallest for max, NaN for a float min (any number
    is below it, as ``sql_less`` orders), -inf for a float max."""
    for row in range(ids.shape[0]):
        group = ids[row]
        value = values[row]
        if sql_less(out[group], value) if want_max else sql_less(value, out[group]):
            out[group] = value
    return ids.shape[0]
