"""PIVOT -> a grouped SELECT of filtered aggregates, as DuckDB names and fills its columns.

Both of DuckDB's spellings::

    SELECT * FROM t PIVOT (sum(x) [AS s], ... FOR c IN (v1 [AS n1], v2, ...) [d IN (...)]
                           [GROUP BY g, ...]) [AS p]
    PIVOT t ON c [IN (v1, v2, ...)] [, d [IN (...)]] USING sum(x) [AS s], ... [GROUP BY g, ...]
          [ORDER BY ...] [LIMIT n] [OFFSET m]

become ``SELECT g..., sum(x) FILTER (WHERE c::VARCHAR = 'v1') AS "v1[_s]", ... FROM t GROUP
BY g...`` (``c = 'v1'`` / ``c = 1`` for a text / an integer column, ``_matches``): one
column per value and aggregate, named by the value (its IN alias) and, when there are
several aggregates or the one has an alias, ``_`` and the aggregate's alias.  DuckDB
matches a value as text, the ON column's beside the value's (a DOUBLE column has no ``1`` of
``IN (1)``, only ``1.0``; -0.0 and 0.0 are two values), and names it by that text (``''`` for
the empty string); a name in the IN list is its text (``IN (a, b)``: 'a', 'b'), a computed
value (``1 + 1``) is read first (``with_values``), named ``2``.  Over several ON columns, one column per combination of their values (the
first column's outermost), tested by ``c = v1 AND d = w1`` and named ``v1_w1``.  The rows are
grouped by ``GROUP BY`` where written, else by every column of ``t`` that no ON column nor
aggregate reads, in ``t``'s order.  A value no row of a group has gives what the aggregate
gives over no rows (NULL; 0 for count), as DuckDB's.  ORDER BY / LIMIT / OFFSET after the
statement are the parser's (``SELECT * FROM (PIVOT ...) ORDER BY ...``).

``PIVOT t ON c`` without IN takes ``c``'s distinct texts that are not NULL, in text order,
``c IN (SELECT ...)`` the query's, in its order: they are read by a query run before the
statement is planned (``with_values``, from the connection), then the statement is planned
as with an IN list.  Without USING, DuckDB counts (``count(*)``); without ON, the aggregates
are a plain query grouped by the GROUP BY written.

``UNPIVOT t ON a [AS x], b [INTO NAME k VALUE v]`` and ``FROM t UNPIVOT [INCLUDE NULLS] (v
FOR k IN (a, b))`` become a UNION ALL of one SELECT per column (``_unpivoted``), also into
several value columns at once (``ON (a, c) AS x, (b, d) AS y INTO NAME k VALUE v, w``,
``((v, w) FOR k IN ((a, c) AS x, (b, d) AS y))``); ``*`` /
``COLUMNS(*)`` [EXCLUDE (...)] and ``COLUMNS('regex')`` among the columns stand for the source
columns they name (``_expanded``); the columns must have a type in common as DuckDB's
UNPIVOT requires (``unpivot_types``: a UNION ALL alone would make text of a number beside a
text).  A PIVOT inside another's source (``UNPIVOT (PIVOT ...)``, a CTE it reads, one
before it on the same table: ``FROM t UNPIVOT (...) PIVOT (...)``) is rewritten first, so
its columns are known.

An aggregate may sit in an expression (``count(*) + 1``): its FILTER goes on the aggregate,
so a value no row of a group has gives what the expression gives over no rows, as DuckDB's;
an expression of no or of two aggregates is DuckDB's SqlError.

Refused by name (UnsupportedSql): UNPIVOT ON an expression, ``* REPLACE / RENAME``, PIVOT ON a
row ``(a, b)``, several aggregates without aliases, an aggregate with FILTER (DuckDB's PIVOT
ignores it), a source whose columns are not known (a ``*`` over a join, ``t.*``).  ``ON`` a condition (``ON x > 6``, ``ON x IS NULL``) pivots on its
values (``false``, ``true``), as DuckDB's.
"""

from __future__ import annotations

