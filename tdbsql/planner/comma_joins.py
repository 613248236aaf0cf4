"""A FROM list that mixes commas and explicit joins, as DuckDB reads it.

An explicit JOIN binds tighter than the comma: ``a, b JOIN c USING (k)`` is ``a CROSS JOIN (b
JOIN c USING (k))``.  sqlglot keeps the FROM list flat and joins left to right, ``(a, b) JOIN c``:

- the same rows for an INNER / LEFT / CROSS join with ON (DuckDB lets such an ON read the
  tables before the comma too, as the flat reading does);
- not for USING (sqlglot binds ``k`` in the first table that has it, ``a`` if ``a`` has a ``k``,
  where DuckDB takes it from ``b``) or NATURAL, nor for RIGHT / FULL (``a``'s rows would not be
  repeated for each unmatched row of ``c``).

A comma starts a *group*: the table after it and the explicit joins that follow.  The groups are
cross-joined, so their order does not change the rows; one group with USING / NATURAL / RIGHT /
FULL joins is moved to the front, where the flat reading is right.  That changes the column
order of ``SELECT *``, so a bare ``*`` there is refused, as is a second such group and a moved
group whose ON reads a table of another group.  An ON that names a table joined only after it
is an error, as in DuckDB.
"""

from __future__ import annotations

from sqlglot import exp

from ..errors import SqlError, UnsupportedSql
from .parse import span_of


def order_comma_joins(tree: exp.Expression, sql: str) -> exp.Expression:
    """Check and reorder every SELECT's FROM list (in place)."""
    for select in list(tree.find_all(exp.Select)):
        joins = select.args.get("joins") or []
        if joins and select.args.get("from_") is not None:
            _one_select(select, joins, sql)
    return tree


def is_comma(join: exp.Join) -> bool:
    """A bare comma in a FROM list (no ON / USING / kind / side / method)."""
    return not (join.args.get("on") or join.args.get("using") or join.kind or join.side
                or join.method)


def _name(node: exp.Expression) -> str:
    return node.alias_or_name


def _one_select(select: exp.Select, joins: list[exp.Join], sql: str) -> None:
    first = select.args["from_"].this
    sources = [first] + [join.this for join in joins]
    position = {_name(s): i for i, s in enumerate(sources)}
    for i, join in enumerate(joins, start=1):  # an ON may not read a table joined later
        for column in _columns(join.args.get("on")):
            if position.get(column.table, -1) > i:
                ident = column.args.get("table")
                raise SqlError(f'Referenced table "{column.table}" not found (it is joined '
                               "after this ON)", sql, span_of(ident if ident is not None
                                                              else column))
    if not any(is_comma(j) for j in joins) or not any(not is_comma(j) for j in joins):
        return
    groups: list[list[int]] = [[0]]  # indexes into ``sources``
    for i, join in enumerate(joins, start=1):
        if is_comma(join):
            groups.append([i])
        else:
            groups[-1].append(i)
    special = [g for g in groups if any(_special(joins[i - 1]) for i in g[1:])]
    if not special or special[0] is groups[0] and len(special) == 1:
        return
    shape = select.args["from_"].sql(dialect="duckdb") + " " + \
        " ".join(j.sql(dialect="duckdb") for j in joins)
    if len(special) > 1:
        raise UnsupportedSql("a FROM list with USING / NATURAL / RIGHT / FULL joins after more "
                             f"than one comma is not supported: {shape!r}")
    if any(isinstance(e, exp.Star) or isinstance(e, exp.Column) and e.is_star and not e.table
           for e in select.expressions):
        raise UnsupportedSql("SELECT * over a FROM list with a USING / NATURAL / RIGHT / FULL "
                             f"join after a comma is not supported: {shape!r}")
    moved = special[0]
    own = {_name(sources[i]) for i in moved}
    for i in moved[1:]:
        for column in _columns(joins[i - 1].args.get("on")):
            if column.table in position and column.table not in own:
                raise UnsupportedSql(f"an ON reading {column.table!r}, before the comma, in a "
                                     "USING / NATURAL / RIGHT / FULL join group is not "
                                     f"supported: {shape!r}")
    order = moved + [i for g in groups if g is not moved for i in g]
    heads = {g[0] for g in groups}
    items = [first] + [join.this for join in joins]
    new_joins = [exp.Join(this=items[i]) if i in heads else joins[i - 1] for i in order[1:]]
    select.args["from_"].set("this", items[order[0]])
    select.set("joins", new_joins)


def _special(join: exp.Join) -> bool:
    return bool(join.args.get("using")) or bool(join.method) or \
        (join.side or "").upper() in ("RIGHT", "FULL")


def _columns(node: exp.Expression | None):
    if node is None:
        return []
    return [c for c in node.find_all(exp.Column) if c.table]
