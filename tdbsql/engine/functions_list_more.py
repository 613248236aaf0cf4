"""More of DuckDB's list functions, registered into ``functions.REGISTRY``:

- ``list_where(l, mask)``: the elements where the mask is TRUE (a mask longer than the list
  gives NULLs for the positions past it); ``list_select(l, positions)``: the elements at the
  1-based positions (NULL for one outside the list).  A NULL in the mask or the positions is
  DuckDB's error.
- ``list_resize(l, n[, fill])`` / ``array_resize``: the first n elements, padded with fill
  (NULL by default); a NULL n gives [] (past 2**31 - 1 elements in all: an error).
- ``array_push_back`` / ``array_push_front``: ``list_append`` / ``list_prepend``;
  ``array_pop_back`` / ``array_pop_front``: the list without its last / first element.
- ``list_grade_up(l[, order[, nulls]])`` / ``grade_up`` / ``array_grade_up``: the 1-based
  positions that sort the list (``list_sort``'s order; ties keep their order).
- ``list_intersect(a, b)`` / ``array_intersect``: the distinct elements of a also in b,
  NULLs left out (in ascending order: DuckDB promises none).
- ``cardinality(l)``: the length, UBIGINT (of a MAP: its entries).

NULL list in, NULL out.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .functions import REGISTRY, register
from .hash_table import group_rows, key_codes
from .functions_lists import check_elements, lists_argument, null_in_null_out, row_count
from .list_values import list_parts, map_entries, ordinals, rebuild, scalar_if_constant
from .value_types import bare_null, cast_value, kind, plain, valid_rows


def _bare_null_in_null_out(impl):
    """``impl`` answering a bare NULL list or chooser with DuckDB's NULL-typed NULL."""
    def call(ctx, lists, chooser):
        if bare_null(lists, chooser):
            return pa.scalar(None)
        return impl(ctx, lists, chooser)
    return call


def _parts(ctx, values, index: int, rows: int):
    return list_parts(lists_argument(ctx, values, index, rows))


def _picked(ctx, lists, chooser, positions_of):
    """The elements of ``lists`` at the positions ``positions_of(chooser parts)`` gives
    (0-based, per chooser element; -1 for none: a NULL element)."""
    rows = row_count((lists, chooser))
    source, chosen = _parts(ctx, lists, 0, rows), _parts(ctx, chooser, 1, rows)
    if chosen.elements.null_count and not valid_rows(chosen.elements)[
            (source.valid & chosen.valid)[chosen.parents]].all():
        raise ctx.error("NULLs are not allowed as list elements in the second input "
                        "parameter.", 1)
    position, keep = positions_of(chosen)
    valid = source.valid & chosen.valid
    keep &= valid[chosen.parents]
    parents = chosen.parents[keep]
    position = position[keep]
    inside = (position >= 0) & (position < source.lengths[parents])
    index = np.where(inside, source.starts[parents] + position, 0)
    elements = source.elements.take(pa.array(index, mask=~inside)) if len(index) else \
        source.elements.slice(0, 0)
    counts = np.bincount(parents, minlength=rows)
    return scalar_if_constant(rebuild(valid, counts, elements), lists, chooser)


@register("list_where", 2, aliases=("array_where",))
@_bare_null_in_null_out
def _list_where(ctx, lists, mask):
    def positions(chosen):
        if not pa.types.is_boolean(chosen.elements.type) and \
                not pa.types.is_null(chosen.elements.type):
            raise ctx.error(f"the mask must be a list of BOOLEANs, got {mask.type}", 1)
        truth = pc.fill_null(chosen.elements.cast(pa.bool_()), False)
        return ordinals(chosen.lengths), truth.to_numpy(zero_copy_only=False)
    return _picked(ctx, lists, mask, positions)


@register("list_select", 2, aliases=("array_select",))
@_bare_null_in_null_out
def _list_select(ctx, lists, positions):
    def picked(chosen):
        if kind(chosen.elements.type) not in ("int", "uint", "null"):
            raise ctx.error(f"the positions must be a list of integers, got {positions.type}",
                            1)
        ones = chosen.elements.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
        return ones - 1, np.ones(len(ones), bool)
    return _picked(ctx, lists, positions, picked)


