"""DELETE comparing a FLOAT (float32) column with DOUBLE constants that are no float32 value
(``f = 0.1e0``, ``f < 1e30``, past float32's range): DuckDB compares them exactly as DOUBLEs,
so the delete commit holds the equivalent comparison on float32 values, and ``tiledb`` and
tdbsql read what DuckDB's DELETE leaves."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from history_helpers import duckdb_after_delete, sorted_rows, tiledb
import tdbsql
from tdbsql import schema as S
from tdbsql.format.delete_condition import ConditionOp
from tdbsql.storage.float_comparisons import comparison, members
from tdbsql.storage.writer import create, write

_PYTHON_OPS = {ConditionOp.LT: lambda a, b: a < b, ConditionOp.LE: lambda a, b: a <= b,
               ConditionOp.GT: lambda a, b: a > b, ConditionOp.GE: lambda a, b: a >= b,
               ConditionOp.EQ: lambda a, b: a == b, ConditionOp.NE: lambda a, b: a != b}
_MAX = float(np.finfo(np.float32).max)
_TINY = float(np.finfo(np.float32).smallest_subnormal)
_CELLS = [float(np.float32(v)) for v in
          [-math.inf, -_MAX, -1e30, -1.0, -0.1, -_TINY, -0.0, 0.0, _TINY, 0.1, 1.0, 1e30, _MAX,
           math.inf]]


@settings(max_examples=300, deadline=None)
@given(op=st.sampled_from(list(_PYTHON_OPS)),
       value=st.one_of(st.floats(allow_nan=False), st.sampled_from(_CELLS + [0.1, 1e30, 1e39]),
                       st.floats(-2.0, 2.0, allow_nan=False)))
def test_same_cells_as_the_exact_comparison(op, value):
    """Over float32 values around the constant, the rewritten comparison on float32 holds
    exactly where the DOUBLE comparison does."""
    with np.errstate(over="ignore"):
        near = np.float32(value)
        cells = _CELLS + [float(v) for v in (near, np.nextafter(near, np.float32(np.inf)),
                                             np.nextafter(near, np.float32(-np.inf)))]
    new_op, n = comparison(op, value, np.dtype(np.float32))
    assert isinstance(n, np.float32)
    want = [c for c in cells if _PYTHON_OPS[op](c, value)]
    assert [c for c in cells if _PYTHON_OPS[new_op](np.float32(c), n)] == want


def test_members_that_are_float32_values():
    assert members([0.1, 0.5, 1e39, -math.inf, 16777217, 2], np.dtype(np.float32)) == \
        [np.float32(0.5), np.float32(-np.inf), np.float32(2)]


WHERES = ["f = 0.1e0", "f = 1e30", "f <> 0.1e0", "f < 0.1e0", "f <= 0.1e0", "f > 0.1e0",
          "f >= 0.1e0", "f < 1e39", "f > -1e39", "f >= 1e39", "f < 1e-50", "f > -1e-50",
          "f IN (0.1e0)", "f IN (0.1e0, 2)", "f IN (0.1, 2)", "f NOT IN (0.1e0)",
          "f NOT IN (0.1e0, 0.5)", "f IN (0.1e0, 16777217)", "f BETWEEN 0e0 AND 0.1",
          "f BETWEEN 0 AND 0.1", "NOT (f = 0.1e0)", "f = 0.1", "0.1e0 < f", "f = 1e999",
          "f < -1e999", "f = 0.5e0 OR f = 1e30", "f > 0.1e0 AND g < 3"]


@pytest.mark.parametrize("where", WHERES)
def test_delete_matches_duckdb(tmp_path, where):
    path = str(tmp_path / "a")
    create(path, S.Schema([S.Dim("x", "int64", (0, 99), 10)],
                          [S.Attr("f", "float32"), S.Attr("g", "int32", nullable=True)]))
    f = [0.1, 1e30, 0.5, -0.1, math.nan, math.inf, -math.inf, 0.0, -0.0, 16777216.0, 2.0]
    source = pa.table({"x": pa.array(range(len(f)), pa.int64()), "f": pa.array(f, pa.float32()),
                       "g": pa.array([1, 2, None, 4, 5, None, 7, 8, 9, 10, 11], pa.int32())})
    write(path, source, timestamp=10)
    tdbsql.connect().register("t", path).sql(f"DELETE FROM t WHERE {where}")
    want = _nan_as_text(sorted_rows(duckdb_after_delete(source, where), ["x"]))
    with tiledb.open(path) as A:
        theirs = sorted_rows(A.query(return_arrow=True).df[:].select(["x", "f", "g"]), ["x"])
    assert _nan_as_text(theirs) == want
    assert _nan_as_text(sorted_rows(tdbsql.query("SELECT * FROM array", path), ["x"])) == want


def _nan_as_text(rows: dict[str, list]) -> dict[str, list]:
    return {k: ["NaN" if isinstance(v, float) and math.isnan(v) else v for v in vs]
            for k, vs in rows.items()}
