"""Key membership through a presence bitmap: is each value one of a set of integers?

Bit ``v - low`` of ``bits`` (``(v - low) >> 3`` is the byte, ``(v - low) & 7`` the bit) is
set for the set's values; ``size`` is the span of values the bitmap covers, and one bit more,
bit ``size``, is always clear: a value outside the span is looked up there, so the test has
no branch and no second comparison.  One pass, no hashing: a join's keys spread over 6M values take 750 KB, which
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
def _present(value, low, top, bits):
    """1 if ``value``'s bit is set, else 0: an offset outside ``[0, top)`` (``top`` = size,
    as uint64: a negative offset wraps past it) reads the clear bit ``top``.  No branch:
    whether a row passes is as good as random, and a mispredicted branch a row cost more
    than the test (7 ns a row for Q4's lineitem, 2 with selects, 1.2 without the count)."""
    at = np.uint64(np.int64(value) - low)
    at = at if at < top else top
    return (bits[at >> np.uint64(3)] >> (at & np.uint64(7))) & np.uint8(1)


@jit
def rows_present(values, low, size, bits, rows):
    """Write the indices of the values whose bit is set to ``rows``; returns how many."""
    top = np.uint64(size)
    found = 0
    for i in range(values.shape[0]):
        rows[found] = i  # written always, kept only when present: no branch
        found += _present(values[i], low, top, bits)
    return found


@jit
def keep_present(values, validity, low, size, bits, keep):
    """AND into ``keep`` whether each value's bit is set (``validity``: uint8, 1 = not NULL,
    or empty when the column has no NULLs; a NULL is in no set).  Returns the rows still
    kept (counted in a pass of its own: a running count in the test's loop made it a third
    slower)."""
    top = np.uint64(size)
    n = keep.shape[0]
    for i in range(n):
        keep[i] = keep[i] & _present(values[i], low, top, bits)
    if validity.shape[0] > 0:
        for i in range(n):
            keep[i] = keep[i] & (validity[i] != 0)
    kept = 0
    for i in range(n):
        kept += keep[i]
    return kept


@jit
def count_present(bits):
    """How many bits are set."""
    count = 0
    for i in range(bits.shape[0]):
        byte = bits[i]
        while byte:
            byte &= byte - np.uint8(1)
            count += 1
    return count


@jit
def present_values(bits, low, out):
    """Write the values whose bit is set to ``out`` (int64, ascending); returns how many."""
    found = 0
    for i in range(bits.shape[0]):
        byte = bits[i]
        if byte:
            for j in range(8):
                if (byte >> j) & 1:
                    out[found] = low + 8 * i + j
                    found += 1
    return found
