"""LIST values as DuckDB builds and reads them: ``[a, b]`` / ``list_value(a, b)``, ``l[i]``
(1-based, negative from the end, out of range NULL) and ``l[a:b]`` (inclusive, clamped).

In: evaluated Arrow values (arrays, chunked arrays, scalars) and the row count.  Out: Arrow
values; a result of constants only stays a scalar.  Every step runs on Arrow / numpy over all
rows at once (``list_parts`` gives a list column's flattened elements, each row's first
element position and length).  The parser (``planner/parse.py``) keeps bracket indexes as the
user wrote them (sqlglot shifts integer literals to 0-based).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .frame import broadcast
from .value_types import cast_value, common_type, fit_literals, plain, valid_rows


@dataclass(frozen=True)
class ListParts:
    """A list column taken apart: ``elements`` (all rows' elements, row by row), ``starts``
    and ``lengths`` (int64 numpy, 0 for a NULL list) and ``valid`` (bool numpy)."""

    lists: pa.ListArray
    elements: pa.Array
    starts: np.ndarray
    lengths: np.ndarray
    valid: np.ndarray

    @property
    def parents(self) -> np.ndarray:
        """The row of each element."""
        return repeated_rows(self.lengths)


def repeated_rows(counts: np.ndarray) -> np.ndarray:
    """The row of each of ``counts.sum()`` items laid out row by row, row r holding
    ``counts[r]`` of them."""
    return np.repeat(np.arange(len(counts), dtype=np.int64), counts)


def ordinals(counts: np.ndarray) -> np.ndarray:
    """Each of those items' 0-based position within its row."""
    return np.arange(int(counts.sum()), dtype=np.int64) - \
        np.repeat(np.cumsum(counts) - counts, counts)


def is_list(value) -> bool:
    t = value.type
    return pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)


def as_lists(value, rows: int) -> pa.ListArray:
    """``value`` (a list array or scalar, or NULL) as a ListArray of ``rows`` rows."""
    value = broadcast(plain(value), rows)
    if pa.types.is_null(value.type):
        return pa.nulls(len(value), pa.list_(pa.null()))
    if pa.types.is_large_list(value.type) or pa.types.is_fixed_size_list(value.type):
        value = value.cast(pa.list_(value.type.value_type))
    return value


def list_parts(lists: pa.ListArray) -> ListParts:
    valid = valid_rows(lists)
    lengths = np.asarray(pc.fill_null(pc.list_value_length(lists), 0).to_numpy(),
                         dtype=np.int64)
    starts = np.cumsum(lengths) - lengths
    return ListParts(lists, pc.list_flatten(lists), starts, lengths, valid)


def rebuild(parts_valid: np.ndarray, counts: np.ndarray, elements: pa.Array) -> pa.ListArray:
    """A ListArray of ``len(counts)`` rows: row r holds the next ``counts[r]`` of ``elements``;
    NULL where ``parts_valid`` is false."""
    offsets = np.zeros(len(counts) + 1, dtype=np.int32)
    np.cumsum(counts, out=offsets[1:])
    return pa.ListArray.from_arrays(pa.array(offsets), elements,
                                    mask=pa.array(~parts_valid))


def scalar_if_constant(result: pa.Array, *inputs):
    """``result`` (computed over broadcast rows) as a scalar when every input was one."""
    if all(isinstance(v, pa.Scalar) for v in inputs):
        # over no rows (a filter kept none) only the type matters: it is broadcast to none
        return result[0] if len(result) else pa.scalar(None, result.type)
    return result


def list_value(values: list, rows: int, error):
    """``[v0, v1, ...]``: one list per row of the values unified to their common type
    (``error(message)`` builds the SqlError when they have none)."""
    values = fit_literals([plain(v) for v in values])
    target = common_type([v.type for v in values]) if values else pa.null()
    if target is None:
        raise error("list elements have no common type: "
                    + ", ".join(str(v.type) for v in values))
    try:
        values = [cast_value(v, target) for v in values]
    except ValueError as err:
        raise error(str(err)) from None
    length = 1 if all(isinstance(v, pa.Scalar) for v in values) else rows
    columns = [broadcast(v, length) for v in values]
    width = len(columns)
    if width:
        stacked = pa.concat_arrays([c.cast(target) for c in columns])
        order = (np.arange(length, dtype=np.int64)[:, None]
                 + np.arange(width, dtype=np.int64)[None, :] * length).ravel()
        elements = stacked.take(pa.array(order))
    else:
        elements = pa.array([], target)
    result = rebuild(np.ones(length, dtype=bool), np.full(length, width, dtype=np.int64),
                     elements)
    return scalar_if_constant(result, *values)


def element_at(lists_value, index_value, rows: int):
    """``l[i]``: 1-based, negative from the end, NULL for 0, out of range or a NULL index."""
    lists = as_lists(lists_value, rows)
    parts = list_parts(lists)
    index = broadcast(plain(index_value), rows)
    index_valid = valid_rows(index)
    position = np.asarray(pc.fill_null(pc.cast(index, pa.int64()), 0).to_numpy(),
                          dtype=np.int64)
    offset = np.where(position > 0, position - 1, parts.lengths + position)
    found = parts.valid & index_valid & (position != 0) & (offset >= 0) & \
        (offset < parts.lengths)
    take = np.where(found, parts.starts + offset, 0)
    result = parts.elements.take(pa.array(take, mask=~found)) if len(parts.elements) else \
        pa.nulls(rows, lists.type.value_type)
    return scalar_if_constant(result, lists_value, index_value)


