"""Dense TileScan: the result box is the non-empty domain (intersected with the ranges' hull),
filled with fill values and overwritten fragment by fragment, oldest first, by each space tile
that meets the box (padding cells outside a fragment's non-empty domain are never copied).
"""

from __future__ import annotations

import numpy as np

from ..kernels import dense as dense_kernels
from ..planner.pruning import Ranges, fragment_overlaps, range_hull
from .column import Column, concat
from .fill import empty_column, fill_column
from .scan import ScanResult


class DenseScan:
    def __init__(self, array, fields: list[str], ranges: Ranges):
        self.array = array
        self.schema = array.schema
        self.fields = fields
        self.ranges = ranges
        self.dim_names = [d.name for d in self.schema.dimensions]
        self.stats = {"fragments": len(array.fragments), "fragments_read": 0,
                      "tiles": 0, "tiles_read": 0}

    def box(self):
        ned = self.array.non_empty_domain()
        if ned is None:
            return None
        lo, hi = [], []
        for dim, (d_lo, d_hi) in zip(self.schema.dimensions, ned):
            if dim.name in self.ranges:
                r_lo, r_hi = range_hull(self.ranges[dim.name])
                d_lo, d_hi = max(d_lo, r_lo), min(d_hi, r_hi)
            if d_lo > d_hi:
                return None
            lo.append(int(d_lo))
            hi.append(int(d_hi))
        return np.array(lo, np.int64), np.array(hi, np.int64)

    def run(self) -> ScanResult:
        box = self.box()
        if box is None:
            return ScanResult({f: empty_column(self.schema, f) for f in self.fields}, 0, self.stats)
        box_lo, box_hi = box
        n = int(np.prod(box_hi - box_lo + 1))
        attrs = [f for f in self.fields if f not in self.dim_names]
        pools = {a: [fill_column(self.schema.attribute(a), 1)] for a in attrs}
        self.pool_size = 1  # cells in every pool; cell 0 is the fill value
        source = np.zeros(n, dtype=np.int64)  # pool index of each result cell
        for frag in self.array.fragments:
            self._overlay(frag, box_lo, box_hi, attrs, pools, source)
        columns = {}
        for dim_idx, dim in enumerate(self.schema.dimensions):
            if dim.name in self.fields:
                coords = np.empty(n, dtype=np.int64)
                dense_kernels.box_coordinates(box_lo, box_hi, dim_idx, coords)
                columns[dim.name] = Column(coords.astype(dim.info.numpy))
        for a in attrs:
            columns[a] = concat(pools[a]).take(source)
        return ScanResult({f: columns[f] for f in self.fields}, n, self.stats)

    def _overlay(self, frag, box_lo, box_hi, attrs, pools, source):
        meta = frag.metadata
        ned = meta.non_empty_domain
        if ned is None or not fragment_overlaps(ned, self.dim_names, self.ranges):
            return
        frag_lo = np.array([int(r[0]) for r in ned], np.int64)
        frag_hi = np.array([int(r[1]) for r in ned], np.int64)
        if np.any(frag_lo > box_hi) or np.any(frag_hi < box_lo):
            return
        self.stats["fragments_read"] += 1
        dims = self.schema.dimensions
        dom_lo = np.array([int(d.domain[0]) for d in dims], np.int64)
        ext = np.array([int(d.tile_extent) for d in dims], np.int64)
        first = (frag_lo - dom_lo) // ext
        last = (frag_hi - dom_lo) // ext
        counts = last - first + 1
        col_major_tiles = self.schema.tile_order == 1
        col_major_cells = self.schema.cell_order == 1
        ntiles = int(np.prod(counts))
        self.stats["tiles"] += ntiles
        positions = np.empty(int(np.prod(ext)), dtype=np.int64)
        for tile_idx in range(ntiles):
            tcoord = _unravel(tile_idx, counts, col_major_tiles) + first
            tile_lo = dom_lo + tcoord * ext
            if np.any(tile_lo > box_hi) or np.any(tile_lo + ext - 1 < box_lo):
                continue
            landed = dense_kernels.tile_cell_positions(tile_lo, ext, col_major_cells, frag_lo,
                                                       frag_hi, box_lo, box_hi, positions)
            if landed == 0:
                continue
            self.stats["tiles_read"] += 1
            cells = np.flatnonzero(positions >= 0)
            for a in attrs:
                if a in frag.fields:
                    col = frag.tiles.read(frag.fields[a], tile_idx)
                else:
                    col = fill_column(self.schema.attribute(a), len(positions))
                pools[a].append(col.take(cells))
            source[positions[cells]] = self.pool_size + np.arange(len(cells), dtype=np.int64)
            self.pool_size += len(cells)


def _unravel(index: int, counts: np.ndarray, col_major: bool) -> np.ndarray:
    out = np.empty(len(counts), np.int64)
    order = range(len(counts)) if col_major else range(len(counts) - 1, -1, -1)
    for d in order:
        out[d] = index % counts[d]
        index //= counts[d]
    return out
