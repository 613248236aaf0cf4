"""An Aggregate fed batch by batch from the array scan below it, never holding the rows.

An Aggregate over a chain of an array scan and filter-only Join steps (how sqlglot plans
``SELECT agg FROM array WHERE ... GROUP BY ...``) folds each batch of the scan
(``engine.pipeline``) through the chain into per-group partial states
(``engine.partial_aggregate``), which are combined at the end (``try_streamed_aggregate``).
Memory is then a few tiles per worker plus the groups (past the budget, the partial
groups are partitioned on disk: ``engine.spilled_aggregate``).  Conjuncts the planner pushed
into the scan are not evaluated again above it.  When grouping by dimensions, tiles whose metadata is
the answer are not read at all (``engine.metadata_groups``); sums of stored columns and of
arithmetic over them are taken straight from the tiles where they can be
(``engine.scan_sums``), into dense accumulators when the key is a small integer range
(``engine.dense_groups``).
"""

from __future__ import annotations

import time

from sqlglot import exp, planner

from ..catalog import ArraySource
from ..planner.conjuncts import has_subquery
from .aggregate_step import run_aggregate
from .dense_groups import DenseGroups, slot_bytes
from .frame import Frame
from .metadata_groups import metadata_groups
from .partial_aggregate import partial, step_calls, streamable
from .pipeline import map_tasks, scan_done, scan_frame
from .project import filter_project
from .scan_step import ArrayScan, columns_read
from .scan_sums import ScanSums
from .spilled_aggregate import PartialGroups
from .stored_filter import gathered
from .streamed_result import chain_to_table

DENSE_MIN_SLOTS = 1 << 16
DENSE_SLOTS_PER_CELL = 2
# A set the caches hold: over more keys every row is a miss to memory, and the sets' clearing
# and merging cost more than the chunks' own groups (TPC-H Q18's 6M orders: twice the CPU)
DENSE_SET_BYTES = 8 << 20



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

    # an ungrouped sum takes a tile's kept cells where they are (``ScanSums.selects``)
    selects = sums is not None and sums.selects

    def batch(task):
        rows, pieces = scanned.pieces(task, condition, gather=not selects)
        if sums is not None and all(piece[2].residual is None for piece in pieces):
            done = sums.partial(array, [(piece[0], piece[1], piece[3] if selects else None)
                                        for piece in pieces],
                                [scanned.scan.task_tiles(t) for t in task], dense)
            if done is not None:
                summed.append((done.tiles, done.coded))  # list.append: thread-safe
                kept = sum(piece[1] for piece in pieces)
                return rows, [kept] * (len(filters) + 1), None, done.partial
        if selects:
            pieces = [gathered(*piece) for piece in pieces]
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

    rows, passed, last = 0, [0] * (len(filters) + 1), None
    with PartialGroups(runner, step, len(chunks)) as groups:
        groups.keep(answered)
        for done, (batch_rows, batch_passed, frame, state) in enumerate(
                map_tasks(batch, chunks, scanned.serial), 1):
            rows += batch_rows
            passed = [a + b for a, b in zip(passed, batch_passed)]
            last = frame or last  # None: summed from the tiles (``ScanSums``)
            if state is not None or dense is not None:
                groups.add(state, 0 if dense is None else dense.nbytes, done)
        if summed:
            scanned.stats["tiles_summed"] = sum(tiles for tiles, _ in summed)
            scanned.stats["tiles_summed_coded"] = sum(coded for _, coded in summed)
        if dense is not None:
            groups.keep(sums.dense_partial(array, dense))
        scan_done(runner, scan, scanned, rows, started)
        for chained, count in zip([scan, *filters], passed):
            runner.record(chained, count, streamed=True)
        # a chain without projections passes the scan's frame on (``filter_project``)
        result = groups.result([scan.name] if last is None else list(last.tables))
    if result is None:  # no row at all: the ordinary aggregate over the (typed, empty) batch
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
