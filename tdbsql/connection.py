"""``tdbsql.connect()``: a session of named tables (arrays or Arrow tables) to run SQL over.

    con = tdbsql.connect()
    con.register("lineitem", "./tpch/lineitem")
    con.sql("SELECT l_returnflag, sum(l_quantity) FROM lineitem GROUP BY 1").arrow()

``sql`` runs SELECT / WITH / set operations through the planner and runner and returns a
``Result``; ``EXPLAIN [ANALYZE] ...`` returns the plan text as a one-column result;
``INSERT`` and ``DELETE`` write to arrays (``tdbsql.dml``).

Plans are kept per SQL text (the last ``PLAN_CACHE`` queries): running the same query again
skips parsing and optimizing as long as the tables it names have the same columns and types.
"""

from __future__ import annotations

import os
import re
from collections import OrderedDict
from dataclasses import dataclass

import pyarrow as pa

from .catalog import ArraySource, ArrowSource, Catalog
from .errors import SqlError
from .result import Result
from .settings import env_number

_EXPLAIN = re.compile(r"^\s*EXPLAIN(\s+ANALYZE)?\s+", re.IGNORECASE)
DEFAULT_MAX_ROWS = 200_000_000
PLAN_CACHE = 64


@dataclass(frozen=True)
class _Planned:
    tables: list  # the tree's table references, to resolve again
    schema: tuple  # what the plan was built against
    query: object  # the LogicalQuery


class Connection:
    def __init__(self, memory_mb: float | None = None):
        self.catalog = Catalog()
        self._plans: OrderedDict[str, _Planned] = OrderedDict()
        if memory_mb is not None:
            from .engine.memory import budget_mb

            budget_mb(memory_mb)  # a bad value fails here, not at the first query
        self.memory_mb = memory_mb  # None: $TDBSQL_MEMORY_MB, read per query

    def register(self, name: str, path, *, timestamp=None, key=None) -> "Connection":
        """Make the array at ``path`` the table ``name`` (read at ``timestamp``, ms).  An Arrow
        table (or anything with ``__arrow_c_stream__``) goes to ``register_arrow``."""
        if not isinstance(path, (str, os.PathLike)):
            if timestamp is not None or key is not None:
                raise TypeError("timestamp and key apply to arrays; register an Arrow table "
                                "without them")
            try:
                return self.register_arrow(name, path)
            except (TypeError, pa.ArrowInvalid) as err:
                raise TypeError(f"register({name!r}, ...) takes an array path or an Arrow "
                                f"table, not {type(path).__name__} ({err})") from None
        source = ArraySource(os.fspath(path), timestamp, key)
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

        if sql in self._plans:  # a query planned before (never INSERT / DELETE)
            query, runner = self._plan(sql)
            return Result(runner.run(query))
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
        from .engine.memory import MemoryBudget, budget_mb
        from .engine.runner import Runner
        from .planner.build import build, check_statement
        from .planner.table_refs import referenced_tables, table_key
        from .planner.parse import parse

        planned = self._plans.get(sql)
        if planned is None:
            tree = parse(sql) if tree is None else tree
            check_statement(tree)
            tables = referenced_tables(tree)
        else:
            tables = planned.tables
        schema, arrays = {}, {}
        for table in tables:
            source, window = self.catalog.resolve(table, sql)
            array = None
            if isinstance(source, ArraySource):
                if (source, window) not in arrays:  # the runner reads this one too
                    arrays[source, window] = source.open(window)
                array = arrays[source, window]
            schema[table_key(table)] = _sql_schema(source, array)
        frozen = tuple((name, tuple(columns.items())) for name, columns in schema.items())
        if planned is not None and planned.schema == frozen:
            query = planned.query
            self._plans.move_to_end(sql)
        else:
            tree = parse(sql) if tree is None else tree
            query = build(tree, schema, sql)
            if not query.reads_clock:  # now(), current_date: read again on the next run
                self._plans[sql] = _Planned(tables, frozen, query)
            while len(self._plans) > PLAN_CACHE:
                self._plans.popitem(last=False)
        max_rows = env_number("TDBSQL_MAX_ROWS", DEFAULT_MAX_ROWS, minimum=1)
        budget = MemoryBudget(budget_mb(self.memory_mb))
        return query, Runner(self.catalog, sql, max_rows, arrays, budget)

    def close(self) -> None:
        self.catalog.sources.clear()
        self._plans.clear()

    def __enter__(self) -> "Connection":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def connect(memory_mb: float | None = None) -> Connection:
    return Connection(memory_mb)


def _sql_schema(source, array) -> dict[str, str]:
    from .catalog import sql_type

    schema = source.arrow_schema(array)
    names = [f.name for f in schema]
    if len(set(names)) != len(names):
        raise SqlError(f"table has duplicate column names: {names}")
    return {f.name: sql_type(f.type) for f in schema}
