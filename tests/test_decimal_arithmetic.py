"""DECIMAL arithmetic (``decimal_values.arithmetic``) against Python decimals, row by row:
``%`` (the remainder has the dividend's sign, as DuckDB's) over arrays, sliced arrays,
chunked arrays and a scalar divisor, in widths whose unscaled integers fit int64 and widths
past it; ``+ - *`` past Arrow's 38 digits of intermediate precision."""

from __future__ import annotations

import decimal
import math
import random

import pyarrow as pa
import pytest

from tdbsql.engine import decimal_values

_EXACT = decimal.Context(prec=120)


def _reference(left, right):
    rows = len(left) if not isinstance(left, pa.Scalar) else len(right)
    a = [left.as_py()] * rows if isinstance(left, pa.Scalar) else left.to_pylist()
    b = [right.as_py()] * rows if isinstance(right, pa.Scalar) else right.to_pylist()
    return [None if x is None or y is None else _EXACT.remainder(x, y) for x, y in zip(a, b)]


def _values(rng, width, scale, rows, nonzero=False):
    out = []
    for _ in range(rows):
        if rng.random() < 0.1:
            out.append(None)
            continue
        digits = rng.randint(1, width)
        units = rng.randint(-10**digits + 1, 10**digits - 1)
        if nonzero and units == 0:
            units = 1
        out.append(decimal.Decimal(units).scaleb(-scale))
    return pa.array(out, pa.decimal128(width, scale))


@pytest.mark.parametrize("width,scale", [(5, 2), (18, 3), (20, 4), (38, 0), (38, 10), (30, 29)])
def test_modulo_matches_python_decimals(width, scale):
    rng = random.Random(width * 100 + scale)
    left = _values(rng, width, scale, 300)
    right = _values(rng, width, scale, 300, nonzero=True)
    divisor = next(v for v in right if v.is_valid)
    cases = [(left, right), (left.slice(7), right.slice(7)), (left, divisor),
             (divisor, right), (pa.chunked_array([left[:120], left[120:]]),
                                pa.chunked_array([right[:40], right[40:]]))]
    for a, b in cases:
        assert decimal_values.arithmetic("modulo", a, b).to_pylist() == _reference(a, b)


def test_modulo_at_int64_edges():
    t = pa.decimal128(38, 0)
    a = pa.array([decimal.Decimal(-2**63), decimal.Decimal(2**63 - 1), decimal.Decimal(-7),
                  None], t)
    b = pa.array([decimal.Decimal(-1), decimal.Decimal(-1), decimal.Decimal(2),
                  decimal.Decimal(0)], t)
    assert decimal_values.arithmetic("modulo", a, b).to_pylist() == [0, 0, -1, None]


def test_modulo_by_zero_is_an_error():
    t = pa.decimal128(5, 2)
    with pytest.raises(decimal_values.DecimalError, match="division by zero"):
        decimal_values.arithmetic("modulo", pa.array([decimal.Decimal("1.5")], t),
                                  pa.array([decimal.Decimal(0)], t))


@pytest.mark.parametrize("left_type,right_type", [((38, 2), (38, 2)), ((38, 0), (20, 5)),
                                                  ((30, 10), (38, 38)), ((38, 10), (10, 2)),
                                                  ((20, 3), (19, 4))])
@pytest.mark.parametrize("op", ["add", "subtract", "multiply"])
def test_wide_arithmetic_matches_python_decimals(op, left_type, right_type):
    """Past Arrow's 38 digits of intermediate precision (decimal256): the same values, type
    and overflow error as the row-by-row Python reference."""
    rng = random.Random(f"{op}{left_type}{right_type}")
    for trial in range(12):
        left, right = _values(rng, *left_type, 40), _values(rng, *right_type, 40)
        if trial % 3 == 0:
            right = next(v for v in right if v.is_valid)
        if op == "multiply" and left_type[1] + right_type[1] > 38:
            continue
        target = decimal_values.result_type(op, left.type, right.type)
        want = got = None
        try:
            a, b = (left, right) if op == "multiply" else \
                (decimal_values.cast_decimal(v, target) for v in (left, right))
            want = decimal_values._narrow(decimal_values._python(op, a, b, target), target,
                                          op, a, b).to_pylist()
        except decimal_values.DecimalError as err:
            want = str(err)
        try:
            result = decimal_values.arithmetic(op, left, right)
            assert result.type == target
            got = result.to_pylist()
        except decimal_values.DecimalError as err:
            got = str(err)
        assert got == want


@pytest.mark.parametrize("width,scale", [(18, 2), (38, 10), (30, 29)])
def test_kernel_doubles_of_decimals_are_correctly_rounded(width, scale):
    """The float64 values the aggregate kernels read (``hash_table.float64_values``: corr,
    skewness, regr_*, product ...) are each DECIMAL's correctly rounded double, as DuckDB's,
    not Arrow's cast, which is one unit in the last place off for some wide values."""
    from tdbsql.engine.hash_table import float64_values

    values = _values(random.Random(width * 100 + scale), width, scale, 2000)
    want = [math.nan if v is None else float(v) for v in values.to_pylist()]
    got = float64_values(values)
    valid = [v is not None for v in values.to_pylist()]
    assert [g for g, ok in zip(got.tolist(), valid) if ok] == [w for w, ok in zip(want, valid) if ok]
