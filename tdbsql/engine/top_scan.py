"""ORDER BY one stored column LIMIT n over an array: read the tiles that can hold the top rows.

``SELECT * FROM readings ORDER BY time DESC LIMIT 10`` needs ten rows, yet a sort reads every
tile to find them.  Each tile's metadata bounds the sort column -- a dimension's MBR, an
attribute's zone map (min / max, trusted only where TileDB's statistics are exact: no NaN in a
float tile, no NaT) -- so the scan reads its tasks best bound first, a few at a time, and once
it holds OFFSET + LIMIT rows whose key is at least the n-th best value, every task whose bound
is strictly worse is left unread: none of its rows can be among the first n.  The rows read go
to the Sort step in scan order, so its answer (ties included) is the one a whole read gives.

Sound under merging: a task is a tile run of one fragment, or a slab holding every version of
its coordinates (``engine.sparse_scan``); its bound covers each stored cell, and the newest
version, the cells a delete or the time window keep, are among them.

Applies to a Sort with a LIMIT whose first key is a column of its input that is a stored
integer, float or date/time column of a sparse array, under row-by-row steps only
(``streamed_result.row_chain``); not for a nullable key ordered NULLS FIRST (a tile's NULLs
would come before any bound), nor when OFFSET + LIMIT is past 1/8 of the array's cells
(``TOP_SHARE_MAX``: one whole scan reads those faster).  Later keys only order ties; they
change no bound.  The rows held count against the memory budget as they are read, and the
keys that decide the threshold are only those still among the best (``_threshold``).
"""

from __future__ import annotations

import math
import time

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp, planner

from ..catalog import ArraySource
from ..planner.limit_percent import PercentLimit
from ..planner.pruning import bounds_hold, leaf_mbrs
from ..planner.zonemap import attribute_stats, bounds_stats, cell_counts, field_kinds, same_field
from .fields import field_arrow_type, stored_field
from .frame import Frame, concat_frames
from .memory import step_label
from .parallel import map_ordered, workers
from .pipeline import scan_batch, scan_done
from .scan_step import array_scan
from .sort_step import run_sort
from .sparse_scan import SlabTask, TileTask
from .streamed_result import row_chain, through_chain

TOP_SHARE_MAX = 8  # a top scan when OFFSET + LIMIT is at most 1/8 of the array's cells
_UNIT_NS = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}
_DAY_NS = 86_400 * 10**9


def try_top_scan(runner, step) -> tuple[Frame, list] | None:
    """(the Sort step's frame, the steps it ran inside it), or None when it does not apply."""
    shape = runner.query.derived("top scan", lambda: _shape(step), step)
    if shape is None:
        return None
    chain, key, descending, nulls_first = shape
    scan = chain[0]
    source, window = runner.catalog.resolve(scan.source, runner.sql)
    if not isinstance(source, ArraySource):  # the array's facts: looked at on every run
        return None
    array = runner.open_array(source, window)
    stored = stored_field(list(reversed(chain)), key.name, array)
    if array.schema.dense or stored is None:
        return None
    kind = field_kinds(array.schema)[stored]
    if kind.domain not in ("int", "uint", "float", "datetime") or (kind.nullable and nulls_first):
        return None
    need = step.offset + int(step.limit)
    if need * TOP_SHARE_MAX > sum(f.metadata.cell_count for f in array.fragments):
        return None  # most of the rows wanted: rounds of a few tasks read slower than one scan
    condition = runner.scan_condition(scan)
    scanned = array_scan(runner, scan, scan.source, condition)
    tasks = [task for chunk in scanned.tasks() for task in chunk]
    bounds = _task_bounds(scanned.scan, tasks, stored, descending)
    if bounds is None:
        return None
    started = time.perf_counter()
    order = sorted(range(len(tasks)), key=lambda i: _rank(bounds[i], descending))

    def read(position: int):
        rows, frame = scan_batch(runner, scan, scanned, condition, [tasks[position]])
        lengths: list[int] = []
        return rows, through_chain(runner, chain, frame, lengths), lengths

    parts, keys, rows, at, size, held = {}, [], 0, 0, 1, 0
    counts = [0] * len(chain)  # rows out of each step below the sort
    while at < len(order):
        if need == 0 and parts:  # LIMIT 0: one task read gives the columns, no row is kept
            break
        threshold, keys = _threshold(keys, need, descending)
        if threshold is not None and _worse(bounds[order[at]], threshold, descending):
            break  # sorted best first: every task left is worse
        group = order[at:at + size]
        at, size = at + len(group), 2 * workers()
        for position, (read_rows, frame, lengths) in zip(group, map_ordered(read, group)):
            rows += read_rows
            counts = [a + b for a, b in zip(counts, lengths)]
            parts[position] = frame
            keys.append(_numbers(runner.column(frame, key)))
            held += runner.budget.bytes_of(frame)
            runner.budget.check(2 * held, step_label(step))  # x2: concatenated to sort
    scanned.stats["tiles_skipped_by_top"] = sum(scanned.scan.task_tiles(tasks[i])
                                                for i in order[at:])
    scan_done(runner, scan, scanned, rows, started)
    for chained, count in zip(chain, counts):
        runner.record(chained, count, streamed=True)
    return run_sort(step, concat_frames([parts[i] for i in sorted(parts)]), runner), chain


def _shape(step):
    """(the steps below the sort, bottom-up; its first key as a column of its input;
    descending; NULLS FIRST) when the plan allows a top scan, else None.  Only the plan:
    the array behind the scan (a registered name may change between runs) is looked at by
    ``try_top_scan``."""
    if not isinstance(step, planner.Sort) or step.limit == math.inf or \
            isinstance(step.limit, PercentLimit) or len(step.dependencies) != 1:
        return None
    chain = row_chain(next(iter(step.dependencies)))
    if chain is None or len(chain[-1].dependents) != 1:
        return None
    ordered = step.key[0]
    key = _input_column(step, ordered.this)
    if key is None:
        return None
    return chain, key, bool(ordered.args.get("desc")), bool(ordered.args.get("nulls_first"))


