"""``CREATE [OR REPLACE] [TEMP] TABLE t [(a, b, ...)] AS query`` and ``DROP TABLE``: a query's
result kept in the connection's memory as a table, as DuckDB's in-memory database keeps it.

The result is an Arrow table registered under the name, as ``con.register(name, arrow)`` would
(TEMP changes nothing: every such table lives as long as the connection).  Column names are
the query's, the first ones renamed by a column list, repeated ones made unique as DuckDB
makes them (``a, a_1``).  The answer is DuckDB's ``Count``: the rows kept.  A name that
is a registered array or Parquet files is refused, even with OR REPLACE: the table would
hide them.  A table with
column definitions (``CREATE TABLE t (a INTEGER)``) is refused: an array is made with
``tdbsql.create`` or ``tdbsql.ingest``, and an empty in-memory table could not be written to.
``DROP TABLE [IF EXISTS] t`` forgets an in-memory (or registered Arrow) table; it never deletes
an array or a file, so naming one is refused.
"""

from __future__ import annotations

import pyarrow as pa
from sqlglot import exp

from .catalog import ArrowSource
from .dml import count_table
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
    if tree.args.get("replace") and tree.args.get("exists"):
        raise SqlError("CREATE OR REPLACE TABLE cannot also be IF NOT EXISTS (as in DuckDB)",
                       sql, span_of(target))
    name = target.name
    if not name:
        raise SqlError("a table name cannot be empty", sql, span_of(target))
    repeated = {c.lower() for c in columns if [k.lower() for k in columns].count(c.lower()) > 1}
    if repeated:
        raise SqlError(f"CREATE TABLE {name} names column {sorted(repeated)[0]!r} twice", sql,
                       span_of(target))
    if connection.views.get(name) is not None:
        if tree.args.get("exists"):
            return _no_rows("Count")
        raise SqlError(f"a view named {name!r} already exists", sql, span_of(target))
    existing = _registered(connection, name)
    if existing is not None:
        if not isinstance(connection.catalog.sources[existing], ArrowSource):
            if tree.args.get("exists"):
                return _no_rows("Count")
            raise SqlError(f"{existing!r} names an array or Parquet files (CREATE TABLE "
                           "keeps a result in memory under a free name)", sql, span_of(target))
        if not tree.args.get("replace"):
            if tree.args.get("exists"):
                return _no_rows("Count")
            raise SqlError(f"a table named {name!r} already exists (CREATE OR REPLACE TABLE "
                           "replaces it)", sql, span_of(target))
    rows = run_query(_query(tree.expression))
    if len(columns) > rows.num_columns:
        raise SqlError(f"CREATE TABLE {name} names {len(columns)} columns, but its query "
                       f"gives {rows.num_columns}", sql, span_of(target))
    rows = rows.rename_columns(unique_names(columns + rows.column_names[len(columns):]))
    connection.register_arrow(existing or name, rows)
    connection._forget_plans()  # a plan may have read the table it replaces
    return count_table(rows.num_rows)


def drop_table(connection, tree: exp.Drop, sql: str) -> pa.Table:
    """Run ``DROP TABLE [IF EXISTS] t``."""
    unsupported = [k for k, v in tree.args.items() if v and k not in (
        "this", "kind", "exists", "tables")]
    if unsupported or len(tree.args.get("tables") or []) != 1:
        raise UnsupportedSql("this form of DROP TABLE is not supported (DROP TABLE [IF EXISTS] "
                             "t is)")
    target = tree.args["tables"][0]
    if connection.views.get(target.name) is not None:
        raise SqlError(f"{target.name!r} is a view (DROP VIEW drops it)", sql, span_of(target))
    name = _registered(connection, target.name)
    if name is None:
        if tree.args.get("exists"):
            return _no_rows("Success")
        raise SqlError(f"no table named {target.name!r}", sql, span_of(target))
    if not isinstance(connection.catalog.sources[name], ArrowSource):
        raise UnsupportedSql(f"DROP TABLE {name}: it names an array or Parquet files, which "
                             "tdbsql never deletes (remove them yourself)")
    connection.catalog.unregister(name)
    connection._forget_plans()
    return _no_rows("Success")


def _query(node: exp.Expression) -> exp.Expression:
    """The query of ``AS (SELECT ...)`` or ``AS VALUES ...`` as a statement."""
    if isinstance(node, exp.Subquery) and not node.alias:
        return node.this
    if isinstance(node, exp.Values):
        return exp.select("*").from_(node.copy())
    return node


def _no_rows(column: str) -> pa.Table:
    """DuckDB's answer when nothing was made or dropped."""
    return pa.table({column: pa.array([], pa.int64() if column == "Count" else pa.bool_())})


def _registered(connection, name: str) -> str | None:
    """The registered name ``name`` matches (names match in any case, as DuckDB's)."""
    sources = connection.catalog.sources
    if name in sources:
        return name
    folded = [key for key in sources if key.lower() == name.lower()]
    return folded[0] if len(folded) == 1 else None
