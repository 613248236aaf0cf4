"""More of DuckDB's numeric functions, registered into ``functions.REGISTRY``.  NULL in, NULL
out, as DuckDB:

- ``gamma`` / ``lgamma``: the gamma function and the log of its absolute value, DOUBLE (a pole
  -- 0 or a negative integer -- is inf for ``lgamma``; ``gamma`` is inf at 0 and NaN at the
  negative integers and -inf).
- ``fmod(x, y)``: x - y * floor(x / y) on DOUBLEs (the sign of y; NaN for y = 0 or
  infinite); ``fdiv(x, y)``: floor(x / y) as a DOUBLE (inf / NaN for y = 0).
- ``nextafter(x, y)``: the next DOUBLE after x towards y -- a FLOAT when neither argument is
  a DOUBLE and one is a FLOAT.
- ``round_even(x, n)`` / ``roundbankers``: ``round`` with ties to the even digit; the type of
  x kept (a DECIMAL as ``round``'s).
- ``to_base(n, radix[, min_length])``: a non-negative integer's digits (0-9 A-Z) in radix 2 to
  36, zero-padded to min_length (0 to 64).
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .functions import per_distinct, python_map, register
from .functions_math import decimal_round, numpy_binary, numpy_unary, signed_for_rounding
from .value_types import kind, plain


def _gamma(value: float) -> float:
    if math.isnan(value) or value == -math.inf or (value < 0 and value.is_integer()):
        return math.nan
    if value == 0:
        return math.inf
    try:
        return math.gamma(value)
    except OverflowError:
        return math.inf


def _lgamma(value: float) -> float:
    if value <= 0 and value.is_integer() or math.isinf(value):
        return math.inf
    try:
        return math.lgamma(value)
    except OverflowError:  # past 2.5e305 the log of gamma is past the DOUBLEs too
        return math.inf


@register("gamma", 1)
def _gamma_function(ctx, x):
    return python_map(_gamma, pa.float64(), ctx.double(x, 0))


@register("lgamma", 1)
def _lgamma_function(ctx, x):
    return python_map(_lgamma, pa.float64(), ctx.double(x, 0))


@register("fmod", 2)
def _fmod(ctx, x, y):
    return numpy_binary(lambda a, b: a - b * np.floor(a / b), pa.float64(), ctx.double(x, 0),
                         ctx.double(y, 1))


@register("fdiv", 2)
def _fdiv(ctx, x, y):
    return numpy_binary(lambda a, b: np.floor(a / b), pa.float64(), ctx.double(x, 0),
                         ctx.double(y, 1))


@register("nextafter", 2)
def _nextafter(ctx, x, y):
    x, y = ctx.number(x, 0), ctx.number(y, 1)
    types = (x.type, y.type)
    single = pa.float32() in types and pa.float64() not in types
    target, numpy_type = (pa.float32(), np.float32) if single else (pa.float64(), np.float64)
    return numpy_binary(lambda a, b: np.nextafter(a.astype(numpy_type), b.astype(numpy_type)),
                         target, ctx.double(x, 0), ctx.double(y, 1))


@register("round_even", 2, aliases=("roundbankers",))
def _round_even(ctx, x, digits):
    if kind(plain(x).type) == "null":  # DuckDB binds a NULL to the BIGINT form
        x = pa.scalar(None, pa.int64())
    x = signed_for_rounding(ctx.number(x, 0))
    if not isinstance(plain(digits), pa.Scalar) and kind(x.type) != "decimal":
        return per_distinct(lambda v, d: _round_even(ctx, v, d), [x], [digits])
    places = ctx.constant(ctx.integer(digits, 1), 1, "number of digits")
    if places is None:
        return pa.scalar(None, x.type) if isinstance(x, pa.Scalar) else pa.nulls(len(x), x.type)
    if kind(x.type) == "decimal":
        return decimal_round(ctx, x, places, "half_to_even")
    if kind(x.type) == "float":
        return numpy_unary(x, lambda v: _nearest_even(v, places), x.type)
    if places >= 0:
        return x
    try:
        return pc.round(x, ndigits=places, round_mode="half_to_even")
    except pa.ArrowInvalid:  # a multiple of 10**-places past the integer type
        raise ctx.error("Overflow in ROUND_EVEN of integer") from None


def _nearest_even(values: np.ndarray, places: int) -> np.ndarray:
    """DuckDB's round_even of DOUBLEs: nearbyint of the scaled value (ties to even), the value
    as it is where that is not finite (0 where 10**-places is past the DOUBLEs)."""
    with np.errstate(all="ignore"):
        modifier = np.float64(10.0) ** abs(places)
        if places >= 0:
            rounded = np.rint(values * modifier) / modifier
        else:
            rounded = np.rint(values / modifier) * modifier
    fallback = np.where(np.isnan(rounded) & ~np.isnan(values) & (places < 0), 0.0, values)
    return np.where(np.isfinite(rounded), rounded, fallback)


_DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"


@register("to_base", 2, 3)
def _to_base(ctx, number, radix, min_length=None):
    number = ctx.integer(number, 0)
    radix = ctx.integer(radix, 1)
    length = pa.scalar(0) if min_length is None else ctx.integer(min_length, 2)

    def spelled(value: int, base: int, least: int) -> str:
        if value < 0:
            raise ctx.error("'to_base' number must be greater than or equal to 0", 0)
        if not 2 <= base <= 36:
            raise ctx.error("'to_base' radix must be between 2 and 36", 1)
        if not 0 <= least <= 64:
            raise ctx.error("'to_base' min_length must be between 0 and 64", 2)
        digits = ""
        while value:
            value, digit = divmod(value, base)
            digits = _DIGITS[digit] + digits
        return (digits or "0").rjust(least, "0")
    return python_map(spelled, pa.string(), number, radix, length)
