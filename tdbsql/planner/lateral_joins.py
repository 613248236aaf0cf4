"""LATERAL subqueries in FROM (``FROM t o, LATERAL (SELECT ... WHERE i.k = o.k) l``), run as
DuckDB runs them: once for the distinct outer values, not once per row.

In: a tree some of whose SELECTs (the outermost, a subquery, a set operation's branch, a
CTE, a LATERAL subquery) join ``LATERAL (subquery)`` sources (comma, ``[INNER | CROSS] JOIN
LATERAL``, ``LEFT JOIN LATERAL ... ON``), before the optimizer.  Out: the tree with ``*``
expanded (sqlglot's ``qualify``, so the lateral's helper columns stay out of it) and each
lateral source replaced by a plain derived table, the innermost SELECTs' first (a LATERAL
inside another's subquery is rewritten before that one is decorrelated):

- a CTE ``__lateralN`` (of the SELECT holding the LATERAL) holds the distinct values (NULL a
  value like any other) of the outer columns the subquery reads, read from the sources before
  it, numbered by ``__k`` -- the ``__outer`` table of ``planner.decorrelate``;
- the subquery, reading those values as ``__outer.c0, __outer.c1, ...``, is decorrelated by
  ``decorrelate.dependent_query`` (an aggregate without GROUP BY keeps its row for values no
  inner row matches, LIMIT is per value, ...), its ``__outer`` renamed ``__lateralN``, and
  joined to ``__lateralN`` on ``__k``, which gives each of its rows the values it was run for
  (``__lc0``, ...);
- the join matches each outer row to its values with ``IS NOT DISTINCT FROM`` -- for an
  integer, string, boolean, date or timestamp written as hash-join keys, ``(x IS NULL) =
  (v IS NULL) AND coalesce(x, c) = coalesce(v, c)`` -- beside the ON condition written (a
  LEFT JOIN keeps the rows without any);
- a float value (a list of them) is distinct by its sign bits too (``signbit(x)``, in
  ``__lateralN`` and in the match): -0.0 equals 0.0, yet ``1 / x`` of each differs, and
  DuckDB runs a LATERAL without FROM per row.

A LATERAL subquery reading columns of a query further out than the sources before it in its
own SELECT, or first in its FROM, is ``UnsupportedSql``.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.qualify import qualify
from sqlglot.schema import MappingSchema

from ..errors import SqlError, UnsupportedSql
from .binder_checks import call_span
from .conjuncts import conjuncts
from .correlated import KEY, OUTER, outer_columns
from .decorrelate import dependent_query

_ROWS = "__dq"  # the decorrelated subquery's rows beside their outer values
_DIALECT = "duckdb, normalization_strategy = case_sensitive"


def lateral_subqueries(tree: exp.Expression, schema: dict, sql: str) -> exp.Expression:
    if not _owners(tree):
        return tree
    # case-sensitive, as the optimizer reads names: DuckDB's strategy would lower the quoted
    # names of the subquery's columns (``max(x) OVER ()``) too
    tree = qualify(tree, schema=MappingSchema(schema, dialect=_DIALECT, normalize=False),
                   dialect=_DIALECT, quote_identifiers=False, validate_qualify_columns=False)
    number = 0
    for select in _owners(tree):
        positions = [index for index, join in enumerate(select.args.get("joins") or [])
                     if isinstance(join.this, exp.Lateral)]
        for index in positions:
            _rewrite(select, index, number, schema, sql)
            number += 1
    return tree


def _owners(tree: exp.Expression) -> list[exp.Select]:
    """The SELECTs whose FROM joins LATERAL subqueries, innermost first (a subquery's,
    a set operation's branch, a CTE's as much as the outermost one)."""
    owners: list[exp.Select] = []
    for node in tree.find_all(exp.Lateral):
        if not isinstance(node.this, exp.Subquery):
            continue
        join = node.parent
        owner = join.parent if isinstance(join, exp.Join) else None
        if not isinstance(owner, exp.Select):
            raise UnsupportedSql("LATERAL is supported as a joined source of a SELECT's FROM: "
                                 f"{node.sql(dialect='duckdb')!r}")
        if not any(owner is seen for seen in owners):
            owners.append(owner)
    return sorted(owners, key=lambda node: node.depth, reverse=True)


def _rewrite(select: exp.Select, index: int, number: int, schema: dict, sql: str) -> None:
    join = select.args["joins"][index]
    lateral = join.this
    query = lateral.this.this
    alias = lateral.alias_or_name
    before = [select.args["from_"].this] + [j.this for j in select.args["joins"][:index]]
    visible = {source.alias_or_name for source in before}
    outer = outer_columns(query)
    strange = [c for c in outer if c.table not in visible]
    if strange:
        raise UnsupportedSql(f"LATERAL subquery reading {strange[0].sql(dialect='duckdb')!r}, "
                             "not a source before it, is not supported")
    if join.side and join.side.upper() != "LEFT":
        raise UnsupportedSql(f"{join.side.upper()} JOIN LATERAL is not supported")
    _refuse_outer_aggregates(query, outer, sql)
    _rename_outputs(query, lateral.args.get("alias"))
    table = f"__lateral{number}"
    kinds = _outer_types(select, index, outer, schema)
    signs = {i: key for i, (column, kind) in enumerate(zip(outer, kinds))
             if (key := _sign_key(column.copy(), kind)) is not None}
    _add_cte(select, table, _outer_values(select, index, outer, signs))
    select.args["joins"][index].set("this", exp.Subquery(
        this=_with_outer_values(_dependent(query, outer, table), table, len(outer), signs,
                                query),
        alias=exp.TableAlias(this=exp.to_identifier(alias))))
    match = [_same(column.copy(), exp.column(f"__lc{i}", alias, quoted=True), _sentinel(kind))
             for i, (column, kind) in enumerate(zip(outer, kinds))]
    match += [exp.NullSafeEQ(this=key.copy(),
                             expression=exp.column(f"__ls{i}", alias, quoted=True))
              for i, key in signs.items()]
    on = join.args.get("on")
    conditions = match + conjuncts(on)
    join.set("kind", None if join.kind and join.kind.upper() == "CROSS" else join.kind)
    join.set("on", exp.and_(*conditions) if conditions else exp.true())


def _outer_types(select: exp.Select, index: int, outer: list, schema: dict
                 ) -> list[exp.DataType | None]:
    """The types of the outer columns the lateral reads (None: not known here)."""
    values = exp.Select(expressions=[c.copy() for c in outer])
    values.set("from_", select.args["from_"].copy())
    values.set("joins", [j.copy() for j in select.args["joins"][:index]])
    typed = annotate_types(values, schema=MappingSchema(schema, dialect="duckdb",
                                                        normalize=False))
    return [item.type for item in typed.selects]


def _refuse_outer_aggregates(query: exp.Expression, outer: list[exp.Column], sql: str
                             ) -> None:
    """DuckDB's binder error for an aggregate (not a window) that reads outer columns only
    (its FILTER and ORDER BY too): it is the outer query's aggregate, in a LATERAL."""
    keys = {(c.table, c.name) for c in outer}
    for aggregate in query.find_all(exp.AggFunc):
        call = aggregate.parent if isinstance(aggregate.parent, exp.Filter) else aggregate
        if isinstance(call.parent, exp.Window):
            continue
        columns = [(c.table, c.name) for c in call.find_all(exp.Column)]
        if columns and all(key in keys for key in columns):
            raise SqlError("LATERAL join cannot contain aggregates!", sql, call_span(call, sql))


