"""Sparse cells into TileDB's global order; coordinate checks.

In: the dimension buffers of a write (``FieldBuffer`` per dimension, in schema order) and the
stored schema.  Out: ``global_order(...)`` -> the permutation that sorts cells the way TileDB's
unordered writer does (``GlobalCmpQB``: space tile indices in the tile order, then coordinates
in the cell order; ``HilbertCmpQB``: Hilbert value, then coordinates row-major);
``first_out_of_order`` checks cells said to be in that order without sorting them;
``duplicate_rows`` -> rows whose coordinates repeat the previous cell's (bytewise, as TileDB's
``memcmp``); ``check_in_domain`` raises naming the first coordinate outside the domain.

The keys come from ``tdbsql.kernels.order``; strings are ranked by their bytes (unsigned,
shorter prefix first) so every key is numeric and one stable ``lexsort`` orders the cells.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..datatypes import Layout
from ..errors import DataError
from ..format.array_schema import ArraySchema, Dimension
from ..kernels import order as kernels
from .write_buffers import FieldBuffer

HILBERT_WORD_BITS = 63  # TileDB: (sizeof(uint64_t) * 8 - 1) / dim_num bits per dimension


def global_order(schema: ArraySchema, dims: list[FieldBuffer]) -> np.ndarray:
    """int64 permutation putting the cells in TileDB's global order (stable)."""
    if dims[0].cells() == 0:
        return np.zeros(0, dtype=np.int64)
    keys = _order_keys(schema, dims)
    # lexsort: the LAST key is the primary one
    return np.lexsort(tuple(reversed(keys))).astype(np.int64)


def first_out_of_order(schema: ArraySchema, dims: list[FieldBuffer]) -> int:
    """The first cell that sorts before its predecessor in the global order, or -1 when the
    cells are in global order (a check without sorting)."""
    if dims[0].cells() < 2:
        return -1
    decided = np.zeros(dims[0].cells() - 1, dtype=bool)
    bad = np.zeros_like(decided)
    for key in _order_keys(schema, dims):  # primary key first
        prev, cur = key[:-1], key[1:]
        bad |= ~decided & (cur < prev)
        decided |= cur != prev
    return int(np.argmax(bad)) + 1 if bad.any() else -1


def _order_keys(schema: ArraySchema, dims: list[FieldBuffer]) -> list[np.ndarray]:
    """The sort keys of the global order, the primary one first."""
    cell_keys = [_cell_key(dim, buf) for dim, buf in zip(schema.dimensions, dims)]
    if schema.cell_order == Layout.COL_MAJOR:
        cell_keys = cell_keys[::-1]
    if schema.cell_order == Layout.HILBERT:
        return [hilbert_values(schema, dims)] + cell_keys
    return _tile_keys(schema, dims) + cell_keys


def _cell_key(dim: Dimension, buf: FieldBuffer) -> np.ndarray:
    if dim.is_var:
        return string_ranks(buf)
    return buf.values


def string_ranks(buf: FieldBuffer) -> np.ndarray:
    """Dense rank of each string in bytewise (unsigned) order."""
    arr = pa.LargeBinaryArray.from_buffers(
        pa.large_binary(), len(buf.offsets) - 1,
        [None, pa.py_buffer(buf.offsets.astype(np.int64)), pa.py_buffer(buf.values)])
    return pc.rank(arr, sort_keys="ascending", tiebreaker="dense").to_numpy().astype(np.uint64)


def _tile_keys(schema: ArraySchema, dims: list[FieldBuffer]) -> list[np.ndarray]:
    keys = []
    for dim, buf in zip(schema.dimensions, dims):
        if dim.is_var or dim.tile_extent is None:
            continue  # TileDB skips var dims and absent extents in the tile order
        keys.append(tile_indices(dim, buf.values))
    if schema.tile_order == Layout.COL_MAJOR:
        keys = keys[::-1]
    return keys


