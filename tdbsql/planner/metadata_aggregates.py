"""Aggregates answered from tile metadata: count(*), count, sum, min and max without decoding
the tiles whose metadata already holds the answer.

In: an opened ``Array``, dimension ``Ranges``, the pushed-down predicate (sqlglot, unqualified
column names, or None) and the aggregates as ``(func, column)`` pairs, func in count_star /
count / sum / min / max (column None for count_star).  Out: one Python value per aggregate, as
SQL over the scanned rows gives it (count -> int, sum of integers -> exact int, sum over no
value -> None, min/max typed like the column's Arrow values), or None when no tile can be
answered from metadata (the caller then runs the ordinary plan).

A tile is answered from its metadata only when that is sound:

* its cells are all rows of the result: no other fragment of the window can hide them or be
  hidden by them (the tile's bounds meet no other fragment's non-empty domain; dense: no newer
  fragment's), unless the sparse array keeps duplicates; the fragment has no per-cell
  timestamps cut by the window or merged within it, no delete timestamps and no delete
  condition of the window can apply to it;
* the tile lies wholly inside the ranges (sparse: its MBR; dense: the whole space tile inside
  the fragment's non-empty domain, so no padding cell counts);
* every conjunct of the predicate is ALWAYS true for it (``planner.zonemap``);
* the metadata it needs is trustworthy: null counts for count(col); an unsaturated sum (TileDB
  saturates at the type's limit) for sum; min/max that ``zonemap`` trusts (no NaN in a float
  tile, no NaT in a datetime tile, no NUL in a string tile).

Every other tile is decoded by the ordinary scan (told to leave the answered tiles out), the
predicate evaluated on its rows, and the partial results combined.  This module calls into
``tdbsql.engine`` for that residual scan (imported lazily).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from sqlglot import exp

from ..storage.directory import UINT64_MAX
from .pruning import Ranges, box_inside, fragment_overlaps, isolated_tiles, sparse_tiles
from .zonemap import (
    FieldKind, Predicate, attribute_stats, bounds_stats, cell_counts, classify,
    field_kinds, parse_predicate,
)

FUNCS = ("count_star", "count", "sum", "min", "max")
_INT64_MIN, _INT64_MAX = np.iinfo(np.int64).min, np.iinfo(np.int64).max


def answer_from_metadata(array, ranges: Ranges, predicate, aggregates: list[tuple[str, str | None]],
                         stats: dict | None = None) -> list | None:
    """See the module docstring.  ``stats``, when given, receives the residual scan's funnel
    counters (``tiles_from_metadata`` counts the tiles answered from metadata)."""
    kinds = field_kinds(array.schema)
    for func, column in aggregates:
        if func not in FUNCS or (func != "count_star" and column not in kinds):
            return None
        if func == "sum" and kinds[column].domain not in ("int", "uint", "float"):
            return None  # sums of other types are the evaluator's business
    pred = Predicate((), True) if predicate is None else parse_predicate(predicate, kinds)
    if not pred.complete:
        return None  # an ununderstood conjunct: no tile is ALWAYS
    partials = [_Partial(func) for func, _ in aggregates]
    skip = {}
    for frag_idx, frag in enumerate(array.fragments):
        chosen = _answer_fragment(array, frag_idx, frag, ranges, pred, kinds, aggregates, partials)
        if chosen is not None and chosen.any():
            skip[frag_idx] = chosen
    if not skip:
        return None
    _residual(array, ranges, predicate, aggregates, partials, skip, stats)
    return [p.result(kinds.get(col), array, col) for p, (_, col) in zip(partials, aggregates)]


# -- partial results ----------------------------------------------------------------------------


@dataclass
class _Partial:
    func: str
    count: int = 0  # rows (count_star), non-null values (others)
    total: float | int = 0
    raw: list = field(default_factory=list)  # min/max candidates: raw storage values
    typed: list = field(default_factory=list)  # min/max candidates: Python values (residual)

    def result(self, kind: FieldKind | None, array, column):
        if self.func in ("count_star", "count"):
            return self.count
        if self.func == "sum":
            return None if self.count == 0 else self.total
        values = list(self.typed) + [_to_python(array, column, v) for v in self.raw]
        values = [v for v in values if v is not None]
        if not values:
            return None
        if any(isinstance(v, float) and math.isnan(v) for v in values):
            if self.func == "max":
                return math.nan  # NaN sorts above every number in SQL (DuckDB)
            values = [v for v in values if not (isinstance(v, float) and math.isnan(v))] or [math.nan]
        return min(values) if self.func == "min" else max(values)


def _to_python(array, column: str, raw):
    """A raw storage value (number or bytes) as the Python value of the column's Arrow type."""
    from ..engine.column import Column
    from ..engine.fields import column_to_arrow

    if isinstance(raw, bytes):
        col = Column(np.frombuffer(raw, dtype=np.uint8).copy(),
                     np.array([0, len(raw)], dtype=np.int64))
    else:
        kind_dtype = _storage_dtype(array, column)
        col = Column(np.array([raw]).astype(kind_dtype))
    return column_to_arrow(array, column, col)[0].as_py()


