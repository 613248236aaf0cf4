"""Statistical aggregates with small per-group states, in DuckDB's arithmetic.

Moments -- ``skewness(x)``, ``kurtosis(x)`` (bias corrected), ``kurtosis_pop(x)``, ``sem(x)``
(the standard error of the mean, sqrt(var_pop(x) / n)): plain sums of x, x^2, x^3, x^4 per group (``kernels.statistics.power_sums``) and DuckDB's formulas over
them, NULL where DuckDB gives NULL (too few values, no spread) and DuckDB's "out of range"
error for an infinite result.

Pairs -- ``corr``, ``covar_pop``, ``covar_samp``, ``regr_slope``, ``regr_intercept``,
``regr_r2``, ``regr_count``, ``regr_avgx``, ``regr_avgy``, ``regr_sxx``, ``regr_syy``,
``regr_sxy``, each over ``(y, x)`` (the first argument is y, as DuckDB names them) and only the
rows where both are not NULL: the count, means, co-moment and both squared deviation sums of
DuckDB's Welford updates, and plain sums of x and y (``kernels.statistics.comoments``).  A
constant x gives NaN for corr and regr_slope, NULL for regr_intercept and regr_r2 (1 when y is
constant too), as DuckDB.  ``regr_count`` is an UINTEGER (uint32); every other result DOUBLE.

Both states fold across batches (``engine.partial_aggregate``): power sums add; pair states
combine by Chan's update, a part's mean differences weighted by its count (``fold_state``).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..errors import DataError, SqlError
from ..kernels import statistics as kernels
from .grouping import kernel_valid
from .hash_table import float64_values
from .value_types import type_name

MOMENTS = ("skewness", "kurtosis", "kurtosis_pop", "sem")
PAIRS = ("corr", "covar_pop", "covar_samp", "regr_slope", "regr_intercept", "regr_r2",
         "regr_count", "regr_avgx", "regr_avgy", "regr_sxx", "regr_syy", "regr_sxy")
_EPSILON = np.finfo(np.float64).eps


def numbers(func: str, values: pa.Array) -> pa.Array:
    """``values`` when they are numbers (integers, floats, decimals, booleans), else
    DuckDB's binder error."""
    kind = values.type
    if not (pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_decimal(kind)
            or pa.types.is_boolean(kind) or pa.types.is_null(kind)):
        raise SqlError(f"No function matches the given name and argument types "
                       f"'{func}({type_name(kind)})': {func}() takes numbers")
    return values


def _doubles(func: str, values: pa.Array) -> np.ndarray:
    """The values as float64 (a NULL-typed column, all NULL: zeros)."""
    values = numbers(func, values)
    if pa.types.is_null(values.type):
        return np.zeros(len(values))
    return float64_values(values, copy=False)


def state(func: str, values: pa.Array, groups, other: pa.Array | None = None) -> list[np.ndarray]:
    """The per-group state arrays of a moment or pair function (``other``: x of a pair)."""
    counts = np.zeros(groups.count, np.int64)
    if func in MOMENTS:
        sums = np.zeros((groups.count, 4))
        kernels.power_sums(_doubles(func, values), kernel_valid(values), groups.ids, counts,
                           sums)
        return [counts, *sums.T.copy()]
    pairs = np.zeros((groups.count, 7))
    kernels.comoments(_doubles(func, values), _doubles(func, other),
                      kernel_valid(values, other), groups.ids, counts, pairs)
    return [counts, *pairs.T.copy()]


def fold_state(func: str, columns: list[np.ndarray], ids: np.ndarray, count: int) -> list:
    """The states of several parts (rows of ``columns``, part ``i`` of group ``ids[i]``)
    combined into one per group."""
    def total(values):
        return np.bincount(ids, weights=values, minlength=count)

    counts = np.bincount(ids, weights=columns[0], minlength=count)
    if func in MOMENTS:
        return [np.rint(counts).astype(np.int64)] + [total(c) for c in columns[1:]]
    n, mean_x, mean_y, co, m2x, m2y, sum_x, sum_y = columns
    weight = n.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        whole = np.maximum(counts, 1)
        mx = total(weight * mean_x) / whole
        my = total(weight * mean_y) / whole
    dx = np.where(n > 0, mean_x - mx[ids], 0.0)
    dy = np.where(n > 0, mean_y - my[ids], 0.0)
    return [np.rint(counts).astype(np.int64), mx, my, total(co) + total(weight * dx * dy),
            total(m2x) + total(weight * dx * dx), total(m2y) + total(weight * dy * dy),
            total(sum_x), total(sum_y)]


