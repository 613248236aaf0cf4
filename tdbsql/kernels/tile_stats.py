"""Per-tile min, max, sum and null count, exactly as TileDB's ``TileMetadataGenerator``.

In: a field's cells in global order (values, a uint8 validity array -- all ones when the field
is not nullable -- and ``tile_size`` cells a tile, the last tile shorter).
Out: per-tile results in caller-allocated arrays.

TileDB's quirks are kept on purpose, since readers compare against these bytes:

* numeric min/max start at the type's (max, lowest) and step ``min = min < v ? min : v``, so a
  NaN cell becomes the min/max until the next cell replaces it;
* sums saturate at the sum type's limits and then stop (``break``), floats too;
* strings compare like C ``strncmp`` (unsigned bytes, stopping at a NUL byte); var strings
  compare their common prefix, then the shorter one is smaller (fixed-size strings, all one
  length, reduce to the plain ``strncmp``).
"""

from __future__ import annotations

import numpy as np

from . import jit


@jit
def min_max_fixed(values, validity, tile_size, init_min, init_max, out_min, out_max):
    """Numeric min/max per tile of the cells whose validity is not 0."""
    n = values.shape[0]
    n_tiles = out_min.shape[0]
    for tile_idx in range(n_tiles):
        start = tile_idx * tile_size
        end = min(start + tile_size, n)
        lo = init_min
        hi = init_max
        for cell_idx in range(start, end):
            if validity[cell_idx] == 0:
                continue
            value = values[cell_idx]
            if not (lo < value):
                lo = value
            if not (hi > value):
                hi = value
        out_min[tile_idx] = lo
        out_max[tile_idx] = hi
    return n_tiles


@jit
def sum_int64(values, validity, tile_size, out):
    """Saturating int64 sums per tile (values already widened to int64)."""
    n = values.shape[0]
    big = np.int64(9223372036854775807)
    small = np.int64(-9223372036854775807 - 1)
    for tile_idx in range(out.shape[0]):
        start = tile_idx * tile_size
        end = min(start + tile_size, n)
        total = np.int64(0)
        for cell_idx in range(start, end):
            if validity[cell_idx] == 0:
                continue
            value = values[cell_idx]
            if total > 0 and value > 0 and total > big - value:
                total = big
                break
            if total < 0 and value < 0 and total < small - value:
                total = small
                break
            total += value
        out[tile_idx] = total
    return out.shape[0]


@jit
def sum_uint64(values, validity, tile_size, out):
    """Saturating uint64 sums per tile."""
    n = values.shape[0]
    big = np.uint64(18446744073709551615)
    for tile_idx in range(out.shape[0]):
        start = tile_idx * tile_size
        end = min(start + tile_size, n)
        total = np.uint64(0)
        for cell_idx in range(start, end):
            if validity[cell_idx] == 0:
                continue
            value = values[cell_idx]
            if total > big - value:
                total = big
                break
            total += value
        out[tile_idx] = total
    return out.shape[0]


@jit
def sum_float64(values, validity, tile_size, out):
    """Double sums per tile, saturating at +-DBL_MAX as TileDB does."""
    n = values.shape[0]
    big = 1.7976931348623157e308
    for tile_idx in range(out.shape[0]):
        start = tile_idx * tile_size
        end = min(start + tile_size, n)
        total = 0.0
        for cell_idx in range(start, end):
            if validity[cell_idx] == 0:
                continue
            value = values[cell_idx]
            if (total < 0.0) == (value < 0.0) and abs(total) > big - abs(value):
                total = -big if total < 0.0 else big
                break
            total += value
        out[tile_idx] = total
    return out.shape[0]


@jit
def _strncmp(data, a_start, b_start, size):
    for byte_idx in range(size):
        x = data[a_start + byte_idx]
        y = data[b_start + byte_idx]
        if x != y:
            return -1 if x < y else 1
        if x == 0:
            return 0
    return 0


@jit
def _var_cmp(data, a_start, a_size, b_start, b_size):
    """TileDB's min_max_var order: strncmp over the common length, then the length."""
    common = min(a_size, b_size)
    cmp = _strncmp(data, a_start, b_start, common)
    if cmp != 0:
        return cmp
    if a_size < b_size:
        return -1
    if a_size > b_size:
        return 1
    return 0


@jit
def min_max_strings(data, offsets, validity, tile_size, out_min, out_max):
    """Index of the min and max cell per tile of strings (-1: all cells null).  Fixed-size
    strings pass ``offsets = arange(cells + 1) * cell_size``: over equal lengths this order is
    TileDB's fixed-size ``strncmp`` comparison."""
    n = validity.shape[0]
    for tile_idx in range(out_min.shape[0]):
        start = tile_idx * tile_size
        end = min(start + tile_size, n)
        lo = -1
        hi = -1
        for cell_idx in range(start, end):
            if validity[cell_idx] == 0:
                continue
            if lo < 0:
                lo = cell_idx
                hi = cell_idx
                continue
            c_start = offsets[cell_idx]
            c_size = offsets[cell_idx + 1] - c_start
            # a new min only when strictly smaller (first seen wins ties), same for max
            if _var_cmp(data, offsets[lo], offsets[lo + 1] - offsets[lo], c_start, c_size) > 0:
                lo = cell_idx
            if _var_cmp(data, offsets[hi], offsets[hi + 1] - offsets[hi], c_start, c_size) < 0:
                hi = cell_idx
        out_min[tile_idx] = lo
        out_max[tile_idx] = hi
    return out_min.shape[0]


@jit
def null_counts(validity, tile_size, out):
    n = validity.shape[0]
    for tile_idx in range(out.shape[0]):
        start = tile_idx * tile_size
        end = min(start + tile_size, n)
        nulls = 0
        for cell_idx in range(start, end):
            if validity[cell_idx] == 0:
                nulls += 1
        out[tile_idx] = nulls
    return out.shape[0]
