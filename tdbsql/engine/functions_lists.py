"""LIST functions, as DuckDB has them: ``list_value`` / ``[a, b]``, ``list_extract``,
``list_slice``, ``list_contains`` (``list_has``, ``array_contains``), ``list_position``,
``list_has_all`` / ``list_has_any`` (``@>`` / ``&&``), ``string_split`` (``str_split``,
``string_to_array``), ``list_sort`` / ``list_reverse_sort``, ``list_distinct``,
``list_unique``, ``list_concat``, ``list_append`` / ``list_prepend``, ``list_reverse``,
``flatten``, ``list_sum`` / ``min`` / ``max`` / ``avg`` / ``product`` / ``string_agg``,
``list_aggregate`` (the other aggregates: ``list_aggregates``),
``array_to_string``, ``range`` / ``generate_series`` as lists, and ``length`` and ``concat``
of lists and strings alike.

In: evaluated arguments and the ``Call``.  Out: Arrow values.  NULL handling is DuckDB's:
a NULL list gives NULL; ``list_contains(l, NULL)`` is NULL while ``list_position(l, NULL)``
finds a NULL element.  Elements are compared over all rows at once (``list_values.list_parts``).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import datetime_ops as dto
from . import interval_rows, list_aggregates
from .frame import broadcast
from .functions import per_distinct, register, unify
from .functions_text import as_text, character_at, string_slice, text_concat, text_length
from .grouping import Groups, aggregate, first_rows
from .hash_table import group_rows, key_codes
from .integer_series import series_counts, series_values
from .interval_compare import group_extremes
from .list_compare import compare_lists
from .struct_compare import compare_structs
from .timestamp_series import series_steps
from .list_values import (as_lists, element_at, is_list, list_parts, list_value, ordinals,
                          rebuild, scalar_if_constant, slice_of)
from .value_types import (bare_null, common_type, compare_plain, kind, plain, string_buffers, type_name,
                          valid_rows)


def row_count(values) -> int:
    """The rows an evaluated call spans (1 when every argument is a constant)."""
    return max((len(v) for v in values if not isinstance(v, pa.Scalar)), default=1)


def null_in_null_out(impl):
    """``impl`` answering a bare NULL list with DuckDB's NULL-typed NULL (``flatten(NULL)``)."""
    def call(ctx, lists, *rest):
        if bare_null(lists) and all(isinstance(v, pa.Scalar) for v in rest):
            return pa.scalar(None)
        return impl(ctx, lists, *rest)
    return call


def lists_argument(ctx, value, index: int, rows: int) -> pa.ListArray:
    if not is_list(value) and not pa.types.is_null(plain(value).type):
        raise ctx.error(f"expects a list, got {value.type}", index)
    return as_lists(value, rows)


@register("array", 0, None, aliases=("list_value", "list_pack"))
def _list_value(ctx, *values):
    return list_value(list(values), row_count(values), ctx.error)


@register("list_extract", 2, aliases=("list_element", "array_extract"))
def _list_extract(ctx, lists, index):
    if kind(plain(lists).type) == "string":  # DuckDB's array_extract(s, i): a character
        return character_at(ctx, ctx.string(lists, 0), index)
    rows = row_count((lists, index))
    lists_argument(ctx, lists, 0, rows)
    return element_at(lists, ctx.integer(index, 1), rows)


@register("array_slice", 3, 4, aliases=("list_slice",))
def _list_slice(ctx, lists, begin, end, step=None):
    if kind(plain(lists).type) == "string":  # DuckDB's array_slice(s, a, b): characters
        if step is not None:
            raise ctx.error("Slice with steps has not been implemented for string types", 3)
        return string_slice(ctx.string(lists, 0), ctx.integer(begin, 1), ctx.integer(end, 2))
    rows = row_count((lists, begin, end) if step is None else (lists, begin, end, step))
    lists_argument(ctx, lists, 0, rows)
    try:
        return slice_of(lists, ctx.integer(begin, 1), ctx.integer(end, 2), rows,
                        None if step is None else ctx.integer(step, 3))
    except ValueError as err:  # a step of 0
        raise ctx.error(str(err), 3) from None


