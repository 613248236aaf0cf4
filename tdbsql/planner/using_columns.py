"""A column named in ``JOIN ... USING (a)``, read without a table: the column DuckDB binds.

After ``s JOIN u USING (a)`` there is one column ``a``.  sqlglot's optimizer writes every bare
``a`` as ``COALESCE(s.a, u.a)``, whatever the join's side.  DuckDB binds ``a`` to the column of
the side whose value the join keeps: ``s.a`` for an INNER or LEFT join, ``u.a`` for a RIGHT join;
only a FULL join merges the two (``COALESCE(s.a, u.a)``).  Over several USING joins on ``a`` the
binding is folded join by join: INNER / LEFT keep it, RIGHT takes the joined table's column,
FULL merges it with that column.  It matters twice:

* GROUP BY: DuckDB takes ``SELECT s.a, count(*) FROM s JOIN u USING (a) GROUP BY a`` and
  ``SELECT a ... GROUP BY s.a`` (``a`` *is* ``s.a`` there) and refuses ``SELECT u.a ... GROUP BY
  a``; a RIGHT join the other way round; after a FULL join ``a`` is neither column.  With the
  binding in place of sqlglot's COALESCE, the grouped-column check (``planner.grouped_columns``)
  and the planner's GROUP BY keys see what DuckDB sees.  The value is the same on every row
  the joins yield: each column of the chain is NULL or equal to the binding there.
* the next USING join on ``a`` matches the binding, where sqlglot writes the first table's
  column (``s RIGHT JOIN u USING (a) JOIN x USING (a)`` must match ``x.a`` with ``u.a``, not
  ``s.a``, which is NULL for the rows only ``u`` has).

sqlglot also leaves a bare ``a`` in HAVING unqualified (no step has it); it gets the binding too.

``mark`` runs before the optimizer: it records on each Join its USING names (the optimizer
turns them into ON equalities) and tags every COALESCE the query wrote, which is no USING column
(DuckDB refuses ``SELECT coalesce(s.a, u.a) ... GROUP BY s.a``).  ``bind_using_columns`` runs on
the optimized tree and replaces only an untagged COALESCE of exactly the chain's columns, in the
SELECT whose joins made it.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.optimizer.scope import find_all_in_scope

from ..errors import UnsupportedSql
from .conjuncts import conjuncts
from .grouped_columns import source_clauses
from .table_refs import table_key

_WRITTEN = "tdbsql_written"  # meta key on a COALESCE of the SQL text
_USING = "tdbsql_using"  # meta key on a Join: the names of its USING list


def mark(tree: exp.Expression) -> exp.Expression:
    """Tag the query's own COALESCE calls and its joins' USING names (in place)."""
    for node in tree.find_all(exp.Coalesce):
        node.meta[_WRITTEN] = True
    for join in tree.find_all(exp.Join):
        using = join.args.get("using")
        if using:
            join.meta[_USING] = tuple(identifier.name for identifier in using)
    return tree


def bind_using_columns(tree: exp.Expression) -> exp.Expression:
    """``tree`` (optimized) with the USING columns bound as DuckDB binds them (in place)."""
    for select in list(tree.find_all(exp.Select)):
        joins = select.args.get("joins") or []
        if any(join.meta.get(_USING) for join in joins):
            _bind(select, joins)
    return tree


class _Chain:
    """One USING name's columns in join order, and DuckDB's binding of the merged column."""

    def __init__(self, first: exp.Column):
        self.columns = [first]
        self.bound = [first]

    def join(self, column: exp.Column, side: str) -> None:
        self.columns.append(column)
        if side == "RIGHT":
            self.bound = [column]
        elif side == "FULL":
            self.bound = self.bound + [column]

    def binding(self) -> exp.Expression:
        if len(self.bound) == 1:
            return self.bound[0].copy()
        return exp.func("coalesce", *(c.copy() for c in self.bound))

    def merged(self) -> exp.Expression:
        """What sqlglot writes for the bare name: a COALESCE of the whole chain."""
        return exp.func("coalesce", *(c.copy() for c in self.columns))

    def bare(self) -> exp.Expression:
        """The bare name: the bound column, or after a FULL join sqlglot's COALESCE (of the
        same value on every row, and what the rest of the query reads)."""
        return self.binding() if len(self.bound) == 1 else self.merged()


def _bind(select: exp.Select, joins: list[exp.Join]) -> None:
    chains: dict[str, _Chain] = {}
    broken: set[str] = set()
    for join in joins:
        table = join.this.alias_or_name
        side = (join.side or "").upper()
        for name in using_names(join):
            column = exp.column(name, table, quoted=True)
            other = _using_side(join, column)
            if other is None or name in broken:
                broken.add(name)
                continue
            chain = chains.get(name)
            if chain is None:
                if not isinstance(other, exp.Column):
                    broken.add(name)
                    continue
                chain = chains[name] = _Chain(other.copy())
            elif other != chain.binding():
                other.replace(chain.binding())  # match the merged column, not the first one
            chain.join(column, side)
    for name in broken:
        chains.pop(name, None)
    if not chains:
        return
    for node in list(select.find_all(exp.Coalesce)):
        if node.meta.get(_WRITTEN) or node.find_ancestor(exp.Select) is not select:
            continue
        chain = next((c for c in chains.values() if node == c.merged()), None)
        if chain is not None:
            node.replace(chain.bare())
    having = select.args.get("having")
    if having is not None:
        for column in list(find_all_in_scope(having.this, exp.Column)):
            if not column.table and column.name in chains:
                column.replace(chains[column.name].bare())


def using_names(join: exp.Join) -> tuple[str, ...]:
    """The names of ``join``'s USING list (``mark`` recorded them), or ()."""
    return join.meta.get(_USING) or ()