import itertools
import re

from sqlglot import exp

from ..errors import SqlError, UnsupportedSql
from .parse import span_over
from .table_aliases import unique_names
from .table_refs import cte_of, table_key
from .unpivot_types import check_unpivot_types, column_types

_DIALECT = "duckdb, normalization_strategy = case_sensitive"  # as the optimizer reads names
_INTEGER = re.compile(r"-?(0|[1-9][0-9]*)")  # an integer as DuckDB prints it


def has_pivot(tree: exp.Expression) -> bool:
    return tree.find(exp.Pivot) is not None


def reads_values(tree: exp.Expression) -> bool:
    """Whether ``tree`` holds a ``PIVOT t ON c`` without IN, whose columns are the data's
    values (``with_values`` reads them; the statement's plan is not kept: they change)."""
    return any(_unlisted(pivot) for pivot in tree.find_all(exp.Pivot))


def _unlisted(pivot: exp.Pivot) -> bool:
    return _bare(pivot) and not pivot.args.get("unpivot") and \
        not all(_listed(on) for on in _on_columns(pivot))


def _listed(on: exp.Expression) -> bool:
    """``c IN (v1, v2)``: constants written out, not read (``c``, ``c IN (SELECT ...)``) nor
    computed (``c IN (1 + 1)``, which DuckDB names ``2``)."""
    return isinstance(on, exp.In) and on.args.get("query") is None and \
        all(_constant(_unaliased(v)) for v in on.expressions)


def _constant(value: exp.Expression) -> bool:
    if isinstance(value, (exp.Neg, exp.Cast)):
        value = value.this
    # a name, IN (a, b), stands for its text ('a', 'b')
    return isinstance(value, (exp.Literal, exp.Boolean, exp.Null, exp.Placeholder, exp.Column))


def _unaliased(value: exp.Expression) -> exp.Expression:
    return value.this if isinstance(value, exp.PivotAlias) else value


def with_values(con, tree: exp.Expression, sql: str) -> exp.Expression:
    """``tree`` with each ON column of a ``PIVOT t ON c`` lacking an IN list given ``c``'s
    distinct values that are not NULL, in text order, and of a ``c IN (SELECT ...)`` the
    query's, read by ``con`` (the statement's CTEs beside; an error in them is shown in the
    statement ``sql``, at the ON column)."""
    for pivot in list(tree.find_all(exp.Pivot)):
        if not _unlisted(pivot):
            continue
        listed = [on if _listed(on) else _computed_values(con, on, sql)
                  if isinstance(on, exp.In) and on.args.get("query") is None
                  else _queried_values(con, tree, on, sql)
                  if isinstance(on, exp.In) else _values_of(con, tree, pivot.this, on, sql)
                  for on in _on_columns(pivot)]
        pivot.set("expressions", listed)
    return tree


def _computed_values(con, on: exp.In, sql: str) -> exp.In:
    """``c IN (1 + 1, 3 AS n)``: each value that is not a constant as its text, computed by
    ``con`` (DuckDB names its column so, ``2``), its alias kept."""
    values = [_unaliased(v) for v in on.expressions]
    texts = _run(con, exp.select(*[_as_text(v) for v in values]), sql, on).fetchone()
    listed = []
    for written, value, text in zip(on.expressions, values, texts):
        if not _constant(value):
            value = exp.Null() if text is None else exp.Literal.string(text)
        listed.append(exp.PivotAlias(this=value, alias=written.args["alias"].copy())
                      if isinstance(written, exp.PivotAlias) else value)
    return exp.In(this=on.this, expressions=listed)


