"""Streamed execution: an array scan and the steps right above it, a few tiles at a time.

A scan of an array reads task by task (``ArrayScan``: a chunk of neighbouring tiles each when
no merge across tiles is needed).  Each tile's rows are filtered by the conjuncts of the scan's
condition that its zone maps left open (``TileScan.filtered``; none when the tile is ALWAYS
for the whole predicate), and each chunk projected, on the thread pool, so both cores work and
only the rows that pass are kept (``stream_scan``).  Columns only the pushed-down conjuncts
read are dropped once those ran (``columns_read``).

An Aggregate over a chain of such a scan and filter-only Join steps (how sqlglot plans
``SELECT agg FROM array WHERE ... GROUP BY ...``) never holds the scanned rows: each batch goes
through the chain and is folded into per-group partial states
(``engine.partial_aggregate``), which are combined at the end (``try_streamed_aggregate``).
Memory is then a few tiles per worker plus the groups.  Conjuncts the planner pushed into the
scan are not evaluated again above it.  When grouping by dimensions, tiles whose metadata is
the answer are not read at all (``engine.metadata_groups``).

Expressions holding subqueries keep to one thread (a subquery runs once and is cached).
"""

from __future__ import annotations

import time
from typing import Iterator

from sqlglot import exp, planner

from ..catalog import ArraySource
from ..planner.conjuncts import has_subquery
from .aggregate_step import run_aggregate
from .dense_groups import DenseGroups, slot_bytes
from .frame import Frame, concat_frames
from .parallel import map_ordered
from .memory import step_label
from .metadata_groups import metadata_groups
from .partial_aggregate import combine, partial, step_calls, streamable
from .project import filter_project
from .scan_step import ArrayScan, columns_read
from .scan_sums import ScanSums
from .streamed_result import chain_to_table

DENSE_MIN_SLOTS = 1 << 16
DENSE_SLOTS_PER_CELL = 2
# A set the caches hold: over more keys every row is a miss to memory, and the sets' clearing
# and merging cost more than the chunks' own groups (TPC-H Q18's 6M orders: twice the CPU)
DENSE_SET_BYTES = 8 << 20


def stream_scan(runner, step, scanned: ArrayScan, condition) -> Frame:
    """The scan step's output: ``scan_frames`` concatenated."""
    held, frames = 0, []
    for frame in scan_frames(runner, step, scanned, condition):
        frames.append(frame)
        held += runner.budget.bytes_of(frame)
        runner.budget.check(2 * held, f"the scan of {step.name!r}")  # x2: the batches, joined
    return concat_frames(frames)


def scan_frames(runner, step, scanned: ArrayScan, condition) -> Iterator[Frame]:
    """The scan step's output task by task, in scan order: each chunk filtered and projected.
    A scan under a LIMIT (``engine.row_caps``) stops reading once it has the rows the LIMIT
    needs, and reads its first chunk's tasks one at a time, so ``SELECT * FROM a LIMIT 10``
    decodes one tile, not every tile (nor a pool's worth of chunks)."""
    started = time.perf_counter()
    chunks = scanned.tasks()
    wanted = runner.row_caps.get(step)
    batches = _batches(lambda task: scan_batch(runner, step, scanned, condition, task), chunks,
                       scanned.serial or has_subquery(condition, *step.projections),
                       wanted is not None)
    rows = kept = 0
    try:
        for scanned_rows, frame in batches:
            rows += scanned_rows
            kept += frame.length
            yield frame
            if wanted is not None and kept >= wanted:
                break
    finally:
        batches.close()  # the pool's tasks not started yet are cancelled
        scan_done(runner, step, scanned, rows, started)


def _batches(fn, chunks: list, serial: bool, limited: bool):
    """``fn`` over the chunks in order (``_map``); ``limited``: the first chunk's tasks one by
    one on this thread first."""
    if limited and chunks:
        yield from map(fn, [[task] for task in chunks[0]])
        chunks = chunks[1:]
    yield from _map(fn, chunks, serial)