@register("list_resize", 2, 3, aliases=("array_resize",))
@null_in_null_out
def _list_resize(ctx, lists, size, fill=None):
    rows = row_count((lists, size) + (() if fill is None else (fill,)))
    source = _parts(ctx, lists, 0, rows)
    sizes = ctx.integer(size, 1)
    sizes = pa.repeat(sizes, rows) if isinstance(sizes, pa.Scalar) else sizes
    wanted = sizes.fill_null(0).to_numpy(zero_copy_only=False)
    if (wanted < 0).any():
        raise ctx.error(f"Type INT64 with value {int(wanted.min())} can't be cast because the "
                        "value is out of range for the destination type UINT64", 1)
    wanted = np.where(source.valid, wanted, 0)
    check_elements(ctx, int(wanted.sum()))
    parents = np.repeat(np.arange(rows), wanted)
    position = ordinals(wanted)
    inside = position < source.lengths[parents]
    padding = _fill_values(ctx, fill, source.elements.type, rows)
    index = np.where(inside, source.starts[parents] + position, len(source.elements) + parents)
    elements = pa.concat_arrays([source.elements, padding]).take(pa.array(index))
    return scalar_if_constant(rebuild(source.valid, wanted, elements), lists, size)


def _fill_values(ctx, fill, element_type: pa.DataType, rows: int) -> pa.Array:
    """resize's fill value per row, of the elements' type (NULL without one)."""
    if fill is None or pa.types.is_null(element_type):
        return pa.nulls(rows, element_type)
    try:
        fill = cast_value(plain(fill), element_type)
    except ValueError as err:
        raise ctx.error(str(err), 2) from None
    return pa.repeat(fill, rows) if isinstance(fill, pa.Scalar) else fill


@register("array_push_back", 2)
def _array_push_back(ctx, lists, element):
    return REGISTRY["list_append"].impl(ctx, lists, element)


@register("array_push_front", 2)
def _array_push_front(ctx, lists, element):
    return REGISTRY["list_prepend"].impl(ctx, lists, element)


def _popped(first: bool):
    @null_in_null_out
    def impl(ctx, lists):
        rows = row_count((lists,))
        source = _parts(ctx, lists, 0, rows)
        kept = np.maximum(source.lengths - 1, 0)
        index = np.repeat(source.starts + (1 if first else 0), kept) + ordinals(kept)
        elements = source.elements.take(pa.array(index, pa.int64()))
        return scalar_if_constant(rebuild(source.valid, kept, elements), lists)
    return impl


register("array_pop_back", 1)(_popped(first=False))
register("array_pop_front", 1)(_popped(first=True))


@register("list_grade_up", 1, 3, aliases=("grade_up", "array_grade_up"))
@null_in_null_out
def _list_grade_up(ctx, lists, order=None, nulls=None):
    from .functions_lists import element_order

    rows = row_count((lists,))
    source = _parts(ctx, lists, 0, rows)
    descending = order is not None and str(ctx.constant(order, 1, "order")).upper() == "DESC"
    nulls_first = nulls is not None and \
        str(ctx.constant(nulls, 2, "NULL order")).upper() == "NULLS FIRST"
    sorted_index = np.asarray(element_order(source.parents, source.elements, descending,
                                            nulls_first), np.int64)
    grades = sorted_index - source.starts[source.parents] + 1  # sorted: the same rows
    return scalar_if_constant(rebuild(source.valid, source.lengths, pa.array(grades)), lists)


@register("list_intersect", 2, aliases=("array_intersect",))
@null_in_null_out
def _list_intersect(ctx, left, right):
    from .functions_lists import distinct_elements, unified_elements

    rows = row_count((left, right))
    parts = [_parts(ctx, value, i, rows) for i, value in enumerate((left, right))]
    valid = parts[0].valid  # a NULL second list holds nothing in common: [], as DuckDB
    ours, our_rows = distinct_elements(parts[0])
    theirs, their_rows = distinct_elements(parts[1])
    ours, theirs = unified_elements(ctx, [ours, theirs], "intersect")
    # equal elements of one row share a group (NaN = NaN, as DuckDB's list functions)
    codes = key_codes(pa.concat_arrays([ours, theirs]))
    ids = group_rows([np.concatenate([our_rows, their_rows]), *codes],
                     len(our_rows) + len(their_rows)).ids
    at = np.flatnonzero(np.isin(ids[:len(our_rows)], ids[len(our_rows):])
                        & valid[our_rows])
    counts = np.bincount(our_rows[at], minlength=rows)
    return scalar_if_constant(rebuild(valid, counts, ours.take(pa.array(at, pa.int64()))),
                              left, right)


@register("cardinality", 1)
def _cardinality(ctx, lists):
    rows = row_count((lists,))
    if pa.types.is_map(lists.type):  # a MAP's entries
        lists = scalar_if_constant(map_entries(lists, rows), lists)
    source = _parts(ctx, lists, 0, rows)
    answer = pa.array(source.lengths.astype(np.uint64), pa.uint64(), mask=~source.valid)
    return scalar_if_constant(answer, lists)
