"""Rows ordered by their dense group id, stably: a counting sort in two passes instead of a
comparison sort (ARRAY_AGG lists, window partitions, set-operation copies)."""

from __future__ import annotations

from . import jit


@jit
def rows_by_group(ids, starts, out):
    """``out`` = the rows with ids ``0, 1, ...`` in turn, each group's rows in input order;
    ``starts`` (``count + 1`` int64, zeroed) receives where each group begins in ``out``.
    Every id must lie in ``0 .. count - 1``."""
    count = starts.shape[0] - 1
    for row in range(ids.shape[0]):
        starts[ids[row] + 1] += 1
    for group in range(count):
        starts[group + 1] += starts[group]
    cursor = starts[:count].copy()
    for row in range(ids.shape[0]):
        group = ids[row]
        out[cursor[group]] = row
        cursor[group] += 1
    return count
