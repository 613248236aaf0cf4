"""Scan a base table: an array (with pushdown) or a registered Arrow table.

Only the columns the query reads through this alias are decoded (projection pruning).  The
scan's predicate, with the alias stripped, gives the dimension ranges that prune fragments and
tiles, and goes to the scan itself for zone-map pruning on attributes.  An array scan is read
task by task (``ArrayScan``): one tile each when the scan can stream, so the rows can be
filtered and projected -- or aggregated -- as they come (``engine.pipeline``).
"""

from __future__ import annotations

import pyarrow as pa
from sqlglot import exp

from ..catalog import ArrowSource
from ..planner.conjuncts import unqualified
from ..planner.ranges import scan_ranges
from .fields import column_to_arrow
from .frame import Frame, rows_only
from .scan import open_scan


class ArrayScan:
    """The scan of one array for one plan step, pruned; ``frame(task)`` reads one task.
    ``skip_tiles`` (fragment position -> bool per tile) leaves out tiles answered otherwise."""

    def __init__(self, runner, step, array, condition, skip_tiles: dict | None = None):
        self.step, self.array = step, array
        columns = [d.name for d in array.schema.dimensions] + \
                  [a.name for a in array.schema.attributes]
        used = runner.query.used_columns.get(step.name, frozenset())
        self.fields = [c for c in columns if c in used]
        predicate = unqualified(condition)
        self.scan = open_scan(array, self.fields or columns[:1],
                              scan_ranges(predicate, array.schema), predicate,
                              skip_tiles=skip_tiles, budget=runner.budget)
        self.stats = self.scan.stats

    def tasks(self) -> list:
        return self.scan.tasks() or [None]  # nothing left: one task gives the empty result

    def batch(self, task, condition: exp.Expression | None
              ) -> tuple[int, Frame, exp.Expression | None]:
        """(rows read, the rows of one task as the step's frame, what of ``condition`` is left
        to evaluate over them: ``TileScan.filtered``)."""
        result = self.scan.read(task)
        columns, length, condition = self.scan.filtered(task, result, condition)
        if self.fields:
            data = pa.Table.from_arrays(
                [column_to_arrow(self.array, name, columns[name]) for name in self.fields],
                names=self.fields)
        else:
            data = rows_only(length)
        return result.length, Frame.single(self.step.name, data), condition


def array_scan(runner, step, table: exp.Table, condition) -> ArrayScan | Frame:
    """An ``ArrayScan`` for an array, or the frame of a registered Arrow table."""
    source, window = runner.catalog.resolve(table, runner.sql)
    if isinstance(source, ArrowSource):
        used = runner.query.used_columns.get(step.name, frozenset())
        runner.budget.borrow(source.table)  # the caller's memory, not the query's
        names = [n for n in source.table.column_names if n in used]
        data = source.table.select(names) if names else rows_only(source.table.num_rows)
        return Frame.single(step.name, data)
    return ArrayScan(runner, step, runner.open_array(source, window), condition)
