"""An Aggregate grouped by the rows of a non-equi join's left input, fed the join's pairs a
block of left rows at a time (an equi-join's: ``engine.eager_aggregate``).

A correlated subquery with an inequality (``WHERE b.id < a.id``) is decorrelated
(``planner.decorrelate``) into a join of the distinct outer values ``__outer`` with the inner
rows on that inequality, aggregated per ``__outer.__k``.  Made whole, those pairs are
quadratic: 20K outer values against 20K inner rows are 200M pairs, gigabytes.  But when the
aggregate groups by a column that is distinct over the left rows (``__k`` is), each group
holds pairs of one left row only: the groups of two blocks of left rows are disjoint, so each
block's pairs are aggregated completely on their own -- HAVING and the projections too -- and
the blocks' outputs are concatenated.  Exact, with no partial states to merge, and any
aggregate function the Aggregate step runs; memory is a block of pairs (``BLOCK_PAIRS``,
fewer when the budget is tight) plus the output.

The shape (``fused_joins``): an Aggregate whose one input is a Join step of one entry, INNER
or LEFT (a LEFT join's unmatched rows belong to their block too), without equality keys,
with nothing in either reading a subquery.  At run time a GROUP BY key must be a column of
the left input, distinct and never NULL over its rows; otherwise the join and the aggregate
run the ordinary way.  The left rows' matches come from ``engine.range_join``
(``non_equi_matches``), counted per left row before any pair is made, which sizes the
blocks.  An aggregate of count / sum / avg / min / max over a range join's runs alone is
answered without pairs at all (``engine.range_aggregate``).
"""

from __future__ import annotations

import math

import numpy as np
from sqlglot import exp, planner

from ..planner.conjuncts import and_all, conjuncts, has_subquery
from .aggregate_step import run_aggregate
from .eager_aggregate import eager_join, groups_by_left_rows, joined_then_aggregated, \
    run_eager_aggregate
from .frame import Frame, concat_frames
from .join_step import tested_pairs
from .join_output import columns_read_by, join_output
from .joined_rows import JoinedRows
from .memory import frame_bytes, step_label
from .range_aggregate import range_aggregate
from .range_join import BLOCK_PAIRS, non_equi_matches  # pairs a block holds at most
from .streamed_join import run_streamed_join, streamed_join, streamed_source

MIN_BLOCK_PAIRS = 1 << 12  # however tight the budget
_HELD_PER_PAIR = 4  # a block's pairs are held as indices, joined rows, operands, group ids


def fused_joins(runner, plan: planner.Plan) -> dict[planner.Aggregate, planner.Join]:
    """{Aggregate step: the Join step below it} of the aggregates of ``plan`` that can be fed
    block by block (not over a join input computed inside the join:
    ``engine.deferred_inputs``)."""
    found = {}
    for step in plan.dag:
        join = runner.query.derived("join aggregate", lambda: _fusable(runner, step), step)
        if join is not None and not any(dep in runner.deferred for dep in join.dependencies):
            found[step] = join
            continue
        join = runner.query.derived("eager aggregate", lambda: eager_join(runner, step), step)
        # its right input may run inside it, for the left rows' keys (not its left one)
        if join is not None and not any(dep in runner.deferred for dep in join.dependencies
                                        if dep.name == join.source_name):
            found[step] = join
            continue
        # a join fed one input batch by batch (its other inputs may run inside it)
        streamed = streamed_join(runner, step) if join is None else None
        if streamed is not None:
            found[step] = streamed[0]
    return found


def _fusable(runner, step) -> planner.Join | None:
    """The Join step below an Aggregate ``step`` of the shape it can consume by blocks."""
    if not isinstance(step, planner.Aggregate) or len(step.dependencies) != 1 or \
            not any(isinstance(key, exp.Column) and key.table for key in step.group.values()):
        return None
    join = next(iter(step.dependencies))
    if not isinstance(join, planner.Join) or len(join.joins) != 1 or \
            len(join.dependents) != 1 or len(join.dependencies) != 2 or \
            join.limit is not math.inf or join.offset:
        return None
    (name, entry), = join.joins.items()
    if (entry.get("side") or "").upper() not in ("", "INNER", "LEFT") or \
            entry.get("source_key") or not conjuncts(entry.get("condition")) or \
            name in runner.query.scalar_subqueries or \
            has_subquery(join.condition, entry.get("condition"), *join.projections,
                         *step.operands, *step.group.values(), *step.aggregations,
                         step.condition, *step.projections):
        return None
    return join


