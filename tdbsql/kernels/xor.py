"""XOR filter (TileDB filter 16): each value XOR its predecessor, on unsigned integer views
(uint8..uint64) of the element bytes; XOR is the same for signed and unsigned types."""

from __future__ import annotations

from . import jit


@jit
def xor_encode(values, out):
    """``out[0] = values[0]``, ``out[i] = values[i] ^ values[i - 1]``; returns the count."""
    n = values.shape[0]
    if n == 0:
        return 0
    out[0] = values[0]
    for i in range(1, n):
        out[i] = values[i] ^ values[i - 1]
    return n


@jit
def xor_decode(values):
    """Prefix XOR in place: undoes ``xor_encode``; returns the count."""
    n = values.shape[0]
    for i in range(1, n):
        values[i] = values[i] ^ values[i - 1]
    return n
