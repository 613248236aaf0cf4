"""Aggregates joined on their group key, computed only for the keys that can match.

sqlglot decorrelates a correlated subquery into a CTE that groups a whole table by the
correlation key, joined back to the outer rows on that key.  TPC-H Q17 averages ``l_quantity``
for all 200,000 parts and keeps the ~200 the outer query has; Q21 builds 1.5M per-order groups
and keeps some 70,000.  When such an aggregate streams from an array and its join can only keep
groups that match (an INNER join, or a LEFT join with the aggregate on the right), the join step
runs it *when it gets to it*: the outer rows' key values are known by then, and only the input
rows whose group key is one of them are aggregated (``try_streamed_aggregate(keys=...)``).  A
group with any other key matches no outer row, so the join's output is the same; the work
shrinks from the whole array to the keys joined so far.  When the group key is a stored
integer column (no projection on the way) and the keys fit a presence bitmap, each tile's
column is tested before any other column is gathered, as for a deferred array scan; the scan
still reads every tile.
Not an aggregate with HAVING: that one usually keeps few groups, and joined first (a small
unique-key join, ``engine.join_step``) it filters the other joins' rows instead (Q18).

``deferred_inputs`` finds such join inputs when a plan runs; ``run_deferred`` computes one for
the rows joined so far; ``engine.key_filter`` tests the keys as the join compares them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import pyarrow as pa
from sqlglot import exp, planner

from ..catalog import ArraySource
from ..planner.conjuncts import conjuncts, has_subquery
from .fields import field_arrow_type, stored_field
from .frame import Frame
from .hash_table import is_exact_integer
from .key_filter import JoinedKeys, KeyFilter
from .streamed_aggregate import streamed_chain, try_streamed_aggregate
from .streamed_result import chain_to_table


HASHED_KEYS_MAX = 1 << 16  # keys without a presence table: past this, aggregate every row


SCANNED_CELLS_MIN = 1 << 16  # a plain scan is deferred only over arrays at least this big
PARTNER_FIRST_CELLS_MIN = 1 << 20  # a source read for a deferred partner's keys: this big
KEYS_PER_CELL_MAX = 8  # keys are tested only when the joined rows are under 1/8 of the cells
DISTINCT_ROWS_PER_CELL_MAX = 2  # ... or their distinct keys, counted when the rows are under 1/2


@dataclass(frozen=True)
class Deferred:
    """A join input computed inside the join: a scan of an aggregate's CTE, or an array's
    rows (``aggregate`` None)."""

    scan: planner.Scan  # the join's input step
    aggregate: planner.Aggregate | None  # the CTE's step, streamed from an array
    chain: tuple  # the steps below, bottom-up from the array's scan (run inside the join)
    position: int  # the join key pair that is one of the aggregate's group keys
    group_key: exp.Expression  # that group key over the aggregate's input rows, or the
    #                            array's stored column (its name) the join key reads
    cells: int  # the array's cells: keys are worth testing only for far fewer joined rows
    span: int | None = None  # a scanned key column's value range (hi - lo + 1), if known
    stored: str | None = None  # an aggregate's group key as the array's stored integer column
    partner: str | None = None  # a deferred join source: the join to start from instead
    # an aggregate over inner joins: that Join step, the deferred scan of its input holding
    # the group key (read for the keys), and the frames of its other inputs (``bound``)
    join: planner.Join | None = None
    source: Deferred | None = None
    frames: tuple = ()

    @property
    def parts(self) -> tuple:
        """The steps that run inside the join, the input step first."""
        inner = () if self.source is None else (self.join, *self.source.parts)
        return (self.scan, *([] if self.aggregate is None else [self.aggregate]), *self.chain,
                *inner)

    @property
    def outside(self) -> list:
        """The steps whose frames an aggregate over joins reads from the plan: its join's
        inputs but the deferred one."""
        if self.join is None:
            return []
        return [step for step in self.join.dependencies if step is not self.source.scan]

    def bound(self, frames: dict) -> Deferred:
        """This input with the frames it reads from the plan (``outside``)."""
        return replace(self, frames=tuple((step, frames[step]) for step in self.outside))


def deferred_inputs(runner, plan: planner.Plan) -> dict[planner.Step, Deferred]:
    """The join inputs of ``plan`` worth computing inside their join, by input step."""
    found = {}
    for step in plan.dag:
        if isinstance(step, planner.Join):
            for dependency in step.dependencies:
                deferred = _deferrable(runner, step, dependency) or \
                    _deferrable_scan(runner, step, dependency)
                if deferred is not None:
                    found[dependency] = deferred
            source = _deferrable_source(runner, step, found)
            if source is not None:
                found[source.scan] = source
    for deferred in list(found.values()):  # a join run inside another: its inputs as planned
        for step in deferred.outside + ([] if deferred.join is None else [deferred.source.scan]):
            found.pop(step, None)
    return _exclusive(found)


def _exclusive(found: dict) -> dict:
    """``found`` without the inputs whose steps another step reads too: a CTE's steps read by
    two scans run inside their joins only when both scans are deferred (TPC-H Q2 reads
    partsupp for the parts of both its query and its subquery), else once, for everyone."""
    while True:
        inside = {part for deferred in found.values() for part in deferred.parts}
        shared = [step for step, deferred in found.items()
                  if any(set(part.dependents) - inside for part in deferred.parts[1:])]
        if not shared:
            return found
        for step in shared:
            del found[step]


def _joined_input(runner, join_step: planner.Join, scan) -> dict | None:
    """The join entry of ``scan`` when it is a right side whose unmatched rows the join
    drops (INNER, LEFT) and the join is all that reads it."""
    join = join_step.joins.get(scan.name)
    if join is None or (join.get("side") or "").upper() not in ("", "INNER", "LEFT") or \
            scan.name in runner.query.scalar_subqueries:
        return None
    if not isinstance(scan, planner.Scan) or scan.projections or \
            set(scan.dependents) != {join_step}:
        return None
    return join


def _deferrable(runner, join_step: planner.Join, scan) -> Deferred | None:
    join = _joined_input(runner, join_step, scan)
    if join is None or len(scan.dependencies) != 1:
        return None
    aggregate = next(iter(scan.dependencies))
    if not isinstance(aggregate, planner.Aggregate) or set(aggregate.dependents) != {scan} or \
            aggregate.limit != float("inf") or aggregate.offset or aggregate.condition:
        return None  # HAVING: few groups, best joined early (Q18 keeps 57 of 1.5M orders)
    chain = streamed_chain(runner, aggregate)
    if chain is None:
        return _deferrable_over_joins(runner, join, scan, aggregate)
    source, _window = runner.catalog.resolve(chain[0].source, runner.sql)
    if not isinstance(source, ArraySource):
        return None
    array = runner.open_array(source, _window)
    for position, key in enumerate(join.get("join_key") or []):
        group_key = _group_key(aggregate, key, scan.name)
        if group_key is not None:
            # without projections below, the group key names a stored column as it is
            plain = not any(step.projections for step in chain)
            stored = _stored_key([chain[-1]], group_key, array) if plain else None
            return Deferred(scan, aggregate, tuple(chain), position, group_key,
                            array_cells(array), stored=stored)
    return None


def _deferrable_over_joins(runner, join: dict, scan, aggregate) -> Deferred | None:
    """An aggregate over inner joins grouped by a stored integer column of one of the joined
    arrays: TPC-H Q2's lowest supply cost of each part among one region's suppliers, wanted
    for 747 parts, computed for 117,422.  Run inside the join, that array is read only for
    the keys joined so far, then joined and aggregated: a row it leaves out has a key no
    joined row has, and inner joins and a row-by-row join condition drop or keep the rows it
    makes one by one, so every group joined is the same."""
    if len(aggregate.dependencies) != 1:
        return None
    inner = next(iter(aggregate.dependencies))
    if not isinstance(inner, planner.Join) or set(inner.dependents) != {aggregate} or \
            inner.projections or not _row_by_row(inner) or any(
                (entry.get("side") or "").upper() not in ("", "INNER")
                for entry in inner.joins.values()):
        return None
    for position, key in enumerate(join.get("join_key") or []):
        group_key = _group_key(aggregate, key, scan.name)
        if not isinstance(group_key, exp.Column):
            continue
        holder = next((step for step in inner.dependencies if step.name == group_key.table),
                      None)
        if holder is None or set(holder.dependents) != {inner} or holder.projections:
            continue
        source = _keyed_scan(runner, holder, [group_key])
        if source is not None:
            return Deferred(scan, aggregate, (), position, group_key, source.cells,
                            source.span, join=inner, source=source)
    return None


def _group_key(aggregate: planner.Aggregate, key: exp.Expression, alias: str):
    """The group expression behind the CTE column ``key`` (``alias.column``), if it is one."""
    if not isinstance(key, exp.Column) or key.table != alias:
        return None
    for projection in aggregate.projections:
        if projection.alias_or_name == key.name:
            value = projection.unalias()
            if isinstance(value, exp.Column) and value.name in aggregate.group:
                return aggregate.group[value.name]
    return None


def _deferrable_scan(runner, join_step: planner.Join, scan) -> Deferred | None:
    """An array's rows joined on one of its integer columns (through CTE scans and
    filter/project steps, each read by the next only): read inside the join, only the cells
    whose key the rows joined so far have (TPC-H Q5 reads the lineitem rows of 227K orders,
    not all 6M)."""
    join = _joined_input(runner, join_step, scan)
    return None if join is None else _keyed_scan(runner, scan, join.get("join_key") or [])


def _deferrable_source(runner, join_step: planner.Join, found: dict) -> Deferred | None:
    """The Join step's source when it is such an array scan and the first leading inner join
    -- with an input that is not deferred itself -- keys on one of its integer columns: the
    join then starts from that input and reads the source inside it for the input's keys
    (TPC-H Q17 lists lineitem first: its 6,088 rows of the 204 parts, not all 6M, are read).
    Inner joins commute, so the rows are the same."""
    scan = next((d for d in join_step.dependencies if d.name == join_step.source_name), None)
    if not isinstance(scan, planner.Scan) or scan.projections or \
            set(scan.dependents) != {join_step} or scan in found:
        return None
    name, join = next(iter(join_step.joins.items()), (None, None))
    # an ON condition beyond the keys is fine: it only drops pairs whose keys match
    if join is None or (join.get("side") or "").upper() not in ("", "INNER") or \
            not join.get("source_key"):
        return None
    partner = next((d for d in join_step.dependencies if d.name == name), None)
    if partner is None or name in runner.query.scalar_subqueries:
        return None
    if partner in found:
        if not _filtered_first(runner, scan, found[partner]):
            return None
    source = _keyed_scan(runner, scan, join["source_key"], partner=name)
    if source is not None:
        found.pop(partner, None)
    return source


def _filtered_first(runner, scan, partner: Deferred) -> bool:
    """Should the partner -- itself an array scan deferred for the source's keys -- be read
    first, and the source for its keys?  When the partner's cells are filtered and the
    source's are not: TPC-H Q12's lineitem keeps 31K of 6M rows by its dates and ship modes,
    so orders is read for those orders, not whole (1.5M rows hashed for the join).  Or when
    both are filtered and the partner is the far smaller array: Q19 reads lineitem for the
    485 parts its brands and sizes keep.  Not for a source under ``PARTNER_FIRST_CELLS_MIN``
    cells: Q5 reads customer's 150K rows whole, then orders for the 30K customers of ASIA,
    not orders' 228K rows of 1994 and then customer for their keys."""
    if partner.aggregate is not None or not partner.chain:
        return False
    found = _array_chain(runner, scan)
    if found is None:
        return False
    chain, _array, cells = found
    if cells < PARTNER_FIRST_CELLS_MIN or not _filtered([partner.scan, *partner.chain], runner):
        return False
    return not _filtered(chain, runner) or partner.cells * KEYS_PER_CELL_MAX <= cells


