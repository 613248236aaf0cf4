"""``tdbsql.connect()``: a session of named tables (arrays or Arrow tables) to run SQL over.

    con = tdbsql.connect()
    con.register("lineitem", "./tpch/lineitem")
    con.sql("SELECT l_returnflag, sum(l_quantity) FROM lineitem GROUP BY 1").arrow()

``sql`` runs SELECT / WITH / set operations through the planner and runner and returns a
``Result``; ``EXPLAIN [ANALYZE] ...`` returns the plan text as a one-column result;
``INSERT`` and ``DELETE`` write to arrays (``tdbsql.dml``); ``DESCRIBE t`` / ``DESCRIBE SELECT
...`` / ``SHOW t`` and ``SHOW [ALL] TABLES`` describe tables and queries (``tdbsql.describe``).

Plans are kept per SQL text (the last ``PLAN_CACHE`` queries): running the same query again
skips parsing and optimizing as long as the tables it names have the same columns and types.
"""

from __future__ import annotations

import os
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass

import pyarrow as pa

from . import pandas_deferral as _pandas_deferral  # noqa: F401  (first: pyarrow looks for pandas)
from .catalog import ArraySource, ArrowSource, Catalog, ShapeCatalog, sql_columns
from .collector_pause import imports_paused
from .errors import InterfaceError, SqlError
from .parquet_source import ParquetSource, is_parquet_path
from .result import Parts, Result
from .settings import env_number
from .views import Views

