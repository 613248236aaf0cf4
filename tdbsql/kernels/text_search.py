"""A second string searched for in a first, row by row (both UTF-8, each row its own pair):
for ``strpos`` / ``contains`` / ``starts_with`` / ``ends_with`` whose search string is a
column.  UTF-8 is self-synchronizing, so a byte match of valid UTF-8 is a character match.
In: the strings' bytes, int64 offsets and step (``offsets.row_bounds``: 0 for a constant),
the search strings' the same, where both are valid; out: one int64 per valid row.
"""

from __future__ import annotations

from . import jit
from .offsets import row_bounds


@jit
def _occurs_at(values, at, needles, lo, hi):
    for j in range(hi - lo):
        if values[at + j] != needles[lo + j]:
            return False
    return True


@jit
def character_positions(values, offsets, step, needles, needle_offsets, needle_step, valid,
                        out):
    """``out[k]``: the 1-based character position of the first occurrence of search string k
    in string k (1 for an empty search string), 0 where there is none."""
    for k in range(out.shape[0]):
        if not valid[k]:
            continue
        lo, hi = row_bounds(needle_offsets, needle_step, k)
        begin, end = row_bounds(offsets, step, k)
        out[k] = 0
        characters = 0
        for at in range(begin, end - (hi - lo) + 1):
            if at < end and (values[at] & 0xC0) != 0x80:
                characters += 1
            if _occurs_at(values, at, needles, lo, hi):
                out[k] = max(characters, 1)
                break
    return out.shape[0]


@jit
def affixes(values, offsets, step, needles, needle_offsets, needle_step, valid, at_end, out):
    """``out[k]``: 1 where string k starts (``at_end``: ends) with search string k, else 0."""
    for k in range(out.shape[0]):
        if not valid[k]:
            continue
        lo, hi = row_bounds(needle_offsets, needle_step, k)
        begin, end = row_bounds(offsets, step, k)
        size = hi - lo
        out[k] = 0
        if size <= end - begin:
            out[k] = _occurs_at(values, end - size if at_end else begin, needles, lo, hi)
    return out.shape[0]
