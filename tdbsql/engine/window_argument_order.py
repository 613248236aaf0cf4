"""first_value / last_value / nth_value / lead / lag with an ORDER BY of their own
(``first_value(x ORDER BY y) OVER (...)``): the frame is the window's, the rows of each frame
are read in the call's order, as DuckDB has them.

Each row's frame (less what EXCLUDE leaves out; with IGNORE NULLS, less the rows whose value is
NULL) is sorted by the call's ORDER BY, rows equal on it in window order.  first_value takes the
first of these rows, last_value the last, nth_value the n-th (``first`` / ``last`` are those
over a window).  A whole-partition frame sorts each partition once; first / last over frames
from the partition's first row are a running minimum / maximum of the rows' places; other
frames copy each frame's rows out (``window_lists.frame_members``, checked against the
memory budget: a frame of k rows costs k).

lead / lag count from the row's own place in its frame: ``lead(x, k ORDER BY y)`` is the row
``k`` places after it in the frame sorted by ``y``, ``lag`` ``k`` before (a negative ``k``
turning one into the other), the default (or NULL) past the frame's rows.  A row outside its
own frame (``ROWS BETWEEN 1 FOLLOWING AND 2 FOLLOWING``) counts from the place it would take
there, and offset 0 gives its own value.  With IGNORE NULLS the place is still counted among
all the frame's rows but the value is read from the rows that are not NULL (NULL, not the
default, past those): DuckDB's reading.  When the call's ORDER BY begins the window's own,
DuckDB shifts in window order within the frame instead (a row outside its frame:
``UnsupportedSql``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ..errors import UnsupportedSql
from . import frame_exclusion as fx
from . import window_lists
from .frame import null_padded


def frame_value(w, name: str) -> pa.Array:
    """first_value / last_value / nth_value (``name``) of every row's frame in the call's
    order (``w``: the window call, ``engine.window_functions._Window``)."""
    values = w.argument(0)
    counted = w.counted(None, values if w.ignore_nulls else None)
    segments = w.segments()
    if name != "nth_value" and len(segments) == 1 and \
            np.array_equal(segments[0][0], w.layout.part_start):
        return values.take(_running_extreme(w, counted, segments[0][1], name == "last_value"))
    frames = SortedFrames.of(w, counted, segments)
    if name == "first_value":
        nth, known = np.ones(w.n, np.int64), np.ones(w.n, bool)
    elif name == "last_value":
        nth, known = frames.size, np.ones(w.n, bool)
    else:  # nth_value's n by window position, as a row's
        nth, known = w.integers(1)
        nth, known = nth[w.layout.inverse], known[w.layout.inverse]
    found = known & (nth >= 1) & (nth <= frames.size)
    return values.take(_picked(frames.members, frames.start + nth - 1, found))


def shifted(w, direction: int) -> pa.Array:
    """lead (``direction`` 1) / lag (-1) counted in the call's order within each frame."""
    start, end = whole_frame(w)
    if w.shares_order():  # DuckDB: plain lead / lag within the frame
        return w.shifted(direction, (start, end))
    values = w.argument(0)
    offset, known = w.integers(1, default=1)
    layout = w.layout
    inverse = layout.inverse
    offset, known = np.clip(offset, -2**62, 2**62)[inverse] * direction, known[inverse]
    frames = SortedFrames.of(w, np.ones(w.n, bool), [(start, end)])
    before = frames.below(w.argument_places()[inverse])  # the frame's rows before the row
    inside = ((w.position >= start) & (w.position < end))[inverse]  # the row in its frame
    # the place sought: ahead, from the row's own (or, outside the frame, the place it would
    # take); back, from the rows before it
    target = np.where(offset > 0, before + inside + offset - 1, before + offset)
    own = (offset == 0) & ~inside  # offset 0 outside the frame: the row's own value
    within = known & (target >= 0) & (target < frames.size)
    if w.ignore_nulls:  # the place is read among the frame's rows that are not NULL
        frames = SortedFrames.of(w, w.counted(None, values), [(start, end)])
    found = within & (target < frames.size)
    picked = np.where(own, np.arange(w.n), _at(frames.members, frames.start + target, found))
    result = values.take(null_padded(np.where(known, picked, -1)))
    if len(w.args) < 3:
        return result
    return w.defaulted(result, (known & ~within & ~own)[layout.order])


