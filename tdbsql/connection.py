"""``tdbsql.connect()``: a session of named tables (arrays or Arrow tables) to run SQL over.

    con = tdbsql.connect()
    con.register("lineitem", "./tpch/lineitem")
    con.sql("SELECT l_returnflag, sum(l_quantity) FROM lineitem GROUP BY 1").arrow()

``sql`` runs SELECT / WITH / set operations through the planner and runner and returns a
``Result``; ``EXPLAIN [ANALYZE] ...`` returns the plan text as a one-column result;
``INSERT`` and ``DELETE`` write to arrays (``tdbsql.dml``).
"""

from __future__ import annotations

import os
import re

import pyarrow as pa

from .catalog import ArraySource, ArrowSource, Catalog
from .errors import SqlError
from .result import Result

_EXPLAIN = re.compile(r"^\s*EXPLAIN(\s+ANALYZE)?\s+", re.IGNORECASE)
DEFAULT_MAX_ROWS = 200_000_000


class Connection:
    def __init__(self):
        self.catalog = Catalog()

    def register(self, name: str, path: str, *, timestamp=None, key=None) -> "Connection":
        """Make the array at ``path`` the table ``name`` (read at ``timestamp``, ms)."""
        source = ArraySource(path, timestamp, key)
        source.open().schema  # fail here, naming the problem, not at the first query
        self.catalog.register(name, source)
        return self

    def register_arrow(self, name: str, table) -> "Connection":
        """Make an Arrow table (or anything ``pa.table`` accepts) the table ``name``."""
        self.catalog.register(name, ArrowSource(pa.table(table)))
        return self

    def tables(self) -> list[str]:
        return sorted(self.catalog.sources)

    def sql(self, sql: str) -> Result:
        match = _EXPLAIN.match(sql or "")
        if match:
            text = self.explain(sql[match.end():], analyze=bool(match.group(1)))
            return Result(pa.table({"explain": [text]}))
        from sqlglot import exp

        from .planner.parse import parse

        tree = parse(sql)
        if isinstance(tree, (exp.Insert, exp.Delete)):
            from .dml import run_delete, run_insert

            run = run_insert if isinstance(tree, exp.Insert) else run_delete
            return Result(run(self, tree, sql))
        query, runner = self._plan(sql, tree)
        return Result(runner.run(query))

    def execute(self, sql: str) -> Result:
        return self.sql(sql)

    def explain(self, sql: str, *, analyze: bool = False) -> str:
        from .plan_text import explain_text

        query, runner = self._plan(sql)
        if analyze:
            runner.run(query)
        return explain_text(query, runner, analyze)

    def _plan(self, sql: str, tree=None):
        from .engine.runner import Runner
        from .planner.build import build, referenced_tables, table_key
        from .planner.parse import parse

        tree = parse(sql) if tree is None else tree
        schema, arrays = {}, {}
        for table in referenced_tables(tree):
            source, window = self.catalog.resolve(table, sql)
            if isinstance(source, ArraySource) and (source, window) not in arrays:
                arrays[source, window] = source.open(window)  # the runner reads this one too
            schema[table_key(table)] = _sql_schema(source, arrays.get((source, window)))
        query = build(tree, schema, sql)
        max_rows = int(os.environ.get("TDBSQL_MAX_ROWS", DEFAULT_MAX_ROWS))
        return query, Runner(self.catalog, sql, max_rows, arrays)

    def close(self) -> None:
        self.catalog.sources.clear()

    def __enter__(self) -> "Connection":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def connect() -> Connection:
    return Connection()


def _sql_schema(source, array) -> dict[str, str]:
    from .catalog import sql_type

    schema = source.arrow_schema(array)
    names = [f.name for f in schema]
    if len(set(names)) != len(names):
        raise SqlError(f"table has duplicate column names: {names}")
    return {f.name: sql_type(f.type) for f in schema}