def _sign_key(value: exp.Expression, kind: exp.DataType | None) -> exp.Expression | None:
    """The sign bits of a FLOAT / DOUBLE value (of a list of them, of a list of lists...), or
    None for a type without floats: -0.0 equals 0.0, so the lateral is run for each sign as
    DuckDB's runs it per row (``1 / x`` is -inf for -0.0, inf for 0.0)."""
    if kind is None:
        return None
    if kind.is_type(exp.DataType.Type.FLOAT, exp.DataType.Type.DOUBLE):
        return exp.Anonymous(this="signbit", expressions=[value])
    if kind.is_type(exp.DataType.Type.ARRAY, exp.DataType.Type.LIST) and kind.expressions:
        element = exp.to_identifier("__v")
        inner = _sign_key(element.copy(), kind.expressions[0])
        if inner is not None:
            return exp.Transform(this=value, expression=exp.Lambda(this=inner,
                                                                   expressions=[element]))
    return None


def _sentinel(kind: exp.DataType | None) -> exp.Expression | None:
    """A constant of the outer value's type that stands for NULL in a hashed join key, or
    None (a float, whose NaN a key would have to match as ``IS NOT DISTINCT FROM`` does, or
    a type not known here)."""
    if kind is None:
        return None
    if kind.is_type(*exp.DataType.INTEGER_TYPES):
        return exp.Literal.number(0)
    if kind.is_type(*exp.DataType.TEXT_TYPES):
        return exp.Literal.string("")
    if kind.is_type(exp.DataType.Type.BOOLEAN):
        return exp.false()
    if kind.is_type(exp.DataType.Type.DATE, exp.DataType.Type.TIMESTAMP):
        return exp.cast(exp.Literal.string("1970-01-01"), kind.copy())
    return None