def whole_frame(w) -> tuple[np.ndarray, np.ndarray]:
    """The frame ``[start, end)`` of every window position, for the functions that count
    from the row's own place in it: EXCLUDE is DuckDB's error there.  When the call's ORDER
    BY begins the window's, DuckDB counts by window positions, in a way not worked out here
    for a row outside its frame: ``UnsupportedSql``."""
    if fx.exclusion(w.node.args.get("spec")) != "NO OTHERS":
        raise w.error(f'EXCLUDE is not supported for the window function "{w.name}" with '
                      "ORDER BY in its arguments")
    start, end = w.frame()
    if w.shares_order() and ((w.position < start) | (w.position >= end)).any():
        raise UnsupportedSql(f"{w.shown}() with an ORDER BY that begins the window's, over a "
                             "frame that leaves out the current row, is not supported")
    return start, end


@dataclass(frozen=True)
class SortedFrames:
    """Every row's frame rows (those counted) sorted by the call's ORDER BY, as input rows:
    row ``r``'s are ``members[start[r]:start[r] + size[r]]``; ``places`` are the members'
    places in the call's order.  A whole-partition frame is one run a partition (``runs``:
    each member's partition, ``run`` each row's), shared by its rows."""

    members: np.ndarray
    start: np.ndarray
    size: np.ndarray
    places: np.ndarray
    runs: np.ndarray | None = None
    run: np.ndarray | None = None

    @classmethod
    def of(cls, w, counted: np.ndarray, segments: fx.Segments) -> SortedFrames:
        """The ``counted`` rows (by window position) of the frames ``segments``."""
        layout = w.layout
        places = w.argument_places()
        if fx.is_whole(segments, layout.part_start, layout.part_end):
            partition = np.cumsum(layout.part_start == w.position) - 1
            positions = np.flatnonzero(counted)
            positions = positions[np.lexsort((places[positions], partition[positions]))]
            before = np.concatenate([[0], np.cumsum(counted)])
            start = before[layout.part_start][layout.inverse]
            size = before[layout.part_end][layout.inverse] - start
            return cls(layout.order[positions], start, size, places[positions],
                       partition[positions], partition[layout.inverse])
        rows, ranges, ranks = w.counted_frames(counted, segments)
        members, size = window_lists.frame_members(
            pa.array(rows), rows, ranges, w.ev.budget, f"the window function {w.shown}()",
            ranks)
        return cls(members, np.cumsum(size) - size, size, places[layout.inverse][members])

    def below(self, thresholds: np.ndarray) -> np.ndarray:
        """Per input row, how many of its frame's members have a place below
        ``thresholds[row]``."""
        if self.run is not None:  # a partition's run is sorted by place: a binary search
            span = len(self.run) + 1
            keys = self.runs * span + self.places
            return np.searchsorted(keys, self.run * span + thresholds) - self.start
        owner = np.repeat(np.arange(len(self.size), dtype=np.int64), self.size)
        return np.bincount(owner, weights=self.places < thresholds[owner],
                           minlength=len(self.size)).astype(np.int64)


def _running_extreme(w, counted: np.ndarray, end: np.ndarray, largest: bool) -> pa.Array:
    """first_value / last_value (``largest``) over frames starting at the partition's first
    row and ending at ``end`` (exclusive, by window position): the counted row with the
    smallest / largest place among those up to ``end``, by a running minimum / maximum --
    no frame is copied.  Take indices by input row, NULL for a frame without such a row."""
    layout, n = w.layout, w.n
    if n == 0:
        return null_padded(np.zeros(0, np.int64))
    places = w.argument_places()
    partition = np.cumsum(layout.part_start == w.position) - 1
    # a band of keys per partition, each out of reach of the running minimum (maximum) of
    # the partitions after it; rows not counted hold a place past every row's
    band = (n + 1) * (partition if largest else partition[-1] - partition)
    keys = band + np.where(counted, places, -1 if largest else n)
    running = (np.maximum if largest else np.minimum).accumulate(keys)
    place = running[np.maximum(end - 1, 0)] - band
    found = (end > layout.part_start) & (place >= 0) & (place < n)
    at_place = np.empty(n, np.int64)
    at_place[places] = layout.order  # the input row at each place
    return null_padded(np.where(found, at_place[np.where(found, place, 0)], -1)[layout.inverse])


def _picked(members: np.ndarray, at: np.ndarray, found: np.ndarray) -> pa.Array:
    """Take indices: ``members[at]`` where ``found``, NULL elsewhere."""
    return null_padded(_at(members, at, found))


def _at(members: np.ndarray, at: np.ndarray, found: np.ndarray) -> np.ndarray:
    """``members[at]`` where ``found``, -1 elsewhere."""
    if not len(members):
        return np.full(len(at), -1, np.int64)
    return np.where(found, members[np.where(found, at, 0)], -1)
