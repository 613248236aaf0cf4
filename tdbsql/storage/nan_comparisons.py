"""A DELETE comparing a float column with NaN (``f = 'NaN'``, ``f < 'nan'``,
``f IN ('NaN', 1.5)``).

SQL (DuckDB) takes NaN as equal to itself and above every number, where a TileDB delete commit
compares IEEE floats, on which NaN equals nothing: written as it is, ``f = NaN`` would delete
no cell.  So each comparison with NaN is written as one with an infinity that holds on the same
cells in SQL (``format.delete_condition.sql_truth`` orders NaN above every number too):

* ``f = NaN``, ``f >= NaN``: ``f > inf`` -- only NaN is above infinity;
* ``f <> NaN``, ``f < NaN``: ``f <= inf`` -- every number;
* ``f <= NaN``: ``f >= -inf`` -- every value;
* ``f > NaN``: ``f < -inf`` -- none.

The commit stores the negation, compared as IEEE floats: it removes every cell SQL deletes,
and besides those only NaN or NULL cells SQL keeps, which ``storage.delete_write_back`` writes
back.  An IN list holding NaN is ``f = NaN OR f IN (the other members)``.
"""

from __future__ import annotations

import math

import numpy as np

from ..format.delete_condition import ConditionOp, ValueNode

_AS_INFINITY = {
    ConditionOp.EQ: (ConditionOp.GT, math.inf), ConditionOp.GE: (ConditionOp.GT, math.inf),
    ConditionOp.NE: (ConditionOp.LE, math.inf), ConditionOp.LT: (ConditionOp.LE, math.inf),
    ConditionOp.LE: (ConditionOp.GE, -math.inf), ConditionOp.GT: (ConditionOp.LT, -math.inf),
}


def is_nan(value) -> bool:
    return isinstance(value, float) and math.isnan(value)


def nan_comparison(field: str, op: ConditionOp, dtype: np.dtype) -> ValueNode:
    """``field op NaN`` as the comparison with an infinity that SQL holds on the same cells."""
    new_op, bound = _AS_INFINITY[op]
    return ValueNode(field, new_op, np.array([bound], dtype=dtype).tobytes())