def _queried_values(con, tree: exp.Expression, on: exp.In, sql: str) -> exp.In:
    """``c IN (SELECT ...)``: the query's distinct values that are not NULL, as text, in the
    order it gives them (DuckDB's); it must give one column."""
    query = on.args["query"].unnest()
    ctes = ctes_before(tree, on)
    if ctes:
        query = query.copy()
        query.set("with_", exp.With(expressions=ctes + list(
            query.args["with_"].expressions if query.args.get("with_") else [])))
    if len(_run(con, query, sql, on).columns) != 1:
        raise SqlError("The query must return a single column", sql, span_over(query))
    texts = _run(con, exp.select(_as_text(exp.column("v", "__q"))).from_(exp.Subquery(
        this=query.copy(), alias=exp.TableAlias(this=exp.to_identifier("__q"),
                                                columns=[exp.to_identifier("v")]))), sql, on)
    values = dict.fromkeys(row[0] for row in texts.fetchall() if row[0] is not None)
    return exp.In(this=on.this, expressions=[exp.Literal.string(v) for v in values])


def _values_of(con, tree: exp.Expression, source: exp.Expression, on: exp.Expression,
               sql: str) -> exp.In:
    """``on IN (its distinct texts in ``source``, not NULL, in text order)``: DuckDB's PIVOT
    reads its values as text (``-0.0`` and ``0.0`` are two, 10 comes before 2)."""
    query = exp.select(exp.alias_(_as_text(on), "v")).distinct().from_(source.copy()) \
        .where(exp.Not(this=exp.Is(this=exp.paren(on.copy()), expression=exp.Null()))) \
        .order_by(exp.column("v"))
    ctes = ctes_before(tree, on)
    if ctes:
        query.set("with_", exp.With(expressions=ctes))
    values = [row[0] for row in _run(con, query, sql, on).fetchall()]
    return exp.In(this=on, expressions=[exp.Literal.string(v) for v in values])


def _run(con, query: exp.Expression, sql: str, at: exp.Expression):
    """``query``'s result from ``con``; its SqlError shown in the statement ``sql`` at
    ``at`` (the ON column), not in the query made here."""
    try:
        return con.sql(query.sql(dialect="duckdb"))
    except SqlError as err:
        if type(err) is not SqlError:
            raise
        raise SqlError(err.plain_message, sql, span_over(at)) from None


def ctes_before(tree: exp.Expression, node: exp.Expression) -> list[exp.CTE]:
    """Copies of the statement's CTEs ``node`` may read: all of them, or those before the
    CTE it is in (``WITH q AS (PIVOT t ON c ...)``: not q itself)."""
    with_ = tree.args.get("with_")
    ctes = []
    for cte in with_.expressions if isinstance(with_, exp.With) else []:
        if any(ancestor is cte for ancestor in _ancestors(node)):
            break
        ctes.append(cte.copy())
    return ctes


def _ancestors(node: exp.Expression):
    while node is not None:
        yield node
        node = node.parent


def pivots_as_aggregates(tree: exp.Expression, schema: dict) -> exp.Expression:
    """Every PIVOT in ``tree`` rewritten as a grouped SELECT (``schema``: the tables'
    columns, {table: {column: type}}), each after those in its source (``_waits``)."""
    pending = list(tree.find_all(exp.Pivot))
    while pending:
        pivot = next((p for p in pending if not _waits(p)), pending[0])
        pending.remove(pivot)
        tree = _rewritten(tree, pivot, schema)
    return tree


def _waits(pivot: exp.Pivot) -> bool:
    """Whether ``pivot``'s source holds another PIVOT, in it or in a CTE it reads: that one
    is rewritten first, so this one knows its columns (``UNPIVOT (PIVOT ...)``)."""
    source, own = pivot.this, [pivot]
    if not _bare(pivot):  # FROM t UNPIVOT (...) PIVOT (...): after those before it on t
        source = pivot.parent
        chain = source.args["pivots"]
        own = chain[next(i for i, p in enumerate(chain) if p is pivot):]
    scopes = [source] + [cte_of(table) for table in source.find_all(exp.Table)]
    return any(all(other is not p for p in own) for scope in scopes if scope is not None
               for other in scope.find_all(exp.Pivot))


