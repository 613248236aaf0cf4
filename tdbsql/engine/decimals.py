"""DECIMAL(p, s) as DuckDB types and casts it, over Arrow decimal128(p, s) values.

In: the value being cast, the target ``DecimalType`` and, for a literal, its text.  Out: the
cast value -- a decimal128(p, s) holding the value rounded to ``s`` digits -- and DuckDB's
conversion error for the first value that does not fit in ``p`` digits.  Also the DECIMAL
type DuckDB gives a literal and constant expressions of literals (``decimal_type_of``).

DuckDB's readings, one per source type (``CAST(x AS DECIMAL(p, s))``):
  - a DECIMAL (a literal such as ``1.005``, a CAST to DECIMAL, arithmetic on those): exact,
    half away from zero (``1.005`` -> 1.01); out of range: ``Casting value "99999.5" to type
    DECIMAL(5,0) failed: value is out of range!``;
  - a DOUBLE: ``round(x * 10**s)`` in double arithmetic, half away from zero (``1.005::DOUBLE``
    -> 1.00: the double is below 1.005); NaN, inf and out of range: ``Could not cast value
    100000000000000000000.000000 to DECIMAL(10,2)``;
  - an integer or boolean: exact; out of range: ``Could not cast value 100 to DECIMAL(2,0)``;
  - a string: its digits exactly (spaces around, ``_`` between digits and an exponent
    allowed), half away from zero; ``Could not convert string "x" to DECIMAL(10,2)``.
"""

from __future__ import annotations

import decimal
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from .decimal_values import EXACT, cast_decimal, from_units, result_type, rounded
from .value_types import _DECIMAL, _SPACES, kind, plain, valid_rows

T = exp.DataType.Type
_OPS = {exp.Add: "add", exp.Sub: "subtract", exp.Mul: "multiply"}


@dataclass(frozen=True)
class DecimalType:
    width: int
    scale: int

    def sql(self) -> str:
        return f"DECIMAL({self.width},{self.scale})"

    @property
    def arrow(self) -> pa.DataType:
        return pa.decimal128(self.width, self.scale)


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
    (a column, a function: tdbsql cannot tell a DECIMAL there from a DOUBLE).
    ``decimal_values.DecimalError`` for a product past 38 digits of scale, as DuckDB's
    binder refuses it."""
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
        # the rule the values' arithmetic types by: a constant and a column agree
        result = result_type(_OPS[type(node)], left.arrow, right.arrow)
        return DecimalType(result.precision, result.scale)
    return None


def _operand(node: exp.Expression) -> DecimalType | None:
    """A DECIMAL operand's type; an integer literal as width -1 (it takes any width)."""
    if integer_literal(node) is not None:
        return DecimalType(-1, 0)
    return decimal_type_of(node)


def integer_literal(node: exp.Expression) -> int | None:
    """The value of an integer literal under any minus signs and parentheses, else None:
    DuckDB types it afresh by that value (``-2147483648`` is an INTEGER, ``-(-2147483648)``
    a BIGINT)."""
    sign = 1
    while isinstance(node, (exp.Neg, exp.Paren)):
        sign = -sign if isinstance(node, exp.Neg) else sign
        node = node.this
    if isinstance(node, exp.Literal) and not node.is_string and node.this.isdigit():
        return sign * int(node.this)
    return None


def integer_literal_type(value: int) -> DecimalType:
    """The DECIMAL an integer literal becomes beside a DECIMAL: DuckDB types it INTEGER,
    BIGINT or HUGEINT by its size, DECIMAL(10,0), (19,0) or (38,0)."""
    if -2**31 <= value < 2**31:
        return DecimalType(10, 0)
    return DecimalType(19, 0) if -2**63 <= value < 2**63 else DecimalType(38, 0)


# --- the cast -------------------------------------------------------------------------------


