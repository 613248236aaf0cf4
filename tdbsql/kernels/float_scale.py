"""Float scaling (TileDB filter 15): floats stored as rounded integers.

Encode in: float32 or float64 values (the arithmetic happens in that precision, as in TileDB),
scale and offset; out: int64 ``round((x - offset) / scale)`` with C's ``round`` (halves away
from zero), which the caller narrows to the stored byte width.  NaN and values outside the
int64 range become INT64_MIN, what the x86 conversion TileDB relies on produces.

Decode in: the stored integers widened to int64; out: float32 or float64
``scale * x + offset``, computed in double precision and then rounded to the output type.
"""

from __future__ import annotations

import numpy as np

from . import jit

_INT64_MIN = np.int64(-(2**63))
_TWO63 = 9.223372036854775808e18


@jit
def float_scale_encode(values, scale, offset, out):
    """Scale, shift and round ``values`` into ``out`` (int64); returns the count."""
    one = values.dtype.type(1.0)
    half = values.dtype.type(0.5)
    s = values.dtype.type(scale)
    o = values.dtype.type(offset)
    for i in range(values.shape[0]):
        x = (values[i] - o) / s
        a = abs(x)
        r = np.floor(a)
        if a - r >= half:
            r = r + one
        r = -r if x < 0 else r
        if not (-_TWO63 <= r < _TWO63):  # also catches NaN
            out[i] = _INT64_MIN
        else:
            out[i] = np.int64(r)
    return values.shape[0]


@jit
def float_scale_decode(stored, scale, offset, out):
    """``out[i] = T(scale * T(stored[i]) + offset)`` for the float type T of ``out``."""
    for i in range(stored.shape[0]):
        x = out.dtype.type(stored[i])
        out[i] = scale * np.float64(x) + offset
    return stored.shape[0]
