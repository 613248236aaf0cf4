"""A query result against DuckDB's: same shape, same rows (in order when the query's outermost
SELECT has ORDER BY, else as multisets), floats within a relative tolerance, everything else exact.

In: two pyarrow Tables and whether order matters.  Out: nothing, or an AssertionError whose
message lists the differing columns/rows side by side.

Values are compared by kind, not by exact Arrow type, because DuckDB spells the same kind
differently (HUGEINT sums arrive as decimal128(38, 0)); a kind mismatch (integer vs float vs
string vs date) is a failure of its own.
"""

from __future__ import annotations

import decimal
import math
import re
from collections import Counter

import pyarrow as pa
import sqlglot

REL_TOL = 1e-6
ABS_TOL = 1e-9
SHOWN_ROWS = 5


def has_order_by(sql: str) -> bool:
    """True when the outermost query (SELECT or set operation) ends with ORDER BY."""
    tree = sqlglot.parse_one(sql, read="duckdb")
    return tree.args.get("order") is not None


def kind(arrow_type: pa.DataType) -> str:
    if pa.types.is_integer(arrow_type):
        return "integer"
    if pa.types.is_decimal(arrow_type):
        return "integer" if arrow_type.scale == 0 else "float"
    if pa.types.is_floating(arrow_type):
        return "float"
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type) \
            or pa.types.is_string_view(arrow_type):
        return "string"
    if pa.types.is_date(arrow_type):
        return "date"
    if pa.types.is_timestamp(arrow_type):
        return "timestamp"
    if pa.types.is_boolean(arrow_type):
        return "boolean"
    if pa.types.is_null(arrow_type):
        return "null"
    return str(arrow_type)


def _plain(value):
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value


def rows_of(table: pa.Table) -> list[tuple]:
    columns = [[_plain(v) for v in column.to_pylist()] for column in table.columns]
    return list(zip(*columns))


def values_equal(got, want) -> bool:
    if got is None or want is None:
        return got is None and want is None
    if isinstance(want, float) or isinstance(got, float):
        if not isinstance(got, int | float) or not isinstance(want, int | float):
            return False
        if math.isnan(want) or math.isnan(got):
            return math.isnan(want) and math.isnan(got)
        return math.isclose(got, want, rel_tol=REL_TOL, abs_tol=ABS_TOL)
    return type(got) is type(want) and got == want


def rows_equal(got: tuple, want: tuple) -> bool:
    return len(got) == len(want) and all(values_equal(g, w) for g, w in zip(got, want))


def _safe_sort(rows: list[tuple]) -> list[tuple]:
    try:
        return sorted(rows, key=lambda r: tuple(
            (1, "") if v is None else (0, round(v, 4) if isinstance(v, float) else v) for v in r))
    except TypeError:
        return sorted(rows, key=repr)


def _plain_name(name: str) -> bool:
    return re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) is not None


def shape_problems(got: pa.Table, want: pa.Table) -> list[str]:
    problems = []
    if got.num_columns != want.num_columns:
        problems.append(f"{got.num_columns} columns {got.column_names}, DuckDB has "
                        f"{want.num_columns} {want.column_names}")
        return problems
    for i, (g, w) in enumerate(zip(got.schema, want.schema)):
        if _plain_name(w.name) and g.name.lower() != w.name.lower():
            problems.append(f"column {i}: named {g.name!r}, DuckDB names it {w.name!r}")
        if kind(w.type) != "null" and kind(g.type) != kind(w.type):
            problems.append(f"column {i} ({w.name}): {g.type} ({kind(g.type)}), DuckDB has "
                            f"{w.type} ({kind(w.type)})")
    if got.num_rows != want.num_rows:
        problems.append(f"{got.num_rows} rows, DuckDB has {want.num_rows}")
    return problems


def row_problems(got_rows: list[tuple], want_rows: list[tuple], names: list[str]) -> list[str]:
    bad = [i for i, (g, w) in enumerate(zip(got_rows, want_rows)) if not rows_equal(g, w)]
    lines = []
    for i in bad[:SHOWN_ROWS]:
        cols = [names[c] for c, (g, w) in enumerate(zip(got_rows[i], want_rows[i]))
                if not values_equal(g, w)]
        lines.append(f"row {i} differs in {cols}:\n    got  {got_rows[i]}\n    want {want_rows[i]}")
    if len(bad) > SHOWN_ROWS:
        lines.append(f"... {len(bad) - SHOWN_ROWS} more differing rows")
    return lines


def _rough(row: tuple) -> tuple:
    return tuple(float(f"{v:.6g}") if isinstance(v, float) else v for v in row)


def multiset_problems(got_rows: list[tuple], want_rows: list[tuple]) -> list[str]:
    """Rows only one side has (floats rounded to 6 significant digits to find partners)."""
    got = Counter(_rough(r) for r in got_rows)
    want = Counter(_rough(r) for r in want_rows)
    lines = []
    for label, rows in (("only in tdbsql", got - want), ("only in DuckDB", want - got)):
        listed = list(rows.elements())
        if listed:
            shown = "\n    ".join(map(str, listed[:SHOWN_ROWS]))
            more = f"\n    ... {len(listed) - SHOWN_ROWS} more" if len(listed) > SHOWN_ROWS else ""
            lines.append(f"{len(listed)} rows {label}:\n    {shown}{more}")
    return lines


def assert_same_result(got: pa.Table, want: pa.Table, *, ordered: bool, label: str = "") -> None:
    """``got`` (tdbsql) equals ``want`` (DuckDB); see the module docstring."""
    problems = shape_problems(got, want)
    if got.num_columns == want.num_columns:
        got_rows, want_rows = rows_of(got), rows_of(want)
        if got.num_rows != want.num_rows:
            problems += multiset_problems(got_rows, want_rows)
        elif ordered:
            diff = row_problems(got_rows, want_rows, want.column_names)
            if diff and not row_problems(_safe_sort(got_rows), _safe_sort(want_rows),
                                         want.column_names):
                diff = ["same rows as DuckDB but in a different order"] + diff
            problems += diff
        else:
            problems += row_problems(_safe_sort(got_rows), _safe_sort(want_rows),
                                     want.column_names)
    assert not problems, f"{label} differs from DuckDB:\n  " + "\n  ".join(problems)
