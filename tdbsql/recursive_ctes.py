"""WITH RECURSIVE: each recursive CTE run to its fixpoint, then read as a table.

A recursive CTE is ``name [(columns)] AS (anchor UNION [ALL] step)`` where ``step`` reads
``name``.  As in DuckDB, the anchor runs once; then ``step`` runs again and again over the
rows the last round added (the working table), until a round adds none.  UNION ALL keeps every
row; UNION keeps a row only if no earlier round (nor the same one) gave it, so a walk over a
graph with cycles ends.  The columns take the anchor's types (a step's ``n + 0.5`` over an
INTEGER ``n`` is cast back to INTEGER, as DuckDB does) and names (or the CTE's column list).

Each run is an ordinary query of the engine over a connection of its own: the caller's tables,
the CTEs around and before this one (one of the CTE's own name is hidden by it), and the
working table under the CTE's name for the step's run only.  The finished rows are then
registered under a name of their own, the references the CTE answers (in its WITH's query:
not a same-named table or CTE of another scope) read them under the CTE's name, the CTE
leaves the WITH, and the statement runs as a plain one.  A recursion that does not end is stopped with an error past ``MAX_ROUNDS``
rounds (``TDBSQL_MAX_RECURSION``) or past the row cap (``TDBSQL_MAX_ROWS``), rather than
running forever as DuckDB does (DuckDB's ``LIMIT`` over an endless recursion stops it; here
the recursion needs a condition of its own).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from sqlglot import exp

from .engine.value_types import cast_value
from .errors import SqlError, UnsupportedSql
from .planner.table_refs import cte_of
from .settings import env_number

MAX_ROUNDS = 100_000
_NEW, _SEEN = "__tdbsql_recursion_new", "__tdbsql_recursion_seen"


def is_recursive(tree: exp.Expression) -> bool:
    """Whether a WITH RECURSIVE is anywhere in ``tree`` (a subquery's too)."""
    return any(with_.args.get("recursive") for with_ in tree.find_all(exp.With))


def run_recursive_ctes(con, tree: exp.Expression, sql: str, max_rows: int):
    """(a connection holding every recursive CTE of ``tree`` as a table, ``tree`` without
    them and no WITH RECURSIVE).  ``con`` is left as it was.  A recursive CTE in a subquery
    is run on its own too, before the statement (so it may read the CTEs around it, but not
    the outer query's rows: a correlated one is refused by its unknown table alias)."""
    from .connection import Connection

    child = Connection(con.memory_mb)
    child.catalog = con.catalog.snapshot()
    tree = tree.copy()
    for with_ in list(tree.find_all(exp.With)):  # outer WITHs first
        if with_.args.get("recursive") and with_.root() is tree:
            _run_with(child, with_, sql, max_rows)
    return child, tree


def _run_with(child, with_: exp.With, sql: str, max_rows: int) -> None:
    """Each recursive CTE of ``with_`` run, its rows registered in ``child`` under a name of
    their own and the references it answers pointed at them (other scopes may use the name
    for something else), the CTE taken out of the WITH (in place), which is then no longer
    RECURSIVE."""
    written = _around(with_)  # the CTEs a term may read: around this WITH, then before it
    kept: list[exp.CTE] = []
    for cte in list(with_.expressions):
        name = cte.alias_or_name
        body = cte.this
        if not _reads(body, name):
            written.append(cte)
            kept.append(cte)
            continue
        if cte.args.get("key_expressions"):
            raise UnsupportedSql(f"recursive CTE {name!r}: USING KEY is not supported")
        anchor, step, distinct = _parts(body, name)
        readable = [c for c in written if c.alias_or_name.lower() != name.lower()]  # shadowed
        rows = _fixpoint(child, name, _columns(cte), _prefixed(anchor, readable),
                         _prefixed(step, readable), distinct, sql, max_rows)
        hidden = f"__tdbsql_recursive_{len(child.catalog.sources)}_{name}"
        child.register_arrow(hidden, rows)
        _pointed(with_.parent, cte, hidden)
    with_.set("expressions", kept)
    with_.set("recursive", None)
    if not kept:
        with_.pop()


def _around(with_: exp.With) -> list[exp.CTE]:
    """The plain CTEs of the WITHs of the queries enclosing ``with_``'s, outermost first."""
    around: list[exp.CTE] = []
    node = with_.parent.parent if with_.parent is not None else None
    while node is not None:
        outer = node.args.get("with_") if isinstance(node, exp.Query) else None
        if isinstance(outer, exp.With):
            around[:0] = list(outer.expressions)
        node = node.parent
    return around


def _pointed(scope: exp.Expression, cte: exp.CTE, hidden: str) -> None:
    """The table references in ``scope`` that name ``cte`` made to read the table
    ``hidden`` under the CTE's name (in place)."""
    for table in list(scope.find_all(exp.Table)):
        if table.name and cte_of(table, fold=True) is cte:
            if not table.alias:
                table.set("alias", exp.TableAlias(this=exp.to_identifier(table.name)))
            table.set("this", exp.to_identifier(hidden, quoted=True))


def _reads(node: exp.Expression, name: str) -> bool:
    return any(table.name.lower() == name.lower() and not table.db
               for table in node.find_all(exp.Table))


def _parts(body: exp.Expression, name: str) -> tuple[exp.Expression, exp.Expression, bool]:
    """(anchor, step, UNION without ALL) of a recursive CTE's body."""
    if not isinstance(body, exp.Union) or _reads(body.this, name) or \
            any(body.args.get(key) for key in ("order", "limit", "offset", "by_name")):
        raise UnsupportedSql(f"recursive CTE {name!r}: only an anchor that does not read "
                             f"{name!r}, then UNION [ALL], then a query reading it, is "
                             "supported")
    return body.this, body.expression, bool(body.args.get("distinct"))


def _columns(cte: exp.CTE) -> list[str] | None:
    alias = cte.args.get("alias")
    columns = alias.columns if isinstance(alias, exp.TableAlias) else []
    if columns:  # the names are the list's: the WITH no longer renames
        alias.set("columns", None)
    return [column.name for column in columns] or None


def _prefixed(query: exp.Expression, written: list[exp.CTE]) -> exp.Expression:
    """``query`` with the CTEs written before it (which it may read)."""
    query = query.copy()
    if written:
        query.set("with_", exp.With(expressions=[cte.copy() for cte in written]))
    return query


def _fixpoint(child, name: str, columns, anchor, step, distinct: bool, sql: str,
              max_rows: int) -> pa.Table:
    rows = _run(child, anchor, sql)
    if columns is not None:  # the first ones renamed, as DuckDB does (past them: ignored)
        rows = rows.rename_columns(columns[:rows.num_columns] + rows.column_names[len(columns):])
    schema = rows.schema
    step = step.sql(dialect="duckdb")  # one text: one plan, kept from round to round
    seen = _Seen(child, sql) if distinct else None
    if seen is not None:
        rows = seen.unseen(rows)
    found = [rows]
    max_rounds = env_number("TDBSQL_MAX_RECURSION", MAX_ROUNDS, minimum=1)
    shadowed = child.catalog.sources.get(name)  # a table of that name, hidden meanwhile
    try:
        _rounds(child, name, step, schema, seen, found, sql, max_rows, max_rounds)
    finally:  # the working table was the step's alone
        child.catalog.sources.pop(name, None)
        if shadowed is not None:
            child.catalog.register(name, shadowed)
    return pa.concat_tables(found)


def _rounds(child, name: str, step: str, schema: pa.Schema, seen, found: list, sql: str,
            max_rows: int, max_rounds: int) -> None:
    """The step run over the rows the last round added (the last of ``found``) until it adds
    none, each round's rows appended to ``found`` (for UNION: those ``seen`` had not)."""
    rows, total, rounds = found[-1], sum(t.num_rows for t in found), 0
    while rows.num_rows:
        rounds += 1
        if rounds > max_rounds:
            raise SqlError(f"recursive CTE {name!r} still adds rows after {max_rounds:,} "
                           "rounds (set TDBSQL_MAX_RECURSION to allow more, or give its "
                           "step a condition that ends it)", sql)
        child.register_arrow(name, rows)
        rows = _typed(_run(child, step, sql), schema, name, sql)
        if seen is not None:
            rows = seen.unseen(rows)
        total += rows.num_rows
        if total > max_rows:
            raise SqlError(f"recursive CTE {name!r} would hold more than {max_rows:,} rows, "
                           "the row cap (set TDBSQL_MAX_ROWS to raise it, or give its step a "
                           "condition that ends it)", sql)
        found.append(rows)


def _typed(rows: pa.Table, schema: pa.Schema, name: str, sql: str) -> pa.Table:
    """A round's rows in the anchor's column types and names, in buffers of their own (a
    column computed from the last round's may still hold it: 100,000 rounds would chain as
    many objects, whose release overflows the stack)."""
    if rows.num_columns != len(schema):
        raise SqlError(f"recursive CTE {name!r}: its anchor gives {len(schema)} columns, its "
                       f"step {rows.num_columns} (UNION takes the same number of columns)", sql)
    if any(pa.types.is_null(field.type) for field in schema) and rows.num_rows:
        raise SqlError(f"recursive CTE {name!r}: its anchor's column is an untyped NULL; "
                       "cast it (CAST(NULL AS INTEGER))", sql)
    try:
        columns = [cast_value(column.combine_chunks(), field.type)
                   for column, field in zip(rows.columns, schema)]
    except (ValueError, pa.ArrowInvalid, pa.ArrowNotImplementedError) as err:
        raise SqlError(f"recursive CTE {name!r}: {err}", sql) from None
    return pa.Table.from_arrays(columns, schema=schema).take(np.arange(rows.num_rows))


class _Seen:
    """The rows a UNION recursion has kept, as a set of row tuples (NULLs equal, NaN equal to
    NaN, as UNION has them): each round's rows are checked against it and added in time of
    that round's rows alone.  (An EXCEPT against every row kept so far made the rounds
    quadratic: 5,000 rounds of one row took 378 s.)  Rows holding an INTERVAL, whose equal
    values differ in parts (1 day = 24 hours), are compared by the engine's EXCEPT instead."""

    def __init__(self, child, sql: str):
        self.child, self.sql = child, sql
        self.rows: set[tuple] = set()
        self.kept: list[pa.Table] = []  # for the EXCEPT

    def unseen(self, rows: pa.Table) -> pa.Table:
        """The distinct ``rows`` not seen before, now seen."""
        if any(_has_interval(field.type) for field in rows.schema):
            return self._excepted(rows)
        keep = []
        for i, row in enumerate(zip(*(_comparable(column) for column in rows.columns))):
            if row not in self.rows:
                self.rows.add(row)
                keep.append(i)
        return rows.take(pa.array(keep, pa.int64()))

    def _excepted(self, rows: pa.Table) -> pa.Table:
        self.child.register_arrow(_NEW, rows)
        query = f'SELECT DISTINCT * FROM "{_NEW}"'
        if self.kept:
            self.child.register_arrow(_SEEN, pa.concat_tables(self.kept))
            query = f'SELECT * FROM "{_NEW}" EXCEPT SELECT * FROM "{_SEEN}"'
        new = _run(self.child, query, self.sql).cast(rows.schema)
        self.kept.append(new)
        return new


_NAN = object()  # NaN in a row tuple: equal to itself there, as UNION has it


def _comparable(column: pa.ChunkedArray) -> list:
    """The column's values as Python values equal where UNION has them equal."""
    values = column.to_pylist()
    if pa.types.is_floating(column.type) or pa.types.is_nested(column.type):
        values = [_plain(value) for value in values]
    return values


def _plain(value):
    if isinstance(value, float) and value != value:
        return _NAN
    if isinstance(value, (list, tuple)):
        return tuple(_plain(item) for item in value)
    if isinstance(value, dict):
        return tuple((key, _plain(item)) for key, item in value.items())
    return value


def _has_interval(arrow_type: pa.DataType) -> bool:
    if pa.types.is_interval(arrow_type) or pa.types.is_duration(arrow_type):
        return True
    return any(_has_interval(arrow_type.field(i).type) for i in range(arrow_type.num_fields))


def _run(child, query, sql: str) -> pa.Table:
    text = query if isinstance(query, str) else query.sql(dialect="duckdb")
    try:
        return child.sql(text).arrow()
    except SqlError as err:  # its own text underlined means nothing in the user's SQL
        raise SqlError(err.plain_message, sql) from None