def to_decimal(value, target: DecimalType, literal: str | None = None):
    """``value`` cast to ``target`` as DuckDB casts it (see the module docstring); returns
    ``(result, problem)``: the result (decimal128) has NULL where a value does not convert,
    and ``problem`` is DuckDB's message for the first such value (None if every one does)."""
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
    if source == "decimal":
        return _from_decimals(value, target)
    if source != "float":
        raise ValueError(f"there is no cast from {value.type}")
    return _from_doubles(value, target)


def _from_decimals(value, target: DecimalType):
    """Exact, halves away from zero; a value past ``width`` digits is NULL and named."""
    whole = 10 ** (target.width - target.scale)
    source = value.type
    at_scale = rounded(value, target.scale)
    own = at_scale.type
    if own.precision - own.scale > target.width - target.scale:
        fits = pc.less(pc.abs(at_scale), pa.scalar(decimal.Decimal(whole), own))
        kept = pc.if_else(fits, at_scale, pa.scalar(None, own))
    else:
        kept = at_scale
    bad = _first_failed(value, kept)
    problem = None if bad is None else (
        f'Casting value "{bad:.{source.scale}f}" to type {target.sql()} failed: value is out '
        "of range!")
    return cast_decimal(kept, target.arrow), problem


def _from_literal(text: str, target: DecimalType):
    number = decimal.Decimal(text)
    units = int(number.scaleb(target.scale, EXACT).to_integral_value(decimal.ROUND_HALF_UP))
    if abs(units) >= 10**target.width:
        problem = (f'Casting value "{text}" to type {target.sql()} failed: value is out of '
                   "range!")
        return pa.scalar(None, target.arrow), problem
    return pa.scalar(_from_units(units, target), target.arrow), None


def _from_units(units: int, target: DecimalType):
    return decimal.Decimal(units).scaleb(-target.scale, EXACT)


def scalar(units: int, target: DecimalType) -> pa.Scalar:
    """The DECIMAL ``units`` * 10**-scale as an Arrow decimal128 scalar of ``target``."""
    return pa.scalar(_from_units(units, target), target.arrow)


def _null_of(value, t: pa.DataType):
    return pa.scalar(None, t) if isinstance(value, pa.Scalar) else pa.nulls(len(value), t)


def _from_integers(value, target: DecimalType):
    """Exact: an integer fits when it has at most ``width - scale`` digits."""
    bound = 10**(target.width - target.scale)
    # widened: the bound 10**(width - scale) need not fit the source's type (INTEGER -> (12,2))
    numbers = pc.cast(value, pa.uint64() if kind(value.type) == "uint" else pa.int64())
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
    return cast_decimal(result, target.arrow), problem


def _from_doubles(value, target: DecimalType):
    is_scalar = isinstance(value, pa.Scalar)
    array = pa.array([value.as_py()], pa.float64()) if is_scalar else \
        pc.cast(_one_chunk(value), pa.float64())
    x = array.to_numpy(zero_copy_only=False)
    valid = valid_rows(array)
    with np.errstate(invalid="ignore", over="ignore"):
        units = _round_half_away(x * 10.0**target.scale)
        fits = np.isfinite(units) & (np.abs(units) < 10.0**target.width)
    problem = None
    failed = valid & ~fits
    if failed.any():
        bad = float(x[np.argmax(failed)])
        problem = f"Could not cast value {bad:f} to {target.sql()}"
    keep = valid & fits
    units = np.where(keep, units, 0.0)
    result = from_units(units, ~keep, target.arrow)
    if is_scalar:
        return result[0], problem
    return (pa.chunked_array([result]) if isinstance(value, pa.ChunkedArray) else result), \
        problem


def _round_half_away(x: np.ndarray) -> np.ndarray:
    """C's round(): to the nearest whole number, halves away from zero (x - trunc(x) is
    exact, so there is no double rounding)."""
    whole = np.trunc(x)
    return whole + np.where(np.abs(x - whole) >= 0.5, np.sign(x), 0.0)


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
    number = decimal.Decimal(f"{sign}{whole or 0}.{fraction or 0}").scaleb(exponent, EXACT)
    units = int(number.scaleb(target.scale, EXACT).to_integral_value(decimal.ROUND_HALF_UP))
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
