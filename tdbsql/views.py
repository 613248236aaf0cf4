"""A connection's views, as DuckDB has them.

``CREATE [OR REPLACE] [TEMP] VIEW v [(a, b, ...)] AS query`` keeps ``query``, checked when the
view is made (its tables and columns must exist, at most as many names as it has columns);
``DROP VIEW [IF EXISTS] v`` forgets it.  A query naming ``v`` reads it as the subquery
``(query) AS v(a, b, ...)``: the optimizer merges it and pushes filters into it as into any
subquery, so a view over an array prunes as the query written out would.  A view names no
data: it reads its tables as they are when a query uses it.  View and table names are
case-insensitive and share one space (a table registered under a view's name replaces it);
a view that comes to read itself (``CREATE OR REPLACE VIEW v AS SELECT * FROM v``) is an
error when read.  A CTE around a view's reference named as a table the view reads would be
read in that table's place: refused (``UnsupportedSql``), DuckDB reading the table.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import pyarrow as pa
from sqlglot import exp

from .dml import empty_answer
from .errors import SqlError, UnsupportedSql
from .planner.column_names import column_name
from .planner.parse import span_of
from .planner.table_refs import cte_of
from .result import unique_names

@dataclass(frozen=True)
class View:
    name: str  # as written
    query: exp.Expression  # positions stripped: an error in it underlines no later statement
    columns: tuple[str, ...]  # its columns' names (given, else its query's; made unique)
    schema: pa.Schema  # its columns when made (SHOW ALL TABLES lists those, as DuckDB)
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

    def create(self, tree: exp.Create, sql: str, tables: set[str], schema_of) -> pa.Table:
        """Run ``CREATE VIEW``: ``tables`` are the registered names (lower case),
        ``schema_of(q)`` the columns the query tree ``q`` gives (planning it checks it)."""
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
        schema = schema_of(query.copy())  # planning expands views in place
        if len(columns) > len(schema):
            raise SqlError(f"CREATE VIEW {name} names {len(columns)} columns, but its query "
                           f"gives {len(schema)}", sql, span_of(target))
        # every column named, a repeated name made unique as DuckDB does (a, a_1, A_2)
        columns = unique_names(columns + schema.names[len(columns):])
        schema = pa.schema([field.with_name(name) for field, name in zip(schema, columns)])
        temporary = properties is not None  # only TEMP passes the check above
        self.by_name[name.lower()] = View(name, _unplaced(query), tuple(columns), schema,
                                          temporary)
        return empty_answer("Count")

    def drop(self, tree: exp.Drop, sql: str) -> pa.Table:
        """Run ``DROP VIEW [IF EXISTS] v``."""
        target = drop_target(tree, "VIEW")
        if target.name.lower() not in self.by_name:
            if not tree.args.get("exists"):
                raise SqlError(f"no view named {target.name!r}", sql, span_of(target))
        self.forget(target.name)
        return empty_answer("Success")

    def expanded(self, tree: exp.Expression, sql: str) -> exp.Expression:
        """``tree`` with every table reference naming a view replaced by its subquery, views
        inside views too (in place).  A select item reading a view keeps the name DuckDB
        gives it as written (``(SELECT max(i) FROM v)``, not the view's query)."""
        if not self.by_name or not any(self._view_of(t) for t in tree.find_all(exp.Table)):
            return tree
        for select in list(tree.find_all(exp.Select)):
            for item in list(select.expressions):
                if not isinstance(item, (exp.Alias, exp.Column, exp.Star)) and any(
                        self._view_of(t) for t in item.find_all(exp.Table)):
                    item.replace(exp.Alias(this=item.copy(), alias=exp.to_identifier(
                        column_name(item), quoted=True)))  # (exp.alias_ puts it in a subquery)
        self._expand(tree, sql, ())
        return tree

    def _expand(self, tree: exp.Expression, sql: str, reading: tuple[str, ...]) -> None:
        """Replace the view references in ``tree`` (``reading``: the views it is inside)."""
        for table in list(tree.find_all(exp.Table)):
            view = self._view_of(table)
            if view is None:
                continue
            if view.name.lower() in reading:
                raise SqlError(f"the view {view.name!r} reads itself (infinite recursion)",
                               sql, span_of(table))
            body = view.query.copy()
            self._expand(body, sql, (*reading, view.name.lower()))
            _refuse_capture(table, body, view)
            table.replace(_subquery(table, body, view, sql))

    def _view_of(self, table: exp.Table) -> View | None:
        if not table.name or table.args.get("db") or table.args.get("catalog") or \
                table.this.args.get("quoted") and os.sep in table.name or \
                cte_of(table, fold=True) is not None:
            return None
        return self.by_name.get(table.name.lower())


def drop_target(tree: exp.Drop, kind: str) -> exp.Table:
    """The one name ``DROP <kind> [IF EXISTS] name`` drops; any other form of DROP is
    UnsupportedSql."""
    unsupported = [k for k, v in tree.args.items() if v and k not in (
        "this", "kind", "exists", "tables")]
    if unsupported or len(tree.args.get("tables") or []) != 1:
        raise UnsupportedSql(f"this form of DROP {kind} is not supported (DROP {kind} [IF "
                             "EXISTS] name is)")
    return tree.args["tables"][0]


def _refuse_capture(table: exp.Table, body: exp.Expression, view: View) -> None:
    """A CTE around the reference named as a table the view reads would be read in its place
    (the view's query pasted there): refused, as DuckDB reads the view's own tables."""
    read = {t.name.lower() for t in body.find_all(exp.Table)
            if t.name and not t.args.get("db") and cte_of(t) is None}
    node = table.parent
    while node is not None:
        with_ = node.args.get("with_") if isinstance(node, exp.Query) else None
        for cte in with_.expressions if isinstance(with_, exp.With) else []:
            if cte.alias.lower() in read:
                raise UnsupportedSql(f"the CTE {cte.alias!r} hides the table {cte.alias!r} "
                                     f"that the view {view.name!r} reads: rename the CTE")
        node = node.parent


def _subquery(table: exp.Table, body: exp.Expression, view: View, sql: str) -> exp.Subquery:
    """``(body) AS alias(columns)`` for a reference to ``view`` (``body``: its query, views
    inside read through): its own alias and column names first, then the view's."""
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
    return exp.Subquery(this=body, alias=exp.TableAlias(
        this=name, columns=[exp.Identifier(this=n, quoted=True) for n in names]))


def _unplaced(tree: exp.Expression) -> exp.Expression:
    """A copy of ``tree`` without the positions sqlglot noted in the CREATE statement."""
    tree = tree.copy()
    for node in tree.walk():
        for key in ("start", "end", "line", "col"):
            node.meta.pop(key, None)
    return tree