def _matches(ctx, lists, needle, rows: int, nulls_match: bool):
    """(parts, the row of each element, whether each element equals that row's needle)."""
    parts = list_parts(lists_argument(ctx, lists, 0, rows))
    needle_type = plain(needle).type
    if kind(parts.elements.type) == "string" and kind(needle_type) not in ("string", "null"):
        # DuckDB casts a string to the elements' type, never the elements to a value's type
        raise ctx.error(f"a list of {type_name(parts.elements.type)} cannot hold a "
                        f"{type_name(needle_type)}; cast one of them", 1)
    parents = parts.parents
    wanted = broadcast(plain(needle), rows).take(pa.array(parents))
    if nulls_match and not isinstance(needle, pa.Scalar) or \
            isinstance(needle, pa.Scalar) and not needle.is_valid:
        both_null = np.asarray(pc.and_(parts.elements.is_null(), wanted.is_null())
                               .to_numpy(zero_copy_only=False), dtype=bool)
    else:
        both_null = np.zeros(len(parents), dtype=bool)
    equal = _equal(ctx, parts.elements, wanted)
    return parts, parents, equal | (both_null if nulls_match else False)


def _equal(ctx, left: pa.Array, right: pa.Array) -> np.ndarray:
    """Where the elements equal the values (NaN equal to NaN; lists element by element,
    ``list_compare``; structs field by field, ``struct_compare``)."""
    left, right = unify(ctx, (left, right))
    if pa.types.is_null(left.type):
        return np.zeros(len(left), dtype=bool)
    if is_list(left) or pa.types.is_struct(left.type):
        def compare(op, a, b):
            return pa.array(_equal(ctx, a, b)) if op == "equal" else compare_plain(op, a, b)
        nested = compare_lists if is_list(left) else compare_structs
        found = nested("equal", left, right, len(left), compare)
    else:
        found = compare_plain("equal", left, right)  # NaN = NaN, as DuckDB
    return np.asarray(pc.fill_null(found, False).to_numpy(zero_copy_only=False), dtype=bool)


def _needle_valid(needle, rows: int) -> np.ndarray:
    return np.asarray(broadcast(plain(needle), rows).is_valid()
                      .to_numpy(zero_copy_only=False), dtype=bool)


@register("array_contains", 2, aliases=("list_contains", "list_has", "array_has"))
def _list_contains(ctx, lists, needle):
    """TRUE when an element equals the value; NULL for a NULL list or value."""
    rows = row_count((lists, needle))
    parts, parents, equal = _matches(ctx, lists, needle, rows, nulls_match=False)
    found = np.bincount(parents, weights=equal, minlength=rows) > 0
    valid = parts.valid & _needle_valid(needle, rows)
    return scalar_if_constant(pa.array(found, pa.bool_(), mask=~valid), lists, needle)


@register("list_position", 2, aliases=("list_indexof", "array_position", "array_indexof"))
def _list_position(ctx, lists, needle):
    """The 1-based position of the first element equal to the value (NULL finds a NULL
    element), as an INTEGER; NULL when there is none or the list is NULL."""
    rows = row_count((lists, needle))
    parts, parents, equal = _matches(ctx, lists, needle, rows, nulls_match=True)
    first = np.full(rows, np.iinfo(np.int64).max, dtype=np.int64)
    where = np.flatnonzero(equal)
    np.minimum.at(first, parents[where], where - parts.starts[parents[where]])
    found = parts.valid & (first < np.iinfo(np.int64).max)
    position = pa.array(np.where(found, first + 1, 0).astype(np.int32), mask=~found)
    return scalar_if_constant(position, lists, needle)


