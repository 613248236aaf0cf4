"""Hashing rows into partitions (an aggregate spilled to disk, ``engine.spilled_aggregate``).

Unlike a group table's codes, which may number a batch's strings in the order it met them,
these hashes depend on the values alone, so one key lands in one partition whatever batch it
came in.  ``byte_hashes`` gives a string or binary cell a 64-bit code from its bytes (FNV-1a);
``row_partitions`` hashes each row's int64 key codes (``hashing.row_hash``) into one of
``count`` partitions, by a digit of the hash in base ``count`` (a partition too big is split
again by the next one).
"""

from __future__ import annotations

import numpy as np

from . import jit
from .hashing import row_hash

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)


@jit
def byte_hashes(offsets, data, out):
    """``out[i]``: the FNV-1a hash of cell ``i``'s bytes (``data[offsets[i]:offsets[i + 1]]``),
    as int64 bits.  Returns the cell count."""
    for i in range(out.shape[0]):
        h = _FNV_OFFSET
        for j in range(offsets[i], offsets[i + 1]):
            h = (h ^ np.uint64(data[j])) * _FNV_PRIME
        out[i] = np.int64(h)
    return out.shape[0]


@jit
def row_partitions(keys, count, divisor, out):
    """``out[row]``: the partition (``0 .. count - 1``) of each row of the (columns, rows)
    int64 key matrix ``keys``: its hash divided by ``divisor``, modulo ``count`` (rows of
    one partition split again by the next digits).  Returns the row count."""
    codes = keys.view(np.uint64)
    parts = np.uint64(count)
    below = np.uint64(divisor)
    for row in range(keys.shape[1]):
        out[row] = np.int64(row_hash(codes, row) // below % parts)
    return keys.shape[1]
