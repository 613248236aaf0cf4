"""``histogram(x)``: per group a MAP from each distinct non-NULL value of ``x`` to the number of
rows holding it (UBIGINT), its keys in ascending order, as DuckDB builds it; NULL for a group
without such a value.  Values are equal as GROUP BY finds them (``holistic.value_pairs``).
DuckDB's two-argument form (``histogram(x, [bin bounds])``) is ``histogram_bins``.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..errors import UnsupportedSql
from .dense_ranks import dense_ranks
from .grouping import Groups
from .hash_table import as_array
from .holistic import value_pairs


def histogram(values: pa.Array, groups: Groups, budget=None) -> pa.Array:
    """One MAP per group of ``groups`` counting the non-NULL ``values`` of its rows."""
    values = as_array(values)
    if pa.types.is_null(values.type):  # DuckDB's MAP("NULL", UBIGINT) has no Arrow type
        raise UnsupportedSql("histogram() of an untyped NULL is not supported")
    if budget is not None:
        budget.check(len(values) * 24, "histogram()")
    rows, ids, pairs = value_pairs(values, groups)
    keys = values.take(pa.array(rows[pairs.first]))  # each (group, value) pair's value
    counts = np.bincount(pairs.ids, minlength=pairs.count)
    group_of = ids[pairs.first]
    order = np.lexsort((dense_ranks(keys, "histogram"), group_of))  # by group, then value
    sizes = np.bincount(group_of, minlength=groups.count)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int32)
    empty = sizes == 0
    return pa.MapArray.from_arrays(pa.array(offsets), keys.take(pa.array(order)),
                                   pa.array(counts[order], pa.uint64()),
                                   type=pa.map_(values.type, pa.uint64()),
                                   mask=pa.array(empty) if empty.any() else None)


def check_arguments(count: int) -> None:
    """A window's histogram takes one argument here (DuckDB's bins form is not supported
    over a window)."""
    if count > 1:
        raise UnsupportedSql("histogram(x, bins) is not supported over a window: histogram "
                             "takes one argument there")
