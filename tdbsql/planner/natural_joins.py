"""``NATURAL [INNER | LEFT | RIGHT | FULL] JOIN``: a USING join on every name both sides have.

DuckDB joins ``l NATURAL JOIN r`` on the column names ``l`` and ``r`` share (compared without
regard to case), in the order ``l`` lists them, exactly as ``l JOIN r USING (those names)``: the
same rows, and ``SELECT *`` lists each shared column once, where the left side has it.  The
left side is what the join's comma group holds before it (an explicit JOIN binds tighter than
the comma, ``planner.comma_joins``); a USING or NATURAL join there already merged its names.
No shared name is an error in DuckDB ("No columns found to join on in NATURAL JOIN"), not a
cross join, and so is a shared name the left side has twice (two tables joined with ON).

The shared names come from the tables' columns, so ``expand_natural_joins`` needs the catalog's
schema; it rewrites every NATURAL join into that USING join before ``planner.build`` (which
refuses a join method it does not know), and everything USING does -- the merged column's
binding, GROUP BY on it, comma groups -- then holds for NATURAL too.  Sources are base tables,
CTEs, subqueries and VALUES lists (with their column aliases); a source whose columns are not
known here (a table function, LATERAL, a parenthesized join) is refused by name.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from ..errors import SqlError, UnsupportedSql
from .comma_joins import is_comma
from .table_refs import cte_of, table_key
from .parse import span_of


@dataclass(frozen=True)
class _Name:
    """One output column of a source: its name as written and whether that spelling is exact
    (an array's field, or a quoted alias) rather than folded to lower case."""

    text: str
    exact: bool

    @property
    def key(self) -> str:
        return self.text.lower()


def expand_natural_joins(tree: exp.Expression, schema: dict[str, dict[str, str]],
                         sql: str) -> exp.Expression:
    """``tree`` with every NATURAL join written as a USING join (a copy when there is one)."""
    if not any(join.method == "NATURAL" for join in tree.find_all(exp.Join)):
        return tree
    tree = tree.copy()
    columns = _Columns(schema, sql)
    for select in tree.find_all(exp.Select):
        joins = select.args.get("joins") or []
        for index, join in enumerate(joins):
            if join.method == "NATURAL":
                shared = columns.shared(select, index)
                join.set("method", None)
                join.set("using", [exp.to_identifier(name.text, quoted=name.exact)
                                   for name in shared])
    return tree


class _Columns:
    """Column names of FROM sources, worked out from the schema and the query text."""

    def __init__(self, schema: dict[str, dict[str, str]], sql: str):
        self.schema, self.sql = schema, sql

    def shared(self, select: exp.Select, index: int) -> list[_Name]:
        """The names ``select``'s join ``index`` (a NATURAL one) joins on, checked."""
        joins = select.args["joins"]
        join = joins[index]
        start = max([i + 1 for i in range(index) if is_comma(joins[i])], default=0)
        left = self.joined(select, start, index)
        right = self.source(join.this)
        right_keys = {name.key: name for name in right}
        shared = [name for name in _unique(left) if name.key in right_keys]
        if not shared:
            raise SqlError("No columns found to join on in NATURAL JOIN (use CROSS JOIN for a "
                           "cross product)", self.sql, span_of(join.this))
        for name in shared:
            if sum(n.key == name.key for n in left) > 1:
                raise SqlError(f'Ambiguous reference to column name "{name.text}" in NATURAL '
                               "JOIN: the tables before it have it more than once", self.sql,
                               span_of(join.this))
            if sum(n.key == name.key for n in right) > 1:
                raise UnsupportedSql(f"NATURAL JOIN with {join.this.sql(dialect='duckdb')!r}, "
                                     f"which has the column {name.text!r} more than once")
            other = right_keys[name.key]
            if other.text != name.text and name.exact and other.exact:
                raise UnsupportedSql(f"NATURAL JOIN on columns spelled differently: "
                                     f"{name.text!r} and {other.text!r}")
        return shared

    def joined(self, select: exp.Select, start: int, stop: int) -> list[_Name]:
        """What ``SELECT *`` lists over ``select``'s FROM source (``start`` 0) or join
        ``start - 1`` and the joins after it up to ``stop`` (exclusive): a USING join's
        names once, where the left side has them."""
        joins = select.args.get("joins") or []
        first = select.args["from_"].this if start == 0 else joins[start - 1].this
        names = list(self.source(first))
        for index in range(start, stop):
            join = joins[index]
            right = self.source(join.this)
            if join.method == "NATURAL":
                merged = {name.key for name in self.shared(select, index)}
            else:
                merged = {ident.name.lower() for ident in join.args.get("using") or []}
            names += [name for name in right if name.key not in merged]
        return names

    def source(self, source: exp.Expression) -> list[_Name]:
        """The columns of one FROM / JOIN source, renamed by its alias's column list."""
        if isinstance(source, exp.Table) and isinstance(source.this, exp.Identifier) \
                and not source.args.get("joins"):
            names = self.table(source)
        elif isinstance(source, exp.Subquery) and isinstance(source.this, exp.Query):
            names = self.query(source.this)
        elif isinstance(source, exp.Values):
            names = [_Name(f"col{i}", True)
                     for i in range(len(source.expressions[0].expressions))]
        else:
            raise UnsupportedSql(f"NATURAL JOIN over {source.sql(dialect='duckdb')!r}: its "
                                 "columns are not known before planning")
        return _renamed(names, source.args.get("alias"))

    def table(self, table: exp.Table) -> list[_Name]:
        cte = cte_of(table)
        if cte is not None:
            return _renamed(self.query(cte.this), cte.args.get("alias"))
        key = table_key(table)
        if key not in self.schema:
            raise SqlError(f"unknown table {key!r}", self.sql, span_of(table))
        return [_Name(name, True) for name in self.schema[key]]

    def query(self, query: exp.Query) -> list[_Name]:
        """The output names of a query (a set operation's are its first query's)."""
        while isinstance(query, exp.SetOperation):
            query = query.this
        while isinstance(query, exp.Subquery):
            query = query.this
        if not isinstance(query, exp.Select):
            raise UnsupportedSql(f"NATURAL JOIN over {query.sql(dialect='duckdb')!r}: its "
                                 "columns are not known before planning")
        names = []
        for item in query.expressions:
            if isinstance(item, exp.Star):
                names += _starred(self._all(query), item)
            elif isinstance(item, exp.Column) and isinstance(item.this, exp.Star):
                names += _starred(self._of_alias(query, item.table), item.this)
            else:
                names.append(_output_name(item))
        return names

    def _all(self, select: exp.Select) -> list[_Name]:
        if select.args.get("from_") is None:
            return []
        return self.joined(select, 0, len(select.args.get("joins") or []))

    def _of_alias(self, select: exp.Select, alias: str) -> list[_Name]:
        sources = [select.args["from_"].this] + [j.this for j in select.args.get("joins") or []]
        for source in sources:
            if source.alias_or_name == alias:
                return self.source(source)
        raise UnsupportedSql(f"NATURAL JOIN over {alias}.*: the table is not known")


def _output_name(item: exp.Expression) -> _Name:
    """A select item's output name: its alias, or the name of the column it is."""
    if isinstance(item, exp.Alias):
        ident = item.args.get("alias")
    else:
        ident = item.this if isinstance(item, exp.Column) else None
    return _Name(item.alias_or_name, isinstance(ident, exp.Identifier) and ident.quoted)


def _unique(names: list[_Name]) -> list[_Name]:
    seen, unique = set(), []
    for name in names:
        if name.key not in seen:
            seen.add(name.key)
            unique.append(name)
    return unique


def _renamed(names: list[_Name], alias: exp.TableAlias | None) -> list[_Name]:
    """``AS t(a, b)`` renames the first columns (as many as it names)."""
    columns = alias.args.get("columns") if alias is not None else None
    if not columns:
        return names
    renamed = [_Name(ident.name, ident.quoted) for ident in columns]
    return renamed + names[len(renamed):]


def _starred(names: list[_Name], star: exp.Star) -> list[_Name]:
    """``* EXCLUDE (...)`` / ``* RENAME (...)``: the names the star stands for."""
    if star.args.get("ilike") is not None:
        raise UnsupportedSql(f"NATURAL JOIN over {star.sql(dialect='duckdb')!r}: its columns "
                             "are not known before planning")
    excluded = {column.name.lower() for column in star.args.get("except_") or []}
    renames = {alias.this.name.lower(): alias.alias for alias in star.args.get("rename") or []
               if isinstance(alias, exp.Alias)}
    return [_Name(renames[name.key], False) if name.key in renames else name
            for name in names if name.key not in excluded]
