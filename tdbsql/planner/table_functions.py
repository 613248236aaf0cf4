"""Table functions in FROM: ``range(stop)``, ``range(start, stop[, step])`` and
``generate_series(...)`` (its stop included), and ``unnest(list)``, as DuckDB has them.

sqlglot's DuckDB dialect reads a series in FROM as a ``Table`` over a ``GenerateSeries``
node.  In: the parsed tree.  Out: the tree with each one replaced by a table ``__series_N``
of one column, named as DuckDB names it -- the alias's column (``range(5) r(i)``), else the
table alias (``range(5) t`` has a column ``t``), else the function's name -- plus a
``Series`` per table for the schema the optimizer sees and for the runner, which builds its
rows from the arguments (``engine/series.py``).  Integers give BIGINT; a DATE, TIMESTAMP or
TIMESTAMPTZ start with an INTERVAL step gives TIMESTAMP (TIMESTAMPTZ), as in DuckDB.
Arguments are constant expressions; anything else is an ``SqlError`` in DuckDB's words.

``unnest(list)`` in FROM becomes the derived table ``(SELECT unnest(list) AS c) AS t``, named
the same way, so the SELECT-list unnest (``engine/unnest.py``) makes its rows; WITH
ORDINALITY reads the list from a one-row derived table of its own, computed once: ``(SELECT
unnest(l) AS c, unnest(generate_series(1, len(l))) AS ordinality FROM (SELECT list AS l))``
(``unnest_select``, which a lateral unnest's folding shares).  Its list is a constant
expression (a scalar subquery too); one reading the source before it (a lateral unnest) is
folded into that source first when it can be (``planner.lateral_unnest``), and is
``UnsupportedSql`` otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp
from sqlglot.optimizer.annotate_types import annotate_types

from ..errors import SqlError, UnsupportedSql
from .parse import span_of
from .unnest_select import subqueries_in_unnest

_LIST, _LIST_TABLE = "__list", "__unnest_list"  # a list read twice, computed once


@dataclass(frozen=True)
class Series:
    table: str  # the stand-in table name
    column: str
    function: str  # range | generate_series
    arguments: tuple  # start, stop, step (None where not given)
    inclusive: bool  # generate_series: the stop is a row too
    sql_type: str  # BIGINT | TIMESTAMP | TIMESTAMPTZ


def table_functions(tree: exp.Expression, sql: str) -> tuple[exp.Expression, tuple]:
    """(tree, series): every range / generate_series / unnest in FROM replaced (in place)."""
    for node in list(tree.find_all(exp.Unnest)):
        if isinstance(node.parent, (exp.From, exp.Join)):
            node.replace(_unnest_table(node, sql))
    found = []
    for table in list(tree.find_all(exp.Table)):
        call = table.this
        if not isinstance(call, exp.GenerateSeries):
            if isinstance(call, (exp.Anonymous, exp.Func)) and not isinstance(
                    call, exp.Identifier):
                name = call.sql_name() if isinstance(call, exp.Func) else call.name
                raise UnsupportedSql(f"table function {name.lower()}() is not supported "
                                     "(range and generate_series are)")
            continue
        found.append(_series(table, call, len(found), sql))
    return tree, tuple(found)


def _unnest_table(node: exp.Unnest, sql: str) -> exp.Subquery:
    """``unnest(list)`` in FROM as a derived table unnesting it in its select list."""
    if len(node.expressions) != 1:
        raise SqlError(f"unnest() in FROM takes one list, got {len(node.expressions)} "
                       "arguments", sql, span_of(node))
    values = node.expressions[0]
    if isinstance(values, exp.Null):
        raise SqlError("UNNEST requires a single list or array as input", sql, span_of(node))
    beside = _sources_beside(node)
    outer = [c for c in values.find_all(exp.Column)
             if c.find_ancestor(exp.Query) is node.find_ancestor(exp.Query) and
             (not c.table and beside or c.table.lower() in beside)]
    if outer:
        raise UnsupportedSql(f"unnest() in FROM reading a column ({outer[0].sql('duckdb')}) "
                             "is a lateral join, which is not supported; unnest in the select "
                             "list instead: SELECT unnest(l) FROM t")
    alias = node.args.get("alias")
    name = alias.this.copy() if alias is not None and alias.name else \
        exp.to_identifier("unnest")
    select = unnest_select(values, unnest_names(node))
    return exp.Subquery(this=subqueries_in_unnest(select), alias=exp.TableAlias(this=name))


def _sources_beside(node: exp.Unnest) -> set[str]:
    """The names of the other sources of the SELECT whose FROM holds ``node``: a column of
    one of them makes the unnest a lateral join; of none (``FROM unnest(t.l)`` in a subquery
    reading ``t`` further out), a correlated derived table, run as a correlated subquery."""
    select = node.find_ancestor(exp.Select)
    if select is None:
        return set()
    sources = [select.args["from_"].this] if select.args.get("from_") else []
    sources += [join.this for join in select.args.get("joins") or []]
    return {source.alias_or_name.lower() for source in sources if source is not node}


def unnest_names(node: exp.Expression) -> list[str]:
    """DuckDB's names for an unnest's columns (``node``: the Unnest, or the Lateral holding
    it): the alias's column list, else the alias, else ``unnest``; WITH ORDINALITY adds
    ``ordinality`` (or the name it is given)."""
    alias = node.args.get("alias")
    columns = [c.name for c in alias.columns] if alias is not None else []
    unnest = node.this if isinstance(node, exp.Lateral) else node
    first = columns[0] if columns else (alias.name if alias is not None and alias.name
                                        else "unnest")
    ordinality = unnest.args.get("offset")  # WITH ORDINALITY: sqlglot keeps its name here
    if not ordinality:
        return [first]
    return [first, ordinality.name if isinstance(ordinality, exp.Identifier) else "ordinality"]


def unnest_select(values: exp.Expression, names: list[str], source: exp.Expression | None = None,
                  columns: list[str] = (), keep_empty: bool = False) -> exp.Select:
    """``SELECT columns, unnest(values) AS names[0]`` (``FROM source``, as its alias), with a
    second name the positions (1, 2, ...) beside the elements, with ``keep_empty`` one row of
    NULLs for a NULL or empty list (a LEFT JOIN's).  Then the list is read more than once,
    so it is computed once first, in a derived table ``(SELECT source.*, values AS __list
    FROM source)``."""
    alias = source.alias_or_name if source is not None else _LIST_TABLE
    kept = [exp.column(column, quoted=True) for column in columns]
    if len(names) == 1 and not keep_empty:
        select = exp.select(*kept, _unnest(values, names[0]))
        return select if source is None else select.from_(source)
    # exp.Alias itself: alias_ would name a subquery as a derived table
    listed = exp.Alias(this=values.copy(), alias=exp.to_identifier(_LIST, quoted=True))
    inner = exp.select(listed) if source is None else exp.select(exp.Star(), listed).from_(source)
    values = exp.column(_LIST, alias, quoted=True)
    positions = exp.GenerateSeries(start=exp.Literal.number(1), end=exp.ArraySize(this=values))
    filled = exp.GT(this=exp.ArraySize(this=values.copy()), expression=exp.Literal.number(0)) \
        if keep_empty else None
    items = [_unnest(values, names[0], filled)]
    if len(names) > 1:
        items.append(_unnest(positions, names[1], filled))
    return exp.select(*kept, *items).from_(exp.Subquery(
        this=inner, alias=exp.TableAlias(this=exp.to_identifier(alias, quoted=True))))


def _unnest(values: exp.Expression, name: str, filled: exp.Expression | None = None):
    """``unnest(values) AS name``; with ``filled`` (``len(list) > 0``) a row where it does
    not hold unnests ``[NULL]``: ``unnest(CASE WHEN filled THEN values ELSE [NULL] END)``."""
    if filled is not None:
        values = exp.Case(ifs=[exp.If(this=filled.copy(), true=values.copy())],
                          default=exp.Array(expressions=[exp.Null()]))
    return exp.alias_(exp.Explode(this=values.copy()), name, quoted=True)


def _series(table: exp.Table, call: exp.GenerateSeries, index: int, sql: str) -> Series:
    inclusive = not call.args.get("is_end_exclusive")
    function = "generate_series" if inclusive else "range"
    arguments = tuple(call.args.get(k) for k in ("start", "end", "step"))
    sql_type = _series_type(function, arguments, sql, span_of(call))
    alias = table.args.get("alias")
    columns = alias.columns if alias is not None else []
    name = alias.name if alias is not None and alias.name else function
    column = columns[0].name if columns else name
    stand_in = f"__series_{index}"
    table.set("this", exp.to_identifier(stand_in, quoted=True))
    table.set("alias", exp.TableAlias(this=exp.to_identifier(name)))
    return Series(stand_in, column, function, tuple(a.copy() if a is not None else None
                                                    for a in arguments), inclusive, sql_type)


def _series_type(function: str, arguments: tuple, sql: str, span) -> str:
    """BIGINT, TIMESTAMP or TIMESTAMPTZ from the arguments' types, or DuckDB's binder
    error naming them."""
    types = [_type(a) for a in arguments if a is not None]
    start, step = types[0], (types[2] if len(types) > 2 else None)
    if len(types) == 3 and step == "INTERVAL" and start in _TEMPORAL_NAMES and \
            types[1] in _TEMPORAL_NAMES:
        with_zone = "TIMESTAMP WITH TIME ZONE" in (start, types[1])
        return "TIMESTAMPTZ" if with_zone else "TIMESTAMP"
    if all(t in _INTEGER_NAMES for t in types):
        return "BIGINT"
    shown = ", ".join(types)
    raise SqlError(f"No function matches the given name and argument types "
                   f"'{function}({shown})'. You might need to add explicit type casts.", sql,
                   span)


_INTEGER_NAMES = {"INTEGER_LITERAL", "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT",
                  "USMALLINT", "UINTEGER", "VARCHAR", "NULL"}
_TEMPORAL_NAMES = {"DATE", "TIMESTAMP", "TIMESTAMP WITH TIME ZONE", "TIMESTAMP_S",
                   "TIMESTAMP_MS", "TIMESTAMP_NS", "NULL"}
_NAMES = {exp.DType.TINYINT: "TINYINT", exp.DType.SMALLINT: "SMALLINT",
          exp.DType.INT: "INTEGER", exp.DType.BIGINT: "BIGINT", exp.DType.UTINYINT: "UTINYINT",
          exp.DType.USMALLINT: "USMALLINT", exp.DType.UINT: "UINTEGER",
          exp.DType.UBIGINT: "UBIGINT", exp.DType.INT128: "HUGEINT",
          exp.DType.DOUBLE: "DOUBLE", exp.DType.FLOAT: "FLOAT", exp.DType.DECIMAL: "DECIMAL",
          exp.DType.VARCHAR: "VARCHAR", exp.DType.TEXT: "VARCHAR", exp.DType.DATE: "DATE",
          exp.DType.TIMESTAMP: "TIMESTAMP", exp.DType.DATETIME: "TIMESTAMP",
          exp.DType.TIMESTAMPNTZ: "TIMESTAMP",
          exp.DType.TIMESTAMPTZ: "TIMESTAMP WITH TIME ZONE", exp.DType.INTERVAL: "INTERVAL",
          exp.DType.BOOLEAN: "BOOLEAN", exp.DType.NULL: "NULL",
          exp.DType.TIMESTAMP_S: "TIMESTAMP_S", exp.DType.TIMESTAMP_MS: "TIMESTAMP_MS",
          exp.DType.TIMESTAMP_NS: "TIMESTAMP_NS"}


def _type(argument: exp.Expression) -> str:
    """The DuckDB name of a constant argument's type (an integer literal is
    ``INTEGER_LITERAL``, as DuckDB's binder prints it)."""
    if argument.find(exp.Column, exp.Query) is not None:
        raise UnsupportedSql(f"a table function argument reading a column or a subquery is "
                             f"not supported: {argument.sql(dialect='duckdb')!r}")
    node = argument.unnest()
    if isinstance(node, exp.Neg):
        node = node.this
    if isinstance(node, exp.Literal) and not node.is_string:
        return "INTEGER_LITERAL" if node.is_int else "DECIMAL"
    if isinstance(node, exp.Interval):
        return "INTERVAL"
    if isinstance(node, exp.Null):
        return "NULL"
    typed = annotate_types(argument.copy())
    kind = typed.type.this if typed.type is not None else None
    return _NAMES.get(kind, kind.value if kind is not None else "UNKNOWN")