def _filtered(steps, runner) -> bool:
    """Does a scan among ``steps`` filter its rows?"""
    return any(conjuncts(runner.scan_condition(step)) for step in steps
               if isinstance(step, planner.Scan))


def _keyed_scan(runner, scan, keys: list, partner: str | None = None) -> Deferred | None:
    """``scan`` deferred on the first of ``keys`` (its side of the join's key pairs) that is
    a stored integer column of its array, if the scan is such an array chain."""
    found = _array_chain(runner, scan)
    if found is None:
        return None
    chain, array, cells = found
    for position, key in enumerate(keys):
        stored = _stored_key(chain, key, array)
        if stored is not None:
            return Deferred(scan, None, tuple(reversed(chain[1:])), position, stored, cells,
                            _span(array, stored), partner=partner)
    return None


def keyed_on(runner, deferred: Deferred, key: exp.Expression) -> Deferred | None:
    """A deferred array scan read for the values of ``key`` (a column of the scan's rows)
    instead of its planned join key, when ``key`` is a stored integer column; else None."""
    if deferred.aggregate is not None or not deferred.chain:
        return None
    base = deferred.chain[0]
    source, window = runner.catalog.resolve(base.source, runner.sql)
    array = runner.open_array(source, window)
    stored = _stored_key([deferred.scan, *reversed(deferred.chain)], key, array)
    if stored is None:
        return None
    return replace(deferred, group_key=stored, span=_span(array, stored), partner=None)


