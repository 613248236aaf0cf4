"""Global-order sort keys of sparse cells, computed as TileDB 2.30 computes them.

In: coordinate columns (1-D arrays) and dimension constants.  Out: per-cell keys written into
caller-allocated uint64 arrays; the caller sorts cells by (tile keys, cell keys) or by
(Hilbert value, cell keys) -- see ``tdbsql.storage.tiling``.

* ``tile_index_uint`` -- ``(v - lo) / extent`` in unsigned 64-bit arithmetic, as TileDB's
  ``Dimension::tile_idx`` for integer, datetime and time dimensions (coordinates are passed
  as their two's-complement uint64 bits, so the difference wraps exactly as in C).
* ``tile_index_float`` -- ``(v - lo) / extent`` in the dimension's own float width, truncated
  to uint64 (the C conversion), for float32/float64 dimensions.
* ``hilbert_bucket_float`` -- ``Dimension::map_to_uint64``: ``(v - lo) / (hi - lo)`` in double
  times the largest bucket, truncated.
* ``hilbert_bucket_string`` -- the first 8 bytes of a string as a big-endian number (bytes
  above 0x7f sign-extended, as C's signed ``char``), shifted right to ``bits`` bits.
* ``hilbert_values`` -- John Skilling's transform (TileDB ``Hilbert::coords_to_hilbert``) over
  a (cells x dims) bucket matrix.
"""

from __future__ import annotations

import numpy as np

from . import jit


@jit
def tile_index_uint(values, lo, extent, out):
    """``out[i] = (values[i] - lo) // extent`` on uint64 (wrapping subtraction)."""
    for cell_idx in range(values.shape[0]):
        out[cell_idx] = (values[cell_idx] - lo) // extent
    return values.shape[0]


@jit
def tile_index_float(values, lo, extent, out):
    """``out[i] = uint64((values[i] - lo) / extent)`` with lo/extent of the values' type."""
    for cell_idx in range(values.shape[0]):
        quotient = (values[cell_idx] - lo) / extent
        out[cell_idx] = np.uint64(quotient) if quotient > 0 else np.uint64(0)
    return values.shape[0]


@jit
def hilbert_bucket_float(values, lo, span, max_bucket, out):
    """``out[i] = uint64((values[i] - lo) / span * max_bucket)``, all in double."""
    for cell_idx in range(values.shape[0]):
        scaled = (values[cell_idx] - lo) / span * max_bucket
        if scaled > 0.0:
            out[cell_idx] = np.uint64(scaled)
        else:
            out[cell_idx] = np.uint64(0)
    return values.shape[0]


@jit
def hilbert_bucket_string(data, offsets, bits, out):
    """First 8 bytes of each string, big-endian, signed-char extended, ``>> (64 - bits)``."""
    shift = np.uint64(64 - bits)
    for cell_idx in range(offsets.shape[0] - 1):
        start = offsets[cell_idx]
        size = offsets[cell_idx + 1] - start
        value = np.uint64(0)
        for byte_idx in range(8):
            value = value << np.uint64(8)
            if byte_idx < size:
                byte = np.uint64(data[start + byte_idx])
                if byte >= np.uint64(128):
                    byte = byte | np.uint64(0xFFFFFFFFFFFFFF00)
                value = value | byte
        out[cell_idx] = value >> shift
    return offsets.shape[0] - 1


@jit
def hilbert_values(buckets, bits, out):
    """Hilbert value of each row of ``buckets`` (cells x dims, uint64; modified in place)."""
    n_cells, n_dims = buckets.shape
    one = np.uint64(1)
    for cell_idx in range(n_cells):
        x = buckets[cell_idx]
        # axes to transpose (inverse undo)
        q = one << np.uint64(bits - 1)
        while q > one:
            p = q - one
            if x[0] & q:
                x[0] ^= p
            for dim_idx in range(1, n_dims):
                if x[dim_idx] & q:
                    x[0] ^= p
                else:
                    t = (x[0] ^ x[dim_idx]) & p
                    x[0] ^= t
                    x[dim_idx] ^= t
            q = q >> one
        # Gray encode
        for dim_idx in range(1, n_dims):
            x[dim_idx] ^= x[dim_idx - 1]
        t = x[n_dims - 1]
        i = 1
        while i < bits:
            x[n_dims - 1] ^= x[n_dims - 1] >> np.uint64(i)
            i <<= 1
        t ^= x[n_dims - 1]
        for dim_idx in range(n_dims - 2, -1, -1):
            x[dim_idx] ^= t
        # interleave the transpose into one number
        value = np.uint64(0)
        c = one
        h = one
        for _ in range(bits):
            for dim_idx in range(n_dims - 1, -1, -1):
                if x[dim_idx] & c:
                    value |= h
                h = h << one
            c = c << one
        out[cell_idx] = value
    return n_cells


@jit
def adjacent_equal_rows(keys, out):
    """``out[i] = 1`` when row ``i`` of the uint64 matrix equals row ``i - 1``; returns the
    number of such rows (duplicate coordinates after sorting)."""
    found = 0
    out[0] = 0
    for cell_idx in range(1, keys.shape[0]):
        same = 1
        for col in range(keys.shape[1]):
            if keys[cell_idx, col] != keys[cell_idx - 1, col]:
                same = 0
                break
        out[cell_idx] = same
        found += same
    return found
