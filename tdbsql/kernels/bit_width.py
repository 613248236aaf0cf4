"""Bit width reduction (TileDB filter 7): per window, values minus the window minimum stored in
8, 16, 32 or 64 bits.

Encode in: the values as uint64 (zero-extended from the element width ``width`` bytes), whether
the type is signed, the window length in values.  Out (caller-allocated, one slot per window):
the window minimum (the element's bits), the stored bit width, and the packed bytes; a window
whose width does not shrink keeps its raw little-endian bytes.

Decode in: the packed bytes and the per-window minimum, bit width and byte length; out: the
element bytes.  Stored values are sign-extended for signed types, as TileDB reads them.
"""

from __future__ import annotations

import numpy as np

from . import jit


@jit
def _load_le(buf, pos, nbytes):
    v = np.uint64(0)
    for k in range(nbytes):
        v |= np.uint64(buf[pos + k]) << np.uint64(8 * k)
    return v


@jit
def _store_le(buf, pos, value, nbytes):
    for k in range(nbytes):
        buf[pos + k] = np.uint8((value >> np.uint64(8 * k)) & np.uint64(0xFF))


@jit
def _reduced_bits(range_, width, signed):
    """TileDB's width for ``range_ + 1`` values; -1 when ``range_ + 1`` overflows the type
    (no reduction, and TileDB then leaves the window minimum unset)."""
    full = 8 * width
    if signed:
        if range_ >= (np.uint64(1) << np.uint64(full - 1)) - np.uint64(1):
            return -1
        rp1 = range_ + np.uint64(1)
        if rp1 <= np.uint64(0x7F):
            return 8
        if rp1 <= np.uint64(0x7FFF):
            return 16
        if rp1 <= np.uint64(0x7FFFFFFF):
            return 32
        return 64
    if full == 64:
        if range_ == np.uint64(0xFFFFFFFFFFFFFFFF):
            return -1
    elif range_ == (np.uint64(1) << np.uint64(full)) - np.uint64(1):
        return -1
    rp1 = range_ + np.uint64(1)
    if rp1 <= np.uint64(0xFF):
        return 8
    if rp1 <= np.uint64(0xFFFF):
        return 16
    if rp1 <= np.uint64(0xFFFFFFFF):
        return 32
    return 64


@jit
def bit_width_encode(values, width, signed, window, out_min, out_bits, out_data):
    """Reduce each window of ``values``; returns the number of bytes written to ``out_data``."""
    n = values.shape[0]
    bias = np.uint64(1) << np.uint64(8 * width - 1) if signed else np.uint64(0)
    pos = 0
    w = 0
    for start in range(0, n, window):
        end = min(start + window, n)
        lo = values[start] ^ bias
        hi = lo
        for i in range(start + 1, end):
            v = values[i] ^ bias
            if v < lo:
                lo = v
            if v > hi:
                hi = v
        bits = _reduced_bits(hi - lo, width, signed)
        lo = lo ^ bias
        if bits < 0:
            # TileDB writes whatever its (reused) minimum variable held: the previous window's.
            bits = 8 * width
            out_min[w] = out_min[w - 1] if w > 0 else np.uint64(0)
        else:
            out_min[w] = lo
        out_bits[w] = bits
        if bits >= 8 * width:
            for i in range(start, end):
                _store_le(out_data, pos, values[i], width)
                pos += width
        else:
            nb = bits // 8
            for i in range(start, end):
                _store_le(out_data, pos, values[i] - lo, nb)
                pos += nb
        w += 1
    return pos


@jit
def bit_width_decode(data, win_min, win_bits, win_nbytes, width, signed, out):
    """Expand the windows of ``data`` into ``out`` (element bytes); returns bytes written.

    The caller has checked that every window's bytes lie inside ``data`` and ``out``."""
    src = 0
    dst = 0
    full = 8 * width
    mask = np.uint64(0xFFFFFFFFFFFFFFFF)
    if full < 64:
        mask = (np.uint64(1) << np.uint64(full)) - np.uint64(1)
    for w in range(win_bits.shape[0]):
        nbytes = win_nbytes[w]
        bits = win_bits[w]
        if bits >= full or nbytes % width != 0:
            for k in range(nbytes):
                out[dst + k] = data[src + k]
            src += nbytes
            dst += nbytes
            continue
        nb = bits // 8
        sign = np.uint64(1) << np.uint64(bits - 1)
        for _ in range(nbytes // width):
            v = _load_le(data, src, nb)
            if signed and (v & sign):
                # bits < full <= 64 here, so the shift stays in range.
                v |= ~((sign << np.uint64(1)) - np.uint64(1))
            _store_le(out, dst, (v + win_min[w]) & mask, width)
            src += nb
            dst += width
    return dst

