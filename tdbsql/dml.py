"""INSERT and DELETE statements: SQL onto the writer.

``INSERT INTO t [(cols)] VALUES (...), ... | SELECT ...`` writes one fragment with the rows
(columns by position, or by the listed names; dimensions and non-nullable attributes must be
given, nullable attributes left out are NULL; enumerated attributes take their labels, as
they read); ``DELETE FROM t WHERE ...`` writes a delete commit that TileDB honours.  Both return
DuckDB's one row ``Count``: the rows written / deleted; with RETURNING, its list over those
rows (``returning``: the rows inserted as stored, the rows deleted as they read before).
``BY NAME`` matches a query's columns by name (``insert_columns``); ``OR REPLACE``, ``OR
IGNORE`` and ``ON CONFLICT`` resolve rows whose coordinates hold a cell (``insert_conflicts``).
"""

from __future__ import annotations

import pyarrow as pa
from sqlglot import exp

from .catalog import ArraySource
from .parquet_source import ParquetSource
from .errors import SqlError, UnsupportedSql
from .insert_columns import check_by_name, query_columns
from .insert_conflicts import conflict_action
from .planner.parse import span_of, span_over
from .returning import check_returning, returned_rows


_CLAUSES = {"using": "USING", "with_": "WITH",
            "overwrite": "OVERWRITE", "default": "DEFAULT VALUES", "order": "ORDER BY",
            "limit": "LIMIT", "options": "OPTION", "hint": "hints"}


def refuse_clauses(tree: exp.Expression, statement: str, sql: str) -> None:
    """A clause this writer would ignore is refused, never silently dropped; so is a
    RETURNING list DuckDB refuses (``returning.check_returning``)."""
    for arg, clause in _CLAUSES.items():
        if tree.args.get(arg):
            raise UnsupportedSql(f"{statement} ... {clause} is not supported")
    check_returning(tree, sql)


def run_insert(connection, tree: exp.Insert, sql: str) -> pa.Table:
    refuse_clauses(tree, "INSERT", sql)
    target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    source = array_source(connection, target, sql)
    array = source.open()
    fields = [d.name for d in array.schema.dimensions] + [a.name for a in array.schema.attributes]
    names = target_columns(tree, fields, "the array", sql)
    body = tree.expression
    conflicts = conflict_action(tree, array, sql)
    if isinstance(body, exp.Values):
        rows = values_table(body, names, array, sql)
    elif array.schema.sparse and not tree.args.get("returning"):
        from .insert_query import insert_query  # a batch at a time

        return count_table(insert_query(connection, source, array, tree, names, conflicts,
                                        sql))
    else:
        rows = connection.sql(body.sql(dialect="duckdb")).arrow()
        names = query_columns(tree, rows.column_names, names, "the array", sql)
        rows = typed_rows(rows.rename_columns(names), array, sql)
    data = with_omitted(rows, array, sql, conflicts is not None)
    if conflicts is not None:
        data = resolver(connection, tree, array, conflicts, names, sql)(data)
    returned = returned_rows(connection, tree, data.select(fields), sql)
    from .storage.write_order import wait_past, write_after
    from .storage.writer import write

    if data.num_rows:
        when = write_after(array)  # after the statements before it, even in one millisecond
        write(source.path, data, timestamp=when, key=source.key)
        wait_past(when)
    return answer(returned, data.num_rows)


def resolver(connection, tree: exp.Insert, array, conflicts, names: list[str], sql: str):
    """The ``insert_conflicts.Resolver`` of an INSERT into ``array`` of the columns ``names``
    (``excluded.col`` names any column, or with BY NAME the inserted ones, as DuckDB's)."""
    from .insert_conflicts import Resolver

    target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    fields = [f.name for f in [*array.schema.dimensions, *array.schema.attributes]]
    return Resolver(connection, target, array, conflicts, names,
                    names if tree.args.get("by_name") else fields, sql)


def target_columns(tree: exp.Insert, columns: list[str], what: str, sql: str) -> list[str]:
    """The columns an INSERT writes: its list (``INSERT INTO t (b, a)``), each name matched
    in any case as DuckDB matches it and listed once, else all ``columns`` of the target
    (``what``, for messages; with BY NAME, those its query names: ``query_columns``)."""
    check_by_name(tree, sql)
    if not isinstance(tree.this, exp.Schema):
        return list(columns)
    spelled = {column.lower(): column for column in columns}
    names = []
    for ident in tree.this.expressions:
        column = ident.name if ident.name in columns else spelled.get(ident.name.lower())
        if column is None:
            raise SqlError(f"INSERT: {ident.name!r} is not a column of {what} "
                           f"({', '.join(columns)})", sql, span_of(ident))
        if column in names:
            raise SqlError(f"INSERT: column {ident.name!r} is listed twice", sql,
                           span_of(ident))
        names.append(column)
    return names


