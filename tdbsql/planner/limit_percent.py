"""``LIMIT p PERCENT`` / ``LIMIT p%`` (DuckDB): the first ``p``% of the rows.

DuckDB takes ``floor(p / 100 * n)`` of the ``n`` rows the query has before its OFFSET (so
``LIMIT 50% OFFSET 8`` of ten rows is rows 9 and 10); ``p`` must lie between 0 and 100, and
``LIMIT NULL%`` is no limit.  ``p`` is a number constant here (DuckDB also takes an expression).

sqlglot's planner reads a LIMIT as an integer; a percentage is taken off the statement while
its steps are planned and set on the step that carries the LIMIT as a ``PercentLimit`` (a
float, not ``inf``, so every rule that keeps a step with a LIMIT apart does so for it too);
the engine works out its rows with ``limit_rows`` once it knows how many the step has.
"""

from __future__ import annotations

import math

from sqlglot import exp, planner

from ..errors import SqlError, UnsupportedSql
from .parse import span_of


class PercentLimit(float):
    """A step's ``LIMIT p%``: ``p``."""

    def __str__(self) -> str:
        return f"{float(self):g}%"

    def __int__(self) -> int:  # a missed ``limit_rows`` fails loudly, not as p rows
        raise TypeError("a LIMIT percentage has no row count of its own: use limit_rows")


def is_percent(limit: exp.Expression | None) -> bool:
    options = limit.args.get("limit_options") if isinstance(limit, exp.Limit) else None
    return options is not None and bool(options.args.get("percent"))


def check_percent(limit: exp.Limit, sql: str) -> None:
    """A ``LIMIT p%`` the engine runs: ``p`` a number constant from 0 to 100 (or NULL)."""
    count = limit.expression
    if isinstance(count, exp.Null):
        return
    value = number_constant(count)
    if value is None:
        raise UnsupportedSql(f"{limit.sql(dialect='duckdb')!r}: a LIMIT percentage must be a "
                             "number constant")
    if not 0 <= value <= 100:
        raise SqlError("Limit percent out of range, should be between 0% and 100%", sql,
                       span_of(count))


def limit_rows(limit: float, rows: int) -> float:
    """How many of a step's ``rows`` its LIMIT keeps (``inf``: all)."""
    if isinstance(limit, PercentLimit):
        return math.floor(float(limit) / 100 * rows)
    return limit


def number_constant(node: exp.Expression) -> float | None:
    """A number literal's value (signed), or None for anything else."""
    return float(node.to_py()) if node.is_number else None


_plain_step = planner.Step.from_expression.__func__


def _step_with_percent(cls, expression: exp.Expression, ctes=None) -> planner.Step:
    limit = expression.args.get("limit")
    if not is_percent(limit):
        return _plain_step(cls, expression, ctes)
    expression.set("limit", None)  # put back below: the step keeps the statement's nodes
    try:
        step = _plain_step(cls, expression, ctes)
    finally:
        expression.set("limit", limit)
    step.limit = PercentLimit(number_constant(limit.expression))
    return step


planner.Step.from_expression = classmethod(_step_with_percent)
