"""DECIMAL cells in the CLI's table and JSON output (``tdbsql/output.py``): every digit of
the scale as DuckDB prints them, never Python's exponent form (``0E-10``, ``1.000E-7``)."""

from __future__ import annotations

import decimal
import json

import pyarrow as pa

from tdbsql.output import render_json, render_table


def _table():
    values = [decimal.Decimal(0), decimal.Decimal("0.0000001"), None, decimal.Decimal("-1.5")]
    return pa.table({"x": pa.array(values, pa.decimal128(20, 10)), "y": [1, 2, 3, 4]})


def test_table_prints_every_digit_of_the_scale():
    cells = [line.split("|")[0].strip() for line in render_table(_table()).splitlines()[2:6]]
    assert cells == ["0.0000000000", "0.0000001000", "NULL", "-1.5000000000"]


def test_json_writes_decimals_as_numbers():
    rows = [json.loads(line) for line in render_json(_table()).splitlines()]
    assert [row["x"] for row in rows] == [0.0, 1e-07, None, -1.5]
    assert [row["y"] for row in rows] == [1, 2, 3, 4]


def test_to_text_never_writes_an_exponent():
    """``decimal_values.to_text`` (DECIMAL -> VARCHAR in ``cast_value``): Arrow's cast would
    give ``0E-10`` and ``-1.000E-7``; DuckDB prints every digit of the scale."""
    from tdbsql.engine.decimal_values import to_text
    from tdbsql.engine.value_types import cast_value

    values = pa.array([decimal.Decimal(0), decimal.Decimal("0.000001"), None,
                       decimal.Decimal("-0.0000001"), decimal.Decimal("12345.5")],
                      pa.decimal128(20, 10))
    want = ["0.0000000000", "0.0000010000", None, "-0.0000001000", "12345.5000000000"]
    assert to_text(values).to_pylist() == want
    assert to_text(values.slice(2)).to_pylist() == want[2:]
    assert to_text(pa.chunked_array([values[:2], values[2:]])).to_pylist() == want
    assert [to_text(v).as_py() for v in values] == want
    assert cast_value(values, pa.string()).to_pylist() == want
