"""ASOF joins through sqlglot's optimizer and planner, to ``engine.asof_join``.

An ASOF join picks, for each left row, one right row among its candidates, so a condition on
the right table may not move below it: ``WHERE r.v <> 'a'`` after the join drops the rows
whose nearest match is 'a', where the same test in r's scan would match them to an older row.
sqlglot's optimizer treats an ASOF join as the join its side names, and pushes a WHERE
condition on the right table of an inner join into its scan.  So an inner ASOF join goes
through the optimizer with side LEFT (whose right table's WHERE conditions stay put; its left
table's may still move down, which is sound: each left row's match is its own), and an ASOF
RIGHT or FULL join with side FULL (no WHERE condition moves into either table: the left rows'
too decide which right rows are matched, and so which ones the join adds with NULLs); each
is given its side back after.  A condition in ON on the right table alone is moved into its
scan by the optimizer for an inner or LEFT ASOF join, as DuckDB applies it: it chooses among
the candidates.

``ASOF JOIN ... USING (k, t)`` goes through the optimizer as ``USING`` does (one merged column
for each name, bound as ``planner.using_columns`` binds it); after, the equality the
optimizer wrote for the last name becomes DuckDB's inequality, ``l.t >= r.t``
(``using_inequalities``).

sqlglot's planner copies a join's side into the Join step's entry, and the engine's join step
reads it there: while it plans (``planned``), an ASOF join's side is ``ASOF``, ``ASOF LEFT``,
``ASOF RIGHT`` or ``ASOF FULL`` (every planner rule that reads a side leaves one it does not
know alone, and the WHERE conditions stay above the join: ``pushdown``).
"""

from __future__ import annotations

from contextlib import contextmanager

from sqlglot import exp

from ..errors import UnsupportedSql
from .using_columns import using_equality, using_names

ASOF = "ASOF"
_SIDE = "asof_side"  # meta key: an ASOF join's own side while it goes through the optimizer


def _asof_joins(tree: exp.Expression) -> list[exp.Join]:
    return [join for join in tree.find_all(exp.Join)
            if (join.args.get("method") or "").upper() == ASOF]


def _own_side(join: exp.Join) -> str:
    """"", "LEFT", "RIGHT" or "FULL"."""
    side = (join.side or "").upper()
    return "" if side == "INNER" else side


def before_optimizer(tree: exp.Expression) -> exp.Expression:
    """Each ASOF join given the side the optimizer treats as it must be (in place)."""
    for join in _asof_joins(tree):
        side = _own_side(join)
        join.meta[_SIDE] = side
        join.set("side", "FULL" if side in ("RIGHT", "FULL") else "LEFT")
    return tree


def after_optimizer(tree: exp.Expression) -> exp.Expression:
    """The ASOF joins' own side given back (in place)."""
    for join in _asof_joins(tree):
        if _SIDE in join.meta:
            join.set("side", join.meta.pop(_SIDE) or None)
    return tree


def using_inequalities(tree: exp.Expression) -> exp.Expression:
    """In each ASOF join written with USING (optimized, its USING columns bound), the
    equality of the last name turned into ``left >= right`` (in place)."""
    for join in _asof_joins(tree):
        names = using_names(join)
        if not names:
            continue
        column = exp.column(names[-1], join.this.alias_or_name, quoted=True)
        equality, other = using_equality(join, column)
        if equality is None:  # no equality of two columns (``planner.using_columns``)
            raise UnsupportedSql(f"ASOF JOIN ... USING ({', '.join(names)}) here is not "
                                 "supported: write the condition with ON")
        equality.replace(exp.GTE(this=other.copy(), expression=column))
    return tree


@contextmanager
def planned(tree: exp.Expression):
    """While sqlglot plans ``tree``: each ASOF join's side ``ASOF`` and its own."""
    joins = [(join, join.side) for join in _asof_joins(tree)]
    for join, _ in joins:
        join.set("side", f"{ASOF} {_own_side(join)}".strip())
    try:
        yield tree
    finally:
        for join, side in joins:
            join.set("side", side or None)
