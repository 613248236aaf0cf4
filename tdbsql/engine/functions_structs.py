"""DuckDB's STRUCT syntax and functions (``struct_values`` holds the value work):

- ``{'a': 1, 'b': 'x'}`` / ``struct_pack(a := 1, b := 'x')`` (sqlglot's ``exp.Struct``);
  a repeated name is DuckDB's binder error.
- ``s.a`` (sqlglot's ``exp.Dot`` once the planner resolved ``s`` to a column), ``s['a']``
  and ``struct_extract(s, 'a')``: the field by name, any case; a missing one is an error.
- ``struct_extract_at(s, i)``: the field at 1-based position i.
- ``struct_insert(s, c := v, ...)``: s with fields added at its end; ``struct_update``
  replaces fields of s (adding the others); ``struct_concat(s, t, ...)``: the fields of all;
  a NULL struct there gives NULL fields, as DuckDB.
- ``struct_keys(s)``: the field names.
- ``CAST(s AS STRUCT(a T, ...))``: by field name, as DuckDB.
- ``row(v, ...)`` / ``(v, w, ...)``: DuckDB's unnamed struct (TUPLE), its fields reached by
  position (``struct_extract(s, 1)``, ``s[1]``, ``struct_extract_at``); a CAST to a
  STRUCT(a T, ...) names them in order.  ``row()`` (no fields) is not supported.

A NULL struct has NULL fields; a NULL key or a bare NULL struct answers DuckDB's NULL-typed
NULL.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from ..errors import SqlError, UnsupportedSql
from .frame import broadcast
from .functions import Call, register
from .list_values import scalar_if_constant
from .struct_values import (field_at, field_position, is_struct, is_unnamed, struct_value,
                            unnamed_struct)
from .value_types import bare_null, kind, null_rows, type_name


def struct_literal(evaluator, node: exp.Struct):
    if not node.expressions:
        raise UnsupportedSql("the empty STRUCT {} is not supported")
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


def row(evaluator, node: exp.Tuple):
    """``(v, w, ...)``: the unnamed struct of the values."""
    return unnamed_struct([evaluator._argument(item) for item in node.expressions],
                          evaluator.table.num_rows)


def dot(evaluator, node: exp.Dot):
    """``s.a``: field a of the struct s."""
    value = evaluator.value(node.this)
    if not is_struct(value) or is_unnamed(value.type):
        raise evaluator.error(f"cannot take field {node.expression.name!r} of a "
                              f"{value.type} value", node)
    return _named_field(value, node.expression.name,
                        lambda message: evaluator.error(message, node))


def bracket(evaluator, node: exp.Bracket, value):
    """``s['a']``: a constant field name."""
    key = evaluator.value(node.expressions[0])
    if isinstance(key, pa.Scalar) and is_unnamed(value.type) and kind(key.type) == "int":
        return _field_number(value, key.as_py(), lambda message: evaluator.error(message, node))
    if not isinstance(key, pa.Scalar) or not pa.types.is_string(key.type):
        raise UnsupportedSql(f"a struct indexed by other than a constant field name: "
                             f"{node.sql(dialect='duckdb')!r}")
    if not key.is_valid:
        return pa.scalar(None)
    return _named_field(value, key.as_py(), lambda message: evaluator.error(message, node))


def _named_field(value, name: str, error):
    if is_unnamed(value.type):
        raise error("struct_extract with a string key cannot be used on an unnamed struct, "
                    "use a numeric index instead")
    position = field_position(value.type, name)
    if position is None:
        raise error(f'Could not find key "{name}" in struct')
    return field_at(value, position)


def _struct_argument(ctx: Call, value):
    if not is_struct(value):
        raise ctx.error(f"expects a STRUCT, got {value.type}", 0)
    return value


@register("struct_extract", 2)
def _struct_extract(ctx: Call, value, key):
    if bare_null(value, key):
        return pa.scalar(None)
    value = _struct_argument(ctx, value)
    name = ctx.constant(key, 1, "field name")
    if isinstance(name, int) and is_unnamed(value.type):
        return _field_number(value, name, lambda message: ctx.error(message, 1))
    if not isinstance(name, str):
        raise ctx.error("an integer key can only be used on unnamed structs, use a string "
                        "key instead", 1)
    return _named_field(value, name, ctx.error)


def _field_number(value, number: int | None, error):
    """Field ``number`` (1-based) of the unnamed struct ``value``; NULL for a NULL one."""
    width = value.type.num_fields
    if number is None:
        return pa.scalar(None)
    if not 1 <= number <= width:
        raise error(f"Key index {number} for struct_extract out of range - expected an "
                    f"index between 1 and {width}")
    return field_at(value, number - 1)


@register("struct_extract_at", 2)
def _struct_extract_at(ctx: Call, value, index):
    if bare_null(value, index):
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
    value, names, values = _struct_and_named(evaluator, node, "insert")
    if any(field_position(value.type, name) is not None for name in names):
        raise evaluator.error("struct_insert(): Duplicate struct entry name", node)
    return _updated(evaluator, value, names, values)


def struct_update(evaluator, node: exp.Anonymous):
    """``struct_update(s, c := v, ...)``: s with fields c replaced (their type too), new
    ones added at its end."""
    return _updated(evaluator, *_struct_and_named(evaluator, node, "update"))


def _updated(evaluator, value, names: list[str], values: list):
    """The struct ``value`` (a NULL one: NULL fields, as DuckDB) with fields ``names`` set
    to ``values``: those it has replaced, the others added at its end."""
    fields = {f.name.lower(): (f.name, field_at(value, i)) for i, f in enumerate(value.type)}
    for name, item in zip(names, values):  # the name as the update spells it, as DuckDB
        fields[name.lower()] = (name, item)
    return struct_value([n for n, _ in fields.values()], [v for _, v in fields.values()],
                        evaluator.table.num_rows)


def _struct_and_named(evaluator, node: exp.Anonymous, verb: str):
    """The struct and the ``name := value`` items of struct_insert / struct_update."""
    name = f"struct_{verb}"
    if len(node.expressions) < 2:
        raise evaluator.error(f"{name}(): Can't {verb} nothing into a STRUCT", node)
    value = evaluator.value(node.expressions[0])
    if not is_struct(value) or is_unnamed(value.type):
        raise evaluator.error(f"{name}(): The first argument to {name} must be a STRUCT",
                              node.expressions[0])
    names, values = _named_values(evaluator, node.expressions[1:], node)
    return value, names, values


@register("struct_concat", 1, None)
def _struct_concat(ctx: Call, *values):
    """The fields of every struct in order (a NULL struct's NULL); a repeated name is an
    error."""
    names, fields = [], []
    for index, value in enumerate(values):
        if not is_struct(value):
            raise ctx.error(f'Argument at position "{index + 1}" is not a STRUCT', index)
        if is_unnamed(value.type):
            raise UnsupportedSql("struct_concat() of unnamed structs (TUPLE) is not supported")
        for position, field in enumerate(value.type):
            if field.name.lower() in (n.lower() for n in names):
                raise ctx.error(f'Arguments contain duplicate STRUCT entry "{field.name}"',
                                index)
            names.append(field.name)
            fields.append(field_at(value, position))
    return struct_value(names, fields, ctx.rows)


@register("struct_keys", 1)
def _struct_keys(ctx: Call, value):
    """The field names, a VARCHAR[] (NULL for a NULL struct)."""
    if bare_null(value):
        return pa.scalar(None, pa.list_(pa.string()))
    value = _struct_argument(ctx, value)
    if is_unnamed(value.type):
        raise ctx.error("struct_keys() expects a STRUCT argument", 0)
    names = pa.scalar([f.name for f in value.type], pa.list_(pa.string()))
    if isinstance(value, pa.Scalar):
        return names if value.is_valid else pa.scalar(None, names.type)
    return pc.if_else(value.is_valid(), names, pa.scalar(None, names.type))


def cast_struct(evaluator, node, safe: bool):
    """``CAST(s AS STRUCT(a T, ...))``: each target field is s's field of that name (any
    case) cast to T as a CAST of it would (TRY_CAST: NULL where one fails), NULL where s has
    none; s's other fields are dropped; at least one must match.  A NULL casts to a NULL
    struct; a string (DuckDB parses its text) is not supported."""
    value = evaluator.value(node.this)
    if kind(value.type) == "string":
        raise UnsupportedSql(f"CAST of a string to a STRUCT: {node.sql(dialect='duckdb')!r}")
    if not is_struct(value) and not pa.types.is_null(value.type):
        raise evaluator.error(f"cannot CAST {type_name(value.type)} to "
                              f"{node.to.sql(dialect='duckdb')}", node)
    rows = 1 if isinstance(value, pa.Scalar) else len(value)
    structs = broadcast(value, rows)
    targets = [(column.name, column.args["kind"]) for column in node.to.expressions]
    found = _cast_sources(evaluator, node, structs.type, [name for name, _ in targets])
    if is_struct(value) and all(position is None for position in found):
        raise evaluator.error("STRUCT to STRUCT cast must have at least one matching member",
                              node)
    fields = []
    for (name, to), position in zip(targets, found):
        source = pa.nulls(rows) if position is None else field_at(structs, position)
        cast = (exp.TryCast if safe else exp.Cast)(this=exp.column("__field", quoted=True),
                                                   to=to.copy())
        scope = pa.table({"__field": source})
        try:
            fields.append(broadcast(type(evaluator)(scope, evaluator.sql, evaluator.budget)(cast),
                                    rows))
        except SqlError as err:  # underline the CAST written, not the field's
            raise evaluator.error(err.plain_message, node) from None
    names = [name for name, _ in targets]
    result = pa.StructArray.from_arrays(fields, names=names, mask=pa.array(null_rows(structs)))
    return scalar_if_constant(result, value)


def _cast_sources(evaluator, node, struct_type: pa.DataType, names: list[str]) -> list:
    """The position of the field each target field of a STRUCT cast takes (None: none):
    the field of its name, any case; an unnamed struct's field at its place, as DuckDB."""
    if pa.types.is_null(struct_type):
        return [None] * len(names)
    if not is_unnamed(struct_type):
        return [field_position(struct_type, name) for name in names]
    if struct_type.num_fields != len(names):
        raise evaluator.error(f"Type {type_name(struct_type)} does not match with "
                              f"{node.to.sql(dialect='duckdb')}. Cannot cast STRUCTs of "
                              "different size", node)
    return list(range(len(names)))


@register("row", 0, None)
def _row(ctx: Call, *values):
    if not values:
        raise UnsupportedSql("row() without values (DuckDB's empty TUPLE) is not supported")
    return unnamed_struct(list(values), ctx.rows)


# the calls with ``name := value`` arguments
NAMED_CALLS = {"struct_insert": struct_insert, "struct_update": struct_update}
