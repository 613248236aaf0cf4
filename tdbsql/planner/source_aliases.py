"""A FROM source named like a source of an enclosing query gets a name of its own.

``SELECT t FROM db q WHERE EXISTS (SELECT 1 FROM (SELECT t FROM (...) q) r WHERE r.t = q.t)``:
``q.t`` in the EXISTS is the outer row's ``t`` (the inner ``q`` is only visible inside ``r``).
sqlglot's optimizer makes the inner ``q`` a CTE named ``q`` and merges ``r`` into the EXISTS,
which then reads ``FROM q AS q WHERE q.t = q.t``: the correlation is lost and every row passed
(a wrong answer).  Its merge renames an inner source only when it clashes with a source of
the query it merges into, not with a name a correlated column reads from further out.

So, after ``qualify`` (every column names its source), a source whose name an enclosing query
reads as a correlated column is renamed, with the columns that read it: ``(...) AS q_2``,
``q_2.t``.  (Other shadowing, like the optimizer's own ``(SELECT ... FROM emp AS e) AS e``,
is harmless and kept.)
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
    'SELECT q.a FROM t AS q WHERE EXISTS(SELECT 1 FROM (SELECT q_2.a FROM (SELECT a FROM u) AS q_2) AS r WHERE r.a = q.a)'
    """
    scopes = traverse_scope(expression)
    taken = {name for scope in scopes for name in scope.sources}
    # a CTE is merged into whichever subquery reads it: its sources must not take any name a
    # subquery reads from outside (``WITH big AS (SELECT * FROM emp ...) SELECT (SELECT
    # count(*) FROM big WHERE big.d < emp.d) FROM emp`` compared emp.d with itself)
    correlated = {column.table for scope in scopes for column in scope.external_columns}
    for scope in scopes:  # innermost first: a renamed inner source no longer clashes
        outer: set[str] = set()  # names an enclosing query reads from further out
        parent = scope.parent
        if scope.is_cte:
            outer |= correlated
        while parent is not None:
            outer |= {column.table for column in parent.external_columns}
            if parent.is_cte:
                outer |= correlated
            parent = parent.parent
        for name, (node, _) in list(scope.selected_sources.items()):
            if isinstance(node, exp.Query):  # a derived table: its alias is on the parens
                node = node.parent
            if name in outer and isinstance(node, (exp.Table, exp.Subquery)):
                new = _fresh(name, taken)
                taken.add(new)
                _rename(scope.expression, node, name, new)
    return expression


def _fresh(name: str, taken: set[str]) -> str:
    suffix = 2
    while f"{name}_{suffix}" in taken:
        suffix += 1
    return f"{name}_{suffix}"


def _rename(select: exp.Expression, node: exp.Expression, old: str, new: str) -> None:
    alias = node.args.get("alias")
    if alias is None:
        node.set("alias", exp.TableAlias(this=exp.to_identifier(new)))
    else:
        alias.set("this", exp.to_identifier(new))
    for column in select.find_all(exp.Column):
        if column.table == old:
            column.set("table", exp.to_identifier(new))