def run_join_aggregate(runner, step: planner.Aggregate, join: planner.Join,
                       frames: dict) -> Frame:
    """The Aggregate ``step``'s frame over its ``join``, from the frames of the join's
    inputs (``frames`` by step): block by block when a group key is distinct over the left
    rows, else the join made whole and aggregated."""
    if streamed_source(runner, step, join) is not None:
        return run_streamed_join(runner, step, join, frames)
    inputs = runner.inputs_by_name(join, frames)
    (name, entry), = join.joins.items()
    if entry.get("source_key"):  # an equi-join: the right rows aggregated before it
        return run_eager_aggregate(runner, step, join, inputs)
    source, right = inputs[join.source_name], inputs[name]
    if not groups_by_left_rows(step, source, right):
        return joined_then_aggregated(runner, step, join, inputs)
    left = JoinedRows.of(source)
    matches, rest = non_equi_matches(left, right, conjuncts(entry.get("condition")), runner,
                                     name)
    outer = (entry.get("side") or "").upper() == "LEFT"
    residual = runner.residual(join)
    if not outer and not rest and residual is None and not join.projections:
        answered = range_aggregate(runner, step, matches, source, right)
        if answered is not None:
            runner.record(join, matches.total, streamed=True, how="Pairs aggregated per left "
                          "row from running states over the sorted right rows, none made")
            return answered
    return _by_blocks(runner, step, join, left, right, matches, and_all(rest), outer,
                      residual)


def _by_blocks(runner, step, join, left: JoinedRows, right: Frame, matches, rest,
               outer: bool, residual) -> Frame:
    """The aggregate of each block's joined rows, concatenated (see the module's text);
    ``residual``: the join step's condition left for its joined rows."""
    per_pair = 16 + sum(frame_bytes(f) / max(f.length, 1) for f in (*left.inputs, right))
    counts = np.maximum(matches.counts, 1) if outer else matches.counts
    read = columns_read_by(step, join, residual)
    what = step_label(step)
    outputs, held, rows, empty = [], 0, 0, None
    blocks = _blocks(counts, _block_pairs(runner, per_pair))
    for begin, end in blocks:
        left_idx, right_idx = matches.pairs(begin, end)
        if rest is not None and len(left_idx):
            left_idx, right_idx = tested_pairs(left, right, left_idx, right_idx, rest, runner)
        if outer:
            left_idx, right_idx = _with_unmatched(begin, end, left_idx, right_idx)
        runner.budget.check(held + int(len(left_idx) * per_pair * _HELD_PER_PAIR), what)
        frame = _joined(runner, join, left, right, left_idx, right_idx, residual, read)
        rows += frame.length
        if not frame.length:
            empty = frame
            continue
        output = run_aggregate(step, frame, runner)
        outputs.append(output)
        held += runner.budget.bytes_of(output)
    runner.record(join, rows, streamed=True, how=f"Aggregated by blocks of left rows: "
                  f"{len(blocks):,} block{'s' if len(blocks) != 1 else ''}")
    if outputs:
        return concat_frames(outputs)
    if empty is None:  # no left rows: the join's (typed) empty output
        none = np.zeros(0, np.int64)
        empty = _joined(runner, join, left, right, none, none, residual, read)
    return run_aggregate(step, empty, runner)


def _joined(runner, join, left: JoinedRows, right: Frame, left_idx: np.ndarray,
            right_idx: np.ndarray, residual, read: list | None) -> Frame:
    """The Join step's output for these pairs (``join_output``)."""
    return join_output(runner, join, left.joined(left_idx, right, right_idx), residual, read)


def _block_pairs(runner, per_pair: float) -> int:
    """Pairs per block: ``BLOCK_PAIRS``, fewer when what is left of the budget is tight."""
    fits = int(runner.budget.room() // (2 * _HELD_PER_PAIR * per_pair))
    return max(MIN_BLOCK_PAIRS, min(BLOCK_PAIRS, fits))


def _blocks(counts: np.ndarray, size: int) -> list[tuple[int, int]]:
    """Consecutive ranges ``(begin, end)`` of the left rows, each with at most ``size`` pairs
    (``counts``: per left row) -- a row with more alone."""
    ends = np.cumsum(counts)
    blocks, begin = [], 0
    while begin < len(counts):
        before = int(ends[begin - 1]) if begin else 0
        end = int(np.searchsorted(ends, before + size, side="right"))
        end = max(end, begin + 1)
        blocks.append((begin, end))
        begin = end
    return blocks


def _with_unmatched(begin: int, end: int, left_idx: np.ndarray, right_idx: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
    """A LEFT join's pairs of left rows ``begin .. end - 1`` and each of those rows without
    any, paired with no right row (-1)."""
    seen = np.zeros(end - begin, dtype=bool)
    seen[left_idx - begin] = True
    unmatched = np.flatnonzero(~seen).astype(np.int64) + begin
    return np.concatenate([left_idx, unmatched]), \
        np.concatenate([right_idx, np.full(len(unmatched), -1, np.int64)])
