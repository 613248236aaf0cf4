"""Which target column each value of an INSERT goes to: ``BY POSITION`` (the default) or
``BY NAME``.

By position, the values fill the INSERT's column list (``INSERT INTO t (b, a)``), else every
column of the target, in order; there must be as many as columns.  ``INSERT INTO t BY NAME
SELECT ...`` matches the query's column names to the target's instead, in any case as DuckDB
matches them; a name that is no column of the target, or one given twice, is DuckDB's error,
and the columns it leaves out are left out as a column list leaves them out.  As in DuckDB, BY
NAME takes a query only (not VALUES) and no column list.
"""

from __future__ import annotations

from sqlglot import exp

from .errors import SqlError
from .planner.parse import span_of


def check_by_name(tree: exp.Insert, sql: str) -> None:
    """Refuse BY NAME where DuckDB refuses it: with VALUES, or with a column list."""
    if not tree.args.get("by_name"):
        return
    if isinstance(tree.this, exp.Schema):
        raise SqlError("SQL syntax error: INSERT ... BY NAME takes no column list (as in "
                       "DuckDB)", sql, span_of(tree.this.expressions[0]))
    if isinstance(tree.expression, exp.Values):
        raise SqlError("INSERT BY NAME can only be used when inserting from a SELECT "
                       "statement (as in DuckDB)", sql, span_of(tree.expression))


def query_columns(tree: exp.Insert, produced: list[str], names: list[str], what: str,
                  sql: str) -> list[str]:
    """The target column of each of a query's result columns ``produced``: ``names`` (the
    INSERT's column list, or every column of the target ``what``) by position, or by name."""
    if tree.args.get("by_name"):
        return by_name(produced, names, what, sql)
    if len(produced) != len(names):
        raise SqlError(f"INSERT has {len(names)} target columns but {len(produced)} values "
                       "per row", sql)
    return list(names)


def by_name(produced: list[str], columns: list[str], what: str, sql: str) -> list[str]:
    """Each name of ``produced`` as the target's column it names, in any case."""
    spelled = {column.lower(): column for column in columns}
    names: list[str] = []
    for name in produced:
        column = name if name in columns else spelled.get(name.lower())
        if column is None:
            raise SqlError(f'INSERT BY NAME: {what} does not have a column with name "{name}" '
                           f"({', '.join(columns)})", sql)
        if column in names:
            raise SqlError(f'INSERT BY NAME: duplicate column name "{name}" in INSERT', sql)
        names.append(column)
    return names
