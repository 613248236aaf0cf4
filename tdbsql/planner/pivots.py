"""PIVOT -> a grouped SELECT of filtered aggregates, as DuckDB names and fills its columns.

Both of DuckDB's spellings::

    SELECT * FROM t PIVOT (sum(x) [AS s], ... FOR c IN (v1 [AS n1], v2, ...) [d IN (...)]
                           [GROUP BY g, ...]) [AS p]
    PIVOT t ON c [IN (v1, v2, ...)] [, d [IN (...)]] USING sum(x) [AS s], ... [GROUP BY g, ...]

become ``SELECT g..., sum(x) FILTER (WHERE c = v1) AS "v1[_s]", ... FROM t GROUP BY g...``:
one column per value and aggregate, named by the value (its IN alias) and, when there are
several aggregates or the one has an alias, ``_`` and the aggregate's alias.  Over several ON
columns, one column per combination of their values (the first column's outermost), tested
by ``c = v1 AND d = w1`` and named ``v1_w1``.  The rows are grouped by ``GROUP BY`` where
written, else by every column of ``t`` that no ON column nor aggregate reads, in ``t``'s
order.  A value no row of a group has gives what the aggregate gives over no rows (NULL; 0 for
count), as DuckDB's.

``PIVOT t ON c`` without IN takes ``c``'s distinct values that are not NULL, in order: they
are read by a query run before the statement is planned (``with_values``, from the
connection), then the statement is planned as with an IN list.

``UNPIVOT t ON a [AS x], b [INTO NAME k VALUE v]`` and ``FROM t UNPIVOT [INCLUDE NULLS] (v
FOR k IN (a, b))`` become a UNION ALL of one SELECT per column (``_unpivoted``); ``*`` /
``COLUMNS(*)`` [EXCLUDE (...)] and ``COLUMNS('regex')`` among the columns stand for the source
columns they name (``_expanded``); the columns must have a type in common as DuckDB's
UNPIVOT requires (``unpivot_types``: a UNION ALL alone would make text of a number beside a
text).

Refused by name (UnsupportedSql): UNPIVOT ON an expression, ``* REPLACE / RENAME``, PIVOT ON a
row ``(a, b)``, several aggregates without aliases, an aggregate with FILTER (DuckDB's PIVOT
ignores it), a source whose columns are not known (``SELECT *`` of a subquery, a CTE without
GROUP BY).  ``ON`` an expression (``ON x > 6``) does not parse (sqlglot's grammar), an
SqlError.
"""

from __future__ import annotations

import datetime
import decimal
import itertools
import re

from sqlglot import exp

from ..errors import SqlError, UnsupportedSql
from .table_refs import table_key
from .unpivot_types import check_unpivot_types


def has_pivot(tree: exp.Expression) -> bool:
    return tree.find(exp.Pivot) is not None


def reads_values(tree: exp.Expression) -> bool:
    """Whether ``tree`` holds a ``PIVOT t ON c`` without IN, whose columns are the data's
    values (``with_values`` reads them; the statement's plan is not kept: they change)."""
    return any(_unlisted(pivot) for pivot in tree.find_all(exp.Pivot))


def _unlisted(pivot: exp.Pivot) -> bool:
    return _bare(pivot) and not pivot.args.get("unpivot") and \
        not all(isinstance(on, exp.In) for on in _on_columns(pivot))


def with_values(con, tree: exp.Expression) -> exp.Expression:
    """``tree`` with each ON column of a ``PIVOT t ON c`` lacking an IN list given ``c``'s
    distinct values that are not NULL, ascending, read by ``con`` (the statement's CTEs
    beside)."""
    for pivot in list(tree.find_all(exp.Pivot)):
        if not _unlisted(pivot):
            continue
        listed = [on if isinstance(on, exp.In) else _values_of(con, tree, pivot.this, on)
                  for on in _on_columns(pivot)]
        pivot.set("expressions", listed)
    return tree


