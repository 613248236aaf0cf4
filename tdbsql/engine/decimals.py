"""DECIMAL(p, s) as DuckDB computes it, over tdbsql's stand-in for it (TileDB has no decimal).

In: the value being cast, the target ``DecimalType`` and what the SQL says of the source (a
literal's text, the scale of an expression DuckDB types DECIMAL).  Out: the cast value -- a
DOUBLE holding the value rounded to ``s`` digits (BIGINT for DECIMAL(p, 0) with p <= 18) --
and DuckDB's conversion error for the first value that does not fit in ``p`` digits.

DuckDB's readings, one per source type (``CAST(x AS DECIMAL(p, s))``):
  - a DECIMAL (a literal such as ``1.005``, a CAST to DECIMAL, +, - and * of those): exact,
    half away from zero (``1.005`` -> 1.01); out of range: ``Casting value "99999.5" to type
    DECIMAL(5,0) failed: value is out of range!``;
  - a DOUBLE: ``round(x * 10**s)`` in double arithmetic, half away from zero (``1.005::DOUBLE``
    -> 1.00: the double is below 1.005); NaN, inf and out of range: ``Could not cast value
    100000000000000000000.000000 to DECIMAL(10,2)``;
  - an integer or boolean: exact; out of range: ``Could not cast value 100 to DECIMAL(2,0)``;
  - a string: its digits exactly (spaces around, ``_`` between digits and an exponent
    allowed), half away from zero; ``Could not convert string "x" to DECIMAL(10,2)``.
A DOUBLE standing for a DECIMAL is snapped back to its own digits first (``round(x * 10**s0)``
is exact while the digits fit a double's 53 bits), so casts between DECIMALs stay exact.
"""

from __future__ import annotations

import decimal
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from .value_types import _DECIMAL, _SPACES, kind, plain

T = exp.DataType.Type
_EXACT = 2**53  # units (value * 10**scale) a double holds exactly


@dataclass(frozen=True)
class DecimalType:
    width: int
    scale: int

    def sql(self) -> str:
        return f"DECIMAL({self.width},{self.scale})"

    @property
    def arrow(self) -> pa.DataType:
        """The stand-in: whole numbers of up to 18 digits as BIGINT, the rest as DOUBLE."""
        return pa.int64() if self.scale == 0 and self.width <= 18 else pa.float64()


def declared(data_type: exp.DataType) -> DecimalType:
    """The DECIMAL a type names (DECIMAL alone is DECIMAL(18,3), DECIMAL(p) DECIMAL(p,0));
    ValueError with DuckDB's binder words when DuckDB refuses the width or scale."""
    params = [e.this if isinstance(e, exp.DataTypeParam) else e for e in data_type.expressions]
    try:
        numbers = [int(p.this) for p in params]
    except (AttributeError, ValueError):
        raise ValueError("DECIMAL width and scale must be integer constants") from None
    if len(numbers) > 2:
        raise ValueError("A decimal type can only take two type modifiers, width and scale")
    width, scale = (18, 3) if not numbers else (numbers[0], numbers[1] if len(numbers) > 1
                                                 else 0)
    if not 1 <= width <= 38:
        raise ValueError("DECIMAL type width must be between 1 and 38")
    if not 0 <= scale <= width:
        raise ValueError("DECIMAL type scale cannot be greater than width")
    return DecimalType(width, scale)


def decimal_literal(node: exp.Expression) -> str | None:
    """The text of a literal DuckDB types DECIMAL (``1.005``, ``-2.5``: a point, no
    exponent, up to 38 digits), sign included; None for anything else."""
    negative = isinstance(node, exp.Neg)
    if negative:
        node = node.this
    if isinstance(node, exp.Literal) and not node.is_string and "." in node.this \
            and "e" not in node.this.lower() and len(node.this) <= 39:  # 38 digits, or DOUBLE
        return ("-" if negative else "") + node.this
    return None


def decimal_type_of(node: exp.Expression) -> DecimalType | None:
    """The DECIMAL type DuckDB gives an expression, when its SQL alone says so: a decimal
    literal, a CAST to DECIMAL, and ``+ - *`` of those and integer literals; None otherwise
    (a column, a function: tdbsql cannot tell a DECIMAL there from a DOUBLE)."""
    text = decimal_literal(node)
    if text is not None:
        whole, _, fraction = text.lstrip("-").partition(".")
        width = max(len(whole + fraction), 1)  # every digit written counts, zeros too
        return DecimalType(width, len(fraction))
    if isinstance(node, (exp.Paren, exp.Neg)):
        return decimal_type_of(node.this)
    if isinstance(node, (exp.Cast, exp.TryCast)) and node.to.this == T.DECIMAL:
        try:
            return declared(node.to)
        except ValueError:
            return None
    if isinstance(node, (exp.Add, exp.Sub, exp.Mul)):
        left, right = _operand(node.this), _operand(node.expression)
        if left is None or right is None or (left.width, right.width) == (-1, -1):
            return None
        left, right = (integer_literal_type(integer_literal(n)) if t.width == -1 else t
                       for t, n in ((left, node.this), (right, node.expression)))
        if isinstance(node, exp.Mul):
            width = left.width + right.width
            if width > 18 and left.width <= 18 and right.width <= 18:
                width = 18  # DuckDB multiplies in BIGINT, checking for overflow
            return DecimalType(min(width, 38), left.scale + right.scale)
        scale = max(left.scale, right.scale)
        whole = max(left.width - left.scale, right.width - right.scale)
        return DecimalType(min(whole + scale + 1, 38), scale)
    return None


