"""Fragment consolidation: many fragments of a window -> one fragment, as TileDB 2.30 does it.

In: an opened ``Array`` (window [0, now]), the consolidation window, ``dry_run`` and
``purge``.  Out: a ``ConsolidationReport``; unless a dry run, a new fragment
``__fragments/__<first t1>_<last t2>_<uuid>_22``, its ``.wrt`` and a ``.vac`` listing the
merged fragments.  The name carries format 22 whatever the array's format, because
``FragmentWriter`` writes format-22 files and readers parse a fragment by its name's version.

Which fragments (``FragmentConsolidator::consolidate`` with TileDB's defaults -- no step
limits, size ratio 0, amplification 1.0): every visible fragment written wholly inside the
window, all in one step, oldest first.  Dense arrays merge only when the union of their
non-empty domains overlaps no fragment written before the window and, for every prefix of the
selection, the union holds no more cells than the selected fragments' tile-expanded domains
(otherwise fill values would cover older cells); else nothing happens, as in TileDB.

Sparse (TileDB's consolidation with timestamps): every cell of every merged fragment is kept
-- overwritten versions too -- with its own timestamp (the fragment's first timestamp when the
fragment had none) in ``t.tdb``, so time travel inside the window still works.  Cells of one
coordinate are stored newest first.  Delete commits: by default (TileDB's
``sm.consolidation.purge_deleted_cells=false``) a cell a delete removes stays with that
delete's time in ``dt.tdb`` and its index into the fragment's processed conditions in
``dci.tdb`` (the fragment lists every delete of the array as processed); this is only done when
a delete is at or after the first merged fragment or a merged fragment already has delete
metadata.  With ``purge`` the deleted cells are dropped instead -- and, where duplicates are not
allowed, every older version of their coordinate with them.

Dense: one dense fragment over the union of the non-empty domains, holding what a read of the
merged fragments returns there (the newest value of each cell, fill values where none wrote).

Commit order, so that readers opening at any moment see the right cells: fragment files, then
``.wrt`` (from now the old and new fragments are both visible; for arrays without duplicates
readers keep one version per coordinate and timestamp, so the result is unchanged), then the
``.vac`` (atomic) hiding the old ones.  For sparse arrays that allow duplicates a reader that
lists the array between the two files sees merged cells twice, as with TileDB.
"""

from __future__ import annotations

import os
from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..datatypes import Layout, type_info
from ..engine.column import Column
from ..engine.dense_scan import DenseScan, tile_spans
from ..engine.fill import fill_column
from ..engine.sparse_scan import kept_by_delete, read_condition, zipped_coords
from ..format.commits import encode_vacuum_file
from ..format.fragment_metadata import (
    DELETE_CONDITION_INDEX, DELETE_TIMESTAMPS, TIMESTAMPS, WRITE_VERSION,
)
from ..format.names import (
    COMMITS_DIR, FRAGMENTS_DIR, VACUUM_EXT, array_relative, commit_marker, new_name,
)
from ..planner.zonemap import same_field
from . import tiling, vfs
from .array import Array
from .dense_writer import append_box, start_box
from .directory import CONSOLIDATION_WITH_TIMESTAMPS_MIN_VERSION, UINT64_MAX
from .maintenance import ConsolidationReport, remove
from .cell_merge import Cells, merged
from .fragment_writer import FragmentWriter
from .write_buffers import FieldBuffer, column_buffer
from .writer import refuse_duplicates

_NO_DELETE = np.uint64(UINT64_MAX)
BAND_CELLS = 1 << 20  # dense: the cells of the space tiles read and written at a time