def _same(column: exp.Expression, value: exp.Expression, sentinel) -> exp.Expression:
    """``column IS NOT DISTINCT FROM value``, written as two equalities a hash join keys on
    when there is a ``sentinel`` (``_sentinel``)."""
    if sentinel is None:
        return exp.NullSafeEQ(this=column, expression=value)
    nulls = exp.EQ(this=exp.paren(exp.Is(this=column.copy(), expression=exp.Null())),
                   expression=exp.paren(exp.Is(this=value.copy(), expression=exp.Null())))
    values = exp.EQ(this=exp.func("coalesce", column, sentinel.copy()),
                    expression=exp.func("coalesce", value, sentinel.copy()))
    return exp.and_(nulls, values)


def _rename_outputs(query: exp.Expression, alias: exp.TableAlias | None) -> None:
    """The alias's column list (``LATERAL (...) AS l(a, b)``) as the names of the subquery's
    first outputs (in place)."""
    names = alias.columns if alias is not None else []
    if not names:
        return
    if not isinstance(query, exp.Select) or len(names) > len(query.selects):
        raise UnsupportedSql(f"this column list on a LATERAL subquery is not supported: "
                             f"{alias.sql(dialect='duckdb')!r}")
    for item, name in zip(list(query.selects), names):
        item.replace(exp.alias_(item.unalias().copy(), name.name, quoted=True))
    alias.set("columns", None)


def _outer_values(select: exp.Select, index: int, outer: list, signs: dict) -> exp.Select:
    """``SELECT row_number() OVER () AS __k, * FROM (SELECT DISTINCT <outer columns>,
    <the sign keys of the float ones> FROM <the sources before the lateral>)``."""
    values = exp.Select(expressions=[exp.alias_(c.copy(), f"c{i}", quoted=True)
                                     for i, c in enumerate(outer)] or [exp.Literal.number(1)])
    for i, key in signs.items():
        values.append("expressions", exp.alias_(key.copy(), f"s{i}", quoted=True))
    values.set("distinct", exp.Distinct())
    values.set("from_", select.args["from_"].copy())
    values.set("joins", [j.copy() for j in select.args["joins"][:index]])
    numbered = exp.Select(expressions=[
        exp.alias_(exp.Window(this=exp.RowNumber()), KEY, quoted=True),
        exp.Star()])
    return numbered.from_(exp.Subquery(this=values, alias=exp.TableAlias(
        this=exp.to_identifier("__d"))), copy=False)


def _dependent(query: exp.Expression, outer: list, table: str) -> exp.Expression:
    names = {(c.table, c.name): f"c{i}" for i, c in enumerate(outer)}
    query = query.copy()
    for column in list(query.find_all(exp.Column)):
        name = names.get((column.table, column.name))
        if name is not None:
            column.replace(exp.column(name, OUTER, quoted=True))
    dependent = dependent_query(query)
    # the values' table under its own name: a LATERAL around this one decorrelates its
    # subquery, this one's rewrite inside, with an ``__outer`` of its own
    for source in dependent.find_all(exp.Table):
        if source.name == OUTER:
            source.set("this", exp.to_identifier(table, quoted=True))
            if source.alias == OUTER:
                source.set("alias", exp.TableAlias(this=exp.to_identifier(table, quoted=True)))
    for column in dependent.find_all(exp.Column):
        if column.table == OUTER:
            column.set("table", exp.to_identifier(table, quoted=True))
    return dependent


def _with_outer_values(dependent: exp.Expression, table: str, count: int, signs: dict,
                       query: exp.Expression) -> exp.Select:
    """The decorrelated rows with the outer values they were made for, as ``__lc0``, ...,
    and the float ones' signs, as ``__ls0``, ..."""
    values = exp.Table(this=exp.to_identifier(table, quoted=True),
                       alias=exp.TableAlias(this=exp.to_identifier("__lo")))
    outputs = [exp.alias_(exp.column(f"c{i}", "__lo", quoted=True), f"__lc{i}", quoted=True)
               for i in range(count)]
    outputs += [exp.alias_(exp.column(f"s{i}", "__lo", quoted=True), f"__ls{i}", quoted=True)
                for i in signs]
    outputs += [exp.column(name, _ROWS, quoted=True) for name in query.named_selects]
    return exp.Select(expressions=outputs).from_(values, copy=False).join(
        exp.Subquery(this=dependent, alias=exp.TableAlias(this=exp.to_identifier(_ROWS))),
        on=exp.EQ(this=exp.column(KEY, _ROWS, quoted=True),
                  expression=exp.column(KEY, "__lo", quoted=True)), copy=False)


def _add_cte(select: exp.Select, name: str, query: exp.Select) -> None:
    cte = exp.CTE(this=query, alias=exp.TableAlias(this=exp.to_identifier(name, quoted=True)))
    with_ = select.args.get("with_")
    if with_ is None:
        select.set("with_", exp.With(expressions=[cte]))
    else:
        with_.append("expressions", cte)