def _values_of(con, tree: exp.Expression, source: exp.Expression, on: exp.Expression
               ) -> exp.In:
    """``on IN (its distinct values in ``source``, not NULL, ascending)``."""
    query = exp.select(exp.alias_(on.copy(), "v")).distinct().from_(source.copy()) \
        .where(exp.Not(this=exp.Is(this=on.copy(), expression=exp.Null()))) \
        .order_by(exp.column("v"))
    with_ = tree.args.get("with_")
    if isinstance(with_, exp.With):
        query.set("with_", with_.copy())
    values = [row[0] for row in con.sql(query.sql(dialect="duckdb")).fetchall()]
    return exp.In(this=on, expressions=[_literal(v) for v in values])


def pivots_as_aggregates(tree: exp.Expression, schema: dict) -> exp.Expression:
    """Every PIVOT in ``tree`` rewritten as a grouped SELECT (``schema``: the tables'
    columns, {table: {column: type}})."""
    for pivot in list(tree.find_all(exp.Pivot)):
        if _bare(pivot):  # PIVOT t ON ... USING ...: a statement, or a subquery's body
            if pivot.args.get("unpivot"):
                into = pivot.args.get("into")
                select = _unpivoted(pivot.this, pivot.expressions,
                                    into.this if into else None,
                                    into.expressions[0] if into else None, True, schema)
            else:
                select = _grouped(pivot.this, _on_columns(pivot),
                                  pivot.args.get("using") or [], pivot.args.get("group"),
                                  schema)
            if pivot.args.get("with_") is not None:  # WITH ... PIVOT w ON ...
                select.set("with_", pivot.args["with_"])
            if pivot is tree:
                tree = select
            else:
                pivot.replace(select)
            continue
        holder = pivot.parent  # FROM t PIVOT (...): a table or subquery carrying it
        if len(holder.args.get("pivots") or []) != 1:
            raise UnsupportedSql("more than one PIVOT on one table is not supported")
        source = holder.copy()
        source.set("pivots", None)
        alias = pivot.args.get("alias") or holder.args.get("alias") or \
            exp.TableAlias(this=exp.to_identifier(holder.name or "pivot"))
        if isinstance(source, exp.Table):
            source.set("alias", None)
        if pivot.args.get("unpivot"):  # FROM t UNPIVOT [INCLUDE NULLS] (v FOR k IN (a, b))
            (field,) = pivot.args.get("fields") or [None]
            if not isinstance(field, exp.In) or len(pivot.expressions) != 1:
                raise UnsupportedSql("UNPIVOT into several value columns is not supported")
            select = _unpivoted(source, field.expressions, field.this, pivot.expressions[0],
                                not pivot.args.get("include_nulls"), schema)
        else:
            select = _grouped(source, pivot.args.get("fields") or [], pivot.expressions,
                              pivot.args.get("group"), schema)
        holder.replace(exp.Subquery(this=select, alias=alias.copy()))
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
    """``SELECT groups, aggregate FILTER (WHERE on IS NOT DISTINCT FROM value [AND ...]) ...
    FROM source GROUP BY groups``: a column for each combination of the ON columns' values
    (the first column's values outermost), each named by its values joined with ``_``."""
    if not fields or not all(isinstance(field, exp.In) for field in fields):
        raise UnsupportedSql("PIVOT FOR a column without an IN list is not supported")
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
    columns = list(groups)
    for combination in itertools.product(*(field.expressions for field in fields)):
        label = "_".join(_label(value) for value in combination)
        values = [v.this if isinstance(v, exp.PivotAlias) else v for v in combination]
        # IS NOT DISTINCT FROM: a NULL in the IN list gathers the NULL rows, as DuckDB's
        test = exp.and_(*(exp.NullSafeEQ(this=on.copy(), expression=value.copy())
                          for on, value in zip(ons, values)))
        for aggregate in aggregates:
            call = aggregate.this if isinstance(aggregate, exp.Alias) else aggregate
            name = label if len(aggregates) == 1 and not isinstance(aggregate, exp.Alias) \
                else f"{label}_{aggregate.alias}"
            if isinstance(call, exp.Filter):  # DuckDB's PIVOT drops it: refused, not guessed
                raise UnsupportedSql("an aggregate with FILTER in PIVOT is not supported")
            filtered = exp.Filter(this=call.copy(), expression=exp.Where(this=test.copy()))
            columns.append(exp.alias_(filtered, name, quoted=True))
    select = exp.select(*columns).from_(source)
    return select.group_by(*[g.copy() for g in groups]) if groups else select


