"""Dense space tiles: where each cell of a tile lands in a row-major result box."""

from __future__ import annotations

import numpy as np

from . import jit


@jit
def tile_cell_positions(tile_lo, tile_extent, col_major, frag_lo, frag_hi, box_lo, box_hi, out):
    """For cell ``cell_idx`` of a space tile (cells in the array's cell order), write its
    row-major position in the result box ``[box_lo, box_hi]`` to ``out[cell_idx]``, or -1 when
    the cell lies outside the box or outside the fragment's non-empty domain (tile padding).
    Returns the number of cells that land in the box."""
    ndim = tile_lo.shape[0]
    coord = np.empty(ndim, np.int64)
    landed = 0
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
            if x < frag_lo[dim_idx] or x > frag_hi[dim_idx] or x < box_lo[dim_idx] or x > box_hi[dim_idx]:
                inside = False
                break
            pos = pos * (box_hi[dim_idx] - box_lo[dim_idx] + 1) + (x - box_lo[dim_idx])
        if inside:
            out[cell_idx] = pos
            landed += 1
        else:
            out[cell_idx] = -1
    return landed


@jit
def box_coordinates(box_lo, box_hi, dim_idx, out):
    """Coordinate of dimension ``dim_idx`` for every cell of the row-major box."""
    ndim = box_lo.shape[0]
    inner = 1
    for d in range(dim_idx + 1, ndim):
        inner *= box_hi[d] - box_lo[d] + 1
    extent = box_hi[dim_idx] - box_lo[dim_idx] + 1
    for cell_idx in range(out.shape[0]):
        out[cell_idx] = box_lo[dim_idx] + (cell_idx // inner) % extent
    return out.shape[0]
