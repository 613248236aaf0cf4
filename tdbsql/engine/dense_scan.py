"""Dense TileScan: the result box is the non-empty domain (intersected with the ranges' hull),
in row-major order, starting as fill values and overwritten fragment by fragment, oldest first,
by the space tiles that meet the box (padding cells outside a fragment's non-empty domain are
never copied).

A box of more than ``SLAB_CELLS`` cells is read in slabs (``tasks``): cuts of its first
dimension at the edges of the space tiles, each a whole number of tile rows and about
``SLAB_CELLS`` cells, so every tile is read by one slab only and the slabs, read in order,
give the box's cells in its row-major order.  A scan streams through them as through a sparse
array's tiles, holding a few slabs at a time (at least one row of tiles each), never the box.

Box arithmetic uses Python ints (any integer dimension type, uint64 near 2**64 included); the
kernels see coordinates relative to the box's lower corner.  Fixed-size attributes are scattered
straight into their result arrays; var-sized ones collect the winning tiles' cells in a pool and
gather once at the end.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

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
SLAB_CELLS = 1 << 19  # a box past this is read in slabs of about this many cells


class DenseScan(TileScan):

    cache_tiles = True  # False: tiles decoded are not kept in the tile cache (read once)

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

    def tasks(self) -> list:
        """The box whole (``None``) when it holds at most ``SLAB_CELLS`` cells, else its
        slabs, in order."""
        box = self.box()
        if box is None:
            return [None]
        lo, hi = box
        row_cells = math.prod(h - l + 1 for l, h in zip(lo[1:], hi[1:]))
        if (hi[0] - lo[0] + 1) * row_cells <= SLAB_CELLS:
            return [None]
        _check_cells(lo, hi)
        slabs = [DenseSlab((start, *lo[1:]), (stop, *hi[1:])) for start, stop in
                 tile_spans(self.schema.dimensions[0], lo[0], hi[0], row_cells, SLAB_CELLS)]
        self._count_fragments(lo, hi)
        return slabs

    def read(self, task) -> ScanResult:
        if task is None:
            return self.run()
        return self._read_box(list(task.lo), list(task.hi), counted=True)

    def task_cells(self, task) -> int | None:
        return None if task is None else math.prod(h - l + 1 for l, h in zip(task.lo, task.hi))

    def run(self) -> ScanResult:
        box = self.box()
        if box is None:
            return ScanResult({f: empty_column(self.schema, f) for f in self.fields}, 0, self.stats)
        return self._read_box(*box, counted=False)

    def read_box(self, box_lo: list[int], box_hi: list[int]) -> ScanResult:
        """The cells of a part ``box_lo .. box_hi`` of ``box()``, as ``run`` reads them."""
        return self._read_box(list(box_lo), list(box_hi), counted=False)

    def _read_box(self, box_lo: list[int], box_hi: list[int], counted: bool) -> ScanResult:
        """The cells of the box ``box_lo .. box_hi``.  A slab's (``counted``: its fragments
        were counted by ``tasks``) decodes its tiles on this thread: slabs are read on the
        pool's threads already."""
        n = _check_cells(box_lo, box_hi)
        shape = np.array([h - l + 1 for l, h in zip(box_lo, box_hi)], dtype=np.int64)
        attrs = [f for f in self.fields if f not in self.dim_names]
        self.check_budget(n * self._cell_bytes(attrs), f"the {n:,}-cell result box")
        box = _Box(box_lo, box_hi, shape, n, {a: _output(self.schema.attribute(a), n)
                                               for a in attrs},
                   np.zeros(n, dtype=bool) if self.wants_always else None)
        for frag_idx, frag in enumerate(self.fragments):
            self._overlay(frag_idx, frag, box, counted)
        columns = {a: out.finish() for a, out in box.outs.items()}
        for dim_idx, dim in enumerate(self.schema.dimensions):
            if dim.name in self.fields:
                columns[dim.name] = Column(_coordinates(shape, dim_idx, box_lo[dim_idx],
                                                        dim.info.numpy, n))
        always = box.always
        if box.dropped is not None and box.dropped.any():
            keep = np.flatnonzero(~box.dropped)
            columns = {name: col.take(keep) for name, col in columns.items()}
            always = None if always is None else always[keep]
            n = len(keep)
        if always is not None and not always.any():
            always = None
        return ScanResult({f: columns[f] for f in self.fields}, n, self.stats, always)

    def _count_fragments(self, box_lo: list[int], box_hi: list[int]) -> None:
        """The fragments meeting the box and their tiles, counted once for all its slabs."""
        for frag in self.fragments:
            if self._kept_part(frag, box_lo, box_hi) is not None:
                self.stats["fragments_after_domain"] += 1
                self.stats["tiles_after_domain"] += DenseTileGrid(
                    self.schema, *self._frag_bounds(frag)).count

    def _cell_bytes(self, attrs: list[str]) -> int:
        """Bytes per result cell before var-sized values: fixed values or offsets, validity,
        coordinates, flags."""
        size = 2  # the ALWAYS and left-out flags
        for name in attrs:
            attr = self.schema.attribute(name)
            size += 8 if attr.is_var else attr.cell_size
            size += 1 if attr.nullable else 0
        return size + 8 * sum(1 for f in self.fields if f in self.dim_names)

    def _frag_bounds(self, frag) -> tuple[list[int], list[int]]:
        ned = frag.metadata.non_empty_domain
        return [int(r[0]) for r in ned], [int(r[1]) for r in ned]

    def _kept_part(self, frag, box_lo, box_hi) -> tuple[list[int], list[int]] | None:
        """The part of ``frag``'s non-empty domain inside the box and the ranges' reach, or
        None when it has none."""
        ned = frag.metadata.non_empty_domain
        if ned is None or not fragment_overlaps(ned, self.dim_names, self.ranges):
            return None
        frag_lo, frag_hi = self._frag_bounds(frag)
        keep_lo = [max(f, b) for f, b in zip(frag_lo, box_lo)]
        keep_hi = [min(f, b) for f, b in zip(frag_hi, box_hi)]
        if any(l > h for l, h in zip(keep_lo, keep_hi)):
            return None
        return keep_lo, keep_hi

    def _overlay(self, frag_idx, frag, box: "_Box", counted: bool):
        kept = self._kept_part(frag, box.lo, box.hi)
        if kept is None:
            return
        keep_lo, keep_hi = kept
        frag_lo, frag_hi = self._frag_bounds(frag)
        grid = DenseTileGrid(self.schema, frag_lo, frag_hi)
        if not counted:
            self.stats["fragments_after_domain"] += 1
            self.stats["tiles_after_domain"] += grid.count
        box_lo, shape = box.lo, box.shape
        keep_lo_rel = np.array([k - b for k, b in zip(keep_lo, box_lo)], np.int64)
        keep_hi_rel = np.array([k - b for k, b in zip(keep_hi, box_lo)], np.int64)
        positions = np.empty(grid.cells_per_tile, dtype=np.int64)
        col_major_cells = self.schema.cell_order == 1
        wanted = [self.ranges.get(name) for name in self.dim_names]
        tiles = list(grid.tiles_meeting(keep_lo, keep_hi, wanted))
        with self._stats_lock:  # slabs are read on several threads
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
                if box.dropped is None:
                    box.dropped = np.zeros(box.n, dtype=bool)
                box.dropped[placed[1]] = True
        # others (added later, or dropped and added again with another type) stay fill
        names = [name for name in box.outs if self.same_field(frag.fields.get(name))]

        def decode(tile):
            return {n: self._tile(frag, n, tile[0], len(positions)) for n in names}

        decoded = map(decode, read) if counted else map_ordered(decode, read)
        for (tile_idx, tile_lo), tile_always, cols in zip(read, always, decoded):
            placed = place(tile_lo)
            if placed is None:
                continue
            cells, targets = placed
            with self._stats_lock:
                self.stats["tiles_after_zonemap"] += 1
                self.stats["tiles_always"] += int(tile_always)
            if box.dropped is not None:
                box.dropped[targets] = False
            if box.always is not None:
                box.always[targets] = tile_always
            self.count_tiles_bytes(frag, range(tile_idx, tile_idx + 1), cols, ())
            for name, tile in cols.items():
                box.outs[name].write(tile, cells, targets)

    def _zone_prune(self, frag_idx, frag, tiles, grid, frag_lo, frag_hi):
        """Split ``tiles`` into (tiles to read, tiles left out, ALWAYS flag per tile read).

        Dropping a NEVER tile is sound here for attributes too: its cells are marked left out
        (not reverted to an older fragment's value or the fill value) unless a newer fragment
        writes them again -- exactly as the newest value fails the predicate."""
        idx = np.array([t[0] for t in tiles], dtype=np.int64)
        skip = self.skip_tiles.get(frag_idx)
        out_mask = np.zeros(len(tiles), dtype=bool) if skip is None else skip[idx]
        with self._stats_lock:
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
        tile = frag.tiles.read_fields([frag.fields[name]], tile_idx, keep=self.cache_tiles)[0]
        if len(tile) != cells:
            raise CorruptArrayError(f"dense tile holds {len(tile)} cells, its space tile has "
                                    f"{cells}", f"{frag.name} (field {name!r}), tile {tile_idx}")
        return tile


