"""A correlated subquery run once for every outer row at once (Neumann and Kemper, "Unnesting
Arbitrary Queries", as DuckDB does it).

In: a subquery that reads outer values as ``__outer.c0``, ``__outer.c1``, ... (see
``planner.correlated``).  Out: a query over the same inputs joined with the table ``__outer``
of the distinct outer values (``__k`` numbers its rows) whose rows are, for each ``__outer``
row, the subquery's rows for those values, each with that row's ``__k`` in front.  The
correlated predicates become join conditions (equi-keys where they are equalities); the
outer values are pushed through every operator that needs them:

- a FROM list joins ``__outer`` first; a correlated derived table is rewritten the same way
  and joined on ``__k``;
- GROUP BY, DISTINCT and window PARTITION BY get ``__k`` (and the ``c`` columns read after
  grouping) as a key; LIMIT / OFFSET become ``row_number() OVER (PARTITION BY __k ORDER BY
  ...)`` in QUALIFY; an ORDER BY without LIMIT is dropped (a subquery's rows have no order);
- an aggregate without GROUP BY has one row even for outer values no inner row matches: its
  aggregates are grouped by ``__k`` in a derived table that ``__outer`` LEFT JOINs, a
  missing ``count`` being 0 and every other aggregate NULL, as DuckDB has them over no rows
  (the "count bug");
- a set operation pushes ``__outer`` into each side.
"""

from __future__ import annotations

from sqlglot import exp

from ..errors import UnsupportedSql
from .correlated import KEY, OUTER
from .limit_percent import is_percent
from .grouped_columns import AGGREGATE_WRAPPERS, is_grouped, is_window_function
from .table_refs import inside

_GROUPED = "__g"  # the derived table of an ungrouped aggregate's per-key aggregates
# aggregates whose value over no rows is 0, not NULL (DuckDB's approx_count_distinct too)
_ZERO_WHEN_EMPTY = (exp.Count, exp.ApproxDistinct)


def dependent_query(query: exp.Expression) -> exp.Expression:
    """``query`` (a copy) for every row of ``__outer``, ``__k`` its first column."""
    query = query.copy()
    with_ = query.args.get("with_")
    if with_ is not None and _reads_outer(with_):
        raise UnsupportedSql(f"a CTE reading an outer query's column in a correlated "
                             f"subquery is not supported: {_text(query)!r}")
    if isinstance(query, exp.SetOperation):
        return _set_operation(query)
    if isinstance(query, exp.Select):
        return _select(query)
    raise UnsupportedSql(f"correlated subquery {_text(query)!r} is not supported")


def _set_operation(query: exp.SetOperation) -> exp.Expression:
    order, limit, offset = (query.args.get(k) for k in ("order", "limit", "offset"))
    for key in ("order", "limit", "offset"):
        query.set(key, None)
    for side in ("this", "expression"):
        operand = query.args[side]
        inner = operand.this if isinstance(operand, exp.Subquery) else operand
        rewritten = dependent_query(inner)
        query.set(side, exp.paren(rewritten, copy=False) if isinstance(operand, exp.Subquery)
                  else rewritten)
    if limit is None and offset is None:
        return query
    return _limited_outputs(query, order, limit, offset, {})


def _limited_outputs(query: exp.Expression, order, limit, offset, items: dict
                     ) -> exp.Expression:
    """``query`` (``__k`` first) as a derived table whose rows are numbered per ``__k`` in
    ``order`` -- terms naming its outputs by name, or equal to one of ``items`` (output
    name -> expression) -- and cut to LIMIT / OFFSET."""
    wrapper = exp.Select(expressions=[exp.Star()]).from_(
        exp.Subquery(this=query, alias=exp.TableAlias(this=exp.to_identifier("__l", quoted=True))),
        copy=False)
    terms = []
    for ordered in (order.expressions if order is not None else []):
        key = ordered.this
        name = key.name if isinstance(key, exp.Column) and not key.table else next(
            (alias for alias, item in items.items() if item == key), None)
        if name is None:
            raise UnsupportedSql(f"ORDER BY {key.sql(dialect='duckdb')!r}, not an output, "
                                 "beside DISTINCT, a window function or a set operation in a "
                                 "correlated subquery is not supported")
        term = ordered.copy()
        term.set("this", exp.column(name, "__l", quoted=True))
        terms.append(term)
    wrapper.set("order", exp.Order(expressions=terms) if terms else None)
    wrapper.set("limit", limit)
    wrapper.set("offset", offset)
    _limit_as_qualify(wrapper, exp.column(KEY, "__l", quoted=True))
    return wrapper


