"""Run a planned query: the steps of a ``LogicalQuery`` in dependency order, column at a time.

Each step turns the ``Frame``s of its dependencies into a new ``Frame``:

    Scan          a TileDB array (pruned by the scan's predicates) / Arrow table / CTE / one row
    Join          hash join on the equi-keys sqlglot lifted out of ON, then the residual ON
                  (a non-equi join below an aggregate grouped by its left rows runs inside
                  that aggregate, a block of left rows at a time: ``join_aggregate``)
    Aggregate     group ids + aggregate kernels, then HAVING and the projections (or, for
                  count/sum/min/max over one array, tile metadata: ``metadata_answer``)
    Sort          sort keys over the input plus the projections; LIMIT keeps the top rows
    SetOperation  UNION [ALL] / INTERSECT / EXCEPT [ALL] by group ids over both sides

Every step records its rows, time and (scans) the pruning funnel in ``profile`` for
``EXPLAIN ANALYZE``.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from typing import Iterator

import numpy as np
import pyarrow as pa
from sqlglot import exp, planner

from ..errors import SqlError, UnsupportedSql
from ..planner.build import LogicalQuery
from ..planner.conjuncts import and_all, conjuncts
from ..planner.limit_percent import limit_rows
from ..planner.pushdown import scan_filters
from .evaluate import evaluate, where_mask
from .frame import ROW_PLACEHOLDER, Frame, broadcast, rows_only
from .memory import MemoryBudget, budget_mb, frame_bytes, step_label
from .project import filter_project
from .row_caps import row_caps
from .pipeline import scan_frames, stream_scan
from .scan_step import array_scan
from .streamed_result import result_parts, scan_chain
from .subqueries import SubqueryResolver

# The operators of the other step kinds (aggregates, joins, sorts, set operations, VALUES,
# range()) are imported where a plan first has such a step: a process pays for the machinery
# its queries use (a scan-and-filter query loads some 40 fewer modules).


class Runner:
    def __init__(self, catalog, sql: str, memory_rows: int, arrays: dict | None = None,
                 budget: MemoryBudget | None = None):
        self._catalog = catalog  # as given (``run`` may wrap it for range() tables)
        self.catalog = catalog
        self.sql = sql
        self.memory_rows = memory_rows
        self.budget = MemoryBudget(budget_mb()) if budget is None else budget
        self.arrays = {} if arrays is None else arrays  # (source, window) -> opened Array
        self.profile: list[dict] = []
        self.scan_stats: dict[int, dict] = {}  # id(step) -> pruning funnel of its scan
        self.deferred: dict = {}  # join inputs computed inside their join (deferred_inputs)
        self.join_orders: dict[int, list] = {}  # id(join step) -> [(input, rows after it)]
        self.notes: dict[int, str] = {}  # id(step) -> how it ran, said by its own code
        self.fused: dict = {}  # Aggregate step -> the Join it consumes block by block
        self.row_caps: dict = {}  # array scan step -> the most rows a LIMIT above needs

    def run(self, query: LogicalQuery) -> pa.Table:
        self._start(query)
        root = query.plan.root
        frames = self.run_plan(query.plan)
        return output_table(frames[root], root, query.names)

    def stream(self, query: LogicalQuery) -> Iterator[pa.Table] | None:
        """The result part by part when the plan is one array scan with row-by-row steps
        over it (``engine.streamed_result``); else None (``run`` it)."""
        self._start(query)
        chain = scan_chain(self, query.plan)
        if chain is None:
            return self._sorted_stream(query)
        self._catalog = self._catalog.snapshot()  # for ``fresh``: the names as they are now
        self.row_caps.update(query.derived("row caps", lambda: row_caps(self, query.plan),
                                           query.plan.root))
        scan = chain[0]
        condition = self.scan_condition(scan)
        scanned = array_scan(self, scan, scan.source, condition)
        return result_parts(self, chain, scan_frames(self, scan, scanned, condition),
                            query.names)

    def _sorted_stream(self, query: LogicalQuery) -> Iterator[pa.Table] | None:
        """The result part by part when the plan is a Sort above one array scan with
        row-by-row steps, sorted on disk past the memory budget (``engine.external_sort``);
        else None."""
        from .external_sort import sort_chain, sorted_parts

        chain = sort_chain(self, query.plan)
        if chain is None:
            return None
        self._catalog = self._catalog.snapshot()
        scan = chain[0]
        condition = self.scan_condition(scan)
        scanned = array_scan(self, scan, scan.source, condition)
        if isinstance(scanned, Frame):  # not read tile by tile
            return None
        return sorted_parts(self, chain, scan_frames(self, scan, scanned, condition),
                            query.names, query)

    def fresh(self) -> "Runner":
        """A runner for another run of the same query over the same opened arrays and the
        names as ``stream`` found them (a streamed result read again)."""
        return Runner(self._catalog, self.sql, self.memory_rows, self.arrays,
                      MemoryBudget(self.budget.limit / (1 << 20)))

    def _start(self, query: LogicalQuery) -> None:
        if getattr(self, "query", None) is query:
            return
        self.query = query
        if query.series:  # range / generate_series in FROM
            from .series import SeriesCatalog
            self.catalog = SeriesCatalog(self.catalog, query.series, self)
        self.pushed = query.derived("pushed", lambda: scan_filters(query.plan))
        self._pushed_ids = query.derived("pushed ids", lambda: {
            id(c) for found in self.pushed.values() for c in found})
        self.subqueries = SubqueryResolver(self, query.plan.ctes, query.correlated)

    def open_array(self, source, window):
        """The array behind ``source`` at ``window``, opened once per query (the planner opened
        it already to learn its columns)."""
        key = (source, window)
        if key not in self.arrays:
            self.arrays[key] = source.open(window)
        return self.arrays[key]

    def run_plan(self, plan: planner.Plan) -> dict:
        """Execute ``plan``'s DAG; returns the frame of every step still needed (the root)."""
        frames: dict[planner.Step, Frame] = {}
        # joins between inputs (sqlglot plans a WHERE over one input as a Join step too)
        joins = any(isinstance(step, planner.Join) and step.joins for step in plan.dag)
        if joins:
            from .deferred_inputs import deferred_inputs
            self.deferred.update(deferred_inputs(self, plan))
        self.row_caps.update(self.query.derived("row caps", lambda: row_caps(self, plan),
                                                plan.root))
        # a deferred input runs inside its join step, with the steps it streams from
        skipped = {part for step, d in self.deferred.items() if step in plan.dag
                   for part in d.parts}
        for step in plan.dag:
            if step in skipped:
                continue
            started = time.perf_counter()
            answered = self._answered(step)
            if answered is not None:
                frame, replaced = answered
                frames[step] = _offset_limit(frame, step)
                skipped.update(replaced)
                self.record(step, frames[step].length, time.perf_counter() - started)
                self.budget.settle(frames.values(), step_label(step))
        # an aggregate fed its join's pairs block by block runs the join inside it
        fused = {}
        if joins:
            from .join_aggregate import fused_joins
            fused = {step: join for step, join in fused_joins(self, plan).items()
                     if step not in frames and step not in skipped}
        self.fused.update(fused)  # (a subquery's plan runs inside a step of this one)
        skipped.update(fused.values())
        if fused:  # a join fed its source's scan batch by batch runs that scan inside it
            from .streamed_join import streamed_source
            skipped.update(part for step, join in fused.items()
                           for part in streamed_source(self, step, join) or ())
        consumer = {join: step for step, join in fused.items()}
        # the join that runs an aggregate over joins inside it reads that join's other inputs
        outside_readers: dict = {}
        for step, deferred in self.deferred.items():
            for outside in deferred.outside if step in plan.dag else ():
                outside_readers.setdefault(outside, []).extend(
                    consumer.get(d, d) for d in step.dependents)

        def readers(step) -> list:  # the steps that read its frame (a fused join's: its step)
            return [consumer.get(d, d) for d in step.dependents] + \
                outside_readers.get(step, [])

        waiting = {step: set(self._inputs(step)) - set(frames) - skipped for step in plan.dag
                   if step not in frames and step not in skipped}
        ready = [step for step, deps in waiting.items() if not deps]
        done: set = set(frames)
        while ready:
            step = ready.pop()
            started = time.perf_counter()
            frame = self.run_step(step, frames)
            frames[step] = frame
            self.record(step, frame.length, time.perf_counter() - started)
            done.add(step)
            for dependent in readers(step):
                if dependent in waiting and waiting[dependent] <= done and dependent not in ready \
                        and dependent not in frames:
                    ready.append(dependent)
            for dep in self._inputs(step):
                if all(d in done for d in readers(dep) if d in waiting):
                    frames.pop(dep, None)  # free what no later step reads
            self.budget.settle(frames.values(), step_label(step))
        return frames

    def _answered(self, step) -> tuple[Frame, list] | None:
        """(a step's frame, the steps it ran inside it) when it runs without its inputs'
        frames: count/sum/min/max straight from tile metadata, else an aggregate fed tile by
        tile, or an ORDER BY ... LIMIT reading only the tiles that can hold its rows."""
        if isinstance(step, planner.Aggregate):
            from .metadata_answer import try_metadata_answer
            from .streamed_aggregate import try_streamed_aggregate
            return try_metadata_answer(self, step) or try_streamed_aggregate(self, step)
        if isinstance(step, planner.Sort):
            from .top_scan import try_top_scan
            return try_top_scan(self, step)
        return None

    def _inputs(self, step) -> list:
        """The steps whose frames ``step`` reads: a fused aggregate's are its join's."""
        join = self.fused.get(step)
        inputs = list(step.dependencies) if join is None else list(join.dependencies)
        # an aggregate over joins run inside this join reads its join's other inputs
        return inputs + [outside for dep in inputs if dep in self.deferred
                         for outside in self.deferred[dep].outside]

    def run_step(self, step, frames: dict) -> Frame:
        """One step's frame from its dependencies' (``frames`` by step), OFFSET/LIMIT
        applied."""
        return _offset_limit(self._step(step, frames), step)

    def step_frame(self, step, frames: dict) -> Frame:
        """One step's frame from its dependencies' (``frames`` by step), no OFFSET/LIMIT."""
        return self._step(step, frames)

    def _step(self, step, frames: dict) -> Frame:
        if step in self.fused:
            from .join_aggregate import run_join_aggregate
            return run_join_aggregate(self, step, self.fused[step], frames)
        dependencies = self.inputs_by_name(step, frames)
        if isinstance(step, planner.SetOperation):  # both inputs may share a name
            from .setop_step import run_set_operation
            return run_set_operation(step, frames[step.left_step], frames[step.right_step], self)
        if isinstance(step, planner.Join):
            return self.join_frame(step, dependencies)
        inputs = _merge(list(dependencies.values()))
        if isinstance(step, planner.Scan):
            return self._scan(step, inputs)
        if isinstance(step, planner.Aggregate):
            from .aggregate_step import run_aggregate
            return run_aggregate(step, inputs, self)
        if isinstance(step, planner.Sort):
            from .sort_step import run_sort
            return run_sort(step, inputs, self)
        raise UnsupportedSql(f"plan step {type(step).__name__} is not supported")

    def inputs_by_name(self, step, frames: dict, leaving_out: str | None = None) -> dict:
        """The frames of ``step``'s inputs by step name (but ``leaving_out``'s: an input
        another step runs); an input run inside its join (``deferred_inputs``) as its
        ``Deferred``, with the plan frames it reads."""
        return {dep.name: frames[dep] if dep in frames else self.deferred[dep].bound(frames)
                for dep in step.dependencies if leaving_out is None or dep.name != leaving_out}

    def join_frame(self, step: planner.Join, dependencies: dict) -> Frame:
        """A Join step's frame from its inputs' (by step name): the joins, the residual
        condition, the projections.  A Join step without joins is a filter over its one
        input (sqlglot's plan of a WHERE above a derived table or an aggregate)."""
        frame = dependencies[step.source_name]
        if step.joins or not isinstance(frame, Frame):
            from .join_step import run_join
            frame = run_join(step, dependencies, self)
        residual = self.residual(step)
        if residual is not None:
            frame = frame.filter(self.mask(frame, residual))
        return filter_project(self, step, frame, filtered=True)

    def scan_step(self, step: planner.Scan, keys=None) -> Frame:
        """An array's scan step on its own; ``keys`` (a stored integer column, a
        ``KeyFilter``) keeps only the cells whose value is a key (``deferred_inputs``)."""
        return _offset_limit(self._scan(step, Frame({}, 0), keys), step)

    def _scan(self, step: planner.Scan, inputs: Frame, keys=None) -> Frame:
        source = step.source
        condition = self.scan_condition(step)
        if source is None:
            frame = Frame({step.name: rows_only(1)}, 1)
        elif isinstance(source, exp.Values):
            from .values_scan import values_frame
            frame = values_frame(self, step, source)
        elif isinstance(source, exp.Table) and source.name in inputs.tables and \
                not source.args.get("db"):
            table = inputs.tables[source.name]
            tables = {step.name: table}
            # the CTE's own name too (lifted window steps read by it), unless the query reads
            # the CTE more than once: in a self-join the second scan's rows would stand for
            # the first's under that name
            if self._table_reads()[source.name] == 1:
                tables[source.name] = table
            frame = Frame(tables, table.num_rows)
        else:
            scanned = array_scan(self, step, source, condition)
            if not isinstance(scanned, Frame):  # an array: read, filtered, projected per tile
                scanned.keys = keys
                return stream_scan(self, step, scanned, condition)
            frame = scanned
        if condition is not None:
            frame = frame.filter(self.mask(frame, condition))
        return filter_project(self, step, frame, filtered=True)

    def _table_reads(self) -> Counter:
        """How many table references of the query name each table or CTE."""
        return self.query.derived("table reads", lambda: Counter(
            t.name for t in self.query.expression.find_all(exp.Table)))

    def scan_condition(self, scan: planner.Scan):
        """What a scan filters by: its own condition and the conjuncts pushed into it."""
        return self.query.derived("scan condition", lambda: and_all(
            conjuncts(scan.condition) + self.pushed.get(id(scan), [])), scan)

    def residual(self, step):
        """A step's condition without the conjuncts pushed into its scans (they ran there)."""
        return self.query.derived("residual", lambda: and_all(
            [c for c in conjuncts(step.condition) if id(c) not in self._pushed_ids]), step)

    # -- expression helpers shared by the steps -----------------------------------------

    def evaluate(self, frame: Frame, node: exp.Expression, flat: pa.Table | None = None):
        """``node`` over the rows of ``frame`` (an Arrow array, or a scalar for constants)."""
        flat = frame.flat() if flat is None else flat
        node, flat = self.subqueries.resolve(node, flat, frame)
        return evaluate(flat, node, self.sql, self.budget)

    def column(self, frame: Frame, node: exp.Expression, flat: pa.Table | None = None) -> pa.Array:
        """``node`` over the rows of ``frame`` as one array of ``frame.length`` values."""
        return broadcast(self.evaluate(frame, node, flat), frame.length)

    def mask(self, frame: Frame, node: exp.Expression, flat: pa.Table | None = None) -> np.ndarray:
        flat = frame.flat() if flat is None else flat
        node, flat = self.subqueries.resolve(node, flat, frame)
        mask = where_mask(flat, node, self.sql)
        if isinstance(mask, pa.ChunkedArray):
            mask = mask.combine_chunks()
        return mask.to_numpy(zero_copy_only=False).astype(bool, copy=False)

    def check_rows(self, rows: int, what: str) -> None:
        """Refuse an intermediate result past the memory budget instead of swapping to death."""
        if rows > self.memory_rows:
            raise SqlError(f"{what} would produce {rows:,} rows, more than the memory budget of "
                           f"{self.memory_rows:,} rows (set TDBSQL_MAX_ROWS to raise it, or add a "
                           "join condition / filter)")

    def check_join(self, rows: int, inputs: list[Frame], what: str) -> None:
        """Refuse a join output of ``rows`` rows past the row cap or the memory budget (its
        bytes estimated from the joined inputs' bytes per row, plus the pair indices)."""
        self.check_rows(rows, what)
        per_row = 16 + sum(frame_bytes(f) / max(f.length, 1) for f in inputs)
        self.budget.check(int(rows * per_row), what)

    def record(self, step, rows: int, seconds: float = 0.0, streamed: bool = False,
               keys: int | None = None, how: str | None = None) -> None:
        """Rows and time of a step for EXPLAIN ANALYZE (with its scan's funnel, if any); a
        ``streamed`` step ran batch by batch inside the step it feeds (its time is there);
        ``keys``: a deferred aggregate or scan ran for that many join keys; ``how``: a line
        saying how it ran (else the one its code left in ``notes``: a spilled aggregate)."""
        entry = {"step": step, "rows": rows, "seconds": seconds, "streamed": streamed}
        how = how or self.notes.pop(id(step), None)
        if keys is not None:
            entry["keys"] = keys
        if how is not None:
            entry["how"] = how
        if id(step) in self.scan_stats:
            entry["scan"] = self.scan_stats[id(step)]
        self.profile.append(entry)


