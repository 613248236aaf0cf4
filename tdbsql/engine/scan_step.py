"""Scan a base table: an array (with pushdown) or a registered Arrow table.

Only the columns the query reads through this alias are decoded (projection pruning).  The
scan's predicate, with the alias stripped, gives the dimension ranges that prune fragments and
tiles, and goes to the scan itself for zone-map pruning on attributes.  An array scan is read
task by task (``ArrayScan``): a few neighbouring tiles each when the scan can stream, so the
rows can be filtered and projected -- or aggregated -- as they come (``engine.pipeline``).

A task (a *chunk*) gathers tiles up to ``CHUNK_CELLS`` cells, fewer when that would leave a
worker idle or pass a share of a small memory budget (``budget_chunk_cells``): the steps above pay their Python overhead per chunk, not per tile (a TileDB array
written with the default capacity has 10,000 cells a tile).  Inside a chunk, a sparse scan
reads each whole run of 8 small tiles its pruning kept alike as one unit
(``SparseScan.runs``), so the key test, the stored filter and the gather run once a run too.
Columns that only the scan's pushed-down condition reads are not turned into Arrow once the
condition is applied.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from sqlglot import exp, planner

from ..catalog import ArrowSource
from ..parquet_source import ParquetSource
from ..planner.conjuncts import and_all, conjuncts, unqualified
from ..planner.ranges import scan_ranges
from ..planner.table_samples import sample_drawn, sample_last
from .column import Column, concat
from .fields import column_to_arrow
from .frame import ROW_PLACEHOLDER, Frame, rows_only
from .parallel import workers
from .scan import PreparedPredicate, ScanResult, open_scan
from .stored_filter import NOTHING_LEFT, compress

CHUNK_CELLS = 1 << 19
# Under a small memory budget a chunk holds at most 1/CHUNK_SHARE of it: a few chunks are in
# flight at once (one a worker, the next ones read ahead), each decoded and then converted.
CHUNK_SHARE = 16
# Below this many cells a scan runs on the calling thread: handing chunks to the pool costs
# more than it gains while the steps above the scan hold the GIL for part of every chunk
# (measured on 2 cores: a filtered sum over 1M cells takes 11 ms alone, 17 ms on the pool;
# the pool wins from about 4M cells).
SERIAL_CELLS = 1 << 22
# A cell a text pattern (LIKE, a regular expression) is tested on costs about this many plain
# cells: TPC-H Q13's ``o_comment NOT LIKE '%special%requests%'`` reads 1.5M cells, a quarter
# of SERIAL_CELLS, yet takes 78 ms on the calling thread and 44 ms on the pool (2 cores).
PATTERN_CELL_WEIGHT = 16
_PATTERN_TESTS = (exp.Like, exp.ILike, exp.RegexpLike, exp.RegexpILike)


def budget_chunk_cells(limit: int, schema, fields: list[str]) -> int:
    """``CHUNK_CELLS``, or fewer when that many cells of ``fields`` would pass a
    ``CHUNK_SHARE`` of the memory budget ``limit`` (bytes); var-sized cells are guessed at
    their offset and 16 bytes."""
    widths = {f.name: (16 + 8 if f.is_var else f.info.size * f.cell_val_num)
              + getattr(f, "nullable", False)
              for f in [*schema.dimensions, *schema.attributes]}
    cell_bytes = max(1, sum(widths.get(name, 8) for name in fields))
    return int(min(CHUNK_CELLS, max(1, limit // (CHUNK_SHARE * cell_bytes))))


class ArrayScan:
    """The scan of one array for one plan step, pruned; ``pieces(chunk)`` reads one chunk's
    tiles, ``frames(pieces)`` makes them the step's frames.
    ``skip_tiles`` (fragment position -> bool per tile) leaves out tiles answered otherwise;
    ``output`` (column names, None for all) are the columns the steps above read."""

    def __init__(self, runner, step, array, condition, skip_tiles: dict | None = None,
                 output: set[str] | None = None):
        self.step, self.array = step, array
        columns = [d.name for d in array.schema.dimensions] + \
                  [a.name for a in array.schema.attributes]
        used = runner.query.used_columns.get(step.name, frozenset())
        self.fields = [c for c in columns if c in used]
        self.output = self.fields if output is None else [c for c in self.fields if c in output]
        self._wanted = set(self.output)
        query, schema = runner.query, array.schema
        # a SYSTEM sample's mark last: dropped once tiles are drawn, no other conjunct moves
        condition = query.derived("sample last", lambda: sample_last(condition), condition)
        self._query, self._sample = query, sample_drawn(condition)  # (share, seed)
        self._sampled = False  # tasks() drew the tiles: the mark is not tested on rows
        self._row_draws: dict[int, int] | None = None  # id(task) -> position: rows drawn here
        predicate = query.derived("unqualified", lambda: unqualified(condition), condition)
        ranges = query.derived("ranges", lambda: scan_ranges(predicate, schema), predicate,
                               schema)
        prepared = query.derived("prepared", lambda: PreparedPredicate(predicate, schema),
                                 predicate, schema)
        self.scan = open_scan(array, self.fields or columns[:1], ranges, predicate,
                              skip_tiles=skip_tiles, budget=runner.budget, prepared=prepared)
        self.stats = self.scan.stats
        self._cell_weight = PATTERN_CELL_WEIGHT if predicate is not None and query.derived(
            "pattern tests", lambda: any(predicate.find_all(*_PATTERN_TESTS)), predicate) else 1
        self.serial = False  # set by tasks()
        self.cells: int | None = None  # cells the tasks read at most (tasks(); None: unknown)
        self.keys = None  # (stored column, KeyFilter): keep only those keys' cells
        # the most cells a chunk gathers (a streamed join's fewer: its batches are held one or
        # two at a time)
        self.chunk_cells = budget_chunk_cells(runner.budget.limit, array.schema, self.fields)

    def tasks(self) -> list[list]:
        """The scan's tasks in chunks of neighbouring tiles (one chunk, ``[None]``, when
        nothing is left: it gives the empty result).  Sets ``serial`` when the scan is too
        small to gain from the thread pool."""
        tasks = self.scan.tasks() or [None]
        if self._sample is not None and self.scan.streamable and tasks != [None]:
            tasks = self._drawn(tasks)
        elif self._sample is not None:  # cells merged (or a dense box): rows drawn per task
            self._row_draws = {id(task): position for position, task in enumerate(tasks)}
        if self.keys is not None and tasks != [None]:
            tasks = self.scan.key_tasks(tasks, *self.keys) or [None]
        if self.chunk_cells >= CHUNK_CELLS:  # a run is read whole (into one chunk)
            tasks = self.scan.runs(tasks)
        cells = [self.scan.task_cells(task) for task in tasks]
        if None in cells:
            return [[task] for task in tasks]
        self.cells = sum(cells)
        self.serial = sum(cells) * self._cell_weight < SERIAL_CELLS
        target = min(self.chunk_cells, sum(cells) // (1 if self.serial else 2 * workers()))
        chunks, current, held = [], [], 0
        for task, count in zip(tasks, cells):
            if current and held + count > target:
                chunks.append(current)
                current, held = [], 0
            current.append(task)
            held += count
        return chunks + [current]

    def _drawn(self, tasks: list) -> list:
        """The tiles a SYSTEM sample keeps of ``tasks`` (one tile each: a streamed scan's,
        before runs are made), each with the sample's chance (the same tiles on every run
        for a REPEATABLE seed); every cell of a kept tile is
        kept, as DuckDB keeps whole vectors.  Drawing none, the first stays to give the
        columns, read for no row."""
        share, seed = self._sample
        kept = [task for task, chance in
                zip(tasks, np.random.default_rng(seed).random(len(tasks))) if chance < share]
        self.stats["tiles_after_sample"] = len(kept)
        self._sampled = True
        return kept or tasks[:1]

    def _rows_drawn(self, task, result: ScanResult) -> ScanResult:
        """The rows a SYSTEM sample keeps of a task's cells when tiles cannot be drawn (they
        are merged first), each with the sample's chance.  A REPEATABLE seed draws from a
        stream of its own per task, ``(seed, the task's position)``: the same rows on every
        run, and no task repeating another's draws (one stream for all would keep the same
        offsets in every slab of a merged scan)."""
        share, seed = self._sample
        entropy = None if seed is None else [seed, self._row_draws[id(task)]]
        keep = np.random.default_rng(entropy).random(result.length) < share
        kept = int(keep.sum())
        if kept == result.length:
            return result
        columns = compress(result.columns, keep) if kept else self.scan.no_rows(result.columns)
        always = None if result.always is None else result.always[keep]
        return ScanResult(columns, kept, result.stats, always)

    def pieces(self, chunk: list, condition: exp.Expression | None,
               gather: bool = True) -> tuple[int, list]:
        """(rows read, per task of the chunk its filtered columns, length and
        ``StoredFilter``: ``TileScan.filtered``; without ``gather``, the kept cells' indices
        fourth)."""
        no_indices = () if gather else (None,)
        rows, pieces = 0, []
        # the conjuncts in the order the scan was opened with (a sample's mark last), the
        # mark dropped once the tiles were drawn
        condition = self._query.derived("sample last", lambda: sample_last(condition),
                                        condition)
        if self._sampled or self._row_draws is not None:
            condition = self._query.derived(
                "sample drawn", lambda: and_all(conjuncts(condition)[:-1]), condition)
        nothing = self._sampled and not self.stats["tiles_after_sample"]  # none drawn
        for task in chunk:
            if nothing:
                pieces.append((self.scan.no_rows(self.fields), 0, NOTHING_LEFT, *no_indices))
                continue
            keyed = None if self.keys is None else self.scan.key_mask(task, *self.keys)
            if keyed is not None and not keyed[1]:  # no key in the tile: nothing more read
                rows += len(keyed[0])
                pieces.append((self.scan.no_rows(self.fields), 0, NOTHING_LEFT, *no_indices))
                continue
            result = self.scan.read(task)
            rows += result.length
            if self._row_draws is not None:
                result = self._rows_drawn(task, result)
            pieces.append(self.scan.filtered(task, result, condition, self._wanted, self.keys,
                                             keyed, gather))
        return rows, pieces

    def frames(self, pieces: list) -> list[tuple[Frame, exp.Expression | None]]:
        """``pieces`` as frames of the step, each with what is left of the condition to
        evaluate over it; tiles left the same residual share one frame."""
        runs = []  # [StoredFilter, [column dicts], length]
        for columns, length, filtering in pieces:
            if length == 0 and runs:
                continue
            if runs and (runs[-1][0].residual is filtering.residual or runs[-1][2] == 0):
                runs[-1][0] = filtering
                runs[-1][1].append(columns)
                runs[-1][2] += length
            else:
                runs.append([filtering, [columns], length])
        return [(self._frame(parts, length, filtering), filtering.residual)
                for filtering, parts, length in runs]

    def trimmed(self, frame: Frame) -> Frame:
        """A frame of ``frames`` without the columns only its residual read (once it ran), so
        every batch has the same columns."""
        table = frame.tables[self.step.name]
        if table.num_columns == len(self.output) or ROW_PLACEHOLDER in table.column_names:
            return frame
        return Frame.single(self.step.name, table.select(self.output) if self.output
                            else rows_only(table.num_rows))

    def _frame(self, parts: list[dict[str, Column]], length: int, filtering) -> Frame:
        names = self._wanted | filtering.residual_columns
        fields = [name for name in self.fields if name in names]
        if not fields:
            return Frame.single(self.step.name, rows_only(length))
        data = pa.Table.from_arrays(
            [column_to_arrow(self.array, name, concat([p[name] for p in parts if len(p[name])])
                             if length else parts[0][name]) for name in fields], names=fields)
        return Frame.single(self.step.name, data)


def columns_read(runner, scan: planner.Scan) -> set[str] | None:
    """Names of the scan step's columns that the steps above it read (None: cannot be told,
    e.g. a ``*``): what its projections read, or -- when it passes its rows on as they are --
    what the steps above it read (``_read_above``)."""
    expressions = list(scan.projections) or _read_above(runner, scan)
    if expressions is None:
        return None
    names = set()
    for expression in expressions:
        if any(True for _ in expression.find_all(exp.Star)):
            return None
        names |= {c.name for c in expression.find_all(exp.Column)
                  if c.table in ("", scan.name)}
    return names


def _read_above(runner, scan: planner.Scan) -> list[exp.Expression] | None:
    """The expressions of the filter-only Join steps above ``scan`` (their conditions minus
    the conjuncts pushed into the scan) up to the first that projects, or up to the Aggregate
    they feed (without ``count(*)``'s star); None when another kind of step reads the rows."""
    expressions, step = [], scan
    while len(step.dependents) == 1:
        step = next(iter(step.dependents))
        if isinstance(step, planner.Aggregate):
            operands = [op for op in step.operands if not isinstance(op.unalias(), exp.Star)]
            return expressions + operands + [*step.group.values(), *step.aggregations]
        if not isinstance(step, planner.Join) or step.joins:
            return None
        residual = runner.residual(step)
        expressions += [] if residual is None else [residual]
        if step.projections:
            return expressions + list(step.projections)
    return None


def array_scan(runner, step, table: exp.Table, condition) -> ArrayScan | Frame:
    """An ``ArrayScan`` for an array, or the frame of a registered Arrow table or of Parquet
    files (the columns the query uses)."""
    source, window = runner.catalog.resolve(table, runner.sql)
    if isinstance(source, (ArrowSource, ParquetSource)):
        used = runner.query.used_columns.get(step.name, frozenset())
        names = [n for n in source.arrow_schema().names if n in used]
        if isinstance(source, ParquetSource):  # read now: the query's memory
            data = source.read(names, runner.budget, f"reading {source.pattern!r}") if names \
                else rows_only(source.num_rows())
            return Frame.single(step.name, data)
        runner.budget.borrow(source.table)  # the caller's memory, not the query's
        data = source.table.select(names) if names else rows_only(source.table.num_rows)
        return Frame.single(step.name, data)
    return ArrayScan(runner, step, runner.open_array(source, window), condition,
                     output=runner.query.derived("columns read",
                                                 lambda: columns_read(runner, step), step))
