"""``FROM (VALUES (...), (...)) AS v(a, b)``: a table of constant rows.

Each cell is evaluated on its own (literals, casts, arithmetic on constants), then each column
takes the type DuckDB's binder gives it (``_column_type``); columns the alias does not name
are ``col0``, ``col1``... as in DuckDB.  Rows of different lengths, or cells of one column
whose types DuckDB does not combine, are an ``SqlError``.
"""

from __future__ import annotations

import pyarrow as pa
from sqlglot import exp

from ..errors import SqlError
from .frame import Frame, rows_only
from .value_types import cast_value, common_type, kind, type_name


def values_frame(runner, step, values: exp.Values) -> Frame:
    rows = [list(row.expressions) if isinstance(row, exp.Tuple) else [row]
            for row in values.expressions]
    width = len(rows[0])
    for row in rows:
        if len(row) != width:
            raise SqlError(f"VALUES lists must all be the same length, expected {width} "
                           f"entries but found a list with {len(row)}", runner.sql)
    alias = values.args.get("alias")
    named = [column.name for column in alias.columns] if alias is not None else []
    names = named[:width] + [f"col{i}" for i in range(len(named), width)]
    one = Frame({None: rows_only(1)}, 1)
    columns = []
    for i, name in enumerate(names):
        nodes = [row[i] for row in rows]
        cells = [_scalar(runner.evaluate(one, node)) for node in nodes]
        target = _column_type(cells, nodes, name, runner.sql)
        try:
            cells = [cast_value(cell, target) for cell in cells]
        except ValueError as err:
            raise SqlError(f"VALUES column {name!r}: {err}", runner.sql) from None
        # from the scalars, not Python values: a TIMESTAMP past year 9999 has none
        columns.append(pa.concat_arrays([pa.repeat(cell, 1) for cell in cells]))
    table = pa.Table.from_arrays(columns, names=names) if columns else rows_only(len(rows))
    tables = {step.name: table}
    if alias is not None and alias.name:
        tables[alias.name] = table
    return Frame(tables, len(rows))


def _column_type(cells: list[pa.Scalar], nodes: list[exp.Expression], name: str,
                 sql: str) -> pa.DataType:
    """The type of a VALUES column, as DuckDB's binder finds it: the first row's type, then
    row by row that type combined with the next cell's (``_combine``).  So the order counts:
    ``(1), ('2')`` is an integer column, ``('2'), (1)`` is refused."""
    target = cells[0].type
    for cell, node in zip(cells[1:], nodes[1:]):
        combined = _combine(target, cell.type, _is_string_literal(node))
        if combined is None:
            raise SqlError(f"VALUES column {name!r}: cannot combine types {type_name(target)} "
                           f"and {type_name(cell.type)} - an explicit cast is required", sql)
        target = combined
    return target


def _combine(left: pa.DataType, right: pa.DataType, string_literal: bool) -> pa.DataType | None:
    """DuckDB's ``MaxLogicalType`` of the column so far (``left``) and the next cell's type:
    a NULL or a string literal takes the other type (the literal is then read as it, as
    ``'2024-01-31'`` next to a DATE); a BOOLEAN next to an integer becomes that integer; a
    VARCHAR that is not a literal combines with nothing but strings; the rest follow the
    implicit casts (``common_type``: numbers widen, DATE to TIMESTAMP).  None when the
    types do not combine (DuckDB asks for an explicit cast)."""
    if pa.types.is_null(right) or (string_literal and not pa.types.is_null(left)):
        return left
    if pa.types.is_null(left):
        return right
    kinds = {kind(left), kind(right)}
    if len(kinds) == 2 and "bool" in kinds and kinds & {"int", "uint"}:
        return right if kind(left) == "bool" else left
    if len(kinds) == 2 and "string" in kinds:
        return None
    return common_type([left, right])


def _is_string_literal(node: exp.Expression) -> bool:
    """A string constant as written (``'2'``, not ``'2'::VARCHAR``): DuckDB's
    STRING_LITERAL, which takes the type of the column it is in."""
    return isinstance(node, exp.Literal) and node.is_string


def _scalar(value) -> pa.Scalar:
    if isinstance(value, pa.Scalar):
        return value
    if isinstance(value, pa.ChunkedArray):
        value = value.combine_chunks()
    return value[0]
