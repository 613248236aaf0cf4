"""Sparse TileScan: the cells of every fragment of the window, merged the way TileDB's sparse
readers merge them.

In: an opened ``Array``, the fields to produce and dimension ranges.  Out: a ``ScanResult``.

Per fragment (oldest first): tiles whose R-tree MBR meets the ranges, cells filtered to the
ranges and -- for a fragment with per-cell timestamps (``t.tdb``, consolidated) that the window
only partly covers -- to cells written inside the window.  Attributes added after a fragment
was written (or dropped and added again with another type) read as the current schema's fill
value.  Fragments of format < 5 keep all coordinates in one ``__coords`` file.

Then, unless the array allows duplicates, one cell per coordinate: the newest wins, by
(timestamp, fragment position), where the timestamp is the cell's own (``t.tdb``) or the first
timestamp of its fragment.  Tiles stream one by one when no coordinate can have two cells;
otherwise the merge runs slab by slab along the first dimension (``engine.merge_slabs``; a
string first dimension is cut at byte strings).  Deletion runs after that
("post-deduplication", so a deleted newest version hides older ones too):

* delete metadata of consolidated fragments (``dt.tdb``): a cell whose delete time is <= the
  end of the window is gone (< for an open-ended window);
* delete conditions (``.del`` commits in the window, oldest first): condition ``c`` at time
  ``td`` applies to a fragment whose first timestamp is <= ``td`` (skipped when the fragment's
  delete metadata lists it as processed); on fragments with per-cell timestamps whose range
  contains ``td`` only cells written at or before ``td`` are removed.  The stored condition is
  the negation of the user's (it tells which cells survive); ``survivors`` evaluates it with
  TileDB's bitmap rules, including their quirk for fields a fragment does not have.
* a delete in the window that tests a field the schema in force lacks makes the read fail,
  as in TileDB.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..datatypes import VAR_NUM, Datatype
from ..errors import CorruptArrayError, UnsupportedFormatError
from ..format.delete_condition import (
    CombinationOp, ConditionOp, ExprNode, ValueNode, evaluate, parse_delete_condition, parse_update,
)
from ..format.filters.compression import CompressionFilter
from ..storage.directory import UINT64_MAX
from ..planner.pruning import (
    Ranges, bounds_hold, box_inside, disjoint_domains, fragment_overlaps, isolated_tiles, leaf_mbrs,
    pick_tiles, sparse_tiles,
)
from ..planner.zonemap import NEVER, cell_counts
from ..kernels import predicate
from ..storage.tiles import RUN_TILES, FieldSpec
from .column import Column, concat, rows_of
from .merge_slabs import plan_slabs
from .parallel import map_ordered
from .fill import empty_column, fill_column
from .key_filter import stored_keep
from .scan import ScanResult, TileScan
from .stored_filter import NO_VALIDITY

TIMESTAMPS = "__timestamps"
DELETE_TIMESTAMPS = "__delete_timestamps"
ZIPPED_COORDS = "__coords"
MAX_DISJOINT_CHECK = 256  # fragments compared pairwise; more are merged without checking
RUN_CELLS = 1 << 17  # runs only of tiles this small (TileDB's default capacity: 10,000 cells)


@dataclass(frozen=True)
class TileTask:
    """One tile to read: its fragment's position, its index, whether the whole predicate holds
    on it (ALWAYS), and whether the window covers its fragment's cell timestamps only partly."""

    frag_idx: int
    tile_idx: int
    always: bool
    partial: bool
    inside: bool  # the tile's MBR lies inside the ranges: no cell needs the range test
    settled: int = 0  # bit p: conjunct p of the predicate holds for every cell of the tile
    span: int = 1  # tiles read: > 1 for the whole run ``tile_idx // RUN_TILES`` (``runs``)

    @property
    def indices(self) -> range:
        return range(self.tile_idx, self.tile_idx + self.span)


@dataclass(frozen=True)
class SlabTask:
    """The tiles meeting one slab ``[low, high)`` of the first dimension (None: unbounded),
    whose cells inside it are merged on their own."""

    low: object | None
    high: object | None
    tiles: tuple[TileTask, ...]


def _inside_slab(cols: dict, dim: str, slab: SlabTask) -> dict:
    """A tile's cells (and their ``__`` arrays) whose first coordinate lies in the slab."""
    column = cols[dim]
    if column.is_var:  # byte strings, compared as TileDB orders them
        values = _binary_array(column)
        low = None if slab.low is None else pa.scalar(slab.low, pa.large_binary())
        high = None if slab.high is None else pa.scalar(slab.high, pa.large_binary())
        above = None if low is None else pc.greater_equal(values, low).to_numpy(False)
        below = None if high is None else pc.less(values, high).to_numpy(False)
    else:
        above = None if slab.low is None else column.values >= slab.low
        below = None if slab.high is None else column.values < slab.high
    mask = below if above is None else above if below is None else above & below
    if mask is None or mask.all():
        return cols
    idx = np.flatnonzero(mask)
    return {name: column[idx] if isinstance(column, np.ndarray) else column.take(idx)
            for name, column in cols.items()}


