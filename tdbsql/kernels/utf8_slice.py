"""Where characters start in UTF-8 strings: the byte range of each string's characters
``lo[k]..hi[k]`` (0-based, ``0 <= lo <= hi <= length``), for a substring whose bounds differ
from row to row.  A character starts at every byte that is not a continuation byte
(``10xxxxxx``); the walk stops at the row's ``hi``-th character, so a row costs the bytes up
to its substring's end.
"""

from __future__ import annotations

from . import jit


@jit
def character_bytes(values, offsets, lo, hi, begins, ends):
    """``begins[k]`` / ``ends[k]``: the byte offsets (into ``values``) of row k's character
    ``lo[k]`` and of its character ``hi[k]`` (the row's end when ``hi[k]`` is its length);
    returns the number of rows."""
    for k in range(lo.shape[0]):
        position = offsets[k]
        end = offsets[k + 1]
        seen = 0  # characters before ``position``
        begins[k] = end
        ends[k] = end
        while position < end:
            if (values[position] & 0xC0) != 0x80:  # a character starts here
                if seen == lo[k]:
                    begins[k] = position
                if seen == hi[k]:
                    ends[k] = position
                    break
                seen += 1
            position += 1
        if lo[k] == hi[k]:
            begins[k] = ends[k]
    return lo.shape[0]
