"""Which tiles answer count(*), count, sum, min and max from their metadata alone, and what
that metadata contributes.

In: an opened ``Array``, dimension ``Ranges``, the pushed-down predicate (sqlglot, unqualified
column names, or None) and the aggregates as ``(func, column)`` pairs, func in count_star /
count / sum / min / max (column None for count_star).  ``tile_answers`` lists the answerable
tiles with each one's contribution (per group row when grouping by dimensions constant over
the tile: ``engine/metadata_groups.py``); ``plan_from_metadata`` folds them into a
``MetadataPlan`` (per aggregate a ``Partial`` holding the answered tiles' share, and per
fragment the tiles answered) or None when no tile can be answered from metadata.  The engine
(``engine/metadata_residual.py``) decodes the other tiles, folds their rows into the partials
and reads the results.

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
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..storage.directory import UINT64_MAX
from .pruning import (
    DenseTileGrid, Ranges, bounds_hold, box_inside, fragment_overlaps, isolated_tiles, leaf_mbrs,
    pick_tiles, sparse_tiles,
)
from .zonemap import (
    FieldKind, Predicate, cell_counts, classify, field_kinds, parse_predicate, stats_getter,
)

FUNCS = ("count_star", "count", "sum", "min", "max")
_INT64_MIN, _INT64_MAX = np.iinfo(np.int64).min, np.iinfo(np.int64).max


@dataclass
class Partial:
    """One aggregate's running state over the rows seen so far (tiles answered from metadata,
    then the decoded rest)."""

    func: str
    count: int = 0  # rows (count_star), non-null values (others)
    total: float | int = 0
    raw: list = field(default_factory=list)  # min/max candidates: raw storage values
    typed: list = field(default_factory=list)  # min/max candidates: Python values

    def result(self, to_python: Callable[[Any], Any]):
        """The SQL value; ``to_python`` turns a raw storage value (number or bytes) into the
        Python value of the column's Arrow type."""
        if self.func in ("count_star", "count"):
            return self.count
        if self.func == "sum":
            return None if self.count == 0 else self.total
        values = [v for v in self.typed + [to_python(v) for v in self.raw] if v is not None]
        if not values:
            return None
        if any(isinstance(v, float) and math.isnan(v) for v in values):
            if self.func == "max":
                return math.nan  # NaN sorts above every number in SQL (DuckDB)
            values = [v for v in values if not (isinstance(v, float) and math.isnan(v))] or [math.nan]
        return min(values) if self.func == "min" else max(values)


@dataclass(frozen=True)
class MetadataPlan:
    """Per aggregate its ``Partial`` (metadata share added), and per fragment position the bool
    mask of its tiles answered from metadata (the residual scan leaves them out)."""

    partials: list[Partial]
    answered: dict[int, np.ndarray]


def plan_from_metadata(array, ranges: Ranges, predicate,
                       aggregates: list[tuple[str, str | None]]) -> MetadataPlan | None:
    """See the module docstring."""
    answers = tile_answers(array, ranges, predicate, aggregates)
    if answers is None:
        return None
    partials = [Partial(func) for func, _ in aggregates]
    answered = {}
    for answer in answers:
        answered[answer.frag_idx] = np.zeros(
            array.fragments[answer.frag_idx].metadata.tile_count, dtype=bool)
        answered[answer.frag_idx][answer.tiles] = True
        for i, ((func, _), partial) in enumerate(zip(aggregates, partials)):
            _fold(partial, func, answer.values[i], answer.non_null[i])
    return MetadataPlan(partials, answered)


def _fold(partial: Partial, func: str, values, non_null: np.ndarray) -> None:
    """Add the per-tile contributions of some tiles to ``partial``."""
    if func in ("count_star", "count"):
        partial.count += int(np.sum(values))
        return
    has_values = np.flatnonzero(non_null > 0)
    if func == "sum":
        partial.count += int(non_null.sum())
        sums = np.asarray(values)[has_values]
        if sums.dtype.kind == "f":
            partial.total += float(np.sum(sums, dtype=np.float64))
        else:
            partial.total += sum(int(v) for v in sums.tolist())
        return
    if not len(has_values):
        return
    chosen = pick_tiles(values, has_values)
    if isinstance(chosen, np.ndarray):
        partial.raw.append((chosen.min() if func == "min" else chosen.max()).item())
    else:
        partial.raw.append(min(chosen) if func == "min" else max(chosen))


# -- which tiles, per fragment ------------------------------------------------------------------


def _answerable(array, frag_idx, frag, ranges, pred, kinds, aggregates):
    """(bool per tile: its metadata answers every aggregate soundly, the tile stats getter,
    cells per tile, per dimension the tiles' bounds) or None when no tile qualifies."""
    placed = _placed_tiles(array, frag_idx, frag, ranges)
    if placed is None:
        return None
    bounds, candidate = placed
    cells = cell_counts(frag.metadata)
    stats_of = stats_getter(frag, array.schema, kinds, bounds, cells)
    n = len(candidate)
    if pred.tests:
        candidate &= classify(pred, kinds, stats_of, n).always
    for func, column in aggregates:
        if func != "count_star":
            candidate &= _usable(func, kinds[column], stats_of(column), frag, column, n)
    if not candidate.any():
        return None
    return candidate, stats_of, cells, bounds


