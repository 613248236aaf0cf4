"""DECIMAL arithmetic and aggregates against DuckDB on random decimal literals (hypothesis).

Each example builds a VALUES table of decimal literals of random digits and scales and
compares, exactly (decimal values, not floats), ``+ - * %`` of its columns, comparisons with
integers and constants, and sum / min / max / avg grouped and not, with DuckDB's answers.
"""

from __future__ import annotations

import decimal

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tdbsql


def _literal(digits: int, scale: int, negative: bool) -> str:
    text = str(digits).rjust(scale + 1, "0")
    text = f"{text[:len(text) - scale]}.{text[len(text) - scale:]}" if scale else f"{text}.0"
    return ("-" if negative else "") + text


_VALUES = st.builds(_literal, st.integers(0, 10**9), st.integers(0, 4), st.booleans())
_ROWS = st.lists(st.tuples(_VALUES, _VALUES, st.integers(-5, 5)), min_size=1, max_size=8)


def _same(got, want) -> bool:
    if got is None or want is None:
        return got is None and want is None
    if isinstance(want, (str, bool)) or isinstance(got, (str, bool)):
        return got == want
    if isinstance(want, float) or isinstance(got, float):
        return abs(float(got) - float(want)) <= 1e-9 * max(1.0, abs(float(want)))
    return decimal.Decimal(got) == decimal.Decimal(want)


def _check(sql: str) -> None:
    try:
        want = duckdb.sql(sql).fetchall()
    except duckdb.Error:  # an overflow in DuckDB: tdbsql must refuse it too
        with pytest.raises(tdbsql.TdbsqlError):
            tdbsql.connect().sql(sql).fetchall()
        return
    got = tdbsql.connect().sql(sql).fetchall()
    assert len(got) == len(want), sql
    for g, w in zip(got, want):
        assert all(_same(a, b) for a, b in zip(g, w)), f"{sql}\n{got}\n{want}"


def _table(rows) -> str:
    values = ", ".join(f"({a}, {b}, {k})" for a, b, k in rows)
    return f"(VALUES {values}) t(a, b, k)"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_ROWS, st.sampled_from(["+", "-", "*"]), _VALUES)
def test_arithmetic_and_comparisons(rows, op, constant):
    _check(f"SELECT a {op} b, a {op} k, k {op} a, a {op} {constant}, a = b, a < {constant}, "
           f"a >= k, typeof(a {op} b) FROM {_table(rows)} ORDER BY a, b, k")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_ROWS)
def test_aggregates(rows):
    table = _table(rows)
    _check(f"SELECT sum(a), min(b), max(a * b), avg(a), sum(a - k), typeof(sum(a)) FROM {table}")
    _check(f"SELECT k, sum(a), max(b), count(*) FROM {table} GROUP BY k ORDER BY k")
    _check(f"SELECT a, count(*) FROM {table} GROUP BY a ORDER BY a")


@pytest.mark.parametrize("sql", [
    "SELECT a % b FROM (VALUES (1.5, 0.4), (-1.5, 0.4), (7.25, -2)) t(a, b)",
    "SELECT round(a, 1), floor(a), ceil(a), trunc(a), abs(a), sign(a) "
    "FROM (VALUES (1.55), (-1.55), (0.05)) t(a)",
])
def test_functions(sql):
    _check(sql)


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(-(10**38) + 1, 10**38 - 1), min_size=1, max_size=9),
       st.sampled_from([(4, 1), (9, 2), (18, 3), (18, 0), (38, 5)]),
       st.sampled_from(["0.5", "0.3", "-0.3", "0.71", "0.999"]))
def test_quantiles_of_decimals(units, width, fraction):
    """median / quantile_cont interpolate the unscaled integers as DuckDB does: in doubles,
    truncated, up to 18 digits (beyond 2**53 the doubles round); exactly beyond 18."""
    precision, scale = width
    fitted = [(abs(u) % 10**precision, u < 0) for u in units]
    values = ", ".join(f"(CAST('{_literal(u, scale, negative)}' AS DECIMAL({precision},"
                       f"{scale})))" for u, negative in fitted)
    _check(f"SELECT median(x), quantile_cont(x, {fraction}), quantile_disc(x, {fraction}) "
           f"FROM (VALUES {values}) t(x)")


@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 10**38 - 1), st.booleans()), min_size=1, max_size=12),
       st.sampled_from([(9, 4), (18, 3), (18, 17), (20, 5), (38, 0), (38, 10), (38, 37)]))
def test_decimal_to_double_as_duckdb(units, width):
    """DECIMAL -> DOUBLE is correctly rounded, as DuckDB 2.0 converts (the unscaled integer's
    double divided by 10**s was one unit in the last place off for many 18-digit values);
    a DECIMAL(p > 18, 0) through DuckDB's two 64-bit words."""
    precision, scale = width
    values = ", ".join(f"(CAST('{_literal(u % 10**precision, scale, negative)}' AS "
                       f"DECIMAL({precision},{scale})))" for u, negative in units)
    sql = f"SELECT CAST(x AS DOUBLE), x + 0.5::DOUBLE, x < 1e10 FROM (VALUES {values}) t(x)"
    want = duckdb.sql(sql).fetchall()
    assert tdbsql.connect().sql(sql).fetchall() == want, sql