def _rewritten(tree: exp.Expression, pivot: exp.Pivot, schema: dict) -> exp.Expression:
    """``tree`` with ``pivot`` rewritten as a grouped SELECT (an UNPIVOT: a UNION ALL)."""
    if _bare(pivot):  # PIVOT t ON ... USING ...: a statement, or a subquery's body
        if pivot.args.get("unpivot"):
            into = pivot.args.get("into")
            select = _unpivoted(pivot.this, pivot.expressions, into.this if into else None,
                                [v.name for v in into.expressions] if into else ["value"],
                                True, schema)
        else:
            using = pivot.args.get("using") or [exp.Count(this=exp.Star())]  # DuckDB's
            select = _grouped(pivot.this, _on_columns(pivot), using, pivot.args.get("group"),
                              schema)
        if pivot.args.get("with_") is not None:  # WITH ... PIVOT w ON ...
            select.set("with_", pivot.args["with_"])
        if pivot is tree:
            return select
        pivot.replace(select)
        return tree
    holder = pivot.parent  # FROM t PIVOT (...): a table or subquery carrying it (the first)
    later = [p.pop() for p in holder.args["pivots"][1:]]  # on the result of this one
    source = holder.copy()
    source.set("pivots", None)
    alias = pivot.args.get("alias") or holder.args.get("alias") or \
        exp.TableAlias(this=exp.to_identifier(holder.name or "pivot"))
    if isinstance(source, exp.Table):
        source.set("alias", None)
        cte = cte_of(holder)
        if cte is not None:  # its body, whose columns are known (a copy of the name is not)
            source = exp.Subquery(this=cte.this.copy())
    if pivot.args.get("unpivot"):  # FROM t UNPIVOT [INCLUDE NULLS] (v FOR k IN (a, b))
        (field,) = pivot.args.get("fields") or [None]
        if not isinstance(field, exp.In) or len(pivot.expressions) != 1:
            raise UnsupportedSql("this UNPIVOT form is not supported: write (v FOR k IN "
                                 "(a, b)) or ((v, w) FOR k IN ((a, b), (c, d)))")
        values = pivot.expressions[0].unnest()  # FOR (v) IN ...: v
        values = values.expressions if isinstance(values, exp.Tuple) else [values]
        select = _unpivoted(source, field.expressions, field.this, [v.name for v in values],
                            not pivot.args.get("include_nulls"), schema)
    else:
        select = _grouped(source, pivot.args.get("fields") or [], pivot.expressions,
                          pivot.args.get("group"), schema)
    holder.replace(exp.Subquery(this=select, alias=alias.copy(), pivots=later or None))
    return tree


def _bare(pivot: exp.Pivot) -> bool:
    """``PIVOT t ON ... USING ...`` (a statement or a subquery's body), not ``FROM t PIVOT
    (...)`` (one of a table's or subquery's ``pivots``)."""
    return pivot.arg_key != "pivots"


def _on_columns(pivot: exp.Pivot) -> list[exp.Expression]:
    for on in pivot.expressions:
        if isinstance(on.this if isinstance(on, exp.In) else on, exp.Tuple):
            raise UnsupportedSql("PIVOT ON a row of columns ((a, b)) is not supported: write "
                                 "ON a, b")
    return pivot.expressions


