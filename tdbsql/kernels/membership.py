"""Key membership through a flat presence table: is each value one of a set of integers?

``present[v - low]`` is 1 for the set's values (the table spans their range); a value outside
the range is not in the set.  One pass, no hashing: a join's keys over a range of a few million
values fit a table of a few MB, which stays in cache while millions of rows are tested.
"""

from __future__ import annotations

import numpy as np

from . import jit


@jit
def mark_present(keys, low, present):
    """``present[k - low] = 1`` for every key (``present`` zeroed, spanning the keys)."""
    for i in range(keys.shape[0]):
        present[keys[i] - low] = 1
    return keys.shape[0]


@jit
def rows_present(values, low, present, rows):
    """Write the indices of the values found in ``present`` to ``rows``; returns how many."""
    size = present.shape[0]
    found = 0
    for i in range(values.shape[0]):
        offset = values[i] - low
        if offset >= 0 and offset < size and present[offset] != 0:
            rows[found] = i
            found += 1
    return found


@jit
def keep_present(values, validity, low, present, keep):
    """AND into ``keep`` whether each value is in ``present`` (``validity``: uint8, 1 = not
    NULL, or empty when the column has no NULLs; a NULL is in no set).  Returns the rows
    still kept."""
    size = present.shape[0]
    has_validity = validity.shape[0] > 0
    kept = 0
    for i in range(keep.shape[0]):
        offset = np.int64(values[i]) - low
        passed = keep[i] and offset >= 0 and offset < size and present[offset] != 0
        if has_validity:
            passed = passed and validity[i] != 0
        keep[i] = passed
        kept += passed
    return kept