def _merge(frames: list[Frame]) -> Frame:
    tables: dict = {}
    length = 0
    for frame in frames:
        tables.update(frame.tables)
        length = frame.length
    return Frame(tables, length)


def _offset_limit(frame: Frame, step) -> Frame:
    """OFFSET/LIMIT of a step (a Sort applies its own while choosing the rows to take)."""
    if isinstance(step, planner.Sort) or (not step.offset and step.limit is math.inf):
        return frame
    limit = limit_rows(step.limit, frame.length)
    stop = frame.length if limit is math.inf else min(frame.length, step.offset + int(limit))
    start = min(step.offset, frame.length)
    return frame.take(np.arange(start, stop, dtype=np.int64))


def output_table(frame: Frame, root, names: list[str] | None) -> pa.Table:
    """The root step's frame as the query's result table, columns named as selected."""
    table = frame.tables.get(root.name)
    if table is None:
        table = next(iter(frame.tables.values()))
    if table.column_names == [ROW_PLACEHOLDER]:
        return pa.table({})
    if names is not None and None in names:  # a star: its columns keep their names
        at = names.index(None)
        after = len(names) - at - 1
        if at + after <= table.num_columns:
            names = names[:at] + table.column_names[at:table.num_columns - after] + \
                names[at + 1:]
    if names is not None and len(names) == table.num_columns:
        table = table.rename_columns(names)
    return table