def _operand(node: exp.Expression) -> DecimalType | None:
    """A DECIMAL operand's type; an integer literal as width -1 (it takes any width)."""
    if integer_literal(node) is not None:
        return DecimalType(-1, 0)
    return decimal_type_of(node)


def integer_literal(node: exp.Expression) -> int | None:
    """The value of an integer literal (negated or in parentheses), else None."""
    inner = node.this if isinstance(node, (exp.Neg, exp.Paren)) else node
    if isinstance(inner, exp.Literal) and not inner.is_string and inner.this.isdigit():
        return -int(inner.this) if isinstance(node, exp.Neg) else int(inner.this)
    return None


def integer_literal_type(value: int) -> DecimalType:
    """The DECIMAL an integer literal becomes beside a DECIMAL: DuckDB types it INTEGER,
    BIGINT or HUGEINT by its size, DECIMAL(10,0), (19,0) or (38,0)."""
    if -2**31 <= value < 2**31:
        return DecimalType(10, 0)
    return DecimalType(19, 0) if -2**63 <= value < 2**63 else DecimalType(38, 0)


# --- the cast -------------------------------------------------------------------------------


def to_decimal(value, target: DecimalType, literal: str | None = None,
               source_scale: int | None = None):
    """``value`` cast to ``target`` as DuckDB casts it (see the module docstring); returns
    ``(result, problem)``: the result has NULL where a value does not convert, and
    ``problem`` is DuckDB's message for the first such value (None if every one does)."""
    value = plain(value)
    if literal is not None:
        return _from_literal(literal, target)
    source = kind(value.type)
    if source == "null":
        return _null_of(value, target.arrow), None
    if source == "string":
        return _from_strings(value, target)
    if source in ("int", "uint", "bool"):
        return _from_integers(value, target)
    if pa.types.is_decimal(value.type):
        source_scale = value.type.scale
        value = pc.cast(value, pa.float64())
    elif source != "float":
        raise ValueError(f"there is no cast from {value.type}")
    return _from_doubles(value, target, source_scale)


def _from_literal(text: str, target: DecimalType):
    number = decimal.Decimal(text)
    units = int(number.scaleb(target.scale).to_integral_value(decimal.ROUND_HALF_UP))
    if abs(units) >= 10**target.width:
        problem = (f'Casting value "{text}" to type {target.sql()} failed: value is out of '
                   "range!")
        return pa.scalar(None, target.arrow), problem
    return pa.scalar(_from_units(units, target), target.arrow), None


def _from_units(units: int, target: DecimalType):
    return units if target.arrow == pa.int64() else units / 10**target.scale


def stand_in(units: int, target: DecimalType) -> pa.Scalar:
    """The DECIMAL ``units`` * 10**-scale as tdbsql holds it: BIGINT for DECIMAL(p, 0) with
    p <= 18, else the nearest DOUBLE (``units / 10**scale`` is correctly rounded)."""
    return pa.scalar(_from_units(units, target), target.arrow)


def _null_of(value, t: pa.DataType):
    return pa.scalar(None, t) if isinstance(value, pa.Scalar) else pa.nulls(len(value), t)


def _from_integers(value, target: DecimalType):
    """Exact: an integer fits when it has at most ``width - scale`` digits."""
    bound = 10**(target.width - target.scale)
    numbers = pc.cast(value, pa.int64()) if kind(value.type) == "bool" else value
    limit = np.iinfo(np.int64 if kind(numbers.type) == "int" else np.uint64).max
    if bound <= limit:
        below = pc.less(numbers, pa.scalar(bound, numbers.type))
        fits = pc.and_(below, pc.greater(numbers, pa.scalar(-bound, pa.int64()))) \
            if kind(numbers.type) == "int" else below
    else:
        fits = pc.is_valid(numbers)
    result = pc.if_else(fits, numbers, pa.scalar(None, numbers.type))
    problem = _first_failed(value, result)
    if problem is not None:
        problem = f"Could not cast value {problem} to {target.sql()}"
    return pc.cast(result, target.arrow, safe=False), problem


