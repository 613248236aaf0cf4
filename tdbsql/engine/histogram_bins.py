"""``histogram(x, [b1, b2, ...])``: DuckDB's binned histogram.  Per group a MAP from each bin's
upper bound to the number of non-NULL values ``x`` in it (UBIGINT): a value falls in the
first bin whose bound it does not exceed; every bin is listed (0 when empty), then, when
some value exceeds every bound, one more entry keyed by the largest value of x's type (an
integer type's maximum, a float's ``inf``, text's ``''``) counting those; a NaN counts in the
first bin, as DuckDB's lower bound search puts it.  Text compares by code point (DuckDB's
byte order of UTF-8).  The bounds are cast to x's type
(as DuckDB casts them: ``1.5`` is ``2`` for an INTEGER x), sorted, repeats dropped.  A group
without a non-NULL value gives NULL.

The bounds must be a constant list without NULLs (DuckDB's binder errors otherwise).  x of
integer, float, DECIMAL (binned as DOUBLEs, as DuckDB) and text types only: DuckDB's other
key types (dates, whose last key is its ``infinity``, booleans) are ``UnsupportedSql``, as
are DISTINCT and the window form.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..errors import SqlError, UnsupportedSql
from .grouping import Groups
from .hash_table import as_array
from .value_types import cast_value, null_rows, type_name


def binned_histogram(values: pa.Array, groups: Groups, bounds: pa.Scalar) -> pa.Array:
    """One MAP per group of ``groups`` binning the non-NULL ``values`` of its rows by the
    constant list ``bounds``."""
    values = as_array(values)
    if pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    if pa.types.is_decimal(values.type):  # DuckDB bins DECIMALs as DOUBLEs
        values = values.cast(pa.float64())
    if pa.types.is_large_string(values.type):
        values = values.cast(pa.string())
    kind = values.type
    if not (pa.types.is_integer(kind) or pa.types.is_floating(kind) or
            pa.types.is_string(kind)):
        raise UnsupportedSql(f"histogram(x, bins) of {type_name(kind)} values is not "
                             "supported (numbers and text are)")
    edges = _edges(bounds, kind)
    valid = ~null_rows(values)
    numbers = values.to_numpy(zero_copy_only=False)[valid]
    ids = groups.ids[valid]
    width = len(edges) + 1  # the bins, then the values above every bound
    bins = np.searchsorted(edges, numbers, side="left")
    if pa.types.is_floating(kind):  # DuckDB's lower_bound puts NaN in the first bin
        bins[np.isnan(numbers)] = 0
    slots = ids * width + bins
    counts = np.bincount(slots, minlength=groups.count * width).reshape(groups.count, width)
    has_values = np.bincount(ids, minlength=groups.count) > 0
    kept = np.zeros((groups.count, width), dtype=bool)
    kept[:, :-1] = has_values[:, None]
    kept[:, -1] = counts[:, -1] > 0
    top = _largest(kind)
    keys = np.broadcast_to(np.append(edges, top).astype(kind.to_pandas_dtype()),
                           (groups.count, width))
    offsets = np.concatenate([[0], np.cumsum(kept.sum(axis=1))]).astype(np.int32)
    return pa.MapArray.from_arrays(pa.array(offsets), pa.array(keys[kept], kind),
                                   pa.array(counts[kept], pa.uint64()),
                                   type=pa.map_(kind, pa.uint64()),
                                   mask=pa.array(~has_values) if not has_values.all() else None)


def _largest(kind: pa.DataType):
    """The key DuckDB gives the values above every bound: the type's largest value, a
    float's ``inf``, text's ``''``."""
    if pa.types.is_integer(kind):
        return np.iinfo(kind.to_pandas_dtype()).max
    return np.inf if pa.types.is_floating(kind) else ""


def _edges(bounds: pa.Scalar, kind: pa.DataType) -> np.ndarray:
    """The bounds as x's type, ascending, each once; DuckDB's errors for NULLs."""
    if not bounds.is_valid:
        raise SqlError("Histogram bin list cannot be NULL")
    if not (pa.types.is_list(bounds.type) or pa.types.is_large_list(bounds.type)):
        raise SqlError(f"histogram(x, bins) takes a list of bin bounds, got "
                       f"{type_name(bounds.type)}")
    items = bounds.values if bounds.values is not None else pa.array([], pa.null())
    if items.null_count:
        raise SqlError("Histogram bin entry cannot be NULL")
    try:
        cast = cast_value(items, kind)
    except ValueError as err:
        raise SqlError(str(err)) from None
    return np.unique(cast.to_numpy(zero_copy_only=False))
