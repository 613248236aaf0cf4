"""Structs compared and sorted as DuckDB does: field by field in order, ``=`` / ``<>`` with
NULL fields equal to each other, ``<`` / ``>`` ... by the first differing field (a NULL field
above every value), as lists compare their elements (``list_compare``).  A NULL struct makes
a comparison NULL.  Structs of different field names (DuckDB compares them by position)
are refused.

In: two struct values (arrays or scalars), the row count and ``compare`` (the evaluator's
comparison of two field arrays, with its coercions).  Out: a boolean array (a scalar when
both inputs are).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..errors import UnsupportedSql
from .frame import broadcast
from .list_compare import true_mask
from .list_values import scalar_if_constant
from .struct_values import field_at
from .value_types import null_like, null_rows, type_name, valid_rows


def compare_structs(op: str, left, right, rows: int, compare):
    """``left <op> right`` for structs; ``compare(op, a, b)`` compares field arrays."""
    if any(pa.types.is_null(v.type) for v in (left, right)):  # s = NULL
        shaped = next(v for v in (left, right) if pa.types.is_struct(v.type))
        return null_like(shaped, pa.bool_())
    names = [[f.name.lower() for f in v.type] for v in (left, right)
             if pa.types.is_struct(v.type)]
    if len(names) != 2 or names[0] != names[1]:
        raise UnsupportedSql(f"comparing {type_name(left.type)} with {type_name(right.type)} "
                             "(only STRUCTs of the same field names compare)")
    if op in ("greater", "greater_equal"):
        return compare_structs(op.replace("greater", "less"), right, left, rows, compare)
    inputs = (left, right)
    rows = max((len(v) for v in inputs if not isinstance(v, pa.Scalar)), default=rows)
    left, right = broadcast(left, rows), broadcast(right, rows)
    equal = np.ones(rows, dtype=bool)
    less = np.zeros(rows, dtype=bool)  # the first differing field below, from the last back
    for position in reversed(range(left.type.num_fields)):
        a, b = field_at(left, position), field_at(right, position)
        a_null, b_null = null_rows(a), null_rows(b)
        same = _both_and(compare, "equal", a, b) | (a_null & b_null)
        if op != "equal" and op != "not_equal":
            less = _both_and(compare, "less", a, b) | (~a_null & b_null) | (same & less)
        equal &= same
    result = {"equal": equal, "not_equal": ~equal, "less": less,
              "less_equal": less | equal}[op]
    valid = valid_rows(left) & valid_rows(right)
    return scalar_if_constant(pa.array(result, pa.bool_(), mask=~valid), *inputs)


def _both_and(compare, op: str, a: pa.Array, b: pa.Array) -> np.ndarray:
    """Where neither field is NULL and ``a <op> b`` (a NULL-typed field: nowhere)."""
    if pa.types.is_null(a.type) or pa.types.is_null(b.type):
        return np.zeros(len(a), dtype=bool)
    return true_mask(compare(op, a, b)) & ~null_rows(a) & ~null_rows(b)


def struct_sort_columns(name: str, values, desc: bool, nulls_first: bool, field_columns):
    """The columns and sort keys that order structs as ``compare_structs`` does: the
    struct's own NULL flag, then each field (a NULL field last, first when descending).
    ``field_columns`` is ``sort_step.sort_columns`` for the fields."""
    columns = {f"{name}_null": pa.array(null_rows(values))}
    keys = [(f"{name}_null", "descending" if nulls_first else "ascending", "at_end")]
    for position in range(values.type.num_fields):
        more, more_keys = field_columns(f"{name}_{position}", field_at(values, position),
                                        desc, desc)
        columns.update(more)
        keys += more_keys
    return columns, keys
