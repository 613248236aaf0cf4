"""Streamed execution: an array scan and the steps right above it, a few tiles at a time.

A scan of an array reads task by task (``ArrayScan``: a chunk of neighbouring tiles each when
no merge across tiles is needed).  Each tile's rows are filtered by the conjuncts of the scan's
condition that its zone maps left open (``TileScan.filtered``; none when the tile is ALWAYS
for the whole predicate), and each chunk projected, on the thread pool, so both cores work and
only the rows that pass are kept (``stream_scan``).  Columns only the pushed-down conjuncts
read are dropped once those ran (``columns_read``).  An Aggregate right above such a scan takes
its batches without holding them (``engine.streamed_aggregate``).

Expressions holding subqueries keep to one thread (a subquery runs once and is cached).
"""

from __future__ import annotations

import time
from typing import Iterator

from ..planner.conjuncts import has_subquery
from .frame import Frame, concat_frames
from .parallel import map_ordered
from .project import filter_project
from .scan_step import ArrayScan


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
    yield from map_tasks(fn, chunks, serial)


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


def scan_done(runner, step, scanned: ArrayScan, rows: int, started: float) -> None:
    """Record a finished scan's time, rows and pruning funnel for EXPLAIN ANALYZE."""
    scanned.stats["time_s"] = time.perf_counter() - started
    scanned.stats["rows"] = rows
    runner.scan_stats[id(step)] = scanned.stats


def map_tasks(fn, items, serial: bool):
    """``fn`` over ``items`` in order: on this thread when ``serial``, else on the pool."""
    return map(fn, items) if serial else map_ordered(fn, items)