def _storage_dtype(array, column: str) -> np.dtype:
    schema = array.schema
    for dim in schema.dimensions:
        if dim.name == column:
            return dim.info.numpy
    return schema.attribute(column).info.numpy


# -- which tiles, per fragment ------------------------------------------------------------------


def _answer_fragment(array, frag_idx, frag, ranges, pred, kinds, aggregates, partials):
    """Adds the metadata of this fragment's answerable tiles to ``partials``; returns the bool
    mask (over the fragment's tiles) of those tiles, or None."""
    schema = array.schema
    meta = frag.metadata
    dim_names = [d.name for d in schema.dimensions]
    if meta.non_empty_domain is None or not fragment_overlaps(meta.non_empty_domain, dim_names, ranges):
        return None
    if not _fragment_whole(array, frag):
        return None
    n = meta.tile_count
    if n == 0:
        return None
    cells = cell_counts(meta)
    if schema.sparse:
        lows, highs = _mbr_bounds(meta)
        candidate = np.zeros(n, dtype=bool)
        candidate[sparse_tiles(list(zip(lows, highs)), dim_names, ranges, n)] = True
        candidate &= box_inside(lows, highs, dim_names, ranges)
        if not schema.allows_duplicates and len(array.fragments) > 1:
            others = [f.metadata.non_empty_domain for i, f in enumerate(array.fragments) if i != frag_idx]
            candidate &= isolated_tiles(list(zip(lows, highs)), dim_names, others, n)
    else:
        lows, highs, whole = _dense_bounds(schema, meta)
        candidate = whole & box_inside(lows, highs, dim_names, ranges)
        later = [f.metadata.non_empty_domain for f in array.fragments[frag_idx + 1:]]
        candidate &= isolated_tiles(list(zip(lows, highs)), dim_names, later, n)
    if not candidate.any():
        return None
    dim_bounds = dict(zip(dim_names, zip(lows, highs)))
    stats_cache: dict = {}

    def stats_of(name):
        if name not in stats_cache:
            kind = kinds[name]
            if kind.is_dim:
                lo, hi = dim_bounds[name]
                stats_cache[name] = bounds_stats(lo, hi, cells)
            else:
                spec = frag.fields.get(name)
                stats_cache[name] = attribute_stats(frag, kind, _same_field(schema, spec), cells)
        return stats_cache[name]

    if pred.tests:
        classes = classify(pred, kinds, stats_of, n)
        candidate &= classes.always
    for (func, column), partial in zip(aggregates, partials):
        if func != "count_star":
            candidate &= _usable(func, kinds[column], stats_of(column), frag, column, n)
    if not candidate.any():
        return None
    tiles = np.flatnonzero(candidate)
    for (func, column), partial in zip(aggregates, partials):
        _add(partial, func, kinds.get(column), stats_of(column) if column else None,
             frag, column, tiles, cells)
    return candidate


def _fragment_whole(array, frag) -> bool:
    """Every cell of the fragment is read as is: no per-cell timestamps the window cuts or the
    merge sorts out, no delete timestamps, no delete condition that may apply."""
    meta = frag.metadata
    if meta.has_timestamps:
        lo, hi = array.window
        inside = lo <= frag.timestamp_range[0] and frag.timestamp_range[1] <= hi
        if not (inside and array.schema.allows_duplicates):
            return False
    if meta.has_delete_meta:
        return False
    return not any(d.timestamp >= frag.timestamp_range[0] for d in array.directory.deletes)


def _same_field(schema, spec) -> bool:
    if spec is None:
        return False
    try:
        attr = schema.attribute(spec.name)
    except KeyError:
        return True
    return (int(attr.datatype), attr.cell_val_num, attr.nullable) == \
        (int(spec.datatype), spec.cell_val_num, spec.nullable)


def _mbr_bounds(meta):
    lows, highs = [], []
    for ranges in meta.rtree.leaves:
        if isinstance(ranges, np.ndarray):
            lows.append(ranges[:, 0])
            highs.append(ranges[:, 1])
        else:
            lows.append([bytes(lo) for lo, _ in ranges])
            highs.append([bytes(hi) for _, hi in ranges])
    return lows, highs


