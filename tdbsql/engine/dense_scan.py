"""Dense TileScan: the result box is the non-empty domain (intersected with the ranges' hull),
in row-major order, starting as fill values and overwritten fragment by fragment, oldest first,
by the space tiles that meet the box (padding cells outside a fragment's non-empty domain are
never copied).

Box arithmetic uses Python ints (any integer dimension type, uint64 near 2**64 included); the
kernels see coordinates relative to the box's lower corner.  Fixed-size attributes are scattered
straight into their result arrays; var-sized ones collect the winning tiles' cells in a pool and
gather once at the end.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import CorruptArrayError, DataError
from ..kernels import dense as dense_kernels
from ..planner.pruning import DenseTileGrid, fragment_overlaps, range_hull
from ..planner.zonemap import NEVER
from .column import Column, concat
from .parallel import map_ordered
from .fill import empty_column, fill_column
from .scan import ScanResult, TileScan

MAX_CELLS = 2**40  # a box past this cannot be materialised (TileDB could not either)


class DenseScan(TileScan):

    def box(self) -> tuple[list[int], list[int]] | None:
        """Inclusive (lows, highs) of the cells to return, or None when there are none."""
        ned = self.array.non_empty_domain()
        if ned is None:
            return None
        lo, hi = [], []
        for dim, (d_lo, d_hi) in zip(self.schema.dimensions, ned):
            d_lo, d_hi = int(d_lo), int(d_hi)
            if dim.name in self.ranges:
                if not self.ranges[dim.name]:  # no range left (d = 1 AND d = 2)
                    return None
                r_lo, r_hi = range_hull(self.ranges[dim.name])
                d_lo, d_hi = max(d_lo, _ceil(r_lo)), min(d_hi, _floor(r_hi))
            if d_lo > d_hi:
                return None
            lo.append(d_lo)
            hi.append(d_hi)
        return lo, hi

    def run(self) -> ScanResult:
        box = self.box()
        if box is None:
            return ScanResult({f: empty_column(self.schema, f) for f in self.fields}, 0, self.stats)
        box_lo, box_hi = box
        shape = np.array([h - l + 1 for l, h in zip(box_lo, box_hi)], dtype=np.int64)
        n = math.prod(int(x) for x in shape)
        if n > MAX_CELLS:
            raise DataError(f"the dense result box {list(zip(box_lo, box_hi))} holds {n} cells; "
                            "restrict the dimensions in WHERE")
        attrs = [f for f in self.fields if f not in self.dim_names]
        self.check_budget(n * self._cell_bytes(attrs), f"the {n:,}-cell result box")
        outs = {a: _output(self.schema.attribute(a), n) for a in attrs}
        # Per result cell, set by the newest fragment writing it: left out (its tile was
        # NEVER, or answered from metadata) / its tile ALWAYS satisfies the predicate.
        self.dropped: np.ndarray | None = None
        self.always = np.zeros(n, dtype=bool) if self.wants_always else None
        for frag_idx, frag in enumerate(self.fragments):
            self._overlay(frag_idx, frag, box_lo, box_hi, shape, outs)
        columns = {a: out.finish() for a, out in outs.items()}
        for dim_idx, dim in enumerate(self.schema.dimensions):
            if dim.name in self.fields:
                columns[dim.name] = Column(_coordinates(shape, dim_idx, box_lo[dim_idx],
                                                        dim.info.numpy, n))
        always = self.always
        if self.dropped is not None and self.dropped.any():
            keep = np.flatnonzero(~self.dropped)
            columns = {name: col.take(keep) for name, col in columns.items()}
            always = None if always is None else always[keep]
            n = len(keep)
        if always is not None and not always.any():
            always = None
        return ScanResult({f: columns[f] for f in self.fields}, n, self.stats, always)

    def _cell_bytes(self, attrs: list[str]) -> int:
        """Bytes per result cell before var-sized values: fixed values or offsets, validity,
        coordinates, flags."""
        size = 2  # the ALWAYS and left-out flags
        for name in attrs:
            attr = self.schema.attribute(name)
            size += 8 if attr.is_var else attr.cell_size
            size += 1 if attr.nullable else 0
        return size + 8 * sum(1 for f in self.fields if f in self.dim_names)

    def _overlay(self, frag_idx, frag, box_lo, box_hi, shape, outs):
        ned = frag.metadata.non_empty_domain
        if ned is None or not fragment_overlaps(ned, self.dim_names, self.ranges):
            return
        frag_lo = [int(r[0]) for r in ned]
        frag_hi = [int(r[1]) for r in ned]
        keep_lo = [max(f, b) for f, b in zip(frag_lo, box_lo)]
        keep_hi = [min(f, b) for f, b in zip(frag_hi, box_hi)]
        if any(l > h for l, h in zip(keep_lo, keep_hi)):
            return
        self.stats["fragments_after_domain"] += 1
        grid = DenseTileGrid(self.schema, frag_lo, frag_hi)
        self.stats["tiles_after_domain"] += grid.count
        keep_lo_rel = np.array([k - b for k, b in zip(keep_lo, box_lo)], np.int64)
        keep_hi_rel = np.array([k - b for k, b in zip(keep_hi, box_lo)], np.int64)
        positions = np.empty(grid.cells_per_tile, dtype=np.int64)
        col_major_cells = self.schema.cell_order == 1
        wanted = [self.ranges.get(name) for name in self.dim_names]
        tiles = list(grid.tiles_meeting(keep_lo, keep_hi, wanted))
        self.stats["tiles_after_mbr"] += len(tiles)
        read, left_out, always = self._zone_prune(frag_idx, frag, tiles, grid, frag_lo, frag_hi)

        def place(tile_lo):
            """(cells, targets) of a tile in the result box, or None when none land there."""
            tile_lo_rel = np.array([t - b for t, b in zip(tile_lo, box_lo)], np.int64)
            kept = dense_kernels.tile_cell_positions(tile_lo_rel, grid.extents, col_major_cells,
                                                     keep_lo_rel, keep_hi_rel, shape, positions)
            if kept == 0:
                return None
            if kept == len(positions):  # the whole tile lands: no selection needed
                return slice(None), positions.copy()
            cells = np.flatnonzero(positions >= 0)
            return cells, positions[cells]

        for tile_idx, tile_lo in left_out:
            placed = place(tile_lo)
            if placed is not None:
                if self.dropped is None:
                    self.dropped = np.zeros(int(np.prod(shape)), dtype=bool)
                self.dropped[placed[1]] = True
        # others (added later, or dropped and added again with another type) stay fill
        names = [name for name in outs if self.same_field(frag.fields.get(name))]
        decoded = map_ordered(
            lambda tile: {n: self._tile(frag, n, tile[0], len(positions)) for n in names}, read)
        for (tile_idx, tile_lo), tile_always, cols in zip(read, always, decoded):
            placed = place(tile_lo)
            if placed is None:
                continue
            cells, targets = placed
            self.stats["tiles_after_zonemap"] += 1
            self.stats["tiles_always"] += int(tile_always)
            if self.dropped is not None:
                self.dropped[targets] = False
            if self.always is not None:
                self.always[targets] = tile_always
            self.count_tiles_bytes(frag, range(tile_idx, tile_idx + 1), cols, ())
            for name, tile in cols.items():
                outs[name].write(tile, cells, targets)

    def _zone_prune(self, frag_idx, frag, tiles, grid, frag_lo, frag_hi):
        """Split ``tiles`` into (tiles to read, tiles left out, ALWAYS flag per tile read).

        Dropping a NEVER tile is sound here for attributes too: its cells are marked left out
        (not reverted to an older fragment's value or the fill value) unless a newer fragment
        writes them again -- exactly as the newest value fails the predicate."""
        idx = np.array([t[0] for t in tiles], dtype=np.int64)
        skip = self.skip_tiles.get(frag_idx)
        out_mask = np.zeros(len(tiles), dtype=bool) if skip is None else skip[idx]
        self.stats["tiles_from_metadata"] += int(out_mask.sum())
        always = np.zeros(len(tiles), dtype=bool)
        if tiles and self.predicate is not None and self.predicate.tests:
            bounds = {}
            for d, name in enumerate(self.dim_names):
                lows = _int_array([max(t[1][d], frag_lo[d]) for t in tiles])
                highs = _int_array([min(t[1][d] + grid.ext[d] - 1, frag_hi[d]) for t in tiles])
                bounds[name] = (lows, highs)
            cells = np.full(len(tiles), grid.cells_per_tile, dtype=np.uint64)
            classes = self.zone_classes(frag, idx, bounds, cells)
            out_mask |= (classes.dims == NEVER) | (classes.attrs == NEVER)
            always = classes.always
        read = [t for t, out in zip(tiles, out_mask) if not out]
        left_out = [t for t, out in zip(tiles, out_mask) if out]
        return read, left_out, always[~out_mask]

    def _tile(self, frag, name: str, tile_idx: int, cells: int) -> Column:
        tile = frag.tiles.read(frag.fields[name], tile_idx)
        if len(tile) != cells:
            raise CorruptArrayError(f"dense tile holds {len(tile)} cells, its space tile has "
                                    f"{cells}", f"{frag.name} (field {name!r}), tile {tile_idx}")
        return tile


class _FixedOut:
    """A fixed-size attribute's result: fill values overwritten cell by cell."""

    def __init__(self, attr, n: int):
        fill = fill_column(attr, n)  # freshly tiled: ours to overwrite
        self.cvn = attr.cell_val_num
        self.values = _writable(fill.values)
        self.validity = None if fill.validity is None else _writable(fill.validity)

    def write(self, tile: Column, cells, targets: np.ndarray):
        """Cells ``cells`` (indices, or ``slice(None)`` for all) of ``tile`` go to ``targets``."""
        if self.cvn == 1:
            self.values[targets] = tile.values[cells]
        else:
            self.values.reshape(-1, self.cvn)[targets] = tile.values.reshape(-1, self.cvn)[cells]
        if self.validity is not None:
            self.validity[targets] = 1 if tile.validity is None else tile.validity[cells]

    def finish(self) -> Column:
        return Column(self.values, None, self.validity, self.cvn)


class _VarOut:
    """A var-sized attribute's result: a pool of winning cells (cell 0 = the fill value) and,
    per result cell, its index in the pool."""

    def __init__(self, attr, n: int):
        self.pool = [fill_column(attr, 1)]
        self.size = 1
        self.source = np.zeros(n, dtype=np.int64)

    def write(self, tile: Column, cells, targets: np.ndarray):
        self.pool.append(tile if isinstance(cells, slice) else tile.take(cells))
        self.source[targets] = np.arange(self.size, self.size + len(targets), dtype=np.int64)
        self.size += len(targets)

    def finish(self) -> Column:
        return concat(self.pool).take(self.source)


def _writable(arr: np.ndarray) -> np.ndarray:
    return arr if arr.flags.writeable else arr.copy()


def _output(attr, n: int):
    return _VarOut(attr, n) if attr.is_var else _FixedOut(attr, n)


def _coordinates(shape: np.ndarray, dim_idx: int, lo: int, dtype: np.dtype, n: int) -> np.ndarray:
    rel = np.empty(n, dtype=np.int64)
    dense_kernels.box_coordinates(shape, dim_idx, rel)
    # rel < the box extent, so it fits the dimension type; add the corner in that type
    return rel.astype(dtype) + np.array(lo).astype(dtype)


def _int_array(values: list[int]) -> np.ndarray:
    """int64, or uint64 for coordinates past 2**63 (uint64 dimensions)."""
    return np.array(values, dtype=np.uint64 if max(values) > 2**63 - 1 else np.int64)


def _ceil(value) -> int:
    """Smallest integer coordinate >= a range bound (ints pass through, +-inf widen)."""
    if isinstance(value, float):
        return math.ceil(value) if math.isfinite(value) else (-(2**64) if value < 0 else 2**64)
    return int(value)


def _floor(value) -> int:
    if isinstance(value, float):
        return math.floor(value) if math.isfinite(value) else (-(2**64) if value < 0 else 2**64)
    return int(value)
