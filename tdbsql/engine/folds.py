"""Aggregates that fold a group's values one by one, in DuckDB's semantics.

=========================  ===============================================  ================
function                   value (a group without values: NULL)             state per batch
=========================  ===============================================  ================
product(x)                 DOUBLE product (an integer product never         product
                           overflows: it is a DOUBLE, as in DuckDB)
bit_and / bit_or / bit_xor the integers' bits, in the argument's type       the batch's
kahan_sum (fsum,           DOUBLE compensated sum                           sum
sumkahan)
favg(x)                    DOUBLE compensated sum / count; NaN once the     sum, count
                           sum passes the doubles (an infinity, overflow)
geomean (geometric_mean)   ``exp(avg(ln(x)))``, DuckDB's macro: a value     sum of ln, count
                           <= 0 gives NaN / 0
last(x)                    the value of the group's last row, NULL too      last value
arg_max / max_by (x, y),   x of the first row with the largest / smallest   (x, y) there
arg_min / min_by           y, among the rows where neither is NULL
arg_max_null, arg_min_null the same among the rows where y is not NULL       (x, y) there
                           (a NULL x can be the answer)
weighted_avg / wavg (x, w) DOUBLE sum(x * w) / sum(w) over the rows where     sum x*w, sum w
                           neither is NULL (weights summing to 0: NaN or inf)
=========================  ===============================================  ================

A state folds like the function itself (the product of the batches' products, ...), the
batches in input order, so ``last`` and the first-row tie rule of arg_max hold across them
(``engine.partial_aggregate``).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import SqlError
from ..kernels import statistics as kernels
from .dense_ranks import dense_ranks
from .grouping import Groups, aggregate, kernel_valid
from .hash_table import as_array, float64_values, int64_values
from .statistics import numbers
from .value_types import cast_value, type_name

_ARG_EXTREMES = ("arg_max", "arg_min", "arg_max_null", "arg_min_null")
FOLDS = ("product", "bit_and", "bit_or", "bit_xor", "kahan_sum", "favg", "geomean", "last",
         "weighted_avg", *_ARG_EXTREMES)
_BIT_OPERATIONS = {"bit_and": 0, "bit_or": 1, "bit_xor": 2}


def fold(func: str, values: pa.Array, groups: Groups, other: pa.Array | None = None) -> pa.Array:
    """One value per group of ``func`` (one of ``FOLDS``); ``other``: arg_max's y."""
    values = as_array(values)
    if func == "product":
        return _product(values, groups)
    if func in _BIT_OPERATIONS:
        return _bits(func, values, groups)
    if func == "kahan_sum":
        return aggregate("sum", _doubles(func, values), groups)
    if func in ("favg", "geomean"):
        return _mean(func, *state(func, values, groups))
    if func == "weighted_avg":
        return _weighted(*state(func, values, groups, other))
    if func == "last":
        rows = _last_rows(groups)
        return values.take(pa.array(rows, mask=rows < 0))
    return _arg_extreme(func, values, as_array(other), groups)


def state(func: str, values: pa.Array, groups: Groups, other: pa.Array | None = None) -> list:
    """A batch's state arrays (see the module docstring)."""
    if func == "favg":
        values = _doubles(func, values)
        return [aggregate("sum", values, groups), aggregate("count", values, groups)]
    if func == "geomean":
        logs = _logarithms(numbers(func, values))
        return [aggregate("sum", logs, groups), aggregate("count", logs, groups)]
    if func == "weighted_avg":
        x, w = (_doubles(func, as_array(v)) for v in (values, other))
        both = pc.and_(x.is_valid(), w.is_valid())
        products = pc.if_else(both, pc.multiply(x, w), None)
        return [aggregate("sum", products, groups), aggregate("sum", pc.if_else(both, w, None),
                                                              groups)]
    if func in _ARG_EXTREMES:
        rows = _best_rows(func, as_array(values), as_array(other), groups)
        taken = pa.array(rows, mask=rows < 0)
        return [as_array(values).take(taken), as_array(other).take(taken)]
    return [fold(func, values, groups, other)]


def fold_states(func: str, columns: list[pa.Array], groups: Groups) -> pa.Array:
    """The value per group from the states of several batches, in batch order."""
    if func in ("favg", "geomean"):
        return _mean(func, aggregate("sum", columns[0], groups),
                     pc.fill_null(aggregate("sum", columns[1], groups), 0))
    if func in _ARG_EXTREMES:
        return fold(func, columns[0], groups, columns[1])
    if func == "weighted_avg":
        return _weighted(aggregate("sum", columns[0], groups), aggregate("sum", columns[1], groups))
    return fold(func, columns[0], groups)  # the function of the batches' values


