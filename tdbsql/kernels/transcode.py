"""Wide strings to UTF-8: STRING_UTF16/UCS2 (UTF-16-LE code units) and STRING_UTF32/UCS4
(UTF-32-LE code units) cells, as Arrow wants them.

Input: code units (uint16 / uint32), ``n + 1`` int64 cell offsets in code units.  Output: UTF-8
bytes into ``out`` (the caller allocates the worst case: 3 bytes a UTF-16 unit, 4 a UTF-32 unit)
and ``n + 1`` int64 byte offsets.  Returns the bytes written, or -1 -- and the caller keeps the
raw bytes -- when a cell is not valid (lone surrogate, code point past U+10FFFF).
"""

from __future__ import annotations

from . import jit


@jit
def _put(code, out, pos):
    """UTF-8 encode one code point at ``out[pos]``; returns the new position."""
    if code < 0x80:
        out[pos] = code
        return pos + 1
    if code < 0x800:
        out[pos] = 0xC0 | (code >> 6)
        out[pos + 1] = 0x80 | (code & 0x3F)
        return pos + 2
    if code < 0x10000:
        out[pos] = 0xE0 | (code >> 12)
        out[pos + 1] = 0x80 | ((code >> 6) & 0x3F)
        out[pos + 2] = 0x80 | (code & 0x3F)
        return pos + 3
    out[pos] = 0xF0 | (code >> 18)
    out[pos + 1] = 0x80 | ((code >> 12) & 0x3F)
    out[pos + 2] = 0x80 | ((code >> 6) & 0x3F)
    out[pos + 3] = 0x80 | (code & 0x3F)
    return pos + 4


@jit
def utf16_to_utf8(units, offsets, out, out_offsets):
    pos = 0
    n = offsets.shape[0] - 1
    out_offsets[0] = 0
    for cell_idx in range(n):
        i = offsets[cell_idx]
        end = offsets[cell_idx + 1]
        while i < end:
            code = units[i]
            i += 1
            if 0xD800 <= code < 0xDC00:  # high surrogate: needs a low one in the same cell
                if i >= end or not (0xDC00 <= units[i] < 0xE000):
                    return -1
                code = 0x10000 + ((code - 0xD800) << 10) + (units[i] - 0xDC00)
                i += 1
            elif 0xDC00 <= code < 0xE000:
                return -1
            pos = _put(code, out, pos)
        out_offsets[cell_idx + 1] = pos
    return pos


@jit
def utf32_to_utf8(units, offsets, out, out_offsets):
    pos = 0
    n = offsets.shape[0] - 1
    out_offsets[0] = 0
    for cell_idx in range(n):
        for i in range(offsets[cell_idx], offsets[cell_idx + 1]):
            code = units[i]
            if code > 0x10FFFF or 0xD800 <= code < 0xE000:
                return -1
            pos = _put(code, out, pos)
        out_offsets[cell_idx + 1] = pos
    return pos
