"""Numeric SQL functions, registered into ``functions.REGISTRY``.

In: evaluated arguments and the ``Call``.  Out: an Arrow value.  DuckDB's semantics: ``round``
rounds half away from zero and keeps integers as they are; ``floor``/``ceil``/``trunc`` and the
logarithms return DOUBLE (``trunc`` keeps an integer, the three keep a FLOAT); ``log(x)`` is
log10 and ``log(b, x)`` log base b; ``sign(NaN)`` is 0; ``greatest``/``least`` skip NULLs and
order NaN above every number.
"""

from __future__ import annotations

import math
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import UnsupportedSql
from .frame import broadcast
from .functions import per_distinct, python_map, register, unify
from .interval_compare import field_extreme
from .value_types import cast_value, kind, plain, type_name

# One DOUBLE argument in, a DOUBLE out: (name, aliases, Arrow kernel).
_DOUBLE_FUNCTIONS = (
    ("floor", (), pc.floor), ("ceil", ("ceiling",), pc.ceil), ("trunc", (), pc.trunc),
    ("sqrt", (), pc.sqrt), ("exp", (), pc.exp), ("ln", (), pc.ln), ("log10", (), pc.log10),
    ("log2", (), pc.log2), ("sin", (), pc.sin), ("cos", (), pc.cos), ("tan", (), pc.tan),
    ("asin", (), pc.asin), ("acos", (), pc.acos), ("atan", (), pc.atan),
    ("cot", (), lambda x: pc.divide(1.0, pc.tan(x))), ("sinh", (), pc.sinh),
    ("cosh", (), pc.cosh), ("tanh", (), pc.tanh), ("asinh", (), pc.asinh),
    ("acosh", (), pc.acosh), ("atanh", (), pc.atanh),
    ("degrees", (), lambda x: pc.multiply(x, 180.0 / math.pi)),
    ("radians", (), lambda x: pc.multiply(x, math.pi / 180.0)),
)


def _on_double(kernel, decimal_mode: str | None = None):
    def impl(ctx, x):
        x = plain(x)
        if decimal_mode is not None and kind(x.type) == "decimal":
            return decimal_round(ctx, x, 0, decimal_mode)
        if decimal_mode is not None and pa.types.is_float32(x.type):  # a FLOAT stays one
            return kernel(x)
        if decimal_mode == "towards_zero" and kind(x.type) in ("int", "uint"):  # trunc
            return x
        return kernel(ctx.double(x, 0))
    return impl


# floor / ceil / trunc of a DECIMAL(p, s) are DECIMAL(p, 0), as in DuckDB
_DECIMAL_MODES = {"floor": "down", "ceil": "up", "trunc": "towards_zero"}
for _name, _aliases, _kernel in _DOUBLE_FUNCTIONS:
    register(_name, 1, aliases=_aliases)(_on_double(_kernel, _DECIMAL_MODES.get(_name)))


def decimal_round(ctx, x, places: int, mode: str):
    """A DECIMAL(p, s) rounded to ``places`` digits (``mode``: Arrow's round mode) as
    DECIMAL(p, max(places, 0)) -- DECIMAL(p, s) as it is when places >= s; below 0 places a
    DECIMAL(p, 0) gets one more digit for the carry (DuckDB: round(9999::DECIMAL(4,0), -1)
    is the DECIMAL(5,0) 10000)."""
    if places >= x.type.scale:
        return x
    precision = x.type.precision
    # past the leading digit every value rounds to 0: no wider a cast than that needs
    places = max(places, x.type.scale - precision - 1)
    if places < 0:
        precision = min(max(precision, precision - x.type.scale + 1), 38)
    # room for the carry into a new leading digit (9.96 -> 10.0)
    room = x.type.precision - min(places, 0) + 1
    x = pc.cast(x, (pa.decimal128 if room <= 38 else pa.decimal256)(room, x.type.scale))
    rounded = pc.round(x, places, round_mode=mode)
    try:
        return pc.cast(rounded, pa.decimal128(precision, max(places, 0)))
    except pa.ArrowInvalid:  # a DECIMAL(38) rounded past 38 digits
        raise ctx.error(f"Overflow in ROUND of DECIMAL({precision})") from None


@register("rand", 0)
def _random(ctx):
    """random(): a DOUBLE drawn uniformly from [0, 1) for each row, as DuckDB's (which seeds
    per query; tdbsql's draws are never repeated across runs)."""
    return pa.array(np.random.default_rng().random(ctx.rows), pa.float64())


