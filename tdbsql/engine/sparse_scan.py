"""Sparse TileScan: every fragment's tiles that meet the ranges (R-tree pruning), cells filtered
to the ranges and to the window (per-cell timestamps of consolidated fragments), then -- unless
the array allows duplicates -- one cell per coordinate, the newest write winning (per-cell
timestamp, then fragment order); then delete conditions and delete metadata, applied as TileDB
applies them (after deduplication).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..planner.pruning import Ranges, fragment_overlaps, sparse_tiles
from .column import Column, concat
from .fill import all_names, empty_column, field, fill_column
from .scan import ScanResult

UINT64_MAX = 2**64 - 1


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
        parts, cell_ts, frag_idx_cells = [], [], []
        for frag_idx, frag in enumerate(self.array.fragments):
            for cols, ts in self._fragment_cells(frag, need):
                parts.append(cols)
                cell_ts.append(ts)
                frag_idx_cells.append(np.full(len(ts), frag_idx, dtype=np.int64))
        if not parts:
            return ScanResult({f: empty_column(self.schema, f) for f in self.fields}, 0, self.stats)
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
        return [n for n in dict.fromkeys(names) if n in all_names(self.schema)]

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
                    cols[name] = fill_column(self.schema.attribute(name), n)
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
    return {name: (columns[name], field(schema, name))
            for name in cond.field_names() if name in columns}


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