def consolidate_fragments(array, window, dry_run: bool, purge: bool) -> ConsolidationReport:
    schema = array.schema
    visible = array.fragments
    chosen = [f for f in visible
              if window[0] <= f.timestamp_range[0] and f.timestamp_range[1] <= window[1]]
    inputs = tuple(array_relative(FRAGMENTS_DIR, f.name, f.entry.version) for f in chosen)
    report = ConsolidationReport(array.path, "fragments", dry_run, inputs)
    if len(chosen) < 2:
        return report.skipped("fewer than two fragments in the window")
    if schema.dense:
        anterior = [f for f in visible if f.timestamp_range[0] < window[0]]
        refusal = dense_refusal(schema, chosen, anterior)
        if refusal:
            return report.skipped(refusal)
    # Named with the version FragmentWriter writes: the name tells readers how to parse it.
    name = new_name(chosen[0].timestamp_range[0], chosen[-1].timestamp_range[1], WRITE_VERSION)
    report = report.creating(f"{FRAGMENTS_DIR}/{name}", commit_marker(name, WRITE_VERSION),
                             f"{COMMITS_DIR}/{name}{VACUUM_EXT}")
    if dry_run:
        return report
    try:
        writer = _write_dense(array, chosen, name) if schema.dense else \
            _write_sparse(array, chosen, name, purge)
    except BaseException:
        # Never committed, so no reader saw it; leave no orphan folder behind (as TileDB).
        remove(os.path.join(array.path, report.created[0]))
        raise
    if writer is None:
        return report.skipped("every cell of the window was deleted and purged; an empty "
                              "fragment cannot be written")
    writer.commit()
    vfs.atomic_write(array.path, report.created[2], encode_vacuum_file(inputs))
    return report


# -- sparse -------------------------------------------------------------------------------------


def _write_sparse(array, chosen, name: str, purge: bool) -> FragmentWriter | None:
    """The chosen fragments' cells as one fragment (``merge_sparse``), with every delete of
    the array recorded or purged; None when every cell was purged."""
    deletes = list(array.directory.deletes)
    first = chosen[0].timestamp_range[0]
    delete_meta = not purge and (any(d.timestamp >= first for d in deletes) or
                                 any(f.metadata.has_delete_meta for f in chosen))
    return merge_sparse(array, chosen, name, (first, chosen[-1].timestamp_range[1]),
                        deletes=deletes, purge=purge, delete_meta=delete_meta,
                        cell_timestamps=array.schema.version >=
                        CONSOLIDATION_WITH_TIMESTAMPS_MIN_VERSION)


def merge_sparse(array, fragments, name: str, timestamp_range: tuple[int, int], *,
                 deletes=(), purge: bool = False, delete_meta: bool = False,
                 cell_timestamps: bool = True, unique: bool = False) -> FragmentWriter | None:
    """The cells of sparse ``fragments`` (of ``array``, oldest first) as one fragment
    ``name``, not committed: merged a few tiles of each at a time (``cell_merge``) and written
    tile after tile.  ``deletes``: delete commits recorded in the cells (``dt.tdb`` with
    ``delete_meta``) or, with ``purge``, applied; ``cell_timestamps`` keeps each cell's write
    time (``t.tdb``); ``unique`` refuses a coordinate held twice (DataError).  None when no
    cell is left."""
    schema = array.schema
    markers = [d.marker for d in deletes]
    conditions = [(read_condition(d, array.key), d) for d in deletes]
    writer = FragmentWriter(array.path, schema, key=array.key, name=name,
                            timestamp_range=timestamp_range)
    writer.start(dense=False, tile_size=schema.capacity, has_timestamps=cell_timestamps,
                 has_delete_meta=delete_meta)
    runs = [_fragment_batches(array, frag, frag_idx, markers, conditions)
            for frag_idx, frag in enumerate(fragments)]
    tiles = _TileWriter(writer, schema, unique)
    with writer.discarded_on_error():
        for cells in merged(schema, runs):
            tiles.add(_purged(schema, cells, bool(conditions)) if purge else cells)
        tiles.flush()
        if not writer.cells:  # every cell purged: TileDB fails ("no progress can be made")
            writer.discard()
            return None
        writer.finish(tiles.non_empty_domain,
                      processed_conditions=tuple(markers) if delete_meta else ())
    return writer


