"""List operators the evaluator dispatches on sqlglot's nodes: ``array_length`` / ``len``,
the ``l[i]`` / ``l[a:b]`` brackets (computed in ``list_values``; ``s[i]`` of a string too),
``||`` of lists and ``CAST(l AS T[])``.  The functions taking a lambda are in
``list_lambdas``, those the registry calls by name in ``functions_lists``.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from ..errors import SqlError, UnsupportedSql
from . import list_values
from .value_types import kind, plain
from .frame import broadcast


def array_size(evaluator, node: exp.ArraySize):
    values = list_array(evaluator, node.this)
    return pc.cast(pc.list_value_length(values), pa.int64())


def list_array(evaluator, node, value=None) -> pa.Array:
    """``node``'s value (``value`` when already evaluated) as a ListArray over the rows."""
    value = evaluator.value(node) if value is None else value
    if not list_values.is_list(value) and not pa.types.is_null(value.type):
        raise evaluator.error(f"expects a list, got {value.type}: "
                              f"{node.sql(dialect='duckdb')!r}", node)
    return list_values.as_lists(value, evaluator.table.num_rows)


def bracket(evaluator, node: exp.Bracket):
    """``l[i]`` and ``l[a:b]`` on a list (``list_values``); the index is as written
    (``planner.parse.written_indexes``)."""
    if len(node.expressions) != 1:
        raise UnsupportedSql(f"indexing with several keys: {node.sql(dialect='duckdb')!r}")
    target = evaluator.value(node.this)
    if kind(target.type) == "string":
        return _string_bracket(evaluator, node, target)
    if pa.types.is_map(target.type):
        return _map_bracket(evaluator, node, target)
    if pa.types.is_struct(target.type):  # s['a']
        from .functions_structs import bracket as struct_bracket
        return struct_bracket(evaluator, node, target)
    if not list_values.is_list(target) and not pa.types.is_null(target.type):
        raise UnsupportedSql(f"indexing a {target.type} value (only lists): "
                             f"{node.sql(dialect='duckdb')!r}")
    key, rows = node.expressions[0], evaluator.table.num_rows
    if not isinstance(key, exp.Slice):
        index = _index(evaluator, key)
        if pa.types.is_null(index.type):  # l[NULL]: DuckDB's NULL-typed NULL
            return pa.scalar(None)
        return list_values.element_at(target, index, rows)
    begin, end, step = (None if part is None else _index(evaluator, part)
                        for part in (key.this, key.expression, key.args.get("step")))
    try:
        return list_values.slice_of(target, begin, end, rows, step)
    except ValueError as err:  # a step of 0
        raise evaluator.error(str(err), key) from None


def _map_bracket(evaluator, node: exp.Bracket, maps):
    """``m[k]``: the value under key k (``map_extract_value``); a slice is DuckDB's error."""
    from .functions import Call, call, registry

    key = node.expressions[0]
    if isinstance(key, exp.Slice):
        raise evaluator.error("a slice takes a list or a string, not a MAP", node)
    ctx = Call("map_extract_value", node, (node.this, key), evaluator.sql, evaluator.budget,
               evaluator.table.num_rows)
    return call(registry()["map_extract_value"], ctx, [maps, evaluator.value(key)])


def _string_bracket(evaluator, node: exp.Bracket, text):
    """``s[i]`` (the i-th character, as ``substring(s, i, 1)``) and ``s[a:b]`` (characters
    a..b, 1-based, inclusive, negative from the end), as DuckDB (``functions_text``)."""
    from .functions import Call
    from .functions_text import character_at, string_slice

    key = node.expressions[0]
    if not isinstance(key, exp.Slice):
        ctx = Call("array_extract", node, (node.this, key, key), evaluator.sql)
        return character_at(ctx, text, _index(evaluator, key))
    if key.args.get("step") is not None:
        raise UnsupportedSql(f"a string slice with a step: {node.sql(dialect='duckdb')!r}")
    begin, end = (None if part is None else _index(evaluator, part)
                  for part in (key.this, key.expression))
    return string_slice(plain(text), begin, end)


def _index(evaluator, node):
    value = evaluator.value(node)
    if not (pa.types.is_integer(value.type) or pa.types.is_null(value.type)):
        raise evaluator.error(f"a list index must be an integer, got {value.type}", node)
    return value


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
    return cast_elements(evaluator, node, value, node.to.expressions[0], safe)


def cast_elements(evaluator, node, value, to: exp.DataType, safe: bool):
    """The lists ``value`` with each element cast to ``to`` (for ``node``, a CAST)."""
    lists = list_values.as_lists(value, 1 if isinstance(value, pa.Scalar)
                                 else len(value))
    parts = list_values.list_parts(lists)
    element = exp.column("__element", quoted=True)
    cast = (exp.TryCast if safe else exp.Cast)(this=element, to=to.copy())
    scope = pa.table({"__element": parts.elements})
    try:
        cast_elements = broadcast(type(evaluator)(scope, evaluator.sql, evaluator.budget)(cast),
                                  len(parts.elements))
    except SqlError as err:  # underline the CAST written, not the element's
        raise evaluator.error(err.plain_message, node) from None
    result = list_values.rebuild(parts.valid, parts.lengths, cast_elements)
    return list_values.scalar_if_constant(result, value)


def cast_map(evaluator, node, safe: bool):
    """``CAST(m AS MAP(K, V))``: its keys cast to K and its values to V as a CAST of each
    would, the MAP rebuilt (``map_values.build``: a key cast to NULL or to another key's
    value is DuckDB's error); a NULL casts to a NULL MAP."""
    from .map_values import build, field_lists

    value = evaluator.value(node.this)
    untyped = pa.types.is_null(value.type)
    if not pa.types.is_map(value.type) and not untyped:
        raise UnsupportedSql(f"CAST of a {value.type} to {node.to.sql(dialect='duckdb')} is "
                             "not supported (only of a MAP)")
    rows = 1 if isinstance(value, pa.Scalar) else len(value)
    keys, values = (cast_elements(evaluator, node, value if untyped else
                                  field_lists(value, field, rows), to, safe)
                    for field, to in enumerate(node.to.expressions))
    return build(keys, values, rows, lambda message: evaluator.error(message, node))
