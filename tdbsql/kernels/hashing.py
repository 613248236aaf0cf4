"""Hashing multi-column int64 key codes into group ids (GROUP BY) and probing them (joins).

In: key codes as a 2-D C-contiguous int64 array ``keys[col, row]`` (the wrappers in
``engine/grouping.py`` turn every Arrow type into such codes), and a ``skip`` mask (uint8, one
per row, or empty for "no row is skipped") of rows that take no part (NULL join keys).

Two ways to give rows group ids, both in first-appearance order:

- ``group_direct``: when the codes span a small box, the row's position in that box is its slot
  in a flat lookup array (no hashing, no key comparison); ``box_slots`` + ``direct_probe`` look
  rows of another key array up in it (they may fall outside the box).
- ``group_insert``: an open-addressing table (linear probing, power-of-two capacity): slot
  ``s`` holds ``table[s, 0]``, a group id (-1: empty), and ``table[s, 1]``, the group's code in
  the first key column, so a probe reads one cache line and a single-column key is compared
  there; further columns are compared at the group's first row.  The kernel stops before the
  table passes half full and returns the row it stopped at; the wrapper doubles the table
  (``table_rehash``) and calls again from that row, so every output is caller-allocated.

``table_probe`` looks rows of another key array up in a finished table (the join probe side).
"""

from __future__ import annotations

import numpy as np

from . import jit

_SEED = np.uint64(0x9E3779B97F4A7C15)
_MUL = np.uint64(0xBF58476D1CE4E5B9)
_FMIX1 = np.uint64(0xFF51AFD7ED558CCD)


@jit
def row_hash(codes, row):
    """A 64-bit hash of the codes of ``row`` (all columns) of a uint64 view of the keys.

    A multiply per column, then murmur3's finalizer to bring high bits down to the low bits
    the table mask keeps.  (Measured: viewing keys as uint64 beats converting elements, and a
    xorshift inside the column loop makes numba's code several times slower.)
    """
    h = _SEED
    for col in range(codes.shape[0]):
        h = (h ^ codes[col, row]) * _MUL
    h = h ^ (h >> np.uint64(33))
    h = h * _FMIX1
    h = h ^ (h >> np.uint64(33))
    return h


@jit
def rows_equal(keys_a, row_a, keys_b, row_b):
    """Whether two rows (possibly of two key arrays with the same column count) are equal."""
    for col in range(keys_a.shape[0]):
        if keys_a[col, row_a] != keys_b[col, row_b]:
            return False
    return True