def _grouped(source: exp.Expression, fields: list, aggregates: list, group, schema: dict
             ) -> exp.Select:
    """``SELECT groups, aggregate FILTER (WHERE on matches value [AND ...]) ... FROM source
    GROUP BY groups`` (``_matches``): a column for each combination of the ON columns' values
    (the first column's values outermost), each named by its values joined with ``_``."""
    if not all(_listed(field) for field in fields):
        raise UnsupportedSql("PIVOT FOR a column without an IN list is not supported")
    if not fields:  # PIVOT t USING sum(x) [GROUP BY g]: the aggregates, grouped as written
        groups = [g.copy() for g in group.expressions] if group is not None else []
        select = exp.select(*groups, *[a.copy() for a in aggregates]).from_(source)
        return select.group_by(*[g.copy() for g in groups]) if groups else select
    ons = [field.this for field in fields]
    if len(aggregates) > 1 and any(not isinstance(a, exp.Alias) for a in aggregates):
        raise UnsupportedSql("PIVOT with several aggregates needs an alias on each "
                             "(sum(x) AS s, count(*) AS n)")
    if group is not None:
        groups = [g.copy() for g in group.expressions]
    else:
        read = {c.name.lower() for node in [*ons, *aggregates] for c in node.find_all(exp.Column)}
        groups = [exp.column(name) for name in _source_columns(source, schema)
                  if name.lower() not in read]
    pivoted = []
    kinds = column_types(source, ons, schema, _DIALECT)
    for combination in itertools.product(*(field.expressions for field in fields)):
        label = "_".join(_label(value) for value in combination)
        values = [v.this if isinstance(v, exp.PivotAlias) else v for v in combination]
        test = exp.and_(*(_matches(on, kind, value)
                          for on, kind, value in zip(ons, kinds, values)))
        for aggregate in aggregates:
            call = aggregate.this if isinstance(aggregate, exp.Alias) else aggregate
            name = label if len(aggregates) == 1 and not isinstance(aggregate, exp.Alias) \
                else f"{label}_{aggregate.alias}"
            pivoted.append((_filtered(call, test), name))
    # a repeated name gets _1, _2, ... as in DuckDB (IN ('1', 1): 1 and 1_1)
    names = unique_names([g.alias_or_name for g in groups] + [name for _, name in pivoted])
    columns = list(groups) + [exp.alias_(filtered, name, quoted=True)
                              for (filtered, _), name in zip(pivoted, names[len(groups):])]
    select = exp.select(*columns).from_(source)
    return select.group_by(*[g.copy() for g in groups]) if groups else select


def _matches(on: exp.Expression, kind: exp.DataType | None, value: exp.Expression
             ) -> exp.Expression:
    """Whether ``on`` is the pivot value ``value`` as DuckDB tests it: its text is the value's
    (a DOUBLE's 1.0 is not the 1 of ``IN (1)``), NULL gathering the NULL rows.  A text
    column, or an integer one beside an integer written as DuckDB prints it, is compared as
    it is (no text made of every row)."""
    text = _text(value)
    if isinstance(text, exp.Null):
        return exp.Is(this=exp.paren(on.copy()), expression=exp.Null())
    if isinstance(text, exp.Literal) and kind is not None:
        if kind.is_type(*exp.DataType.TEXT_TYPES):
            return exp.EQ(this=on.copy(), expression=text)
        if kind.is_type(*exp.DataType.INTEGER_TYPES) and _INTEGER.fullmatch(text.this):
            return exp.EQ(this=on.copy(), expression=exp.Literal.number(text.this))
    return exp.NullSafeEQ(this=_as_text(on), expression=text)


def _filtered(call: exp.Expression, test: exp.Expression) -> exp.Expression:
    """``call`` -- an aggregate, or an expression of one (``count(*) + 1``) -- with ``FILTER
    (WHERE test)`` on its aggregate: over no rows, it is what the expression gives then."""
    if any(isinstance(f.this, exp.AggFunc) for f in call.find_all(exp.Filter)):
        # DuckDB's PIVOT drops it: refused, not guessed
        raise UnsupportedSql("an aggregate with FILTER in PIVOT is not supported")
    call = call.copy()
    aggregates = [a for a in call.find_all(exp.AggFunc) if not isinstance(a.parent, exp.Window)]
    if not aggregates and call.find(exp.Column) is not None:
        raise SqlError("Columns can only be referenced within the aggregate of a PIVOT "
                       "expression")
    if len(aggregates) != 1:
        found = len(aggregates) if aggregates else "no aggregates"
        raise SqlError(f"Pivot expression must contain exactly one aggregate, but {found} "
                       "were found")
    filtered = exp.Filter(this=aggregates[0].copy(), expression=exp.Where(this=test.copy()))
    if aggregates[0] is call:
        return filtered
    aggregates[0].replace(filtered)
    return call


