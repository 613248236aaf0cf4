"""Scan a base table: an array (with pushdown) or a registered Arrow table.

Only the columns the query reads through this alias are decoded (projection pruning).  The
scan's predicate, with the alias stripped, gives the dimension ranges that prune fragments and
tiles, and goes to the scan itself for zone-map pruning on attributes.
"""

from __future__ import annotations

import pyarrow as pa
from sqlglot import exp

from ..catalog import ArrowSource
from ..planner.ranges import scan_ranges
from .fields import column_to_arrow
from .frame import Frame, rows_only
from .scan import scan


def read_source(runner, step, table: exp.Table, condition) -> tuple[Frame, dict | None]:
    source, window = runner.catalog.resolve(table, runner.sql)
    used = runner.query.used_columns.get(step.name, frozenset())
    if isinstance(source, ArrowSource):
        names = [n for n in source.table.column_names if n in used]
        data = source.table.select(names) if names else rows_only(source.table.num_rows)
        return Frame.single(step.name, data), None
    array = runner.open_array(source, window)
    columns = [d.name for d in array.schema.dimensions] + [a.name for a in array.schema.attributes]
    fields = [c for c in columns if c in used]
    predicate = unqualified(condition)
    result = scan(array, fields or columns[:1], scan_ranges(predicate, array.schema), predicate)
    if fields:
        data = pa.Table.from_arrays(
            [column_to_arrow(array, name, result.columns[name]) for name in fields], names=fields)
    else:
        data = rows_only(result.length)
    return Frame.single(step.name, data), result.stats


def unqualified(node: exp.Expression | None) -> exp.Expression | None:
    """``node`` with table qualifiers dropped: the scan sees its own column names."""
    if node is None:
        return None
    return node.transform(
        lambda n: exp.column(n.name, quoted=True) if isinstance(n, exp.Column) else n)
