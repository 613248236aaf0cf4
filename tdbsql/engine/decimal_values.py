"""DECIMAL values as Arrow decimal128(p, s), with DuckDB's types and exact arithmetic.

In: Arrow values (arrays, chunked arrays, scalars) of decimal128 or integer types.  Out:
DuckDB's DECIMAL typing (``decimal_of``: an integer type is DECIMAL(3/5/10/19/20,0) beside a
DECIMAL; ``common_decimal``: the most whole digits and the largest scale of a set), exact
``+ - * %`` (``arithmetic``: + and - give DECIMAL(max whole digits + max scale + 1, max scale),
* gives (p1 + p2, s1 + s2) -- 18 digits when both fit 18, as DuckDB multiplies in BIGINT --
both capped at 38, with DuckDB's overflow errors), DECIMAL -> DOUBLE as DuckDB converts
(``to_double``: correctly rounded, not Arrow's cast, which is not) and DECIMAL -> DECIMAL /
integer casts rounding half away from zero.
Arrow's decimal kernels do the work (in decimal256 when Arrow's own intermediate precision
passes 38 digits); products past 76 go through Python decimals.
"""

from __future__ import annotations

import decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_WIDTHS = {pa.int8(): 3, pa.int16(): 5, pa.int32(): 10, pa.int64(): 19, pa.uint8(): 3,
           pa.uint16(): 5, pa.uint32(): 10, pa.uint64(): 20, pa.bool_(): 1}
EXACT = decimal.Context(prec=120)  # 38 digits times 38 digits, and scaleb: never rounds


class DecimalError(ValueError):
    pass


def decimal_of(t: pa.DataType, width: int | None = None) -> pa.DataType | None:
    """The DECIMAL an integer (or DECIMAL) type is beside a DECIMAL; ``width`` overrides an
    integer's (an integer literal is DuckDB's INTEGER: 10 digits)."""
    if pa.types.is_decimal(t):
        return t
    if t in _WIDTHS:
        return pa.decimal128(width or _WIDTHS[t], 0)
    return None


def common_decimal(types: list[pa.DataType]) -> pa.DataType:
    """DuckDB's common DECIMAL of DECIMAL and integer types: the most whole digits and the
    largest scale, at most 38 digits."""
    decimals = [decimal_of(t) for t in types]
    scale = max(t.scale for t in decimals)
    whole = max(t.precision - t.scale for t in decimals)
    return pa.decimal128(min(whole + scale, 38), scale)


def result_type(op: str, left: pa.DataType, right: pa.DataType) -> pa.DataType:
    """DuckDB's type of ``left <op> right`` for two DECIMAL types."""
    scale = max(left.scale, right.scale)
    whole = max(left.precision - left.scale, right.precision - right.scale)
    if op in ("add", "subtract"):
        return pa.decimal128(min(whole + scale + 1, 38), scale)
    if op == "modulo":
        return pa.decimal128(min(whole + scale, 38), scale)
    width = left.precision + right.precision
    if width > 18 and left.precision <= 18 and right.precision <= 18:
        width = 18  # DuckDB multiplies in BIGINT, checking for overflow
    if left.scale + right.scale > 38:
        raise DecimalError(f"Needed scale {left.scale + right.scale} to accurately represent "
                           "the multiplication result, but this is out of range of the "
                           "DECIMAL type. Max scale is 38; could not perform an accurate "
                           "multiplication. Either add a cast to DOUBLE, or add an explicit "
                           "cast to a decimal with a lower scale.")
    return pa.decimal128(min(width, 38), left.scale + right.scale)


_WORDS = {"add": ("addition", "+"), "subtract": ("subtraction", "-"),
          "multiply": ("multiplication", "*"), "modulo": ("modulo", "%")}


def arithmetic(op: str, left, right):
    """``left <op> right`` of two DECIMAL values (``op``: add, subtract, multiply, modulo),
    exact, in DuckDB's result type; DecimalError with DuckDB's words on overflow or a zero
    divisor."""
    target = result_type(op, left.type, right.type)
    if op == "modulo":
        return _modulo(left, right, target)
    if op != "multiply":  # DuckDB casts both operands to the result's type first
        left, right = (cast_decimal(v, target) for v in (left, right))
    needed = _arrow_precision(op, left.type, right.type)
    if needed <= 38:
        result = getattr(pc, op)(left, right)
    elif needed <= 76:  # (a sum's DECIMAL(38) plus another) in Arrow's decimal256
        result = getattr(pc, op)(*(pc.cast(v, pa.decimal256(v.type.precision, v.type.scale))
                                   for v in (left, right)))
    else:
        result = _python(op, left, right, target)
    return _narrow(result, target, op, left, right)