def _from_doubles(value, target: DecimalType, source_scale: int | None):
    is_scalar = isinstance(value, pa.Scalar)
    array = pa.array([value.as_py()], pa.float64()) if is_scalar else \
        pc.cast(_one_chunk(value), pa.float64())
    x = array.to_numpy(zero_copy_only=False)
    valid = ~np.asarray(array.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    with np.errstate(invalid="ignore", over="ignore"):
        if source_scale is None:
            units = _round_half_away(x * 10.0**target.scale)
        else:
            units = _rescale(_round_half_away(x * 10.0**source_scale), source_scale,
                             target.scale)
        fits = np.isfinite(units) & (np.abs(units) < 10.0**target.width)
    problem = None
    failed = valid & ~fits
    if failed.any():
        bad = float(x[np.argmax(failed)])
        problem = f"Could not cast value {bad:f} to {target.sql()}" if source_scale is None \
            else (f'Casting value "{bad:.{source_scale}f}" to type {target.sql()} failed: '
                  "value is out of range!")
    keep = valid & fits
    units = np.where(keep, units, 0.0)
    numbers = units.astype(np.int64) if target.arrow == pa.int64() else \
        units / 10.0**target.scale + 0.0  # no -0.0: DuckDB has no negative zero
    result = pa.array(numbers, target.arrow, mask=~keep)
    if is_scalar:
        return result[0], problem
    return (pa.chunked_array([result]) if isinstance(value, pa.ChunkedArray) else result), \
        problem


def _round_half_away(x: np.ndarray) -> np.ndarray:
    """C's round(): to the nearest whole number, halves away from zero (x - trunc(x) is
    exact, so there is no double rounding)."""
    whole = np.trunc(x)
    return whole + np.where(np.abs(x - whole) >= 0.5, np.sign(x), 0.0)


def _rescale(units: np.ndarray, scale: int, new_scale: int) -> np.ndarray:
    """Whole ``units`` of 10**-scale as units of 10**-new_scale, halves away from zero
    (exact while they fit a double's 53 bits)."""
    if new_scale >= scale:
        return units * 10.0**(new_scale - scale)
    step = 10.0**(scale - new_scale)
    quotient = np.trunc(units / step)
    rest = units - quotient * step
    return quotient + np.where(2 * np.abs(rest) >= step, np.sign(units), 0.0)


def _from_strings(value, target: DecimalType):
    """Each distinct string read once (``read_units``)."""
    if isinstance(value, pa.Scalar):
        units = read_units(value.as_py(), target) if value.is_valid else None
        result = pa.scalar(None if units is None else _from_units(units, target), target.arrow)
    else:
        array = _one_chunk(value)
        distinct = pc.unique(array)
        numbers = [None if text is None else read_units(text, target)
                   for text in distinct.to_pylist()]
        numbers = pa.array([None if n is None else _from_units(n, target) for n in numbers],
                           target.arrow)
        result = pc.take(numbers, pc.index_in(array, value_set=distinct))
        if isinstance(value, pa.ChunkedArray):
            result = pa.chunked_array([result])
    bad = _first_failed(value, result)
    problem = None if bad is None else f'Could not convert string "{bad}" to {target.sql()}'
    return result, problem


def read_units(text: str, target: DecimalType) -> int | None:
    """A string as whole units of 10**-scale, as DuckDB's string-to-DECIMAL cast reads it:
    digits with an optional point, sign and exponent, ``_`` only between digits, spaces
    around; halves rounded away from zero.  None when it does not read or does not fit."""
    match = _DECIMAL.fullmatch(text.strip(_SPACES))
    if match is None:
        return None
    sign, whole, fraction, pointed, exponent = match.groups()
    whole, fraction = (whole or "").replace("_", ""), (fraction or "").replace("_", "")
    if not whole and not fraction:
        return None
    exponent = int((pointed or exponent or "0").replace("_", ""))
    if abs(exponent) > 2 * 38 + len(whole) + len(fraction):
        return None if exponent > 0 and int(whole + fraction) else 0
    number = decimal.Decimal(f"{sign}{whole or 0}.{fraction or 0}").scaleb(exponent)
    units = int(number.scaleb(target.scale).to_integral_value(decimal.ROUND_HALF_UP))
    return units if abs(units) < 10**target.width else None


def _one_chunk(value):
    if isinstance(value, pa.ChunkedArray):
        return value.combine_chunks() if value.num_chunks != 1 else value.chunk(0)
    return value


def _first_failed(value, result):
    """The first valid value of ``value`` that is NULL in ``result``, as a Python value."""
    if isinstance(value, pa.Scalar):
        return value.as_py() if value.is_valid and not result.is_valid else None
    lost = pc.filter(value, pc.and_(pc.is_valid(value), pc.is_null(result)))
    return lost[0].as_py() if len(lost) else None


# --- printing -------------------------------------------------------------------------------


def decimal_text(value, scale: int):
    """Values of a DECIMAL with ``scale`` digits as DuckDB prints them (``1.00``, ``-0.50``)."""
    def text(v):
        return None if v is None else f"{v + 0.0:.{scale}f}" if scale else str(int(v))
    if isinstance(value, pa.Scalar):
        return pa.scalar(text(value.as_py()), pa.string())
    return pa.array([text(v) for v in value.to_pylist()], pa.string())
