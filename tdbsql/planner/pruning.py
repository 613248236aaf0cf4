"""The pruning funnel on dimensions: fragments by non-empty domain, sparse tiles by R-tree MBRs,
dense space tiles by the query box.

``Ranges`` maps a dimension name to a list of inclusive ``(lo, hi)`` ranges that every row the
query can return satisfies (see ``planner.ranges``).  Bounds of string dimensions are UTF-8
bytes, compared bytewise as TileDB orders them, and ``None`` for an open end.  Dropping a
fragment or tile whose domain misses every range is always sound: no cell in it can be returned.

Tile bounds come from ``leaf_mbrs`` (sparse: the R-tree leaf level) and ``DenseTileGrid``
(dense: the space tiles covering a fragment's non-empty domain, in the array's tile order);
``pick_tiles`` narrows any per-tile sequence to some tiles.  ``isolated_tiles`` (tiles) and
``disjoint_domains`` (fragments) test boxes against other fragments' non-empty domains.

All of these bound the coordinates a read returns only when ``bounds_hold`` says so: TileDB
computes non-empty domains and MBRs from the coordinates written, and a lossy coordinate filter
(float scaling on a float dimension) reads back others (3.3 in steps of 1 reads 3.0, below
its tile's MBR [3.3, 3.3]).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from ..datatypes import Datatype

Ranges = dict[str, list[tuple[Any, Any]]]


def overlaps(lo, hi, ranges: list[tuple[Any, Any]]) -> bool:
    return any((r_lo is None or r_lo <= hi) and (r_hi is None or lo <= r_hi)
               for r_lo, r_hi in ranges)


def bounds_hold(schema) -> bool:
    """Whether the fragments' non-empty domains and MBRs bound the coordinates read back:
    no dimension's filters are lossy."""
    return not any(d.filters.lossy for d in schema.dimensions)


def fragment_overlaps(non_empty_domain, dim_names: list[str], ranges: Ranges) -> bool:
    """False when the fragment's non-empty domain misses the ranges of some dimension."""
    if non_empty_domain is None:
        return False
    for dim_name, (lo, hi) in zip(dim_names, non_empty_domain):
        if dim_name in ranges and not overlaps(_bytes(lo), _bytes(hi), ranges[dim_name]):
            return False
    return True


def sparse_tiles(mbrs: list[tuple[Any, Any]], dim_names: list[str], ranges: Ranges,
                 tile_count: int) -> np.ndarray:
    """Indices of the sparse tiles whose MBR meets the ranges.

    ``mbrs[dim_idx]`` is ``(lows, highs)``: numpy arrays for fixed dims, lists of bytes for
    var-sized dims, one entry per tile (the R-tree leaf level).
    """
    keep = np.ones(tile_count, dtype=bool)
    for dim_idx, dim_name in enumerate(dim_names):
        if dim_name not in ranges:
            continue
        lows, highs = mbrs[dim_idx]
        if isinstance(lows, np.ndarray):
            hit = np.zeros(tile_count, dtype=bool)
            for r_lo, r_hi in ranges[dim_name]:
                hit |= (lows <= r_hi) & (highs >= r_lo)
        else:
            hit = np.array([overlaps(_bytes(lo), _bytes(hi), ranges[dim_name])
                            for lo, hi in zip(lows, highs)], dtype=bool)
        keep &= hit
    return np.flatnonzero(keep)


def range_hull(ranges: list[tuple[Any, Any]]) -> tuple[Any, Any]:
    return min(r[0] for r in ranges), max(r[1] for r in ranges)


def _bytes(value):
    """A bytes-like bound (``bytearray`` / ``memoryview`` from fragment metadata) as ``bytes``,
    so it compares with range bounds; any other value as it is."""
    return bytes(value) if isinstance(value, bytearray | memoryview) else value


def domain_box(non_empty_domain, dim_names: list[str]) -> Ranges:
    """A fragment's non-empty domain (per dimension ``(lo, hi)``) as ``Ranges``: one closed
    range per dimension, bytes-like bounds as ``bytes``.  What ``fragment_overlaps`` and
    ``sparse_tiles`` test other boxes against."""
    return {name: [(_bytes(lo), _bytes(hi))] for name, (lo, hi) in zip(dim_names, non_empty_domain)}


def isolated_tiles(mbrs: list[tuple[Any, Any]], dim_names: list[str], other_domains,
                   tile_count: int) -> np.ndarray:
    """Per tile: True when its MBR meets none of ``other_domains`` (non-empty domains of the
    fragments whose cells this fragment could hide).  Only such a tile of a deduplicated
    sparse array may be dropped on an attribute zone map: its cells overwrite no other cell,
    so leaving them out cannot bring back an older version they hide."""
    alone = np.ones(tile_count, dtype=bool)
    for ned in other_domains:
        if ned is None:
            continue
        alone[sparse_tiles(mbrs, dim_names, domain_box(ned, dim_names), tile_count)] = False
    return alone


def disjoint_domains(domains: list, dim_names: list[str]) -> bool:
    """Are the fragments' non-empty domains (``None``: an empty fragment, apart from all)
    pairwise disjoint, i.e. some dimension apart for every pair?  The fragment-level twin of
    ``isolated_tiles``: both test boxes against ``domain_box`` of a non-empty domain."""
    for i, first in enumerate(domains):
        if first is None:
            continue
        box = domain_box(first, dim_names)
        if any(fragment_overlaps(other, dim_names, box) for other in domains[i + 1:]):
            return False
    return True