@register("system_sample", 1, 2)
def _system_sample(ctx, share, seed=None):
    """The mark ``TABLESAMPLE p%`` (SYSTEM, DuckDB's default) leaves on its table
    (``planner.table_samples``): an array scan that streams keeps each whole tile with chance
    ``share`` and drops the mark, and one that merges cells draws their rows itself, per task
    (``engine.scan_step``); anywhere else (an Arrow table, read in one batch) a row is kept
    with that chance -- the same rows on every run for a REPEATABLE ``seed``."""
    chance = ctx.constant(share, 0, "share")
    if isinstance(chance, bool) or not isinstance(chance, (int, float, Decimal)) or \
            not 0 <= chance <= 1:
        raise ctx.error(f"the share must be a number from 0 to 1, got {chance}", 0)
    drawn = None if seed is None else ctx.constant(seed, 1, "seed")
    if drawn is not None and (isinstance(drawn, bool) or not isinstance(drawn, int) or drawn < 0):
        raise ctx.error(f"the seed must be a non-negative integer, got {drawn}", 1)
    return pa.array(np.random.default_rng(drawn).random(ctx.rows) < float(chance), pa.bool_())


@register("pi", 0)
def _pi(ctx):
    return pa.scalar(math.pi)


@register("atan2", 2)
def _atan2(ctx, y, x):
    return pc.atan2(ctx.double(y, 0), ctx.double(x, 1))


@register("abs", 1)
def _abs(ctx, x):
    x = ctx.number(x, 0)
    try:
        return pc.abs_checked(x)
    except pa.ArrowInvalid:
        raise ctx.error("integer overflow") from None


def signed_for_rounding(x):
    """An unsigned integer as the signed type DuckDB's round / round_even take it in (they
    have no unsigned forms): a BIGINT, a UBIGINT a HUGEINT (the DECIMAL(20,0) standing for
    it), so round(255::UTINYINT, -1) is 260 and -round(u) a negative number."""
    if kind(x.type) != "uint":
        return x
    return cast_value(x, pa.decimal128(20, 0) if x.type == pa.uint64() else pa.int64())


@register("round", 1, 2)
def _round(ctx, x, digits=None):
    x = signed_for_rounding(ctx.number(x, 0))
    if digits is not None and not isinstance(plain(digits), pa.Scalar) \
            and kind(x.type) != "decimal":  # digits per row (a DECIMAL's must be constant)
        return per_distinct(lambda v, d: _round(ctx, v, d), [x], [digits])
    places = 0 if digits is None else ctx.constant(digits, 1, "number of digits")
    if places is None:
        return pa.scalar(None, x.type) if isinstance(x, pa.Scalar) else pa.nulls(len(x), x.type)
    if not isinstance(places, int):
        raise ctx.error("the number of digits must be an integer", 1)
    if kind(x.type) == "decimal":
        return decimal_round(ctx, x, places, "half_towards_infinity")
    if kind(x.type) != "float" and places >= 0:
        return x
    if kind(x.type) == "float":
        return _round_double(x, places)
    try:
        return pc.round(x, ndigits=places, round_mode="half_towards_infinity")
    except pa.ArrowInvalid:  # a multiple of 10**-places past the integer type
        raise ctx.error("Overflow in ROUND of integer") from None


def _round_double(x, places: int):
    """DuckDB's rounding of a DOUBLE: half away from zero of x scaled by 10**places, where
    Arrow raises on an overflow."""
    values = broadcast(x, 1) if isinstance(x, pa.Scalar) else x
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    numbers = values.to_numpy(zero_copy_only=False).astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        modifier = np.float64(10.0) ** abs(places)
        scaled = numbers * modifier if places >= 0 else numbers / modifier
        whole = np.copysign(np.floor(np.abs(scaled) + 0.5), scaled)
        whole = np.where(np.abs(scaled) - np.floor(np.abs(scaled)) < 0.5,
                         np.copysign(np.floor(np.abs(scaled)), scaled), whole)
        rounded = whole / modifier if places >= 0 else whole * modifier
    # DuckDB: an overflow gives x back, 0 * inf (10**-places past the doubles) gives 0
    fallback = np.where(np.isnan(rounded) & (places < 0), 0.0, numbers)
    rounded = np.where(np.isfinite(rounded), rounded, fallback)
    rounded = np.where(np.isfinite(numbers), rounded, numbers)  # NaN and inf as they are
    out = pa.array(rounded, pa.float64(), mask=values.is_null().to_numpy(zero_copy_only=False))
    out = out.cast(x.type)
    return out[0] if isinstance(x, pa.Scalar) else out