def _unpivoted(source: exp.Expression, columns: list, name, value, skip_nulls: bool,
               schema: dict) -> exp.Expression:
    """``SELECT kept..., 'a' AS name, a AS value FROM source [WHERE a IS NOT NULL] UNION ALL
    ...`` for each unpivoted column ``a`` (its label: its alias, else its name); ``kept``:
    the source's other columns, in its order.  DuckDB's UNPIVOT leaves NULL values out
    unless INCLUDE NULLS."""
    name = "name" if name is None else name.name
    value = "value" if value is None else value.name
    columns = _expanded(columns, source, schema)
    unpivoted = [(c.this if isinstance(c, (exp.PivotAlias, exp.Alias)) else c) for c in columns]
    if not all(isinstance(c, exp.Column) for c in unpivoted):
        raise UnsupportedSql("UNPIVOT ON an expression is not supported: name the columns "
                             "(or COLUMNS(*) / COLUMNS('regex'))")
    check_unpivot_types(source, unpivoted, schema)
    read = {c.name.lower() for c in unpivoted}
    kept = [exp.column(n) for n in _source_columns(source, schema) if n.lower() not in read]
    branches = []
    for written, column in zip(columns, unpivoted):
        label = written.alias if isinstance(written, (exp.PivotAlias, exp.Alias)) else column.name
        branch = exp.select(*[k.copy() for k in kept],
                            exp.alias_(exp.Literal.string(label), name, quoted=True),
                            exp.alias_(column.copy(), value, quoted=True)).from_(source.copy())
        if skip_nulls:
            branch = branch.where(exp.Not(this=exp.Is(this=column.copy(), expression=exp.Null())))
        branches.append(branch)
    union = branches[0]
    for branch in branches[1:]:
        union = exp.union(union, branch, distinct=False)
    return union if len(branches) == 1 else exp.select("*").from_(union.subquery("__unpivot"))


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
    if isinstance(source, exp.Table):
        columns = schema.get(table_key(source))
        if columns is not None:
            return list(columns)
    elif isinstance(source, exp.Subquery) and isinstance(source.this, exp.Query) and \
            "*" not in source.this.named_selects:  # (a PIVOT's own columns are not known here)
        return list(source.this.named_selects)
    raise UnsupportedSql(f"PIVOT over {source.sql(dialect='duckdb')!r}: its columns are not "
                         "known here (name them in a subquery, or write GROUP BY)")


def _label(value: exp.Expression) -> str:
    """A pivot value's column name: its alias, a literal's text, TRUE / FALSE as DuckDB
    prints them, else the SQL."""
    if isinstance(value, exp.PivotAlias):
        return value.alias
    if isinstance(value, exp.Literal):
        return value.this
    if isinstance(value, exp.Boolean):
        return "true" if value.this else "false"
    if isinstance(value, exp.Cast) and isinstance(value.this, exp.Literal):
        return value.this.this  # DATE '2024-01-01' (a value read for ON without IN)
    return value.sql(dialect="duckdb")


def _literal(value) -> exp.Expression:
    """A distinct ON value read from the data, as a SQL constant of its type."""
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, (int, float, decimal.Decimal)):
        return exp.Literal.number(value)
    if isinstance(value, datetime.datetime):
        return exp.Cast(this=exp.Literal.string(str(value)), to=exp.DataType.build("TIMESTAMP"))
    if isinstance(value, datetime.date):
        return exp.Cast(this=exp.Literal.string(value.isoformat()),
                        to=exp.DataType.build("DATE"))
    if isinstance(value, str):
        return exp.Literal.string(value)
    raise UnsupportedSql(f"PIVOT ON a column of {type(value).__name__} values is not "
                         "supported")