def _unpivoted(source: exp.Expression, columns: list, name, values: list[str],
               skip_nulls: bool, schema: dict) -> exp.Expression:
    """``SELECT kept..., 'a' AS name, a AS value FROM source [WHERE a IS NOT NULL] UNION ALL
    ...`` for each unpivoted column ``a`` (its label: its alias, else its name); ``kept``:
    the source's other columns, in its order.  With several value columns (``values``)
    each entry is a row of as many columns, ``ON (a, c) AS x, (b, d) AS y INTO NAME k VALUE
    v1, v2``: one branch per entry (an entry without alias labelled ``a_c``), as DuckDB.
    DuckDB's UNPIVOT leaves out a row where a value is NULL unless INCLUDE NULLS."""
    name = "name" if name is None else name.name
    entries = [_unpivot_entry(c) for c in _expanded(columns, source, schema)]
    width = len(entries[0][1])
    for _, row in entries:
        if len(row) != width:
            raise SqlError(f"UNPIVOT value count mismatch - entry has {len(row)} values, but "
                           f"expected all entries to have {width} values")
    if len(values) != width:
        raise SqlError(f"UNPIVOT name count mismatch - got {len(values)} names but {width} "
                       "expressions")
    if width > 1 and name.lower() in {v.lower() for v in values}:
        raise UnsupportedSql(f"UNPIVOT VALUE columns named as the NAME column {name!r}")
    for position in range(width):
        check_unpivot_types(source, [row[position] for _, row in entries], schema)
    read = {c.name.lower() for _, row in entries for c in row}
    kept = [exp.column(n) for n in _source_columns(source, schema) if n.lower() not in read]
    branches = []
    for label, row in entries:
        branch = exp.select(*[k.copy() for k in kept],
                            exp.alias_(exp.Literal.string(label), name, quoted=True),
                            *[exp.alias_(column.copy(), value, quoted=True)
                              for column, value in zip(row, values)]).from_(source.copy())
        if skip_nulls:
            branch = branch.where(exp.and_(*[exp.Not(this=exp.Is(this=c.copy(),
                                                                 expression=exp.Null()))
                                             for c in row]))
        branches.append(branch)
    union = branches[0]
    for branch in branches[1:]:
        union = exp.union(union, branch, distinct=False)
    return union if len(branches) == 1 else exp.select("*").from_(union.subquery("__unpivot"))


def _unpivot_entry(written: exp.Expression) -> tuple[str, list[exp.Column]]:
    """(label, columns) of one UNPIVOT entry: ``a [AS x]`` or ``(a, c) [AS x]`` (unaliased:
    ``a`` / ``a_c``)."""
    aliased = isinstance(written, (exp.PivotAlias, exp.Alias))
    inner = (written.this if aliased else written).unnest()
    row = list(inner.expressions) if isinstance(inner, exp.Tuple) else [inner]
    if not all(isinstance(c, exp.Column) for c in row):
        raise UnsupportedSql("UNPIVOT ON an expression is not supported: name the columns "
                             "(or COLUMNS(*) / COLUMNS('regex'))")
    return (written.alias if aliased else "_".join(c.name for c in row)), row


def _expanded(columns: list, source: exp.Expression, schema: dict) -> list:
    """The UNPIVOT columns with each ``*`` / ``COLUMNS(*)`` [EXCLUDE (...)] and
    ``COLUMNS('regex')`` replaced by the source's columns it names, in the source's order."""
    expanded = []
    for column in columns:
        chosen = _chosen(column, source, schema)
        expanded += [column] if chosen is None else [exp.column(n, quoted=True) for n in chosen]
    if not expanded:
        raise SqlError("UNPIVOT clause must unpivot on at least one column - zero were "
                       "provided")
    return expanded


