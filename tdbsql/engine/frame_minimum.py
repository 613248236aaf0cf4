"""The smallest key in frames that do not slide forward (ROWS offsets read per row jump back
and forth, so the monotonic queue of ``kernels.window.sliding_extreme`` cannot serve them).

A sparse table holds the position of the smallest key in every run of ``2**j`` positions;
a frame ``[start, end)`` is covered by two runs of the largest such length that fits it.
O(n log n) to build, O(1) (vectorised) per frame; its ``n log n`` positions (8 bytes each:
2 GB for 10M rows) are checked against the query's memory budget first.
"""

from __future__ import annotations

import numpy as np

NO_KEY = np.iinfo(np.int64).max  # a key that marks a position without a value


class SparseMinimum:
    """The smallest of ``keys`` (int64, by window position) in any frame."""

    def __init__(self, keys: np.ndarray, budget=None, what: str = "a window frame's minimum"):
        self.keys = keys
        n = len(keys)
        if budget is not None:
            budget.check(8 * n * max(n.bit_length(), 1), what)
        self.levels = [np.arange(n, dtype=np.int64)]
        while 2 ** len(self.levels) <= n:
            below, half = self.levels[-1], 2 ** (len(self.levels) - 1)
            left, right = below[:n - 2 * half + 1], below[half:n - half + 1]
            self.levels.append(np.where(keys[right] < keys[left], right, left))

    def smallest(self, start: np.ndarray, end: np.ndarray) -> np.ndarray:
        """Per frame ``[start, end)`` the position of its smallest key (the first of equals
        but for ties across the two runs), -1 when it is empty or holds only ``NO_KEY``."""
        keys = self.keys
        level = np.floor(np.log2(np.maximum(end - start, 1))).astype(np.int64)
        best = np.full(len(start), -1, np.int64)
        for j in np.unique(level):
            rows = level == j
            run = self.levels[j]
            left = run[np.minimum(start[rows], len(run) - 1)]
            right = run[np.clip(end[rows] - 2 ** j, 0, len(run) - 1)]
            best[rows] = np.where(keys[right] < keys[left], right, left)
        found = (end > start) & (keys[np.maximum(best, 0)] < NO_KEY)
        return np.where(found, best, -1)
