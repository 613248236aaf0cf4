"""Running aggregates over rows taken in a given order: the state of every prefix (or suffix)
of that order at once.

In: the values (int64 or float64, writable, C-contiguous), ``valid`` (uint8, 1 = not NULL;
empty: no NULLs), ``order`` (int64 rows, in the order to run through them) and ``from_end``.
Out: arrays of ``len(order) + 1`` slots the caller allocates: slot ``j`` holds the state over
the rows ``order[:j]`` -- ``from_end``: over ``order[j:]`` -- its non-NULL count, sum, minimum
and maximum (NaN above every number, as ``kernels.aggregate.min_max``; a slot without values
holds no meaningful minimum or maximum).  A range join's runs of matches are such prefixes or
suffixes of the right rows in sorted order (``engine.range_aggregate``).
"""

from __future__ import annotations

import numpy as np

from . import jit
from .aggregate import sql_less, two_sum


@jit
def running_float(values, valid, order, from_end, counts, sums, mins, maxs):
    """float64 states.  The sums are compensated as ``kernels.aggregate.sum_float``'s: each
    add's exact error (TwoSum) kept and added to the sum when it is finite.  Returns the
    number of rows run through."""
    n = order.shape[0]
    has_valid = valid.shape[0] > 0
    total, error, low, high = 0.0, 0.0, 0.0, 0.0
    count = 0
    first = n if from_end else 0
    counts[first], sums[first], mins[first], maxs[first] = 0, 0.0, 0.0, 0.0
    for i in range(n):
        row = order[n - 1 - i] if from_end else order[i]
        if not has_valid or valid[row] != 0:
            value = values[row]
            low, high = _widened(low, high, value, count)
            total, add_error = two_sum(total, value)
            error += add_error
            count += 1
        slot = n - 1 - i if from_end else i + 1
        counts[slot] = count
        sums[slot] = total + error if np.isfinite(total) else total
        mins[slot], maxs[slot] = low, high
    return n


@jit
def running_int(values, valid, order, from_end, counts, sums, mins, maxs):
    """int64 states.  Returns 1 if a running sum overflowed int64 (the sums are then
    wrapped, not exact), else 0."""
    n = order.shape[0]
    has_valid = valid.shape[0] > 0
    total, low, high, count, overflow = 0, 0, 0, 0, 0
    first = n if from_end else 0
    counts[first], sums[first], mins[first], maxs[first] = 0, 0, 0, 0
    for i in range(n):
        row = order[n - 1 - i] if from_end else order[i]
        if not has_valid or valid[row] != 0:
            value = values[row]
            low, high = _widened(low, high, value, count)
            after = total + value
            # two's-complement overflow: both operands differ in sign from the result
            if ((total ^ after) & (value ^ after)) < 0:
                overflow = 1
            total = after
            count += 1
        slot = n - 1 - i if from_end else i + 1
        counts[slot] = count
        sums[slot] = total
        mins[slot], maxs[slot] = low, high
    return overflow


@jit(inline="always")
def _widened(low, high, value, count):
    """(minimum, maximum) with ``value`` taken in, in SQL order (``count`` values so far)."""
    if count == 0:
        return value, value
    return (value if sql_less(value, low) else low), (value if sql_less(high, value) else high)
