"""Comparisons rewritten before sqlglot simplifies them, where its simplifier goes wrong.

A negated comparison is written as its complement (``negated_comparisons``): sqlglot turned
``NOT (i > 3) AND NOT (i >= 3)`` into ``i <= 3``, a wrong answer; a quantified one swaps its
quantifier too (``NOT (x = ANY (q))`` is ``x <> ALL (q)``).  A comparison of a column
with a constant is written column first (``constants_right``, ``column_first``): the
simplifier (run by sqlglot's ``pushdown_predicates`` and by ``planner.build``) merges two
comparisons of one column with constants -- ``x > 5 AND x >= 5`` is ``x > 5`` -- but with the
constant on the left in one of them it reads the wrong operator: ``x > 5 AND 5 <= x`` became
``x >= 5`` and ``x > 5 OR 5 <= x`` became ``x > 5``, wrong answers both.  Only conditions
(WHERE, HAVING, ON) are turned around: a comparison in a select list keeps its text, which
names its column.
"""

from __future__ import annotations

from sqlglot import exp

# ``a OP b`` is ``b FLIPPED[OP] a`` (the planner's other readers of comparisons use it too)
FLIPPED = {exp.LT: exp.GT, exp.GT: exp.LT, exp.LTE: exp.GTE, exp.GTE: exp.LTE}


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
    for node in list(condition.find_all(*FLIPPED)):
        if not node.this.find(exp.Column) and node.expression.find(exp.Column) and \
                not isinstance(node.expression, (exp.Any, exp.All)):  # 5 < ANY (q) stays
            flipped = FLIPPED[type(node)](this=node.expression, expression=node.this)
            if node is condition:
                return flipped
            node.replace(flipped)
    return condition


_COMPLEMENTS = {exp.EQ: exp.NEQ, exp.NEQ: exp.EQ, exp.LT: exp.GTE, exp.GTE: exp.LT,
                exp.GT: exp.LTE, exp.LTE: exp.GT}


def negated_comparisons(tree: exp.Expression) -> exp.Expression:
    """``NOT (a < b)`` written as ``a >= b`` (and so on; in place): the same under SQL's
    three-valued logic, NaN included (DuckDB orders it above every number).  sqlglot's
    simplification mishandles negated comparisons on one column: it turned
    ``NOT (i > 3) AND NOT (i >= 3)`` into ``i <= 3`` -- a wrong answer -- while it simplifies
    ``i <= 3 AND i < 3`` right."""
    for node in list(tree.find_all(exp.Not)):
        inner = node.this.unnest() if isinstance(node.this, exp.Paren) else node.this
        complement = _COMPLEMENTS.get(type(inner))
        if complement is not None:
            node.replace(complement(this=inner.this, expression=_negated_quantifier(inner)))
    return tree


def _negated_quantifier(comparison: exp.Expression) -> exp.Expression:
    """The right side of ``comparison``'s complement: ``NOT (x = ANY (q))`` is
    ``x <> ALL (q)``, and ``NOT (x < ALL (q))`` ``x >= ANY (q)`` -- not ``x <> ANY (q)``
    (the same under three-valued logic, an empty ``q`` included)."""
    right = comparison.expression
    query = right.this.unnest() if isinstance(right, (exp.Any, exp.All)) else None
    if isinstance(right, exp.Any):
        return exp.All(this=query)  # each as sqlglot parses it
    if isinstance(right, exp.All):
        return exp.Any(this=exp.Subquery(this=query) if isinstance(query, exp.Query) else query)
    return right
