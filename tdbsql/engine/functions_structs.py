"""DuckDB's STRUCT syntax and functions (``struct_values`` holds the value work):

- ``{'a': 1, 'b': 'x'}`` / ``struct_pack(a := 1, b := 'x')`` (sqlglot's ``exp.Struct``);
  a repeated name is DuckDB's binder error.
- ``s.a`` (sqlglot's ``exp.Dot`` once the planner resolved ``s`` to a column), ``s['a']``
  and ``struct_extract(s, 'a')``: the field by name, any case; a missing one is an error.
- ``struct_extract_at(s, i)``: the field at 1-based position i.
- ``struct_insert(s, c := v, ...)``: s with fields added at its end.
- ``row(...)`` (DuckDB's unnamed TUPLE) is not supported.

A NULL struct has NULL fields; a NULL key or a bare NULL struct answers DuckDB's NULL-typed
NULL.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from ..errors import UnsupportedSql
from .functions import Call, register
from .struct_values import field_at, field_position, is_struct, struct_value


def struct_literal(evaluator, node: exp.Struct):
    names, values = _named_values(evaluator, node.expressions, node)
    return struct_value(names, values, evaluator.table.num_rows)


def _named_values(evaluator, items, node) -> tuple[list[str], list]:
    """The names and values of ``name := value`` / ``'name': value`` items."""
    names, values = [], []
    for item in items:
        if not isinstance(item, exp.PropertyEQ):
            raise UnsupportedSql(f"a struct field without a name: {node.sql(dialect='duckdb')!r}")
        name = item.this.name
        if name.lower() in (n.lower() for n in names):
            raise evaluator.error(f'Duplicate named argument "{name}" in struct_pack', item)
        names.append(name)
        values.append(evaluator._argument(item.expression))
    return names, values


def dot(evaluator, node: exp.Dot):
    """``s.a``: field a of the struct s."""
    value = evaluator.value(node.this)
    if not is_struct(value):
        raise evaluator.error(f"cannot take field {node.expression.name!r} of a "
                              f"{value.type} value", node)
    return _named_field(value, node.expression.name,
                        lambda message: evaluator.error(message, node))


def bracket(evaluator, node: exp.Bracket, value):
    """``s['a']``: a constant field name."""
    key = evaluator.value(node.expressions[0])
    if not isinstance(key, pa.Scalar) or not pa.types.is_string(key.type):
        raise UnsupportedSql(f"a struct indexed by other than a constant field name: "
                             f"{node.sql(dialect='duckdb')!r}")
    if not key.is_valid:
        return pa.scalar(None)
    return _named_field(value, key.as_py(), lambda message: evaluator.error(message, node))


def _named_field(value, name: str, error):
    position = field_position(value.type, name)
    if position is None:
        raise error(f'Could not find key "{name}" in struct')
    return field_at(value, position)


def _struct_argument(ctx: Call, value):
    if not is_struct(value):
        raise ctx.error(f"expects a STRUCT, got {value.type}", 0)
    return value


def _bare_null(*values) -> bool:
    return any(isinstance(v, pa.Scalar) and pa.types.is_null(v.type) for v in values)


@register("struct_extract", 2)
def _struct_extract(ctx: Call, value, key):
    if _bare_null(value, key):
        return pa.scalar(None)
    value = _struct_argument(ctx, value)
    name = ctx.constant(key, 1, "field name")
    if not isinstance(name, str):
        raise ctx.error("an integer key can only be used on unnamed structs, use a string "
                        "key instead", 1)
    return _named_field(value, name, ctx.error)


@register("struct_extract_at", 2)
def _struct_extract_at(ctx: Call, value, index):
    if _bare_null(value, index):
        return pa.scalar(None)
    value = _struct_argument(ctx, value)
    position = ctx.constant(ctx.integer(index, 1), 1, "field index")
    width = value.type.num_fields
    if position is None or not 1 <= position <= width:
        raise ctx.error(f"Key index {position} out of range - expected an index between 1 "
                        f"and {width}", 1)
    return field_at(value, position - 1)


def struct_insert(evaluator, node: exp.Anonymous):
    """``struct_insert(s, c := v, ...)``: s's fields, then the new ones."""
    if not node.expressions:
        raise evaluator.error("struct_insert() takes a struct and named values", node)
    value = evaluator.value(node.expressions[0])
    if not is_struct(value):
        raise evaluator.error(f"struct_insert(): expects a STRUCT, got {value.type}", node)
    names, values = _named_values(evaluator, node.expressions[1:], node)
    if not names:
        raise evaluator.error("struct_insert() needs at least one value to insert", node)
    kept = [f.name for f in value.type]
    if any(field_position(value.type, name) is not None for name in names):
        raise evaluator.error("struct_insert(): a field to insert is already in the struct",
                              node)
    fields = [field_at(value, i) for i in range(len(kept))]
    result = struct_value(kept + names, fields + values, evaluator.table.num_rows)
    return _null_where_null(result, value)


def _null_where_null(result, value):
    """``result`` NULL on the rows where the struct ``value`` is NULL."""
    if isinstance(value, pa.Scalar):
        return result if value.is_valid else pa.scalar(None, result.type)
    return pc.if_else(value.is_valid(), result, pa.scalar(None, result.type))


@register("row", 0, None)
def _row(ctx: Call, *values):
    raise UnsupportedSql("row(): DuckDB's unnamed structs (TUPLE) are not supported")


NAMED_CALLS = {"struct_insert": struct_insert}  # calls with name := value arguments
