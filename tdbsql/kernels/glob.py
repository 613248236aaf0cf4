"""GLOB with a pattern per row, on bytes as DuckDB matches it: ``*`` any run of bytes, ``?``
one byte, ``[...]`` one byte of a class (``!`` first negates it, ``]`` first is literal,
``a-z`` a range of signed bytes as C's ``char`` compares), ``\\`` the next byte literally.
An unclosed class or a trailing backslash matches nothing.  Every token but ``*`` takes one
byte, so one remembered ``*`` suffices (as in ``kernels.like_rows``).  In: the strings' and
patterns' bytes with int64 offsets and steps (``offsets.row_bounds``: 0 for a constant), where
both are valid; out per row: 1 match, 0 none (left alone where not valid).
"""

from __future__ import annotations

from . import jit
from .offsets import row_bounds

_STAR, _QUESTION, _OPEN, _CLOSE, _BANG, _DASH, _BACKSLASH = 42, 63, 91, 93, 33, 45, 92


@jit
def _signed(byte):
    return byte - 256 if byte >= 128 else byte


@jit
def _class(patterns, p, p_end, byte):
    """(whether ``byte`` is in the class opening at ``p`` -- just past its ``[`` --, the
    position past its ``]``), -1 for the position of an unclosed class."""
    invert = p < p_end and patterns[p] == _BANG
    if invert:
        p += 1
    first = p
    found = False
    while p < p_end:
        c = patterns[p]
        if c == _CLOSE and p > first:
            return found != invert, p + 1
        if p + 1 == p_end:
            break
        if patterns[p + 1] == _DASH and p + 2 < p_end and patterns[p + 2] != _CLOSE:
            value = _signed(byte)
            found = found or _signed(c) <= value <= _signed(patterns[p + 2])
            p += 3
        else:
            found = found or c == byte
            p += 1
    return False, -1


@jit
def _glob(values, s, s_end, patterns, p, p_end):
    star_p, star_s = -1, -1
    while True:
        if p < p_end and patterns[p] == _STAR:
            p += 1
            star_p, star_s = p, s
            continue
        if p < p_end and s < s_end:
            c = patterns[p]
            matched, after = True, p + 1
            if c == _OPEN:
                matched, after = _class(patterns, p + 1, p_end, values[s])
            elif c == _BACKSLASH:
                matched = p + 1 < p_end and patterns[p + 1] == values[s]
                after = p + 2
            elif c != _QUESTION:
                matched = c == values[s]
            if matched:
                p, s = after, s + 1
                continue
        elif p == p_end and s == s_end:
            return 1
        if star_p < 0 or star_s >= s_end:
            return 0
        star_s += 1
        p, s = star_p, star_s


@jit
def glob_rows(values, offsets, step, patterns, pattern_offsets, pattern_step, valid, out):
    for k in range(out.shape[0]):
        if valid[k]:
            s, s_end = row_bounds(offsets, step, k)
            p, p_end = row_bounds(pattern_offsets, pattern_step, k)
            out[k] = _glob(values, s, s_end, patterns, p, p_end)
    return out.shape[0]