def _array_chain(runner, scan) -> tuple[list, object, int] | None:
    """(``scan`` and the steps below it down to an array's scan, top-down; the array; its
    cells) when every step reads only the one below, row by row, and the array holds at
    least ``SCANNED_CELLS_MIN`` cells; else None."""
    bottom_up = chain_to_table(scan, exclusive=False)  # others may read the steps below too
    if bottom_up is None or len(bottom_up) == 1 or \
            not all(_row_by_row(s) for s in bottom_up):  # (``_exclusive``)
        return None
    chain = bottom_up[::-1]
    source, window = runner.catalog.resolve(chain[-1].source, runner.sql)
    if not isinstance(source, ArraySource):
        return None
    array = runner.open_array(source, window)
    cells = array_cells(array)
    if cells < SCANNED_CELLS_MIN:
        return None
    return chain, array, cells


def _span(array, name: str) -> int | None:
    """How many values the stored integer column ``name`` can hold over the array's
    fragments (its non-empty domain, or the fragments' min/max statistics), if known."""
    dims = [d.name for d in array.schema.dimensions]
    if name in dims:
        domain = array.non_empty_domain()
        return None if domain is None else int(domain[dims.index(name)][1]) - \
            int(domain[dims.index(name)][0]) + 1
    lows, highs = [], []
    for fragment in array.fragments:
        try:
            low = fragment.metadata.fragment_min_value(name)
            high = fragment.metadata.fragment_max_value(name)
        except Exception:  # an older format without fragment statistics
            return None
        if low is None or high is None:
            return None
        lows.append(int(low))
        highs.append(int(high))
    return max(highs) - min(lows) + 1 if lows else None