def _dense_bounds(schema, meta):
    """Per dimension the bounds of every space tile of the fragment (in the fragment's tile
    order), and per tile whether it lies wholly inside the fragment's non-empty domain."""
    dims = schema.dimensions
    ned = [(int(lo), int(hi)) for lo, hi in meta.non_empty_domain]
    ext = [int(d.tile_extent) for d in dims]
    dom_lo = [int(d.domain[0]) for d in dims]
    first = [(lo - d) // e for (lo, _), d, e in zip(ned, dom_lo, ext)]
    counts = [(hi - d) // e - f + 1 for (_, hi), d, e, f in zip(ned, dom_lo, ext, first)]
    order = range(len(dims)) if schema.tile_order == 1 else range(len(dims) - 1, -1, -1)
    n = math.prod(counts)
    index = np.arange(n, dtype=np.int64)
    lows, highs = [], []
    whole = np.ones(n, dtype=bool)
    coords = [None] * len(dims)
    for d in order:  # the fastest-varying dimension first
        coords[d] = index % counts[d]
        index = index // counts[d]
    for d in range(len(dims)):
        lo = dom_lo[d] + (coords[d] + first[d]) * ext[d]
        hi = lo + ext[d] - 1
        whole &= (lo >= ned[d][0]) & (hi <= ned[d][1])
        lows.append(lo)
        highs.append(hi)
    return lows, highs, whole


def _usable(func, kind: FieldKind, stats, frag, column, n) -> np.ndarray:
    """Per tile: does its metadata answer ``func(column)``?"""
    if stats is None:
        return np.zeros(n, dtype=bool)
    exact_nulls = stats.null_exact == 1
    if func == "count":
        return exact_nulls
    if func == "sum":
        if kind.is_dim:
            return np.zeros(n, dtype=bool)
        sums = np.asarray(frag.metadata.tile_sums[column])
        if len(sums) != n:
            return np.zeros(n, dtype=bool)
        if kind.domain == "float":
            return stats.trusted == 1
        limit = (sums != _INT64_MAX) & (sums != _INT64_MIN) if kind.domain == "int" \
            else sums != np.uint64(UINT64_MAX)
        return limit & exact_nulls
    # min / max: trusted bounds, or a tile holding only NULLs (it adds nothing)
    if stats.mins is None:
        return stats.null_counts >= stats.cell_counts
    return (stats.trusted == 1) | (stats.null_counts >= stats.cell_counts)


def _add(partial: _Partial, func, kind, stats, frag, column, tiles, cells) -> None:
    if func == "count_star":
        partial.count += int(cells[tiles].sum())
        return
    non_null = cells[tiles] - stats.null_counts[tiles]
    if func == "count":
        partial.count += int(non_null.sum())
        return
    has_values = tiles[non_null > 0]
    if func == "sum":
        sums = np.asarray(frag.metadata.tile_sums[column])[has_values]
        partial.count += int(non_null.sum())
        if kind.domain == "float":
            partial.total += float(np.sum(sums, dtype=np.float64))
        else:
            partial.total += sum(int(v) for v in sums.tolist())
        return
    bounds = stats.mins if func == "min" else stats.maxes
    if isinstance(bounds, np.ndarray):
        chosen = bounds[has_values]
        if len(chosen):
            partial.raw.append((chosen.min() if func == "min" else chosen.max()).item())
    elif bounds is not None:
        chosen = [bounds[int(i)] for i in has_values]
        if chosen:
            partial.raw.append(min(chosen) if func == "min" else max(chosen))


# -- the residual scan --------------------------------------------------------------------------


def _residual(array, ranges, predicate, aggregates, partials, skip, stats) -> None:
    """Decode the tiles not answered from metadata and fold their rows into ``partials``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from ..engine.evaluate import where_mask
    from ..engine.fields import column_to_arrow
    from ..engine.scan import scan

    kinds = field_kinds(array.schema)
    wanted = {c for _, c in aggregates if c} | (set() if predicate is None else
                                               {c.name for c in predicate.find_all(exp.Column)})
    fields = [n for n in kinds if n in wanted] or [array.schema.dimensions[0].name]
    result = scan(array, fields, ranges, predicate, skip_tiles=skip)
    if stats is not None:
        stats.update(result.stats)
    table = pa.table({f: column_to_arrow(array, f, result.columns[f]) for f in fields})
    if predicate is not None and table.num_rows:
        table = table.filter(where_mask(table, predicate, predicate.sql(dialect="duckdb")))
    for (func, column), partial in zip(aggregates, partials):
        if func == "count_star":
            partial.count += table.num_rows
            continue
        values = table.column(column)
        if func == "count":
            partial.count += len(values) - values.null_count
            continue
        valid = pc.drop_null(values)
        if func == "sum":
            partial.count += len(valid)
            if len(valid):
                partial.total += _exact_sum(valid, kinds[column])
            continue
        if len(valid) == 0:
            continue
        if pa.types.is_floating(valid.type):
            arr = np.asarray(valid.to_numpy(zero_copy_only=False), dtype=np.float64)
            if np.isnan(arr).any():
                partial.typed.append(math.nan)
                arr = arr[~np.isnan(arr)]
            if len(arr):
                partial.typed.append(float(arr.min() if func == "min" else arr.max()))
            continue
        partial.typed.append(pc.min_max(valid)["min" if func == "min" else "max"].as_py())


def _exact_sum(values, kind: FieldKind):
    if kind.domain == "float":
        return float(np.sum(np.asarray(values.to_numpy(zero_copy_only=False), dtype=np.float64)))
    arr = np.asarray(values.to_numpy(zero_copy_only=False))
    if arr.dtype.kind == "u":
        arr = arr.astype(np.uint64)
        high, low = arr >> np.uint64(32), arr & np.uint64(0xFFFFFFFF)
    else:
        arr = arr.astype(np.int64)
        high, low = arr >> 32, arr & 0xFFFFFFFF
    # each half sums exactly in 64 bits for fewer than 2**31 values
    return (int(high.sum(dtype=high.dtype)) << 32) + int(low.sum(dtype=low.dtype))
