"""``string_agg(x [, separator])`` (also ``listagg`` and ``group_concat``): per group, its values
as text joined by the separator.

DuckDB's semantics: NULL values are skipped; the others are printed as ``CAST(x AS VARCHAR)``
prints them (``functions_text.text_of``) and joined by the separator, ``','`` when none is
given, in the order the group's rows come: input order, or the call's own ORDER BY
(``engine.ordered_aggregates``).  A group without a value that is not NULL gives NULL, and so
does every group when the separator is NULL.  The separator must be a constant VARCHAR
expression (a literal, ``',' || ' '``, ``CAST(1 AS VARCHAR)``), as DuckDB's binder requires;
sqlglot plans it as an operand of the Aggregate step (or leaves it inline in a window call),
so it is looked up and evaluated once, over no rows (``separator_value``).

Streamed: a batch's state is its per-group joined text (NULL without values); the states of
all batches join again, in batch order, with the same separator (``engine.partial_aggregate``).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from ..errors import SqlError
from .functions_text import text_of
from .grouping import Groups

DEFAULT_SEPARATOR = ","
NOT_CONSTANT = 'The "separator" argument of string_agg must be a constant expression'
TOO_MANY = "No function matches string_agg with more than two arguments (a value and a separator)"
_NOT_CONSTANT = (exp.Column, exp.AggFunc, exp.Query, exp.Subquery, exp.Exists, exp.Window,
                 exp.Star)


def separator_value(call: exp.Expression, operands: dict[str, exp.Expression],
                    sql: str) -> str | None:
    """The separator of a string_agg call: the text, or None for a NULL separator.
    ``operands``: the step's operand expressions by name (the planner's ``_a_<i>``)."""
    def error(message: str) -> SqlError:
        return SqlError(message, sql)

    from .evaluate import evaluate  # it reaches the window functions, which reach this

    if call.args.get("on_overflow") is not None:  # sqlglot's name for a third argument
        raise error(TOO_MANY)
    node = call.args.get("separator")
    if node is None:
        return DEFAULT_SEPARATOR
    node = _resolved(node, operands)
    if node.find(*_NOT_CONSTANT) is not None:
        raise error(NOT_CONSTANT)
    return scalar_separator(evaluate(pa.table({}), node, sql), error)


def scalar_separator(value, error) -> str | None:
    """A separator's evaluated value as text (None for NULL); it must be a VARCHAR constant,
    else ``error(message)`` is raised."""
    if not isinstance(value, pa.Scalar):
        raise error(NOT_CONSTANT)
    if pa.types.is_null(value.type):
        return None
    if not (pa.types.is_string(value.type) or pa.types.is_large_string(value.type)):
        raise error(f"string_agg takes a VARCHAR separator, not {value.type} (cast it: "
                    "CAST(... AS VARCHAR))")
    return value.as_py()


def _resolved(node: exp.Expression, operands: dict[str, exp.Expression]) -> exp.Expression:
    """``node`` with references to the step's operands replaced by what they stand for."""
    def inline(part):
        if isinstance(part, exp.Column) and not part.table and part.name in operands:
            return _resolved(operands[part.name], operands).copy()
        return part

    return node.transform(inline, copy=True)


def joined_per_group(values: pa.Array, groups: Groups, separator: str | None) -> pa.Array:
    """Each group's values that are not NULL, as text, joined by ``separator`` in row order
    (NULL for a group without any, and for all groups when ``separator`` is None)."""
    if separator is None:
        return pa.nulls(groups.count, pa.string())
    valid = np.flatnonzero(values.is_valid().to_numpy(zero_copy_only=False))
    texts = text_of(values.take(pa.array(valid)))
    order, starts = groups.subset(valid).row_order()
    lists = pa.LargeListArray.from_arrays(pa.array(starts, pa.int64()),
                                          texts.take(pa.array(order)))
    joined = pc.binary_join(lists, separator)
    empty = np.diff(starts) == 0
    if empty.any():
        joined = pc.if_else(pa.array(empty), pa.scalar(None, joined.type), joined)
    return joined.cast(pa.string())
