"""Aggregate calls with ORDER BY among their arguments: ``string_agg(x, ',' ORDER BY y DESC)``,
``array_agg(x ORDER BY y)``, ``first(x ORDER BY y)``.

sqlglot plans the ordered argument as one operand of the Aggregate step: ``_a_0 = x ORDER BY y
DESC`` (an ``exp.Order`` whose ``this`` is the argument, maybe under DISTINCT), and the call
reads ``_a_0``.  The step evaluates the argument alone into that operand's column
(``OrderedArgument.argument``) and a call reading it takes its rows in the ORDER BY's order
(``ordered_rows``): a stable sort, so rows with equal keys keep their input order, each key
NULLS LAST unless it says otherwise, as DuckDB sorts.  Only array_agg, string_agg, first,
any_value, last and mode (a tie goes to the value first in that order) depend on the order of
their rows (``ORDER_SENSITIVE``); DuckDB drops the ORDER BY of every other aggregate
(``sum(x ORDER BY y)`` is ``sum(x)``), and so does the engine.

A DISTINCT aggregate may only be ordered by its argument (DuckDB: "In a DISTINCT aggregate,
ORDER BY expressions must appear in the argument list") or by constants; the first row of each
distinct value in that order stands for it.  A step with an ordered call is not folded batch by batch
(``engine.partial_aggregate``): the order is over all of a group's rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from ..errors import SqlError, UnsupportedSql
from .sort_step import sort_columns
from .value_types import plain

ORDER_SENSITIVE = ("array_agg", "string_agg", "first", "any_value", "last", "mode")


@dataclass(frozen=True)
class OrderedArgument:
    """An aggregate's argument written with ORDER BY (an operand of the step)."""

    argument: exp.Expression  # what the operand's column holds
    distinct: bool
    keys: tuple[exp.Ordered, ...]

    @classmethod
    def of(cls, operand: exp.Expression) -> OrderedArgument | None:
        """The ordered argument an operand stands for, None for any other operand."""
        if not isinstance(operand, exp.Order):
            return None
        argument, distinct = operand.this, isinstance(operand.this, exp.Distinct)
        if distinct:
            if len(argument.expressions) != 1:
                raise UnsupportedSql(f"{operand.sql(dialect='duckdb')!r}: DISTINCT over "
                                     "several columns")
            argument = argument.expressions[0]
        return cls(argument, distinct, tuple(operand.expressions))

    def check(self, sql: str) -> None:
        """DuckDB's rule for DISTINCT with ORDER BY (a constant key orders nothing)."""
        if self.distinct and any(key.this != self.argument and key.this.find(exp.Column)
                                 for key in self.keys):
            raise SqlError("In a DISTINCT aggregate, ORDER BY expressions must appear in the "
                           "argument list", sql)


def has_ordered_argument(step) -> bool:
    """Does any aggregate call of ``step`` read an argument with ORDER BY?"""
    return any(isinstance(operand.unalias(), exp.Order) for operand in step.operands)


def ordered_rows(keys: list[tuple[pa.Array, exp.Ordered]], rows: np.ndarray | None,
                 count: int) -> np.ndarray:
    """The rows (``0 .. count - 1``, or those of ``rows``) sorted stably by the ORDER BY keys
    (each key's values over all ``count`` rows with its ``exp.Ordered``)."""
    columns, sort_keys = {}, []
    for index, (values, ordered) in enumerate(keys):
        values = plain(values if rows is None else values.take(pa.array(rows)))
        key_columns, key_sorts = sort_columns(f"k{index}", values,
                                              bool(ordered.args.get("desc")),
                                              bool(ordered.args.get("nulls_first")))
        columns.update(key_columns)
        sort_keys += key_sorts
    if not columns:
        return np.arange(count, dtype=np.int64) if rows is None else rows
    order = pc.sort_indices(pa.table(columns), sort_keys=sort_keys).to_numpy()
    return order.astype(np.int64) if rows is None else rows[order]
