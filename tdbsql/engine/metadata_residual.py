"""Aggregates from tile metadata plus a scan of the rest: the engine half of
``planner.metadata_aggregates``.

In: an opened ``Array``, dimension ``Ranges``, the pushed-down predicate (sqlglot, unqualified
column names, or None) and the aggregates as ``(func, column)`` pairs, func in count_star /
count / sum / min / max (column None for count_star).  Out: one Python value per aggregate, as
SQL over the scanned rows gives it (count -> int, sum of integers -> exact int, sum over no
value -> None, min/max typed like the column's Arrow values), or None when no tile can be
answered from metadata (the caller then runs the ordinary plan).

The planner picks the tiles whose metadata is the answer; the tiles it did not pick are decoded
by the ordinary scan (told to leave the answered ones out), the predicate evaluated on their
rows, and their per-aggregate values (``engine.grouping``) folded into the partial results.
"""

from __future__ import annotations

import time

import numpy as np
import pyarrow as pa
from sqlglot import exp

from ..planner.metadata_aggregates import MetadataPlan, plan_from_metadata
from ..planner.pruning import Ranges
from .column import Column
from .evaluate import where_mask
from .fields import column_to_arrow, field_arrow_type
from .frame import rows_only
from .grouping import Groups, aggregate
from .parallel import map_ordered
from .scan import open_scan
from .value_types import storage_integers


def answer_from_metadata(array, ranges: Ranges, predicate, aggregates: list[tuple[str, str | None]],
                         stats: dict | None = None, budget=None) -> list | None:
    """See the module docstring.  ``stats``, when given, receives the residual scan's funnel
    counters (``tiles_from_metadata`` counts the tiles answered from metadata)."""
    plan = plan_from_metadata(array, ranges, predicate, aggregates)
    if plan is None:
        return None
    _residual(array, ranges, predicate, aggregates, plan, stats, budget)
    values = [partial.result(lambda raw, column=column: _to_python(array, column, raw))
              for partial, (_, column) in zip(plan.partials, aggregates)]
    return [_temporal_back(array, column, value) if func in ("min", "max") else value
            for value, (func, column) in zip(values, aggregates)]


def _residual(array, ranges, predicate, aggregates, plan: MetadataPlan, stats, budget) -> None:
    """Decode the tiles not answered from metadata and fold their rows into the partials."""
    wanted = {c for _, c in aggregates if c}
    if predicate is not None:
        wanted |= {c.name for c in predicate.find_all(exp.Column)}
    schema = array.schema
    fields = [name for name in schema.fields_by_name() if name in wanted] or \
        [schema.dimensions[0].name]
    started = time.perf_counter()
    reader = open_scan(array, fields, ranges, predicate, skip_tiles=plan.answered, budget=budget)
    rows = 0
    text = None if predicate is None else predicate.sql(dialect="duckdb")
    tasks = reader.tasks() or [None]
    aggregated = {c for _, c in aggregates if c}
    for task, result in zip(tasks, map_ordered(reader.read, tasks)):  # tile by tile
        rows += result.length
        columns, length, filtering = reader.filtered(task, result, predicate)
        condition = filtering.residual
        # a column only the stored-value filter read is not needed any more
        needed = aggregated | filtering.residual_columns
        converted = {f: column_to_arrow(array, f, columns[f]) for f in fields if f in needed}
        table = pa.table(converted) if converted else rows_only(length)
        if condition is not None and table.num_rows:
            table = table.filter(where_mask(table, condition, text))
        _fold_rows(table, aggregates, plan)
    if stats is not None:
        reader.stats["time_s"] = time.perf_counter() - started
        reader.stats["rows"] = rows
        stats.update(reader.stats)


def _fold_rows(table: pa.Table, aggregates, plan: MetadataPlan) -> None:
    """Fold the rows of one decoded batch into the partials."""
    one_group = Groups.single(table.num_rows)
    for (func, column), partial in zip(aggregates, plan.partials):
        if func == "count_star":
            partial.count += table.num_rows
            continue
        values = table.column(column)
        non_null = len(values) - values.null_count
        if func in ("count", "sum"):
            partial.count += non_null
        if func == "count" or non_null == 0:
            continue
        value = aggregate(func, counts(values), one_group)[0].as_py()
        if func == "sum":
            # an integer sum past int64 comes back as decimal128(38, 0): exact as an int
            partial.total += value if isinstance(value, float) else int(value)
        else:
            partial.typed.append(value)


def _to_python(array, column: str, raw):
    """A raw storage value (number or bytes) as the Python value of the column's Arrow type."""
    if isinstance(raw, bytes):
        col = Column(np.frombuffer(raw, dtype=np.uint8).copy(),
                     np.array([0, len(raw)], dtype=np.int64))
    else:
        col = Column(np.array([raw]).astype(array.schema.fields_by_name()[column].info.numpy))
    return counts(column_to_arrow(array, column, col))[0].as_py()


def counts(values):
    """Temporal values as their integer counts in their Arrow unit (Python's datetime holds no
    nanoseconds: min / max fold them as counts); other values as they are."""
    if not pa.types.is_temporal(values.type):
        return values
    return values.cast(storage_integers(values.type))


def _temporal_back(array, column: str | None, value):
    """A min / max folded as a count (``counts``) as the column's Python value, or as an Arrow
    scalar when Python has none (a timestamp or time with nanoseconds)."""
    if not isinstance(value, int):
        return value
    arrow_type = field_arrow_type(array, column)
    if not pa.types.is_temporal(arrow_type):
        return value
    scalar = pa.array([value], arrow_type)[0]
    nanos = getattr(arrow_type, "unit", None) == "ns" and value % 1000
    return scalar if nanos else scalar.as_py()
