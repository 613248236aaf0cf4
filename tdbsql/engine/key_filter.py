"""The rows whose key is one of a set of values, compared as a join compares them.

A deferred join input (``engine.deferred_inputs``) aggregates only the rows whose group key is
among the keys joined so far.  Integer keys spanning a range of up to ``PRESENCE_MAX`` values
are tested against a presence bitmap (``kernels.membership``): one pass per batch, and the
table, a few MB at most, stays in cache.  Any other keys go through a semi hash join, whose
key rules (int/float mixes, strings, dates against timestamps) are the join's own.  A NULL key
matches nothing either way.
"""

from __future__ import annotations

from functools import cached_property

from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from ..kernels import membership
from ..kernels.hashing import int_range
from . import pooled
from .hash_table import as_array, int64_values, is_exact_integer
from .stored_filter import NO_VALIDITY

PRESENCE_MAX = 1 << 28  # values spanned by a presence bitmap: 32 MB


class JoinedKeys(NamedTuple):
    """The keys a deferred aggregate runs for: its group key over the input rows, the
    values to keep, and the stored integer column the group key is (None if not one)."""

    expression: exp.Expression
    filter: KeyFilter
    stored: str | None


class KeyFilter:
    def __init__(self, keys: pa.Array):
        """``keys``: the values to keep, distinct and without NULLs."""
        self._keys, self.key_type = keys, keys.type
        self.count = len(keys)
        self.low, self.size, self.present = 0, 0, None
        if not len(keys):  # nothing can match: an empty bitmap says so
            self.present = np.zeros(1, np.uint8)
        elif is_exact_integer(keys.type):
            values = int64_values(keys)
            low, high = map(int, int_range(values))
            if high - low < PRESENCE_MAX:
                self._mark(values, low, high)

    @classmethod
    def of_values(cls, values: pa.Array) -> KeyFilter:
        """The keys among ``values``, which may repeat and hold NULLs (a NULL key matches
        nothing).  Integers spanning a bitmap's range are marked in it as they come and
        counted there: a hash table of Q9's 287K distinct order keys cost 25 ms, the bitmap 1."""
        values = values.drop_null()
        if not len(values) or not is_exact_integer(values.type):
            return cls(pc.unique(values))
        numbers = int64_values(values, copy=False)
        low, high = map(int, int_range(numbers))
        if high - low >= PRESENCE_MAX:
            return cls(pc.unique(values))
        found = cls.__new__(cls)
        found._mark(numbers, low, high)
        found._keys, found.key_type = None, values.type  # made from the bitmap when asked
        found.count = membership.count_present(found.present)
        return found

    def _mark(self, values: np.ndarray, low: int, high: int) -> None:
        self.low, self.size = low, high - low + 1
        # a bit per value, and bit ``size`` clear (``kernels.membership``)
        self.present = np.zeros(self.size // 8 + 1, np.uint8)
        membership.mark_present(values, low, self.present)

    def __len__(self) -> int:
        return self.count

    @property
    def keys(self) -> pa.Array:
        """The keys, distinct, as given (``__init__``) or from the bitmap (``of_values``)."""
        if self._keys is None:
            self._keys = pa.array(self.sorted_values).cast(self.key_type)
        return self._keys

    @cached_property
    def sorted_values(self) -> np.ndarray:
        """The keys as sorted int64 (a ``present`` table's keys are exact integers)."""
        if self.present is None or not self.count:
            return np.sort(int64_values(self._keys))
        out = np.empty(self.count, np.int64)
        membership.present_values(self.present, self.low, out)
        return out

    def meets(self, lows: np.ndarray, highs: np.ndarray) -> np.ndarray:
        """Per range ``[lows[i], highs[i]]`` (integer bounds of tiles): does a key lie in it?"""
        keys = self.sorted_values
        return np.searchsorted(keys, lows, "left") < np.searchsorted(keys, highs, "right")

    def rows(self, column) -> np.ndarray:
        """Indices (int64, ascending) of the rows of ``column`` whose value is a key."""
        column = as_array(column)
        if self.present is None or not is_exact_integer(column.type):
            from .hash_join import hash_join  # keys without a presence table only
            return hash_join([column], [self.keys], "semi")[0]
        values = int64_values(column, copy=False)
        rows = pooled.empty(len(values), np.int64)
        rows = rows[:membership.rows_present(values, self.low, self.size, self.present, rows)]
        if column.null_count:  # NULL slots hold anything: drop them
            valid = np.asarray(column.is_valid().to_numpy(zero_copy_only=False))
            rows = rows[valid[rows]]
        return rows


def stored_keep(keys: KeyFilter, column, keep: np.ndarray) -> int:
    """AND into ``keep`` (bool per cell) whether a decoded integer column's value (a tile's
    ``Column``: values, validity) is a key; returns the cells still kept.  Only for a
    ``KeyFilter`` with a presence table (``keys.present``)."""
    validity = NO_VALIDITY if column.validity is None else \
        np.require(column.validity, requirements=["C", "W"])
    return int(membership.keep_present(np.require(column.values, requirements=["C", "W"]),
                                       validity, keys.low, keys.size, keys.present, keep))
