"""Dense ranks: each value's place among a column's distinct values in ascending SQL order
(int64 from 0, equal values one rank), what steps compare in place of values numpy cannot
order itself -- a fold's arg_max key, a window frame's min / max, a quantile's INTERVALs, an
ASOF join's nearest value.

Equal as SQL compares them: -0.0 and 0.0 one rank, NaN above every number, INTERVALs by
their normalised parts (``1 month`` = ``30 days``, ``interval_compare``).  NULLs, masked by
the callers, rank anywhere.  Numbers, dates, times and timestamps are ranked by numpy's
vectorised sort (``np.unique``'s inverse sorts stably, ten times slower), strings, decimals
and floats holding NaN by Arrow's rank.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import UnsupportedSql
from .interval_compare import normalised_parts
from .nested_order import is_nested, nested_ranks
from .range_join import ordered_numbers
from .value_types import type_name


def dense_ranks(values: pa.Array, what: str) -> np.ndarray:
    """The dense ranks of ``values`` (see above; lists, structs and MAPs: ``nested_order``);
    UnsupportedSql naming ``what`` (``"ASOF JOIN"``, ``"arg_max"``) for values tdbsql cannot
    order."""
    if pa.types.is_interval(values.type):
        parts = normalised_parts(values)
        return ranks_in_order(np.lexsort(parts[::-1]), parts)
    numbers = ordered_numbers(values)
    if numbers is not None:
        return ranks_in_order(np.argsort(numbers[0]), [numbers[0]])
    if is_nested(values):  # lists, structs, MAPs: as ORDER BY sorts them
        return nested_ranks(values)
    try:
        ranked = pc.rank(values, sort_keys="ascending", tiebreaker="dense")
    except pa.ArrowNotImplementedError:
        raise UnsupportedSql(f"{what}: ordering {type_name(values.type)} values is not "
                             "supported") from None
    return np.asarray(ranked, np.int64) - 1


def ranks_in_order(order: np.ndarray, keys: list[np.ndarray]) -> np.ndarray:
    """Dense ranks of rows given ``order``, the rows sorted by ``keys`` (numpy arrays, the
    first the most significant): a new rank wherever a key differs from the row before."""
    steps = np.zeros(len(order), np.int64)
    if len(order) > 1:
        ordered = [key[order] for key in keys]
        steps[1:] = np.any([key[1:] != key[:-1] for key in ordered], axis=0)
    ranks = np.empty(len(order), np.int64)
    ranks[order] = np.cumsum(steps)
    return ranks