def scan_batch(runner, step, scanned: ArrayScan, condition, task) -> tuple[int, Frame]:
    """(rows read, the step's output frame) for one task."""
    rows, pieces = scanned.pieces(task, condition)
    return rows, scan_frame(runner, step, scanned, pieces)


def scan_frame(runner, step, scanned: ArrayScan, pieces: list) -> Frame:
    """The step's output frame of one task's ``ArrayScan.pieces``."""
    frames = [frame if residual is None else
              scanned.trimmed(frame.filter(runner.mask(frame, residual)))
              for frame, residual in scanned.frames(pieces)]
    return filter_project(runner, step, concat_frames(frames), filtered=True)


def streamed_chain(runner, step) -> tuple | None:
    """(the scan, the filter steps) an Aggregate ``step`` can stream from, or None."""
    shape = _shape(runner, step)
    return None if shape is None else (shape[0], *shape[1])


def _shape(runner, step):
    """``_streamable_chain`` of an Aggregate step, worked out once per planned query."""
    if not isinstance(step, planner.Aggregate):
        return None
    return runner.query.derived("streamed aggregate", lambda: _streamable_chain(runner, step),
                                step)


def try_streamed_aggregate(runner, step, keys=None) -> tuple[Frame, list] | None:
    """(the Aggregate step's frame, the steps it ran inside it) or None when ``step`` is not
    an aggregate over a streamable chain.  ``keys`` (``key_filter.JoinedKeys``) aggregates
    only the rows whose group key is one of them (``engine.deferred_inputs``): tested
    on each tile's stored column before any other is gathered when the column is known and
    the keys have a presence table, else on each batch's rows."""
    shape = _shape(runner, step)
    if shape is None:
        return None
    scan, filters, residuals, calls = shape
    source, window = runner.catalog.resolve(scan.source, runner.sql)
    if not isinstance(source, ArraySource):
        return None
    condition = runner.scan_condition(scan)
    array = runner.open_array(source, window)
    answered, skip = None, {}
    if not any(residuals) and not scan.projections and not any(f.projections for f in filters):
        answered, skip = metadata_groups(step, calls, array, condition)
    output = runner.query.derived("columns read", lambda: columns_read(runner, scan), scan)
    scanned = ArrayScan(runner, scan, array, condition, skip, output)
    if keys is not None and keys.stored is not None and keys.filter.present is not None:
        scanned.keys, keys = (keys.stored, keys.filter), None
    sums = None if keys is not None or any(residuals) or scan.projections or \
        any(f.projections for f in filters) else runner.query.derived(
            "scan sums", lambda: ScanSums.of(step, calls, scan.name, array.schema), step,
            array.schema)

    summed = []  # (tiles, of them read by their codes) per chunk summed by ``sums``
    started = time.perf_counter()
    chunks = scanned.tasks()
    dense = _dense_groups(runner, sums, scanned.cells)

    def batch(task):
        rows, pieces = scanned.pieces(task, condition)
        if sums is not None and all(f.residual is None for _, _, f in pieces):
            done = sums.partial(array, [(columns, length) for columns, length, _ in pieces],
                                [scanned.scan.task_tiles(t) for t in task], dense)
            if done is not None:
                summed.append((done.tiles, done.coded))  # list.append: thread-safe
                kept = sum(length for _, length, _ in pieces)
                return rows, [kept] * (len(filters) + 1), None, done.partial
        frame = scan_frame(runner, scan, scanned, pieces)
        passed = [frame.length]
        for filter_step, residual in zip(filters, residuals):
            if residual is not None:
                frame = frame.filter(runner.mask(frame, residual))
            frame = filter_project(runner, filter_step, frame, filtered=True)
            passed.append(frame.length)
        if keys is not None and frame.length:
            frame = _with_keys(runner, frame, keys.expression, keys.filter)
        return rows, passed, frame, partial(step, calls, frame, runner)

    rows, passed, last, held = 0, [0] * (len(filters) + 1), None, 0
    partials = [] if answered is None else [answered]
    for batch_rows, batch_passed, frame, state in _map(batch, chunks, scanned.serial):
        rows += batch_rows
        passed = [a + b for a, b in zip(passed, batch_passed)]
        last = frame or last  # None: summed from the tiles (``ScanSums``)
        if state is not None:
            partials.append(state)
            held += state.nbytes
        if state is not None or dense is not None:
            # x2: the states are concatenated to be combined
            runner.budget.check(2 * held + (0 if dense is None else dense.nbytes),
                                step_label(step))
    if summed:
        scanned.stats["tiles_summed"] = sum(tiles for tiles, _ in summed)
        scanned.stats["tiles_summed_coded"] = sum(coded for _, coded in summed)
    if dense is not None:
        folded = sums.dense_partial(array, dense)
        partials += [] if folded is None else [folded]
    scan_done(runner, scan, scanned, rows, started)
    for chained, count in zip([scan, *filters], passed):
        runner.record(chained, count, streamed=True)
    if partials:
        # a chain without projections passes the scan's frame on (``filter_project``)
        names = [scan.name] if last is None else list(last.tables)
        result = combine(step, partials, runner, names)
    else:  # no row at all: the ordinary aggregate over the (typed, empty) last batch
        result = run_aggregate(step, last, runner)
    return result, [scan, *filters]