@register("split", 2, aliases=("string_split", "str_split", "string_to_array"))
def _string_split(ctx, text, separator):
    """The pieces of the string between separators (``''`` splits into characters, a NULL
    separator keeps the string whole: ``_split_whole``); NULL for a NULL string."""
    text, separator = ctx.string(text, 0), ctx.string(separator, 1)
    if not isinstance(separator, pa.Scalar):  # once per distinct separator
        return per_distinct(lambda v, p: _string_split(ctx, v, p), [text], [separator])
    sep = separator.as_py()
    if sep is None or sep == "":
        return _split_whole(text, sep)
    if isinstance(text, pa.Scalar):
        return pc.split_pattern(pa.array([text.as_py()], pa.string()), pattern=sep)[0]
    if kind(text.type) == "string" and pa.types.is_large_string(text.type):
        text = text.cast(pa.string())
    return pc.split_pattern(text, pattern=sep)


def _split_whole(text, separator):
    """``string_split`` with a NULL separator (each string whole) or an empty one (its
    characters; ``''`` gives ``['']``, as DuckDB), over all rows at once; NULL for NULL."""
    if isinstance(text, pa.Scalar):
        return _split_whole(pa.array([text.as_py()], pa.string()), separator)[0]
    if isinstance(text, pa.ChunkedArray):
        text = text.combine_chunks()
    valid = valid_rows(text)
    text = pc.fill_null(text.cast(pa.string()), "")  # NULL rows are rebuilt NULL
    if separator is None:
        return rebuild(valid, valid.astype(np.int64), text.filter(pa.array(valid)))
    lengths = pc.utf8_length(text).to_numpy().astype(np.int64)
    counts = np.where(valid, np.maximum(lengths, 1), 0)
    return rebuild(valid, counts, _characters(text, valid & (lengths == 0)))


def _characters(text: pa.StringArray, empty: np.ndarray) -> pa.StringArray:
    """Every character of the strings, string after string, and one '' for each string
    marked ``empty``: a character starts at each UTF-8 byte that is not a continuation byte
    (10xxxxxx) and ends where the next element starts."""
    data, offsets = string_buffers(text)
    data = data[offsets[0]:offsets[-1]]
    chars = np.flatnonzero((data & 0xC0) != 0x80)
    blanks = (offsets[:-1] - offsets[0])[empty]
    starts = np.concatenate([blanks, chars])
    # a '' sits where the next string's first character starts: it goes first
    order = np.lexsort((np.r_[np.zeros(len(blanks)), np.ones(len(chars))], starts))
    element_offsets = np.append(starts[order], len(data)).astype(np.int32)
    return pa.StringArray.from_buffers(len(starts), pa.py_buffer(element_offsets),
                                       pa.py_buffer(data.tobytes()))


# --- whole-list functions: sort, distinct, concatenation, flatten, aggregates, ranges -------


def _rows_and_parts(ctx, lists, index: int = 0, rows: int | None = None):
    rows = row_count((lists,)) if rows is None else rows
    return rows, list_parts(lists_argument(ctx, lists, index, rows))


@register("array_sort", 1, 3)
def _list_sort(ctx, lists, order=None, nulls=None):
    """``list_sort(l[, 'ASC'|'DESC'[, 'NULLS FIRST'|'NULLS LAST']])`` (sqlglot reads
    ``list_reverse_sort`` as DESC); NULLs last unless told."""
    rows, parts = _rows_and_parts(ctx, lists)
    descending = order is not None and str(order.as_py()).upper() == "DESC"
    nulls_first = nulls is not None and str(nulls.as_py()).upper() == "NULLS FIRST"
    order_index = element_order(parts.parents, parts.elements, descending, nulls_first)
    result = rebuild(parts.valid, parts.lengths, parts.elements.take(order_index))
    return scalar_if_constant(result, lists)