def tile_indices(dim: Dimension, values: np.ndarray) -> np.ndarray:
    """Space tile index of each coordinate (``Dimension::tile_idx``)."""
    info = dim.info
    out = np.empty(len(values), dtype=np.uint64)
    lo, _ = dim.domain
    if info.kind == "float":
        typ = info.numpy.type
        kernels.tile_index_float(np.ascontiguousarray(values, dtype=info.numpy), typ(lo),
                                 typ(dim.tile_extent), out)
        return out
    kernels.tile_index_uint(_as_uint64_bits(values, info.numpy), _uint64_bits(lo),
                            np.uint64(int(dim.tile_extent)), out)
    return out


def _as_uint64_bits(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Integers as the uint64 bit pattern of their 64-bit (sign-extended) value."""
    wide = values.astype(np.int64 if dtype.kind == "i" else np.uint64)
    return np.ascontiguousarray(wide.view(np.uint64))


def _uint64_bits(value: int) -> np.uint64:
    return np.uint64(int(value) & 0xFFFFFFFFFFFFFFFF)


def hilbert_values(schema: ArraySchema, dims: list[FieldBuffer]) -> np.ndarray:
    """The Hilbert value of each cell (``WriterBase::calculate_hilbert_values``)."""
    n_dims = len(schema.dimensions)
    bits = HILBERT_WORD_BITS // n_dims
    max_bucket = float((1 << bits) - 1)
    n = dims[0].cells()
    buckets = np.empty((n, n_dims), dtype=np.uint64)
    column = np.empty(n, dtype=np.uint64)
    for dim_idx, (dim, buf) in enumerate(zip(schema.dimensions, dims)):
        if dim.is_var:
            kernels.hilbert_bucket_string(buf.values, buf.offsets, bits, column)
        else:
            lo, hi = dim.domain
            span = float(hi) - float(lo)
            if span == 0.0:
                column[:] = 0
            else:
                kernels.hilbert_bucket_float(np.ascontiguousarray(buf.values, dtype=np.float64),
                                             float(lo), span, max_bucket, column)
        buckets[:, dim_idx] = column
    out = np.empty(n, dtype=np.uint64)
    kernels.hilbert_values(buckets, bits, out)
    return out


def duplicate_rows(schema: ArraySchema, dims: list[FieldBuffer]) -> np.ndarray:
    """Indices (in the given, already sorted order) of cells equal to the previous cell."""
    n = dims[0].cells()
    if n < 2:
        return np.zeros(0, dtype=np.int64)
    cols = []
    for dim, buf in zip(schema.dimensions, dims):
        if dim.is_var:
            cols.append(string_ranks(buf))
        else:
            # bytewise, as TileDB's memcmp (so 0.0 and -0.0 are different coordinates)
            cols.append(_bits(buf.values))
    keys = np.ascontiguousarray(np.stack(cols, axis=1))
    flags = np.empty(n, dtype=np.uint8)
    kernels.adjacent_equal_rows(keys, flags)
    return np.flatnonzero(flags)


def _bits(values: np.ndarray) -> np.ndarray:
    size = values.dtype.itemsize
    unsigned = values.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[size])
    return unsigned.astype(np.uint64)


def check_in_domain(schema: ArraySchema, dims: list[FieldBuffer]) -> None:
    """Refuse coordinates outside the domain (or NaN), naming dimension, row and value."""
    for dim, buf in zip(schema.dimensions, dims):
        if dim.is_var:
            continue
        lo, hi = dim.domain
        values = buf.values
        typ = dim.info.numpy.type
        bad = ~((values >= typ(lo)) & (values <= typ(hi)))
        if np.any(bad):
            row = int(np.argmax(bad))
            raise DataError(f"dimension {dim.name!r}, row {row}: coordinate {values[row]!r} is "
                            f"outside the domain [{lo}, {hi}]")


__all__ = ["check_in_domain", "duplicate_rows", "first_out_of_order", "global_order",
           "hilbert_values", "tile_indices"]
