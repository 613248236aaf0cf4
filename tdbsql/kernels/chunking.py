"""Chunk boundaries of a var-sized tile (TileDB's ``get_var_chunk_sizes``).

Whole cells go to a chunk; a chunk may pass ``chunk_size`` while it is under half full, or up to
1.5 x ``chunk_size``.  In: int64 cell start offsets, the tile's byte size, the chunk size and a
caller-allocated int64 ``out`` of ``2 * len(offsets) + 2``.  Out: the number of boundaries
written (the first is 0).
"""

from __future__ import annotations

from . import jit


@jit
def var_chunk_bounds(offsets, nbytes, chunk_size, out):
    n = offsets.shape[0]
    count = 1
    out[0] = 0
    current = 0
    half = chunk_size // 2
    for i in range(n):
        start = offsets[i]
        end = offsets[i + 1] if i + 1 < n else nbytes
        size = end - start
        if current + size <= chunk_size:
            current += size
        elif current <= half or current + size <= chunk_size + half:
            out[count] = start + size
            count += 1
            current = 0
        else:
            out[count] = start
            count += 1
            if size > chunk_size:
                if i != n - 1:
                    out[count] = start + size
                    count += 1
                current = 0
            else:
                current = size
    return count
