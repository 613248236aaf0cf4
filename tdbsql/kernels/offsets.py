"""Var-sized cell offsets as TileDB stores them (one start per cell) -> the ``n + 1`` offsets
the engine uses, checked in the same pass; and a row's byte range under those offsets."""

from __future__ import annotations

from . import jit


@jit
def offsets_from_starts(starts, total, out):
    """``out[:n] = starts`` and ``out[n] = total`` (int64); returns 1 when the offsets never
    decrease and start at 0 or later, 0 (``out`` then partly written) when they do not."""
    previous = 0
    for i in range(starts.shape[0]):
        value = starts[i]
        if value < previous:
            return 0
        out[i] = value
        previous = value
    if total < previous:
        return 0
    out[starts.shape[0]] = total
    return 1


@jit
def row_bounds(offsets, step, k):
    """Row k's byte range in a string buffer read with ``step``: 1 for a column (its
    ``offsets[k]`` to ``offsets[k + 1]``), 0 for one string every row shares (``offsets`` =
    ``[0, its length]``: no copy per row)."""
    at = k * step
    return offsets[at], offsets[at + 1]
