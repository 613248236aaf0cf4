"""MAP values as DuckDB builds and reads them: ``map(keys, values)`` / ``MAP {k: v}`` (keys
unique and not NULL), a key's entry (``m[k]``), and ``map_concat``'s merge.

In: evaluated Arrow values (arrays, chunked arrays, scalars) and the row count; ``error``
builds the SqlError of a bad input.  Out: Arrow values; a result of constants only stays a
scalar.  A MAP is taken apart as its rows' lists of (key, value) pairs
(``list_values.map_entries``) and every step runs over all rows at once.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .frame import broadcast
from .grouping import group_ids
from .hash_table import key_codes
from .list_values import (ListParts, as_lists, list_parts, map_entries, rebuild,
                          repeated_rows, scalar_if_constant)
from .value_types import cast_value, common_type, kind, plain, type_name, valid_rows


def is_map(value) -> bool:
    return pa.types.is_map(value.type)


def entry_parts(value, rows: int) -> ListParts:
    """A MAP value's rows of (key, value) pairs taken apart (``list_values.ListParts``)."""
    return list_parts(map_entries(value, rows))


def any_map(values) -> bool:
    return any(is_map(value) for value in values)


def field_lists(value, field: int, rows: int):
    """A MAP value's keys (``field`` 0) or values (1) as lists (``map_keys`` /
    ``map_values``); NULL stays NULL."""
    parts = entry_parts(value, rows)
    return scalar_if_constant(rebuild(parts.valid, parts.lengths, parts.elements.field(field)),
                              value)


def compare_maps(op: str, left, right, rows: int, compare, error):
    """``m1 <op> m2``, as DuckDB compares MAPs: as their lists of (key, value) pairs
    (``compare`` compares two lists), so equal when the lists of keys are and the lists of
    values are, ordered as lists of (key, value) structs."""
    for value in (left, right):
        if not is_map(value) and not pa.types.is_null(plain(value).type):
            raise error(f"cannot compare a MAP and {type_name(plain(value).type)}")
    if op not in ("equal", "not_equal"):
        return compare(op, *(value if pa.types.is_null(value.type)
                             else scalar_if_constant(map_entries(value, rows), value)
                             for value in (left, right)))
    halves = [compare("equal", *(value if pa.types.is_null(value.type)
                                 else field_lists(value, field, rows)
                                 for value in (left, right)))
              for field in (0, 1)]
    equal = pc.and_kleene(*halves)
    return equal if op == "equal" else pc.invert(equal)


def build(keys, values, rows: int, error):
    """``map(keys, values)``: row r maps the r-th list of keys to the r-th list of values;
    NULL where either list is.  DuckDB's errors for lists of other lengths, a NULL key and a
    key given twice."""
    key_parts, value_parts = (list_parts(as_lists(v, rows)) for v in (keys, values))
    valid = key_parts.valid & value_parts.valid
    if (valid & (key_parts.lengths != value_parts.lengths)).any():
        raise error("The map key list does not align with the map value list.")
    counts = np.where(valid, key_parts.lengths, 0)
    key_elements, items = (parts.elements.filter(pa.array(np.repeat(valid, parts.lengths)))
                           for parts in (key_parts, value_parts))
    if key_elements.null_count:
        raise error("Map keys can not be NULL.")
    if len(key_elements) and \
            group_ids([pa.array(repeated_rows(counts)), key_elements]).count < len(key_elements):
        raise error("Map keys must be unique.")
    result = _from_entries(counts, key_elements, items, valid)
    return scalar_if_constant(result, keys, values)


def _from_entries(counts: np.ndarray, keys: pa.Array, items: pa.Array, valid: np.ndarray):
    offsets = np.zeros(len(counts) + 1, dtype=np.int32)
    np.cumsum(counts, out=offsets[1:])
    return pa.MapArray.from_arrays(pa.array(offsets), keys, items,
                                   type=map_type(keys.type, items.type),
                                   mask=pa.array(~valid))


def map_type(key: pa.DataType, item: pa.DataType) -> pa.DataType:
    """``pa.map_(key, item)``, also DuckDB's ``MAP("NULL", ...)`` of ``MAP {}`` / ``map()``
    (keys of no type), which ``pa.map_`` refuses but Arrow holds (DuckDB's Arrow has it)."""
    if not pa.types.is_null(key):
        return pa.map_(key, item)
    return pa.MapArray.from_arrays(pa.array([0], pa.int32()), pa.array([], key),
                                   pa.array([], item)).type