def _arrow_precision(op, left, right) -> int:
    if op == "multiply":
        return left.precision + right.precision + 1
    scale = max(left.scale, right.scale)
    return max(left.precision - left.scale, right.precision - right.scale) + scale + 1


def _narrow(result, target, op, left, right):
    """``result`` in ``target``; DuckDB's overflow error for the first value past it."""
    over = _past(result, target.precision - target.scale)
    if over is not None:
        if _any(over):
            a, b = _first_pair(over, left, right)
            word, sign = _WORDS[op]
            hint = ""
            if op == "multiply":
                hint = (". You might want to add an explicit cast to a bigger decimal"
                        if target.precision == 18 else
                        ". You might want to add an explicit cast to a decimal with a smaller "
                        "scale")
            raise DecimalError(f"Overflow in {word} of DECIMAL({target.precision}) "
                               f"({a} {sign} {b}){hint}.")
    return pc.cast(result, target, safe=False)


def _past(value, whole: int):
    """Where ``value``'s magnitude needs more than ``whole`` digits before the point (NULL
    counts as fitting); None when its type cannot hold such a value."""
    own = value.type
    if own.precision - own.scale <= whole:
        return None
    bound = pa.scalar(decimal.Decimal(10) ** whole, own)
    return pc.fill_null(pc.greater_equal(pc.abs(value), bound), False)


def _first_pair(over, left, right):
    index = 0 if isinstance(over, pa.Scalar) else \
        int(np.flatnonzero(np.asarray(pc.fill_null(over, False)))[0])
    return tuple(_units(_at(v, index)) for v in (left, right))


def _at(value, index: int):
    return value if isinstance(value, pa.Scalar) else value[index]


def _units(scalar: pa.Scalar) -> int:
    return int(scalar.as_py().scaleb(scalar.type.scale, EXACT))


def _any(mask) -> bool:
    if isinstance(mask, pa.Scalar):
        return bool(mask.as_py())
    return bool(pc.any(mask).as_py())


def _python(op, left, right, target):
    """Row by row in Python decimals (Arrow's intermediate precision would pass 76: a product
    of two DECIMALs of 38 digits)."""
    function = {"add": EXACT.add, "subtract": EXACT.subtract,
                "multiply": EXACT.multiply}[op]
    wide = pa.decimal256(76, target.scale)
    if isinstance(left, pa.Scalar) and isinstance(right, pa.Scalar):
        if not left.is_valid or not right.is_valid:
            return pa.scalar(None, wide)
        return pa.scalar(function(left.as_py(), right.as_py()), wide)
    length = len(left) if not isinstance(left, pa.Scalar) else len(right)
    a = [left.as_py()] * length if isinstance(left, pa.Scalar) else left.to_pylist()
    b = [right.as_py()] * length if isinstance(right, pa.Scalar) else right.to_pylist()
    return pa.array([None if x is None or y is None else function(x, y)
                     for x, y in zip(a, b)], wide)


def _modulo(left, right, target):
    """``%`` truncating toward zero (the remainder has the dividend's sign); a zero divisor
    is DuckDB's division-by-zero error.  Both in ``target``, so the remainder of their
    unscaled integers is the result's: numpy's ``fmod`` over int64 (C's ``%``), Python
    integers only for values past 62 bits."""
    left, right = cast_decimal(left, target), cast_decimal(right, target)
    zero = pc.and_(pc.equal(right, pa.scalar(decimal.Decimal(0), target)), pc.is_valid(left))
    if _any(pc.fill_null(zero, False)):
        raise DecimalError("division by zero")
    if isinstance(left, pa.Scalar) and isinstance(right, pa.Scalar):
        if not left.is_valid or not right.is_valid:
            return pa.scalar(None, target)
        return pa.scalar(_fmod(left.as_py(), right.as_py()), target)
    length = len(right) if isinstance(left, pa.Scalar) else len(left)
    a, b = (pa.repeat(v, length) if isinstance(v, pa.Scalar) else v for v in (left, right))
    null = np.asarray(pc.or_(pc.is_null(a), pc.is_null(b)), dtype=bool)
    dividends, divisors = units_of(a), units_of(b)
    divisors[null] = 1  # (a NULL row's 0) no division by zero
    if not (_int64_safe(dividends) and _int64_safe(divisors)):
        return pa.array([None if n else _fmod(decimal.Decimal(int(x)), decimal.Decimal(int(y)))
                         .scaleb(-target.scale, EXACT) for x, y, n in
                         zip(dividends.tolist(), divisors.tolist(), null.tolist())], target)
    return from_units(np.fmod(dividends, divisors), null, target)