def _input_column(step, key: exp.Expression) -> exp.Column | None:
    """The sort key as a column of the sort's input: itself, or the column a projection of
    the sort renames (``ORDER BY k`` for ``SELECT id AS k``)."""
    if not isinstance(key, exp.Column):
        return None
    if key.table:
        return key
    found = [p.unalias() for p in step.projections if p.alias_or_name == key.name]
    return found[0] if len(found) == 1 and isinstance(found[0], exp.Column) else None


# -- bounds ---------------------------------------------------------------------------------


def _task_bounds(scan, tasks: list, name: str, descending: bool) -> list | None:
    """Per task the best key value its cells can hold (the largest for DESC, else the
    smallest), in the Arrow column's unit; None for a task that must be read (a tile without
    trusted statistics, or no tile list).  None overall when no task has a bound."""
    kind = field_kinds(scan.array.schema)[name]
    scale = _to_arrow_unit(scan.array, name, kind)
    best = {}  # fragment position -> per-tile best (float('nan'): unknown)
    out = []
    for task in tasks:
        tiles = [task] if isinstance(task, TileTask) else \
            list(task.tiles) if isinstance(task, SlabTask) else None
        if tiles is None or scale is None:
            out.append(None)
            continue
        values = []
        for tile in tiles:
            if tile.frag_idx not in best:
                best[tile.frag_idx] = _tile_best(scan, tile.frag_idx, kind, descending)
            values.extend(best[tile.frag_idx][i] for i in tile.indices)
        known = [v for v in values if v is not None]
        if any(v is not None and isinstance(v, float) and math.isnan(v) for v in values):
            out.append(None)
        elif not known:  # every tile all NULL (sorted last): the worst of bounds
            out.append(-math.inf if descending else math.inf)
        else:
            out.append((max(known) if descending else min(known)) * scale)
    return out if any(b is not None for b in out) else None


def _tile_best(scan, frag_idx: int, kind, descending: bool) -> list:
    """Per tile of a fragment: its best value (an exact Python number), None for a tile of
    NULLs only, NaN when its statistics cannot be trusted."""
    frag = scan.fragments[frag_idx]
    meta = frag.metadata
    cells = cell_counts(meta)
    if kind.is_dim:
        if not bounds_hold(scan.schema):  # MBRs of the coordinates written, not read
            return [math.nan] * len(cells)
        lows, highs = leaf_mbrs(meta)[scan.dim_names.index(kind.name)]
        stats = bounds_stats(lows, highs, cells)
    else:
        stats = attribute_stats(frag, kind, same_field(scan.array.schema,
                                                       frag.fields.get(kind.name)), cells)
    if stats is None or stats.mins is None:
        return [math.nan] * len(cells)
    values = (stats.maxes if descending else stats.mins).tolist()
    out = []
    for value, trusted, nulls, count in zip(values, stats.trusted, stats.null_counts, cells):
        if not trusted:
            out.append(math.nan)
        elif nulls and nulls == count:
            out.append(None)
        else:
            out.append(value)
    return out


def _to_arrow_unit(array, name: str, kind) -> int | None:
    """Stored units per Arrow unit of the field's values (1 for numbers; DATETIME_HR as
    seconds: 3600), or None when they do not divide."""
    if kind.domain != "datetime":
        return 1
    arrow_type = field_arrow_type(array, name)
    arrow_ns = _DAY_NS if pa.types.is_date32(arrow_type) else \
        _UNIT_NS.get(getattr(arrow_type, "unit", None))
    if arrow_ns is None or kind.unit_ns % arrow_ns:
        return None
    return kind.unit_ns // arrow_ns


def _rank(bound, descending: bool):
    """Sort key of a task: unbounded first, then best bound first."""
    if bound is None:
        return (0, 0)
    return (1, -bound if descending else bound)


def _worse(bound, threshold, descending: bool) -> bool:
    if bound is None:
        return False
    return bound < threshold if descending else bound > threshold


def _numbers(values) -> np.ndarray:
    """A batch's non-NULL keys as numbers in the Arrow unit (dates as days, timestamps as
    ticks)."""
    values = pc.drop_null(values)
    if pa.types.is_date32(values.type) or pa.types.is_timestamp(values.type):
        values = values.cast(pa.int32() if pa.types.is_date32(values.type) else pa.int64())
    return np.asarray(values.to_numpy(zero_copy_only=False))


def _threshold(keys: list, need: int, descending: bool) -> tuple:
    """(the ``need``-th best key read so far, NaN the greatest as SQL orders it -- None when
    fewer were read, or when it is NaN in an ascending sort: every number is better; the
    keys still worth holding: those at least as good, so each round looks at ``need`` of
    them plus the new ones, not at every key read)."""
    if not keys or need == 0:
        return None, keys
    data = np.concatenate(keys)
    if len(data) < need:
        return None, [data]
    rest, wanted = data, need
    if data.dtype.kind == "f" and np.isnan(data).any():
        nans = int(np.isnan(data).sum())
        if descending and nans >= need:
            return math.inf, [data[np.isnan(data)]]  # every task with a bound is worse
        if not descending and len(data) - nans < need:
            return None, [data]
        rest = data[~np.isnan(data)]
        wanted = need - nans if descending else need
    position = len(rest) - wanted if descending else wanted - 1
    threshold = np.partition(rest, position)[position].item()
    kept = (data >= threshold) | np.isnan(data) if descending else data <= threshold
    return threshold, [data[kept]]