def _chosen(column: exp.Expression, source: exp.Expression, schema: dict) -> list | None:
    """The source's column names ``column`` stands for if it is a star or COLUMNS(...),
    else None."""
    inner = column.this if isinstance(column, exp.Columns) else column
    if isinstance(inner, exp.Star):
        if inner.args.get("replace") or inner.args.get("rename"):
            raise UnsupportedSql("UNPIVOT ON * REPLACE / RENAME is not supported")
        names = _source_columns(source, schema)
        excluded = {c.name.lower() for c in inner.args.get("except_") or []}
        missing = excluded - {n.lower() for n in names}
        if missing:
            raise SqlError(f'Column "{sorted(missing)[0]}" in EXCLUDE list not found in '
                           "FROM clause")
        return [n for n in names if n.lower() not in excluded]
    if isinstance(column, exp.Columns) and isinstance(inner, exp.Literal) and inner.is_string:
        try:  # DuckDB: the columns the regular expression matches anywhere in the name
            pattern = re.compile(inner.this)
        except re.error as err:
            raise SqlError(f"invalid regular expression {inner.this!r} in COLUMNS: {err}") \
                from None
        names = [n for n in _source_columns(source, schema) if pattern.search(n)]
        if not names:
            raise SqlError(f'No matching columns found that match regex "{inner.this}"')
        return names
    return None


def _source_columns(source: exp.Expression, schema: dict) -> list[str]:
    columns = _columns_of(source, schema)
    if columns is None:
        raise UnsupportedSql(f"PIVOT over {source.sql(dialect='duckdb')!r}: its columns are "
                             "not known here (name them in a subquery, or write GROUP BY)")
    return columns


def _columns_of(source: exp.Expression, schema: dict) -> list[str] | None:
    """The column names of a table, a CTE, a subquery or a set operation (its first
    branch's), a lone ``*`` over one source written out as that source's; None when they
    are not known here."""
    if isinstance(source, exp.Table):
        cte = cte_of(source)
        if cte is not None:
            return _columns_of(cte.this, schema)
        columns = schema.get(table_key(source))
        return None if columns is None else list(columns)
    if isinstance(source, exp.Subquery) and not source.alias_column_names:
        return _columns_of(source.this, schema)
    if isinstance(source, exp.SetOperation):
        return _columns_of(source.this, schema)
    if not isinstance(source, exp.Select):
        return None
    columns = []
    for item in source.expressions:
        if not item.is_star:
            columns.append(item.alias_or_name)
            continue
        star = source.args.get("from_")
        if not isinstance(item, exp.Star) or any(item.args.values()) or star is None or \
                source.args.get("joins"):
            return None  # t.*, * EXCLUDE (...), a star over a join
        inner = _columns_of(star.this, schema)
        if inner is None:
            return None
        columns += inner
    return columns


def _label(value: exp.Expression) -> str:
    """A pivot value's column name: its alias, else its text as DuckDB prints it (``''`` for
    the empty string)."""
    if isinstance(value, exp.PivotAlias):
        return value.alias
    text = _text(value)
    if isinstance(text, exp.Literal):
        return text.this or "''"
    return value.sql(dialect="duckdb")


def _as_text(value: exp.Expression) -> exp.Expression:
    return exp.cast(value.copy(), exp.DataType.build("VARCHAR"))


def _text(value: exp.Expression) -> exp.Expression:
    """A pivot value as the text DuckDB compares the ON column's text with: a constant's
    text (a DOUBLE's as DuckDB prints it; a name's, ``IN (a, b)``), NULL, else the value cast
    to VARCHAR."""
    if isinstance(value, exp.Literal) and not value.is_string and \
            any(c in value.this for c in "eE"):
        return exp.Literal.string(repr(float(value.this)))  # 1e0: the DOUBLE 1.0
    if isinstance(value, exp.Literal):
        return exp.Literal.string(value.this)
    if isinstance(value, exp.Column):  # DuckDB: a name in the IN list is that text
        if value.table:
            raise SqlError("PIVOT IN list cannot contain qualified column references")
        return exp.Literal.string(value.name)
    if isinstance(value, exp.Boolean):
        return exp.Literal.string("true" if value.this else "false")
    if isinstance(value, exp.Cast) and isinstance(value.this, exp.Literal):
        return exp.Literal.string(value.this.this)  # DATE '2024-01-01'
    if isinstance(value, exp.Null):
        return value.copy()
    return _as_text(value)
