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

A table made so is the connection's own, and ``INSERT``, ``UPDATE`` and ``DELETE`` change it
as DuckDB changes a table (``run_write``): rows appended with each value cast to its
column's type as INSERT casts it into an array (a column left out is NULL); rows deleted
where the WHERE is TRUE; the SET values worked out for the rows where it is TRUE, cast, and
put in their places (UPDATE ... FROM is refused); RETURNING and INSERT ... BY NAME as on an
array (``returning``, ``insert_columns``).  Such a table has no key, so OR REPLACE, OR IGNORE
and ON CONFLICT are DuckDB's error for a table without one.  Rows keep their order.  A table
registered from Python (``con.register``) is the caller's and stays read-only.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from .catalog import ArrowSource
from .dml import (
    answer, count_table, empty_answer, refuse_clauses, target_columns, typed_rows, values_table,
)
from .errors import SqlError, UnsupportedSql
from .insert_columns import query_columns
from .insert_conflicts import refuse_without_key
from .planner.parse import span_of
from .result import unique_names
from .returning import returned_rows
from .views import drop_target

_CHUNKS_MAX = 64  # chunks a table in memory grows to by INSERTs before they are combined
_HIT = "__tdbsql_update_hit"  # the WHERE's truth, beside a table's columns during an UPDATE


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
            return empty_answer("Count")
        raise SqlError(f"a view named {name!r} already exists", sql, span_of(target))
    existing = connection.catalog.registered_name(name)
    if existing is not None:
        if not isinstance(connection.catalog.sources[existing], ArrowSource):
            if tree.args.get("exists"):
                return empty_answer("Count")
            raise SqlError(f"{existing!r} names an array or Parquet files (CREATE TABLE "
                           "keeps a result in memory under a free name)", sql, span_of(target))
        if not tree.args.get("replace"):
            if tree.args.get("exists"):
                return empty_answer("Count")
            raise SqlError(f"a table named {name!r} already exists (CREATE OR REPLACE TABLE "
                           "replaces it)", sql, span_of(target))
    rows = run_query(_query(tree.expression))
    if len(columns) > rows.num_columns:
        raise SqlError(f"CREATE TABLE {name} names {len(columns)} columns, but its query "
                       f"gives {rows.num_columns}", sql, span_of(target))
    rows = rows.rename_columns(unique_names(columns + rows.column_names[len(columns):]))
    _replace(connection, existing or name, rows)
    return count_table(rows.num_rows)


def drop_table(connection, tree: exp.Drop, sql: str) -> pa.Table:
    """Run ``DROP TABLE [IF EXISTS] t``."""
    target = drop_target(tree, "TABLE")
    if connection.views.get(target.name) is not None:
        raise SqlError(f"{target.name!r} is a view (DROP VIEW drops it)", sql, span_of(target))
    name = connection.catalog.registered_name(target.name)
    if name is None:
        if tree.args.get("exists"):
            return empty_answer("Success")
        raise SqlError(f"no table named {target.name!r}", sql, span_of(target))
    if not isinstance(connection.catalog.sources[name], ArrowSource):
        raise UnsupportedSql(f"DROP TABLE {name}: it names an array or Parquet files, which "
                             "tdbsql never deletes (remove them yourself)")
    connection.catalog.unregister(name)
    connection._forget_plans()
    return empty_answer("Success")


def owned_table(connection, table) -> str | None:
    """The registered name of the table in memory (made by CREATE TABLE) that ``table`` (a
    statement's target) names, else None."""
    if isinstance(table, exp.Schema):
        table = table.this
    if not isinstance(table, exp.Table) or table.args.get("db"):
        return None
    name = connection.catalog.registered_name(table.name)
    source = connection.catalog.sources.get(name) if name is not None else None
    return name if isinstance(source, ArrowSource) and source.owned else None


def run_write(connection, name: str, tree, sql: str, run_query) -> pa.Table:
    """Run an INSERT, UPDATE or DELETE ``tree`` on the table in memory ``name``."""
    if isinstance(tree, exp.Insert):
        return _insert(connection, name, tree, sql, run_query)
    target = tree.this
    if target.args.get("version"):
        raise SqlError("FOR SYSTEM_TIME reads an array's history; a table in memory has none",
                       sql, span_of(target))
    if isinstance(tree, exp.Delete):
        refuse_clauses(tree, "DELETE", sql)
        table = connection.catalog.sources[name].table
        hit = _hits(tree, table, run_query)
        returned = returned_rows(connection, tree, table.filter(hit), sql)
        _replace(connection, name, table.filter(~hit))
        return answer(returned, int(hit.sum()))
    return _update(connection, name, tree, sql, run_query)


