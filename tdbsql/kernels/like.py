"""LIKE patterns made of literal pieces and ``%`` only, matched on UTF-8 bytes.

A pattern ``p0%p1%...%pn`` holds for a string that starts with ``p0`` (unless the pattern
starts with ``%``), then holds ``p1`` ... in that order without overlap, and ends with ``pn``
(unless it ends with ``%``).  Matching the leftmost occurrence of each middle piece is enough:
a later one would leave less room for the rest.  UTF-8 is self-synchronizing, so a byte
match of a valid UTF-8 piece is a character match.  In: the strings' bytes and int offsets,
the pieces' bytes with ``starts`` (``len(pieces) + 1`` boundaries), the anchors; out: 1/0
per string.
"""

from __future__ import annotations

import numpy as np

from . import jit


@jit
def _find(data, begin, end, pieces, lo, hi, shift):
    """First position ``>= begin`` where ``pieces[lo:hi]`` occurs in ``data[begin:end]``, or
    -1.  Horspool's search: the byte under the piece's last position says how far the piece
    can move (``shift``, its row of ``_shifts``), so most bytes are never looked at."""
    size = hi - lo
    if size == 0:
        return begin
    final = pieces[hi - 1]
    i = begin
    while i <= end - size:
        byte = data[i + size - 1]
        if byte == final:
            j = 0
            while j < size - 1 and data[i + j] == pieces[lo + j]:
                j += 1
            if j == size - 1:
                return i
        i += shift[byte]
    return -1


@jit
def _shifts(pieces, starts):
    """Per piece, how far each byte value under the piece's last position lets it move."""
    count = starts.shape[0] - 1
    shifts = np.empty((max(count, 1), 256), np.int64)
    for k in range(count):
        size = starts[k + 1] - starts[k]
        for byte in range(256):
            shifts[k, byte] = max(size, 1)
        for j in range(size - 1):
            shifts[k, pieces[starts[k] + j]] = size - 1 - j
    return shifts


@jit
def like_pieces(data, offsets, pieces, starts, anchored_start, anchored_end, out):
    """``out[i]`` = whether string ``i`` matches, for the rows where ``out[i]`` is True on
    entry (the others stay False: a filter's earlier tests dropped them); returns the number
    that do."""
    count = starts.shape[0] - 1
    shifts = _shifts(pieces, starts)
    matched = 0
    for i in range(out.shape[0]):
        if not out[i]:
            continue
        begin = offsets[i]
        end = offsets[i + 1]
        ok = True
        first = 0
        last = count
        if anchored_start:  # the first piece at the start
            size = starts[1] - starts[0]
            if end - begin < size or _find(data, begin, begin + size, pieces, starts[0],
                                           starts[1], shifts[0]) != begin:
                ok = False
            begin += size
            first = 1
        if ok and anchored_end and last > first:  # the last piece at the end
            size = starts[count] - starts[count - 1]
            if end - begin < size or _find(data, end - size, end, pieces, starts[count - 1],
                                           starts[count], shifts[count - 1]) != end - size:
                ok = False
            end -= size
            last = count - 1
        elif ok and anchored_end and end != begin:  # anchored both ends on one piece: exact
            ok = False
        k = first
        while ok and k < last:
            found = _find(data, begin, end, pieces, starts[k], starts[k + 1], shifts[k])
            if found < 0:
                ok = False
            else:
                begin = found + starts[k + 1] - starts[k]
            k += 1
        out[i] = ok
        matched += ok
    return matched