def element_order(parents: np.ndarray, elements: pa.Array, descending: bool,
                   nulls_first: bool) -> pa.Array:
    """The order of the elements by row, then by value as ORDER BY sorts (lists too)."""
    from .sort_step import sort_columns  # the Sort step imports this family's modules

    columns, keys = sort_columns("e", elements, descending, nulls_first)
    columns["p"] = pa.array(parents)
    return pc.sort_indices(pa.table(columns), sort_keys=[("p", "ascending"), *keys])


def distinct_elements(parts) -> tuple[pa.Array, np.ndarray]:
    """Each row's distinct non-NULL elements in ascending order, and their row."""
    keep = valid_rows(parts.elements)
    parents = parts.parents[keep]
    elements = parts.elements.filter(pa.array(keep))
    order = element_order(parents, elements, False, False)
    elements = elements.take(order)
    parents = parents[np.asarray(order)]
    fresh = np.ones(len(parents), dtype=bool)
    if len(parents) > 1 and pa.types.is_interval(elements.type):
        # sorted as they compare, '1 month' beside '30 days': the same by fields, hashed
        ids = group_rows([parents, *_element_codes(elements)], len(parents)).ids
        fresh[:] = False
        fresh[np.unique(ids, return_index=True)[1]] = True
    elif len(parents) > 1:  # sorted, equal elements are neighbours: equal codes (NaN = NaN)
        same = np.ones(len(parents) - 1, dtype=bool)
        for column in (parents, *key_codes(elements)):
            same &= column[1:] == column[:-1]
        fresh[1:] = ~same
    return elements.filter(pa.array(fresh)), parents[fresh]


def _element_codes(elements: pa.Array) -> list[np.ndarray]:
    """Codes equal where list elements are the same to DuckDB's list_distinct, list_unique
    and list_has_any: an INTERVAL by its fields as they stand (``1 month`` is not ``30
    days`` there, though = holds), other values by their key codes."""
    if pa.types.is_interval(elements.type):
        return list(interval_rows.parts(elements)[:3])
    return key_codes(elements)


@register("array_distinct", 1, aliases=("list_distinct",))
@null_in_null_out
def _list_distinct(ctx, lists):
    """The distinct elements, NULLs left out (sorted: DuckDB promises no order)."""
    rows, parts = _rows_and_parts(ctx, lists)
    elements, parents = distinct_elements(parts)
    counts = np.bincount(parents, minlength=rows)
    return scalar_if_constant(rebuild(parts.valid, counts, elements), lists)


@register("list_unique", 1, aliases=("array_unique",))
def _list_unique(ctx, lists):
    """How many distinct non-NULL elements (UBIGINT); NULL for a NULL list, as DuckDB."""
    rows, parts = _rows_and_parts(ctx, lists)
    _, parents = distinct_elements(parts)
    counts = np.bincount(parents, minlength=rows).astype(np.uint64)
    return scalar_if_constant(pa.array(counts, pa.uint64(), mask=~parts.valid), lists)


def unified_elements(ctx, elements, what: str) -> list[pa.Array]:
    """The elements of several lists cast to their common type.  Text beside elements that
    are not text has none: a string in a list is no longer a literal, and DuckDB refuses to
    ``what`` such lists (``['1'] || [1]``)."""
    if common_type([e.type for e in elements], literal_strings=False) is None:
        shown = " and ".join(f"{type_name(e.type)}[]" for e in elements)
        raise ctx.error(f"cannot {what} lists of types {shown}")
    return unify(ctx, elements)