def _int64_safe(units: np.ndarray) -> bool:
    """Whether ``fmod`` may take these in int64: within +-2**62, clear of -2**63 % -1."""
    return units.dtype != object and (not len(units) or (
        int(units.min()) > -2**62 and int(units.max()) < 2**62))


def _fmod(x: decimal.Decimal, y: decimal.Decimal) -> decimal.Decimal:
    return EXACT.remainder(x, y)  # the sign of the dividend, as C's fmod


# --- casts ----------------------------------------------------------------------------------


def cast_decimal(value, target: pa.DataType):
    """A DECIMAL or integer value as the DECIMAL ``target``, rounding half away from zero;
    DecimalError (DuckDB's words) when a value needs more whole digits than ``target``."""
    source = value.type
    if pa.types.is_decimal(source):
        value = rounded(value, target.scale)
    if not pa.types.is_decimal(source):  # an integer: exact in 38 digits, then scaled
        value = pc.cast(value, pa.decimal128(38, 0))
    whole = target.precision - target.scale
    wide = pa.decimal128(38, min(value.type.scale, target.scale)) if \
        value.type.precision - value.type.scale + target.scale > 38 else None
    over = _past(value, whole)
    if over is not None:
        if _any(over):
            bad = _at(value, 0 if isinstance(over, pa.Scalar) else int(np.flatnonzero(
                np.asarray(over))[0])).as_py()
            shown = f"{bad:.{source.scale}f}" if pa.types.is_decimal(source) else str(int(bad))
            if pa.types.is_decimal(source):
                raise DecimalError(f'Casting value "{shown}" to type DECIMAL('
                                   f'{target.precision},{target.scale}) failed: value is out '
                                   "of range!")
            raise DecimalError(f"Could not cast value {shown} to DECIMAL({target.precision},"
                               f"{target.scale})")
    if wide is not None:
        value = pc.cast(value, wide, safe=False)
    return pc.cast(value, target, safe=False)


def to_text(value):
    """DECIMAL values as DuckDB prints them: every digit of the scale, never an exponent
    (``0.0000000000``, ``0.0000001000``).  Arrow's cast writes an exponent for a value
    under 10**-6 or a zero of more than 6 digits of scale (``0E-10``, ``1.000E-7``): only
    those go through Python's ``format(d, "f")``."""
    if isinstance(value, pa.ChunkedArray):
        return pa.chunked_array([to_text(c) for c in value.chunks], pa.string())
    if isinstance(value, pa.Scalar):
        return pa.scalar(format(value.as_py(), "f") if value.is_valid else None, pa.string())
    text = pc.cast(value, pa.string())
    exponent = pc.fill_null(pc.match_substring(text, "E"), False)
    if not _any(exponent):
        return text
    digits = [format(d, "f") for d in pc.filter(value, exponent).to_pylist()]
    return pc.replace_with_mask(text, exponent, pa.array(digits, pa.string()))


def rounded(value, places: int):
    """DECIMAL values rounded to ``places`` digits (fewer than their scale), halves away from
    zero, as DECIMAL(p + 1 - s + places, places): room for rounding's carry into a new leading
    digit (99.99 rounded to one digit is 100.0).  Arrow's round gives 0, silently, for a carry
    past its type's precision, so it rounds one digit wider (256 bits past 38 digits)."""
    t = value.type
    if places >= t.scale:
        return value
    room = (pa.decimal128 if t.precision < 38 else pa.decimal256)(t.precision + 1, t.scale)
    result = pc.round(pc.cast(value, room), places, round_mode="half_towards_infinity")
    return pc.cast(result, pa.decimal128(min(38, t.precision + 1 - t.scale + places), places))


