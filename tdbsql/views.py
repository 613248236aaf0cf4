"""A connection's views, as DuckDB has them.

``CREATE [OR REPLACE] [TEMP] VIEW v [(a, b, ...)] AS query`` keeps ``query``, checked when the
view is made (its tables and columns must exist, at most as many names as it has columns);
``DROP VIEW [IF EXISTS] v`` forgets it.  A query naming ``v`` reads it as the subquery
``(query) AS v(a, b, ...)``: the optimizer merges it and pushes filters into it as into any
subquery, so a view over an array prunes as the query written out would.  A view names no
data: it reads its tables as they are when a query uses it.  View and table names are
case-insensitive and share one space (a table registered under a view's name replaces it);
a view that comes to read itself (``CREATE OR REPLACE VIEW v AS SELECT * FROM v``) is an
error when read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import pyarrow as pa
from sqlglot import exp

from .errors import SqlError, UnsupportedSql
from .planner.parse import span_of
from .planner.table_refs import cte_of

_DEPTH = 32  # views inside views: deeper is a view reading itself


@dataclass(frozen=True)
class View:
    name: str  # as written
    query: exp.Expression  # positions stripped: an error in it underlines no later statement
    columns: tuple[str, ...]  # names given to its first columns
    temporary: bool  # CREATE TEMP VIEW (SHOW ALL TABLES puts it in DuckDB's temp.main)


class Views:
    def __init__(self):
        self.by_name: dict[str, View] = {}  # by lower-case name

    def get(self, name: str) -> View | None:
        return self.by_name.get(name.lower())

    def __iter__(self):
        return iter(self.by_name.values())

    def forget(self, name: str) -> None:
        self.by_name.pop(name.lower(), None)

    def create(self, tree: exp.Create, sql: str, tables: set[str], width) -> pa.Table:
        """Run ``CREATE VIEW``: ``tables`` are the registered names (lower case), ``width(q)``
        the number of columns the query tree ``q`` gives (planning it, which checks it)."""
        target = tree.this
        columns = []
        if isinstance(target, exp.Schema):
            columns = [ident.name for ident in target.expressions]
            target = target.this
        if not isinstance(target, exp.Table) or target.args.get("db") or \
                target.args.get("catalog"):
            raise UnsupportedSql("CREATE VIEW names a view of this connection (no schema)")
        unsupported = [k for k, v in tree.args.items() if v and k not in (
            "this", "kind", "replace", "expression", "properties")]
        properties = tree.args.get("properties")
        if unsupported or (properties and any(not isinstance(p, exp.TemporaryProperty)
                                              for p in properties.expressions)):
            raise UnsupportedSql("this form of CREATE VIEW is not supported (CREATE [OR "
                                 "REPLACE] [TEMP] VIEW v [(columns)] AS query is)")
        name = target.name
        if name.lower() in tables:
            raise SqlError(f"a table named {name!r} already exists", sql, span_of(target))
        if name.lower() in self.by_name and not tree.args.get("replace"):
            raise SqlError(f"a view named {name!r} already exists (CREATE OR REPLACE VIEW "
                           "replaces it)", sql, span_of(target))
        query = tree.expression
        given = width(query.copy())  # planning expands views in place
        if len(columns) > given:
            raise SqlError(f"CREATE VIEW {name} names {len(columns)} columns, but its query "
                           f"gives {given}", sql, span_of(target))
        temporary = properties is not None  # only TEMP passes the check above
        self.by_name[name.lower()] = View(name, _unplaced(query), tuple(columns), temporary)
        return pa.table({"Count": pa.array([], pa.int64())})

    def drop(self, tree: exp.Drop, sql: str) -> pa.Table:
        """Run ``DROP VIEW [IF EXISTS] v``."""
        unsupported = [k for k, v in tree.args.items() if v and k not in (
            "this", "kind", "exists", "tables")]
        if unsupported or len(tree.args.get("tables") or []) != 1:
            raise UnsupportedSql("this form of DROP VIEW is not supported (DROP VIEW [IF "
                                 "EXISTS] v is)")
        target = tree.args["tables"][0]
        if target.name.lower() not in self.by_name:
            if not tree.args.get("exists"):
                raise SqlError(f"no view named {target.name!r}", sql, span_of(target))
        self.forget(target.name)
        return pa.table({"Success": pa.array([], pa.bool_())})

    def expanded(self, tree: exp.Expression, sql: str) -> exp.Expression:
        """``tree`` with every table reference naming a view replaced by its subquery, views
        inside views too (in place)."""
        if not self.by_name:
            return tree
        for _ in range(_DEPTH):
            found = [(table, view) for table in tree.find_all(exp.Table)
                     for view in [self._view_of(table)] if view is not None]
            if not found:
                return tree
            for table, view in found:
                table.replace(_subquery(table, view, sql))
        raise SqlError(f"the view {found[0][1].name!r} reads itself (through {_DEPTH} views)",
                       sql, None)

    def _view_of(self, table: exp.Table) -> View | None:
        if not table.name or table.args.get("db") or table.args.get("catalog") or \
                table.this.args.get("quoted") and os.sep in table.name or \
                cte_of(table, fold=True) is not None:
            return None
        return self.by_name.get(table.name.lower())


def _subquery(table: exp.Table, view: View, sql: str) -> exp.Subquery:
    """``(query) AS alias(columns)`` for a reference to ``view``: its own alias and column
    names first, then the view's."""
    if table.args.get("version") is not None:
        raise SqlError(f"FOR SYSTEM_TIME reads an array's history; {view.name!r} is a view",
                       sql, span_of(table))
    if table.args.get("sample") is not None or table.args.get("joins") or \
            table.args.get("pivots"):
        raise UnsupportedSql(f"this use of the view {view.name!r} is not supported")
    alias = table.args.get("alias")
    written = [c.name for c in alias.columns] if alias is not None else []
    names = written + list(view.columns[len(written):])
    name = alias.this.copy() if alias is not None and alias.this else \
        exp.Identifier(this=table.name, quoted=table.this.args.get("quoted", False))
    return exp.Subquery(this=view.query.copy(), alias=exp.TableAlias(
        this=name, columns=[exp.Identifier(this=n, quoted=True) for n in names]))


def _unplaced(tree: exp.Expression) -> exp.Expression:
    """A copy of ``tree`` without the positions sqlglot noted in the CREATE statement."""
    tree = tree.copy()
    for node in tree.walk():
        for key in ("start", "end", "line", "col"):
            node.meta.pop(key, None)
    return tree