def _insert(connection, name: str, tree: exp.Insert, sql: str, run_query) -> pa.Table:
    refuse_clauses(tree, "INSERT", sql)
    refuse_without_key(tree, "a table made by CREATE TABLE has no key", sql)
    table = connection.catalog.sources[name].table
    names = target_columns(tree, table.column_names, repr(name), sql)
    body = tree.expression
    if isinstance(body, exp.Values):
        rows = values_table(body, names, table.schema, sql)
    else:
        rows = run_query(body)
        names = query_columns(tree, rows.column_names, names, repr(name), sql)
        rows = typed_rows(rows.rename_columns(names), table.schema, sql)
    try:
        rows = pa.table([rows.column(n) if n in names else pa.nulls(rows.num_rows, f.type)
                         for n, f in zip(table.column_names, table.schema)], schema=table.schema)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as err:  # a column of NULL type
        raise SqlError(f"INSERT into {name!r}: the values cannot be stored: {err}", sql) \
            from None
    returned = returned_rows(connection, tree, rows, sql)
    grown = pa.concat_tables([table, rows])
    if grown.num_columns and grown.column(0).num_chunks > _CHUNKS_MAX:
        grown = grown.combine_chunks()  # many one-row INSERTs: one chunk again
    _replace(connection, name, grown)
    return answer(returned, rows.num_rows)


def _update(connection, name: str, tree: exp.Update, sql: str, run_query) -> pa.Table:
    """The WHERE's truth worked out first, once a row (``random()`` too); then the SET values
    where it holds (CASE), over the table with that truth as one more column (``_HIT``,
    registered for the moment under a name of its own), put in their places."""
    from .update_statement import assignments

    refuse_clauses(tree, "UPDATE", sql)
    if tree.args.get("from_"):
        raise UnsupportedSql("UPDATE ... FROM of a table in memory is not supported")
    table = connection.catalog.sources[name].table
    values = assignments(tree, table.column_names, [], sql)
    target = tree.this
    hit = _hits(tree, table, run_query)
    with connection.catalog.lent(_HIT, table.append_column(_HIT, pa.array(hit))) as tested:
        hit_column = exp.column(_HIT, quoted=True)
        new = run_query(exp.select(*(
            exp.Alias(this=exp.Case(ifs=[exp.If(this=hit_column.copy(), true=value.copy())]),
                      alias=exp.to_identifier(column, quoted=True))
            for column, value in values.items())).from_(
                exp.alias_(exp.to_table(tested), target.alias_or_name, table=True)))
    new = typed_rows(new, table.schema, sql, "UPDATE")
    columns = [pc.if_else(pa.array(hit), new.column(column), table.column(column))
               if column in values else table.column(column)
               for column in table.column_names]
    updated = pa.table(columns, schema=table.schema)
    returned = returned_rows(connection, tree, updated.filter(pa.array(hit)), sql)
    _replace(connection, name, updated)
    return answer(returned, int(hit.sum()))


def _hits(tree, table: pa.Table, run_query) -> np.ndarray:
    """Where the WHERE of the UPDATE or DELETE ``tree`` is TRUE on ``table``'s rows (every
    row without one), worked out once a row (``random()`` too)."""
    where = tree.args.get("where")
    if where is None:
        return np.ones(table.num_rows, dtype=bool)
    truth = exp.Is(this=exp.paren(where.this.copy()), expression=exp.true())
    return run_query(exp.select(truth).from_(tree.this.copy())).column(0) \
        .to_numpy(zero_copy_only=False).astype(bool)


def _replace(connection, name: str, rows: pa.Table) -> None:
    """``rows`` as the table in memory ``name`` (new or replacing), plans read again."""
    connection._name_table(name, ArrowSource(rows, owned=True))
    connection._forget_plans()  # a plan may have read the table it replaces


def _query(node: exp.Expression) -> exp.Expression:
    """The query of ``AS (SELECT ...)`` or ``AS VALUES ...`` as a statement."""
    if isinstance(node, exp.Subquery) and not node.alias:
        return node.this
    if isinstance(node, exp.Values):
        return exp.select("*").from_(node.copy())
    return node
