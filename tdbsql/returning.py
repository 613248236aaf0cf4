"""``INSERT / UPDATE / DELETE ... RETURNING``: the rows a statement writes, as DuckDB returns
them.

The statement works out its rows -- INSERT the rows as stored (after the casts to the
columns' types, a column left out NULL), UPDATE the rows' new values, DELETE the rows it
deletes as they read before -- and the RETURNING list is a SELECT over them: ``*``, columns
(qualified by the table's name or alias), expressions and aliases, as in a SELECT list;
a repeated name made unique as DuckDB makes it (``k, k_1``).  It is
worked out BEFORE anything is written, so a RETURNING that fails (an unknown column, a value
that does not cast) writes nothing, as DuckDB's statement rolls back.

As DuckDB, aggregates, window functions and subqueries are refused in RETURNING (an
``SqlError``).
"""

from __future__ import annotations

import pyarrow as pa
from sqlglot import exp

from .errors import SqlError
from .planner.parse import span_of
from .result import unique_names

_NAME = "__tdbsql_returning"  # the written rows, registered for the moment under it


def check_returning(tree: exp.Expression, sql: str) -> None:
    """Refuse what DuckDB refuses in a RETURNING list (before anything is read or written)."""
    returning = tree.args.get("returning")
    if returning is None:
        return
    if returning.args.get("into"):
        raise SqlError("RETURNING ... INTO is not DuckDB SQL", sql, span_of(returning))
    for item in returning.expressions:
        found = item.find(exp.Subquery, exp.Select, exp.Exists)
        if found is not None:
            raise SqlError("subqueries are not supported in RETURNING (as in DuckDB)", sql,
                           span_of(found))
        found = item.find(exp.Window, exp.AggFunc)
        if found is not None and not isinstance(found, (exp.Grouping, exp.GroupingId)):
            kind = "window" if isinstance(found, exp.Window) else "aggregate"
            raise SqlError(f"{kind} functions are not supported in RETURNING (as in DuckDB)",
                           sql, span_of(found))


def returned_rows(connection, tree: exp.Expression, rows: pa.Table, sql: str) -> pa.Table | None:
    """The answer of ``tree``'s RETURNING over ``rows`` (the table's columns, in its order),
    or None when it has none.  ``rows``' dictionary columns (an enumerated attribute's
    labels) are returned as their values."""
    returning = tree.args.get("returning")
    if returning is None:
        return None
    target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    plain = pa.table([decoded(column) for column in rows.columns], names=rows.column_names)
    with connection.catalog.lent(_NAME, plain) as name:
        select = exp.Select(expressions=[item.copy() for item in returning.expressions]).from_(
            exp.alias_(exp.to_table(name), exp.to_identifier(target.alias_or_name), table=True))
        answer = connection._rows_of(sql)(select)
    if answer.num_rows != rows.num_rows:  # an aggregate the checks above did not know
        raise SqlError("aggregate functions are not supported in RETURNING (as in DuckDB)", sql,
                       span_of(returning))
    return answer.rename_columns(unique_names(answer.column_names))  # as DuckDB names them


def decoded(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """An enumerated attribute's dictionary column as its labels; any other as it is."""
    if pa.types.is_dictionary(column.type):
        return column.cast(column.type.value_type)
    return column
