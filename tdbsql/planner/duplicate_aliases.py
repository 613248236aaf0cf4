"""Two FROM sources of one SELECT under the same name (``FROM t, t``, ``FROM t a JOIN u a``).

DuckDB binds such a query as long as nothing names the shared name: ``SELECT count(*) FROM
t, t`` counts the pairs.  A reference through it -- ``t.x``, ``t.*``, or a bare ``*``, which
stands for every source's columns -- is its binder error, ``Ambiguous reference to table``.
sqlglot's optimizer would refuse the first kind ("Alias already used") and read the second
from one of the two sources (a wrong answer), so here, before it runs: a SELECT that names a
shared name is the SqlError, and in one that does not, every source after the first of a
name gets a name of its own (``t AS t__2``), which nothing reads.
"""

from __future__ import annotations

from sqlglot import exp

from ..errors import SqlError
from .parse import span_over
from .source_aliases import fresh_alias, names_in


def distinct_source_names(tree: exp.Expression, sql: str) -> exp.Expression:
    """``tree`` with duplicate FROM source names refused or renamed (in place)."""
    taken = None  # every name in the tree, gathered once (fresh_alias adds the new ones)
    for select in list(tree.find_all(exp.Select)):
        shared = _shared_names(select)
        if not shared:
            continue
        taken = names_in(tree) if taken is None else taken
        for name, sources in shared.items():
            reference = _reference(select, name)
            if reference is not None:
                raise SqlError(f'Ambiguous reference to table "{name}" (duplicate alias '
                               f'"{name}", explicitly alias one of the tables using "AS '
                               'my_alias")', sql, span_over(reference))
            for source in sources[1:]:
                _rename(source, fresh_alias(name, taken))
    return tree


def _shared_names(select: exp.Select) -> dict[str, list[exp.Expression]]:
    """The names (lower case) two or more FROM / JOIN sources of ``select`` go by."""
    by_name: dict[str, list[exp.Expression]] = {}
    for source in _sources(select):
        name = source.alias_or_name
        if name:
            by_name.setdefault(name.lower(), []).append(source)
    return {name: sources for name, sources in by_name.items() if len(sources) > 1}


def _reference(select: exp.Select, name: str) -> exp.Expression | None:
    """A node that reads the source ``name`` of ``select``: a column or ``name.*`` qualified
    by it -- in ``select``'s clauses or a subquery's that has no source of that name (a
    correlated ``(SELECT t.k)``) -- or a bare ``*`` of its own; None if there is none."""
    for item in select.expressions:
        if isinstance(item, exp.Star):
            return item
    for node in select.find_all(exp.Column):
        if node.table.lower() == name and not _shadowed(node, select, name):
            return node
    return None


def _shadowed(node: exp.Expression, select: exp.Select, name: str) -> bool:
    """Does a SELECT between ``node`` and ``select`` have a source of its own named ``name``?"""
    scope = node.parent
    while scope is not None and scope is not select:
        if isinstance(scope, exp.Select) and any(
                (source.alias_or_name or "").lower() == name for source in _sources(scope)):
            return True
        scope = scope.parent
    return False


def _sources(select: exp.Select) -> list[exp.Expression]:
    from_ = select.args.get("from_")
    return [] if from_ is None else \
        [from_.this] + [join.this for join in select.args.get("joins") or []]


def _rename(source: exp.Expression, fresh: str) -> None:
    alias = source.args.get("alias")
    identifier = exp.to_identifier(fresh, quoted=True)
    if alias is None:
        source.set("alias", exp.TableAlias(this=identifier))
    else:
        alias.set("this", identifier)