def _fragment_batches(array, frag, frag_idx: int, markers: list[str],
                      conditions) -> Iterator[Cells]:
    """A fragment's cells tile by tile, fields as the schema in force has them, with the
    deletes that remove them recorded (``_apply_deletes``)."""
    schema, meta = array.schema, frag.metadata
    names = [a.name for a in schema.attributes] + [d.name for d in schema.dimensions]
    for tile_idx in range(meta.tile_count):
        tile = _tile(array, frag, tile_idx, names)
        n = len(tile[schema.dimensions[0].name])
        dci = _u64(tile, DELETE_CONDITION_INDEX, n, UINT64_MAX)
        if meta.has_delete_meta:
            dci = _renumber(dci, meta.processed_conditions or [], markers)
        cells = Cells({name: tile[name] for name in names},
                      _u64(tile, TIMESTAMPS, n, frag.timestamp_range[0]),
                      _u64(tile, DELETE_TIMESTAMPS, n, UINT64_MAX), dci,
                      np.full(n, frag_idx, dtype=np.int64))
        _apply_deletes(schema, frag, cells, conditions)
        yield cells


def _tile(array, frag, tile_idx: int, names: list[str]) -> dict[str, Column]:
    schema, fields = array.schema, frag.fields
    cols: dict[str, Column] = {}
    if any(d.name not in fields for d in schema.dimensions):  # format < 5: zipped coordinates
        cols.update(zipped_coords(frag, tile_idx))
    wanted = [name for name in names + [TIMESTAMPS, DELETE_TIMESTAMPS, DELETE_CONDITION_INDEX]
              if name not in cols and name in fields and same_field(schema, fields[name])]
    # read once: kept out of the tile cache, which would only lose the tiles queries reuse
    cols.update(zip(wanted, frag.tiles.read_fields([fields[n] for n in wanted], tile_idx,
                                                   keep=False)))
    n = len(cols[schema.dimensions[0].name])
    for attr in schema.attributes:
        if attr.name not in cols:  # added after this fragment was written
            cols[attr.name] = fill_column(attr, n)
    return cols


def _u64(tile: dict, name: str, n: int, default: int) -> np.ndarray:
    if name not in tile:
        return np.full(n, default, dtype=np.uint64)
    return np.array(tile[name].values.view(np.uint64))  # a copy: deletes are recorded in it


def _renumber(dci: np.ndarray, old: list[str], new: list[str]) -> np.ndarray:
    """Condition indices of a fragment's processed list -> indices into ``new`` (TileDB maps
    them by marker; a marker no longer known becomes "none")."""
    lookup = np.array([new.index(m) if m in new else UINT64_MAX for m in old] + [UINT64_MAX],
                      dtype=np.uint64)
    pos = np.where(dci == _NO_DELETE, len(old), np.minimum(dci, len(old))).astype(np.int64)
    return lookup[pos]


def _apply_deletes(schema, frag, cells: Cells, conditions) -> None:
    """Record in ``cells.dt``/``dci`` the first delete (by time) that removes each cell, unless
    the fragment's own delete metadata has an earlier one (TileDB's no-purge consolidation)."""
    n = len(cells.ts)
    if not n or not conditions:
        return
    first_dt = np.full(n, _NO_DELETE, dtype=np.uint64)
    first_idx = np.full(n, _NO_DELETE, dtype=np.uint64)
    idx = np.arange(n, dtype=np.int64)
    for cond_idx, (cond, entry) in enumerate(conditions):
        if entry.is_update:
            continue
        kept = kept_by_delete(schema, frag, cond, entry, cells.columns, idx, cells.ts)
        if kept is None:
            continue
        gone = ~kept & (first_dt == _NO_DELETE)
        first_dt[gone] = np.uint64(entry.timestamp)
        first_idx[gone] = np.uint64(cond_idx)
    newer = first_dt < cells.dt
    cells.dt[newer] = first_dt[newer]
    cells.dci[newer] = first_idx[newer]


def _purged(schema, cells: Cells, have_conditions: bool) -> Cells:
    """TileDB's purge: deleted cells go; without duplicates, with a condition in play, every
    older version of a deleted coordinate goes too (it must not come back)."""
    deleted = cells.dt != _NO_DELETE
    if schema.allows_duplicates or not have_conditions:
        return cells.take(np.flatnonzero(~deleted))
    group = _coordinate_groups(schema, cells)
    order = np.lexsort((~cells.ts, group))  # per coordinate, newest first
    sorted_group, sorted_deleted = group[order], deleted[order]
    starts = np.ones(len(order), dtype=bool)
    starts[1:] = sorted_group[1:] != sorted_group[:-1]
    run_id = np.cumsum(starts) - 1
    # a cell survives when no version at or before it (newer or itself) was deleted
    cumulative = np.cumsum(sorted_deleted.astype(np.int64))
    first_pos = np.flatnonzero(starts)
    base = np.where(first_pos > 0, cumulative[first_pos - 1], 0)
    seen = cumulative - base[run_id]
    keep = order[seen == 0]
    return cells.take(np.sort(keep))


