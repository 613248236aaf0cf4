"""Large temporary arrays from Arrow's memory pool instead of numpy's allocator.

A streamed query allocates the same few large arrays for every chunk of tiles (concatenated
columns, gathered rows, group ids, code columns).  numpy takes them from the C allocator, which
hands big blocks back to the system when they are freed, so every chunk pays again for fresh
pages (page faults, zeroing).  Arrow's pool (mimalloc or jemalloc) keeps freed pages for the
next allocation.  ``empty`` returns an ordinary writable numpy array whose memory the pool
owns; it goes back to the pool when the array (and every view or Arrow array made from it) is
gone.  Small arrays are not worth it and come from numpy.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

_POOLED_FROM = 1 << 16  # bytes


def empty(count: int, dtype) -> np.ndarray:
    """An uninitialised writable array of ``count`` values of ``dtype``."""
    dtype = np.dtype(dtype)
    nbytes = count * dtype.itemsize
    if nbytes < _POOLED_FROM:
        return np.empty(count, dtype)
    return np.frombuffer(pa.allocate_buffer(nbytes), dtype, count)


def concatenate(parts: list[np.ndarray]) -> np.ndarray:
    """``np.concatenate(parts)`` (1-D parts, the same result type) into a pooled array."""
    out = empty(sum(len(p) for p in parts), np.result_type(*parts))
    return np.concatenate(parts, out=out)


def take(values: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """``values[indices]`` (1-D; ``indices`` inside ``values``, as every caller's are) into a
    pooled array when it is large.  (With ``out``, numpy's default ``mode="raise"`` gathers
    into a buffer first and copies it over: three times slower than ``"wrap"``.)  A small
    gather is plain indexing: ``np.take``'s Python wrapper costs 4 us a call, more than the
    gather itself for the few rows a keyed tile keeps."""
    if len(indices) * values.itemsize < _POOLED_FROM:
        return values[indices]
    return np.take(values, indices, out=empty(len(indices), values.dtype), mode="wrap")
