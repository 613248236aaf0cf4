"""WITH RECURSIVE: each recursive CTE run to its fixpoint, then read as a table.

A recursive CTE is ``name [(columns)] [USING KEY (k, ...)] AS (anchor UNION [ALL] step)``
where ``step`` reads ``name``.  As in DuckDB, the anchor runs once; then ``step`` runs again
and again over the rows the last round added (the working table), until a round adds none.
UNION ALL keeps every row; UNION keeps a row only if no earlier round (nor the same one) gave
it, so a walk over a graph with cycles ends; USING KEY keeps a row per key
(``recursion_tables``).  The step may read the rows kept so far as ``recurring.name``.  The
columns take the anchor's types (a step's ``n + 0.5`` over an INTEGER ``n`` is cast back to
INTEGER, as DuckDB does) and names (or the CTE's column list).

Each run is an ordinary query of the engine over a connection of its own: the caller's tables,
the CTEs around and before this one (one of the CTE's own name is hidden by it), and the
working table under the CTE's name (and the rows kept, where it reads them) for the step's
run only.  The finished rows are then registered under a name of their own, the references
the CTE answers (in its WITH's query: not a same-named table or CTE of another scope) read
them under the CTE's name, the CTE leaves the WITH, and the statement runs as a plain one.
A recursion that does not end is stopped with an error past ``MAX_ROUNDS`` rounds
(``TDBSQL_MAX_RECURSION``) or past the row cap (``TDBSQL_MAX_ROWS``), rather than running
forever as DuckDB does (DuckDB's ``LIMIT`` over an endless recursion stops it; here the
recursion needs a condition of its own).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from sqlglot import exp

from .engine.value_types import cast_value
from .errors import SqlError, UnsupportedSql
from .planner.table_refs import cte_of
from .recursion_tables import AllRows, DistinctRows, KeyedRows
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
        anchor, step, distinct = _parts(body, name)
        keys = [key.name for key in cte.args.get("key_expressions") or []]
        readable = [c for c in written if c.alias_or_name.lower() != name.lower()]  # shadowed
        rows = _fixpoint(child, name, _columns(cte), _prefixed(anchor, readable),
                         _prefixed(step, readable), distinct, keys, sql, max_rows)
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


def _fixpoint(child, name: str, columns, anchor, step, distinct: bool, keys: list[str],
              sql: str, max_rows: int) -> pa.Table:
    rows = _run(child, anchor, sql)
    if columns is not None:  # the first ones renamed, as DuckDB does (past them: ignored)
        rows = rows.rename_columns(columns[:rows.num_columns] + rows.column_names[len(columns):])
    if keys:
        kept = KeyedRows(rows.schema, keys, distinct, name, sql)
    elif distinct:
        kept = DistinctRows(rows.schema, lambda new, seen: _unseen(child, new, seen, sql))
    else:
        kept = AllRows()
    working = kept.add(rows)
    recurring = f"__tdbsql_recurring_{len(child.catalog.sources)}_{name}"
    step = _recurring(step, name, recurring)
    text = step.sql(dialect="duckdb")  # one text: one plan, kept from round to round
    union_read = recurring if any(t.name == recurring for t in step.find_all(exp.Table)) \
        else None
    max_rounds = env_number("TDBSQL_MAX_RECURSION", MAX_ROUNDS, minimum=1)
    shadowed = child.catalog.sources.get(name)  # a table of that name, hidden meanwhile
    try:
        _rounds(child, name, text, rows.schema, kept, working, union_read, sql, max_rows,
                max_rounds)
    finally:  # the working table was the step's alone
        child.catalog.sources.pop(name, None)
        child.catalog.sources.pop(recurring, None)
        if shadowed is not None:
            child.catalog.register(name, shadowed)
    return kept.table()


def _recurring(step: exp.Expression, name: str, hidden: str) -> exp.Expression:
    """``step`` with its references to ``recurring.name`` (the rows kept so far) reading the
    table ``hidden`` (in place)."""
    for table in list(step.find_all(exp.Table)):
        if table.db.lower() == "recurring" and not table.catalog and \
                table.name.lower() == name.lower():
            alias = table.alias or table.name
            table.replace(exp.Table(this=exp.to_identifier(hidden, quoted=True),
                                    alias=exp.TableAlias(this=exp.to_identifier(alias))))
    return step


def _rounds(child, name: str, step: str, schema: pa.Schema, kept, rows: pa.Table,
            union_read: str | None, sql: str, max_rows: int, max_rounds: int) -> None:
    """The step run over the working table ``rows``, its rows put into ``kept``, which gives
    the next round's, until there are none.  ``union_read``: the name the step reads the rows
    kept so far under (``recurring.name``), or None."""
    rounds = 0
    while rows.num_rows:
        rounds += 1
        if rounds > max_rounds:
            raise SqlError(f"recursive CTE {name!r} still adds rows after {max_rounds:,} "
                           "rounds (set TDBSQL_MAX_RECURSION to allow more, or give its "
                           "step a condition that ends it)", sql)
        child.register_arrow(name, rows)
        if union_read is not None:
            child.register_arrow(union_read, kept.table())
        rows = kept.add(_typed(_run(child, step, sql), schema, name, sql))
        if kept.total > max_rows:
            raise SqlError(f"recursive CTE {name!r} would hold more than {max_rows:,} rows, "
                           "the row cap (set TDBSQL_MAX_ROWS to raise it, or give its step a "
                           "condition that ends it)", sql)


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


def _unseen(child, rows: pa.Table, seen: pa.Table | None, sql: str) -> pa.Table:
    """The distinct ``rows`` that ``seen`` does not hold (NULLs equal, as UNION has them), by
    the engine's EXCEPT."""
    child.register_arrow(_NEW, rows)
    query = f'SELECT DISTINCT * FROM "{_NEW}"'
    if seen is not None:
        child.register_arrow(_SEEN, seen)
        query = f'SELECT * FROM "{_NEW}" EXCEPT SELECT * FROM "{_SEEN}"'
    return _run(child, query, sql).cast(rows.schema)


def _run(child, query, sql: str) -> pa.Table:
    text = query if isinstance(query, str) else query.sql(dialect="duckdb")
    try:
        return child.sql(text).arrow()
    except SqlError as err:  # its own text underlined means nothing in the user's SQL
        raise SqlError(err.plain_message, sql) from None
