"""INSERT and DELETE statements: SQL onto the writer.

``INSERT INTO t [(cols)] VALUES (...), ... | SELECT ...`` writes one fragment with the rows
(columns by position, or by the listed names; dimensions and non-nullable attributes must be
given, nullable attributes left out are NULL; enumerated attributes take their labels, as
they read); ``DELETE FROM t WHERE ...`` writes a delete commit that TileDB honours.  Both return one
row with the count of rows written / the delete commit's name, like DuckDB's ``Count``.
"""

from __future__ import annotations

import pyarrow as pa
from sqlglot import exp

from .catalog import ArraySource
from .errors import SqlError, UnsupportedSql
from .planner.parse import span_of


_CLAUSES = {"using": "USING", "returning": "RETURNING", "conflict": "ON CONFLICT",
            "alternative": "OR REPLACE / OR IGNORE", "by_name": "BY NAME", "with_": "WITH",
            "overwrite": "OVERWRITE", "default": "DEFAULT VALUES"}


def _refuse_clauses(tree: exp.Expression, statement: str) -> None:
    """A clause this writer would ignore is refused, never silently dropped."""
    for arg, clause in _CLAUSES.items():
        if tree.args.get(arg):
            raise UnsupportedSql(f"{statement} ... {clause} is not supported")


def run_insert(connection, tree: exp.Insert, sql: str) -> pa.Table:
    _refuse_clauses(tree, "INSERT")
    target = tree.this
    names = None
    if isinstance(target, exp.Schema):
        names = []
        for ident in target.expressions:
            if ident.name in names:
                raise SqlError(f"INSERT: column {ident.name!r} is listed twice", sql,
                               span_of(ident))
            names.append(ident.name)
        target = target.this
    source = _array_source(connection, target, sql)
    array = source.open()
    fields = [d.name for d in array.schema.dimensions] + [a.name for a in array.schema.attributes]
    names = names or fields
    for name in names:
        if name not in fields:
            raise SqlError(f"INSERT: {name!r} is not a column of the array "
                           f"({', '.join(fields)})", sql, span_of(target))
    body = tree.expression
    if isinstance(body, exp.Values):
        rows = _values_table(body, len(names), sql)
    else:
        rows = connection.sql(body.sql(dialect="duckdb")).arrow()
    if rows.num_columns != len(names):
        raise SqlError(f"INSERT has {len(names)} target columns but {rows.num_columns} values "
                       "per row", sql)
    data = _with_omitted(_typed(rows.rename_columns(names), array), array, sql)
    from .storage.writer import write

    if data.num_rows:
        write(source.path, data, key=source.key)
    return pa.table({"Count": pa.array([data.num_rows], pa.int64())})


def run_delete(connection, tree: exp.Delete, sql: str) -> pa.Table:
    _refuse_clauses(tree, "DELETE")
    source = _array_source(connection, tree.this, sql)
    where = tree.args.get("where")
    if where is None:
        raise UnsupportedSql("DELETE without WHERE: delete every cell with DELETE ... WHERE TRUE "
                             "is not supported; remove the array directory instead")
    from .storage.delete_writer import write_delete

    # the condition as parsed, so an error in it underlines the culprit in the statement
    name = write_delete(source.path, where.this, key=source.key, sql=sql)
    return pa.table({"delete_commit": [name]})


def _array_source(connection, table: exp.Table, sql: str) -> ArraySource:
    source, window = connection.catalog.resolve(table, sql)
    if not isinstance(source, ArraySource):
        raise UnsupportedSql(f"{table.name!r} is an Arrow table; only arrays can be written")
    if window is not None:
        raise SqlError("FOR SYSTEM_TIME cannot be used on a table being written", sql,
                       span_of(table))
    return source


def _values_table(values: exp.Values, width: int, sql: str) -> pa.Table:
    columns: list[list] = [[] for _ in range(width)]
    for row in values.expressions:
        items = row.expressions if isinstance(row, exp.Tuple) else [row]
        if len(items) != width:
            raise SqlError(f"VALUES row has {len(items)} values, expected {width}", sql,
                           span_of(row))
        for column, item in zip(columns, items):
            column.append(_python_value(item, sql))
    return pa.table({f"c{i}": pa.array(c) for i, c in enumerate(columns)})


def _python_value(node: exp.Expression, sql: str):
    from .engine.evaluate import evaluate

    value = evaluate(pa.table({"__row": pa.nulls(1)}), node, sql)
    if isinstance(value, pa.Scalar):
        return value.as_py()
    return value[0].as_py()


def _typed(table: pa.Table, array) -> pa.Table:
    """Cast each column to the array field's Arrow type; a value that does not fit is an error
    naming the column.  Enumerated attributes become dictionary columns of their labels, which
    the writer turns into the stored indices."""
    from .engine.fields import field_arrow_type

    columns = []
    for name, column in zip(table.column_names, table.columns):
        target = field_arrow_type(array, name)
        if column.type != target:
            value_type = target.value_type if pa.types.is_dictionary(target) else target
            try:
                column = column.cast(value_type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as err:
                raise SqlError(f"INSERT: column {name!r} cannot be stored as {value_type}: "
                               f"{err}") from None
            if pa.types.is_dictionary(target):
                column = column.dictionary_encode()
        columns.append(column)
    return pa.Table.from_arrays(columns, names=table.column_names)


def _with_omitted(table: pa.Table, array, sql: str) -> pa.Table:
    """NULL columns for the nullable attributes the INSERT leaves out; any other field left out
    is an error naming it."""
    from .engine.fields import field_arrow_type

    schema = array.schema
    fields = [("dimension", d, False) for d in schema.dimensions]
    fields += [("attribute", a, a.nullable) for a in schema.attributes]
    for kind, field, nullable in fields:
        if field.name in table.column_names:
            continue
        if not nullable:
            raise SqlError(f"INSERT must give a value for {kind} {field.name!r} (only nullable "
                           "attributes may be left out)", sql)
        target = field_arrow_type(array, field.name)
        table = table.append_column(field.name, pa.nulls(table.num_rows, target))
    return table