def _dense_groups(runner, sums: ScanSums | None, cells: int | None) -> DenseGroups | None:
    """Accumulators over the range of the group key (``engine.dense_groups``) for ``sums``
    when it groups by one integer: at most ``DENSE_SLOTS_PER_CELL`` slots per cell the scan
    reads (a wider, sparse range would cost more to clear and merge than the chunks' own
    groups do), in half the memory budget left."""
    layout = None if sums is None else sums.layout()
    if layout is None:
        return None
    slot_limit = min(max(DENSE_MIN_SLOTS, DENSE_SLOTS_PER_CELL * (cells or 0)),
                     DENSE_SET_BYTES // slot_bytes(layout))
    return DenseGroups(layout, slot_limit, runner.budget.room() // 2)


def _streamable_chain(runner, step: planner.Aggregate):
    """(scan, filter steps, their residual conditions, the step's calls by SQL text) when
    ``step`` can fold batches of a chain below it (worked out once per planned query), else
    None."""
    if not streamable(step) or has_subquery(*step.operands, *step.group.values(),
                                            *step.aggregations):
        return None
    chain = chain_below(step)
    if chain is None:
        return None
    scan, filters = chain
    if has_subquery(runner.scan_condition(scan), *scan.projections):
        return None
    return scan, filters, [runner.residual(f) for f in filters], step_calls(step)


def _with_keys(runner, frame: Frame, key: exp.Expression, keys) -> Frame:
    """The rows of ``frame`` whose ``key`` is one of ``keys`` (a ``KeyFilter``)."""
    rows = keys.rows(runner.column(frame, key))
    return frame if len(rows) == frame.length else frame.take(rows)


def chain_below(step) -> tuple[planner.Scan, list[planner.Join]] | None:
    """(scan, filter-only Join steps bottom-up) under ``step``, each feeding only the next."""
    if len(step.dependencies) != 1:
        return None
    top = next(iter(step.dependencies))
    chain = chain_to_table(top, exclusive=True)
    if chain is None or len(top.dependents) != 1 or \
            any(not isinstance(s, planner.Join) or has_subquery(s.condition, *s.projections)
                for s in chain[1:]):
        return None
    return chain[0], chain[1:]


def scan_done(runner, step, scanned: ArrayScan, rows: int, started: float) -> None:
    """Record a finished scan's time, rows and pruning funnel for EXPLAIN ANALYZE."""
    scanned.stats["time_s"] = time.perf_counter() - started
    scanned.stats["rows"] = rows
    runner.scan_stats[id(step)] = scanned.stats


def _map(fn, items, serial: bool):
    return map(fn, items) if serial else map_ordered(fn, items)
