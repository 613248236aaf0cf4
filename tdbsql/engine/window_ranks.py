"""Ranking functions with an ORDER BY of their own (``rank(ORDER BY y) OVER (...)``), and the
buckets of ntile.

With an ORDER BY in its arguments a ranking function ranks the row among the rows of its
frame (not its partition) in that order, as DuckDB does: row_number counts the frame rows
before it (rows equal on the keys in window order), rank those with smaller keys, cume_dist
those with keys not above its own over the frame's size, percent_rank is ``(rank - 1) /
(size - 1)``, ntile deals the frame's rows into buckets by their row numbers.  DuckDB refuses
it on dense_rank and with an EXCLUDE clause.  A row outside its own frame (``ROWS BETWEEN 1
FOLLOWING AND 2 FOLLOWING``) is ranked by the place it would take there (cume_dist 0 and
ntile NULL over an empty frame).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from .grouping import group_ids
from .window_argument_order import SortedFrames, whole_frame


def ordered_rank(w, name: str) -> pa.Array:
    """``name`` (a ranking function) of every row, by input row, in the call's order."""
    if name == "dense_rank":
        raise w.error('ORDER BY is not supported for the window function "dense_rank"')
    frames = SortedFrames.of(w, np.ones(w.n, bool), [whole_frame(w)])
    inverse = w.layout.inverse
    if name in ("row_number", "ntile"):
        row = frames.below(w.argument_places()[inverse])  # from 0
        if name == "row_number":
            return pa.array(row + 1)
        buckets, known = w.integers(0)
        return ntile_buckets(w, buckets[inverse], known[inverse] & (frames.size > 0), row,
                             frames.size)
    first, end = _peers(w)
    if name == "cume_dist":  # an empty frame (the row outside it): 0
        return pa.array(frames.below(end[inverse]) / np.maximum(frames.size, 1))
    rank = frames.below(first[inverse]) + 1
    if name == "rank":
        return pa.array(rank)
    return pa.array(np.where(frames.size > 1, (rank - 1) / np.maximum(frames.size - 1, 1), 0.0))


def ntile_buckets(w, buckets: np.ndarray, known: np.ndarray, row: np.ndarray,
                  size: np.ndarray) -> pa.Array:
    """Buckets 1..n of the rows numbered ``row`` (from 0) among ``size``, as equal as can be,
    the first ``size % n`` one row larger; NULL where the count is not ``known``."""
    if (buckets[known] < 1).any():
        raise w.error("ntile() needs a bucket count greater than zero")
    buckets = np.maximum(np.minimum(np.maximum(buckets, 1), size), 1)
    small = size // buckets  # rows in a small bucket
    large = size - buckets * small  # buckets with one row more
    in_large = large * (small + 1)  # rows in the large buckets
    bucket = np.where(row < in_large, 1 + row // (small + 1),
                      1 + large + (row - in_large) // np.maximum(small, 1))
    # a row outside its frame may count past it: the last bucket, as DuckDB
    bucket = np.minimum(bucket, buckets)
    return pa.array(bucket, mask=None if known.all() else ~known)


def _peers(w) -> tuple[np.ndarray, np.ndarray]:
    """By window position, the first place of the row's peers in the call's order (the rows
    equal to it on the call's keys) and one past their last."""
    ids = group_ids(w.argument_keys()).ids[w.layout.order]
    moved = w.by_argument_order()
    new = np.ones(w.n, bool)
    new[1:] = ids[moved][1:] != ids[moved][:-1]
    starts = np.flatnonzero(new)
    run = np.cumsum(new) - 1
    ends = np.append(starts[1:], w.n)
    first, end = np.empty(w.n, np.int64), np.empty(w.n, np.int64)
    first[moved], end[moved] = starts[run], ends[run]
    return first, end
