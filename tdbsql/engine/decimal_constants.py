"""Constant DECIMAL expressions folded exactly, as DuckDB computes them.

In: a sqlglot expression.  Out: ``Folded(value, type)`` -- the exact ``decimal.Decimal`` value
and the ``DecimalType`` DuckDB gives it -- when the expression is a decimal literal, unary
minus, or ``+ - *`` of decimal and integer literals and CASTs of those to DECIMAL
(``0.06 + 0.01`` is the DECIMAL(4,2) 0.07, where double arithmetic gives
0.06999999999999999); None for anything else (a column, a function, integers alone).
An operand that does not fit the result's type, or a result past its width, raises
``decimal_values.DecimalError`` with DuckDB's words (``Overflow in multiplication of
DECIMAL(18) (...)``), as the values' arithmetic does.
"""

from __future__ import annotations

import decimal
from dataclasses import dataclass

from sqlglot import exp

from .decimal_values import EXACT, DecimalError
from .decimals import DecimalType, decimal_literal, decimal_type_of, integer_literal


@dataclass(frozen=True)
class Folded:
    value: decimal.Decimal
    type: DecimalType

    @property
    def units(self) -> int:
        """The value as whole units of 10**-scale (exact: it has at most ``scale`` digits)."""
        return int(self.value.scaleb(self.type.scale, EXACT))


def fold(node: exp.Expression) -> Folded | None:
    """``node``'s exact value and DECIMAL type, or None when it is no constant DECIMAL."""
    target = decimal_type_of(node)
    if target is None:
        return None
    value = _value(node, target)
    return None if value is None else Folded(value, target)


def _value(node: exp.Expression, target: DecimalType) -> decimal.Decimal | None:
    text = decimal_literal(node)
    if text is not None:
        return decimal.Decimal(text)
    whole = integer_literal(node)
    if whole is not None:
        return decimal.Decimal(whole)
    if isinstance(node, exp.Paren):
        return _value(node.this, target)
    if isinstance(node, exp.Neg):
        inner = _typed_value(node.this)
        return None if inner is None else inner.copy_negate()  # exact: `-` rounds to 28 digits
    if isinstance(node, (exp.Cast, exp.TryCast)):
        return _cast(node, target)
    if isinstance(node, (exp.Add, exp.Sub, exp.Mul)):
        return _arithmetic(node, target)
    return None


def _typed_value(node: exp.Expression) -> decimal.Decimal | None:
    target = decimal_type_of(node)
    whole = integer_literal(node)
    if whole is not None:
        return decimal.Decimal(whole)
    return None if target is None else _value(node, target)


def _cast(node, target: DecimalType) -> decimal.Decimal | None:
    """A constant CAST to DECIMAL (``target``: its declared type, which ``decimal_type_of``
    has checked), rounded half away from zero; None when it does not fit (the evaluator's
    cast raises DuckDB's error then)."""
    value = _typed_value(node.this)
    if value is None:
        return None
    rounded = value.quantize(decimal.Decimal(1).scaleb(-target.scale), decimal.ROUND_HALF_UP,
                             EXACT)
    return rounded if _fits(rounded, target) else None


_WORDS = {exp.Add: ("addition", "+"), exp.Sub: ("subtraction", "-"),
          exp.Mul: ("multiplication", "*")}


def _arithmetic(node, target: DecimalType) -> decimal.Decimal | None:
    left, right = _typed_value(node.this), _typed_value(node.expression)
    if left is None or right is None:
        return None
    word, sign = _WORDS[type(node)]
    if isinstance(node, exp.Mul):
        result = EXACT.multiply(left, right)
        if not _fits(result, target):
            a, b = (_units(v, n) for v, n in ((left, node.this), (right, node.expression)))
            hint = "a bigger decimal" if target.width == 18 else "a decimal with a smaller scale"
            raise DecimalError(f"Overflow in multiplication of DECIMAL({target.width}) "
                               f"({a} * {b}). You might want to add an explicit cast to "
                               f"{hint}.")
        return result
    for operand in (left, right):  # DuckDB casts both operands to the result's type first
        if not _fits(operand, target):
            raise DecimalError(f"Could not cast value {operand} to {target.sql()}")
    result = EXACT.add(left, right) if isinstance(node, exp.Add) else \
        EXACT.subtract(left, right)
    if not _fits(result, target):
        a, b = (int(v.scaleb(target.scale, EXACT)) for v in (left, right))
        raise DecimalError(f"Overflow in {word} of DECIMAL({target.width}) ({a} {sign} {b})")
    return result


def _units(value: decimal.Decimal, node: exp.Expression) -> int:
    """An operand as whole units of its own type's scale (DuckDB's messages show those)."""
    own = decimal_type_of(node)
    return int(value.scaleb(0 if own is None else own.scale, EXACT))


def _fits(value: decimal.Decimal, target: DecimalType) -> bool:
    # copy_abs, not abs(): the default context would round 38 digits to 28 first
    return value.copy_abs() < decimal.Decimal(1).scaleb(target.width - target.scale, EXACT)