def slice_of(lists_value, begin_value, end_value, rows: int, step_value=None):
    """``l[a:b]`` / ``list_slice(l, a, b[, step])``: the elements a..b (1-based, inclusive;
    negative from the end; a missing bound is the list's first / last element), every
    ``step``-th from a; a negative step walks from a down to b, as DuckDB; NULL for a NULL
    list, bound or step; a step of 0 is a ValueError (``STEP_ZERO``)."""
    lists = as_lists(lists_value, rows)
    parts = list_parts(lists)
    valid = parts.valid.copy()
    numbers = []
    for value in (begin_value, end_value, step_value):
        if value is None:
            numbers.append(None)
            continue
        number = broadcast(plain(value), rows)
        valid &= valid_rows(number)
        numbers.append(np.asarray(pc.fill_null(pc.cast(number, pa.int64()), 1).to_numpy(),
                                  dtype=np.int64))
    step = np.ones(rows, dtype=np.int64) if numbers[2] is None else numbers[2]
    down = step < 0
    # a missing bound is the first element -- or, walking down, the last -- and the other end
    begin, end = (np.where(down == at_end, parts.lengths, 1) if number is None else
                  np.where(number < 0, parts.lengths + number + 1, number)
                  for number, at_end in zip(numbers[:2], (True, False)))
    first = np.where(down, np.minimum(begin, parts.lengths), np.maximum(begin, 1)) - 1
    last = np.where(down, np.maximum(end, 1), np.minimum(end, parts.lengths)) - 1
    span = np.where(down, first - last, last - first)  # 0-based, both inclusive
    taken = valid & (span >= 0)
    if (step[taken] == 0).any():  # DuckDB's error, only where the slice holds elements
        raise ValueError(STEP_ZERO)
    counts = np.where(taken, span // np.maximum(np.abs(step), 1) + 1, 0)
    positions = np.repeat(parts.starts + first, counts) + \
        ordinals(counts) * np.repeat(step, counts)
    result = rebuild(valid, counts, parts.elements.take(pa.array(positions)))
    inputs = [v for v in (lists_value, begin_value, end_value, step_value) if v is not None]
    return scalar_if_constant(result, *inputs)


STEP_ZERO = "Slice step cannot be zero"


def _quoted(text: pa.Array) -> pa.Array:
    """Elements' text inside a printed list (strings, times, ...: not nested lists), quoted
    as DuckDB quotes them: when empty, 'NULL' in any
    case, with a character that reads as list syntax or an edge space; ' and \\ escaped."""
    special = pc.or_(pc.match_substring_regex(text, r"[,\[\]'\\:{}\"()=]|^\s|\s$|^$"),
                     pc.equal(pc.utf8_lower(text), "null"))
    escaped = pc.replace_substring(pc.replace_substring(text, "\\", "\\\\"), "'", "\\'")
    quoted = pc.binary_join_element_wise("'", escaped, "'", "")
    return pc.if_else(pc.fill_null(special, False), quoted, text)


def list_text(value, element_text):
    """Lists as DuckDB's VARCHAR cast prints them: ``[1, NULL, a]`` (``element_text`` gives
    the elements' text: strings unquoted, nested lists the same way); NULL stays NULL."""
    rows = 1 if isinstance(value, pa.Scalar) else len(value)
    parts = list_parts(as_lists(value, rows))
    text = item_text(parts.elements, element_text)
    joined = pc.binary_join(rebuild(parts.valid, parts.lengths, text), ", ")
    result = pc.binary_join_element_wise("[", joined, "]", "")
    return scalar_if_constant(result, value)


def map_text(value, element_text):
    """MAPs as DuckDB's VARCHAR cast prints them: ``{a=1, 'x=y'=2}``, keys and values as a
    list's elements; NULL stays NULL."""
    rows = 1 if isinstance(value, pa.Scalar) else len(value)
    parts = list_parts(map_entries(value, rows))
    pairs = pc.binary_join_element_wise(
        *(item_text(parts.elements.field(i), element_text) for i in (0, 1)), "=")
    joined = pc.binary_join(rebuild(parts.valid, parts.lengths, pairs), ", ")
    result = pc.binary_join_element_wise("{", joined, "}", "")
    return scalar_if_constant(result, value)


def map_entries(value, rows: int) -> pa.ListArray:
    """MAP values as ``rows`` lists of their (key, value) pairs, DuckDB's ``map_entries``:
    STRUCT("key" K, "value" V)[]."""
    entries = pa.list_(pa.struct([("key", value.type.key_type),
                                  ("value", value.type.item_type)]))
    return broadcast(value, rows).cast(entries)


def item_text(elements: pa.Array, element_text) -> pa.Array:
    """The text of a list's elements (a MAP's keys or values) inside its printed form."""
    text = element_text(elements) if not pa.types.is_null(elements.type) else \
        pa.nulls(len(elements), pa.string())
    if not pa.types.is_nested(elements.type):  # a TIMESTAMP's ':' is quoted too
        text = _quoted(text.cast(pa.string()))
    return pc.fill_null(text.cast(pa.string()), "NULL")
