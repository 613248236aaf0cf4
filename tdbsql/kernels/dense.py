"""Dense space tiles: where each cell of a tile lands in a row-major result box.

Every coordinate here is relative to the box's lower corner (int64), so dimensions of any integer
type -- uint64 domains near 2**64 included -- need no wider arithmetic.
"""

from __future__ import annotations

import numpy as np

from . import jit


@jit
def tile_cell_positions(tile_lo, tile_extent, col_major, keep_lo, keep_hi, box_shape, out):
    """For cell ``cell_idx`` of a space tile (cells in the array's cell order; the tile's first
    cell at box-relative ``tile_lo``), write its row-major position in the box to
    ``out[cell_idx]``, or -1 when the cell lies outside ``[keep_lo, keep_hi]`` (the part of the
    box the fragment wrote: tile padding and cells outside the query box are dropped).
    Returns the number of cells kept."""
    ndim = tile_lo.shape[0]
    coord = np.empty(ndim, np.int64)
    kept = 0
    for cell_idx in range(out.shape[0]):
        rem = cell_idx
        if col_major:
            for dim_idx in range(ndim):
                coord[dim_idx] = tile_lo[dim_idx] + rem % tile_extent[dim_idx]
                rem //= tile_extent[dim_idx]
        else:
            for dim_idx in range(ndim - 1, -1, -1):
                coord[dim_idx] = tile_lo[dim_idx] + rem % tile_extent[dim_idx]
                rem //= tile_extent[dim_idx]
        pos = 0
        inside = True
        for dim_idx in range(ndim):
            x = coord[dim_idx]
            if x < keep_lo[dim_idx] or x > keep_hi[dim_idx]:
                inside = False
                break
            pos = pos * box_shape[dim_idx] + x
        if inside:
            out[cell_idx] = pos
            kept += 1
        else:
            out[cell_idx] = -1
    return kept


@jit
def box_coordinates(box_shape, dim_idx, out):
    """Box-relative coordinate of dimension ``dim_idx`` for every cell of the row-major box."""
    ndim = box_shape.shape[0]
    inner = 1
    for d in range(dim_idx + 1, ndim):
        inner *= box_shape[d]
    extent = box_shape[dim_idx]
    for cell_idx in range(out.shape[0]):
        out[cell_idx] = (cell_idx // inner) % extent
    return out.shape[0]