def concatenated(ctx, values, null_propagates: bool):
    """The lists of ``values`` joined per row.  A NULL list counts as empty (the result is
    NULL when all are) -- or, with ``null_propagates`` (``||``), makes the result NULL."""
    rows = row_count(values)
    parts = [list_parts(lists_argument(ctx, v, i, rows)) for i, v in enumerate(values)]
    elements = unified_elements(ctx, [p.elements for p in parts], "concatenate")
    parents = np.concatenate([p.parents for p in parts])
    source = np.concatenate([np.full(len(p.parents), i) for i, p in enumerate(parts)])
    order = np.lexsort((source, parents))  # stable: each list's elements keep their order
    valid = np.logical_and.reduce([p.valid for p in parts]) if null_propagates else \
        np.logical_or.reduce([p.valid for p in parts])
    counts = np.where(valid, np.sum([p.lengths for p in parts], axis=0), 0)
    kept = order[valid[parents[order]]]
    result = rebuild(valid, counts, pa.concat_arrays(elements).take(pa.array(kept)))
    return scalar_if_constant(result, *values)


@register("array_concat", 1, None, aliases=("list_concat", "list_cat", "array_cat"))
def _list_concat(ctx, *values):
    if all(isinstance(v, pa.Scalar) and pa.types.is_null(v.type) for v in values):
        return pa.scalar(None)
    return concatenated(ctx, values, null_propagates=False)


@register("list_append", 2, aliases=("array_append",))
def _list_append(ctx, lists, element):
    """The list with the value added at its end (a NULL list counts as empty)."""
    return concatenated(ctx, (lists, _as_list(ctx, element, lists)), null_propagates=False)


@register("list_prepend", 2, aliases=("array_prepend",))
def _list_prepend(ctx, lists, element):
    """``list_prepend(value, list)``: the value added at the start (a NULL list counts as
    empty).  sqlglot's node puts the list first."""
    return concatenated(ctx, (_as_list(ctx, element, lists), lists), null_propagates=False)


def _as_list(ctx, element, lists):
    """``[element]`` per row, refused when ``lists`` is not a list (DuckDB finds no
    ``list_concat`` for it)."""
    if not is_list(lists) and not pa.types.is_null(plain(lists).type):
        raise ctx.error(f"expects a list, got {lists.type}", 0)
    return list_value([element], row_count((lists, element)), ctx.error)


@register("list_reverse", 1, aliases=("array_reverse",))
@null_in_null_out
def _list_reverse(ctx, lists):
    """The elements in reverse order."""
    rows, parts = _rows_and_parts(ctx, lists)
    backwards = np.repeat(parts.starts + parts.lengths - 1, parts.lengths) - \
        ordinals(parts.lengths)
    result = rebuild(parts.valid, parts.lengths, parts.elements.take(pa.array(backwards)))
    return scalar_if_constant(result, lists)


@register("list_has_all", 2, aliases=("array_has_all",))
def _list_has_all(ctx, lists, wanted):
    """TRUE when every non-NULL element of ``wanted`` is in ``lists`` (``@>``); NULL when
    either is NULL."""
    return _found(ctx, lists, wanted, every=True)


@register("list_has_any", 2, aliases=("array_has_any",))
def _list_has_any(ctx, lists, wanted):
    """TRUE when a non-NULL element of ``wanted`` is in ``lists`` (``&&``); NULL when either
    is NULL."""
    return _found(ctx, lists, wanted, every=False)


def _found(ctx, lists, wanted, every: bool):
    """Whether all (``every``) or any of each row's non-NULL ``wanted`` elements equal an
    element of its list (NaN = NaN, lists element by element: by their key codes)."""
    rows = row_count((lists, wanted))
    have = list_parts(lists_argument(ctx, lists, 0, rows))
    need = list_parts(lists_argument(ctx, wanted, 1, rows))
    elements = pa.concat_arrays(unified_elements(ctx, (have.elements, need.elements),
                                                 "compare"))
    parents = np.concatenate([have.parents, need.parents])
    keys = group_rows([parents, *_element_codes(elements)], len(elements)).ids if len(elements) \
        else np.zeros(0, dtype=np.int64)
    valid = valid_rows(elements)
    split = len(have.elements)
    present = np.zeros(len(elements) + 1, dtype=bool)
    present[keys[:split][valid[:split]]] = True
    hit, asked = present[keys[split:]], valid[split:]
    if every:
        missing = np.bincount(need.parents[asked & ~hit], minlength=rows)
        found = missing == 0
    else:
        found = np.bincount(need.parents[asked & hit], minlength=rows) > 0
    result = pa.array(found, pa.bool_(), mask=~(have.valid & need.valid))
    return scalar_if_constant(result, lists, wanted)