def empty_answer(column: str) -> pa.Table:
    """DuckDB's answer when a statement made or dropped nothing: no row of ``Count`` (BIGINT)
    or ``Success`` (BOOLEAN)."""
    return pa.table({column: pa.array([], pa.int64() if column == "Count" else pa.bool_())})


def count_table(rows: int) -> pa.Table:
    """DuckDB's answer to INSERT, UPDATE, DELETE and CREATE TABLE AS: one row, ``Count``
    BIGINT."""
    return pa.table({"Count": pa.array([rows], pa.int64())})


def answer(returned: pa.Table | None, count: int) -> pa.Table:
    """A write's answer: its RETURNING rows, else DuckDB's one row ``Count``."""
    return count_table(count) if returned is None else returned


def run_delete(connection, tree: exp.Delete, sql: str) -> pa.Table:
    refuse_clauses(tree, "DELETE", sql)
    source = array_source(connection, tree.this, sql)
    where = tree.args.get("where")
    if where is None:
        raise UnsupportedSql("DELETE without WHERE: delete every cell with DELETE ... WHERE TRUE "
                             "is not supported; remove the array directory instead")
    returned = None
    if tree.args.get("returning"):  # the rows deleted, read before the delete
        if source.timestamp is not None:
            raise UnsupportedSql(f"DELETE ... RETURNING of {tree.this.name!r}, registered at "
                                 f"timestamp {source.timestamp}: the delete applies to the array "
                                 "as it is now (register it without a timestamp)")
        deleted = connection._rows_of(sql)(
            exp.select("*").from_(tree.this.copy()).where(where.this.copy()))
        returned = returned_rows(connection, tree, deleted, sql)
    from .storage.delete_writer import write_delete

    # the condition as parsed, so an error in it underlines the culprit in the statement
    commit = write_delete(source.path, where.this, key=source.key, sql=sql)
    return answer(returned, commit.deleted)


def truncate_as_delete(tree: exp.TruncateTable) -> exp.Delete:
    """``TRUNCATE [TABLE] t`` is DuckDB's ``DELETE FROM t``: every row of a table made by
    CREATE TABLE (an array refuses a DELETE without WHERE), the Count of the rows removed."""
    options = [key for key, value in tree.args.items() if value and key != "expressions"]
    if len(tree.expressions) != 1 or options:
        raise UnsupportedSql("TRUNCATE of one table, without options, is supported; not "
                             f"{tree.sql(dialect='duckdb')!r}")
    return exp.Delete(this=tree.expressions[0].copy())


def array_source(connection, table: exp.Table, sql: str) -> ArraySource:
    source, window = connection.catalog.resolve(table, sql)
    if not isinstance(source, ArraySource):
        kind = "Parquet files" if isinstance(source, ParquetSource) else "an Arrow table"
        raise UnsupportedSql(f"{table.name!r} is {kind}; only arrays (and tables made by "
                             "CREATE TABLE) can be written")
    if window is not None:
        raise SqlError("FOR SYSTEM_TIME cannot be used on a table being written", sql,
                       span_of(table))
    return source


def values_table(values: exp.Values, names: list[str], array, sql: str) -> pa.Table:
    """The VALUES rows, each value cast on its own to its column's type (of ``array``, or of
    an Arrow schema: ``_field_types``) as DuckDB's INSERT
    casts it (``1.5`` into an INTEGER is 2, ``2.5e0`` is 2, ``'3.5'`` is 4), so rows whose
    values have different types (``(1), (2.5)``) need no common type first."""
    columns: list[list] = [[] for _ in names]
    for row in values.expressions:
        items = row.expressions if isinstance(row, exp.Tuple) else [row]
        if len(items) != len(names):
            raise SqlError(f"VALUES row has {len(items)} values, expected {len(names)}", sql,
                           span_of(row))
        for column, item in zip(columns, items):
            column.append(item)
    return pa.table({name: _typed_values([_scalar(item, sql) for item in items], items, name,
                                         array, sql)
                     for name, items in zip(names, columns)})


def _scalar(node: exp.Expression, sql: str) -> pa.Scalar:
    from .engine.evaluate import evaluate

    value = evaluate(pa.table({"__row": pa.nulls(1)}), node, sql)
    return value if isinstance(value, pa.Scalar) else value[0]


