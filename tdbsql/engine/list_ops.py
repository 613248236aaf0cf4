"""List values: ``array_length`` / ``len``, ``list_filter(list, x -> predicate)`` and the
``l[i]`` / ``l[a:b]`` brackets (computed in ``list_values``).

sqlglot decorrelates ``EXISTS`` subqueries that compare with ``<>`` (TPC-H Q21) into
``ARRAY_AGG`` per key plus ``ARRAY_LENGTH(LIST_FILTER(agg, x -> outer <> x))``; these are the
list operations that plan needs.  A lambda body is evaluated once over all list elements, with
the row's own columns repeated for each of its elements.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from ..errors import SqlError, UnsupportedSql
from . import list_values
from .value_types import kind, null_like, plain
from .frame import broadcast


def array_size(evaluator, node: exp.ArraySize):
    values = _list_array(evaluator, node.this)
    return pc.cast(pc.list_value_length(values), pa.int64())


def array_filter(evaluator, node: exp.ArrayFilter):
    return _filtered(evaluator, _list_array(evaluator, node.this), node.expression, node)


def _filtered(evaluator, lists: pa.ListArray, function: exp.Expression, node):
    """``lists`` keeping the elements the one-argument lambda ``function`` holds for
    (``node``, the call, for messages; the plan's nodes are never rewrapped)."""
    _check_lambda(function, "list_filter", node)
    parts = list_values.list_parts(lists)
    keep = broadcast(_lambda_values(evaluator, parts, function), len(parts.elements))
    if pa.types.is_null(keep.type):  # x -> NULL keeps nothing
        keep = keep.cast(pa.bool_())
    keep = np.asarray(pc.fill_null(keep, False).to_numpy(zero_copy_only=False), dtype=bool)
    counts = np.bincount(parts.parents, weights=keep, minlength=len(lists)).astype(np.int64)
    return list_values.rebuild(parts.valid, counts, parts.elements.filter(pa.array(keep)))


def _check_lambda(function: exp.Expression, name: str, node) -> None:
    if not isinstance(function, exp.Lambda) or len(function.expressions) != 1:
        raise UnsupportedSql(f"{name} needs a one-argument lambda: {node.sql()!r}")


def _list_array(evaluator, node, value=None) -> pa.Array:
    """``node``'s value (``value`` when already evaluated) as a ListArray over the rows."""
    value = evaluator.value(node) if value is None else value
    if not list_values.is_list(value) and not pa.types.is_null(value.type):
        raise UnsupportedSql(f"{node.sql()!r} is not a list")
    return list_values.as_lists(value, evaluator.table.num_rows)


def array_any(evaluator, node: exp.ArrayAny):
    """sqlglot's ARRAY_ANY(list, f): TRUE for an empty list or when f holds for an element
    (what its DuckDB spelling ``len(l) = 0 OR len(list_filter(l, f)) <> 0`` computes)."""
    lists = _list_array(evaluator, node.this)
    matched = pc.list_value_length(_filtered(evaluator, lists, node.expression, node))
    empty = pc.equal(pc.list_value_length(lists), 0)
    return pc.or_kleene(empty, pc.not_equal(matched, 0))


def bracket(evaluator, node: exp.Bracket):
    """``l[i]`` and ``l[a:b]`` on a list (``list_values``); the index is as written
    (``planner.parse.written_indexes``)."""
    if len(node.expressions) != 1:
        raise UnsupportedSql(f"indexing with several keys: {node.sql(dialect='duckdb')!r}")
    target = evaluator.value(node.this)
    if kind(target.type) == "string":
        return _string_bracket(evaluator, node, target)
    if not list_values.is_list(target) and not pa.types.is_null(target.type):
        raise UnsupportedSql(f"indexing a {target.type} value (only lists): "
                             f"{node.sql(dialect='duckdb')!r}")
    key, rows = node.expressions[0], evaluator.table.num_rows
    if not isinstance(key, exp.Slice):
        index = _index(evaluator, key)
        if pa.types.is_null(index.type):  # l[NULL]: DuckDB's NULL-typed NULL
            return pa.scalar(None)
        return list_values.element_at(target, index, rows)
    if key.args.get("step") is not None:
        raise UnsupportedSql(f"a list slice with a step: {node.sql(dialect='duckdb')!r}")
    begin, end = (None if part is None else _index(evaluator, part)
                  for part in (key.this, key.expression))
    return list_values.slice_of(target, begin, end, rows)


def _string_bracket(evaluator, node: exp.Bracket, text):
    """``s[i]`` (the i-th character, as ``substring(s, i, 1)``) and ``s[a:b]`` with constant
    bounds (characters a..b, 1-based, inclusive, negative from the end), as DuckDB."""
    key = node.expressions[0]
    if not isinstance(key, exp.Slice):
        from .functions import REGISTRY, Call

        ctx = Call("array_extract", node, (node.this, key, key), evaluator.sql)
        return REGISTRY["substring"].impl(ctx, text, _index(evaluator, key),
                                          pa.scalar(1, pa.int64()))
    bounds = []
    for part in (key.this, key.expression):
        value = None if part is None else _index(evaluator, part)
        if value is not None and not isinstance(value, pa.Scalar) or \
                key.args.get("step") is not None:
            raise UnsupportedSql(f"a string slice with bounds that are not constants: "
                                 f"{node.sql(dialect='duckdb')!r}")
        if value is not None and not value.is_valid:
            return null_like(text, pa.string())
        bounds.append(None if value is None else value.as_py())
    begin, end = bounds
    start = 0 if begin is None or begin == 0 else (begin - 1 if begin > 0 else begin)
    stop = None if end is None or end == -1 else (end + 1 if end < 0 else end)
    if end == 0:
        return pc.utf8_slice_codeunits(plain(text), 0, 0)
    return pc.utf8_slice_codeunits(plain(text), start, stop)


def _index(evaluator, node):
    value = evaluator.value(node)
    if not (pa.types.is_integer(value.type) or pa.types.is_null(value.type)):
        raise evaluator.error(f"a list index must be an integer, got {value.type}", node)
    return value


def transform(evaluator, node: exp.Transform):
    """``list_transform(l, x -> f(x))`` (also ``lambda x: f(x)``): f over every element, the
    lists keeping their shape; the body is evaluated once over all elements."""
    value = evaluator.value(node.this)
    if isinstance(value, pa.Scalar) and pa.types.is_null(value.type):
        return pa.scalar(None)  # DuckDB's NULL-typed NULL
    lists = _list_array(evaluator, node.this, value)
    _check_lambda(node.expression, "list_transform", node)
    parts = list_values.list_parts(lists)
    values = broadcast(_lambda_values(evaluator, parts, node.expression), len(parts.elements))
    return list_values.rebuild(parts.valid, parts.lengths, values)


def _lambda_values(evaluator, parts: list_values.ListParts, function: exp.Lambda):
    """The one-argument lambda's body over the flattened elements of ``parts``, each seeing
    its row's columns."""
    variable = function.expressions[0].name
    table = evaluator.table
    scope = table.take(parts.parents) if table.num_columns else table
    scope = scope.append_column(variable, parts.elements)
    body = function.this.transform(
        lambda n: exp.column(variable, quoted=True) if isinstance(n, exp.Identifier)
        and n.name == variable and not isinstance(n.parent, exp.Column) else n)
    return type(evaluator)(scope, evaluator.sql)(body)


def any_list(values) -> bool:
    return any(list_values.is_list(value) for value in values)


def concatenated(ctx, values):
    """``a || b`` on lists: one list, NULL when either is NULL (``list_concat`` skips them)."""
    from .functions_lists import concatenated as joined

    return joined(ctx, values, null_propagates=True)


def cast_list(evaluator, node, safe: bool):
    """``CAST(l AS T[])``: each element cast to T as a CAST of it would (TRY_CAST: NULL where
    one fails), the lists keeping their shape; a NULL casts to a NULL list."""
    value = evaluator.value(node.this)
    if not list_values.is_list(value) and not pa.types.is_null(value.type):
        raise evaluator.error(f"cannot CAST {value.type} to {node.to.sql(dialect='duckdb')}",
                              node)
    lists = list_values.as_lists(value, 1 if isinstance(value, pa.Scalar)
                                 else len(value))
    parts = list_values.list_parts(lists)
    element = exp.column("__element", quoted=True)
    cast = (exp.TryCast if safe else exp.Cast)(this=element, to=node.to.expressions[0].copy())
    scope = pa.table({"__element": parts.elements})
    try:
        cast_elements = broadcast(type(evaluator)(scope, evaluator.sql)(cast),
                                  len(parts.elements))
    except SqlError as err:  # underline the CAST written, not the element's
        raise evaluator.error(err.plain_message, node) from None
    result = list_values.rebuild(parts.valid, parts.lengths, cast_elements)
    return list_values.scalar_if_constant(result, value)
