"""``SELECT DISTINCT ON (keys) ...``: the first row of each key after ORDER BY, as DuckDB.

DuckDB keeps, for each distinct value of the keys (NULLs equal), the row that comes first in
the query's ORDER BY (any row without one), and then sorts and limits those rows; keys and
ORDER BY may name an output column (``kk``, ``1``) or be any expression, aggregates included.
It comes after QUALIFY and the window functions.  So the query is nested as:

    SELECT c1, ..., cn FROM (
        SELECT <select list>, <keys and ORDER BY terms not in it> FROM ... QUALIFY ...
    ) QUALIFY row_number() OVER (PARTITION BY <keys> ORDER BY <order>) = 1
    ORDER BY <order> LIMIT ... OFFSET ...

Unaliased select items are named ``__don_cN`` inside and given back their names outside (a
column's, or the expression as DuckDB prints it); with ``*`` the outer list is ``* EXCLUDE (the
added columns)`` and a key or ORDER BY term given by position is refused (``UnsupportedSql``):
which column it is is only known later.
"""

from __future__ import annotations

from sqlglot import exp

from ..errors import SqlError, UnsupportedSql
from .column_names import column_name
from .parse import span_of

_PREFIX = "__don_"
_MOVED = ("order", "limit", "offset")  # what the outer query takes over


def expand_distinct_on(tree: exp.Expression, sql: str) -> exp.Expression:
    """``tree`` with every ``SELECT DISTINCT ON`` nested as above (a copy when there is one)."""
    if not any(_distinct_on(s) for s in tree.find_all(exp.Select)):
        return tree
    tree = tree.copy()
    for select in reversed([s for s in tree.find_all(exp.Select) if _distinct_on(s)]):
        nested = _nest(select, sql)
        if select is tree:
            tree = nested
        else:
            select.replace(nested)
    return tree


def _distinct_on(select: exp.Select) -> list[exp.Expression] | None:
    distinct = select.args.get("distinct")
    on = distinct.args.get("on") if distinct is not None else None
    return list(on.expressions) if isinstance(on, exp.Tuple) else ([on] if on else None)


def _nest(select: exp.Select, sql: str) -> exp.Select:
    keys = _distinct_on(select)
    outer_parts = {name: select.args.get(name) for name in _MOVED}
    inner = select.copy()
    for name in (*_MOVED, "distinct", "with_"):
        inner.set(name, None)
    columns = _Columns(inner, sql)
    partition = [columns.ref(key) for key in keys]
    order = outer_parts["order"]
    ordered = [] if order is None else [
        exp.Ordered(this=columns.ref(o.this), desc=o.args.get("desc"),
                    nulls_first=o.args.get("nulls_first"))
        for o in columns.order_terms(order)]
    rank = exp.Window(this=exp.RowNumber(), partition_by=partition,
                      order=exp.Order(expressions=[o.copy() for o in ordered]) if ordered
                      else None)
    outer = exp.Select(expressions=columns.outputs(),
                       with_=select.args.get("with_"))
    outer.set("from_", exp.From(this=exp.Subquery(
        this=inner, alias=exp.TableAlias(this=exp.to_identifier(f"{_PREFIX}rows")))))
    outer.set("qualify", exp.Qualify(this=exp.EQ(this=rank, expression=exp.Literal.number(1))))
    if ordered:
        outer.set("order", exp.Order(expressions=ordered))
    for name in ("limit", "offset"):
        outer.set(name, outer_parts[name])
    return outer


class _Columns:
    """The inner query's select list, and the outer query's names for what it computes."""

    def __init__(self, inner: exp.Select, sql: str):
        self.inner, self.sql = inner, sql
        self.starred = any(item.is_star for item in inner.expressions)
        self.names: list[exp.Identifier | None] = []  # each item's inner name (None: a star)
        self.shown: list[exp.Identifier | None] = []  # the outer name of a renamed item
        self.added: list[str] = []
        items = []
        for i, item in enumerate(inner.expressions):
            shown = None
            if item.is_star:
                self.names.append(None)
            elif isinstance(item, exp.Alias):
                self.names.append(item.args["alias"])  # spelled as written: normalized alike
            else:
                shown = item.this.copy() if isinstance(item, exp.Column) else \
                    exp.to_identifier(column_name(item), quoted=True)
                item = exp.alias_(item, f"{_PREFIX}c{i}", quoted=True)
                self.names.append(item.args["alias"])
            self.shown.append(shown)
            items.append(item)
        inner.set("expressions", items)
        self.by_output = {}
        for item, name in zip(items, self.names):
            if name is None:
                continue
            self.by_output.setdefault(name.name.lower(), name)
            if isinstance(item.this, exp.Column) and name.name.startswith(_PREFIX):
                self.by_output.setdefault(item.this.name.lower(), name)  # SELECT k: "k"

    def ref(self, term: exp.Expression) -> exp.Column:
        """An outer reference to ``term``: an output column (by position or name), or a
        column added to the inner query for it."""
        position = _position(term)
        if position is not None:
            return exp.Column(this=self._at(position, term).copy())
        if isinstance(term, exp.Column) and not term.table \
                and term.name.lower() in self.by_output:
            return exp.Column(this=self.by_output[term.name.lower()].copy())
        name = f"{_PREFIX}x{len(self.added)}"
        self.inner.append("expressions", exp.alias_(term.copy(), name, quoted=True))
        self.added.append(name)
        return exp.column(name, quoted=True)

    def order_terms(self, order: exp.Order) -> list[exp.Ordered]:
        """The ORDER BY terms; ``ORDER BY ALL`` is every output column, left to right."""
        terms = order.expressions
        if len(terms) == 1 and isinstance(terms[0].this, exp.Var) \
                and terms[0].this.name.upper() == "ALL":
            if self.starred:
                raise UnsupportedSql("DISTINCT ON with ORDER BY ALL over * is not supported")
            every = terms[0]
            return [exp.Ordered(this=exp.Literal.number(i + 1), desc=every.args.get("desc"),
                                nulls_first=every.args.get("nulls_first"))
                    for i in range(len(self.names))]
        return terms

    def outputs(self) -> list[exp.Expression]:
        if self.starred:
            star = exp.Star(except_=[exp.column(name, quoted=True) for name in self.added])
            return [star] if self.added else [exp.Star()]
        return [exp.Column(this=name.copy()) if shown is None else
                exp.alias_(exp.Column(this=name.copy()), shown.copy())
                for name, shown in zip(self.names, self.shown)]

    def _at(self, position: int, term: exp.Expression) -> exp.Identifier:
        if self.starred:
            raise UnsupportedSql("DISTINCT ON with a column position over * is not supported "
                                 "(name the column)")
        if not 1 <= position <= len(self.names):
            raise SqlError(f"ORDER term out of range - should be between 1 and "
                           f"{len(self.names)}", self.sql, span_of(term))
        return self.names[position - 1]


def _position(term: exp.Expression) -> int | None:
    if isinstance(term, exp.Literal) and not term.is_string and term.this.isdigit():
        return int(term.this)
    return None
