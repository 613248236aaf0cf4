"""Hash aggregation: GROUP BY keys -> dense group ids -> one aggregate value per group.

In: key columns (pyarrow arrays of any type) and value columns.  Out: ``Groups`` (a group id per
row, dense ``0..count-1`` in first-appearance order, and each group's first row) and, per
aggregate call, a pyarrow array of length ``groups.count``.

Keys become group ids in ``engine/hash_table.py``; the aggregates run in
``kernels/aggregate.py`` over values read straight from the Arrow buffers (copied only when
their type or memory is not what the kernels take: int64 / float64, writable, contiguous).

Result types follow DuckDB: count -> int64; sum of integers -> int64, or decimal128(38, 0) when
a sum does not fit (DuckDB's HUGEINT); sum of floats, avg, stddev/var -> float64; sum of
decimal(p, s) -> decimal128(38, s); min/max keep the input type; bool_and/bool_or -> bool.
A group without non-NULL values gives NULL (count gives 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InternalError, UnsupportedSql
from ..kernels import aggregate as agg_kernels
from ..kernels import group_order
from .decimal_values import unscaled_doubles
from .interval_compare import group_extremes
from .nested_order import is_nested, nested_extremes
from .hash_table import (
    NO_ROWS, as_array, float64_values, group_rows, int64_values, is_integer_like, key_codes,
    valid_mask,
)
from .value_types import storage_integers

AGGREGATES = ("count_star", "count", "sum", "avg", "min", "max", "stddev_samp", "stddev_pop",
              "var_samp", "var_pop", "bool_and", "bool_or")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_RUNS_FROM = 32  # rows per group change from which float sums take the run kernel


@dataclass(frozen=True)
class Groups:
    """Group id of every row (int64, dense, first-appearance order), the group count, and
    the first row of every group (-1 for a group without rows)."""

    ids: np.ndarray
    count: int
    first: np.ndarray

    @cached_property
    def sizes(self) -> np.ndarray:
        """Rows per group (computed once: ``count(*)`` and ``count`` of columns without NULLs
        all are these)."""
        sizes = np.zeros(self.count, np.int64)
        agg_kernels.count_valid(self.ids, NO_ROWS, sizes)
        return sizes

    @cached_property
    def changes(self) -> int:
        """How often the group id changes from one row to the next (few: rows come in long
        runs of one group, which ``kernels.aggregate.sum_float_runs`` sums faster)."""
        ids = self.ids
        return int(np.count_nonzero(ids[1:] != ids[:-1])) if len(ids) > 1 else 0

    def row_order(self) -> tuple[np.ndarray, np.ndarray]:
        """``rows_by_group`` of these groups."""
        return rows_by_group(self.ids, self.count)

    def subset(self, rows: np.ndarray) -> Groups:
        """The groups of the rows at ``rows``, numbered as here: every group stays, those
        without any of these rows get first row -1.  ``rows`` are taken in the order given
        (ascending, or an aggregate's ORDER BY): a group's first row is its first there."""
        ids = np.ascontiguousarray(self.ids[rows])
        return Groups(ids, self.count, first_rows(ids, self.count))

    @classmethod
    def single(cls, nrows: int) -> Groups:
        """All ``nrows`` rows in one group (an aggregate without GROUP BY; also over 0 rows)."""
        first = np.array([0 if nrows else -1], np.int64)
        return cls(np.zeros(nrows, np.int64), 1, first)


def first_rows(ids: np.ndarray, count: int) -> np.ndarray:
    """Per group ``0 .. count - 1`` the first row holding its id, -1 for none (rows with id
    -1 belong to no group)."""
    first = np.full(count, -1, np.int64)
    rows = np.flatnonzero(ids >= 0)[::-1]
    first[ids[rows]] = rows  # written last to first: the first row stays
    return first


def rows_by_group(ids: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """(the rows ordered by their id ``0 .. count - 1``, each group's rows in input order;
    where each group starts in that order, ``count + 1`` offsets): a stable sort of dense ids,
    by counting (``kernels.group_order``)."""
    order = np.empty(len(ids), np.int64)
    starts = np.zeros(count + 1, np.int64)
    group_order.rows_by_group(np.require(ids, np.int64, ["C", "W"]), starts, order)
    return order, starts


def group_ids(keys: list[pa.Array | pa.ChunkedArray]) -> Groups:
    """Dense group ids (first-appearance order) of the rows of the key columns."""
    lengths = {len(key) for key in keys}
    if len(lengths) > 1:
        raise InternalError(f"GROUP BY key columns differ in length: {sorted(lengths)}")
    if not keys:
        raise InternalError("group_ids needs at least one key column (use Groups.single)")
    nrows = lengths.pop()
    built = group_rows([code for key in keys for code in key_codes(key)], nrows)
    return Groups(built.ids, built.count, built.first)


# --- aggregates ----------------------------------------------------------------------------


def aggregate(func: str, values: pa.Array | pa.ChunkedArray | None, groups: Groups, *,
              distinct: bool = False) -> pa.Array:
    """One value per group of ``func`` (see ``AGGREGATES``) over ``values``."""
    func = func.lower()
    if func not in AGGREGATES:
        raise UnsupportedSql(f"aggregate function {func}() is not supported")
    ids = groups.ids
    if ids.dtype != np.int64 or not ids.flags.c_contiguous or not ids.flags.writeable:
        # ids built elsewhere (e.g. a read-only view) would cost the kernels a new
        # specialisation
        groups = Groups(np.require(ids, np.int64, ["C", "W"]), groups.count, groups.first)
    if func == "count_star":
        return pa.array(groups.sizes, pa.int64())
    if values is None:
        raise InternalError(f"{func}() needs an argument")
    array = _values_array(values, len(groups.ids))
    if distinct:
        array, groups = distinct_pairs(array, groups)
    return _AGGREGATORS[func](func, array, groups)


def _values_array(values, nrows: int) -> pa.Array:
    if isinstance(values, pa.Scalar):
        return pa.repeat(values, nrows)
    array = as_array(values)
    if len(array) != nrows:
        raise InternalError(f"aggregate input has {len(array)} rows, groups have {nrows}")
    return array


def distinct_pairs(array: pa.Array, groups: Groups) -> tuple[pa.Array, Groups]:
    """Keep the first row of every distinct (group, value) pair."""
    pairs = group_rows([groups.ids] + key_codes(array), len(array))
    rows = np.sort(pairs.first)
    return array.take(pa.array(rows)), Groups(groups.ids[rows], groups.count, groups.first)


def kernel_valid(*arrays: pa.Array) -> np.ndarray:
    """uint8 validity for the kernels: 1 where no array is NULL (empty = no NULLs)."""
    valid = None
    for array in arrays:
        mask = valid_mask(array)
        if mask is not None:
            valid = mask if valid is None else valid & mask
    return NO_ROWS if valid is None else valid


def _with_nulls(values: np.ndarray, counts: np.ndarray, arrow_type: pa.DataType,
                min_count: int = 1) -> pa.Array:
    mask = counts < min_count
    return pa.array(values, arrow_type, mask=mask if mask.any() else None)


def _kind(arrow_type: pa.DataType) -> str:
    if pa.types.is_floating(arrow_type):
        return "float"
    if pa.types.is_decimal(arrow_type):
        return "decimal"
    if pa.types.is_integer(arrow_type) or pa.types.is_boolean(arrow_type):
        return "int"
    if is_integer_like(arrow_type):
        return "temporal"
    if pa.types.is_null(arrow_type):
        return "null"
    return "other"


def _unsupported(func: str, array: pa.Array) -> UnsupportedSql:
    return UnsupportedSql(f"{func}() of a {array.type} column is not supported")


def _count(func, array, groups) -> pa.Array:
    if array.null_count == 0:
        return pa.array(groups.sizes, pa.int64())
    counts = np.zeros(groups.count, np.int64)
    if array.null_count < len(array):
        agg_kernels.count_valid(groups.ids, kernel_valid(array), counts)
    return pa.array(counts, pa.int64())


def _sum(func, array, groups) -> pa.Array:
    kind = _kind(array.type)
    if kind == "null":
        return pa.nulls(groups.count, pa.int64())
    if kind == "int":
        return _integer_sum(array, groups)
    if kind == "float":
        sums, counts = _float_sums(array, groups)
        return _with_nulls(sums, counts, pa.float64())
    if kind == "decimal":
        return _arrow_grouped("sum", _widen_decimal(array), groups)
    raise _unsupported(func, array)


def _integer_sum(array: pa.Array, groups: Groups) -> pa.Array:
    values, valid = int64_values(array, copy=False), kernel_valid(array)
    if not pa.types.is_uint64(array.type):
        sums = np.zeros(groups.count, np.int64)
        counts = np.zeros(groups.count, np.int64)
        if not agg_kernels.sum_int(values, valid, groups.ids, sums, counts):
            return _with_nulls(sums, counts, pa.int64())
    exact, counts = _exact_sums(values, valid, array.type, groups)
    return exact_integers([None if count == 0 else total
                           for total, count in zip(exact, counts.tolist())])


def exact_integers(values: list) -> pa.Array:
    """Python ints (or None) as int64 when every one fits, else exactly as decimal128(38, 0)
    (DuckDB's HUGEINT results)."""
    if all(v is None or _INT64_MIN <= v <= _INT64_MAX for v in values):
        return pa.array(values, pa.int64())
    return pa.array([None if v is None else Decimal(v) for v in values], pa.decimal128(38, 0))


def _exact_sums(values, valid, arrow_type, groups) -> tuple[list[int], np.ndarray]:
    """Per-group sums as Python ints (no overflow) and non-NULL counts."""
    highs = np.zeros(groups.count, np.int64)
    lows = np.zeros(groups.count, np.int64)
    counts = np.zeros(groups.count, np.int64)
    unsigned = pa.types.is_uint64(arrow_type)
    agg_kernels.sum_int_split(values, unsigned, valid, groups.ids, highs, lows, counts)
    return [(high << 32) + low for high, low in zip(highs.tolist(), lows.tolist())], counts


def _float_sums(array: pa.Array, groups: Groups) -> tuple[np.ndarray, np.ndarray]:
    sums = np.zeros(groups.count, np.float64)
    compensations = np.zeros(groups.count, np.float64)
    valid = kernel_valid(array)
    values = float64_values(array, copy=False)
    if len(valid):
        counts = np.zeros(groups.count, np.int64)
        agg_kernels.sum_float(values, valid, groups.ids, sums, compensations, counts)
    else:  # every row of a group counts
        counts = groups.sizes.copy()
        if groups.changes * _RUNS_FROM < len(groups.ids):
            agg_kernels.sum_float_runs(values, groups.ids, sums, compensations)
        else:
            agg_kernels.sum_float(values, valid, groups.ids, sums, compensations, counts)
    finite = np.isfinite(sums)  # inf/NaN sums: the compensation is meaningless
    sums[finite] += compensations[finite]
    return sums, counts


def _widen_decimal(array: pa.Array) -> pa.Array:
    if pa.types.is_decimal128(array.type):
        return pc.cast(array, pa.decimal128(38, array.type.scale))
    return array


def _avg(func, array, groups) -> pa.Array:
    kind = _kind(array.type)
    if kind == "null":
        return pa.nulls(groups.count, pa.float64())
    if kind == "int":
        means, counts = _integer_means(array, groups)
        return _with_nulls(means, counts, pa.float64())
    if kind == "float":
        sums, counts = _float_sums(array, groups)
    elif kind == "decimal":  # DuckDB: the unscaled sum / (count * 10**scale), one rounding
        totals = _arrow_grouped("sum", _widen_decimal(array), groups)
        counts = np.asarray(_count(func, array, groups))
        sums = unscaled_doubles(totals.fill_null(0)) / 10.0 ** array.type.scale
    else:
        raise _unsupported(func, array)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = sums / np.maximum(counts, 1)
    return _with_nulls(means, counts, pa.float64())


def _integer_means(array: pa.Array, groups: Groups) -> tuple[np.ndarray, np.ndarray]:
    """avg of integers: int64 sums / counts when no sum overflows, else exact Python-int sums
    (``int / int`` rounds correctly)."""
    values, valid = int64_values(array, copy=False), kernel_valid(array)
    sums = np.zeros(groups.count, np.int64)
    counts = np.zeros(groups.count, np.int64)
    if not pa.types.is_uint64(array.type) and not agg_kernels.sum_int(values, valid,
                                                                      groups.ids, sums, counts):
        return sums / np.maximum(counts, 1), counts
    exact, counts = _exact_sums(values, valid, array.type, groups)
    means = [total / count if count else 0.0 for total, count in zip(exact, counts.tolist())]
    return np.array(means, np.float64), counts


def _min_max(func, array, groups) -> pa.Array:
    kind = _kind(array.type)
    want_max = func == "max"
    if kind == "null":
        return pa.nulls(groups.count, array.type)
    if pa.types.is_interval(array.type):  # compared with a month as 30 days, as DuckDB
        return group_extremes(array, groups.ids, groups.count, want_max)
    if is_nested(array):  # lists, structs, MAPs: in ORDER BY's order
        return nested_extremes(array, groups.ids, groups.count, want_max)
    if kind in ("int", "temporal", "float") and not pa.types.is_uint64(array.type):
        if kind == "float":
            values, result_type = float64_values(array, copy=False), pa.float64()
        else:
            values, result_type = int64_values(array, copy=False), pa.int64()
        out = np.zeros(groups.count, values.dtype)
        counts = np.zeros(groups.count, np.int64)
        agg_kernels.min_max(values, kernel_valid(array), groups.ids, want_max, out, counts)
        return restore_type(_with_nulls(out, counts, result_type), array.type)
    # strings (bytewise, i.e. UTF-8 code point order, as DuckDB), decimals, uint64, ...
    try:
        return _arrow_grouped(func, array, groups)
    except pa.ArrowNotImplementedError as err:
        raise _unsupported(func, array) from err


def restore_type(result: pa.Array, arrow_type: pa.DataType) -> pa.Array:
    """int64 / float64 min/max results back to the input type (temporal types through their
    width)."""
    if pa.types.is_temporal(arrow_type):
        return pc.cast(result, storage_integers(arrow_type)).view(arrow_type)
    return pc.cast(result, arrow_type)


def _variance(func, array, groups) -> pa.Array:
    if _kind(array.type) == "null":
        return pa.nulls(groups.count, pa.float64())
    counts, _, squares = variance_state(func, array, groups)
    return variance_result(func, counts, squares)


def variance_state(func: str, array: pa.Array, groups: Groups):
    """Per group: (count, mean, sum of squared deviations) of the non-NULL values (Welford)."""
    if _kind(array.type) not in ("int", "float", "decimal", "null"):
        raise _unsupported(func, array)
    counts = np.zeros(groups.count, np.int64)
    means = np.zeros(groups.count, np.float64)
    squares = np.zeros(groups.count, np.float64)
    if _kind(array.type) != "null":
        agg_kernels.welford(float64_values(array, copy=False), kernel_valid(array), groups.ids,
                            counts, means, squares)
    return counts, means, squares


def variance_result(func: str, counts: np.ndarray, squares: np.ndarray) -> pa.Array:
    """var/stddev (samp or pop) from per-group counts and sums of squared deviations."""
    sample = func.endswith("_samp")
    with np.errstate(invalid="ignore", divide="ignore"):
        result = squares / np.maximum(counts - 1 if sample else counts, 1)
    if not sample:
        result[counts == 1] = 0.0  # as DuckDB, even for a lone NaN or infinity
    if func.startswith("stddev"):
        result = np.sqrt(result)
    return _with_nulls(result, counts, pa.float64(), min_count=2 if sample else 1)


def _bool_and_or(func, array, groups) -> pa.Array:
    if _kind(array.type) == "null":
        return pa.nulls(groups.count, pa.bool_())
    if not pa.types.is_boolean(array.type):
        raise _unsupported(func, array)
    out = np.zeros(groups.count, np.int64)
    counts = np.zeros(groups.count, np.int64)
    # over 0/1 values AND is the minimum, OR the maximum
    agg_kernels.min_max(int64_values(array, copy=False), kernel_valid(array), groups.ids,
                        func == "bool_or", out, counts)
    return _with_nulls(out.astype(np.bool_), counts, pa.bool_())


def _arrow_grouped(func: str, array: pa.Array, groups: Groups) -> pa.Array:
    """``func`` per group through pyarrow's hash aggregation, NULL for groups without rows."""
    table = pa.table({"group": pa.array(groups.ids, pa.int64()), "value": array})
    result = table.group_by("group", use_threads=False).aggregate([("value", func)])
    positions = np.full(groups.count, -1, np.int64)
    present = result["group"].to_numpy()
    keep = present >= 0
    positions[present[keep]] = np.arange(result.num_rows)[keep]
    taken = result[f"value_{func}"].take(pa.array(positions, mask=positions < 0))
    return as_array(taken)


_AGGREGATORS = {"count": _count, "sum": _sum, "avg": _avg, "min": _min_max, "max": _min_max,
                "stddev_samp": _variance, "stddev_pop": _variance, "var_samp": _variance,
                "var_pop": _variance, "bool_and": _bool_and_or, "bool_or": _bool_and_or}

__all__ = ["AGGREGATES", "Groups", "aggregate", "exact_integers", "group_ids", "restore_type",
           "variance_result", "variance_state"]