def array_cells(array) -> int:
    """The cells the array's fragments hold (written ones, not yet merged)."""
    return sum(f.metadata.cell_count for f in array.fragments)


def _row_by_row(step) -> bool:
    """Does ``step`` treat each row on its own, so that rows left out below it change
    nothing else: no LIMIT / OFFSET, no window or aggregate call (a window over the CTE's
    rows counts the rows the key test would drop), no subquery."""
    nodes = [n for n in (step.condition, *step.projections) if n is not None]
    return step.limit == float("inf") and not step.offset and not has_subquery(*nodes) and \
        not any(n.find(exp.Window, exp.AggFunc) for n in nodes)


def _stored_key(chain: list, key: exp.Expression, array) -> str | None:
    """The stored integer column of the chain's array that the join key ``key`` (a column
    of the chain's top step) is, through the projections on the way down, or None.  Its
    values must be the SQL values (not an enumeration's label indices)."""
    if not isinstance(key, exp.Column) or key.table != chain[0].name:
        return None
    name = stored_field(chain[1:], key.name, array)
    if name is None:
        return None
    arrow_type = field_arrow_type(array, name)
    return name if is_exact_integer(arrow_type) else None


def run_deferred(runner, deferred: Deferred, values) -> Frame:
    """The join input for the rows joined so far (``values``: their side of the deferred
    key pair; None: for any key, the whole input)."""
    started = time.perf_counter()
    if deferred.join is not None:
        return _run_over_joins(runner, deferred, values)
    keys = _key_filter(deferred, values)
    if deferred.aggregate is None:
        return run_scan(runner, deferred, _tested(deferred, keys))
    # a semi hash join per batch over very many keys costs more than it saves
    if keys is not None and keys.present is None and len(keys) > HASHED_KEYS_MAX:
        keys = None
    frame, _ = try_streamed_aggregate(
        runner, deferred.aggregate,
        keys=None if keys is None else JoinedKeys(deferred.group_key, keys, deferred.stored))
    runner.record(deferred.aggregate, frame.length, time.perf_counter() - started,
                  keys=None if keys is None else len(keys))
    started = time.perf_counter()
    scanned = runner.run_step(deferred.scan, {deferred.aggregate: frame})
    runner.record(deferred.scan, scanned.length, time.perf_counter() - started)
    return scanned


