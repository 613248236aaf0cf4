"""``FROM (VALUES (...), (...)) AS v(a, b)``: a table of constant rows.

Each cell is evaluated on its own (literals, casts, arithmetic on constants), then each column
takes the type DuckDB unifies its cells to; columns the alias does not name are ``col0``,
``col1``... as in DuckDB.  Rows of different lengths, or cells of one column whose types do
not unify, are an ``SqlError``.
"""

from __future__ import annotations

import pyarrow as pa
from sqlglot import exp

from ..errors import SqlError
from .frame import Frame, rows_only
from .value_types import cast_value, common_type


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
        cells = [_scalar(runner.evaluate(one, row[i])) for row in rows]
        target = common_type([cell.type for cell in cells])
        if target is None:
            raise SqlError(f"VALUES column {name!r} mixes values of types "
                           f"{', '.join(sorted({str(c.type) for c in cells}))}", runner.sql)
        try:
            cells = [cast_value(cell, target) for cell in cells]
        except ValueError as err:
            raise SqlError(f"VALUES column {name!r}: {err}", runner.sql) from None
        columns.append(pa.array([cell.as_py() for cell in cells],
                                pa.null() if pa.types.is_null(target) else target))
    table = pa.Table.from_arrays(columns, names=names) if columns else rows_only(len(rows))
    tables = {step.name: table}
    if alias is not None and alias.name:
        tables[alias.name] = table
    return Frame(tables, len(rows))


def _scalar(value) -> pa.Scalar:
    if isinstance(value, pa.Scalar):
        return value
    if isinstance(value, pa.ChunkedArray):
        value = value.combine_chunks()
    return value[0]
