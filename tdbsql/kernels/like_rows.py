"""LIKE with a pattern per row: ``%`` any run of characters, ``_`` one character, the escape
character (if any) making the next one literal; on UTF-8 bytes, a character at a time.

The classic walk with one remembered ``%``: on a mismatch, the last ``%`` takes one more
character and the pattern after it starts again (a later ``%`` makes an earlier one's choice
final, so one is enough).  In: the strings' and patterns' bytes with int64 offsets and steps
(``offsets.row_bounds``), where both are valid, the escape byte (-1: none); out per valid
row: 1 match, 0 none, -1 the pattern ended with the escape character where the walk needed
the character after it (DuckDB's error).
"""

from __future__ import annotations

from . import jit
from .offsets import row_bounds

_PERCENT, _UNDERSCORE = 37, 95


@jit
def _width(lead):
    """Bytes of the UTF-8 character starting with byte ``lead``."""
    if lead < 0x80:
        return 1
    if lead < 0xE0:
        return 2
    if lead < 0xF0:
        return 3
    return 4


@jit
def _like(values, s, s_end, patterns, p, p_end, escape):
    star_p, star_s = -1, -1
    while True:
        if p < p_end:
            c = patterns[p]
            if c == _PERCENT and c != escape:
                p += 1
                star_p, star_s = p, s
                continue
            escaped = c == escape
            if escaped and p + 1 == p_end:
                return -1
            if s < s_end:
                if c == _UNDERSCORE and not escaped:
                    p += 1
                    s += _width(values[s])
                    continue
                if escaped:
                    p += 1
                width = _width(patterns[p])
                same = s + width <= s_end
                j = 0
                while same and j < width:
                    same = values[s + j] == patterns[p + j]
                    j += 1
                if same:
                    p += width
                    s += width
                    continue
        elif s == s_end:
            return 1
        if star_p < 0 or star_s >= s_end:  # no % to take one more character
            return 0
        star_s += _width(values[star_s])
        p, s = star_p, star_s


@jit
def like_rows(values, offsets, step, patterns, pattern_offsets, pattern_step, valid, escape,
              out):
    for k in range(out.shape[0]):
        if valid[k]:
            s, s_end = row_bounds(offsets, step, k)
            p, p_end = row_bounds(pattern_offsets, pattern_step, k)
            out[k] = _like(values, s, s_end, patterns, p, p_end, escape)
    return out.shape[0]
