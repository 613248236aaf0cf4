"""Key membership through a presence bitmap: is each value one of a set of integers?

Bit ``v - low`` of ``bits`` (``(v - low) >> 3`` is the byte, ``(v - low) & 7`` the bit) is
set for the set's values; ``size`` is the span the bitmap covers, and a value outside it is not
in the set.  One pass, no hashing: a join's keys spread over 6M values take 750 KB, which
stays in a core's cache while millions of rows are tested in random order.
"""

from __future__ import annotations

import numpy as np

from . import jit


@jit
def mark_present(keys, low, bits):
    """Set the bit of every key (``bits`` zeroed, spanning the keys)."""
    for i in range(keys.shape[0]):
        offset = keys[i] - low
        bits[offset >> 3] |= np.uint8(1 << (offset & 7))
    return keys.shape[0]


@jit(inline="always")
def _present(offset, size, bits):
    """1 if ``offset`` lies in the bitmap and its bit is set, else 0 -- without a branch:
    whether a row passes is as good as random, and a mispredicted branch a row cost more
    than the test (7 ns a row for Q4's lineitem, 2 with selects)."""
    inside = np.uint64(offset) < np.uint64(size)  # a negative offset wraps past size
    at = offset if inside else 0
    return np.uint8(inside) & np.uint8(bits[at >> 3] >> (at & 7)) & np.uint8(1)


@jit
def rows_present(values, low, size, bits, rows):
    """Write the indices of the values whose bit is set to ``rows``; returns how many."""
    found = 0
    for i in range(values.shape[0]):
        rows[found] = i  # written always, kept only when present: no branch
        found += _present(np.int64(values[i]) - low, size, bits)
    return found


@jit
def keep_present(values, validity, low, size, bits, keep):
    """AND into ``keep`` whether each value's bit is set (``validity``: uint8, 1 = not NULL,
    or empty when the column has no NULLs; a NULL is in no set).  Returns the rows still
    kept."""
    has_validity = validity.shape[0] > 0
    kept = 0
    for i in range(keep.shape[0]):
        passed = np.uint8(keep[i]) & _present(np.int64(values[i]) - low, size, bits)
        if has_validity:
            passed &= np.uint8(validity[i] != 0)
        keep[i] = passed != 0
        kept += passed
    return kept
