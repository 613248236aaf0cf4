"""ASOF joins through sqlglot's optimizer and planner, to ``engine.asof_join``.

An ASOF join picks, for each left row, one right row among its candidates, so a condition on
the right table may not move below it: ``WHERE r.v <> 'a'`` after the join drops the rows
whose nearest match is 'a', where the same test in r's scan would match them to an older row.
sqlglot's optimizer treats an ASOF join as the join its side names, and pushes a WHERE
condition on the right table of an inner join into its scan.  So an inner ASOF join goes
through the optimizer with side LEFT (whose right table's WHERE conditions stay put; its left
table's may still move down, which is sound: each left row's match is its own), and its side
is given back after.  A condition in ON on the right table alone is moved into its scan by
the optimizer, as DuckDB applies it: it chooses among the candidates.

sqlglot's planner copies a join's side into the Join step's entry, and the engine's join step
reads it there: while it plans (``planned``), an ASOF join's side is ``ASOF`` or ``ASOF
LEFT`` (every planner rule that reads a side leaves one it does not know alone, and the right
table's WHERE conditions stay above the join: ``pushdown``).

ASOF RIGHT / FULL joins and ASOF ... USING are refused by name.
"""

from __future__ import annotations

from contextlib import contextmanager

from sqlglot import exp

from ..errors import UnsupportedSql

ASOF = "ASOF"
_INNER = "asof_inner"  # meta flag: an inner ASOF join going through the optimizer as LEFT


def _asof_joins(tree: exp.Expression) -> list[exp.Join]:
    return [join for join in tree.find_all(exp.Join)
            if (join.args.get("method") or "").upper() == ASOF]


def before_optimizer(tree: exp.Expression) -> exp.Expression:
    """Inner ASOF joins marked and given side LEFT (in place); the unsupported refused."""
    for join in _asof_joins(tree):
        side = (join.side or "").upper()
        if side not in ("", "INNER", "LEFT"):
            raise UnsupportedSql(f"ASOF {side} JOIN is not supported (ASOF JOIN and ASOF LEFT "
                                 "JOIN are)")
        if join.args.get("using"):
            raise UnsupportedSql("ASOF JOIN ... USING is not supported: write the condition "
                                 "with ON (ON l.k = r.k AND l.t >= r.t)")
        if side != "LEFT":
            join.set("side", "LEFT")
            join.meta[_INNER] = True
    return tree


def after_optimizer(tree: exp.Expression) -> exp.Expression:
    """The inner ASOF joins' side given back (in place)."""
    for join in _asof_joins(tree):
        if join.meta.pop(_INNER, False):
            join.set("side", None)
    return tree


@contextmanager
def planned(tree: exp.Expression):
    """While sqlglot plans ``tree``: each ASOF join's side ``ASOF`` or ``ASOF LEFT``."""
    joins = [(join, join.side) for join in _asof_joins(tree)]
    for join, side in joins:
        join.set("side", f"{ASOF} LEFT" if (side or "").upper() == "LEFT" else ASOF)
    try:
        yield tree
    finally:
        for join, side in joins:
            join.set("side", side or None)
