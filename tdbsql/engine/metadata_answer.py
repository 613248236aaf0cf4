"""Answer ``SELECT count(*), sum(x), min(y) ... FROM array [WHERE ...]`` from tile metadata.

The plan shape is Aggregate (no GROUP BY; its calls count/sum/min/max of plain columns, any
expression around them) over filter-only steps over a Scan of an array.  ``planner.metadata_aggregates`` decides per tile
whether its stored count/sum/min/max/null count is the answer (tile wholly inside the ranges,
every conjunct ALWAYS, no other fragment or delete able to change its cells) and decodes only the
other tiles.  When it cannot answer soundly it says so and the ordinary plan runs.
"""

from __future__ import annotations

import pyarrow as pa
from sqlglot import planner

from ..catalog import ArraySource
from ..planner.conjuncts import and_all, conjuncts, unqualified
from ..planner.ranges import scan_ranges
from .aggregate_step import call_text, finish_aggregate
from .fields import field_arrow_type
from .grouping import exact_integers
from .frame import Frame
from .metadata_groups import metadata_calls
from .metadata_residual import answer_from_metadata
from .partial_aggregate import step_calls
from .streamed_aggregate import chain_below

def try_metadata_answer(runner, step) -> tuple[Frame, list] | None:
    """(the aggregate step's frame, the steps it replaces) or None."""
    if not isinstance(step, planner.Aggregate) or step.group:
        return None
    chain = chain_below(step)
    if chain is None:
        return None
    scan, filters = chain
    if scan.projections or any(f.projections for f in filters):
        return None
    calls, aggregates = runner.query.derived("metadata calls", lambda: _calls(step), step)
    if aggregates is None:
        return None
    source, window = runner.catalog.resolve(scan.source, runner.sql)
    if not isinstance(source, ArraySource):
        return None
    array = runner.open_array(source, window)
    condition = and_all(conjuncts(runner.scan_condition(scan))
                        + [c for f in filters for c in conjuncts(runner.residual(f))])
    predicate = unqualified(condition)
    stats: dict = {}
    values = answer_from_metadata(array, scan_ranges(predicate, array.schema), predicate,
                                  aggregates, stats, runner.budget)
    if values is None:
        return None
    runner.scan_stats[id(step)] = stats
    by_text = {text: _column(value, _extreme_type(array, func, column))
               for text, value, (func, column) in zip(calls, values, aggregates)}
    frame = finish_aggregate(step, runner, {}, 1,
                             lambda call: by_text[call_text(runner, call)], [scan.name])
    return frame, [scan, *filters]


def _calls(step) -> tuple[dict, list | None]:
    """The step's calls by their text, and ``metadata_calls`` of them (worked out once a plan)."""
    calls = step_calls(step)
    return calls, metadata_calls(step, calls)


def _extreme_type(array, func: str, column: str | None) -> pa.DataType | None:
    """The Arrow type min / max of a numeric or temporal column has (the column's, as when its
    tiles are read: an INTEGER column's min is INTEGER, not BIGINT; a TIMESTAMP_MS's a
    TIMESTAMP_MS); None otherwise."""
    if func not in ("min", "max"):
        return None
    found = field_arrow_type(array, column)
    numeric = pa.types.is_integer(found) or pa.types.is_floating(found)
    return found if numeric or pa.types.is_temporal(found) else None


def _column(value, typed: pa.DataType | None = None) -> pa.Array:
    if isinstance(value, pa.Scalar):  # as_py would lose nanoseconds
        return pa.array([value], value.type)
    if typed is not None and value is not None:
        return pa.array([value], typed)
    if isinstance(value, pa.Array):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return exact_integers([value])
    return pa.array([value])
