"""Numeric SQL functions, registered into ``functions.REGISTRY``.

In: evaluated arguments and the ``Call``.  Out: an Arrow value.  DuckDB's semantics: ``round``
rounds half away from zero and keeps integers as they are; ``floor``/``ceil``/``trunc`` and the
logarithms return DOUBLE; ``log(x)`` is log10 and ``log(b, x)`` log base b; ``sign(NaN)`` is 0;
``greatest``/``least`` skip NULLs and order NaN above every number.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from .functions import register, unify
from .value_types import kind

# One DOUBLE argument in, a DOUBLE out: (name, aliases, Arrow kernel).
_DOUBLE_FUNCTIONS = (
    ("floor", (), pc.floor), ("ceil", ("ceiling",), pc.ceil), ("trunc", (), pc.trunc),
    ("sqrt", (), pc.sqrt), ("exp", (), pc.exp), ("ln", (), pc.ln), ("log10", (), pc.log10),
    ("log2", (), pc.log2),
)


def _on_double(kernel):
    def impl(ctx, x):
        return kernel(ctx.double(x, 0))
    return impl


for _name, _aliases, _kernel in _DOUBLE_FUNCTIONS:
    register(_name, 1, aliases=_aliases)(_on_double(_kernel))


@register("abs", 1)
def _abs(ctx, x):
    x = ctx.number(x, 0)
    try:
        return pc.abs_checked(x)
    except pa.ArrowInvalid:
        raise ctx.error("integer overflow") from None


@register("round", 1, 2)
def _round(ctx, x, digits=None):
    x = ctx.number(x, 0)
    places = 0 if digits is None else ctx.constant(digits, 1, "number of digits")
    if places is None:
        return pa.scalar(None, x.type) if isinstance(x, pa.Scalar) else pa.nulls(len(x), x.type)
    if not isinstance(places, int):
        raise ctx.error("the number of digits must be an integer", 1)
    if kind(x.type) != "float" and places >= 0:
        return x
    return pc.round(x, ndigits=places, round_mode="half_towards_infinity")


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