def _run_over_joins(runner, deferred: Deferred, values) -> Frame:
    """An aggregate over joins (``_deferrable_over_joins``) for the joined key ``values``:
    the group key's array read for them, joined with the other inputs, aggregated."""
    source = deferred.source
    keys = scan_keys(source, values)
    frames = dict(deferred.frames)
    frames[source.scan] = run_scan(runner, source, keys)
    for step in (deferred.join, deferred.aggregate, deferred.scan):
        started = time.perf_counter()
        frame = runner.run_step(step, frames)
        runner.record(step, frame.length, time.perf_counter() - started,
                      keys=None if keys is None or step is not deferred.aggregate else len(keys))
        frames = {step: frame}
    return frame


def _key_filter(deferred: Deferred, values) -> KeyFilter | None:
    """The joined key ``values`` as a ``KeyFilter``, or None when their distinct values are
    as many as the array's cells, nearly: testing them would cost more than it saves (Q12's
    1.5M orders).  Joined rows repeat keys: Q9's 319K lineitem rows hold 10,664 part keys,
    which keep 43K of partsupp's 800K cells.  Their distinct values are counted only when the
    rows are at most half the cells (counting costs less than the scan it may shrink)."""
    if values is None:
        return None
    if not few_enough(deferred, len(values)) and \
            len(values) * DISTINCT_ROWS_PER_CELL_MAX > deferred.cells:
        return None
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    keys = KeyFilter.of_values(values)
    return keys if few_enough(deferred, len(keys)) else None


def may_test_keys(deferred: Deferred, rows: int) -> bool:
    """Could the keys of ``rows`` joined rows be worth testing in a deferred array scan?  A
    quick look before any key is read: no when they are as many as the array's cells, or
    (if distinct) as many as half the values its key column holds."""
    return few_enough(deferred, rows) and not _most_values(deferred, rows)


def few_enough(deferred: Deferred, keys: int) -> bool:
    """Are ``keys`` far fewer than the array's cells (else testing them costs more than it
    saves)?"""
    return keys * KEYS_PER_CELL_MAX <= deferred.cells


def _most_values(deferred: Deferred, keys: int) -> bool:
    """Do ``keys`` (distinct) cover half the values the key column holds or more?"""
    return deferred.span is not None and 2 * keys >= deferred.span


def scan_keys(deferred: Deferred, values) -> KeyFilter | None:
    """The keys a deferred array scan tests for the joined key ``values``, or None."""
    return _tested(deferred, _key_filter(deferred, values))


def _tested(deferred: Deferred, keys: KeyFilter | None) -> KeyFilter | None:
    """``keys`` when a deferred array scan tests them: not without a presence table (the
    join itself does that matching), nor covering half the column's values or more (Q13:
    every customer), which the join matches anyway."""
    if keys is None or keys.present is None or _most_values(deferred, len(keys)):
        return None
    return keys


def run_scan(runner, deferred: Deferred, keys: KeyFilter | None) -> Frame:
    """The deferred chain from its array scan up, the scan keeping only ``keys``' cells (all
    of them without keys)."""
    frames: dict = {}
    for step in deferred.chain:
        started = time.perf_counter()
        if step is deferred.chain[0]:
            frame = runner.scan_step(step, None if keys is None else (deferred.group_key, keys))
            runner.record(step, frame.length, time.perf_counter() - started,
                          keys=None if keys is None else len(keys))
        else:
            frame = runner.run_step(step, frames)
            runner.record(step, frame.length, time.perf_counter() - started)
        frames = {step: frame}
    started = time.perf_counter()
    frame = runner.run_step(deferred.scan, frames)
    runner.record(deferred.scan, frame.length, time.perf_counter() - started)
    return frame
