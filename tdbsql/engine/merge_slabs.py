"""Slabs: how a merge of overlapping fragments streams.

When fragments overlap, a coordinate may have cells in several tiles, and only the newest one
counts; reading every tile and merging them all at once would hold the whole array.  Instead
the first dimension is cut into disjoint half-open intervals, *slabs*.  Every cell lies in
exactly one slab, and every tile that can hold a cell of a slab is one whose MBR meets the
slab; so the newest cell of each coordinate is found by merging, slab by slab, the cells of
those tiles that fall inside the slab.  A tile crossing a cut is read by both slabs (the tile
cache keeps the second read cheap).  Memory is a few slabs' tiles at a time.

In: per tile to read (in ``tasks`` order) its low and high bound on the first dimension (from
its MBR), numbers of one kind or byte strings (a string dimension).  Out: ``Slab``s: the interval ``[low, high)`` (None: unbounded)
and the positions of the tiles meeting it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

TILES_PER_SLAB = 16  # a slab's tiles are decoded together: a few per core, not the array


@dataclass(frozen=True)
class Slab:
    low: object | None  # inclusive; None: from the start of the domain
    high: object | None  # exclusive; None: to its end
    tiles: tuple[int, ...]  # positions in the task list


def plan_slabs(lows: np.ndarray, highs: np.ndarray, per_slab: int = TILES_PER_SLAB
               ) -> list[Slab]:
    """Cut at tile low bounds so that about ``per_slab`` tiles start in each slab.  Bounds
    of a string dimension come as object arrays of byte strings."""
    if len(lows) == 0:
        return []
    if lows.dtype == object:
        return _plan_by_rank(lows, highs, per_slab)
    starts = np.unique(lows)  # sorted distinct low bounds: the possible cuts
    order = np.sort(lows)
    cuts = []
    for index in range(per_slab, len(order), per_slab):
        cut = order[index]
        if cut > starts[0] and (not cuts or cut > cuts[-1]):
            cuts.append(cut)
    bounds = [None, *cuts, None]
    slabs = []
    for low, high in zip(bounds[:-1], bounds[1:]):
        meets = np.ones(len(lows), dtype=bool)
        if low is not None:
            meets &= highs >= low
        if high is not None:
            meets &= lows < high
        slabs.append(Slab(low, high, tuple(np.flatnonzero(meets).tolist())))
    return [slab for slab in slabs if slab.tiles]


def _plan_by_rank(lows: np.ndarray, highs: np.ndarray, per_slab: int) -> list[Slab]:
    """Byte-string bounds cut through their ranks in byte order: numpy would compare them
    as its fixed-width strings, which drop trailing NUL bytes (b"a\\0" == b"a")."""
    ranked = sorted(set(lows.tolist()) | set(highs.tolist()))
    rank = {value: position for position, value in enumerate(ranked)}
    slabs = plan_slabs(np.array([rank[v] for v in lows.tolist()], dtype=np.int64),
                       np.array([rank[v] for v in highs.tolist()], dtype=np.int64), per_slab)
    return [Slab(None if s.low is None else ranked[s.low],
                 None if s.high is None else ranked[s.high], s.tiles) for s in slabs]
