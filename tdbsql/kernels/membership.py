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


@jit
def _present(offset, size, bits):
    return offset >= 0 and offset < size and (bits[offset >> 3] >> (offset & 7)) & 1 != 0


@jit
def rows_present(values, low, size, bits, rows):
    """Write the indices of the values whose bit is set to ``rows``; returns how many."""
    found = 0
    for i in range(values.shape[0]):
        if _present(np.int64(values[i]) - low, size, bits):
            rows[found] = i
            found += 1
    return found


@jit
def keep_present(values, validity, low, size, bits, keep):
    """AND into ``keep`` whether each value's bit is set (``validity``: uint8, 1 = not NULL,
    or empty when the column has no NULLs; a NULL is in no set).  Returns the rows still
    kept."""
    has_validity = validity.shape[0] > 0
    kept = 0
    for i in range(keep.shape[0]):
        passed = keep[i] and _present(np.int64(values[i]) - low, size, bits)
        if has_validity:
            passed = passed and validity[i] != 0
        keep[i] = passed
        kept += passed
    return kept