def typed_rows(table: pa.Table, array, sql: str, statement: str = "INSERT",
               kept: frozenset | set = frozenset()) -> pa.Table:
    """Each column of an ``INSERT ... SELECT`` (or an UPDATE's rows) cast to the array
    field's type (``_cast``; ``array`` may be an Arrow schema).  ``kept``: columns written back as they were read, where a
    string field the reader gave as bytes (not UTF-8) stays bytes, which the writer stores
    as they are."""
    return pa.table({name: column if name in kept and pa.types.is_binary(column.type) else
                     _typed_column(column, name, array, sql, statement)
                     for name, column in zip(table.column_names, table.columns)})


def _typed_column(column, name: str, array, sql: str, statement: str = "INSERT"):
    """``column`` cast to the array field's type; a value that does not fit is an error
    naming the column."""
    target, value_type = _field_types(array, name)
    try:
        return _as_field(_cast(column, value_type), target)
    except ValueError as err:
        raise _cannot_store(name, value_type, err, sql, statement=statement) from None


def _typed_values(scalars: list[pa.Scalar], nodes: list, name: str, array, sql: str):
    """The scalars of a VALUES column (from ``nodes``) cast to the field's type: as one column
    (``_typed_column``) when they share a type; else, or when that fails (to find the
    culprit), one by one, an error underlining the value that does not fit."""
    target, value_type = _field_types(array, name)
    column = _one_column(scalars)
    if column is not None:
        try:
            return _as_field(_cast(column, value_type), target)
        except ValueError:
            pass
    typed = []
    for cell, node in zip(scalars, nodes):
        try:
            typed.append(_cast(cell, value_type))
        except ValueError as err:
            raise _cannot_store(name, value_type, err, sql, span_over(node)) from None
    return _as_field(_scalars_array(typed, value_type), target)


def _scalars_array(scalars: list, value_type: pa.DataType) -> pa.Array:
    """``pa.array(scalars, value_type)``; pyarrow 26 fails (a SystemError) on a NULL scalar of
    a nested type there, so those columns are put together a value at a time."""
    if not pa.types.is_nested(value_type) or all(s.is_valid for s in scalars):
        return pa.array(scalars, value_type)
    return pa.concat_arrays([pa.array([s], value_type) if s.is_valid else
                             pa.nulls(1, value_type) for s in scalars])


def _field_types(array, name: str) -> tuple[pa.DataType, pa.DataType]:
    """The field's Arrow type and the type its values are cast to (an enumerated attribute's
    labels); ``array`` may be an Arrow schema (a table in memory)."""
    from .engine.fields import field_arrow_type

    target = array.field(name).type if isinstance(array, pa.Schema) else \
        field_arrow_type(array, name)
    return target, target.value_type if pa.types.is_dictionary(target) else target


def _as_field(column, target: pa.DataType):
    """Enumerated attributes become dictionary columns of their labels, which the writer
    turns into the stored indices."""
    return column.dictionary_encode() if pa.types.is_dictionary(target) else column


def _cannot_store(name: str, value_type, err, sql: str, span=None,
                  statement: str = "INSERT") -> SqlError:
    return SqlError(f"{statement}: column {name!r} cannot be stored as {value_type}: {err}", sql,
                    span)


def _one_column(scalars: list[pa.Scalar]) -> pa.Array | None:
    """The scalars as one array when they share a type (NULLs aside), else None."""
    types = {str(s.type) for s in scalars if not pa.types.is_null(s.type)}
    if len(types) > 1:
        return None
    try:
        return pa.array(scalars)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        return None


def _cast(value, target: pa.DataType):
    """``value`` (a column or a scalar) cast with DuckDB's casts (``engine.value_types.
    cast_value``: floats to integers rounding half to even, DECIMALs half away from zero);
    ``ValueError`` when it does not fit."""
    from .engine.value_types import cast_value

    try:
        return cast_value(value, target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as err:
        raise ValueError(str(err)) from None


def with_omitted(table: pa.Table, array, sql: str, conflicts: bool = False) -> pa.Table:
    """NULL columns for the nullable attributes the INSERT leaves out; any other field left out
    is an error naming it.  With a conflict clause (``conflicts``) a non-nullable attribute
    may be left out too, as a row that updates a cell needs no value for it
    (``insert_conflicts.resolve`` refuses it when a row is inserted)."""
    from .engine.fields import field_arrow_type

    schema = array.schema
    fields = [("dimension", d, False) for d in schema.dimensions]
    fields += [("attribute", a, a.nullable or conflicts) for a in schema.attributes]
    for kind, field, nullable in fields:
        if field.name in table.column_names:
            continue
        if not nullable:
            raise not_given(kind, field.name, sql)
        target = field_arrow_type(array, field.name)
        table = table.append_column(field.name, pa.nulls(table.num_rows, target))
    return table


def not_given(kind: str, name: str, sql: str) -> SqlError:
    return SqlError(f"INSERT must give a value for {kind} {name!r} (only nullable attributes "
                    "may be left out)", sql)
