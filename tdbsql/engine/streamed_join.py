"""An Aggregate over a Join fed batch by batch by the scan of one of its inputs' array.

A Join step holds its inputs whole (``engine.join_step``): over an array bigger than the
memory budget the scan alone stops the query, even when the other inputs are small and the
query ends in an aggregate of a few rows (TPC-H Q10 at 40 MB: "the scan of 'customer' needs
48.8 MB").  When an Aggregate consumes such a Join, the source's scan
(``pipeline.scan_frames``: a few tiles at a time, filtered and projected, then through the
row-by-row steps above it) feeds the join batch by batch.  Each batch is joined to the other
inputs -- computed once, their keys hashed once (``build_side``) -- in the planned order
(``join_step.join_in_order``), the join step's residual condition and projections applied
(``join_output``), and folded into per-group partial states merged at the end
(``partial_aggregate``), as an aggregate over a plain scan is (``streamed_aggregate``).
Memory is the other inputs, the groups and a batch or two; partial groups past the budget
go to disk (``engine.spilled_aggregate``).

Sound batch by batch because every row these joins make comes from one source row: INNER and
LEFT joins on equality keys, the source on the left (a LEFT join's source row without a match
is padded in its own batch) -- or, in a join of two inputs, from one row of the kept side:
a RIGHT / FULL entry's rows no batch matched are added once at the end (``kept_side``).  The
shape (``streamed_join``): an Aggregate whose calls have partial states
(``partial_aggregate.streamable``; count / sum / avg DISTINCT too), over a Join step only it
reads, without LIMIT, whose entries are all INNER or LEFT (one RIGHT or FULL entry alone)
with equality keys reading the tables joined before them (an outer entry's other ON
conditions too), whose streamed input is a chain of row-by-row steps over a table's scan;
nothing reading a subquery.  The streamed input is the source or, in a join of two inputs,
the other one, or any input of the leading inner joins (the join ``turned_join.seen_from``
it: ``small LEFT JOIN big`` streams big as ``big RIGHT JOIN small``, TPC-H Q13's orders),
whichever array holds the most cells; an aggregate before the join (``eager_aggregate``, Q13
at a budget orders fits) streams only its right input.  One the plan reads for the keys
joined before it (``deferred_inputs``) is read so first, the ordinary way; if that is refused
it streams whole -- or, read for keys of the source's rows worth testing (Q9's lineitem for
10,664 parts), the source's rows stream slice by slice.  A right input the plan computes
inside its join for the keys joined is computed once first: for the keys of another input
when its key reads one (TPC-H Q10's lineitem for the orders of the quarter), else whole.  A
batch whose joined rows are refused is joined in halves.  Each batch's states join the
others'; past 1/``STREAM_SHARE`` of the budget they are regrouped into one set when they can
be (``partial_aggregate.merged``: Q13's orders meet most of the 150,000 customers in every
batch).

When to stream is decided as the scan runs: its batches are held until they outgrow
1/``STREAM_SHARE`` of what the budget has left.  A source that never does is joined and
aggregated the ordinary way (at the default budget no TPC-H SF1 query streams) -- unless
the joined rows are refused past the budget: then the batches held stream; one that does
streams from there on, the batches held so far first.
"""

from __future__ import annotations

import math
import time

import numpy as np
from sqlglot import planner

from ..catalog import ArraySource
from ..errors import MemoryLimitError
from ..planner.conjuncts import conjuncts, has_subquery, tables_of
from .aggregate_step import run_aggregate
from .build_side import BuildSide
from .deferred_inputs import Deferred, array_cells, may_test_keys, run_deferred, scan_keys
from .eager_aggregate import eager_join, joined_then_aggregated, run_eager_aggregate
from .frame import Frame, concat_frames
from .join_output import columns_read_by, join_output
from .join_step import join_in_order, right_keys_of
from .joined_rows import JoinedRows
from .kept_side import KeptSide
from .partial_aggregate import partial, step_calls, streamable
from .pipeline import scan_frames
from .scan_step import array_scan
from .spilled_aggregate import PartialGroups
from .streamed_result import row_chain, through_chain
from .turned_join import JoinView, seen_from, side_of

STREAM_SHARE = 4  # stream once the source's rows outgrow this share of the budget left
# A source row's bytes, guessed high (TPC-H customer's are 325): the scan's chunks are sized
# so that a batch holds about 1/(2 * STREAM_SHARE) of the budget left, as few cells as that
# takes (at the default budget of a machine, ``scan_step.CHUNK_CELLS`` as ever)
ROW_BYTES_GUESS = 256


