"""``UNION [ALL] BY NAME`` (DuckDB): the two sides' columns matched by name, not position.

The result has the left side's columns in its order, then the right side's that the left
lacks (names compared without regard to case, spelled as the left writes them); a side fills
the columns it lacks with NULL.  Each side becomes a SELECT of the result's columns, in order,
from the side as a derived table whose columns are renamed by position (``AS by_name__2(_bn0,
_bn1)``, a name no other in the query has: ``fresh_alias``; no name of the side needs to
survive the optimizer's quoting), so the set operation that follows is the ordinary one, by
position.  A name repeated within a side is DuckDB's binder error, spanning the repeated
item.  Nested ones are rewritten innermost first, so an inner side's names are the result's.
INTERSECT / EXCEPT BY NAME are DuckDB's parser errors (refused by ``build``).
"""

from __future__ import annotations

from sqlglot import exp

from ..errors import SqlError, UnsupportedSql
from .column_names import column_name
from .parse import span_over
from .source_aliases import fresh_alias, names_in
from .subquery_names import written_out


def union_by_name(tree: exp.Expression, schema: dict[str, dict[str, str]],
                  sql: str) -> exp.Expression:
    """``tree`` with every ``UNION [ALL] BY NAME`` written as a UNION by position."""
    taken = None  # every name in the tree, gathered once (fresh_alias adds the new ones)
    for union in reversed(list(tree.find_all(exp.Union))):
        if not union.args.get("by_name"):
            continue
        taken = names_in(tree) if taken is None else taken
        left, right = union.this, union.expression
        left_names, right_names = _names(left, schema, sql), _names(right, schema, sql)
        known = {name.lower() for name in left_names}
        names = left_names + [name for name in right_names if name.lower() not in known]
        union.set("this", _in_order(left, left_names, names, fresh_alias("by_name", taken)))
        union.set("expression", _in_order(right, right_names, names,
                                          fresh_alias("by_name", taken)))
        union.set("by_name", None)
    return tree


def _names(query: exp.Expression, schema, sql: str) -> list[str]:
    """The column names of one side (its first SELECT's), each ``*`` written out."""
    while isinstance(query, (exp.SetOperation, exp.Subquery)):
        query = query.this
    if not isinstance(query, exp.Select):
        raise UnsupportedSql(f"UNION BY NAME over {query.key.upper()} is not supported")
    items = query.expressions
    if any(item.is_star for item in items):
        items = written_out(query, schema)
        if items is None:
            raise UnsupportedSql("UNION BY NAME over a * whose columns are not known before "
                                 f"planning is not supported: {query.sql(dialect='duckdb')!r}")
    names = [column_name(item) for item in items]
    seen = set()
    for name, item in zip(names, items):
        if name.lower() in seen:
            raise SqlError("UNION (ALL) BY NAME operation doesn't support duplicate names in "
                           f"the SELECT list - the name {name!r} occurs multiple times", sql,
                           span_over(item) or span_over(query))
        seen.add(name.lower())
    return names


def _in_order(side: exp.Expression, own: list[str], names: list[str], alias: str) -> exp.Select:
    """``SELECT <names, NULL where the side lacks one> FROM (side) AS <alias>(...)``."""
    positions = {name.lower(): i for i, name in enumerate(own)}
    items = []
    for name in names:
        at = positions.get(name.lower())
        value = exp.Null() if at is None else exp.column(f"_bn{at}", alias, quoted=True)
        items.append(exp.alias_(value, name, quoted=True))
    source = exp.Subquery(this=side.this if isinstance(side, exp.Subquery) else side,
                          alias=exp.TableAlias(
                              this=exp.to_identifier(alias, quoted=True),
                              columns=[exp.to_identifier(f"_bn{i}", quoted=True)
                                       for i in range(len(own))]))
    return exp.select(*items).from_(source)
