"""``read_parquet('f.parquet')`` / ``parquet_scan(...)`` in FROM: the table its path names.

DuckDB reads Parquet files named in FROM either way, ``FROM 'f.parquet'`` or through the
function; the call becomes the quoted path it reads (keeping its alias, else named after the
function, as DuckDB names it), so the catalog finds the files as it finds an array's path
(``parquet_source``; whatever the path ends in) and the planner sees one kind of table.
The path may hold glob patterns (``'data/*.parquet'``, ``'data/**/*.parquet'``).  A list of
paths and the reader's options (``hive_partitioning``, ``union_by_name``, ``filename``, ...)
are ``UnsupportedSql``.
"""

from __future__ import annotations

from sqlglot import exp

from ..errors import UnsupportedSql

_READERS = ("read_parquet", "parquet_scan")
PARQUET = "tdbsql_parquet"  # meta on the path a reader's call read: a Parquet path


def file_tables(tree: exp.Expression) -> exp.Expression:
    """``tree`` with each Parquet reader call in FROM replaced by its path (in place)."""
    for table in list(tree.find_all(exp.Table)):
        call = table.this
        if not (isinstance(call, exp.ReadParquet) or (
                isinstance(call, exp.Anonymous) and call.name.lower() in _READERS)):
            continue
        name = call.sql_name().lower() if isinstance(call, exp.ReadParquet) else \
            call.name.lower()
        arguments = call.expressions
        if len(arguments) > 1:
            options = ", ".join(a.sql(dialect="duckdb") for a in arguments[1:])
            raise UnsupportedSql(f"{name}() options are not supported ({options})")
        path = arguments[0] if arguments else None
        if isinstance(path, exp.Placeholder):
            continue  # read_parquet(?): read once the parameter is bound
        if not (isinstance(path, exp.Literal) and path.is_string):
            what = "no path" if path is None else repr(path.sql(dialect="duckdb"))
            raise UnsupportedSql(f"{name}() reads one path written as a string (a glob "
                                 f"pattern may match several files), not {what}")
        table.set("this", exp.Identifier(this=path.this, quoted=True))
        table.this.meta[PARQUET] = True  # whatever its name ends in
        if table.args.get("alias") is None:  # DuckDB names the table after the function
            table.set("alias", exp.TableAlias(this=exp.to_identifier(name)))
    return tree


def is_parquet_call(table: exp.Table) -> bool:
    """Was ``table`` written as a Parquet reader's call (``file_tables``)?"""
    return bool(table.this.meta.get(PARQUET))