_EXPLAIN = re.compile(r"^\s*EXPLAIN(\s+ANALYZE)?\s+", re.IGNORECASE)
_DESCRIBE = re.compile(r"^\s*(DESCRIBE|DESC|SHOW)\s+", re.IGNORECASE)
# SHOW <table or query> is DuckDB's DESCRIBE; sqlglot knows only SHOW TABLES and the like
_SHOW_DESCRIBE = re.compile(r"^(\s*)SHOW(?=\s+(?!(ALL\s+)?TABLES\b))", re.IGNORECASE)
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
        self.views = Views()
        self._plans: OrderedDict[str, _Planned] = OrderedDict()
        self._plans_lock = threading.Lock()  # threads may query one connection at once
        if memory_mb is not None:
            from .engine.memory import budget_mb

            budget_mb(memory_mb)  # a bad value fails here, not at the first query
        self.memory_mb = memory_mb  # None: $TDBSQL_MEMORY_MB, read per query

    def register(self, name: str, path, *, timestamp=None, key=None) -> "Connection":
        """Make the array at ``path`` the table ``name`` (read at ``timestamp``, ms); a path
        ending in ``.parquet`` (glob patterns allowed) names Parquet files; a TileDB group
        makes each member array a table ``name.member`` (``register_group``).  An Arrow table
        (or anything with ``__arrow_c_stream__``) goes to ``register_arrow``."""
        if not isinstance(name, str) or not name:
            raise TypeError(f"a table name must be a non-empty str, not {name!r}")
        if not isinstance(path, (str, os.PathLike)):
            if timestamp is not None or key is not None:
                raise TypeError("timestamp and key apply to arrays; register an Arrow table "
                                "without them")
            try:
                return self.register_arrow(name, path)
            except (TypeError, pa.ArrowInvalid) as err:
                raise TypeError(f"register({name!r}, ...) takes an array path or an Arrow "
                                f"table, not {type(path).__name__} ({err})") from None
        if is_parquet_path(os.fspath(path)):  # files matched again at each query
            if timestamp is not None or key is not None:
                raise TypeError("timestamp and key apply to arrays, not to Parquet files")
            self._name_table(name, ParquetSource.of(os.fspath(path)))
            return self
        from .storage.group import is_group

        if is_group(os.fspath(path)):
            return self.register_group(path, prefix=name, timestamp=timestamp, key=key)
        source = ArraySource(os.fspath(path), timestamp, key)
        source.open().schema  # fail here, naming the problem, not at the first query
        self._name_table(name, source)
        return self

    def register_group(self, path, *, prefix: str | None = None, timestamp=None,
                       key=None) -> "Connection":
        """Make every array of the TileDB group at ``path`` a table: ``prefix.member`` (a
        member group's arrays ``prefix.sub.member``), or the member names alone without a
        ``prefix``.  The members are those of the group at ``timestamp``, read at it too;
        ``key`` opens encrypted members."""
        from .storage.group import Group

        tables = Group(os.fspath(path), timestamp).tables()
        sources = {}
        for member, member_path in tables.items():
            source = ArraySource(member_path, timestamp, key)
            source.open().schema  # every member opens, or nothing is registered
            sources[member if prefix is None else f"{prefix}.{member}"] = source
        for name, source in sources.items():
            self._name_table(name, source)
        return self

    def register_arrow(self, name: str, table) -> "Connection":
        """Make an Arrow table (or anything ``pa.table`` accepts) the table ``name``."""
        if not isinstance(name, str) or not name:
            raise TypeError(f"a table name must be a non-empty str, not {name!r}")
        self._name_table(name, ArrowSource(pa.table(table)))
        return self

    def _name_table(self, name: str, source) -> None:
        """Register ``source`` as ``name``, in place of a view of that name."""
        if self.views.get(name) is not None:
            self.views.forget(name)
            self._forget_plans()
        self.catalog.register(name, source)

    def tables(self) -> list[str]:
        return sorted(self.catalog.sources)

    def sql(self, sql: str, params=None) -> Result:
        """Run one statement, or a script of several (``_script``).  ``params`` are the
        values of its placeholders: a list or tuple for ``?`` / ``$1``, a dict for ``$name``
        (``planner.parameters``)."""
        _check_text(sql)
        if ";" in sql.rstrip().rstrip(";"):  # maybe a script: every statement, in order
            from .planner.parse import split_statements

            statements = split_statements(sql)
            if len(statements) > 1:
                return self._script(statements, params)
            sql = statements[0]  # one statement, then comments (``SELECT 1; -- done``)
        match = _EXPLAIN.match(sql)
        if match:
            text = self.explain(sql[match.end():], analyze=bool(match.group(1)), params=params)
            return Result(pa.table({"explain": [text]}))
        if params is None and sql in self._plans:  # planned before (never INSERT / DELETE)
            return _result(*self._plan(sql))
        with imports_paused():  # the first statement imports the parser (and sqlglot's)
            tree = _parsed(sql)
        return self._statement(sql, tree, params)

    def _statement(self, sql: str, tree, params) -> Result:
        """Run the parsed statement ``tree`` (of the text ``sql``), its placeholders bound
        to ``params``."""
        from sqlglot import exp

        from .planner.parameters import bind_parameters

        tree = bind_parameters(tree, params, sql)
        if isinstance(tree, (exp.Describe, exp.Show, exp.Summarize)):
            return Result(self._describe(tree, sql))
        kind = str(tree.args.get("kind") or "").upper() \
            if isinstance(tree, (exp.Create, exp.Drop)) else None
        if kind == "VIEW":
            self._forget_plans()  # a plan may have read the view as it was
            if isinstance(tree, exp.Drop):
                return Result(self.views.drop(tree, sql))
            tables = {name.lower() for name in self.catalog.sources}
            return Result(self.views.create(
                tree, sql, tables, lambda query: self.result_schema(sql, query)))
        if kind == "TABLE":
            from .memory_tables import create_table, drop_table

            if isinstance(tree, exp.Drop):
                return Result(drop_table(self, tree, sql))
            return Result(create_table(self, tree, sql, self._rows_of(sql)))
        if isinstance(tree, exp.Insert):
            return Result(self._insert(tree, sql))
        if isinstance(tree, exp.TruncateTable):
            from .dml import truncate_as_delete

            tree = truncate_as_delete(tree)
        if isinstance(tree, (exp.Update, exp.Delete)):
            from .memory_tables import owned_table, run_write

            owned = owned_table(self, tree.this)
            if owned is not None:  # a table made by CREATE TABLE
                return Result(run_write(self, owned, tree, sql, self._rows_of(sql)))
            if isinstance(tree, exp.Update):
                from .update_statement import run_update

                return Result(run_update(self, tree, sql, self._rows_of(sql)))
            from .dml import run_delete

            return Result(run_delete(self, tree, sql))
        if isinstance(tree, exp.Copy):
            from .copy_statement import run_copy

            return Result(run_copy(
                tree, sql, lambda query: _result(*self._plan(sql, query, cached=False)),
                lambda insert: self._insert(insert, sql)))
        return _result(*self._plan(sql, tree, cached=params is None))

    def _insert(self, tree, sql: str) -> pa.Table:
        """An INSERT into an array, or into a table made by CREATE TABLE."""
        from .dml import run_insert
        from .memory_tables import owned_table, run_write

        owned = owned_table(self, tree.this)
        if owned is not None:
            return run_write(self, owned, tree, sql, self._rows_of(sql))
        return run_insert(self, tree, sql)

    def _rows_of(self, sql: str):
        """A function from a query tree (parsed from ``sql``) to its rows, a ``pa.Table``."""
        return lambda query: _result(*self._plan(sql, query, cached=False)).arrow()

    def _script(self, statements: list[str], params) -> Result:
        """Run several statements one after the other, as DuckDB does, and answer the last
        one's result.  Every statement is parsed before any runs (a syntax error anywhere
        runs none); parameters belong to the last statement, as in DuckDB."""
        from sqlglot import exp

        trees = [_parsed(text) for text in statements]
        if params is not None and any(tree.find(exp.Placeholder) for tree in trees[:-1]):
            raise InterfaceError("parameters are only supported in the last statement of a "
                                 "script (as in DuckDB); run the statements one by one")
        for text, tree in zip(statements[:-1], trees):
            self._parsed_statement(text, tree, None).arrow()  # to its end: later ones may
            #                                                 depend on it
        return self._parsed_statement(statements[-1], trees[-1], params)

    def _parsed_statement(self, text: str, tree, params) -> Result:
        """A statement of a script, parsed already (an EXPLAIN runs by its text)."""
        if _EXPLAIN.match(text):
            return self.sql(text, params)
        return self._statement(text, tree, params)

    def execute(self, sql: str, params=None) -> Result:
        return self.sql(sql, params)

    def executemany(self, sql: str, seq_of_params) -> Result:
        """The statement once per set of values in ``seq_of_params``.  ``INSERT ... VALUES``
        of one row of placeholders writes every set as one fragment (one row each), not a
        fragment per set; any other statement runs once per set (the last one's result)."""
        from sqlglot import exp

        from .planner.parameters import bind_parameters
        from .planner.parse import parse

        _check_text(sql)
        sets = list(seq_of_params)
        tree = parse(sql)
        values = tree.expression if isinstance(tree, exp.Insert) else None
        if isinstance(values, exp.Values) and len(values.expressions) == 1 and sets:
            row = values.expressions[0]
            values.set("expressions", [bind_parameters(row.copy(), params, sql)
                                       for params in sets])
            return Result(self._insert(tree, sql))
        result = None
        for params in sets:
            result = self.sql(sql, params)
        if result is None:
            raise InterfaceError("executemany() needs at least one set of parameters")
        return result

    def explain(self, sql: str, *, analyze: bool = False, params=None) -> str:
        from .plan_text import explain_text
        from .planner.parameters import bind_parameters
        from .planner.parse import parse

        _check_text(sql)
        tree = None if params is None else bind_parameters(parse(sql), params, sql)
        query, runner = self._plan(sql, tree, cached=params is None)
        if analyze:
            runner.run(query)
        return explain_text(query, runner, analyze)

    def _describe(self, tree, sql: str) -> pa.Table:
        """DESCRIBE / SHOW: a table's columns, a query's result columns (the query run over
        empty tables, so nothing is read), or the tables."""
        from sqlglot import exp

        from .describe import describe_columns, describe_table, show_tables
        from .errors import UnsupportedSql

        if isinstance(tree, exp.Summarize):
            raise UnsupportedSql("SUMMARIZE is not supported: DESCRIBE gives the columns and "
                                 "their types, SELECT min(x), max(x), count(x) ... the statistics")
        if isinstance(tree, exp.Show):
            what = tree.name.upper()
            if what not in ("TABLES", "ALL TABLES") or any(v for k, v in tree.args.items()
                                                           if k != "this"):
                raise UnsupportedSql(f"SHOW {what} is not supported (SHOW TABLES, SHOW ALL "
                                     "TABLES, SHOW t and DESCRIBE t / DESCRIBE SELECT ... are)")
            return show_tables(self.catalog, self.views, all_tables=what == "ALL TABLES")
        extra = [arg for arg, value in tree.args.items()
                 if value and arg not in ("this", "as_json")
                 and not (arg == "kind" and str(value).upper() == "TABLE")]
        if extra or tree.args.get("as_json"):
            raise UnsupportedSql("this form of DESCRIBE is not supported (DESCRIBE t and "
                                 "DESCRIBE SELECT ... are)")
        target = tree.this
        keyword = _DESCRIBE.match(sql)  # none after a leading comment: the query printed back
        text = sql[keyword.end():].strip().rstrip(";").strip() if keyword else \
            target.sql(dialect="duckdb")
        while isinstance(target, exp.Subquery) \
                and not any(v for k, v in target.args.items() if k != "this") \
                and text.startswith("(") and text.endswith(")"):
            target, text = target.this, text[1:-1].strip()
        if isinstance(target, exp.Table) and not target.args.get("db") and \
                self.views.get(target.name) is not None:  # DESCRIBE v: its query's columns
            return describe_columns(self.result_schema(sql, exp.select("*").from_(target)))
        if isinstance(target, exp.Table):
            source, window = self.catalog.resolve(target, sql)
            array = source.open(window) if isinstance(source, ArraySource) else None
            return describe_table(source, array)
        try:
            return describe_columns(self.result_schema(text))
        except SqlError as err:  # underline the culprit in the whole statement
            offset = sql.find(text)
            if type(err) is not SqlError or err.sql != text or err.span is None or offset < 0:
                raise
            start, end = err.span
            raise SqlError(err.plain_message, sql, (start + offset, end + offset)) from None

    def result_schema(self, sql: str, tree=None) -> pa.Schema:
        """The columns of the query ``sql`` (parsed: ``tree``), run over empty tables: no
        tile or file is read, however much the query would read."""
        from .engine.runner import Runner

        query, runner = self._plan(sql, tree, cached=False)
        shapes = Runner(ShapeCatalog(self.catalog, runner.arrays), sql, runner.memory_rows, {},
                        runner.budget)
        return shapes.run(query).schema

    def _plan(self, sql: str, tree=None, cached: bool = True):
        """(the LogicalQuery, a Runner) for ``sql`` (parsed: ``tree``), the plan kept per SQL
        text unless ``cached`` is False (a statement with parameters: its values are in
        ``tree``, not in the text)."""
        with imports_paused():  # the planner and the engine, imported by the first query
            from .engine.memory import MemoryBudget, budget_mb
            from .engine.runner import Runner
            from .storage.tile_cache import tile_cache
            from .planner.build import build, check_statement
            from .planner.table_refs import dotted_names, referenced_tables, table_key
            from .planner.parse import parse
            from .planner.pivots import has_pivot, reads_values, with_values
            from .planner.struct_fields import expands_structs, with_struct_fields
            from .recursive_ctes import is_recursive, run_recursive_ctes

        planned = self._plans.get(sql) if cached else None
        max_rows = env_number("TDBSQL_MAX_ROWS", DEFAULT_MAX_ROWS, minimum=1)
        if planned is None:
            tree = dotted_names(self.views.expanded(parse(sql) if tree is None else tree, sql),
                                self.catalog.registered_name)
            if is_recursive(tree):  # its CTEs run to their end, then a plain statement
                child, tree = run_recursive_ctes(self, tree, sql, max_rows)
                return child._plan(sql, tree, cached=False)
            if reads_values(tree):  # PIVOT t ON c: c's values read first, for its columns
                tree, cached = with_values(self, tree.copy(), sql), False
            elif not has_pivot(tree):  # a PIVOT statement is a SELECT once planned
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
            schema[table_key(table)] = sql_columns(source, array)
        if planned is None and expands_structs(tree):  # s.*, unnest(s): s's fields, read first
            tree, cached = with_struct_fields(self, tree.copy(), schema, sql), False
        frozen = tuple((name, tuple(columns.items())) for name, columns in schema.items())
        if planned is not None and planned.schema == frozen:
            query = planned.query
            with self._plans_lock:
                if sql in self._plans:  # another thread may have dropped it meanwhile
                    self._plans.move_to_end(sql)
        else:
            if tree is None:
                tree = dotted_names(self.views.expanded(parse(sql), sql),
                                    self.catalog.registered_name)
            query = build(tree, schema, sql)
            if cached and not query.reads_clock:  # now(): read again on the next run
                with self._plans_lock:
                    self._plans[sql] = _Planned(tables, frozen, query)
                    while len(self._plans) > PLAN_CACHE:
                        self._plans.popitem(last=False)
        budget = MemoryBudget(budget_mb(self.memory_mb))
        tile_cache().fit(budget.limit)
        return query, Runner(self.catalog, sql, max_rows, arrays, budget)

    def _forget_plans(self) -> None:
        with self._plans_lock:
            self._plans.clear()

    def close(self) -> None:
        self.catalog.sources.clear()
        self.views.by_name.clear()
        self._forget_plans()

    def __enter__(self) -> "Connection":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _result(query, runner) -> Result:
    """The query's result: streamed part by part when its plan allows (``tdbsql.result``),
    else run to its end."""
    parts = runner.stream(query)
    if parts is None:
        return Result(runner.run(query))
    label = f"the scan of {query.plan.root.name!r}"
    return Result(parts=Parts(parts, lambda: runner.fresh().stream(query),
                              lambda held: runner.budget.check(2 * held, label)))


def _parsed(sql: str):
    """The statement's tree; SHOW of a table is DuckDB's DESCRIBE (same length: spans), and
    EXPLAIN [ANALYZE] the statement it explains."""
    from .planner.parse import parse

    match = _EXPLAIN.match(sql)
    if match:
        return parse(sql[match.end():])
    return parse(_SHOW_DESCRIBE.sub(r"\1DESC", sql, count=1))


def _check_text(sql) -> None:
    if not isinstance(sql, str):
        raise TypeError(f"the SQL statement must be a str, not {type(sql).__name__}")


def connect(memory_mb: float | None = None) -> Connection:
    return Connection(memory_mb)