def box_inside(lows, highs, dim_names: list[str], ranges: Ranges) -> np.ndarray:
    """Per tile: True when its bounds lie wholly inside one range of every ranged dimension
    (``lows[d]``/``highs[d]``: per-tile arrays, or lists of bytes for string dimensions)."""
    n = len(lows[0]) if lows else 0
    inside = np.ones(n, dtype=bool)
    for dim_idx, name in enumerate(dim_names):
        if name not in ranges:
            continue
        lo, hi = lows[dim_idx], highs[dim_idx]
        hit = np.zeros(n, dtype=bool)
        for r_lo, r_hi in ranges[name]:
            if isinstance(lo, np.ndarray):
                ok = np.ones(n, dtype=bool)
                if r_lo is not None:
                    ok &= lo >= r_lo
                if r_hi is not None:
                    ok &= hi <= r_hi
            else:
                ok = np.array([(r_lo is None or _bytes(a) >= r_lo) and (r_hi is None or _bytes(b) <= r_hi)
                               for a, b in zip(lo, hi)], dtype=bool)
            hit |= ok
        inside &= hit
    return inside


def leaf_mbrs(meta) -> list[tuple[Any, Any]]:
    """Per dimension ``(lows, highs)`` of every sparse tile, from the R-tree leaf level: numpy
    arrays for fixed-size dimensions, lists of bytes-like bounds for var-sized ones."""
    out = []
    for ranges in meta.rtree.leaves:
        if isinstance(ranges, np.ndarray):
            out.append((ranges[:, 0], ranges[:, 1]))
        else:
            out.append(([lo for lo, _ in ranges], [hi for _, hi in ranges]))
    return out


def pick_tiles(values, tiles: np.ndarray):
    """The entries of some tiles from a per-tile sequence (bounds from ``leaf_mbrs`` or
    ``DenseTileGrid``, or a zone map's per-tile values).

    ``values``: one entry per tile, a numpy array (fixed-size values) or a list (bytes-like
    bounds of var-sized dimensions and strings); ``tiles``: integer array of tile indices.
    Returns the entries of ``tiles`` in that order, of the same kind: a new numpy array, or a
    list."""
    if isinstance(values, np.ndarray):
        return values[tiles]
    return [values[int(i)] for i in tiles]


class DenseTileGrid:
    """The space tiles of a dense fragment: tile ``i`` in the array's tile order over the tiles
    that cover the fragment's non-empty domain ``frag_lo .. frag_hi`` (Python ints)."""

    def __init__(self, schema, frag_lo: list[int], frag_hi: list[int]):
        dims = schema.dimensions
        self.dom_lo = [int(d.domain[0]) for d in dims]
        # a uint64 domain may pass int64: its bounds are uint64
        self.dtypes = [np.dtype(np.uint64 if d.datatype == Datatype.UINT64 else np.int64)
                       for d in dims]
        self.ext = [int(d.tile_extent) for d in dims]
        self.first = [(f - d) // e for f, d, e in zip(frag_lo, self.dom_lo, self.ext)]
        last = [(f - d) // e for f, d, e in zip(frag_hi, self.dom_lo, self.ext)]
        self.counts = [l - f + 1 for f, l in zip(self.first, last)]
        self.col_major = schema.tile_order == 1
        self.extents = np.array(self.ext, dtype=np.int64)
        self.count = math.prod(self.counts)
        self.cells_per_tile = math.prod(self.ext)

    def _fastest_first(self) -> range:
        """Dimension positions from the fastest-varying one in the tile order."""
        ndim = len(self.counts)
        return range(ndim) if self.col_major else range(ndim - 1, -1, -1)

    def tiles_meeting(self, lo: list[int], hi: list[int], ranges: list):
        """(fragment tile index, absolute lower corner) of every tile meeting [lo, hi] and, per
        dimension, one of its query ranges (``ranges[d]``: list of (lo, hi) or None)."""
        spans = []
        for d in range(len(self.counts)):
            t0 = (lo[d] - self.dom_lo[d]) // self.ext[d] - self.first[d]
            t1 = (hi[d] - self.dom_lo[d]) // self.ext[d] - self.first[d]
            span = range(t0, t1 + 1)
            if ranges[d] is not None and len(ranges[d]) > 1:  # a gap may skip whole tiles
                span = [t for t in span if self._meets(d, t, ranges[d])]
            spans.append(span)
        # enumerate in tile order so tiles are read front to back in their files
        strides, step = [0] * len(spans), 1
        for d in self._fastest_first():
            strides[d] = step
            step *= self.counts[d]
        loops = list(reversed(spans)) if self.col_major else spans
        for combo in itertools.product(*loops):
            tcoord = list(reversed(combo)) if self.col_major else combo
            index = sum(t * s for t, s in zip(tcoord, strides))
            corner = [d + (t + f) * e for d, t, f, e in
                      zip(self.dom_lo, tcoord, self.first, self.ext)]
            yield index, corner

    def tile_bounds(self) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Per dimension the (lows, highs) of every tile, by tile index: int64, uint64 for a
        uint64 dimension.  Computed in wrapping uint64 arithmetic: every bound fits its type,
        the steps to it (domain start plus an offset) may not."""
        index = np.arange(self.count, dtype=np.uint64)
        lows: list = [None] * len(self.counts)
        for d in self._fastest_first():
            count = np.uint64(self.counts[d])
            offsets = (index % count + np.uint64(self.first[d])) * np.uint64(self.ext[d])
            lows[d] = (offsets + np.uint64(self.dom_lo[d] % 2**64)).view(self.dtypes[d])
            index = index // count
        return lows, [lo + lo.dtype.type(e - 1) for lo, e in zip(lows, self.ext)]

    def _meets(self, d: int, t: int, ranges) -> bool:
        t_lo = self.dom_lo[d] + (t + self.first[d]) * self.ext[d]
        t_hi = t_lo + self.ext[d] - 1
        return any(r_lo <= t_hi and t_lo <= r_hi for r_lo, r_hi in ranges)