def _coordinate_groups(schema, cells: Cells) -> np.ndarray:
    """A group number per cell, equal for equal coordinates (compared by their bytes, so 0.0
    and -0.0 stay apart, as in the reader's merge)."""
    keys = []
    for dim in schema.dimensions:
        col = cells.columns[dim.name]
        if col.offsets is not None:
            key = pa.Array.from_buffers(pa.large_binary(), len(col), [
                None, pa.py_buffer(np.ascontiguousarray(col.offsets, dtype=np.int64)),
                pa.py_buffer(np.ascontiguousarray(col.values).view(np.uint8))])
        else:
            key = pa.array(np.ascontiguousarray(col.values).view(f"<u{type_info(dim.datatype).size}"))
        keys.append(np.asarray(pc.dictionary_encode(key).indices, dtype=np.int64))
    _, group = np.unique(np.stack(keys, axis=1), axis=0, return_inverse=True)
    return group.reshape(-1).astype(np.int64)


# -- writing ------------------------------------------------------------------------------------


class _TileWriter:
    """Merged cells onto a started ``FragmentWriter``, whole tiles at a time (the cells of a
    partial tile wait for more, or for ``flush``), with each tile's MBR and the non-empty
    domain; ``unique``: a coordinate held twice is refused (the versions of a coordinate
    come in one batch of ``cell_merge.merged``, side by side)."""

    def __init__(self, writer: FragmentWriter, schema, unique: bool = False):
        self.writer, self.schema, self.unique = writer, schema, unique
        self.waiting: list[Cells] = []
        self.non_empty_domain = None

    def add(self, cells: Cells) -> None:
        if self.unique:
            _refuse_duplicates(self.schema, cells)
        self.waiting.append(cells)
        held = sum(len(part) for part in self.waiting)
        if held >= self.schema.capacity:
            self._write(held - held % self.schema.capacity)

    def flush(self) -> None:
        """The cells left, as the last (partial) tile."""
        held = sum(len(part) for part in self.waiting)
        if held:
            self._write(held)

    def _write(self, count: int) -> None:
        cells = Cells.concat(self.waiting)
        self.waiting = [cells.take(np.arange(count, len(cells)))] if count < len(cells) else []
        if count < len(cells):
            cells = cells.take(np.arange(count))
        schema, writer = self.schema, self.writer
        buffers = {n: _buffer(schema, n, c) for n, c in cells.columns.items()}
        for name, values in ((TIMESTAMPS, cells.ts), (DELETE_TIMESTAMPS, cells.dt),
                             (DELETE_CONDITION_INDEX, cells.dci)):
            buffers[name] = FieldBuffer(np.ascontiguousarray(values))
        leaves, ned = tiling.mbrs(tiling.Coords(schema, [buffers[d.name]
                                                         for d in schema.dimensions]),
                                  schema.capacity)
        writer.append(buffers, count, mbrs=leaves)
        self.non_empty_domain = ned if self.non_empty_domain is None else tuple(
            (min(a[0], b[0]), max(a[1], b[1])) for a, b in zip(self.non_empty_domain, ned))


def _refuse_duplicates(schema, cells: Cells) -> None:
    buffers = [_buffer(schema, d.name, cells.columns[d.name]) for d in schema.dimensions]
    refuse_duplicates(tiling.Coords(schema, buffers))  # merged from several writes: no row


def _buffer(schema, name: str, column: Column):
    return column_buffer(schema.fields_by_name()[name], column)


# -- dense --------------------------------------------------------------------------------------


