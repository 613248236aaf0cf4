"""Compute a repeated subexpression of an aggregate's operands once.

sqlglot plans ``SUM(a * (1 - b))`` and ``SUM(a * (1 - b) * (1 + c))`` (TPC-H Q1) as an
Aggregate step with two operands, ``_a_0 = a * (1 - b)`` and ``_a_1 = a * (1 - b) * (1 + c)``,
evaluated in order into the step's input.  Rewriting the second as ``_a_0 * (1 + c)`` saves a
multiplication and a subtraction per row; the value is the same expression, so the same value.
"""

from __future__ import annotations

from sqlglot import exp, planner

_NOT_SHARED = (exp.Subquery, exp.Exists, exp.AggFunc, exp.Window)


def share_operands(plan: planner.Plan) -> planner.Plan:
    """Rewrite, in every Aggregate step, each operand subtree equal to an earlier operand as a
    reference to that operand (in place; returns ``plan``)."""
    for step in plan.dag:
        if isinstance(step, planner.Aggregate) and len(step.operands) > 1:
            step.operands = _shared(step.operands)
    return plan


def _shared(operands: tuple) -> tuple:
    earlier: list[tuple[exp.Expression, str]] = []
    rewritten = []
    for operand in operands:
        body = operand.unalias()
        if isinstance(operand, exp.Alias) and not body.find(*_NOT_SHARED):
            for expression, name in sorted(earlier, key=lambda pair: -_size(pair[0])):
                body = _replace(body, expression, name)
            earlier.append((operand.unalias(), operand.alias))
            operand = exp.alias_(body, operand.alias, quoted=False) if body is not \
                operand.unalias() else operand
        rewritten.append(operand)
    return tuple(rewritten)


def _replace(body: exp.Expression, expression: exp.Expression, name: str) -> exp.Expression:
    if body == expression or not isinstance(expression, (exp.Binary, exp.Func, exp.Paren,
                                                         exp.Unary, exp.Case, exp.Cast)):
        return body  # the whole operand repeated (left alone) or too small to be worth it
    return body.transform(lambda node: exp.column(name, quoted=True) if node == expression
                          else node, copy=True)


def _size(node: exp.Expression) -> int:
    return sum(1 for _ in node.walk())