def streamed_join(runner, step) -> tuple[planner.Join, list] | None:
    """(the Join step below an Aggregate ``step``, its source's chain bottom-up from the
    table's scan) when they have the shape above, else None."""
    return runner.query.derived("streamed join", lambda: _shape(runner, step), step)


def streamed_source(runner, step, join) -> list | None:
    """The streamed chain of an aggregate ``step`` run with its ``join`` inside it
    (``join_aggregate.fused_joins``) when it runs streamed (``run_streamed_join``): the
    runner runs none of those steps.  Else None."""
    shape = streamed_join(runner, step)
    return None if shape is None or shape[0] is not join else shape[1]


def _shape(runner, step):
    if not isinstance(step, planner.Aggregate) or len(step.dependencies) != 1 or \
            not streamable(step, distinct=True) or \
            has_subquery(*step.operands, *step.group.values(), *step.aggregations,
                         step.condition, *step.projections):
        return None
    join = next(iter(step.dependencies))
    if not isinstance(join, planner.Join) or not join.joins or \
            set(join.dependents) != {step} or join.limit != math.inf or join.offset or \
            has_subquery(join.condition, *join.projections):
        return None
    # an aggregate before the join (``eager_aggregate``) needs its left rows whole
    eager = runner.query.derived("eager aggregate", lambda: eager_join(runner, step), step)
    names = ([] if eager else [join.source_name]) + \
        ([next(iter(join.joins))] if eager or len(join.joins) == 1 else list(join.joins))
    found = [(name, chain) for name in names
             if (chain := _streamed_input(runner, join, name)) is not None]
    if not found:
        return None
    _name, chain = max(found, key=lambda pair: _cells(runner, pair[1]))  # the source on a tie
    return join, chain


def _streamed_input(runner, join, name: str) -> list | None:
    """The chain of the join's input ``name`` when the join can be fed from it (see the
    module's text), else None."""
    if name != join.source_name and any(d.name == join.source_name and d in runner.deferred
                                        for d in join.dependencies):
        return None  # the source is read for an input's keys
    view = seen_from(join, name)
    if view is None:
        return None
    joined = {view.source_name}
    sides = ("", "LEFT", "RIGHT", "FULL") if len(view.joins) == 1 else ("", "LEFT")
    for entry_name, entry in view.joins.items():
        side = side_of(entry)
        keys = entry.get("source_key") or []
        condition = entry.get("condition")
        if side not in sides or not keys or has_subquery(condition) or \
                entry_name in runner.query.scalar_subqueries or \
                not all(tables_of(key) <= joined for key in keys) or \
                side and not all(tables_of(term) <= joined | {entry_name}
                                 for term in conjuncts(condition)):
            return None
        joined.add(entry_name)
    source = next((d for d in join.dependencies if d.name == name), None)
    chain = None if source is None else row_chain(source)
    if chain is None or source.limit != math.inf or source.offset or \
            set(source.dependents) != {join} or \
            has_subquery(runner.scan_condition(chain[0]), *chain[0].projections) or \
            not _deferral(runner, chain):
        return None
    return chain


def _deferral(runner, chain: list) -> bool:
    """Can the ``chain`` stream as the plan has it: none of its steps computed inside
    another join (``deferred_inputs``), but its top one maybe an array read for the keys
    of the input it joins (streamed when it would be read whole anyway: ``_read_whole``)?"""
    deferred = runner.deferred.get(chain[-1])
    return not any(part in runner.deferred for part in chain[:-1]) and \
        (deferred is None or deferred.aggregate is None and deferred.join is None)


def _cells(runner, chain: list) -> int:
    """The cells of the array the ``chain`` scans (0 for a table held)."""
    source, window = runner.catalog.resolve(chain[0].source, runner.sql)
    return array_cells(runner.open_array(source, window)) \
        if isinstance(source, ArraySource) else 0