def dense_refusal(schema, chosen, anterior) -> str:
    """Why TileDB would not merge these dense fragments (empty: it would)."""
    dims = schema.dimensions
    union = None
    anterior_box = _union([f.metadata.non_empty_domain for f in anterior])
    expanded_sum = 0
    for count, frag in enumerate(chosen, start=1):
        ned = frag.metadata.non_empty_domain
        union = _union([union, ned]) if union is not None else ned
        expanded_sum += _cells(_expand(dims, ned))
        if count == 1:
            continue
        if anterior_box is not None and _overlap(union, anterior_box):
            return ("the merged region overlaps fragments written before the window (their "
                    "cells would be covered by fill values)")
        if _cells(union) > expanded_sum:
            return ("the merged region has cells no selected fragment wrote (TileDB's "
                    "amplification limit 1.0): they would become fill values")
    return ""


def _union(boxes):
    boxes = [b for b in boxes if b is not None]
    if not boxes:
        return None
    return tuple((min(b[i][0] for b in boxes), max(b[i][1] for b in boxes))
                 for i in range(len(boxes[0])))


def _expand(dims, box):
    out = []
    for dim, (lo, hi) in zip(dims, box):
        start, extent = dim.domain[0], dim.tile_extent
        lo2 = start + (lo - start) // extent * extent
        hi2 = start + ((hi - start) // extent + 1) * extent - 1
        out.append((lo2, min(hi2, dim.domain[1])))
    return tuple(out)


def _cells(box) -> int:
    return int(np.prod([hi - lo + 1 for lo, hi in box], dtype=object))


def _overlap(a, b) -> bool:
    return all(lo1 <= hi2 and lo2 <= hi1 for (lo1, hi1), (lo2, hi2) in zip(a, b))


def _write_dense(array, chosen, name: str) -> FragmentWriter:
    """One dense fragment over the union of the chosen fragments' non-empty domains, holding
    what a read of them returns there, read and written a band of whole space tiles at a
    time (``dense_bands``)."""
    schema = array.schema
    t1, t2 = chosen[0].timestamp_range[0], chosen[-1].timestamp_range[1]
    # A dense read of [t1, t2] sees exactly the chosen fragments (whole-range overlap only);
    # it reads them with the schema the new fragment is written with, as TileDB does (an
    # attribute added by a later evolution is its fill value in the older fragments).
    window_array = Array(array.path, timestamp=(t1, t2), key=array.key,
                         schema_time=array.schema_time)
    scan = DenseScan(window_array, [a.name for a in schema.attributes], {})
    scan.cache_tiles = False  # read once: keep the tiles queries reuse in the cache
    box_lo, box_hi = scan.box()
    box = tuple(zip(box_lo, box_hi))  # the union of the merged non-empty domains
    writer = start_box(array.path, schema, (t1, t2), array.key, name=name)
    with writer.discarded_on_error():
        for band in dense_bands(schema, box):
            result = scan.read_box(*zip(*band))
            # The scan answers in row-major order; the writer takes cells in cell order.
            shape = [hi - lo + 1 for lo, hi in band]
            cell_order = np.arange(int(np.prod(shape))).reshape(shape)
            cell_order = cell_order.ravel(
                order="F" if schema.cell_order == Layout.COL_MAJOR else "C")
            append_box(writer, schema, {
                a.name: _buffer(schema, a.name, result.columns[a.name].take(cell_order))
                for a in schema.attributes}, band, fill=True)
        writer.finish(box)
    return writer


def dense_bands(schema, box) -> list[tuple]:
    """``box`` cut into boxes of whole space tiles along the dimension the tile order varies
    slowest (the first; the last in column-major tile order), each meeting at most
    ``BAND_CELLS`` cells of tiles (one row of tiles at least): their tiles, one band after
    another, are the box's tiles in tile order."""
    dims = schema.dimensions
    axis = len(dims) - 1 if schema.tile_order == Layout.COL_MAJOR else 0
    expanded = _expand(dims, box)
    line = _cells(expanded) // (expanded[axis][1] - expanded[axis][0] + 1)
    return [box[:axis] + (span,) + box[axis + 1:]
            for span in tile_spans(dims[axis], *box[axis], line, BAND_CELLS)]