@register("flatten", 1)
@null_in_null_out
def _flatten(ctx, lists):
    """A list of lists as one list (NULL inner lists left out)."""
    rows, parts = _rows_and_parts(ctx, lists)
    inner = parts.elements
    if pa.types.is_null(inner.type):
        inner = pa.nulls(len(inner), pa.list_(pa.null()))
    if not is_list(inner):
        raise ctx.error(f"expects a list of lists, got {lists.type}", 0)
    inner_parts = list_parts(as_lists(inner, len(inner)))
    counts = np.bincount(parts.parents, weights=inner_parts.lengths, minlength=rows)
    result = rebuild(parts.valid, counts.astype(np.int64), inner_parts.elements)
    return scalar_if_constant(result, lists)


_AGGREGATES = {"sum": "sum", "min": "min", "max": "max", "avg": "mean", "mean": "mean",
               "count": "count", "string_agg": None, "product": "product"}


def aggregated(ctx, lists, name: str, separator=None):
    """One aggregate over each list's elements; NULL for a NULL or empty list (``count``: 0,
    NULL for a NULL list)."""
    if name in list_aggregates.ENGINE_NAMES:
        return list_aggregates.over_elements(ctx, lists, name)
    if name not in _AGGREGATES:
        raise ctx.error(f"unknown or unsupported list aggregate {name!r}", 1)
    if name == "string_agg":  # as the aggregate: NULL without an element that is not NULL
        text = joined(ctx, lists, pa.scalar(",") if separator is None else separator)
        return pc.if_else(pc.equal(aggregated(ctx, lists, "count"), 0),
                          pa.scalar(None, pa.string()), text)
    rows, parts = _rows_and_parts(ctx, lists)
    elements = parts.elements
    if name in ("sum", "avg", "mean", "product") and not pa.types.is_null(elements.type) \
            and kind(elements.type) not in ("int", "uint", "float", "decimal"):
        raise ctx.error(f"{name} needs numbers, got a list of {elements.type}", 0)
    if pa.types.is_null(elements.type) and name in ("min", "max"):
        return scalar_if_constant(pa.nulls(rows), lists)
    if pa.types.is_interval(elements.type) and name in ("min", "max"):  # DuckDB's order
        extremes = group_extremes(elements, np.asarray(parts.parents, np.int64), rows,
                                  want_max=name == "max")
        return scalar_if_constant(extremes, lists)
    if name in ("avg", "mean", "product"):  # DuckDB's list_product is a DOUBLE too
        elements = elements.cast(pa.float64(), safe=False)  # integers past 2**53: rounded
    elif pa.types.is_null(elements.type) and name != "count":
        elements = elements.cast(pa.int64())
    elif (name == "sum" and kind(elements.type) in ("int", "uint")) or name in ("min", "max"):
        # the aggregate's own: an exact integer sum (past int64 a DECIMAL(38,0), DuckDB's
        # HUGEINT, no wrap); min / max in SQL's order (NaN above every number, lists too)
        ids = np.ascontiguousarray(parts.parents, dtype=np.int64)
        found = aggregate(name, elements, Groups(ids, rows, first_rows(ids, rows)))
        return scalar_if_constant(found, lists)
    grouped = pa.table({"p": pa.array(parts.parents), "e": elements}).group_by("p") \
        .aggregate([("e", _AGGREGATES[name])])
    where = np.full(rows, -1, dtype=np.int64)
    where[np.asarray(grouped.column("p"))] = np.arange(grouped.num_rows)
    result = grouped.column(f"e_{_AGGREGATES[name]}").combine_chunks() \
        .take(pa.array(where, mask=where < 0))
    if name == "count":
        result = pa.array(np.where(where < 0, 0, np.asarray(pc.fill_null(result, 0))),
                          pa.int64(), mask=~parts.valid)
    return scalar_if_constant(result, lists)


