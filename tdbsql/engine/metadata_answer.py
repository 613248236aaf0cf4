"""Answer ``SELECT count(*), sum(x), min(y) ... FROM array [WHERE ...]`` from tile metadata.

The plan shape is Aggregate (no GROUP BY; only count/sum/min/max of plain columns) over a
filter-only Join over a Scan of an array.  ``planner.metadata_aggregates`` decides per tile
whether its stored count/sum/min/max/null count is the answer (tile wholly inside the ranges,
every conjunct ALWAYS, no other fragment or delete able to change its cells) and decodes only the
other tiles.  When it cannot answer soundly it says so and the ordinary plan runs.
"""

from __future__ import annotations

import pyarrow as pa
from sqlglot import exp, planner

from ..catalog import ArraySource
from ..planner.conjuncts import and_all, conjuncts
from .metadata_residual import answer_from_metadata
from ..planner.ranges import scan_ranges
from .aggregate_step import FUNCTIONS, is_count_star, star_operands
from .frame import Frame
from .project import filter_project
from .scan_step import unqualified

_ANSWERABLE = ("count", "sum", "min", "max")


def try_metadata_answer(runner, step) -> tuple[Frame, list] | None:
    """(the aggregate step's frame, the steps it replaces) or None."""
    shape = _shape(step)
    if shape is None:
        return None
    join, scan = shape
    aggregates = _aggregates(step)
    if aggregates is None:
        return None
    source, window = runner.catalog.resolve(scan.source, runner.sql)
    if not isinstance(source, ArraySource):
        return None
    array = runner.open_array(source, window)
    condition = and_all(conjuncts(scan.condition) + conjuncts(join.condition)
                        + runner.pushed.get(id(scan), []))
    predicate = unqualified(condition)
    stats: dict = {}
    values = answer_from_metadata(array, scan_ranges(predicate, array.schema), predicate,
                                  [a for _, a in aggregates], stats)
    if values is None:
        return None
    table = pa.table({name: _column(value) for (name, _), value in zip(aggregates, values)})
    runner.scan_stats[id(step)] = stats
    frame = Frame({step.name: table, scan.name: table}, 1)
    return filter_project(runner, step, frame), [join, scan]


def _shape(step):
    if not isinstance(step, planner.Aggregate) or step.group or len(step.dependencies) != 1:
        return None
    join = next(iter(step.dependencies))
    if not isinstance(join, planner.Join) or join.joins or join.projections or \
            len(join.dependencies) != 1 or len(join.dependents) != 1:
        return None
    scan = next(iter(join.dependencies))
    if not isinstance(scan, planner.Scan) or not isinstance(scan.source, exp.Table) or \
            scan.projections or scan.dependencies or len(scan.dependents) != 1:
        return None
    return join, scan


def _aggregates(step) -> list | None:
    """(output name, (func, column)) per aggregation, or None unless every one is a bare
    count(*) / count(col) / sum / min / max of a column (no DISTINCT, nothing around it)."""
    stars = star_operands(step)
    if len(stars) != len(step.operands):
        return None
    out = []
    for expression in step.aggregations:
        call = expression.unalias()
        if is_count_star(call, stars):
            out.append((expression.alias_or_name, ("count_star", None)))
            continue
        func = "count" if isinstance(call, exp.Count) else FUNCTIONS.get(type(call))
        if func not in _ANSWERABLE or not isinstance(call.this, exp.Column):
            return None
        out.append((expression.alias_or_name, (func, call.this.name)))
    return out


def _column(value) -> pa.Array:
    if isinstance(value, pa.Scalar):
        return pa.array([value.as_py()], value.type)
    if isinstance(value, pa.Array):
        return value
    if isinstance(value, int) and not -2**63 <= value < 2**63:
        return pa.array([value], pa.decimal128(38, 0))
    return pa.array([value])