def tile_spans(dim, lo: int, hi: int, line_cells: int, limit: int) -> list[tuple[int, int]]:
    """``lo .. hi`` along ``dim`` cut at the edges of its space tiles into spans of whole
    tiles (the first and last clipped to ``lo`` and ``hi``), each of at most ``limit`` cells
    -- one tile at least -- when a step along ``dim`` holds ``line_cells`` cells."""
    origin, extent = int(dim.domain[0]), int(dim.tile_extent)
    step = extent * max(1, limit // (extent * line_cells))
    spans, start = [], lo
    while start <= hi:
        stop = min(hi, origin + ((start - origin) // step + 1) * step - 1)
        spans.append((start, stop))
        start = stop + 1
    return spans


@dataclass(frozen=True)
class DenseSlab:
    """A task of a dense scan: the part ``lo .. hi`` (inclusive corners) of its box."""

    lo: tuple[int, ...]
    hi: tuple[int, ...]


@dataclass
class _Box:
    """A box being read: its corners and shape, each attribute's output, and per cell
    whether a tile left it out (``dropped``, made at the first such tile) and whether its
    tile satisfies the whole predicate (``always``)."""

    lo: list[int]
    hi: list[int]
    shape: np.ndarray
    n: int
    outs: dict
    always: np.ndarray | None
    dropped: np.ndarray | None = None


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


def _check_cells(box_lo: list[int], box_hi: list[int]) -> int:
    """The cells of a box, refused past ``MAX_CELLS`` (slabs of it or not: millions of
    slabs would be no better)."""
    n = math.prod(h - l + 1 for l, h in zip(box_lo, box_hi))
    if n > MAX_CELLS:
        raise DataError(f"the dense result box {list(zip(box_lo, box_hi))} holds {n} cells; "
                        "restrict the dimensions in WHERE")
    return n


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
