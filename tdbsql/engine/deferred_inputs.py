"""Aggregates joined on their group key, computed only for the keys that can match.

sqlglot decorrelates a correlated subquery into a CTE that groups a whole table by the
correlation key, joined back to the outer rows on that key.  TPC-H Q17 averages ``l_quantity``
for all 200,000 parts and keeps the ~200 the outer query has; Q21 builds 1.5M per-order groups
and keeps some 70,000.  When such an aggregate streams from an array and its join can only keep
groups that match (an INNER join, or a LEFT join with the aggregate on the right), the join step
runs it *when it gets to it*: the outer rows' key values are known by then, and only the input
rows whose group key is one of them are aggregated (``try_streamed_aggregate(keys=...)``).  A
group with any other key matches no outer row, so the join's output is the same; the work
shrinks from the whole array to the keys joined so far (the scan still reads every tile).
Not an aggregate with HAVING: that one usually keeps few groups, and joined first (a small
unique-key join, ``engine.join_step``) it filters the other joins' rows instead (Q18).

``deferred_inputs`` finds such join inputs when a plan runs; ``run_deferred`` computes one for
the rows joined so far; ``engine.key_filter`` tests the keys as the join compares them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp, planner

from ..catalog import ArraySource
from .frame import Frame
from .key_filter import KeyFilter
from .pipeline import streamed_chain, try_streamed_aggregate


HASHED_KEYS_MAX = 1 << 16  # keys without a presence table: past this, aggregate every row


@dataclass(frozen=True)
class Deferred:
    """A join input computed inside the join: a scan of an aggregate's CTE."""

    scan: planner.Scan  # the join's input step
    aggregate: planner.Aggregate  # the CTE's step, streamed from an array
    chain: tuple  # the steps the aggregate streams from (run inside it)
    position: int  # the join key pair that is one of the aggregate's group keys
    group_key: exp.Expression  # that group key, over the aggregate's input rows


def deferred_inputs(runner, plan: planner.Plan) -> dict[planner.Step, Deferred]:
    """The join inputs of ``plan`` worth computing inside their join, by input step."""
    found = {}
    for step in plan.dag:
        if isinstance(step, planner.Join):
            for dependency in step.dependencies:
                deferred = _deferrable(runner, step, dependency)
                if deferred is not None:
                    found[dependency] = deferred
    return found


def _deferrable(runner, join_step: planner.Join, scan) -> Deferred | None:
    join = join_step.joins.get(scan.name)
    if join is None or (join.get("side") or "").upper() not in ("", "INNER", "LEFT") or \
            scan.name in runner.query.scalar_subqueries:
        return None
    if not isinstance(scan, planner.Scan) or scan.projections or \
            set(scan.dependents) != {join_step} or len(scan.dependencies) != 1:
        return None
    aggregate = next(iter(scan.dependencies))
    if not isinstance(aggregate, planner.Aggregate) or set(aggregate.dependents) != {scan} or \
            aggregate.limit != float("inf") or aggregate.offset or aggregate.condition:
        return None  # HAVING: few groups, best joined early (Q18 keeps 57 of 1.5M orders)
    chain = streamed_chain(runner, aggregate)
    if chain is None:
        return None
    source, _window = runner.catalog.resolve(chain[0].source, runner.sql)
    if not isinstance(source, ArraySource):
        return None
    for position, key in enumerate(join.get("join_key") or []):
        group_key = _group_key(aggregate, key, scan.name)
        if group_key is not None:
            return Deferred(scan, aggregate, tuple(chain), position, group_key)
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


def run_deferred(runner, deferred: Deferred, left: Frame, source_key: exp.Expression) -> Frame:
    """The join input for the rows ``left`` joined so far (``source_key``: their side of the
    deferred key pair)."""
    started = time.perf_counter()
    values = runner.column(left, source_key)
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    keys = KeyFilter(pc.unique(values.drop_null()))  # a NULL key matches nothing
    # a semi hash join per batch over very many keys costs more than it saves
    wanted = keys if keys.present is not None or len(keys) <= HASHED_KEYS_MAX else None
    frame, _ = try_streamed_aggregate(runner, deferred.aggregate,
                                      keys=None if wanted is None else (deferred.group_key, wanted))
    runner.record(deferred.aggregate, frame.length, time.perf_counter() - started,
                  keys=len(keys))
    started = time.perf_counter()
    scanned = runner.run_step(deferred.scan, {deferred.aggregate: frame})
    runner.record(deferred.scan, scanned.length, time.perf_counter() - started)
    return scanned