def _select(select: exp.Select) -> exp.Expression:
    if select.args.get("distinct") is not None and select.args["distinct"].args.get("on"):
        raise UnsupportedSql(f"DISTINCT ON in a correlated subquery is not supported: "
                             f"{_text(select)!r}")
    _join_outer(select)
    if is_grouped(select) and select.args.get("group") is None:
        return _ungrouped_aggregate(select)
    if select.args.get("group") is not None:
        group = select.args["group"]
        if any(group.args.get(k) for k in ("grouping_sets", "cube", "rollup")):
            raise UnsupportedSql(f"grouping sets in a correlated subquery are not supported: "
                                 f"{_text(select)!r}")
        group.set("expressions", [_key()] + _outer_values(select) + list(group.expressions))
    _partition_windows(select)
    if (select.args.get("distinct") is not None or _orders_by_window(select)) and \
            (select.args.get("limit") or select.args.get("offset")):
        # numbered in a query around it: a window (DISTINCT) numbered inside would be wrong
        order, limit, offset = (select.args.get(k) for k in ("order", "limit", "offset"))
        for key in ("order", "limit", "offset"):
            select.set(key, None)
        items = {e.alias: e.unalias() for e in select.expressions if isinstance(e, exp.Alias)}
        select.set("expressions", [exp.alias_(_key(), KEY, quoted=True)] +
                   list(select.expressions))
        return _limited_outputs(select, order, limit, offset, items)
    _limit_as_qualify(select)
    select.set("expressions", [exp.alias_(_key(), KEY, quoted=True)] + list(select.expressions))
    return select


def _orders_by_window(select: exp.Select) -> bool:
    """Whether ``select``'s ORDER BY reads a window function, itself or by its alias."""
    order = select.args.get("order")
    windows = {e.alias for e in select.expressions
               if isinstance(e, exp.Alias) and e.find(exp.Window) is not None}
    return order is not None and any(
        o.this.find(exp.Window) is not None or
        (isinstance(o.this, exp.Column) and not o.this.table and o.this.name in windows)
        for o in order.expressions)


def _join_outer(select: exp.Select) -> None:
    """``__outer`` joined first into the FROM list; each correlated derived table rewritten
    and joined to it on ``__k`` (in place)."""
    joins = list(select.args.get("joins") or [])
    outer_table = _outer_table()
    from_ = select.args.get("from_")
    if from_ is None:
        select.set("from_", exp.From(this=outer_table))
        return
    sides = {(j.side or "").upper() for j in joins}
    if sides & {"RIGHT", "FULL"}:
        if any(_reads_outer(j) for j in joins) or _reads_outer(from_):
            raise UnsupportedSql(f"a RIGHT / FULL JOIN beside a correlated derived table or "
                                 f"ON condition is not supported: {_text(select)!r}")
        select.set("joins", joins + [exp.Join(this=outer_table, kind="CROSS")])
        return
    first = from_.this
    select.set("from_", exp.From(this=outer_table))
    select.set("joins", [exp.Join(this=first, kind="CROSS")] + joins)
    for holder in [select.args["joins"][0]] + joins:
        source = holder.this
        if isinstance(source, exp.Subquery) and _reads_outer(source):
            alias = source.alias_or_name
            source.set("this", dependent_query(source.this))
            columns = source.args.get("alias").columns if source.args.get("alias") else []
            if columns:
                columns.insert(0, exp.to_identifier(KEY, quoted=True))
            same = exp.EQ(this=exp.column(KEY, alias, quoted=True), expression=_key())
            if holder.kind == "CROSS":
                holder.set("kind", None)
            holder.set("on", same if holder.args.get("on") is None
                       else exp.and_(holder.args["on"], same))


