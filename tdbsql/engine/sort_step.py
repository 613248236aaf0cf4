"""The Sort step: ORDER BY keys over the input rows and the step's projections, then
OFFSET/LIMIT.  Sort keys may name input columns or output aliases; NULL placement follows each
key's NULLS FIRST/LAST (DuckDB's default is NULLS LAST both ways, which sqlglot spells out);
NaN sorts above every number, as in DuckDB (``sort_columns``)."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from ..errors import SqlError
from ..planner.limit_percent import limit_rows

from .frame import Frame
from .interval_compare import sort_parts
from .list_compare import list_sort_columns
from .list_values import is_list, map_entries
from .struct_compare import struct_sort_columns
from .memory import frame_bytes, step_label
from .project import project_rows
from .unnest import repeat_rows


def run_sort(step, inputs: Frame, runner) -> Frame:
    flat = inputs.flat()
    projected, parents = project_rows(runner, inputs, step.projections, flat) \
        if step.projections else (None, None)
    if parents is not None:  # unnest repeated the rows: the keys see them repeated too
        inputs, flat = _repeated_for_keys(runner, step, inputs, flat, parents, projected)
    keyed = flat
    if projected is not None:
        for name, column in zip(projected.column_names, projected.columns):
            if name not in keyed.column_names:
                keyed = keyed.append_column(name, column)
    order = sort_indices(runner, inputs, keyed, step.key)
    limit = limit_rows(step.limit, len(order))
    stop = len(order) if limit is math.inf else step.offset + int(limit)
    order = order[step.offset:stop]
    source = projected.nbytes if projected is not None else frame_bytes(inputs)
    # the sorted copy and the sort's row order, next to the input
    runner.budget.check(int(source * len(order) / max(inputs.length, 1)) + order.nbytes,
                        step_label(step))
    if projected is not None:
        return Frame.single(step.name, projected.take(order))
    taken = inputs.take(order)
    if step.name not in taken.tables and len({id(t) for t in taken.tables.values()}) == 1:
        # a set operation's ORDER BY (no projections of its own): the CTE or subquery it is
        # reads its rows by the sort's name
        taken.tables[step.name] = next(iter(taken.tables.values()))
    return taken


def _repeated_for_keys(runner, step, inputs: Frame, flat: pa.Table, parents, projected):
    """The input rows repeated as unnest repeated them, with the columns the sort keys read
    (all of them for a key by position: ``_position`` reads the frame's tables)."""
    keys = [ordered.this for ordered in step.key]
    by_position = any(isinstance(key, exp.Literal) and key.is_int for key in keys)
    outputs = set(projected.column_names) - set(flat.column_names)
    return repeat_rows(runner, inputs, flat, parents, None if by_position else keys,
                       step_label(step), known=outputs)


def sort_indices(runner, frame: Frame, flat: pa.Table, keys) -> np.ndarray:
    arrays, sort_keys = {}, []
    for i, ordered in enumerate(keys):
        value = _position(ordered.this, frame, flat)
        if value is None:
            value = runner.column(frame, ordered.this, flat)
        if pa.types.is_dictionary(value.type):
            value = value.dictionary_decode()
        columns, keys = sort_columns(f"k{i}", value, bool(ordered.args.get("desc")),
                                     bool(ordered.args.get("nulls_first")))
        arrays.update(columns)
        sort_keys += keys
    if not arrays:
        return np.arange(frame.length, dtype=np.int64)
    indices = pc.sort_indices(pa.table(arrays), sort_keys=sort_keys)
    return indices.to_numpy().astype(np.int64, copy=False)


def _position(key, frame: Frame, flat: pa.Table):
    """The output column an ORDER BY position names, where one is left (the ORDER BY of a
    UNION / INTERSECT / EXCEPT whose outputs share a name); None for any other key.  A
    SELECT's positions are its expressions by then (``planner.build``)."""
    if not (isinstance(key, exp.Literal) and key.is_int):
        return None
    tables = {id(t): t for t in frame.tables.values()}
    table = next(iter(tables.values())) if len(tables) == 1 else flat  # flat drops repeats
    position = int(key.name)
    if not 1 <= position <= table.num_columns:
        raise SqlError(f"ORDER term out of range - should be between 1 and {table.num_columns}")
    column = table.column(position - 1)
    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column


def sort_columns(name: str, values, desc: bool, nulls_first: bool) -> tuple[dict, list]:
    """The columns and ``pc.sort_indices`` keys that sort by one ORDER BY key in DuckDB's order.
    Arrow puts NaN next to the NULLs (after the numbers with NULLS LAST, before them with NULLS
    FIRST) where DuckDB puts it above every number; so a float key with a NaN, sorted ASC NULLS
    FIRST or DESC NULLS LAST, is sorted first by an is-NaN flag (NULL for NULLs)."""
    if is_list(values):  # lexicographic, as lists compare (engine/list_compare.py)
        return list_sort_columns(name, values, desc, nulls_first, sort_columns)
    if pa.types.is_struct(values.type):  # field by field (engine/struct_compare.py)
        return struct_sort_columns(name, values, desc, nulls_first, sort_columns)
    if pa.types.is_map(values.type):  # as its list of (key, value) entries, as DuckDB
        return list_sort_columns(name, map_entries(values, len(values)), desc, nulls_first,
                                 sort_columns)
    direction = "descending" if desc else "ascending"
    placement = "at_start" if nulls_first else "at_end"
    columns, keys = {}, []
    if pa.types.is_interval(values.type):  # by the normalised parts, as INTERVALs compare
        for index, part in enumerate(sort_parts(values)):
            columns[f"{name}_{index}"] = part
            keys.append((f"{name}_{index}", direction, placement))
        return columns, keys
    if desc != nulls_first and pa.types.is_floating(values.type) and \
            pc.any(pc.is_nan(values)).as_py():
        columns[f"{name}_nan"] = pc.is_nan(values)
        keys.append((f"{name}_nan", direction, placement))
    columns[name] = values
    keys.append((name, direction, placement))
    return columns, keys