for _name in ("sum", "min", "max", "avg", "product", "count", "string_agg"):
    register(f"list_{_name}", 1, aliases=(f"array_{_name}",))(null_in_null_out(
        lambda ctx, lists, _name=_name: aggregated(ctx, lists, _name)))


@register("list_aggregate", 2, 3, aliases=("list_aggr", "array_aggregate", "array_aggr"))
@null_in_null_out
def _list_aggregate(ctx, lists, name, separator=None):
    function = ctx.constant(ctx.string(name, 1), 1, "aggregate name")
    return aggregated(ctx, lists, str(function).lower(), separator)


def joined(ctx, lists, separator):
    """The elements as text joined by the separator, NULL elements left out."""
    rows, parts = _rows_and_parts(ctx, lists)
    sep = ctx.constant(ctx.string(separator, 1), 1, "separator")
    sep = "," if sep is None else sep  # DuckDB: a NULL separator is the default one
    text = as_text(ctx, parts.elements, 0) if not pa.types.is_null(parts.elements.type) \
        else pa.nulls(len(parts.elements), pa.string())
    keep = valid_rows(text)
    counts = np.bincount(parts.parents[keep], minlength=rows)
    kept = rebuild(parts.valid, counts, text.cast(pa.string()).filter(pa.array(keep)))
    return scalar_if_constant(pc.binary_join(kept, sep), lists)


@register("array_to_string", 2, aliases=("array_join", "list_to_string"))
@null_in_null_out
def _array_to_string(ctx, lists, separator):
    """As DuckDB: '' for an empty list, but NULL for one holding only NULLs."""
    text = joined(ctx, lists, separator)
    rows, parts = _rows_and_parts(ctx, lists)
    empty = parts.lengths == 0
    only_nulls = pc.and_(pc.equal(aggregated(ctx, lists, "count"), 0),
                         scalar_if_constant(pa.array(~empty), lists))
    return pc.if_else(only_nulls, pa.scalar(None, pa.string()), text)


MAX_ELEMENTS = 2**31 - 1  # Arrow list offsets are int32 (DuckDB's limit is 2^32 per list)


def _series(ctx, values, inclusive: bool):
    """``range`` / ``generate_series`` as a list per row: start, start + step, ... before
    (range) or up to (generate_series) the end (``engine.integer_series``, the whole int64
    range; DATEs and TIMESTAMPs by an INTERVAL, ``engine.timestamp_series``); a zero step
    gives ``[]``, as DuckDB's list form (its table form refuses it)."""
    rows = row_count(values)
    if any(_temporal(v) for v in values):
        return _timestamp_series(ctx, values, inclusive, rows)
    start, end, step = (np.asarray(pc.fill_null(broadcast(ctx.integer(v, i), rows), 0)
                                   .to_numpy(), dtype=np.int64) for i, v in enumerate(values))
    valid = np.logical_and.reduce([np.asarray(broadcast(plain(v), rows).is_valid()
                                              .to_numpy(zero_copy_only=False), dtype=bool)
                                   for v in values])
    counts = np.where(valid, series_counts(start, end, step, inclusive), 0)
    check_elements(ctx, int(counts.sum()))
    elements = series_values(start, step, counts)
    return scalar_if_constant(rebuild(valid, counts, pa.array(elements, pa.int64())), *values)


def _temporal(value) -> bool:
    """A DATE, TIMESTAMP or INTERVAL argument?"""
    return _interval(value) or kind(plain(value).type) in ("date", "timestamp")