def to_double(value):
    """DECIMAL values as DOUBLEs as DuckDB 2.0 converts them: correctly rounded.  The unscaled
    integer divided by 10**scale in doubles is that while both are exact doubles (at most
    2**53, a scale up to 22); a wider value is divided as a Python int, whose true division
    rounds once (the double quotient of its rounded double was off by one unit in the last
    place for about a quarter of 18-digit values)."""
    if isinstance(value, pa.Scalar):
        return to_double(pa.array([value.as_py()], value.type))[0]
    if isinstance(value, pa.ChunkedArray):
        return pa.chunked_array([to_double(c) for c in value.chunks], pa.float64())
    scale = value.type.scale
    units = _float_units(value)
    result = units / 10.0 ** scale
    wide = np.abs(units) > 2.0**53 if scale <= 22 else np.ones(len(units), dtype=bool)
    if wide.any():
        exact = units_of(value)[wide].tolist()
        result[wide] = [_huge_double(int(unit)) for unit in exact] \
            if scale == 0 and value.type.precision > 18 else \
            [int(unit) / 10**scale for unit in exact]
    return pa.array(result, pa.float64(), mask=_null_mask(value))


def _huge_double(unit: int) -> float:
    """A 128-bit integer DECIMAL(p > 18, 0) as DuckDB makes it a double, from its two 64-bit
    words (rounded twice past 2**64, as DuckDB's hugeint cast rounds it)."""
    upper, lower = unit >> 64, unit & (2**64 - 1)
    if upper == -1:
        return -float(2**64 - 1 - lower) - 1
    return float(lower) + float(upper) * float(2**64 - 1)


def unscaled_doubles(array) -> np.ndarray:
    """A decimal128 array's unscaled integers as doubles (NULLs as 0)."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    return _float_units(array.fill_null(0) if array.null_count else array)


def _float_units(array: pa.Array) -> np.ndarray:
    """The unscaled values of a decimal128 array as doubles (the 128-bit words combined)."""
    low, high = _words(array)
    fits = high == (low >> 63)  # the value is its low word
    if fits.all():
        return low.astype(np.float64)
    return np.where(fits, low.astype(np.float64),
                    high.astype(np.float64) * 2.0**64 + low.view(np.uint64).astype(np.float64))


def _null_mask(array: pa.Array):
    if array.null_count == 0:
        return None
    return np.asarray(array.is_null().to_numpy(zero_copy_only=False), dtype=bool)


def to_integer(value, target: pa.DataType):
    """DECIMAL -> integer: rounded half away from zero (DuckDB), then range-checked by the
    caller's cast."""
    return pc.cast(pc.cast(rounded(value, 0), pa.decimal128(38, 0)), target)


def from_units(units: np.ndarray, null: np.ndarray | None, target: pa.DataType) -> pa.Array:
    """A decimal128 array of whole ``units`` of 10**-scale (a float or integer array; NULL
    where ``null``), built from its 128-bit words while they fit 63 bits."""
    whole = np.asarray(units)
    if whole.dtype.kind == "f":
        if np.all(np.abs(whole) < 2.0**63):
            whole = whole.astype(np.int64)
        else:  # past 63 bits: each value's digits through Python
            values = [decimal.Decimal(int(u)).scaleb(-target.scale, EXACT) for u in whole]
            return pa.array(values, target, mask=null)
    whole = whole.astype(np.int64)
    words = np.empty(2 * len(whole), dtype=np.int64)
    words[0::2], words[1::2] = whole, whole >> 63
    validity = None if null is None or not null.any() else \
        pa.array(~null).buffers()[1]
    return pa.Array.from_buffers(target, len(whole), [validity, pa.py_buffer(words)])


def units_of(array) -> np.ndarray:
    """A decimal128 array's unscaled integers: int64 when every one fits 63 bits, else
    Python ints (an object array); NULLs as 0."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    array = array.fill_null(0) if array.null_count else array
    low, high = _words(array)
    if (high == (low >> 63)).all():
        return low.astype(np.int64)
    return np.array([(h << 64) + lo for h, lo in zip(high.tolist(),
                                                     low.view(np.uint64).tolist())], object)


def _words(array: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """The low and high 64-bit words of a decimal128 array's unscaled integers (little
    endian: low first), as int64 views of its buffer."""
    words = np.frombuffer(array.buffers()[1], dtype=np.int64)[
        2 * array.offset: 2 * (array.offset + len(array))]
    return words[0::2], words[1::2]