@jit
def group_insert(keys, skip, start, ngroups, table, group_rows, ids):
    """Give rows ``start..`` group ids, adding new groups to ``table`` (``(capacity, 2)``,
    groups -1 = empty slot; see the module docstring).

    ``group_rows[g]`` receives the first row of group ``g``; skipped rows get id -1.  Stops
    before the group count reaches ``capacity // 2`` (or ``len(group_rows)``).  Returns
    ``(next_row, ngroups)``; ``next_row == keys.shape[1]`` when all rows are done.
    """
    nrows = keys.shape[1]
    mask = np.uint64(table.shape[0] - 1)
    limit = min(table.shape[0] // 2, group_rows.shape[0])
    has_skip = skip.shape[0] > 0
    more_columns = keys.shape[0] > 1
    codes = keys.view(np.uint64)
    for row in range(start, nrows):
        if has_skip and skip[row] != 0:
            ids[row] = -1
            continue
        first = keys[0, row]
        slot = row_hash(codes, row) & mask
        while True:
            group = table[slot, 0]
            if group < 0:
                if ngroups >= limit:
                    return row, ngroups
                group = ngroups
                table[slot, 0] = group
                table[slot, 1] = first
                group_rows[group] = row
                ngroups += 1
                break
            if table[slot, 1] == first and (
                    not more_columns or rows_equal(keys, row, keys, group_rows[group])):
                break
            slot = (slot + np.uint64(1)) & mask
        ids[row] = group
    return nrows, ngroups


@jit
def table_rehash(keys, group_rows, ngroups, table):
    """Insert groups ``0..ngroups-1`` (by their first rows) into the empty ``table``."""
    mask = np.uint64(table.shape[0] - 1)
    codes = keys.view(np.uint64)
    for group in range(ngroups):
        row = group_rows[group]
        slot = row_hash(codes, row) & mask
        while table[slot, 0] >= 0:
            slot = (slot + np.uint64(1)) & mask
        table[slot, 0] = group
        table[slot, 1] = keys[0, row]
    return ngroups


@jit
def table_probe(table, build_keys, group_rows, probe_keys, skip, out):
    """``out[row]`` = group id of probe row ``row`` in the build table, or -1 if absent/skipped.
    Returns the number of rows that found a group."""
    mask = np.uint64(table.shape[0] - 1)
    has_skip = skip.shape[0] > 0
    more_columns = probe_keys.shape[0] > 1
    found = 0
    codes = probe_keys.view(np.uint64)
    for row in range(probe_keys.shape[1]):
        out[row] = -1
        if has_skip and skip[row] != 0:
            continue
        first = probe_keys[0, row]
        slot = row_hash(codes, row) & mask
        while True:
            group = table[slot, 0]
            if group < 0:
                break
            if table[slot, 1] == first and (not more_columns or rows_equal(
                    probe_keys, row, build_keys, group_rows[group])):
                out[row] = group
                found += 1
                break
            slot = (slot + np.uint64(1)) & mask
    return found


@jit
def box_slots(keys, mins, extents, skip, out):
    """``out[row]`` = position of the row in the box ``mins[c] + [0, extents[c])`` (mixed
    radix, first column fastest), or -1 if the row is skipped or lies outside the box.
    Returns the number of rows inside."""
    # unsigned arithmetic: ``value - min`` wraps (defined) for extreme probe codes, and a
    # value below ``min`` wraps to a huge offset; signed overflow would let LLVM drop the check
    codes = keys.view(np.uint64)
    lows = mins.view(np.uint64)
    sizes = extents.view(np.uint64)
    positions = out.view(np.uint64)
    outside = np.uint64(0xFFFFFFFFFFFFFFFF)  # -1 as int64
    has_skip = skip.shape[0] > 0
    inside = 0
    for row in range(keys.shape[1]):
        positions[row] = outside
        if has_skip and skip[row] != 0:
            continue
        pos = np.uint64(0)
        stride = np.uint64(1)
        ok = True
        for col in range(keys.shape[0]):
            offset = codes[col, row] - lows[col]
            if offset >= sizes[col]:
                ok = False
                break
            pos += offset * stride
            stride *= sizes[col]
        if ok:
            positions[row] = pos
            inside += 1
    return inside


@jit
def group_direct(keys, mins, extents, skip, slot_groups, ids, group_rows):
    """Group rows by their position in the box ``mins + [0, extents)`` (every row not skipped
    must lie inside it) through the flat lookup ``slot_groups`` (all -1 on entry); skipped
    rows get id -1.  Returns the group count."""
    has_skip = skip.shape[0] > 0
    if keys.shape[0] == 1 and not has_skip:
        return _group_direct_column(keys[0], mins[0], slot_groups, ids, group_rows)
    ngroups = 0
    for row in range(keys.shape[1]):
        if has_skip and skip[row] != 0:
            ids[row] = -1
            continue
        slot = 0
        stride = 1
        for col in range(keys.shape[0]):
            slot += (keys[col, row] - mins[col]) * stride
            stride *= extents[col]
        ids[row], ngroups = _slot_group(slot, row, slot_groups, group_rows, ngroups)
    return ngroups


@jit
def _group_direct_column(codes, low, slot_groups, ids, group_rows):
    """``group_direct`` of one key column without skipped rows: the common GROUP BY, and
    twice as fast as the general loop (no per-row loop over columns and strides)."""
    ngroups = 0
    for row in range(codes.shape[0]):
        ids[row], ngroups = _slot_group(codes[row] - low, row, slot_groups, group_rows,
                                        ngroups)
    return ngroups


@jit(inline="always")
def _slot_group(slot, row, slot_groups, group_rows, ngroups):
    """(the group of ``slot``, the group count): its own group, or a new one first seen at
    ``row``.  (A branch, not arithmetic, on whether the group is new: the count then does
    not chain every row's lookup to the one before, 4x faster.)"""
    group = slot_groups[slot]
    if group < 0:
        slot_groups[slot] = ngroups
        group_rows[ngroups] = row
        return ngroups, ngroups + 1
    return group, ngroups


@jit
def direct_probe(slots, slot_groups, out):
    """``out[row]`` = group of box position ``slots[row]`` in ``slot_groups`` or -1."""
    found = 0
    for row in range(slots.shape[0]):
        slot = slots[row]
        group = -1
        if slot >= 0:
            group = slot_groups[slot]
        out[row] = group
        if group >= 0:
            found += 1
    return found


@jit
def pack_short_strings(offsets, data, out):
    """Each cell's bytes (``data[offsets[i]:offsets[i + 1]]``) and length packed into one int64
    -- byte ``j`` at bits ``8j``, the length at bits 56..63 -- so equal strings of at most 7
    bytes get equal codes and different ones different codes.  Returns False (``out`` then
    partly written) as soon as a cell is longer."""
    for i in range(len(out)):
        code = packed_cell(offsets, data, i)
        if code < 0:
            return False
        out[i] = code
    return True


@jit(inline="always")
def packed_cell(offsets, data, row):
    """Cell ``row``'s bytes and length packed as ``pack_short_strings`` packs them; -1 when
    the cell is longer than 7 bytes (a packed code is never negative)."""
    start = offsets[row]
    length = offsets[row + 1] - start
    if length > 7:
        return np.int64(-1)
    code = np.int64(length) << 56
    for j in range(length):
        code |= np.int64(data[start + j]) << (8 * j)
    return code


@jit
def int_range(values):
    """``(minimum, maximum)`` of a non-empty int64 array, in one pass."""
    low = values[0]
    high = values[0]
    for i in range(1, values.shape[0]):
        value = values[i]
        if value < low:
            low = value
        if value > high:
            high = value
    return low, high


@jit
def box_append(code, column, low, extent):
    """``code = code * extent + (column - low)`` in place: one more column of a box position
    (the caller checked that the box fits int64)."""
    for i in range(code.shape[0]):
        code[i] = code[i] * extent + (column[i] - low)
    return code.shape[0]