@register("log", 1, 2)
def _log(ctx, base_or_x, x=None):
    """DuckDB: log(x) is log10(x); log(b, x) is log base b."""
    if x is None:
        return pc.log10(ctx.double(base_or_x, 0))
    base = ctx.double(base_or_x, 0)
    if isinstance(base, pa.Scalar) and base.as_py() in (2.0, 10.0):
        return (pc.log2 if base.as_py() == 2.0 else pc.log10)(ctx.double(x, 1))
    return pc.divide(pc.ln(ctx.double(x, 1)), pc.ln(base))


@register("power", 2, aliases=("pow",))
def _power(ctx, x, y):
    return pc.power(ctx.double(x, 0), ctx.double(y, 1))


@register("sign", 1)
def _sign(ctx, x):
    x = ctx.number(x, 0)
    signs = pc.sign(x)
    if kind(x.type) == "float":  # DuckDB: sign(NaN) = 0
        signs = pc.if_else(pc.is_nan(x), 0.0, signs)
    return pc.cast(signs, pa.int8())


@register("greatest", 1, None)
def _greatest(ctx, *values):
    return _extreme(ctx, values, greatest=True)


@register("least", 1, None)
def _least(ctx, *values):
    return _extreme(ctx, values, greatest=False)


def _extreme(ctx, values, greatest: bool):
    values = unify(ctx, values)
    target = values[0].type
    if pa.types.is_null(target):
        return values[0]
    if pa.types.is_interval(target):  # by the fields, not DuckDB's INTERVAL order
        return field_extreme(values, greatest, ctx.error)
    if pa.types.is_nested(target):
        raise UnsupportedSql(f"{ctx.written_name}() of {type_name(target)} values is not "
                             "supported")
    function = pc.max_element_wise if greatest else pc.min_element_wise
    if pa.types.is_boolean(target):  # Arrow has no boolean kernel: FALSE < TRUE as 0 < 1
        numbers = [pc.cast(value, pa.int8()) for value in values]
        return pc.cast(function(*numbers, skip_nulls=True), pa.bool_())
    result = function(*values, skip_nulls=True)
    if greatest and kind(target) == "float":  # NaN orders above every number (DuckDB)
        any_nan = None
        for value in values:
            nan = pc.fill_null(pc.is_nan(value), False)
            any_nan = nan if any_nan is None else pc.or_(any_nan, nan)
        result = pc.if_else(any_nan, pa.scalar(float("nan"), target), result)
    return result


# --- more numeric functions: numpy where Arrow has no kernel ---------------------------------


def numpy_unary(x, fn, out_type):
    """``fn`` over a numeric Arrow value's numpy values, NULLs kept."""
    if isinstance(x, pa.Scalar):
        return pa.scalar(fn(np.asarray([x.as_py()]))[0].item() if x.is_valid else None, out_type)
    if isinstance(x, pa.ChunkedArray):
        x = x.combine_chunks()
    filled = x.fill_null(0).to_numpy(zero_copy_only=False)
    return pa.array(fn(filled), out_type, mask=x.is_null().to_numpy(zero_copy_only=False))


def numpy_binary(fn, out_type, x, y):
    """``fn`` over two numeric Arrow values' numpy values, the NULL of either kept."""
    x, y = plain(x), plain(y)
    if isinstance(x, pa.Scalar) and isinstance(y, pa.Scalar):
        if not (x.is_valid and y.is_valid):
            return pa.scalar(None, out_type)
        with np.errstate(all="ignore"):
            answer = fn(np.asarray([x.as_py()]), np.asarray([y.as_py()]))
        return pa.scalar(answer[0].item(), out_type)
    rows = len(x) if not isinstance(x, pa.Scalar) else len(y)
    arrays = [broadcast(v, rows) for v in (x, y)]
    arrays = [a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a for a in arrays]
    missing = np.zeros(rows, bool)
    numbers = []
    for array in arrays:
        missing |= array.is_null().to_numpy(zero_copy_only=False)
        numbers.append(array.fill_null(0).to_numpy(zero_copy_only=False))
    with np.errstate(all="ignore"):
        answer = fn(*numbers)
    return pa.array(answer, out_type, mask=missing)


@register("cbrt", 1)
def _cbrt(ctx, x):
    return numpy_unary(ctx.double(x, 0), np.cbrt, pa.float64())


@register("isnan", 1, aliases=("is_nan",))
def _isnan(ctx, x):
    return pc.is_nan(ctx.double(x, 0))


