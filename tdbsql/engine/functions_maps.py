"""DuckDB's MAP functions, registered into ``functions.REGISTRY`` (the values themselves are
built and searched in ``map_values``):

- ``map(keys, values)`` and ``MAP {k: v, ...}`` (``functions.call_shape`` turns it into map's
  two lists): a MAP per row; keys unique and not NULL.
- ``map_extract_value(m, k)`` (``m[k]``, in ``list_ops.bracket``): the value under k, NULL
  when there is none; ``map_extract(m, k)`` / ``element_at``: that as a one-element list,
  ``[]`` when there is none.
- ``map_keys``, ``map_values``, ``map_entries`` (``STRUCT(key, value)[]``) as lists.
- ``map_contains(m, k)``, ``map_contains_value(m, v)``: NULL for a NULL k or v;
  ``map_contains_entry(m, k, v)``: values compared as IS NOT DISTINCT FROM.
- ``map_concat(m1, m2, ...)``: later MAPs' values win (``map_values.concat``).
- ``map_from_entries(l)``: a list of (key, value) STRUCTs as a MAP.

``cardinality`` (lists and MAPs) is in ``functions_list_more``.  A NULL MAP in, NULL out.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from .functions import register
from .functions_lists import lists_argument, row_count
from .frame import broadcast
from .list_values import list_parts, map_entries, rebuild, scalar_if_constant
from .map_values import (build, concat, entry_parts, field_lists, found_at, is_map,
                         not_distinct, value_at, values_under)
from .value_types import null_like, plain, type_name, valid_rows


@register("map", 0, 2)
def _map(ctx, keys=None, values=None):
    if keys is None:  # map(): DuckDB's MAP("NULL", "NULL")
        keys = values = pa.scalar([], pa.list_(pa.null()))
    if values is None:
        raise ctx.error("takes a list of keys and a list of values, got one argument")
    rows = row_count((keys, values))
    for index, value in enumerate((keys, values)):
        lists_argument(ctx, value, index, rows)
    return build(keys, values, rows, ctx.error)


@register("map_from_entries", 1)
def _map_from_entries(ctx, entries):
    if pa.types.is_null(plain(entries).type):
        return null_like(entries, pa.null())
    rows = row_count((entries,))
    parts = list_parts(lists_argument(ctx, entries, 0, rows))
    if not pa.types.is_struct(parts.elements.type) or parts.elements.type.num_fields != 2:
        raise ctx.error(f"expects a list of (key, value) STRUCTs, got "
                        f"{type_name(plain(entries).type)}", 0)
    if parts.elements.null_count:
        raise ctx.error("The list of entries can not contain NULL values.", 0)
    keys, values = (rebuild(parts.valid, parts.lengths, parts.elements.field(i))
                    for i in (0, 1))
    return build(scalar_if_constant(keys, entries), scalar_if_constant(values, entries), rows,
                 ctx.error)


def _on_maps(out_type):
    """An implementation taking a MAP first: type-checked, a NULL-typed NULL answered with
    a NULL of ``out_type`` (None: DuckDB's NULL-typed NULL) and the row count passed on."""
    def wrap(impl):
        def call(ctx, maps, *rest):
            if pa.types.is_null(plain(maps).type):
                return null_like(maps, out_type or pa.null())
            if not is_map(maps):
                raise ctx.error(f"expects a MAP, got {type_name(plain(maps).type)}", 0)
            return impl(ctx, maps, *rest, rows=row_count((maps, *rest)))
        return call
    return wrap


@register("map_extract_value", 2)
@_on_maps(None)
def _map_extract_value(ctx, maps, key, rows: int):
    return value_at(maps, key, rows, ctx.error)


@register("map_extract", 2, aliases=("element_at",))
@_on_maps(None)
def _map_extract(ctx, maps, key, rows: int):
    parts = entry_parts(maps, rows)
    position = found_at(parts, 0, key, rows, ctx.error)
    found = position >= 0
    values = parts.elements.field(1).take(pa.array(position[found]))
    return scalar_if_constant(rebuild(parts.valid, found.astype(np.int64), values), maps, key)


def _field_lists(field: int):
    @_on_maps(None)
    def impl(ctx, maps, rows: int):
        return field_lists(maps, field, rows)
    return impl


register("map_keys", 1)(_field_lists(0))
register("map_values", 1)(_field_lists(1))


@register("map_entries", 1)
@_on_maps(None)
def _map_entries(ctx, maps, rows: int):
    return scalar_if_constant(map_entries(maps, rows), maps)


def _containing(field: int):
    """map_contains (keys, ``field`` 0) / map_contains_value (values, 1)."""
    @_on_maps(pa.bool_())
    def impl(ctx, maps, wanted, rows: int):
        parts = entry_parts(maps, rows)
        found = found_at(parts, field, wanted, rows, ctx.error) >= 0
        unknown = ~parts.valid | ~valid_rows(broadcast(plain(wanted), rows))
        return scalar_if_constant(pa.array(found, mask=unknown), maps, wanted)
    return impl


register("map_contains", 2)(_containing(0))
register("map_contains_value", 2)(_containing(1))


@register("map_contains_entry", 3)
@_on_maps(pa.bool_())
def _map_contains_entry(ctx, maps, key, value, rows: int):
    parts = entry_parts(maps, rows)
    position = found_at(parts, 0, key, rows, ctx.error)  # the key looked up once
    same = not_distinct(values_under(parts, position, rows), value, rows, ctx.error)
    return scalar_if_constant(pa.array((position >= 0) & same, mask=~parts.valid), maps, key,
                              value)


@register("map_concat", 0, None)
def _map_concat(ctx, *maps):
    if len(maps) < 2:
        raise ctx.error("The provided amount of arguments is incorrect, please provide 2 or "
                        "more maps")
    for index, value in enumerate(maps):
        if not is_map(value) and not pa.types.is_null(plain(value).type):
            raise ctx.error(f"expects a MAP, got {type_name(plain(value).type)}", index)
    return concat(list(maps), row_count(maps), ctx.error)