@dataclass(frozen=True)
class TileAnswers:
    """What the tiles ``tiles`` of fragment ``frag_idx`` contribute, tile by tile: the value
    of each group dimension (constant over each tile) and, per aggregate, the tile's count,
    sum or min/max (raw storage values: numbers, or a list of bytes for strings) and its count
    of non-NULL values."""

    frag_idx: int
    tiles: np.ndarray
    keys: dict[str, np.ndarray]
    values: list
    non_null: list[np.ndarray]


def tile_answers(array, ranges: Ranges, predicate, aggregates: list[tuple[str, str | None]],
                 group_dims: tuple[str, ...] = ()) -> list[TileAnswers] | None:
    """The tiles whose metadata soundly answers the aggregates, fragment by fragment, with what
    each contributes; with ``group_dims`` (fixed-size dimensions) only tiles over which every
    one of them is constant (its bounds are one value), each then a group row.  None when no
    tile qualifies."""
    kinds = field_kinds(array.schema)
    dims = {d.name: d for d in array.schema.dimensions}
    if any(name not in dims or dims[name].is_var for name in group_dims):
        return None
    for func, column in aggregates:
        if func not in FUNCS or (func != "count_star" and column not in kinds):
            return None
        if func == "sum" and kinds[column].domain not in ("int", "uint", "float"):
            return None  # sums of other types are the evaluator's business
    pred = Predicate((), True) if predicate is None else parse_predicate(predicate, kinds)
    if not pred.complete:
        return None  # an ununderstood conjunct: no tile is ALWAYS
    answers = []
    for frag_idx, frag in enumerate(array.fragments):
        found = _answerable(array, frag_idx, frag, ranges, pred, kinds, aggregates)
        if found is None:
            continue
        candidate, stats_of, cells, bounds = found
        for name in group_dims:
            lows, highs = bounds[name]
            candidate &= np.asarray(lows) == np.asarray(highs)
        tiles = np.flatnonzero(candidate)
        if not len(tiles):
            continue
        values, non_null = [], []
        for func, column in aggregates:
            if func == "count_star":
                values.append(cells[tiles].astype(np.int64))
                non_null.append(cells[tiles].astype(np.int64))
                continue
            stats = stats_of(column)
            present = (cells[tiles] - stats.null_counts[tiles]).astype(np.int64)
            non_null.append(present)
            if func == "count":
                values.append(present)
            elif func == "sum":
                values.append(np.asarray(frag.metadata.tile_sums[column])[tiles])
            else:
                bounds_of = stats.mins if func == "min" else stats.maxes
                # without bounds only tiles of NULLs qualify: they add no value
                values.append([None] * len(tiles) if bounds_of is None
                              else pick_tiles(bounds_of, tiles))
        keys = {name: np.asarray(bounds[name][0])[tiles] for name in group_dims}
        answers.append(TileAnswers(frag_idx, tiles, keys, values, non_null))
    return answers or None


def _placed_tiles(array, frag_idx, frag, ranges):
    """(per dimension name the (lows, highs) of every tile, bool per tile: inside the ranges,
    its cells read as they are), or None when no tile of the fragment can qualify."""
    schema, meta = array.schema, frag.metadata
    dim_names = [d.name for d in schema.dimensions]
    if not fragment_overlaps(meta.non_empty_domain, dim_names, ranges) or meta.tile_count == 0 \
            or not _fragment_whole(array, frag) or not bounds_hold(schema):
        return None
    n = meta.tile_count
    if schema.sparse:
        mbrs = leaf_mbrs(meta)
        candidate = np.zeros(n, dtype=bool)
        candidate[sparse_tiles(mbrs, dim_names, ranges, n)] = True
        # a deduplicated sparse array: another fragment may hide cells of a tile or be hidden
        others = [] if schema.allows_duplicates else \
            [f.metadata.non_empty_domain for i, f in enumerate(array.fragments) if i != frag_idx]
    else:
        lows, highs, candidate = _dense_bounds(schema, meta)
        mbrs = list(zip(lows, highs))
        others = [f.metadata.non_empty_domain for f in array.fragments[frag_idx + 1:]]
    lows, highs = [lo for lo, _ in mbrs], [hi for _, hi in mbrs]
    candidate &= box_inside(lows, highs, dim_names, ranges)
    if others:
        candidate &= isolated_tiles(mbrs, dim_names, others, n)
    return (dict(zip(dim_names, mbrs)), candidate) if candidate.any() else None


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


def _dense_bounds(schema, meta):
    """Per dimension the bounds of every space tile of the fragment (in the fragment's tile
    order), and per tile whether it lies wholly inside the fragment's non-empty domain."""
    ned = [(int(lo), int(hi)) for lo, hi in meta.non_empty_domain]
    grid = DenseTileGrid(schema, [lo for lo, _ in ned], [hi for _, hi in ned])
    lows, highs = grid.tile_bounds()
    whole = np.ones(grid.count, dtype=bool)
    for lo, hi, (ned_lo, ned_hi) in zip(lows, highs, ned):
        whole &= (lo >= ned_lo) & (hi <= ned_hi)
    return lows, highs, whole


def _usable(func, kind: FieldKind, stats, frag, column, n) -> np.ndarray:
    """Per tile: does its metadata answer ``func(column)``?"""
    if stats is None:
        return np.zeros(n, dtype=bool)
    exact_nulls = stats.null_exact == 1
    if func == "count":
        return exact_nulls
    if func == "sum":
        if kind.is_dim or stats.mins is None:  # no bounds: no usable sums either (lossy)
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