def _using_side(join: exp.Join, column: exp.Column) -> exp.Expression | None:
    """In the ON equality a USING join made for ``column``'s name, the side that is not
    ``column`` (earlier tables' columns of that name, or a COALESCE of them), or None."""
    return using_equality(join, column)[1]


def using_equality(join: exp.Join, column: exp.Column) -> tuple:
    """(the ON equality a USING join made for ``column``'s name, its side that is not
    ``column``), or (None, None)."""
    for eq in conjuncts(join.args.get("on")):
        if not isinstance(eq, exp.EQ):
            continue
        if eq.expression == column:
            other = eq.this
        elif eq.this == column:
            other = eq.expression
        else:
            continue
        parts = [other.this, *other.expressions] if isinstance(other, exp.Coalesce) else [other]
        if all(isinstance(p, exp.Column) and p.table and p.name == column.name
               and p.table != column.table for p in parts):
            return eq, other
    return None, None


def refuse_star_beside_using(tree: exp.Expression, schema: dict) -> None:
    """Refuse ``SELECT *`` over a USING (or NATURAL) join on ``c`` followed by another table
    that has a column ``c``: sqlglot's star expansion drops every later table's ``c`` once the
    USING column is merged (``t JOIN u USING (id), u AS u2`` lost ``u2.id``), a wrong answer.
    Only tables whose columns are known (arrays, registered tables) are checked."""
    for select in tree.find_all(exp.Select):
        if not any(isinstance(e, exp.Star) for e in select.expressions):
            continue
        merged: set[str] = set()  # names a USING has merged so far
        for source in source_clauses(select):
            table = source.this
            columns = set(schema.get(table_key(table), {})) \
                if isinstance(table, exp.Table) else set()
            using = {i.name for i in source.args.get("using") or []} \
                if isinstance(source, exp.Join) else set()
            clash = (columns & merged) - using
            if clash:
                raise UnsupportedSql(
                    f"SELECT * over a USING / NATURAL join on {sorted(clash)[0]!r} and another "
                    f"table with that column ({table.sql(dialect='duckdb')}) is not supported: "
                    f"list the columns")
            merged |= using
