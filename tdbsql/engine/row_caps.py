"""How many rows an array scan needs to produce at most: the OFFSET + LIMIT of the steps
above it, when those steps keep every row they read and add none.

sqlglot plans ``SELECT * FROM a LIMIT 10`` as a scan of the array and a projection over it
that holds the LIMIT (a Join step without joins); without a cap the scan would read the
whole array for ten rows.  The cap holds through steps that map each row to one row
(``streamed_result.row_by_row`` with no filter left after the pushdown) and that are the only
readers of the step below; an OFFSET on the way adds its rows (``SELECT * FROM (SELECT *
FROM a OFFSET 5) LIMIT 3`` needs 8).  An ORDER BY (a Sort step), a filter or a ``LIMIT p%``
ends it, since any of the array's rows could then be the ones kept.  No ORDER BY means any
rows will do, so the scan's first rows in scan order are the answer, as they are when it
reads everything.
"""

from __future__ import annotations

import math

from sqlglot import planner

from ..planner.limit_percent import PercentLimit
from .streamed_result import row_by_row


def row_caps(runner, plan: planner.Plan) -> dict[planner.Step, int]:
    """Array scan step -> the most rows it needs to produce, for the steps that have one."""
    caps = {}
    for step in plan.dag:
        if isinstance(step, planner.Scan) and not step.dependencies:
            cap = _cap_above(runner, step)
            if cap is not None:
                caps[step] = cap
    return caps


def _cap_above(runner, step: planner.Scan) -> int | None:
    """The cap the steps above ``step`` put on its rows (its own LIMIT first), or None."""
    skipped = 0  # the OFFSETs of the steps passed without a LIMIT
    while True:
        if isinstance(step.limit, PercentLimit):  # a share of every row: all are needed
            return None
        if step.limit != math.inf:
            return skipped + step.offset + int(step.limit)
        skipped += step.offset
        if len(step.dependents) != 1:
            return None
        step = next(iter(step.dependents))
        if len(step.dependencies) != 1 or not row_by_row(step) or \
                runner.residual(step) is not None:  # a filter: one row to one, or none
            return None

