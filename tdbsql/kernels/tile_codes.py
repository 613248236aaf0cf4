"""One-byte codes for the cells of a tile that holds few distinct values.

A cached tile of TPC-H's ``l_quantity``, ``l_discount`` or ``l_returnflag`` holds tens of
distinct values over 10,000 to 100,000 cells.  Read as stored, each cell costs 8 bytes of a
float64 (or 8 bytes of offset and the string's bytes); as a code into a dictionary of the tile's
distinct values it costs one.  ``storage.tile_codes`` keeps such codes beside the decoded
cells, and the kernels that read many cells per row (``expression_sums``,
``short_string_groups``, ``predicate``) read the codes instead: a fraction of the memory
traffic.

Both encoders stop as soon as a tile holds more than ``MOST`` distinct values (-1), so a
column of many values costs a few hundred cells' work.  Values are matched by their bits, so a
code always decodes to exactly the stored value (``-0.0`` and ``0.0`` stay apart; so do NaNs
of different payloads).
"""

from __future__ import annotations

import numpy as np

from . import jit
from .hashing import packed_cell

MOST = 256  # distinct values a dictionary holds: a code is one byte
_SLOTS = 1024  # open-addressing table of the encoder: at most a quarter full
_MIX = np.uint64(0x9E3779B97F4A7C15)


@jit
def float_codes(values, codes, dictionary):
    """Give each of ``values`` (float64) the code of its value in ``dictionary`` (float64,
    ``MOST`` long), written to ``codes`` (uint8, as long as ``values``).  Returns the number of
    distinct values, or -1 past ``MOST`` of them (``codes`` is then partly written)."""
    bits = values.view(np.uint64)
    slots = np.full(_SLOTS, -1, np.int64)
    keys = np.empty(_SLOTS, np.uint64)
    count = 0
    for row in range(bits.shape[0]):
        code = _code(bits[row], slots, keys, count)
        if code == count:  # a new value
            if count == MOST:
                return -1
            dictionary[count] = values[row]
            count += 1
        codes[row] = code
    return count


@jit
def string_codes(offsets, data, codes, dictionary):
    """``float_codes`` for var-sized cells (``offsets``: int64, n + 1; ``data``: uint8) of at
    most 7 bytes: ``dictionary`` (int64, ``MOST`` long) gets each distinct cell packed as
    ``hashing.packed_cell`` packs it.  Returns the number of distinct cells, or -1 past
    ``MOST`` of them or at a cell longer than 7 bytes."""
    slots = np.full(_SLOTS, -1, np.int64)
    keys = np.empty(_SLOTS, np.uint64)
    count = 0
    for row in range(codes.shape[0]):
        cell = packed_cell(offsets, data, row)
        if cell < 0:
            return -1
        code = _code(np.uint64(cell), slots, keys, count)
        if code == count:
            if count == MOST:
                return -1
            dictionary[count] = cell
            count += 1
        codes[row] = code
    return count


@jit(inline="always")
def _code(key, slots, keys, count):
    """The code of ``key`` (uint64) in the open-addressing table ``slots`` / ``keys``; a key
    not there yet is given ``count``, the next code (the caller checks it is not past
    ``MOST``: the table then holds a code more than the dictionary, which the caller
    abandons)."""
    mask = np.uint64(_SLOTS - 1)
    at = (key * _MIX) >> np.uint64(40) & mask
    while True:
        code = slots[at]
        if code < 0:
            slots[at] = count
            keys[at] = key
            return np.int64(count)
        if keys[at] == key:
            return code
        at = (at + np.uint64(1)) & mask
