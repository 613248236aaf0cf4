"""UNION [ALL], INTERSECT [ALL], EXCEPT [ALL] over two inputs, by row identity.

Rows are matched with the same group-id kernel as GROUP BY, over both sides stacked, so NULLs
match NULLs as SQL set operations require.  The ALL forms keep min(left, right) copies
(INTERSECT) or left - right copies (EXCEPT) of each row; column names come from the left side.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from sqlglot import exp

from ..errors import SqlError, UnsupportedSql
from .frame import Frame
from .grouping import group_ids, rows_by_group
from .functions import cast_value, common_type, plain
from .functions_text import text_of
from .value_types import kind

_PRINTED = {"int", "uint", "float", "decimal", "bool", "date", "timestamp", "time"}


def run_set_operation(step, left_frame: Frame, right_frame: Frame, runner) -> Frame:
    left = _output_table(left_frame, step.left)
    right = _output_table(right_frame, step.right)
    if left.num_columns != right.num_columns:
        raise SqlError(f"{step.op.__name__.upper()} needs the same number of columns on both "
                       f"sides ({left.num_columns} vs {right.num_columns})", runner.sql)
    stacked = _stack(left, right, runner.sql)
    if issubclass(step.op, exp.Union) and not step.distinct:
        return Frame.single(step.name, stacked)
    groups = group_ids(list(stacked.columns)) if stacked.num_columns else None
    ids = groups.ids if groups is not None else np.zeros(stacked.num_rows, dtype=np.int64)
    count = groups.count if groups is not None else min(stacked.num_rows, 1)
    n_left = left.num_rows
    in_left = np.bincount(ids[:n_left], minlength=count)
    in_right = np.bincount(ids[n_left:], minlength=count)
    # each group's first row; left rows come first, so a group the left has starts there
    firsts = groups.first if groups is not None else np.arange(count, dtype=np.int64)
    if issubclass(step.op, exp.Union):
        keep = firsts
    elif step.distinct:
        wanted = (in_left > 0) & (in_right > 0) if issubclass(step.op, exp.Intersect) else \
            (in_left > 0) & (in_right == 0)
        keep = firsts[wanted]
    else:
        copies = np.minimum(in_left, in_right) if issubclass(step.op, exp.Intersect) else \
            np.maximum(in_left - in_right, 0)
        keep = _leading_copies(ids[:n_left], copies)
    return Frame.single(step.name, stacked.take(pa.array(np.sort(keep))))


def _output_table(frame: Frame, name: str) -> pa.Table:
    table = frame.tables.get(name)
    return table if table is not None else next(iter(frame.tables.values()))


def _stack(left: pa.Table, right: pa.Table, sql: str) -> pa.Table:
    """Both sides' rows in one table, each column in the type DuckDB unifies the two to."""
    columns = []
    for name, a, b in zip(left.column_names, left.columns, right.columns):
        a, b = plain(a.combine_chunks()), plain(b.combine_chunks())
        if a.type != b.type and _text_beside_value(a.type, b.type):
            a, b = text_of(a), text_of(b)
        if a.type != b.type:
            target = common_type([a.type, b.type])
            if target is None:
                raise SqlError(f"set operation: column {name!r} is {a.type} on the left and "
                               f"{b.type} on the right", sql)
            try:
                a, b = cast_value(a, target), cast_value(b, target)
            except ValueError as err:  # ([1] UNION ['a']: DuckDB's lists of VARCHAR)
                raise UnsupportedSql(f"a set operation of {a.type} and {b.type} values in "
                                     f"column {name!r} is not supported: {err}") from None
        columns.append(pa.concat_arrays([a, b]))
    return pa.Table.from_arrays(columns, names=left.column_names)


def _text_beside_value(a: pa.DataType, b: pa.DataType) -> bool:
    """Is one side VARCHAR and the other a number, boolean, date or time?  DuckDB unifies
    those to VARCHAR in a set operation (``SELECT 1.5 UNION SELECT 'a'`` is '1.5' and 'a';
    where a CASE or a comparison reads the string as the other type)."""
    kinds = {kind(a), kind(b)}
    return "string" in kinds and len(kinds) == 2 and (kinds - {"string"}) <= _PRINTED


def _leading_copies(ids: np.ndarray, copies: np.ndarray) -> np.ndarray:
    """Rows of ``ids`` (dense ids below ``len(copies)``) up to ``copies[id]`` occurrences of
    each id, grouped by id."""
    order, starts = rows_by_group(ids, len(copies))
    sorted_ids = ids[order]
    rank = np.arange(len(ids)) - starts[sorted_ids]
    return order[rank < copies[sorted_ids]]
