"""Dictionary decoding of var-sized strings (TileDB filter 14).

In: the serialized dictionary (per word: its length, ``len_bytes`` big-endian, then its bytes)
and the word ids (``id_bytes`` big-endian each).  Out: the strings one after another and the
cell start offsets (uint64).  Every function returns -1 for malformed input; the caller turns
that into a ``CorruptArrayError``.
"""

from __future__ import annotations

import numpy as np

from . import jit
from .rle import _load_be


@jit
def dictionary_words(dict_bytes, len_bytes, starts, lengths):
    """Locate the words of a serialized dictionary; ``starts``/``lengths`` may be shorter than
    the word count, in which case only the count is returned.  Returns the count or -1."""
    pos = 0
    count = 0
    n = dict_bytes.shape[0]
    while pos < n:
        if pos + len_bytes > n:
            return -1
        length = _load_be(dict_bytes, pos, len_bytes)
        pos += len_bytes
        if length > np.uint64(n - pos):
            return -1
        if count < starts.shape[0]:
            starts[count] = pos
            lengths[count] = np.int64(length)
        pos += np.int64(length)
        count += 1
    return count


@jit
def dictionary_decoded_size(ids, id_bytes, lengths):
    """Total string bytes of the cells ``ids`` name, or -1 if an id is not in the dictionary."""
    total = 0
    words = np.uint64(lengths.shape[0])
    for c in range(ids.shape[0] // id_bytes):
        word = _load_be(ids, c * id_bytes, id_bytes)
        if word >= words:
            return -1
        total += lengths[np.int64(word)]
    return total


@jit
def dictionary_decode(ids, id_bytes, dict_bytes, starts, lengths, out, offsets):
    """Write the strings of the (validated) ``ids`` to ``out`` and their starts to ``offsets``;
    returns the number of cells."""
    dst = 0
    cells = ids.shape[0] // id_bytes
    for c in range(cells):
        word = np.int64(_load_be(ids, c * id_bytes, id_bytes))
        offsets[c] = dst
        start = starts[word]
        for k in range(lengths[word]):
            out[dst + k] = dict_bytes[start + k]
        dst += lengths[word]
    return cells
