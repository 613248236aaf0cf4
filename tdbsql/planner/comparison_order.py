"""Comparisons of a column with a constant written column first, before sqlglot simplifies.

sqlglot's simplifier (run by its ``pushdown_predicates`` and by ``planner.build``) merges two
comparisons of one column with constants -- ``x > 5 AND x >= 5`` is ``x > 5`` -- but when one
of them has the constant on the left it reads the wrong operator: ``x > 5 AND 5 <= x`` became
``x >= 5`` and ``x > 5 OR 5 <= x`` became ``x > 5``, wrong answers both.  Written ``x >= 5``
the pair merges right.  Only conditions (WHERE, HAVING, ON) are rewritten: a comparison in a
select list keeps its text, which names its column.
"""

from __future__ import annotations

from sqlglot import exp

_FLIPPED = {exp.LT: exp.GT, exp.GT: exp.LT, exp.LTE: exp.GTE, exp.GTE: exp.LTE}


def constants_right(tree: exp.Expression) -> exp.Expression:
    """``tree`` with the comparisons of its conditions written column first (in place).

    >>> import sqlglot
    >>> constants_right(sqlglot.parse_one("SELECT 1 < x FROM t WHERE 5 <= x AND x < 9")).sql()
    'SELECT 1 < x FROM t WHERE x >= 5 AND x < 9'
    """
    for clause in list(tree.find_all(exp.Where, exp.Having)):
        clause.set("this", column_first(clause.this))
    for join in list(tree.find_all(exp.Join)):
        if join.args.get("on") is not None:
            join.set("on", column_first(join.args["on"]))
    return tree


def column_first(condition: exp.Expression) -> exp.Expression:
    """``condition`` with each ``constant OP column`` as ``column OP' constant`` (in place
    but for the root, which is returned)."""
    for node in list(condition.find_all(*_FLIPPED)):
        if not node.this.find(exp.Column) and node.expression.find(exp.Column):
            flipped = _FLIPPED[type(node)](this=node.expression, expression=node.this)
            if node is condition:
                return flipped
            node.replace(flipped)
    return condition