def _ungrouped_aggregate(select: exp.Select) -> exp.Expression:
    """An aggregate without GROUP BY: one row for every ``__outer`` row, matched or not (a
    window over its aggregates sees that row alone: partitioned by ``__k``)."""
    if select.args.get("qualify") is not None:
        raise UnsupportedSql(f"QUALIFY in an aggregating correlated subquery is not "
                             f"supported: {_text(select)!r}")
    calls = []  # the aggregate calls (with their FILTER ...) read after grouping
    for part in _after(select):
        for agg in list(part.find_all(exp.AggFunc)):
            if agg.find_ancestor(exp.Select) is not select or is_window_function(agg) or \
                    any(inside(agg, c) for c in calls):
                continue
            while isinstance(agg.parent, AGGREGATE_WRAPPERS):
                agg = agg.parent
            calls.append(agg)
    grouped = exp.Select(expressions=[exp.alias_(_key(), KEY, quoted=True)] + [
        exp.alias_(call.copy(), f"__a{i}", quoted=True) for i, call in enumerate(calls)])
    for arg in ("from_", "joins", "where"):
        if select.args.get(arg) is not None:
            grouped.set(arg, select.args[arg].copy())
    grouped.set("group", exp.Group(expressions=[_key()]))
    for i, call in enumerate(calls):
        value = exp.column(f"__a{i}", _GROUPED, quoted=True)
        inner = call.this if isinstance(call, AGGREGATE_WRAPPERS) else call
        while isinstance(inner, AGGREGATE_WRAPPERS):
            inner = inner.this
        if isinstance(inner, _ZERO_WHEN_EMPTY):
            value = exp.func("coalesce", value, exp.Literal.number(0))
        call.replace(value)
    result = exp.Select(expressions=list(select.expressions))
    result.set("from_", exp.From(this=_outer_table()))
    result.set("joins", [exp.Join(
        this=exp.Subquery(this=grouped, alias=exp.TableAlias(
            this=exp.to_identifier(_GROUPED, quoted=True))),
        side="LEFT", on=exp.EQ(this=exp.column(KEY, _GROUPED, quoted=True), expression=_key()))])
    having = select.args.get("having")
    if having is not None:
        result.set("where", exp.Where(this=having.this))
    for arg in ("distinct", "order", "limit", "offset"):
        if select.args.get(arg) is not None:
            result.set(arg, select.args[arg])
    _partition_windows(result)
    _limit_as_qualify(result)
    result.set("expressions", [exp.alias_(_key(), KEY, quoted=True)] + list(result.expressions))
    return result


def _partition_windows(select: exp.Select) -> None:
    """Every window call of ``select`` partitioned by ``__k`` too (in place)."""
    for part in _after(select):
        for window in part.find_all(exp.Window):
            if window.find_ancestor(exp.Select) is select:
                window.set("partition_by", [_key()] + list(window.args.get("partition_by") or []))


def _limit_as_qualify(select: exp.Select, key: exp.Expression | None = None) -> None:
    """LIMIT / OFFSET per ``__outer`` row (``key``: its ``__k``): a row_number in QUALIFY
    (in place); ORDER BY without them is dropped."""
    limit, offset = select.args.get("limit"), select.args.get("offset")
    order = select.args.get("order")
    select.set("order", None)
    if limit is None and offset is None:
        return
    if is_percent(limit):
        raise UnsupportedSql(f"LIMIT with a percentage in a correlated subquery is not "
                             f"supported: {_text(select)!r}")
    if select.args.get("qualify") is not None or select.args.get("distinct") is not None:
        raise UnsupportedSql(f"LIMIT beside DISTINCT or QUALIFY in a correlated subquery is "
                             f"not supported: {_text(select)!r}")
    aliases = {e.alias: e.unalias() for e in select.expressions if isinstance(e, exp.Alias)}
    terms = []
    for ordered in (order.expressions if order is not None else []):
        term = ordered.copy()
        by = term.this
        if isinstance(by, exp.Column) and not by.table and by.name in aliases:
            term.set("this", aliases[by.name].copy())
        terms.append(term)
    number = exp.Window(this=exp.RowNumber(), partition_by=[key or _key()],
                        order=exp.Order(expressions=terms) if terms else None)
    skip = int(offset.expression.name) if offset is not None else 0
    condition = exp.GT(this=number.copy(), expression=exp.Literal.number(skip))
    if limit is not None:
        count = int(limit.expression.name)
        upto = exp.LTE(this=number, expression=exp.Literal.number(skip + count))
        condition = upto if not skip else exp.and_(condition, upto)
    select.set("limit", None)
    select.set("offset", None)
    select.set("qualify", exp.Qualify(this=condition))


def _after(select: exp.Select) -> list[exp.Expression]:
    parts = list(select.expressions)
    for key in ("having", "qualify"):
        if select.args.get(key) is not None:
            parts.append(select.args[key].this)
    if select.args.get("order") is not None:
        parts += [o.this for o in select.args["order"].expressions]
    return parts


def _outer_values(select: exp.Select) -> list[exp.Column]:
    """The ``__outer`` columns ``select`` reads (grouped beside ``__k``: read after
    grouping they must be keys)."""
    names = sorted({c.name for c in select.find_all(exp.Column)
                    if c.table == OUTER and c.name != KEY})
    return [exp.column(name, OUTER, quoted=True) for name in names]


def _outer_table() -> exp.Table:
    return exp.Table(this=exp.to_identifier(OUTER, quoted=True),
                     alias=exp.TableAlias(this=exp.to_identifier(OUTER, quoted=True)))


def _key() -> exp.Column:
    return exp.column(KEY, OUTER, quoted=True)


def _reads_outer(node: exp.Expression) -> bool:
    return any(c.table == OUTER for c in node.find_all(exp.Column))


def _text(node: exp.Expression) -> str:
    return node.sql(dialect="duckdb")
