"""TileScan: read the cells of an array at its window, restricted to dimension ranges.

Sparse arrays: every fragment's tiles that meet the ranges (R-tree pruning), cells filtered to
the ranges and to the window (per-cell timestamps of consolidated fragments), then -- unless the
array allows duplicates -- one cell per coordinate, the newest write winning (per-cell timestamp,
then fragment order); then delete conditions and delete metadata, applied as TileDB applies
them (after deduplication).

Dense arrays: the result box is the non-empty domain (intersected with the ranges' hull),
filled with fill values and overwritten fragment by fragment, oldest first, by each space tile
that meets the box (padding cells outside a fragment's non-empty domain are never copied).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..kernels import dense as dense_kernels
from ..planner.pruning import Ranges, fragment_overlaps, range_hull, sparse_tiles
from .column import Column, concat, repeat_value

UINT64_MAX = 2**64 - 1


@dataclass(frozen=True)
class ScanResult:
    columns: dict[str, Column]
    length: int
    stats: dict


def scan(array, fields: list[str], ranges: Ranges) -> ScanResult:
    if array.schema.sparse:
        return SparseScan(array, fields, ranges).run()
    return DenseScan(array, fields, ranges).run()


# --- sparse ------------------------------------------------------------------------------------


class SparseScan:
    def __init__(self, array, fields: list[str], ranges: Ranges):
        self.array = array
        self.schema = array.schema
        self.fields = fields
        self.ranges = ranges
        self.dim_names = [d.name for d in self.schema.dimensions]
        self.stats = {"fragments": len(array.fragments), "fragments_read": 0,
                      "tiles": 0, "tiles_read": 0}
        self.deletes = [_parsed_delete(d) for d in array.directory.deletes]

    def run(self) -> ScanResult:
        need = list(dict.fromkeys(self.fields + self.dim_names + self._delete_fields()))
        parts, frag_ids, cell_ts, frag_idx_cells = [], [], [], []
        for frag_idx, frag in enumerate(self.array.fragments):
            for cols, ts in self._fragment_cells(frag, need):
                parts.append(cols)
                cell_ts.append(ts)
                frag_idx_cells.append(np.full(len(ts), frag_idx, dtype=np.int64))
        if not parts:
            return ScanResult({f: _empty_column(self.schema, f) for f in self.fields}, 0, self.stats)
        columns = {name: concat([p[name] for p in parts]) for name in need + ["__dt"]}
        ts = np.concatenate(cell_ts)
        frag_of_cell = np.concatenate(frag_idx_cells)
        keep = None
        if not self.schema.allows_duplicates and (len(self.array.fragments) > 1 or
                                                  any(f.metadata.has_timestamps for f in self.array.fragments)):
            keep = self._newest_per_coordinate(columns, ts, frag_of_cell)
            columns = {n: c.take(keep) for n, c in columns.items()}
            ts, frag_of_cell = ts[keep], frag_of_cell[keep]
        alive = self._after_deletes(columns, ts, frag_of_cell)
        if alive is not None:
            idx = np.flatnonzero(alive)
            columns = {n: c.take(idx) for n, c in columns.items()}
        out = {f: columns[f] for f in self.fields}
        length = len(next(iter(columns.values()))) if columns else 0
        return ScanResult(out, length, self.stats)

    def _delete_fields(self) -> list[str]:
        names: list[str] = []
        for cond, _ in self.deletes:
            names.extend(cond.field_names())
        return [n for n in dict.fromkeys(names) if n in _all_names(self.schema)]

    def _fragment_cells(self, frag, need):
        meta = frag.metadata
        if not fragment_overlaps(meta.non_empty_domain, self.dim_names, self.ranges):
            return
        self.stats["fragments_read"] += 1
        tile_count = meta.tile_count
        self.stats["tiles"] += tile_count
        tiles = sparse_tiles(_leaf_mbrs(meta), self.dim_names, self.ranges, tile_count)
        extra = [n for n in ("__timestamps", "__delete_timestamps") if n in frag.fields]
        for tile_idx in tiles:
            self.stats["tiles_read"] += 1
            cols = {}
            for name in need + extra:
                if name in frag.fields:
                    cols[name] = frag.tiles.read(frag.fields[name], int(tile_idx))
            n = len(cols[self.dim_names[0]])
            for name in need:
                if name not in cols:  # attribute added after this fragment was written
                    cols[name] = _fill_column(self.schema.attribute(name), n)
            mask = self._cell_mask(cols, frag, n)
            if mask is not None:
                idx = np.flatnonzero(mask)
                cols = {k: v.take(idx) for k, v in cols.items()}
                n = len(idx)
            stamps = cols.pop("__timestamps", None)
            ts = (stamps.values.view(np.uint64) if stamps is not None
                  else np.full(n, frag.timestamp_range[1], dtype=np.uint64))
            delete_ts = cols.pop("__delete_timestamps", None)
            cols["__dt"] = (Column(delete_ts.values.view(np.uint64)) if delete_ts is not None
                            else Column(np.full(n, UINT64_MAX, dtype=np.uint64)))
            yield {k: cols[k] for k in need + ["__dt"]}, ts

    def _cell_mask(self, cols, frag, n):
        mask = None
        for dim in self.schema.dimensions:
            if dim.name not in self.ranges:
                continue
            hit = _in_ranges(cols[dim.name], dim, self.ranges[dim.name])
            mask = hit if mask is None else mask & hit
        if "__timestamps" in cols:
            t = cols["__timestamps"].values.view(np.uint64)
            lo, hi = self.array.window
            hit = (t >= lo) & (t <= hi)
            mask = hit if mask is None else mask & hit
        return mask

    def _newest_per_coordinate(self, columns, ts, frag_of_cell) -> np.ndarray:
        """Index of the newest cell of every coordinate (timestamp, then fragment order)."""
        table = {f"k{i}": _sort_key(columns[d], self.schema.dimension(d))
                 for i, d in enumerate(self.dim_names)}
        table["ts"] = pa.array(ts)
        table["frag"] = pa.array(frag_of_cell)
        table["pos"] = pa.array(np.arange(len(ts), dtype=np.int64))
        t = pa.table(table)
        keys = [(f"k{i}", "ascending") for i in range(len(self.dim_names))]
        order = pc.sort_indices(t, sort_keys=keys + [("ts", "descending"), ("frag", "descending"),
                                                     ("pos", "descending")])
        sorted_t = t.take(order)
        first = np.ones(len(ts), dtype=bool)
        if len(ts) > 1:
            same = np.ones(len(ts) - 1, dtype=bool)
            for i in range(len(self.dim_names)):
                col = sorted_t.column(f"k{i}")
                same &= np.asarray(pc.equal(col.slice(1), col.slice(0, len(ts) - 1)).to_numpy(
                    zero_copy_only=False), dtype=bool)
            first[1:] = ~same
        winners = np.asarray(order)[first]
        return np.sort(winners)

    def _after_deletes(self, columns, ts, frag_of_cell):
        """Mask of cells that survive delete metadata and delete conditions, or None."""
        n = len(ts)
        alive = None
        dt = columns.pop("__dt").values.view(np.uint64)
        if (dt != UINT64_MAX).any():
            t_end = self.array.window[1]
            deleted = dt < UINT64_MAX if t_end >= UINT64_MAX else dt <= t_end
            alive = ~deleted
        if not self.deletes:
            return alive
        frags = self.array.fragments
        from ..format.delete_condition import evaluate

        for cond, (name, t_del) in self.deletes:
            applies = np.zeros(n, dtype=bool)
            for frag_idx, frag in enumerate(frags):
                meta = frag.metadata
                if t_del < frag.timestamp_range[0] or name in meta.processed_conditions:
                    continue
                in_frag = frag_of_cell == frag_idx
                if meta.has_timestamps and t_del <= frag.timestamp_range[1]:
                    in_frag &= ts <= t_del
                applies |= in_frag
            if not applies.any():
                continue
            hit = evaluate(cond, _condition_inputs(columns, self.schema, cond))
            deleted = applies & hit
            alive = ~deleted if alive is None else alive & ~deleted
        return alive


def _leaf_mbrs(meta) -> list[tuple]:
    """Per dimension (lows, highs) of every sparse tile, from the R-tree leaf level."""
    out = []
    for ranges in meta.rtree.leaves:
        if isinstance(ranges, np.ndarray):
            out.append((ranges[:, 0], ranges[:, 1]))
        else:
            out.append(([lo for lo, _ in ranges], [hi for _, hi in ranges]))
    return out


def _parsed_delete(entry):
    from ..format.delete_condition import read_delete_condition

    return read_delete_condition(entry.data, entry.where), (entry.name, entry.timestamp)


def _condition_inputs(columns, schema, cond):
    from .arrow_convert import to_arrow

    out = {}
    for name in cond.field_names():
        if name not in columns:
            continue
        field = _field(schema, name)
        out[name] = (columns[name], field)
    return out


def _field(schema, name):
    for f in list(schema.attributes) + list(schema.dimensions):
        if f.name == name:
            return f
    raise KeyError(name)


def _all_names(schema) -> set[str]:
    return {f.name for f in list(schema.attributes) + list(schema.dimensions)}


def _in_ranges(column: Column, dim, ranges) -> np.ndarray:
    if column.is_var:
        values = _var_strings(column)
        hit = np.zeros(len(values), dtype=bool)
        for lo, hi in ranges:
            lo_b, hi_b = _as_bytes(lo), _as_bytes(hi)
            hit |= np.array([lo_b <= v <= hi_b for v in values], dtype=bool)
        return hit
    values = column.values.view(dim.info.numpy)
    hit = np.zeros(len(values), dtype=bool)
    for lo, hi in ranges:
        hit |= (values >= lo) & (values <= hi)
    return hit


def _as_bytes(v) -> bytes:
    return v.encode("utf-8") if isinstance(v, str) else bytes(v)


def _var_strings(column: Column) -> list[bytes]:
    raw = column.values.tobytes()
    off = column.offsets
    return [raw[off[i]:off[i + 1]] for i in range(len(off) - 1)]


def _sort_key(column: Column, dim) -> pa.Array:
    if column.is_var:
        return pa.Array.from_buffers(pa.binary(), len(column), [
            None, pa.py_buffer(column.offsets.astype(np.int32)), pa.py_buffer(column.values)])
    return pa.array(column.values.view(dim.info.numpy))


def _fill_column(attr, n: int) -> Column:
    valid = None
    if attr.nullable:
        valid = bool(attr.fill_value_validity)
    return repeat_value(attr.fill_value, attr.info.numpy, n, attr.is_var, attr.cell_val_num, valid)


def _empty_column(schema, name: str) -> Column:
    f = _field(schema, name)
    if f.is_var:
        return Column(np.zeros(0, np.uint8), np.zeros(1, np.int64),
                      np.zeros(0, np.uint8) if getattr(f, "nullable", False) else None, f.cell_val_num)
    return Column(np.zeros(0, f.info.numpy), None,
                  np.zeros(0, np.uint8) if getattr(f, "nullable", False) else None, f.cell_val_num)


# --- dense -------------------------------------------------------------------------------------


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
            return ScanResult({f: _empty_column(self.schema, f) for f in self.fields}, 0, self.stats)
        box_lo, box_hi = box
        n = int(np.prod(box_hi - box_lo + 1))
        attrs = [f for f in self.fields if f not in self.dim_names]
        pools = {a: [_fill_column(self.schema.attribute(a), 1)] for a in attrs}
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
                    col = _fill_column(self.schema.attribute(a), len(positions))
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
