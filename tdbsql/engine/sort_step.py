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

from ..errors import MemoryLimitError, SqlError
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
    inputs, projected, arrays, sort_keys = _keyed(step, inputs, runner)
    order = _order(arrays, sort_keys, inputs.length)
    limit = limit_rows(step.limit, len(order))
    stop = len(order) if limit is math.inf else step.offset + int(limit)
    order = order[step.offset:stop]
    source = projected.nbytes if projected is not None else frame_bytes(inputs)
    # the sorted copy and the sort's row order, next to the input
    runner.budget.check(int(source * len(order) / max(inputs.length, 1)) + order.nbytes,
                        step_label(step))
    return _taken(step, inputs, projected, order)


def sorted_run(step, inputs: Frame, runner) -> tuple[Frame, pa.Table, list]:
    """The step's rows in order (no OFFSET / LIMIT), with its key columns in that order and
    their ``pc.sort_indices`` keys: one run of an external sort (``engine.external_sort``).
    Its runs must share their key columns: every float key has its NaN flag, and a list,
    struct or MAP key (whose columns depend on the values) is refused."""
    inputs, projected, arrays, sort_keys = _keyed(step, inputs, runner, for_runs=True)
    order = _order(arrays, sort_keys, inputs.length)
    return _taken(step, inputs, projected, order), pa.table(arrays).take(order), sort_keys


def _keyed(step, inputs: Frame, runner, for_runs: bool = False):
    """(the input rows -- repeated where unnest repeats them --, the step's projections over
    them, the key columns and their sort keys)."""
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
    arrays, sort_keys = key_columns(runner, inputs, keyed, step.key, for_runs)
    return inputs, projected, arrays, sort_keys


def _taken(step, inputs: Frame, projected, order: np.ndarray) -> Frame:
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


def key_columns(runner, frame: Frame, flat: pa.Table, keys, for_runs: bool = False):
    """The columns and ``pc.sort_indices`` keys that sort ``frame``'s rows by the ORDER BY
    ``keys`` (``sort_columns``); ``for_runs``: see ``sorted_run``."""
    arrays, sort_keys = {}, []
    for i, ordered in enumerate(keys):
        value = _position(ordered.this, frame, flat)
        if value is None:
            value = runner.column(frame, ordered.this, flat)
        if pa.types.is_dictionary(value.type):
            value = value.dictionary_decode()
        if for_runs and (is_list(value) or pa.types.is_struct(value.type)
                         or pa.types.is_map(value.type)):
            raise MemoryLimitError(f"ORDER BY {ordered.this.sql(dialect='duckdb')} needs more "
                                   "than the memory budget, and a list, struct or MAP key "
                                   "cannot be sorted on disk; filter earlier or raise the "
                                   "budget (TDBSQL_MEMORY_MB)")
        columns, keys = sort_columns(f"k{i}", value, bool(ordered.args.get("desc")),
                                     bool(ordered.args.get("nulls_first")), for_runs)
        arrays.update(columns)
        sort_keys += keys
    return arrays, sort_keys


def _order(arrays: dict, sort_keys: list, length: int) -> np.ndarray:
    if not arrays:
        return np.arange(length, dtype=np.int64)
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


def sort_columns(name: str, values, desc: bool, nulls_first: bool,
                 nan_flag: bool = False) -> tuple[dict, list]:
    """The columns and ``pc.sort_indices`` keys that sort by one ORDER BY key in DuckDB's order.
    Arrow puts NaN next to the NULLs (after the numbers with NULLS LAST, before them with NULLS
    FIRST) where DuckDB puts it above every number; so a float key with a NaN, sorted ASC NULLS
    FIRST or DESC NULLS LAST, is sorted first by an is-NaN flag (NULL for NULLs) -- every such
    float key when ``nan_flag``."""
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
            (nan_flag or pc.any(pc.is_nan(values)).as_py()):
        columns[f"{name}_nan"] = pc.is_nan(values)
        keys.append((f"{name}_nan", direction, placement))
    columns[name] = values
    keys.append((name, direction, placement))
    return columns, keys
