"""``CREATE [OR REPLACE] [TEMP] TABLE t [(a, b, ...)] AS query`` and ``DROP TABLE``: a query's
result kept in the connection's memory as a table, as DuckDB's in-memory database keeps it.

The result is an Arrow table registered under the name, as ``con.register(name, arrow)`` would
(TEMP changes nothing: every such table lives as long as the connection).  Column names are
the query's, the first ones renamed by a column list, repeated ones made unique as DuckDB
makes them (``a, a_1``).  The answer is DuckDB's ``Count``: the rows kept.  A table with
column definitions (``CREATE TABLE t (a INTEGER)``) is refused: an array is made with
``tdbsql.create`` or ``tdbsql.ingest``, and an empty in-memory table could not be written to.
``DROP TABLE [IF EXISTS] t`` forgets an in-memory (or registered Arrow) table; it never deletes
an array or a file, so naming one is refused.
"""

from __future__ import annotations

import pyarrow as pa
from sqlglot import exp

from .catalog import ArrowSource
from .errors import SqlError, UnsupportedSql
from .planner.parse import span_of
from .result import unique_names


def create_table(connection, tree: exp.Create, sql: str, run_query) -> pa.Table:
    """Run ``tree``; ``run_query(query)`` gives a query tree's rows (a ``pa.Table``)."""
    target, columns = tree.this, []
    if isinstance(target, exp.Schema):
        if any(not isinstance(column, exp.Identifier) for column in target.expressions):
            raise UnsupportedSql("CREATE TABLE with column definitions is not supported: an "
                                 "array is made with tdbsql.create or tdbsql.ingest, and "
                                 "CREATE TABLE t AS query keeps a result in memory")
        columns = [ident.name for ident in target.expressions]
        target = target.this
    unsupported = [k for k, v in tree.args.items() if v and k not in (
        "this", "kind", "replace", "expression", "properties", "exists")]
    properties = tree.args.get("properties")
    if unsupported or tree.expression is None or target.args.get("db") or (properties and any(
            not isinstance(p, exp.TemporaryProperty) for p in properties.expressions)):
        raise UnsupportedSql("this form of CREATE TABLE is not supported (CREATE [OR REPLACE] "
                             "[TEMP] TABLE t [(columns)] AS query is)")
    name = target.name
    if connection.views.get(name) is not None:
        raise SqlError(f"a view named {name!r} already exists", sql, span_of(target))
    existing = _registered(connection, name)
    if existing is not None and not tree.args.get("replace"):
        if tree.args.get("exists"):
            return pa.table({"Count": pa.array([], pa.int64())})
        raise SqlError(f"a table named {name!r} already exists (CREATE OR REPLACE TABLE "
                       "replaces it)", sql, span_of(target))
    rows = run_query(tree.expression)
    if len(columns) > rows.num_columns:
        raise SqlError(f"CREATE TABLE {name} names {len(columns)} columns, but its query "
                       f"gives {rows.num_columns}", sql, span_of(target))
    rows = rows.rename_columns(unique_names(columns + rows.column_names[len(columns):]))
    connection.register_arrow(existing or name, rows)
    connection._forget_plans()  # a plan may have read the table it replaces
    return pa.table({"Count": pa.array([rows.num_rows], pa.int64())})


def drop_table(connection, tree: exp.Drop, sql: str) -> pa.Table:
    """Run ``DROP TABLE [IF EXISTS] t``."""
    unsupported = [k for k, v in tree.args.items() if v and k not in (
        "this", "kind", "exists", "tables")]
    if unsupported or len(tree.args.get("tables") or []) != 1:
        raise UnsupportedSql("this form of DROP TABLE is not supported (DROP TABLE [IF EXISTS] "
                             "t is)")
    target = tree.args["tables"][0]
    name = _registered(connection, target.name)
    if name is None:
        if tree.args.get("exists"):
            return pa.table({"Success": pa.array([], pa.bool_())})
        raise SqlError(f"no table named {target.name!r}", sql, span_of(target))
    if not isinstance(connection.catalog.sources[name], ArrowSource):
        raise UnsupportedSql(f"DROP TABLE {name}: it names an array or files, which tdbsql "
                             "never deletes (remove them yourself)")
    del connection.catalog.sources[name]
    connection._forget_plans()
    return pa.table({"Success": pa.array([], pa.bool_())})


def _registered(connection, name: str) -> str | None:
    """The registered name ``name`` matches (names match in any case, as DuckDB's)."""
    sources = connection.catalog.sources
    if name in sources:
        return name
    folded = [key for key in sources if key.lower() == name.lower()]
    return folded[0] if len(folded) == 1 else None