def run_streamed_join(runner, step: planner.Aggregate, join: planner.Join,
                      frames: dict) -> Frame:
    """The Aggregate ``step``'s frame over its ``join``, from the frames of the join's
    inputs but the streamed one (``frames`` by step; a deferred one as its ``Deferred``)."""
    chain = streamed_join(runner, step)[1]
    view = seen_from(join, chain[-1].name)
    streamed = view.source_name
    inputs = runner.inputs_by_name(join, frames, leaving_out=streamed)
    deferred = runner.deferred.get(chain[-1])
    if deferred is not None and not _read_whole(join, streamed, deferred, inputs, runner):
        # read for the keys joined, maybe few: the ordinary way (``run_join``); streamed
        # whole if those rows are refused (a refused step holds nothing)
        inputs = {**inputs, streamed: deferred.bound(frames)}
        try:
            return _ordinary(runner, step, join, inputs)
        except MemoryLimitError:
            if _keyed_on_source(join, streamed, deferred, inputs, runner):
                return _source_in_slices(runner, step, join, inputs)
            del inputs[streamed]
    scan = chain[0]
    source, _window = runner.catalog.resolve(scan.source, runner.sql)
    if not isinstance(source, ArraySource):  # a table held already: the ordinary way
        frames = {}
        for chained in chain:
            frame = runner.run_step(chained, frames)
            runner.record(chained, frame.length)
            frames = {chained: frame}
        return _ordinary(runner, step, join, {**inputs, streamed: frame})
    condition = runner.scan_condition(scan)
    scanned = array_scan(runner, scan, scan.source, condition)
    limit = runner.budget.room() // STREAM_SHARE
    scanned.chunk_cells = min(scanned.chunk_cells, max(1, limit // (2 * ROW_BYTES_GUESS)))
    lengths = [0] * len(chain)

    def through(frame: Frame) -> Frame:
        counts: list[int] = []
        frame = through_chain(runner, chain, frame, counts)
        lengths[:] = [a + b for a, b in zip(lengths, counts)]
        return frame

    started = time.perf_counter()
    parts = scan_frames(runner, scan, scanned, condition)
    kept, held, recorded, computed = [], 0, False, None
    for part in parts:
        kept.append(through(part))
        held += runner.budget.bytes_of(kept[-1])
        if held > limit:
            break
    else:  # it fits: the ordinary way, unless the join's rows do not
        for chained, count in zip(chain, lengths):
            runner.record(chained, count, time.perf_counter() - started if chained is scan
                          else 0.0)
        recorded, whole = True, concat_frames(kept)
        try:
            return _ordinary(runner, step, join, {**inputs, streamed: whole})
        except MemoryLimitError:  # (a refused step holds nothing): stream the batches held
            computed = _computed(runner, join, inputs, (streamed, whole))
            del whole

    def batches():
        while kept:
            yield kept.pop(0)  # let go of each held batch once joined
        for part in parts:
            yield through(part)

    if computed is None:
        computed = _computed(runner, join, inputs)
    frame = _aggregated(runner, step, join, view, computed, batches(), scanned.cells or 0)
    for chained, count in zip(chain, [] if recorded else lengths):
        runner.record(chained, count, streamed=True)
    return frame


def _keyed_on_source(join, name: str, deferred: Deferred, inputs: dict, runner) -> bool:
    """Is the input ``name`` -- not the source -- read for keys of the source rows held
    (``inputs``), worth testing (TPC-H Q9's lineitem for 10,664 parts)?"""
    source = inputs[join.source_name]
    if name == join.source_name or not isinstance(source, Frame) or \
            not tables_of(_key(join, deferred, name)) <= set(source.tables) or \
            not may_test_keys(deferred, source.length):
        return False
    return scan_keys(deferred, runner.column(source, _key(join, deferred, name))) is not None


def _source_in_slices(runner, step, join, inputs: dict) -> Frame:
    """The aggregate over the join fed slice by slice from its source's rows, held whole
    (``inputs``), as many rows a slice as a scan's batch would hold, the inputs read for
    keys read for the source's."""
    source = inputs[join.source_name]
    others = {name: frame for name, frame in inputs.items() if name != join.source_name}
    computed = _computed(runner, join, others, (join.source_name, source))
    size = max(1, runner.budget.room() // (2 * STREAM_SHARE * ROW_BYTES_GUESS))
    slices = (source.take(np.arange(begin, min(begin + size, source.length)))
              for begin in range(0, source.length, size))
    return _aggregated(runner, step, join, seen_from(join, join.source_name), computed, slices,
                       source.length)


def _ordinary(runner, step, join, inputs: dict) -> Frame:
    """The aggregate over the join from its inputs whole: aggregated before the join
    (``eager_aggregate``) when it can be, else joined, then aggregated."""
    if runner.query.derived("eager aggregate", lambda: eager_join(runner, step), step):
        return run_eager_aggregate(runner, step, join, inputs)
    return joined_then_aggregated(runner, step, join, inputs)


def _aggregated(runner, step, join, view: JoinView, inputs: dict, batches,
                probes: int) -> Frame:
    """The aggregate of the join (``view``: from the streamed input) of each of
    ``batches`` (the streamed input's frames) with the ``inputs``, from the batches'
    partial states; the rows of a kept side (``KeptSide``) no batch matched last."""
    builds = {name: BuildSide(right_keys_of(inputs[name], entry, runner), probes)
              for name, entry in view.joins.items()}
    kept = KeptSide.of(view, inputs)
    joins = view.joins if kept is None else kept.joins
    calls = step_calls(step)
    residual = runner.residual(join)
    read = columns_read_by(step, join, residual)
    rows, count, last, read_rows, empty = 0, 0, None, 0, None
    with PartialGroups(runner, step, probes, regroup=True) as groups:

        def fold(joined: JoinedRows, batch: Frame) -> None:
            nonlocal rows, last, read_rows
            last = join_output(runner, join, joined, residual, read)
            rows += last.length
            read_rows += batch.length
            groups.add(partial(step, calls, last, runner), runner.budget.bytes_of(batch, last),
                       read_rows)

        def joined(batch: Frame):
            return join_in_order(JoinedRows.of(batch), inputs, joins, runner, builds)

        for whole in batches:
            for batch, rows_joined in _in_halves(whole, joined):
                if kept is not None:
                    kept.saw(rows_joined)
                    if empty is None:
                        empty = batch.take(np.zeros(0, np.int64))
                fold(rows_joined, batch)
                count += 1
        if kept is not None and empty is not None:
            fold(kept.unmatched(empty), empty)
        others = ", ".join(view.joins)
        hashed = "hashed per batch" if any(b.rehashed for b in builds.values()) else \
            "hashed once"
        unmatched = "" if kept is None else f", then the rows of {kept.name} no batch matched"
        runner.record(join, rows, streamed=True,
                      how=f"Streamed: {count:,} batches of {view.source_name} joined to "
                          f"{others} ({hashed}){unmatched}, aggregated batch by batch")
        result = groups.result(list(last.tables))
    # no row: over the (typed) empty batch
    return run_aggregate(step, last, runner) if result is None else result


def _in_halves(batch: Frame, joined):
    """(batch, its ``joined`` rows) -- or, when those are refused past the budget (a batch
    of rows that each join many: TPC-H Q9's parts), the same for each half of the batch."""
    try:
        rows = joined(batch)
    except MemoryLimitError:
        if batch.length < 2:
            raise
        half = batch.length // 2
        for part in (np.arange(half), np.arange(half, batch.length)):
            yield from _in_halves(batch.take(part), joined)
        return
    yield batch, rows


def _computed(runner, join, inputs: dict, streamed: tuple[str, Frame] | None = None) -> dict:
    """The inputs with each one the plan computes inside its join (``Deferred``) computed
    now: for the key values of another input when its join key (as planned) reads one --
    or of the ``streamed`` input's rows (name, frame), when they are all known -- (a row of
    another key cannot join: INNER and LEFT joins drop a right row without a match), else
    for every key; one whose key reads an input still to compute waits for it (Q10's
    lineitem for orders' keys, orders whole)."""
    frames = {name: frame for name, frame in inputs.items() if not isinstance(frame, Deferred)}
    known = {**frames, **dict([streamed] if streamed else [])}
    pending = [name for name in inputs if name not in frames]
    while pending:
        holders = {name: _holder(_key(join, inputs[name], name), known) for name in pending}
        name = next((name for name in pending if holders[name] is not None), None)
        if name is None:  # none keyed on a computed input: one not keyed on a pending one
            name = next((name for name in pending if not
                         tables_of(_key(join, inputs[name], name)) & set(pending)), pending[0])
        holder = holders[name]
        frames[name] = known[name] = run_deferred(
            runner, inputs[name],
            None if holder is None else runner.column(holder, _key(join, inputs[name], name)))
        pending.remove(name)
    return frames


def _key(join, deferred: Deferred, name: str):
    """The join key a deferred input (``name``) is read for, over the inputs before it."""
    return join.joins[name]["source_key"][deferred.position]


def _holder(key, frames: dict) -> Frame | None:
    """The frame of ``frames`` holding every column ``key`` reads, if any."""
    tables = tables_of(key)
    return next((frame for frame in frames.values() if tables <= set(frame.tables)), None)


def _read_whole(join, name: str, streamed: Deferred, inputs: dict, runner) -> bool:
    """Would the streamed input ``name``, deferred for the keys of the input it joins
    (``deferred_inputs``; a source for those of its partner, ``join_step._from_partner``),
    be read whole: no keys worth testing?  Only then does it stream straight away (an input
    joined into a source's partner first might still leave keys worth testing there; the
    rows are the same either way).  Not known for an entry of several joins: the rows joined
    before it may hold few keys."""
    if streamed.partner is not None:
        partner = inputs[streamed.partner]
        key = join.joins[streamed.partner]["join_key"][streamed.position]
    elif len(join.joins) == 1:
        partner, key = inputs[join.source_name], _key(join, streamed, name)
    else:  # read once the joins before it ran, for fewer keys maybe
        return False
    if isinstance(partner, Deferred):
        return False
    if not may_test_keys(streamed, partner.length):
        return True
    return scan_keys(streamed, runner.column(partner, key)) is None
