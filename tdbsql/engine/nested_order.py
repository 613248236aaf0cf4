"""LIST, STRUCT and MAP values in the order ORDER BY sorts them (``sort_step.sort_columns``:
lists element by element, structs field by field, MAPs as their lists of (key, value)
entries, as DuckDB compares them): min / max per group (NULLs skipped; a group of only NULLs
gives NULL), and dense ranks (``dense_ranks``: equal values, as GROUP BY finds them, one
rank), which window frames' min / max and arg_max's keys compare.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .value_types import null_rows


def is_nested(array: pa.Array) -> bool:
    return pa.types.is_list(array.type) or pa.types.is_large_list(array.type) or \
        pa.types.is_struct(array.type) or pa.types.is_map(array.type)


def nested_ranks(values: pa.Array) -> np.ndarray:
    """Dense ranks (int64 from 0) of nested ``values`` in ORDER BY's order."""
    from .grouping import group_ids
    from .dense_ranks import ranks_in_order

    return ranks_in_order(_order(values), [group_ids([values]).ids])


def _order(values: pa.Array) -> np.ndarray:
    """The rows of ``values`` in ascending order, NULLs last."""
    from .sort_step import sort_columns

    columns, keys = sort_columns("v", values, False, False)
    return pc.sort_indices(pa.table(columns), sort_keys=keys).to_numpy()


def nested_extremes(array: pa.Array, group_ids: np.ndarray, groups: int,
                    want_max: bool) -> pa.Array:
    """Each group's least (greatest: ``want_max``) value of ``array``."""
    order = _order(array)
    order = order[~null_rows(array)[order]]
    if want_max:
        order = order[::-1]
    bests = np.full(groups, -1, np.int64)
    bests[group_ids[order][::-1]] = order[::-1]  # each group's first row in that order
    return array.take(pa.array(bests, mask=bests < 0))
