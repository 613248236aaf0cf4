"""Streamed aggregation into accumulators indexed by the integer group key itself.

The usual streamed aggregate (``engine.pipeline``) groups every chunk of rows on its own -- a
lookup table over the chunk's key range, filled anew each time -- keeps the chunk's groups as
a ``Partial``, and at the end groups all partial rows again by key to fold their states.  With
very many groups (TPC-H Q18: 6M lineitems of 1.5M orders, every chunk's keys spread over all
of them) that is most of the query's work, and most of it done twice.

When the only group key is an integer and the keys span a range of at most ``slot_limit``
values, ``key - low`` is each row's slot in accumulators over the whole range: a chunk adds
into them straight away -- no group ids, no partial, nothing to regroup.  Each worker thread
folds into a set of its own (``Slots``: a chunk takes an idle set, so no more sets are made
than chunks are folded at once), grown when a chunk brings keys outside its range (to at
least twice its size, so keys that rise along the scan do not copy the set every chunk).  At
the end the sets are added into one (``merged``); its slots with rows are the groups, in key
order.

A set holds, per name of its ``Layout``, an array over its slots:

=========  ==========================================  ====================================
kind       per slot                                    merged by
=========  ==========================================  ====================================
sums       one record of float64: the rows folded,     adding, the sums with TwoSum
           then a sum and its rounding error per       (``kernels.expression_sums.
           summed expression (one cache line a row)    add_slot_sums``)
min / max  a value, started at one every input         SQL min / max (NaN above every
           replaces or equals (``kernels.aggregate.    number)
           extremes_into``)
=========  ==========================================  ====================================

Every layout has a ``sums`` record (its count of rows tells the slots that are groups).  The
sets' bytes count against the memory budget: a chunk whose keys would take them past ``room``
bytes goes the usual way, and its partial combines with the sets' groups.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from ..kernels import expression_sums
from . import pooled

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


@dataclass(frozen=True)
class Accumulator:
    """One named array of a set: ``kind`` (sums, min, max); ``width`` summed expressions of
    a sums record; the ``dtype`` of a min / max."""

    kind: str
    width: int = 0
    dtype: np.dtype = field(default=np.dtype(np.float64))

    def shape(self, size: int) -> tuple[int, ...]:
        return (size, 1 + 2 * self.width) if self.kind == "sums" else (size,)

    @property
    def nbytes(self) -> int:
        """Bytes per slot."""
        return 8 * (1 + 2 * self.width) if self.kind == "sums" else self.dtype.itemsize

    def start(self) -> float | int:
        """The value every slot starts at."""
        if self.kind == "sums":
            return 0.0
        floating = self.dtype.kind == "f"
        if self.kind == "min":
            return np.nan if floating else np.iinfo(self.dtype).max
        return -np.inf if floating else np.iinfo(self.dtype).min


Layout = dict[str, Accumulator]


@dataclass
class Slots:
    """Accumulators over the keys ``low .. low + size - 1``: per name of the layout an array
    with a row per key."""

    low: int
    size: int
    arrays: dict[str, np.ndarray]

    @classmethod
    def new(cls, layout: Layout, low: int, size: int) -> Slots:
        return cls(low, size, {name: _filled(acc.shape(size), acc.dtype, acc.start())
                               for name, acc in layout.items()})

    def ids(self, codes: np.ndarray) -> np.ndarray:
        """The slots of the key ``codes`` (all inside the range), in place of the codes."""
        return np.subtract(codes, self.low, out=codes)

    def add(self, layout: Layout, other: Slots) -> None:
        """Fold ``other`` (a range inside this one) into these accumulators."""
        at = slice(other.low - self.low, other.low - self.low + other.size)
        for name, acc in layout.items():
            into, values = self.arrays[name][at], other.arrays[name]
            if acc.kind == "sums":
                expression_sums.add_slot_sums(values, into)
            else:
                np.copyto(into, _extreme(acc)(into, values))

    def grown(self, layout: Layout, low: int, size: int) -> Slots:
        """A set over ``low .. low + size - 1`` (which holds this one's range) with these
        accumulators' values."""
        bigger = Slots.new(layout, low, size)
        bigger.add(layout, self)
        return bigger


def _extreme(acc: Accumulator):
    """The ufunc merging two arrays of SQL minima / maxima: NaN is above every number, so a
    float max keeps it (``maximum``) and a float min only when both are NaN (``fmin``)."""
    if acc.kind == "max":
        return np.maximum
    return np.fmin if acc.dtype.kind == "f" else np.minimum


def _filled(shape, dtype, value) -> np.ndarray:
    """A pooled array (``engine.pooled``: its pages come back warm from the last query)."""
    array = pooled.empty(int(np.prod(shape)), dtype).reshape(shape)
    array.fill(value)
    return array


def slot_bytes(layout: Layout) -> int:
    """Bytes a set takes per slot."""
    return sum(acc.nbytes for acc in layout.values())


class DenseGroups:
    """The accumulator sets of one streamed aggregate.  They all span one range of keys
    (``span``), at most ``slot_limit`` slots, and together take at most ``room`` bytes."""

    def __init__(self, layout: Layout, slot_limit: int, room: int):
        self.layout, self.slot_limit, self.room = layout, slot_limit, room
        self._per_slot = slot_bytes(layout)
        self._changed = threading.Condition()
        self._idle: list[Slots] = []
        self._sets: list[Slots] = []
        self.span: tuple[int, int] | None = None  # (low, size)

    @property
    def nbytes(self) -> int:
        with self._changed:
            return sum(s.size for s in self._sets) * self._per_slot

    @contextmanager
    def slots(self, low: int, high: int):
        """A set covering the keys ``low .. high``, for the caller alone while the ``with``
        lasts; None when the range or the bytes do not fit (the chunk then goes the usual
        way)."""
        with self._changed:
            taken = self._take() if self._cover(low, high) else None
            span = self.span
        try:
            if taken is not None and (taken.low, taken.size) != span:
                taken = self._replace(taken, taken.grown(self.layout, *span))
            yield taken
        finally:
            if taken is not None:
                with self._changed:
                    self._idle.append(taken)
                    self._changed.notify()

    def _cover(self, low: int, high: int) -> bool:
        """Widen ``span`` to hold ``low .. high``; False when that passes ``slot_limit`` or
        the sets would not fit ``room``.  A few keys past the ends (random keys: the first
        chunk saw nearly the whole range) widen it by a sixteenth more, split between both
        ends; many (keys rising along the scan) to at least twice its size, toward them: the
        sets are not grown -- copied -- every chunk."""
        if self.span is None:
            new_low, new_high = low, high
        else:
            old_low, old_size = self.span
            below, above = max(old_low - low, 0), max(high - (old_low + old_size - 1), 0)
            if below + above == 0:
                return True
            needed = old_size + below + above
            if needed > self.slot_limit:
                return False
            few = 16 * (below + above) < old_size
            slack = min(old_size // 16 if few else old_size, self.slot_limit - needed)
            # stragglers: as many more on either side; else all toward the new keys
            slack_below = slack // 2 if few else (0 if above else slack)
            new_low = max(old_low - below - slack_below, _INT64_MIN)
            new_high = min(old_low + old_size - 1 + above + slack - slack_below, _INT64_MAX)
        size = new_high - new_low + 1
        if size > self.slot_limit or max(len(self._sets), 1) * size * self._per_slot > \
                self.room:
            return False
        self.span = new_low, size
        return True

    def _take(self) -> Slots | None:
        """An idle set, a new one while the bytes fit, else the next set given back (None
        when there is no set at all)."""
        while not self._idle:
            if (len(self._sets) + 1) * self.span[1] * self._per_slot <= self.room:
                self._sets.append(Slots.new(self.layout, *self.span))
                return self._sets[-1]
            if not self._sets:
                return None
            self._changed.wait()
        return self._idle.pop()

    def _replace(self, old: Slots, new: Slots) -> Slots:
        with self._changed:
            self._sets = [new if s is old else s for s in self._sets]
        return new

    def merged(self) -> Slots | None:
        """All sets added into one (None when no chunk was folded); call once the scan is
        done."""
        if not self._sets:
            return None
        sets = [s if (s.low, s.size) == self.span else s.grown(self.layout, *self.span)
                for s in self._sets]
        for other in sets[1:]:
            sets[0].add(self.layout, other)
        return sets[0]
