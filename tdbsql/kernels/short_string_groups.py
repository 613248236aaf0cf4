"""Group ids straight from one or two short string columns, a tile at a time.

``engine.scan_sums`` groups rows by stored strings of at most 7 bytes (TPC-H Q1's flags).  The
general way packs each column into an int64 code array, finds the codes' box and looks each row
up in a flat table: half a dozen passes writing row-sized arrays.  When the groups are few,
``group_short_strings`` packs each row's strings in registers (``hashing.packed_cell``) and
finds the pair in a small open-addressing table that stays in the L1 cache, writing only the
row's group id.
"""

from __future__ import annotations

import numpy as np

from . import jit
from .hashing import packed_cell

_MIX = np.uint64(0x9E3779B97F4A7C15)
LONG_STRING = -1  # returned for a string over 7 bytes: no packing groups the chunk
MANY_GROUPS = -2  # returned past half the table: the general grouping can


@jit
def group_short_strings(offsets0, data0, offsets1, data1, pair, first_row, slots, ids,
                        first, sizes, count):
    """Give the rows of one tile (``offsets0`` / ``data0``, and ``offsets1`` / ``data1`` when
    ``pair``) group ids, continuing a chunk's numbering: ``count`` groups so far, the tile's
    first row being chunk row ``first_row``.  ``slots`` (int64, ``(capacity, 3)``: code 0,
    code 1, group; group -1 = empty) is the table, kept from tile to tile; ``first[g]`` gets
    group ``g``'s first chunk row and ``sizes[g]`` counts its rows.  Returns the new group
    count, ``LONG_STRING`` when a string is longer than 7 bytes, or ``MANY_GROUPS`` when the
    groups would fill half the table (the caller then groups the chunk the general way)."""
    for row in range(ids.shape[0]):
        code0 = packed_cell(offsets0, data0, row)
        code1 = np.int64(0)
        if pair:
            code1 = packed_cell(offsets1, data1, row)
        if code0 < 0 or code1 < 0:
            return LONG_STRING
        group, count = _group(code0, code1, slots, count, first, first_row + row)
        if group < 0:
            return MANY_GROUPS
        ids[row] = group
        sizes[group] += 1
    return count


@jit
def group_coded_strings(codes0, dictionary0, codes1, dictionary1, pair, first_row, slots, ids,
                        first, sizes, count):
    """``group_short_strings`` for a tile whose key columns come as one-byte codes into
    dictionaries of packed strings (``tile_codes.string_codes``): each pair of codes is
    looked up in ``slots`` once, then every row is one read of a small table.  Returns the
    new group count or ``MANY_GROUPS``."""
    width = dictionary1.shape[0] if pair else 1
    known = np.full(dictionary0.shape[0] * width, -1, np.int64)
    for row in range(ids.shape[0]):
        cell = np.int64(codes0[row]) * width
        if pair:
            cell += codes1[row]
        group = known[cell]
        if group < 0:
            code1 = dictionary1[codes1[row]] if pair else np.int64(0)
            group, count = _group(dictionary0[codes0[row]], code1, slots, count, first,
                                  first_row + row)
            if group < 0:
                return MANY_GROUPS
            known[cell] = group
        ids[row] = group
        sizes[group] += 1
    return count


@jit(inline="always")
def _group(code0, code1, slots, count, first, row):
    """(the group of the packed pair ``(code0, code1)`` in ``slots``, the group count): a new
    group is numbered ``count``, its first row (``row``) noted in ``first``; group -1 when it
    would fill half the table."""
    capacity = slots.shape[0]
    mask = np.uint64(capacity - 1)
    at = ((np.uint64(code0) * _MIX) ^ np.uint64(code1)) * _MIX >> np.uint64(40) & mask
    while True:
        group = slots[at, 2]
        if group < 0:
            if 2 * (count + 1) > capacity:
                return np.int64(-1), count
            slots[at, 0] = code0
            slots[at, 1] = code1
            slots[at, 2] = count
            first[count] = row
            return np.int64(count), count + 1
        if slots[at, 0] == code0 and slots[at, 1] == code1:
            return group, count
        at = (at + np.uint64(1)) & mask