class SparseScan(TileScan):
    def __init__(self, array, fields: list[str], ranges: Ranges, predicate=None,
                 skip_tiles=None, prepared=None):
        super().__init__(array, fields, ranges, predicate, skip_tiles, prepared)
        self.deletes = [(read_condition(d, array.key), d) for d in array.directory.deletes]
        self._planned: list[TileTask] | None = None
        self._slab_tasks: list | None = None
        self._dedup: bool | None = None
        self._bounds_hold = bounds_hold(self.schema)  # else no pruning by MBR / domain
        self._plain_need: list[str] | None = None  # see _fields_and_deletes
        self._full_need: list[str] | None = None  # see _need
        self._stored: dict[tuple[int, int], tuple] = {}  # see _read_tile
        self._check_delete_fields()

    @property
    def streamable(self) -> bool:
        """Can tiles be read one at a time?  Yes unless cells of several tiles must be merged
        (newest wins per coordinate)."""
        return not self._needs_dedup()

    def tasks(self) -> list:
        """The units ``read`` takes: one per kept tile when the scan streams; when cells must
        be merged, one ``SlabTask`` per slab of the first dimension (``engine.merge_slabs``),
        or one task (``None``) merging everything when the first dimension is var-sized."""
        if self.streamable:
            return self._tiles()
        if self._slab_tasks is None:
            self._slab_tasks = self._slabs() or [None]
        return self._slab_tasks

    def task_cells(self, task) -> int | None:
        if not isinstance(task, TileTask):
            return None
        meta = self.fragments[task.frag_idx].metadata
        return sum(meta.tile_cell_count(t) for t in task.indices)

    def task_tiles(self, task) -> int:
        if isinstance(task, TileTask):
            return task.span
        return len(task.tiles) if isinstance(task, SlabTask) else 1

    def runs(self, tasks: list) -> list:
        """``tasks`` with each whole run of ``RUN_TILES`` neighbouring tiles of a fragment
        (``storage.tiles.TileReader.read_run``; the fragment's last run may be shorter) made
        one task, when the pruning kept all of its tiles with the same classes (ALWAYS, the
        settled conjuncts, inside the ranges) and nothing needs a tile alone: a streamed scan
        without delete conditions, of fragments that cover the window whole and keep their
        coordinates field by field.  A task's steps above (the key test, the stored filter,
        the gather) then run once a run, not once a 10,000-cell tile."""
        if not self.streamable or self.deletes:
            return tasks
        out, start = [], 0
        while start < len(tasks):
            task = tasks[start]
            size = self._run_size(tasks, start)
            if size > 1:
                out.append(TileTask(task.frag_idx, task.tile_idx, task.always, False,
                                    task.inside, task.settled, size))
                start += size
            else:
                out.append(task)
                start += 1
        return out

    def _run_size(self, tasks: list, start: int) -> int:
        """How many of ``tasks`` from ``start`` make a whole run (1 when they do not)."""
        task = tasks[start]
        if not isinstance(task, TileTask) or task.tile_idx % RUN_TILES or task.partial:
            return 1
        frag = self.fragments[task.frag_idx]
        if any(d not in frag.fields for d in self.dim_names):
            return 1  # zipped coordinates (format < 5): read tile by tile
        if frag.metadata.tile_cell_count(task.tile_idx) * RUN_TILES > RUN_CELLS:
            return 1  # big tiles: their per-task costs are spread thin already
        size = len(frag.tiles.run_tiles(task.tile_idx // RUN_TILES))
        if size < 2 or start + size > len(tasks):
            return 1
        for offset in range(1, size):
            other = tasks[start + offset]
            if not isinstance(other, TileTask) or other.frag_idx != task.frag_idx or \
                    other.tile_idx != task.tile_idx + offset or other.span != 1 or \
                    (other.always, other.partial, other.inside, other.settled) != \
                    (task.always, task.partial, task.inside, task.settled):
                return 1
        return size

    def _slabs(self) -> list["SlabTask"] | None:
        """The merge cut into slabs, or None (MBRs that do not bound the cells, or one
        slab).  A string first dimension's MBR bounds are byte strings; they cut it alike."""
        if not self._bounds_hold:
            return None
        tiles = self._tiles()
        var = self.schema.dimensions[0].is_var
        lows, highs = [], []
        for task in tiles:
            first = self.fragments[task.frag_idx].metadata.rtree.leaves[0]
            low, high = first[task.tile_idx] if var else first[task.tile_idx, :]
            lows.append(low)
            highs.append(high)
        kind = object if var else None
        slabs = plan_slabs(np.array(lows, dtype=kind), np.array(highs, dtype=kind))
        if len(slabs) < 2:
            return None
        self.stats["merge_slabs"] = len(slabs)
        return [SlabTask(s.low, s.high, tuple(tiles[i] for i in s.tiles)) for s in slabs]

    def _tiles(self) -> list["TileTask"]:
        """Every tile left after the pruning funnel (planned once: the funnel counts it)."""
        if self._planned is None:
            self._planned = [task for frag_idx, frag in enumerate(self.fragments)
                             for task in self._fragment_tasks(frag_idx, frag)]
        return self._planned

    def read(self, task) -> ScanResult:
        """The cells of one task of ``tasks()``: one tile, ranges, window and deletes applied
        (safe to call from several threads at once)."""
        if task is None:
            return self._merged()
        if isinstance(task, SlabTask):
            return self._merge(list(task.tiles), task)
        if task.inside:  # coordinates are read only when asked for
            need = self._fields_and_deletes()
        else:
            need = self._need()
        cols = self._tile_cells(task, need, stamps=bool(self.deletes))
        ts, dt, always = cols.pop("__ts"), cols.pop("__dt"), cols.pop("__always")
        frag_of_cell = None if ts is None else np.full(len(ts), task.frag_idx, dtype=np.int64)
        return self._after_deletes(cols, ts, dt, frag_of_cell, always)

    def run(self) -> ScanResult:
        if not self.streamable:
            return self._merged()
        parts = list(map_ordered(self.read, self.tasks()))
        if not parts:
            return self._empty()
        always = [np.zeros(p.length, bool) if p.always is None else p.always for p in parts]
        flags = np.concatenate(always)
        return ScanResult({f: concat([p.columns[f] for p in parts]) for f in self.fields},
                          sum(p.length for p in parts), self.stats,
                          flags if flags.any() else None)

    def _empty(self) -> ScanResult:
        return ScanResult({f: empty_column(self.schema, f) for f in self.fields}, 0, self.stats)

    def key_tasks(self, tasks: list, field: str, keys) -> list:
        """Tile bounds on ``field``: the MBRs for a dimension (always sound: a newer cell of a
        coordinate has the same key), the zone map for an attribute (sound where a dropped
        tile hides no older cell, ``_zone_drop_allowed``)."""
        by_fragment: dict[int, list[int]] = {}
        for position, task in enumerate(tasks):
            if not isinstance(task, TileTask):
                return tasks  # merged slabs: every tile's cells are needed for the merge
            by_fragment.setdefault(task.frag_idx, []).append(position)
        dropped = np.zeros(len(tasks), bool)
        for frag_idx, positions in by_fragment.items():
            frag = self.fragments[frag_idx]
            tiles = np.array([tasks[p].tile_idx for p in positions], np.int64)
            bounds = self._key_bounds(frag, field, tiles)
            if bounds is None:
                continue
            drop = ~keys.meets(*bounds)
            if drop.any() and field not in self.dim_names:
                drop &= self._zone_drop_allowed(frag_idx, frag, leaf_mbrs(frag.metadata), tiles)
            dropped[positions] = drop
        kept = [task for task, drop in zip(tasks, dropped) if not drop]
        self.stats["tiles_after_keys"] = len(kept)
        return kept

    def _key_bounds(self, frag, field: str, tiles: np.ndarray):
        """(lows, highs) as int64 of ``tiles`` on the integer column ``field``, or None."""
        meta = frag.metadata
        if field in self.dim_names:
            if not self._bounds_hold:
                return None
            lows, highs = leaf_mbrs(meta)[self.dim_names.index(field)]
        else:
            spec = frag.fields.get(field)
            if meta.version < 11 or spec is None or not self.same_field(spec) \
                    or spec.filters.lossy:
                return None
            lows, highs = meta.tile_mins[field], meta.tile_maxes[field]
            if len(lows) != meta.tile_count or len(highs) != meta.tile_count:
                return None
        lows, highs = np.asarray(lows), np.asarray(highs)
        if lows.dtype.kind not in "iu" or highs.dtype.kind not in "iu":
            return None
        return lows[tiles].astype(np.int64), highs[tiles].astype(np.int64)

    def key_mask(self, task, field: str, keys) -> tuple[np.ndarray, int] | None:
        if not isinstance(task, TileTask) or not task.inside or task.partial or self.deletes:
            return None
        frag = self.fragments[task.frag_idx]
        spec = frag.fields.get(field)
        if spec is None or DELETE_TIMESTAMPS in frag.fields or not self.same_field(spec):
            return None  # a filled column, or cells a delete may hide
        cached: list[str] = []
        column = self._read_fields(frag, task, [spec], cached)[0]
        keep = np.ones(len(column), bool)
        kept = stored_keep(keys, column, keep)
        if not kept:  # the tile's other columns are never read
            self.count_tiles_bytes(frag, task.indices, {field: column}, cached)
        elif not cached:  # the full read finds the key column cached: its disk bytes now
            with self._stats_lock:
                self.stats["bytes_read"] += self._tile_file_bytes(frag.metadata, field,
                                                                  task.indices, column)
        return keep, kept

    @staticmethod
    def _read_fields(frag, task: "TileTask", specs: list, cached: list) -> list[Column]:
        """The task's tile (or run of tiles) of each of ``specs``."""
        if task.span > 1:
            return frag.tiles.read_run(specs, task.tile_idx // RUN_TILES, cached)
        return frag.tiles.read_fields(specs, task.tile_idx, cached)

    def _need(self) -> list[str]:
        if self._full_need is None:  # once per scan: tiles are read with it by identity
            self._full_need = list(dict.fromkeys(self.fields + self.dim_names +
                                                 self._delete_fields()))
        return self._full_need

    def _merged(self) -> ScanResult:
        """Every kept tile read, then one cell per coordinate (newest wins), then deletes."""
        return self._merge(self._tiles())

    def _merge(self, tasks: list["TileTask"], slab: "SlabTask | None" = None) -> ScanResult:
        """The cells of ``tasks``' tiles (only those inside ``slab``, if given: its tiles are
        read on the calling thread, slabs being tasks themselves), merged newest-wins."""
        need = self._need()

        def cells(task):
            cols = self._tile_cells(task, need)
            return cols if slab is None else _inside_slab(cols, self.dim_names[0], slab)

        parts, held = [], 0
        reads = map(cells, tasks) if slab is not None else map_ordered(cells, tasks)
        for task, cols in zip(tasks, reads):
            cols["__frag"] = np.full(len(cols["__ts"]), task.frag_idx, dtype=np.int64)
            parts.append(cols)
            held += sum(c.nbytes for c in cols.values())
            # x2: the tiles are concatenated, then the newest cells taken
            self.check_budget(2 * held, "merging the overlapping fragments")
        if not parts:
            return self._empty()
        columns = {name: concat([p[name] for p in parts]) for name in need}
        ts, dt, frag_of_cell, always = (np.concatenate([p[k] for p in parts])
                                        for k in ("__ts", "__dt", "__frag", "__always"))
        if self._needs_dedup():
            keep = self._newest_per_coordinate(columns, ts, frag_of_cell)
            columns = {n: c.take(keep) for n, c in columns.items()}
            ts, dt, frag_of_cell, always = ts[keep], dt[keep], frag_of_cell[keep], always[keep]
        return self._after_deletes(columns, ts, dt, frag_of_cell, always)

    def _after_deletes(self, columns, ts, dt, frag_of_cell, always) -> ScanResult:
        """The cells that survive delete metadata and delete conditions, as the result."""
        alive = self._survivors(columns, ts, dt, frag_of_cell)
        if alive is not None:
            idx = alive.nonzero()[0]
            columns = {n: c.take(idx) for n, c in columns.items()}
            always = None if always is None else always[idx]
        length = len(next(iter(columns.values()))) if columns else 0
        return ScanResult({f: columns[f] for f in self.fields}, length, self.stats,
                          always if always is not None and always.any() else None)

    def _needs_dedup(self) -> bool:
        """Can one coordinate have several cells?  Not with duplicates allowed, nor when no
        fragment holds per-cell timestamps (a consolidated fragment may keep several versions)
        and the fragments' non-empty domains are pairwise disjoint (a fragment's own
        coordinates are unique; checked for up to ``MAX_DISJOINT_CHECK`` fragments, and only
        when the domains bound the cells)."""
        if self._dedup is None:
            frags = self.fragments
            self._dedup = not self.schema.allows_duplicates and (
                not self._bounds_hold or any(f.metadata.has_timestamps for f in frags)
                or len(frags) > MAX_DISJOINT_CHECK
                or not disjoint_domains([f.metadata.non_empty_domain for f in frags],
                                        self.dim_names))
        return self._dedup

    def _check_delete_fields(self) -> None:
        """TileDB refuses to read when a delete in the window tests a field the schema in force
        lacks (e.g. an attribute dropped after the delete)."""
        known = self.schema.fields_by_name().keys()
        for cond, entry in self.deletes:
            for name in condition_fields(cond):
                if name not in known:
                    raise CorruptArrayError(
                        f"delete condition tests field {name!r}, which the array schema at this "
                        f"timestamp does not have (TileDB refuses to read here too)", entry.where)

    def _fields_and_deletes(self) -> list[str]:
        """The fields asked for and those the delete conditions test (once per scan)."""
        if self._plain_need is None:
            self._plain_need = list(dict.fromkeys(self.fields + self._delete_fields()))
        return self._plain_need

    def _delete_fields(self) -> list[str]:
        return list(dict.fromkeys(n for cond, _ in self.deletes for n in condition_fields(cond)))

    # -- reading a fragment ------------------------------------------------------------------

    def _fragment_tasks(self, frag_idx, frag) -> list["TileTask"]:
        """The tiles of one fragment left after the pruning funnel (counted in ``stats``);
        every tile, cells tested one by one, when the MBRs do not bound the cells."""
        meta = frag.metadata
        if not self._bounds_hold:
            self.stats["fragments_after_domain"] += 1
            for step in ("tiles_after_domain", "tiles_after_mbr", "tiles_after_zonemap"):
                self.stats[step] += meta.tile_count
            return [TileTask(frag_idx, t, False, self._partial(frag), False, 0)
                    for t in range(meta.tile_count)]
        if not fragment_overlaps(meta.non_empty_domain, self.dim_names, self.ranges):
            return []
        self.stats["fragments_after_domain"] += 1
        tile_count = meta.tile_count
        self.stats["tiles_after_domain"] += tile_count
        mbrs = leaf_mbrs(meta)
        tiles = sparse_tiles(mbrs, self.dim_names, self.ranges, tile_count)
        self.stats["tiles_after_mbr"] += len(tiles)
        skip = self.skip_tiles.get(frag_idx)
        if skip is not None:
            self.stats["tiles_from_metadata"] += int(skip[tiles].sum())
            tiles = tiles[~skip[tiles]]
        tiles, always, settled = self._zone_prune(frag_idx, frag, mbrs, tiles)
        partial = self._partial(frag)
        self.stats["tiles_after_zonemap"] += len(tiles)
        self.stats["tiles_always"] += int(always.sum())
        inside = box_inside([pick_tiles(lows, tiles) for lows, _ in mbrs],
                            [pick_tiles(highs, tiles) for _, highs in mbrs], self.dim_names,
                            self.ranges)
        return [TileTask(frag_idx, int(t), bool(a), partial, bool(i), int(c))
                for t, a, i, c in zip(tiles, always, inside, settled)]

    def _partial(self, frag) -> bool:
        """Whether the window covers only some of the fragment's per-cell timestamps."""
        lo, hi = self.array.window
        return frag.metadata.has_timestamps and not (lo <= frag.timestamp_range[0]
                                                     and frag.timestamp_range[1] <= hi)

    def _tile_cells(self, task: "TileTask", need, stamps: bool = True) -> dict:
        """One tile's ``need`` columns, restricted to the ranges (and the window), plus
        ``__ts`` / ``__dt`` arrays (uint64) and ``__always`` (bool: the tile satisfies the
        whole predicate).  Without ``stamps`` (a streamed read with no delete condition) the
        arrays nothing needs are None: ``__ts`` unless stored, ``__dt`` unless stored (no cell
        deleted), ``__always`` for a tile that is not ALWAYS."""
        frag = self.fragments[task.frag_idx]
        cached: list[str] = []
        cols = self._read_tile(frag, task, need, cached)
        self.count_tiles_bytes(frag, task.indices, cols, cached)
        n = len(next(iter(cols.values())))
        ts = cols.pop(TIMESTAMPS).values.view(np.uint64) if TIMESTAMPS in cols else None
        dt = cols.pop(DELETE_TIMESTAMPS).values.view(np.uint64) \
            if DELETE_TIMESTAMPS in cols else None
        if ts is None and (stamps or dt is not None or task.partial):
            ts = np.full(n, frag.timestamp_range[0], dtype=np.uint64)
        if dt is None and stamps:
            dt = np.full(n, UINT64_MAX, dtype=np.uint64)
        mask = None if task.inside else self._range_mask(cols, n)
        if isinstance(mask, tuple) and not task.partial:  # one run of cells: their views
            start, stop = mask
            if stop - start < n:
                cols = {k: rows_of(v, start, stop) for k, v in cols.items()}
                ts = None if ts is None else ts[start:stop]
                dt = None if dt is None else dt[start:stop]
                n = stop - start
            mask = None
        elif isinstance(mask, tuple):
            mask = _run_mask(n, *mask)
        if task.partial:
            lo, hi = self.array.window
            in_window = (ts >= lo) & (ts <= hi)
            mask = in_window if mask is None else mask & in_window
        if mask is not None and not mask.all():
            idx = mask.nonzero()[0]
            cols = {k: v.take(idx) for k, v in cols.items()}
            ts = None if ts is None else ts[idx]
            dt = None if dt is None else dt[idx]
            n = len(idx)
        flags = np.full(n, task.always, dtype=bool) if stamps or task.always else None
        cols["__ts"], cols["__dt"], cols["__always"] = ts, dt, flags
        return cols

    def _zone_prune(self, frag_idx, frag, mbrs, tiles):
        """Tiles kept after the zone maps, and per kept tile whether it is ALWAYS and which
        conjuncts are (``TileClasses.settled``)."""
        if self.predicate is None or not self.predicate.tests or not len(tiles):
            return tiles, np.zeros(len(tiles), dtype=bool), np.zeros(len(tiles), np.uint64)
        cells = cell_counts(frag.metadata)[tiles]
        bounds = {name: (pick_tiles(lows, tiles), pick_tiles(highs, tiles))
                  for name, (lows, highs) in zip(self.dim_names, mbrs)}
        classes = self.zone_classes(frag, tiles, bounds, cells)
        drop = classes.dims == NEVER  # dimension conjuncts: always sound
        attr_never = classes.attrs == NEVER
        if attr_never.any():
            drop |= attr_never & self._zone_drop_allowed(frag_idx, frag, mbrs, tiles)
        keep = ~drop
        return tiles[keep], classes.always[keep], classes.settled[keep]

    def _zone_drop_allowed(self, frag_idx, frag, mbrs, tiles) -> np.ndarray:
        """Per tile of ``tiles``: may it be dropped because an attribute conjunct is NEVER?

        The newest cell of a coordinate wins, so a dropped tile must not hide any other cell:
        leaving out a newer cell that fails the predicate would bring back the older version
        it overwrote.  Sound when the array keeps duplicates (no merging), when nothing is
        merged at all, or when the fragment has no per-cell timestamps (a consolidated
        fragment may hold several versions of one coordinate) and the tile's MBR meets the
        non-empty domain of no fragment it can hide cells of -- one ordered before it by
        (first timestamp, position), the merge's order.  Dropping a tile that is itself
        hidden is harmless.  Deletes need nothing more: they test each surviving cell on its
        own values, after the merge."""
        n = len(tiles)
        if self.schema.allows_duplicates or not self._needs_dedup():
            return np.ones(n, dtype=bool)
        if frag.metadata.has_timestamps or not self._bounds_hold:
            return np.zeros(n, dtype=bool)
        mine = (frag.timestamp_range[0], frag_idx)
        others = [f.metadata.non_empty_domain for i, f in enumerate(self.fragments)
                  if (f.timestamp_range[0], i) < mine]
        alone = isolated_tiles(mbrs, self.dim_names, others, frag.metadata.tile_count)
        return alone[tiles]

    def _read_tile(self, frag, task: "TileTask", need, cached: list) -> dict[str, Column]:
        fields = frag.fields
        cols: dict[str, Column] = {}
        zipped = any(d not in fields for d in self.dim_names)
        if zipped:  # never a run (``_run_size``)
            cols.update(zipped_coords(frag, task.tile_idx))
        stored = self._stored.get((id(frag), id(need)))
        if stored is None or zipped:
            names = [name for name in need + [TIMESTAMPS, DELETE_TIMESTAMPS]
                     if name in fields and name not in cols and self.same_field(fields[name])]
            stored = (names, [fields[name] for name in names], frag, need)
            if not zipped:  # the same fields for every tile of the fragment and ``need``
                self._stored[(id(frag), id(need))] = stored
        names, specs = stored[0], stored[1]
        if names:
            cols.update(zip(names, self._read_fields(frag, task, specs, cached)))
        # the cells a read column holds; metadata's count only if no column was read
        n = len(next(iter(cols.values()))) if cols else self.task_cells(task)
        for name in need:
            if name not in cols:  # attribute added after this fragment was written
                cols[name] = fill_column(self.schema.attribute(name), n)
        return cols

    def _range_mask(self, cols, n: int) -> np.ndarray | tuple[int, int] | None:
        """Per cell, whether it lies inside the query's ranges on every dimension (None:
        no ranges), or ``(start, stop)`` when those cells are one run.  A sorted coordinate
        (the first dimension's, mostly: ``Column.ascending``) bounds the cells inside each of
        its ranges by binary search; the other dimensions are tested only between the first
        and the last of those bounds."""
        if not self.ranges:
            return None
        start, stop, pieces, rest = 0, n, None, []
        for dim in self.schema.dimensions:
            if dim.name in self.ranges:
                found = _sorted_pieces(cols[dim.name], dim, self.ranges[dim.name])
                if found is not None and len(found[0]) == 1:
                    start, stop = max(start, int(found[0][0])), min(stop, int(found[1][0]))
                elif found is not None and pieces is None:
                    pieces = found
                else:
                    rest.append(dim)
        if pieces is None and not rest:  # one range of a sorted dimension, at most
            return (start, stop) if start < stop else (0, 0)
        if pieces is None:
            keep = _run_mask(n, start, stop)
        else:
            keep = np.zeros(n, dtype=bool)
            start, stop = _mark_pieces(keep, *pieces, start, stop)
        if start < stop:
            for dim in rest:
                _keep_in_ranges(cols[dim.name], dim, self.ranges[dim.name], keep, start, stop)
        return keep

    # -- merging -----------------------------------------------------------------------------

    def _newest_per_coordinate(self, columns, ts, frag_of_cell) -> np.ndarray:
        """Index of the newest cell of every coordinate (timestamp, then fragment order, then
        the first in its fragment: consolidation writes the versions of a coordinate newest
        first, and TileDB reads the first of those sharing a timestamp).  A fragment without
        per-cell timestamps holds one cell per coordinate -- unless a lossy coordinate filter
        made several read back alike: TileDB then keeps all of them (it merges fragments, not
        the cells of one), and so does this."""
        table = {f"k{i}": _sort_key(columns[d], self.schema.dimension(d))
                 for i, d in enumerate(self.dim_names)}
        table["ts"] = pa.array(ts)
        table["frag"] = pa.array(frag_of_cell)
        table["pos"] = pa.array(np.arange(len(ts), dtype=np.int64))
        t = pa.table(table)
        keys = [(f"k{i}", "ascending") for i in range(len(self.dim_names))]
        order = pc.sort_indices(t, sort_keys=keys + [("ts", "descending"), ("frag", "descending"),
                                                     ("pos", "ascending")])
        sorted_t = t.take(order)
        first = np.ones(len(ts), dtype=bool)
        if len(ts) > 1:
            same = np.ones(len(ts) - 1, dtype=bool)
            for i in range(len(self.dim_names)):
                col = sorted_t.column(f"k{i}")
                same &= np.asarray(pc.equal(col.slice(1), col.slice(0, len(ts) - 1)).to_numpy(
                    zero_copy_only=False), dtype=bool)
            first[1:] = ~same
        keep = first
        if not first.all() and not self._bounds_hold:
            keep = first | _same_plain_source(first, np.asarray(sorted_t.column("ts")),
                                              np.asarray(sorted_t.column("frag")),
                                              [f.metadata.has_timestamps for f in self.fragments])
        return np.sort(np.asarray(order)[keep])

    def _survivors(self, columns, ts, dt, frag_of_cell):
        """Mask of cells that survive delete metadata and delete conditions, or None.  ``dt``
        None: no delete metadata; ``ts`` / ``frag_of_cell`` are needed with delete conditions
        only."""
        alive = None
        if dt is not None and (dt != UINT64_MAX).any():
            t_end = self.array.window[1]
            alive = dt >= UINT64_MAX if t_end >= UINT64_MAX else dt > t_end
        for cond, entry in self.deletes:
            gone = self._deleted_by(cond, entry, columns, ts, frag_of_cell)
            if gone is not None:
                alive = ~gone if alive is None else alive & ~gone
        return alive

    def _deleted_by(self, cond, entry, columns, ts, frag_of_cell):
        gone = None
        present = np.unique(frag_of_cell)
        for frag_idx in present.tolist():
            frag = self.fragments[frag_idx]
            idx = (np.arange(len(frag_of_cell)) if len(present) == 1
                   else np.flatnonzero(frag_of_cell == frag_idx))
            kept = kept_by_delete(self.schema, frag, cond, entry, columns, idx, ts[idx])
            if kept is None:
                continue
            if gone is None:
                gone = np.zeros(len(ts), dtype=bool)
            gone[idx[~kept]] = True
        return gone


def _same_plain_source(first: np.ndarray, ts: np.ndarray, frag: np.ndarray,
                       has_timestamps: list[bool]) -> np.ndarray:
    """Per cell (sorted by coordinate, newest first): does it come from the same write as the
    first cell of its coordinate, in a fragment without per-cell timestamps?"""
    group = np.cumsum(first) - 1
    heads = np.flatnonzero(first)
    plain = ~np.asarray(has_timestamps, dtype=bool)[frag]
    return (ts == ts[heads][group]) & (frag == frag[heads][group]) & plain


def kept_by_delete(schema, frag, cond, entry, columns, idx, cell_ts) -> np.ndarray | None:
    """Which cells ``idx`` of fragment ``frag`` the delete ``(cond, entry)`` keeps, or None when
    it cannot touch the fragment (written after the delete, or already applied in the
    fragment's own delete metadata).  With per-cell timestamps only cells written at or before
    the delete go: "t > t_del OR <stored>", the timestamp test first and ORs merged, as TileDB
    builds it."""
    meta = frag.metadata
    t_del = entry.timestamp
    if t_del < frag.timestamp_range[0]:
        return None
    if meta.has_delete_meta and entry.marker in meta.processed_conditions:
        return None
    tree = cond
    if meta.has_timestamps and t_del <= frag.timestamp_range[1]:
        children = cond.children if is_or(cond) else (cond,)
        tree = ExprNode(CombinationOp.OR, (AFTER_DELETE,) + tuple(children))
    leaf = LeafEvaluator(schema, frag, columns, idx, cell_ts, t_del)
    return survivors(tree, leaf, len(idx))


class LeafEvaluator:
    """Evaluates one value node on the cells ``idx`` of a fragment."""

    def __init__(self, schema, frag, columns, idx, cell_ts, t_del):
        self.schema, self.columns, self.idx = schema, columns, idx
        self.present = frag.schema.fields_by_name().keys()
        self.cell_ts, self.t_del = cell_ts, t_del

    def has_field(self, node: ValueNode) -> bool:
        return node is AFTER_DELETE or (node.field in self.present and node.field in self.columns)

    def __call__(self, node: ValueNode) -> np.ndarray:
        if node is AFTER_DELETE:
            return self.cell_ts > np.uint64(self.t_del)
        f = self.schema.fields_by_name()[node.field]
        column = self.columns[node.field]
        if len(self.idx) != len(column):  # the cells of one fragment among others
            column = column.take(self.idx)
        validity = {} if column.validity is None else {node.field: column.validity}
        return evaluate(node, {node.field: condition_input(column, f)}, validity,
                        {node.field: int(f.datatype)}, num_cells=len(self.idx))


# The "cell written after the delete" test of timestamped delete conditions.
AFTER_DELETE = ValueNode("__timestamps", ConditionOp.GT)


def survivors(node, leaf, n: int) -> np.ndarray:
    """The stored condition over ``n`` cells (True = kept), computed as TileDB's sparse
    readers compute it: AND narrows the bitmap in place, OR collects its children in a fresh
    bitmap and then narrows, and a test on a field the fragment lacks (an attribute added
    later) clears the whole bitmap it is given -- so "a != 2 OR b >= 4" keeps nothing of a
    fragment without ``b`` once ``b`` comes after ``a``."""
    bitmap = np.ones(n, dtype=bool)
    _apply(node, True, bitmap, leaf)
    return bitmap


def _apply(node, narrowing: bool, bitmap: np.ndarray, leaf) -> None:
    if isinstance(node, ValueNode):
        if not leaf.has_field(node):
            bitmap[:] = False
        elif narrowing:
            bitmap &= leaf(node)
        else:
            bitmap |= leaf(node)
        return
    if node.op == CombinationOp.AND:
        target = bitmap if narrowing else np.ones(len(bitmap), dtype=bool)
        for child in node.children:
            _apply(child, True, target, leaf)
        if not narrowing:
            bitmap |= target
        return
    if node.op == CombinationOp.OR:
        collected = np.zeros(len(bitmap), dtype=bool)
        for child in node.children:
            _apply(child, False, collected, leaf)
        bitmap &= collected  # TileDB narrows here whatever the enclosing operator
        return
    raise UnsupportedFormatError("a delete condition with a NOT node cannot be evaluated "
                                 "(TileDB refuses it too)")


def is_or(node) -> bool:
    """An OR node of a condition tree (its children join a timestamped delete's OR)."""
    return isinstance(node, ExprNode) and node.op == CombinationOp.OR


# -- delete conditions -------------------------------------------------------------------------


def read_condition(entry, key):
    """The stored condition of a delete (or update) commit."""
    if entry.is_update:
        return parse_update(entry.data, entry.where, key, entry.offset)[0]
    return parse_delete_condition(entry.data, entry.where, key, entry.offset)


def condition_fields(cond) -> list[str]:
    """Field names a condition tree tests, in order of appearance."""
    if isinstance(cond, ExprNode):
        return list(dict.fromkeys(n for child in cond.children for n in condition_fields(child)))
    return [cond.field]


def condition_input(column: Column, f):
    """A column in the shape ``delete_condition.evaluate`` takes."""
    if column.is_var:
        return pa.Array.from_buffers(pa.large_binary(), len(column), [
            None, pa.py_buffer(np.ascontiguousarray(column.offsets, dtype=np.int64)),
            pa.py_buffer(np.ascontiguousarray(column.values).view(np.uint8))])
    if column.cell_val_num != 1 and column.cell_val_num != VAR_NUM:
        raw = np.ascontiguousarray(column.values).view(np.uint8)
        return raw.reshape(len(column), -1)
    values = column.values
    if f.datatype == Datatype.CHAR:
        return np.ascontiguousarray(values).view(np.uint8).reshape(len(column), -1)
    return values.view(f.info.numpy)


# -- helpers ------------------------------------------------------------------------------------


def zipped_coords(frag, tile_idx: int) -> dict[str, Column]:
    """Coordinates of one tile of a format < 5 fragment: one ``__coords`` file, all
    dimensions."""
    schema = frag.schema
    dims = schema.dimensions
    spec = FieldSpec(ZIPPED_COORDS, ZIPPED_COORDS, dims[0].datatype, len(dims),
                     schema.coords_filters)
    values = frag.tiles.read(spec, tile_idx).values
    n = len(values) // len(dims)
    compressed = any(isinstance(f, CompressionFilter) for f in schema.coords_filters.filters)
    if frag.version > 1 or compressed:  # stored split: all of dim 0, then all of dim 1...
        per_dim = values.reshape(len(dims), n)
    else:  # stored zipped: the dimensions of a cell side by side
        per_dim = values.reshape(n, len(dims)).T
    return {d.name: Column(np.ascontiguousarray(per_dim[i])) for i, d in enumerate(dims)}


def _sorted_pieces(column: Column, dim, ranges) -> tuple[np.ndarray, np.ndarray] | None:
    """The starts and stops (exclusive) of the cells of an ascending coordinate inside each
    of its ranges, or None when the column is not sorted or holds var-sized values."""
    if column.is_var or not column.ascending:
        return None
    dtype = np.dtype(dim.info.numpy)
    typed = [bounds for bounds in (_typed_bounds(lo, hi, dtype) for lo, hi in ranges)
             if bounds is not None]
    if not typed:
        return np.zeros(1, np.int64), np.zeros(1, np.int64)
    values = column.values.view(dtype)
    return (np.searchsorted(values, np.array([lo for lo, _ in typed], dtype), "left"),
            np.searchsorted(values, np.array([hi for _, hi in typed], dtype), "right"))


def _run_mask(n: int, start: int, stop: int) -> np.ndarray:
    """Per cell of ``n``, whether it lies in ``start .. stop - 1``."""
    keep = np.zeros(n, dtype=bool)
    keep[start:stop] = True
    return keep


def _mark_pieces(keep: np.ndarray, starts: np.ndarray, stops: np.ndarray, start: int,
                 stop: int) -> tuple[int, int]:
    """Set ``keep`` over each piece ``[starts[i], stops[i])`` clipped to ``[start, stop)``;
    return the span the marked cells lie in (empty: ``start >= stop``)."""
    starts, stops = np.maximum(starts, start), np.minimum(stops, stop)
    some = starts < stops
    starts, stops = starts[some], stops[some]
    if not len(starts):
        return 0, 0
    if len(starts) <= 32:
        for a, b in zip(starts.tolist(), stops.tolist()):
            keep[a:b] = True
    else:  # many pieces (a long IN list): +1 where one opens, -1 where it closes
        edges = np.zeros(len(keep) + 1, np.int32)
        np.add.at(edges, starts, 1)
        np.add.at(edges, stops, -1)
        keep |= np.cumsum(edges[:-1]) > 0
    return int(starts.min()), int(stops.max())


def _keep_in_ranges(column: Column, dim, ranges, keep: np.ndarray, start: int,
                    stop: int) -> None:
    """AND into ``keep[start:stop]`` whether each of those cells' ``dim`` coordinate lies in
    one of ``ranges`` (inclusive ``(lo, hi)`` pairs; for a var-sized dimension bytes, None for
    an open end)."""
    keep = keep[start:stop]  # a view: the tests write through it
    if column.is_var:
        values = _binary_array(column).slice(start, stop - start)
        hit = np.zeros(len(values), dtype=bool)
        for lo, hi in ranges:
            inside = pa.scalar(True)
            if lo is not None:
                inside = pc.greater_equal(values, pa.scalar(bytes(lo), pa.large_binary()))
            if hi is not None:
                below = pc.less_equal(values, pa.scalar(bytes(hi), pa.large_binary()))
                inside = pc.and_(inside, below) if lo is not None else below
            if isinstance(inside, pa.Scalar):
                return
            hit |= inside.to_numpy(zero_copy_only=False)
        keep &= hit
        return
    dtype = np.dtype(dim.info.numpy)
    values = np.require(column.values.view(dtype)[start:stop], requirements=["C", "W"])
    ranges = [bounds for bounds in (_typed_bounds(lo, hi, dtype) for lo, hi in ranges)
              if bounds is not None]
    if not ranges:
        keep[:] = False
    elif len(ranges) == 1:
        (lo, hi), = ranges
        predicate.keep_in_interval(values, NO_VALIDITY, lo, hi, False, False, False, False,
                                   False, False, keep)
    else:
        lows = np.array([lo for lo, _ in ranges], dtype)
        highs = np.array([hi for _, hi in ranges], dtype)
        closed = np.zeros(len(ranges), dtype=bool)
        predicate.keep_in_intervals(values, NO_VALIDITY, lows, highs, closed, closed, closed,
                                    closed, False, False, keep)


def _typed_bounds(lo, hi, dtype: np.dtype) -> tuple | None:
    """The inclusive range ``[lo, hi]`` in the coordinates' own type, so the kernel compares
    like with like (an integer against a float64 would round past 2**53); None when no
    value of the type lies in it.  Bounds come from ``planner.ranges``: in a float
    dimension's type, or integers (a float literal stepped outward) and infinities."""
    if dtype.kind == "f":
        return dtype.type(lo), dtype.type(hi)
    if lo == math.inf or hi == -math.inf:
        return None
    info = np.iinfo(dtype)
    lo = int(info.min) if lo == -math.inf else max(int(info.min), math.ceil(lo))
    hi = int(info.max) if hi == math.inf else min(int(info.max), math.floor(hi))
    return (dtype.type(lo), dtype.type(hi)) if lo <= hi else None


def _binary_array(column: Column) -> pa.Array:
    return pa.Array.from_buffers(pa.large_binary(), len(column), [
        None, pa.py_buffer(column.offsets.astype(np.int64)), pa.py_buffer(column.values)])


def _sort_key(column: Column, dim) -> pa.Array:
    """Equality key of a coordinate: var bytes, or the fixed value's bits (so 0.0 and -0.0 stay
    distinct coordinates, as in TileDB)."""
    if column.is_var:
        return _binary_array(column)
    bits = np.ascontiguousarray(column.values).view(f"<u{dim.info.size}")
    return pa.Array.from_buffers(pa.from_numpy_dtype(bits.dtype), len(bits),
                                 [None, pa.py_buffer(bits)])