def _doubles(func: str, values: pa.Array) -> pa.Array:
    """kahan_sum's and favg's values as the DOUBLEs DuckDB sums (it binds them to DOUBLE):
    each value converted, then summed -- an integer sum converted afterwards could be past
    2**53 and differ, and pyarrow's cast refused it."""
    return cast_value(numbers(func, values), pa.float64())


def _product(values: pa.Array, groups: Groups) -> pa.Array:
    numbers("product", values)
    out = np.ones(groups.count)
    counts = np.zeros(groups.count, np.int64)
    if not pa.types.is_null(values.type):
        kernels.products(float64_values(values, copy=False), kernel_valid(values), groups.ids,
                         out, counts)
    return pa.array(out, pa.float64(), mask=counts == 0)


def _bits(func: str, values: pa.Array, groups: Groups) -> pa.Array:
    kind = values.type
    if pa.types.is_null(kind):
        return pa.nulls(groups.count, pa.int32())
    if not pa.types.is_integer(kind):
        raise SqlError(f"No function matches the given name and argument types "
                       f"'{func}({type_name(kind)})': {func}() takes integers")
    out = np.full(groups.count, -1 if func == "bit_and" else 0, np.int64)
    counts = np.zeros(groups.count, np.int64)
    kernels.bit_fold(int64_values(values, copy=False), kernel_valid(values), groups.ids,
                     _BIT_OPERATIONS[func], out, counts)
    if pa.types.is_uint64(kind):  # the bits are right; the int64 view only reads them signed
        result = pa.array(out.view(np.uint64), pa.uint64(), mask=counts == 0)
    else:  # every bit pattern of a narrower type folds back into its own range
        result = pc.cast(pa.array(out, pa.int64(), mask=counts == 0), kind, safe=False)
    return result


def _logarithms(values: pa.Array) -> pa.Array:
    numbers_ = float64_values(values) if not pa.types.is_null(values.type) \
        else np.zeros(len(values))
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.log(numbers_)
    return pa.array(logs, pa.float64(), mask=None if values.null_count == 0
                    else ~np.asarray(values.is_valid()))


def _mean(func: str, sums: pa.Array, counts: pa.Array) -> pa.Array:
    n = np.asarray(counts.to_numpy(zero_copy_only=False), np.float64)
    totals = pc.cast(sums, pa.float64()).fill_null(0).to_numpy(zero_copy_only=False)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        means = totals / np.maximum(n, 1)
        if func == "geomean":
            means = np.exp(means)
        else:
            # DuckDB's compensated sum past the doubles (an infinite value, an overflow):
            # its error term becomes inf - inf, and the mean NaN
            means = np.where(np.isinf(totals), np.nan, means)
    return pa.array(means, pa.float64(), mask=n == 0)


def _weighted(products: pa.Array, weights: pa.Array) -> pa.Array:
    """sum(x * w) / sum(w) per group, NULL for a group without a row holding both."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return pc.divide(pc.cast(products, pa.float64()), pc.cast(weights, pa.float64()))


def _last_rows(groups: Groups) -> np.ndarray:
    """Per group its last row, -1 for none."""
    last = np.full(groups.count, -1, np.int64)
    rows = np.flatnonzero(groups.ids >= 0)
    last[groups.ids[rows]] = rows  # written first to last: the last row stays
    return last


def _arg_extreme(func: str, values: pa.Array, other: pa.Array, groups: Groups) -> pa.Array:
    rows = _best_rows(func, values, other, groups)
    return values.take(pa.array(rows, mask=rows < 0))


def _best_rows(func: str, values: pa.Array, keys: pa.Array, groups: Groups) -> np.ndarray:
    """Per group the first row with the largest (arg_max) / smallest key among the rows where
    value and key are not NULL (the key alone, for the ``_null`` forms); -1 for none."""
    rows = np.full(groups.count, -1, np.int64)
    if pa.types.is_null(keys.type) or (pa.types.is_null(values.type)
                                       and not func.endswith("_null")):
        return rows
    if pa.types.is_floating(keys.type):
        numbers_ = float64_values(keys, copy=False)
    elif (pa.types.is_integer(keys.type) or pa.types.is_temporal(keys.type)
          or pa.types.is_boolean(keys.type)) and not pa.types.is_uint64(keys.type) \
            and not pa.types.is_interval(keys.type):
        numbers_ = int64_values(keys, copy=False)
    else:  # strings, decimals, UBIGINTs, intervals ...: their rank in SQL order
        numbers_ = dense_ranks(keys, func)
    best = np.zeros(groups.count, numbers_.dtype)
    valid = kernel_valid(keys) if func.endswith("_null") else kernel_valid(values, keys)
    kernels.arg_extreme(numbers_, valid, groups.ids, func.startswith("arg_max"), best, rows)
    return rows