@register("isinf", 1, aliases=("is_inf",))
def _isinf(ctx, x):
    return pc.is_inf(ctx.double(x, 0))


@register("isfinite", 1)
def _isfinite(ctx, x):
    return pc.is_finite(ctx.double(x, 0))


@register("signbit", 1)
def _signbit(ctx, x):
    """Whether the sign bit is set: true for -0.0 (and -NaN) as for any negative number."""
    return numpy_unary(ctx.double(x, 0), np.signbit, pa.bool_())


@register("even", 1)
def _even(ctx, x):
    """Away from zero to the nearest even integer, as a DOUBLE (DuckDB's even)."""
    def even(values):
        away = np.where(values >= 0, np.ceil(values), np.floor(values))
        return away + np.where(away % 2 != 0, np.sign(away), 0)
    return numpy_unary(ctx.double(x, 0), even, pa.float64())


@register("gcd", 2, aliases=("greatest_common_divisor",))
def _gcd(ctx, a, b):
    return _integer_pair(ctx, a, b, math.gcd)


@register("lcm", 2, aliases=("least_common_multiple",))
def _lcm(ctx, a, b):
    return _integer_pair(ctx, a, b, lambda x, y: abs(math.lcm(x, y)))


def _integer_pair(ctx, a, b, fn):
    a, b = ctx.integer(a, 0), ctx.integer(b, 1)

    def checked(x, y):  # gcd(-2**63, 0) is 2**63, lcm past BIGINT: DuckDB's range error
        value = fn(x, y)
        if not -2**63 <= value < 2**63:
            raise ctx.error("value is out of range")
        return value
    return python_map(checked, pa.int64(), a, b)


@register("factorial", 1)
def _factorial(ctx, n):
    def factorial(value):
        if value > 20:  # DuckDB's result is a HUGEINT up to 33!
            raise UnsupportedSql(f"factorial({value}) past BIGINT is not supported")
        return math.factorial(max(value, 0)) if value >= 0 else 1
    return python_map(factorial, pa.int64(), ctx.integer(n, 0))


@register("bit_count", 1)
def _bit_count(ctx, x):
    """Set bits of an integer's two's complement at its own width (DuckDB's bit_count)."""
    x = ctx.number(x, 0)
    if kind(x.type) not in ("int", "uint"):
        raise ctx.error(f"expects an integer, got {x.type}", 0)
    unsigned = np.dtype(f"uint{x.type.bit_width}")
    return numpy_unary(x, lambda v: np.bitwise_count(v.astype(unsigned)), pa.int8())


# --- bitwise operators -----------------------------------------------------------------------


def _integers(ctx, values):
    values = [pc.cast(plain(v), pa.int64()) if kind(plain(v).type) == "null"
              else ctx.number(v, i) for i, v in enumerate(values)]
    for index, value in enumerate(values):
        if kind(value.type) not in ("int", "uint"):
            raise ctx.error(f"bitwise operators take integers, got {value.type}", index)
    return unify(ctx, values)


@register("&", 2)
def _bit_and(ctx, a, b):
    return pc.bit_wise_and(*_integers(ctx, (a, b)))


@register("|", 2)
def _bit_or(ctx, a, b):
    return pc.bit_wise_or(*_integers(ctx, (a, b)))


@register("xor", 2)
def _bit_xor(ctx, a, b):
    return pc.bit_wise_xor(*_integers(ctx, (a, b)))


@register("~", 1)
def _bit_not(ctx, a):
    return pc.bit_wise_not(_integers(ctx, (a,))[0])


@register("<<", 2)
def _shift_left(ctx, a, b):
    """DuckDB refuses a negative number, a shift past the width and an overflow."""
    a, b = _integers(ctx, (a, b))
    return python_map(lambda x, n: _left_shift(ctx, x, n, a.type.bit_width), a.type, a, b)


def _left_shift(ctx, x: int, n: int, width: int) -> int:
    if x < 0:
        raise ctx.error(f"Cannot left-shift negative number {x}")
    if n < 0:
        raise ctx.error(f"Cannot left-shift by negative number {n}")
    if n >= width:
        raise ctx.error(f"Left-shift value {n} is out of range")
    if x >> (width - 1 - n):
        raise ctx.error(f"Overflow in left shift ({x} << {n})")
    return x << n


@register(">>", 2)
def _shift_right(ctx, a, b):
    a, b = _integers(ctx, (a, b))
    width = a.type.bit_width

    def shift(x, n):  # DuckDB: 0 past the width or by a negative number
        return 0 if n >= width or n < 0 else x >> n
    return python_map(shift, a.type, a, b)