def result(func: str, columns: list[np.ndarray]) -> pa.Array:
    """The function's value per group from its state."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        if func in MOMENTS:
            values, null = _moment(func, *columns)
        else:
            values, null = _pair(func, *columns)
    if func == "regr_count":
        return pa.array(values.astype(np.uint32), pa.uint32())
    if func in MOMENTS and func != "sem" and not np.isfinite(values[~null]).all():
        raise DataError("SKEW is out of range!" if func == "skewness"
                        else "Kurtosis is out of range!")
    return pa.array(values, pa.float64(), mask=null if null.any() else None)


def _moment(func, counts, s1, s2, s3, s4):
    n = counts.astype(np.float64)
    temp = 1 / n
    raw_m2 = s2 - s1 * s1 * temp
    if func == "sem":  # a rounding below 0 is no spread
        return np.sqrt(np.maximum(raw_m2, 0.0) * temp * temp), counts == 0
    if func == "skewness":
        flat = np.isfinite(raw_m2) & np.isfinite(s2) & \
            (np.abs(raw_m2) <= _EPSILON * np.maximum(1.0, np.abs(s2)))
        variance = temp * raw_m2
        null = (counts <= 2) | flat | (variance <= 0)  # NaN goes on: out of range
        div = np.sqrt(variance ** 3)
        scale = np.sqrt(n * (n - 1)) / (n - 2)
        values = scale * temp * (s3 - 3 * s2 * s1 * temp + 2 * s1 ** 3 * temp * temp) / div
        return np.where(null, 0.0, values), null
    m4 = temp * (s4 - 4 * s3 * s1 * temp + 6 * s2 * s1 * s1 * temp * temp
                 - 3 * s1 ** 4 * temp ** 3)
    m2 = temp * raw_m2
    null = (counts <= (3 if func == "kurtosis" else 1)) | (raw_m2 == 0) | (m2 <= 0)
    if func == "kurtosis_pop":
        values = m4 / (m2 * m2) - 3
    else:
        values = (n - 1) * ((n + 1) * m4 / (m2 * m2) - 3 * (n - 1)) / ((n - 2) * (n - 3))
    return np.where(null, 0.0, values), null


def _pair(func, counts, mean_x, mean_y, co, m2x, m2y, sum_x, sum_y):
    n = counts.astype(np.float64)
    empty = counts == 0
    var_x = np.where(counts > 1, m2x / n, 0.0)
    var_y = np.where(counts > 1, m2y / n, 0.0)
    cov = co / n
    if func == "regr_count":
        return counts, empty
    if func == "covar_pop":
        return cov, empty
    if func == "covar_samp":
        return co / (n - 1), counts < 2
    if func in ("regr_avgx", "regr_avgy"):
        return (sum_x if func == "regr_avgx" else sum_y) / n, empty
    if func in ("regr_sxx", "regr_syy"):
        return n * (var_x if func == "regr_sxx" else var_y), empty
    if func == "regr_sxy":
        return cov * n, empty
    spread = np.sqrt(var_x) * np.sqrt(var_y)
    corr = np.where(spread != 0, cov / spread, np.nan)
    if func == "corr":
        return corr, empty
    slope = np.where(var_x != 0, cov / var_x, np.nan)
    if func == "regr_slope":
        return slope, empty
    if func == "regr_intercept":
        return sum_y / n - slope * (sum_x / n), empty | np.isnan(slope)
    # regr_r2
    return np.where(var_y == 0, 1.0, corr ** 2), var_x == 0
