"""Run a bound ``SelectPlan`` on an opened array: scan -> Arrow -> filter -> project -> order ->
limit."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..datatypes import type_info
from .arrow_convert import to_arrow
from .evaluate import evaluate, where_mask
from .scan import scan


def scan_table(array, fields: list[str], ranges) -> pa.Table:
    """The scanned cells of ``fields`` as an Arrow table (enumerations as dictionaries)."""
    read = fields or [array.schema.dimensions[0].name]
    result = scan(array, read, ranges)
    arrays = {name: column_to_arrow(array, name, result.columns[name]) for name in read}
    table = pa.table(arrays) if arrays else pa.table({})
    return table.select(fields) if fields else pa.table({"__rows": pa.nulls(result.length)})


def column_to_arrow(array, name: str, column) -> pa.Array:
    schema = array.schema
    for dim in schema.dimensions:
        if dim.name == name:
            return to_arrow(column, dim.datatype, dim.cell_val_num, name)
    attr = schema.attribute(name)
    values = to_arrow(column, attr.datatype, attr.cell_val_num, name)
    if attr.enumeration_name:
        return _dictionary(array, attr, values)
    return values


def _dictionary(array, attr, indices: pa.Array) -> pa.Array:
    """Enumerated attribute: a dictionary array of the enumeration's labels (in their storage
    type; ``ordered`` as the enumeration says).  An index with no label -- e.g. the fill value
    of an enumerated attribute added by evolution, read in an older fragment -- is NULL."""
    if not pa.types.is_integer(indices.type):
        return indices
    enumeration = array.enumerations[attr.enumeration_name]
    labels = enumeration_labels(enumeration)
    in_range = pc.and_(pc.greater_equal(indices, 0), pc.less(indices, len(labels)))
    if not pc.all(in_range).as_py():
        indices = pc.if_else(in_range, indices, pa.scalar(None, indices.type))
    return pa.DictionaryArray.from_arrays(indices, labels, ordered=enumeration.ordered)


def enumeration_labels(enumeration) -> pa.Array:
    """The labels of an enumeration as an Arrow array."""
    info = type_info(enumeration.datatype)
    if info.kind == "string":
        values = enumeration.values()
        if all(isinstance(v, str) for v in values):
            return pa.array(values, pa.string())
        return pa.array(enumeration.raw_values(), pa.binary())
    if info.kind == "binary":
        return pa.array(enumeration.raw_values(), pa.binary())
    if enumeration.cell_val_num == 1:
        numbers = np.frombuffer(enumeration.data, dtype=info.numpy)
        return pa.array(numbers.astype(bool) if info.kind == "bool" else numbers)
    return pa.array(enumeration.values())


def execute(plan, array, sql: str) -> pa.Table:
    table = scan_table(array, list(plan.read_fields), plan.ranges)
    if plan.where is not None:
        table = table.filter(where_mask(table, plan.where, sql))
    out = {}
    for name, node in plan.outputs:
        value = evaluate(table, node, sql)
        if isinstance(value, pa.Scalar):
            value = pa.array([value.as_py()] * table.num_rows, type=value.type)
        out[name] = value
    result = pa.table(out) if out else pa.table({})
    if plan.distinct and result.num_columns:
        result = _distinct(result)
    if plan.order_by:
        result = _order(result, table, plan, sql)
    if plan.offset or plan.limit is not None:
        stop = None if plan.limit is None else plan.offset + plan.limit
        result = result.slice(plan.offset, None if stop is None else stop - plan.offset)
    return result


def _distinct(table: pa.Table) -> pa.Table:
    keys = pa.table({f"k{i}": c for i, c in enumerate(table.columns)})
    groups = keys.group_by(keys.column_names, use_threads=False).aggregate([])
    return pa.table({name: groups.column(f"k{i}") for i, name in enumerate(table.column_names)})


def _order(result: pa.Table, source: pa.Table, plan, sql: str) -> pa.Table:
    """ORDER BY with SQL defaults: ASC puts NULLs last, DESC puts them first (as DuckDB)."""
    names = set(result.column_names)
    keys, sort_keys = {}, []
    for i, (node, desc, nulls_first) in enumerate(plan.order_by):
        if node.key == "column" and node.name in names:
            key = result.column(node.name)
        else:
            key = evaluate(source if source.num_rows == result.num_rows else result, node, sql)
        keys[f"k{i}"] = key
        nulls_first = desc if nulls_first is None else nulls_first
        sort_keys.append((f"k{i}", "descending" if desc else "ascending",
                          "at_start" if nulls_first else "at_end"))
    order = pc.sort_indices(pa.table(keys), sort_keys=sort_keys)
    return result.take(order)