def _interval(value) -> bool:
    return isinstance(value, dto.Interval) or pa.types.is_interval(plain(value).type)


def _timestamp_series(ctx, values, inclusive: bool, rows: int) -> pa.Array:
    """The series of DATE / TIMESTAMP ``values`` (start, end) by an INTERVAL step: TIMESTAMP
    lists (WITH TIME ZONE when an end has one), NULL where an argument is."""
    shown = ", ".join(type_name(v.type) if not isinstance(v, dto.Interval) else "INTERVAL"
                      for v in values)
    null = [not isinstance(v, dto.Interval) and kind(plain(v).type) == "null" for v in values]
    if len(values) != 3 or not all(n or kind(plain(v).type) in ("date", "timestamp")
                                   for v, n in zip(values[:2], null)) or \
            not (null[2] or _interval(values[2])):
        raise ctx.error(f"No function matches the given name and argument types "
                        f"'{ctx.name}({shown})'")
    zone = next((v.type.tz for v, n in zip(values[:2], null)
                 if not n and pa.types.is_timestamp(v.type) and v.type.tz), None)
    ends = [pa.nulls(rows, pa.timestamp("us")) if n else
            pc.cast(dto.to_timestamp(broadcast(plain(v), rows)), pa.timestamp("us"))
            for v, n in zip(values[:2], null)]
    steps = interval_rows.as_rows(None if null[2] else values[2], rows, ctx.error)
    months, days, micros, valid = interval_rows.parts(steps)
    valid = valid & valid_rows(ends[0]) & valid_rows(ends[1])
    start, stop = (np.asarray(pc.fill_null(pc.cast(e, pa.int64()), 0).to_numpy(), np.int64)
                   for e in ends)
    keep = [np.where(valid, part, 0) for part in (months, days, micros)]
    counts, elements = series_steps(start, stop, *keep, inclusive,
                                    lambda count: check_elements(ctx, count))
    lists = rebuild(valid, counts, pa.array(elements, pa.timestamp("us", zone)))
    return scalar_if_constant(lists, *(v for v in values if not isinstance(v, dto.Interval)))


def check_elements(ctx, total: int) -> None:
    if total > MAX_ELEMENTS:
        raise ctx.error(f"the lists would hold {total:,} elements, more than "
                        f"{MAX_ELEMENTS:,}")
    if ctx.budget is not None:  # the values, their positions and the offsets
        ctx.budget.check(total * 24, f"{ctx.name}()")


@register("range", 1, 3)
def _range(ctx, *values):
    return _series(ctx, _bounds(values), inclusive=False)


@register("generate_series", 1, 3)
def _generate_series(ctx, *values):
    return _series(ctx, _bounds(values), inclusive=True)


def _bounds(values):
    """(start, end, step) of the one to three arguments (start 0, step 1 by default)."""
    if len(values) == 1:
        return (pa.scalar(0, pa.int64()), values[0], pa.scalar(1, pa.int64()))
    if len(values) == 2:
        return (*values, pa.scalar(1, pa.int64()))
    return values


@register("length", 1, aliases=("char_length", "character_length", "len"))
def _length(ctx, value):
    """A list's element count (BIGINT), else the string's length (``text_length``): one
    function for both, the argument's type decides."""
    if is_list(value):
        lengths = pc.cast(pc.list_value_length(as_lists(value, row_count((value,)))),
                          pa.int64())
        return scalar_if_constant(lengths, value)
    return text_length(ctx, value)


@register("concat", 1, None)
def _concat(ctx, *values):
    """``concat`` of lists is ``list_concat`` (NULLs skipped); of anything else the text
    concatenation (``text_concat``)."""
    if any(is_list(v) for v in values):
        if not all(is_list(v) or pa.types.is_null(plain(v).type) for v in values):
            raise ctx.error("cannot concatenate a list with a value that is not a list")
        return concatenated(ctx, values, null_propagates=False)
    return text_concat(ctx, *values)
