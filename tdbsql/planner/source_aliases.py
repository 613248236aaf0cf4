"""A FROM source named like a source of an enclosing query gets a name of its own.

``SELECT t FROM db q WHERE EXISTS (SELECT 1 FROM (SELECT t FROM (...) q) r WHERE r.t = q.t)``:
``q.t`` in the EXISTS is the outer row's ``t`` (the inner ``q`` is only visible inside ``r``).
sqlglot's optimizer makes the inner ``q`` a CTE named ``q`` and merges ``r`` into the EXISTS,
which then reads ``FROM q AS q WHERE q.t = q.t``: the correlation is lost and every row passed
(a wrong answer).  Its merge renames an inner source only when it clashes with a source of
the query it merges into, not with a name a correlated column reads from further out.

So, after ``qualify`` (every column names its source), a source whose name an enclosing query
reads as a correlated column is renamed, with the columns that read it: ``(...) AS q__2``,
``q__2.t`` (two underscores: sqlglot names the CTEs it makes ``q_2``, and would take
the same name).  So are all the sources of a derived table or CTE a subquery reads
correlated columns from: merged into the query around the subquery, it lends those columns
its source's name, which the subquery's own source may have (``SELECT (SELECT count(*) FROM
u WHERE u.id < b.id) FROM (SELECT * FROM u WHERE k > 1) b`` compared ``u.id < u.id``).
(Other shadowing, like the optimizer's own ``(SELECT ... FROM emp AS e) AS e``, is harmless
and kept.)
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.optimizer.scope import traverse_scope


def unshadowed_sources(expression: exp.Expression) -> exp.Expression:
    """Rename (in place) every source named like a correlated column of an enclosing scope.

    >>> import sqlglot
    >>> tree = sqlglot.parse_one("SELECT q.a FROM t AS q WHERE EXISTS (SELECT 1 FROM "
    ...     "(SELECT q.a FROM (SELECT a FROM u) AS q) AS r WHERE r.a = q.a)")
    >>> unshadowed_sources(tree).sql()
    'SELECT q.a FROM t AS q WHERE EXISTS(SELECT 1 FROM (SELECT "q__2".a FROM (SELECT a FROM u) AS "q__2") AS r WHERE r.a = q.a)'
    """
    scopes = traverse_scope(expression)
    taken = {name.lower() for scope in scopes for name in scope.sources}
    # a CTE is merged into whichever subquery reads it: its sources must not take any name a
    # subquery reads from outside (``WITH big AS (SELECT * FROM emp ...) SELECT (SELECT
    # count(*) FROM big WHERE big.d < emp.d) FROM emp`` compared emp.d with itself)
    correlated = {column.table for scope in scopes for column in scope.external_columns}
    read_outside = _read_from_outside(scopes)
    for scope in scopes:  # innermost first: a renamed inner source no longer clashes
        outer: set[str] = set()  # names an enclosing query reads from further out
        parent = scope.parent
        if scope.is_cte:
            outer |= correlated
        if id(scope.expression) in read_outside:
            outer |= set(scope.selected_sources)
        while parent is not None:
            outer |= {column.table for column in parent.external_columns}
            if parent.is_cte:
                outer |= correlated
            parent = parent.parent
        for name, (node, _) in list(scope.selected_sources.items()):
            if isinstance(node, exp.Query):  # a derived table: its alias is on the parens
                node = node.parent
            if name in outer and isinstance(node, (exp.Table, exp.Subquery)):
                _rename(scope, node, name, fresh_alias(name, taken))
    return expression


def _read_from_outside(scopes) -> set[int]:
    """The derived tables and CTEs (ids of their queries) a subquery reads correlated
    columns from.  Merged into the query around the subquery, such a table lends its
    columns its own source's name, and should the subquery have a source of that name
    (its own, or one merged into it), the correlated column reads the subquery's row:
    ``SELECT (SELECT count(*) FROM u WHERE u.id < b.id) FROM (SELECT * FROM u WHERE k > 1)
    b`` compared ``u.id < u.id``.  Their sources all get names of their own."""
    tables = set()
    for scope in scopes:
        for name in {column.table for column in scope.external_columns}:
            parent = scope.parent
            while parent is not None and name not in parent.sources:
                parent = parent.parent
            source = parent.sources[name] if parent is not None else None
            if source is not None and not isinstance(source, exp.Table) and \
                    (source.is_derived_table or source.is_cte):
                tables.add(id(source.expression))
    return tables


def names_in(tree: exp.Expression) -> set[str]:
    """Every name (lower-cased) written in ``tree``: the ``taken`` of ``fresh_alias``."""
    return {node.name.lower() for node in tree.find_all(exp.Identifier)}


def fresh_alias(name: str, taken: set[str]) -> str:
    """A new name for a source named ``name``: ``name__2``, ``name__3``... the first that no
    name of ``taken`` (lower-cased) is, without regard to case; added to ``taken``.  Two
    underscores: sqlglot names the CTEs it makes ``name_2``."""
    suffix = 2
    while f"{name}__{suffix}".lower() in taken:
        suffix += 1
    taken.add(f"{name}__{suffix}".lower())
    return f"{name}__{suffix}"


def _rename(scope, node: exp.Expression, old: str, new: str) -> None:
    """``node`` (a source of ``scope`` named ``old``) renamed ``new``, with the columns that
    read it: those of ``scope`` and of the queries nested in it that do not name a source
    ``old`` of their own (``(SELECT a.x FROM t AS a) AS a`` keeps its inner ``a.x``)."""
    alias = node.args.get("alias")
    if alias is None:
        node.set("alias", exp.TableAlias(this=exp.to_identifier(new, quoted=True)))
    else:
        alias.set("this", exp.to_identifier(new, quoted=True))
    for inner in scope.traverse():
        rebound, parent = False, inner
        while parent is not scope and parent is not None:
            rebound = rebound or old in parent.sources
            parent = parent.parent
        if rebound or parent is None:
            continue
        for column in inner.columns:
            if column.table == old:
                column.set("table", exp.to_identifier(new, quoted=True))
