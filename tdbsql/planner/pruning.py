"""The pruning funnel on dimensions: fragments by non-empty domain, sparse tiles by R-tree MBRs,
dense space tiles by the query box.

``Ranges`` maps a dimension name to a list of inclusive ``(lo, hi)`` ranges that every row the
query can return satisfies (see ``planner.ranges``).  Bounds of string dimensions are UTF-8
bytes, compared bytewise as TileDB orders them, and ``None`` for an open end.  Dropping a fragment or tile whose domain
misses every range is always sound: no cell in it can be returned.
"""

from __future__ import annotations

from typing import Any

import numpy as np

Ranges = dict[str, list[tuple[Any, Any]]]


def overlaps(lo, hi, ranges: list[tuple[Any, Any]]) -> bool:
    return any((r_lo is None or r_lo <= hi) and (r_hi is None or lo <= r_hi)
               for r_lo, r_hi in ranges)


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
    return bytes(value) if isinstance(value, bytearray | memoryview) else value


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
        box = {name: [(_bytes(lo), _bytes(hi))] for name, (lo, hi) in zip(dim_names, ned)}
        alone[sparse_tiles(mbrs, dim_names, box, tile_count)] = False
    return alone


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
