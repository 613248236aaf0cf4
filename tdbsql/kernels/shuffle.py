"""Byte and bit shuffles (TileDB's BYTESHUFFLE and BITSHUFFLE filters, blosc2 layout).

In: a uint8 buffer holding elements of ``typesize`` bytes.  Out: a uint8 buffer of the same
length, allocated by the caller.

Byte shuffle: byte ``j`` of element ``i`` goes to ``j * n + i``; bytes past the last whole
element are copied unchanged.

Bit shuffle works on blocks of ``BLOCK_BYTES``; inside a block of ``n`` elements (``n`` rounded
down to a multiple of 8, the rest copied unchanged) bit ``k`` of byte ``j`` of element ``i``
goes to bit ``i % 8`` of byte ``(j * 8 + k) * n / 8 + i / 8``.
"""

from __future__ import annotations

import numpy as np

from . import jit

BLOCK_BYTES = 8192  # TileDB keeps kiyo-masui/bitshuffle's 8 KiB target block size

_M1 = np.uint64(0x00AA00AA00AA00AA)
_M2 = np.uint64(0x0000CCCC0000CCCC)
_M3 = np.uint64(0x00000000F0F0F0F0)


@jit
def byteshuffle(src, dst, typesize):
    """Byte-transpose ``src`` into ``dst``; returns the number of bytes written."""
    n = src.shape[0] // typesize
    for j in range(typesize):
        base = j * n
        for i in range(n):
            dst[base + i] = src[i * typesize + j]
    for p in range(n * typesize, src.shape[0]):
        dst[p] = src[p]
    return src.shape[0]


@jit
def byteunshuffle(src, dst, typesize):
    """Undo ``byteshuffle``; returns the number of bytes written."""
    n = src.shape[0] // typesize
    for j in range(typesize):
        base = j * n
        for i in range(n):
            dst[i * typesize + j] = src[base + i]
    for p in range(n * typesize, src.shape[0]):
        dst[p] = src[p]
    return src.shape[0]


@jit
def _transpose8x8(x):
    # Bit (row m, column k) of the 8x8 matrix held in x (byte m = row m) moves to (k, m).
    t = (x ^ (x >> np.uint64(7))) & _M1
    x = x ^ t ^ (t << np.uint64(7))
    t = (x ^ (x >> np.uint64(14))) & _M2
    x = x ^ t ^ (t << np.uint64(14))
    t = (x ^ (x >> np.uint64(28))) & _M3
    x = x ^ t ^ (t << np.uint64(28))
    return x


@jit
def _bitshuffle_block(src, dst, start, nbytes, typesize, invert):
    n = nbytes // typesize
    n -= n % 8
    groups = n // 8
    for j in range(typesize):
        for g in range(groups):
            x = np.uint64(0)
            for m in range(8):
                if invert:
                    b = src[start + (j * 8 + m) * groups + g]
                else:
                    b = src[start + (g * 8 + m) * typesize + j]
                x |= np.uint64(b) << np.uint64(8 * m)
            x = _transpose8x8(x)
            for k in range(8):
                b = np.uint8((x >> np.uint64(8 * k)) & np.uint64(0xFF))
                if invert:
                    dst[start + (g * 8 + k) * typesize + j] = b
                else:
                    dst[start + (j * 8 + k) * groups + g] = b
    for p in range(start + n * typesize, start + nbytes):
        dst[p] = src[p]


@jit
def bitshuffle(src, dst, typesize, invert):
    """Bit-transpose ``src`` into ``dst`` block by block (``invert`` undoes it).

    Returns the number of bytes written."""
    total = src.shape[0]
    start = 0
    while start < total:
        nbytes = min(BLOCK_BYTES, total - start)
        _bitshuffle_block(src, dst, start, nbytes, typesize, invert)
        start += nbytes
    return total