def found_at(parts: ListParts, field: int, wanted, rows: int, error) -> np.ndarray:
    """Per row, the position (in ``parts.elements``) of the entry whose key (``field`` 0) or
    value (1) equals the row's ``wanted``; -1 where none does or ``wanted`` is NULL."""
    wanted = broadcast(plain(wanted), rows).take(pa.array(parts.parents))
    at = np.flatnonzero(equal(parts.elements.field(field), wanted, error))
    position = np.full(rows, -1, dtype=np.int64)
    position[parts.parents[at]] = at
    return position


def equal(stored: pa.Array, wanted: pa.Array, error) -> np.ndarray:
    """Where a MAP's keys (values) equal the ones looked for, row by row, as GROUP BY finds
    values equal (NaN = NaN, lists element by element: ``hash_table.key_codes``); NULL is no
    match."""
    stored, wanted = plain(stored), plain(wanted)
    if pa.types.is_null(stored.type) or pa.types.is_null(wanted.type):
        return np.zeros(len(stored), dtype=bool)
    target = _common(stored.type, wanted.type, error)
    try:
        stored, wanted = cast_value(stored, target), cast_value(wanted, target)
    except ValueError as err:  # a string that does not read as the key type
        raise error(str(err)) from None
    codes = key_codes(pa.concat_arrays([stored, wanted]))
    count = len(stored)
    same = np.logical_and.reduce([code[:count] == code[count:] for code in codes])
    return same & valid_rows(stored) & valid_rows(wanted)


def not_distinct(stored, wanted, rows: int, error) -> np.ndarray:
    """``stored IS NOT DISTINCT FROM wanted`` per row (``map_contains_entry``'s values)."""
    stored, wanted = (broadcast(plain(v), rows) for v in (stored, wanted))
    both_null = ~valid_rows(stored) & ~valid_rows(wanted)
    return equal(stored, wanted, error) | both_null


def _common(stored: pa.DataType, wanted: pa.DataType, error) -> pa.DataType:
    """The type a MAP's keys (values) and the one looked for are compared in, as DuckDB
    binds ``map_extract_value(MAP(K, V), K)``: a string key beside a number is an error."""
    target = common_type([stored, wanted])
    if target is None or (kind(stored) == "string" and kind(wanted) != "string"):
        raise error(f"cannot look up a value of type {type_name(wanted)} in a MAP of "
                    f"{type_name(stored)} entries")
    return target


def value_at(maps, key, rows: int, error):
    """``m[k]`` / ``map_extract_value(m, k)``: the value under key k, NULL when the MAP has
    no such key (or is NULL, or k is)."""
    parts = entry_parts(maps, rows)
    position = found_at(parts, 0, key, rows, error)
    return scalar_if_constant(values_under(parts, position, rows), maps, key)


def values_under(parts, position: np.ndarray, rows: int) -> pa.Array:
    """Per row the value of the entry at ``position`` (``found_at``'s), NULL where none is."""
    found = position >= 0
    items = parts.elements.field(1)
    return items.take(pa.array(np.where(found, position, 0), mask=~found)) \
        if len(items) else pa.nulls(rows, items.type)


def concat(maps: list, rows: int, error):
    """``map_concat(m1, m2, ...)``: every key of the MAPs in first-appearance order, under
    the value of the last MAP holding it; NULL MAPs are skipped (all NULL: NULL)."""
    typed = [m for m in maps if not pa.types.is_null(m.type)]
    if not typed:
        return pa.scalar(None)
    common = common_type([m.type for m in typed])  # MAP {} takes the others' type
    if common is not None:
        typed = [cast_value(m, common) for m in typed]
    for m in typed[1:]:
        if m.type != typed[0].type:
            part = "value" if m.type.item_type != typed[0].type.item_type else "key"
            raise error(f"'{part}' type of map differs between arguments, expected "
                        f"'{type_name(typed[0].type)}', found '{type_name(m.type)}' instead")
    pieces = [entry_parts(m, rows) for m in typed]
    valid = np.logical_or.reduce([p.valid for p in pieces])
    entries = pa.concat_arrays([p.elements for p in pieces])
    row_of = np.concatenate([p.parents for p in pieces])
    order = pa.array(np.argsort(row_of, kind="stable"))  # by row, then MAP, then position
    entries, row_of = entries.take(order), row_of[order.to_numpy()]
    keys = entries.field(0)
    first = last = np.zeros(0, dtype=np.int64)  # each key's first and last entry
    if len(keys):
        groups = group_ids([pa.array(row_of), keys])
        first, last = groups.first, np.zeros(groups.count, dtype=np.int64)
        np.maximum.at(last, groups.ids, np.arange(len(keys), dtype=np.int64))
    counts = np.bincount(row_of[first], minlength=rows)
    result = _from_entries(counts, keys.take(pa.array(first)),
                           entries.field(1).take(pa.array(last)), valid)
    return scalar_if_constant(result, *maps)
