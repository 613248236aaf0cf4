"""Delta codings: DELTA, DOUBLE_DELTA and POSITIVE_DELTA (TileDB filters 19, 6 and 10).

Values come in as unsigned integer arrays of the element width (uint8..uint64 views of the
tile bytes): the arithmetic wraps modulo 2**width exactly like TileDB's casts, so signedness only
matters where TileDB compares values (positive delta's order check, double delta's bit size),
and there the caller passes a ``bias`` (the sign bit for signed types) or 64-bit signed values.

Double delta's bit stream: per value from the third on, one sign bit then ``bitsize`` bits of
``|dd|``, most significant first, filled into uint64 words from bit 63 down (the words are
stored little-endian).
"""

from __future__ import annotations

import numpy as np

from . import jit

_ONE = np.uint64(1)
_ZERO = np.uint64(0)


# -- DELTA ------------------------------------------------------------------------------------


@jit
def delta_encode(values, out):
    """``out[0] = values[0]``, ``out[i] = values[i] - values[i - 1]`` (wrapping)."""
    n = values.shape[0]
    if n == 0:
        return 0
    out[0] = values[0]
    for i in range(1, n):
        out[i] = values[i] - values[i - 1]
    return n


@jit
def delta_decode(values):
    """Prefix sum in place (wrapping): undoes ``delta_encode``."""
    n = values.shape[0]
    for i in range(1, n):
        values[i] = values[i - 1] + values[i]
    return n


# -- POSITIVE_DELTA ---------------------------------------------------------------------------


@jit
def positive_delta_encode(values, out, window, bias):
    """Per window of ``window`` values: deltas to the previous value, 0 for the first.

    Returns -1, or the index of the first value smaller than its predecessor (compared after
    XOR with ``bias`` so that signed types order correctly) -- TileDB refuses such data."""
    n = values.shape[0]
    for start in range(0, n, window):
        end = min(start + window, n)
        prev = values[start]
        for i in range(start, end):
            cur = values[i]
            if (cur ^ bias) < (prev ^ bias):
                return i
            out[i] = cur - prev
            prev = cur
    return -1


@jit
def positive_delta_decode(deltas, out, window, first_values):
    """Undo ``positive_delta_encode``: window ``w`` starts from ``first_values[w]``."""
    n = deltas.shape[0]
    w = 0
    for start in range(0, n, window):
        end = min(start + window, n)
        if end > start:
            out[start] = first_values[w] + deltas[start]
        for i in range(start + 1, end):
            out[i] = out[i - 1] + deltas[i]
        w += 1
    return n


# -- DOUBLE_DELTA -----------------------------------------------------------------------------


@jit
def _sub_checked(a, b, unsigned):
    """``a - b`` as int64 and whether it overflowed; ``unsigned`` reads a, b as uint64."""
    d = a - b
    if unsigned:
        ua = np.uint64(a)
        ub = np.uint64(b)
        if ua >= ub:
            return d, (ua - ub) > np.uint64(0x7FFFFFFFFFFFFFFF)
        return d, (ub - ua) > np.uint64(0x8000000000000000)
    return d, ((a ^ b) & (a ^ d)) < 0


@jit
def double_delta_bitsize(values, unsigned):
    """Bits needed for the largest ``|dd|`` (and the first delta), as TileDB computes it.

    ``values`` are int64 (``unsigned`` means they hold uint64 bits).  Returns -1 when a delta or
    double delta leaves the int64 range (TileDB refuses to compress such data)."""
    n = values.shape[0]
    if n <= 2:
        return 0
    max_abs = _ZERO
    prev_delta = np.int64(0)
    for i in range(1, n):
        delta, overflow = _sub_checked(values[i], values[i - 1], unsigned)
        if overflow:
            return -1
        if i == 1:
            cur = delta
        else:
            cur, overflow = _sub_checked(delta, prev_delta, False)
            if overflow:
                return -1
        mag = np.uint64(-cur) if cur < 0 else np.uint64(cur)
        if mag > max_abs:
            max_abs = mag
        prev_delta = delta
    bits = 0
    while True:
        bits += 1
        max_abs >>= _ONE
        if max_abs == _ZERO:
            break
    return bits


@jit
def double_delta_pack(values, bitsize, words):
    """Write the sign and ``bitsize``-bit magnitude of each double delta of ``values`` (int64)
    into ``words`` (zeroed, ``double_delta_words`` long).  Returns the number of words used."""
    n = values.shape[0]
    pos = 0  # bit position in the stream
    for i in range(2, n):
        dd = (values[i] - values[i - 1]) - (values[i - 1] - values[i - 2])
        if dd < 0:
            words[pos >> 6] |= _ONE << np.uint64(63 - (pos & 63))
        pos += 1
        mag = np.uint64(-dd) if dd < 0 else np.uint64(dd)
        for b in range(bitsize - 1, -1, -1):
            if (mag >> np.uint64(b)) & _ONE:
                words[pos >> 6] |= _ONE << np.uint64(63 - (pos & 63))
            pos += 1
    return (pos + 63) >> 6


@jit
def double_delta_unpack(words, bitsize, out):
    """Fill ``out[2:]`` (uint64, ``out[0]`` and ``out[1]`` already set) from the bit stream;
    the values wrap modulo 2**64, the caller truncates them to the element width."""
    n = out.shape[0]
    pos = 0
    for i in range(2, n):
        negative = (words[pos >> 6] >> np.uint64(63 - (pos & 63))) & _ONE
        pos += 1
        mag = _ZERO
        for _ in range(bitsize):
            bit = (words[pos >> 6] >> np.uint64(63 - (pos & 63))) & _ONE
            mag = (mag << _ONE) | bit
            pos += 1
        dd = _ZERO - mag if negative else mag
        out[i] = dd + out[i - 1] + out[i - 1] - out[i - 2]
    return n


def double_delta_words(count: int, bitsize: int) -> int:
    """Number of uint64 words the double deltas of ``count`` values take."""
    if count <= 2:
        return 0
    return ((count - 2) * (bitsize + 1) + 63) // 64
