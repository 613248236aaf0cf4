"""DELETE comparing an integer column with a constant that is none of its values (a fraction,
past the type's range, a DOUBLE): the delete commit holds the equivalent comparison on
integers, and ``tiledb`` and tdbsql read what DuckDB's DELETE leaves."""

from __future__ import annotations

import math
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from history_helpers import duckdb_after_delete, sorted_rows, tiledb
import tdbsql
from tdbsql import schema as S
from tdbsql.errors import SqlError, UnsupportedSql
from tdbsql.format.delete_condition import ConditionOp
from tdbsql.storage.integer_comparisons import comparison, members
from tdbsql.storage.writer import create, delete, write

_PYTHON_OPS = {ConditionOp.LT: lambda a, b: a < b, ConditionOp.LE: lambda a, b: a <= b,
               ConditionOp.GT: lambda a, b: a > b, ConditionOp.GE: lambda a, b: a >= b,
               ConditionOp.EQ: lambda a, b: a == b, ConditionOp.NE: lambda a, b: a != b}
_INT8 = range(-128, 128)


@settings(max_examples=300, deadline=None)
@given(op=st.sampled_from(list(_PYTHON_OPS)),
       value=st.one_of(st.integers(-300, 300),
                       st.decimals(-300, 300, places=2, allow_nan=False),
                       st.floats(-300, 300, allow_nan=False),
                       st.sampled_from([math.inf, -math.inf])))
def test_same_cells_as_the_exact_comparison(op, value):
    """Over every int8 value, the rewritten comparison holds exactly where the original does."""
    new_op, n = comparison(op, value, np.dtype(np.int8))
    assert -128 <= n <= 127
    want = [i for i in _INT8 if _PYTHON_OPS[op](i, value)]
    assert [i for i in _INT8 if _PYTHON_OPS[new_op](i, n)] == want


def test_members_that_are_values_of_the_type():
    assert members([1, Decimal("2.5"), 3.0, 300, -math.inf, Decimal("-4")],
                   np.dtype(np.int8)) == [1, 3, -4]


def test_doubles_that_round_64_bit_integers_are_refused():
    with pytest.raises(UnsupportedSql, match="DOUBLE"):
        comparison(ConditionOp.EQ, 9007199254740993e0, np.dtype(np.int64))
    assert comparison(ConditionOp.EQ, 9007199254740992.5e0, np.dtype(np.int32)) == \
        (ConditionOp.LT, -2**31)  # past int32: no value, whatever the rounding
    assert comparison(ConditionOp.LE, Decimal("9007199254740992.5"),
                      np.dtype(np.int64)) == (ConditionOp.LE, 9007199254740992)


WHERES = ["i < 2.5", "i <= 2.5", "i > -1.5", "i >= 2.5", "i = 2.0", "i = 2.5", "i <> 2.5",
          "i < 2.5e0", "NOT (i >= 1.5)", "i BETWEEN 0.5 AND 3.5", "i IN (1, 2.5, 4.0)",
          "i IN (2.5, 3.5)", "i NOT IN (2.5)", "i NOT IN (1.5, 3)", "u > -1", "u < 300",
          "u >= 255.5", "u <= -0.5 OR i = 4", "i < 99999999999", "i = 99999999999",
          "b > 9007199254740992.5", "b < 1.5 AND u > 0.5", "-2.5 < i", "3.5 >= i"]


@pytest.mark.parametrize("where", WHERES)
def test_delete_matches_duckdb(tmp_path, where):
    path = str(tmp_path / "a")
    create(path, S.Schema([S.Dim("x", "int64", (0, 99), 10)],
                          [S.Attr("i", "int32", nullable=True), S.Attr("u", "uint8"),
                           S.Attr("b", "int64")]))
    source = pa.table({"x": pa.array(range(8), pa.int64()),
                       "i": pa.array([-3, -2, 0, 1, 2, 3, 4, None], pa.int32()),
                       "u": pa.array([0, 1, 2, 3, 254, 255, 7, 9], pa.uint8()),
                       "b": pa.array([0, 1, 2, 9007199254740992, 9007199254740993, 5, 6, 7],
                                     pa.int64())})
    write(path, source, timestamp=10)
    con = tdbsql.connect().register("t", path)
    con.sql(f"DELETE FROM t WHERE {where}")
    want = sorted_rows(duckdb_after_delete(source, where), ["x"])
    with tiledb.open(path) as A:
        theirs = sorted_rows(A.query(return_arrow=True).df[:].select(["x", "i", "u", "b"]), ["x"])
    assert theirs == want
    assert sorted_rows(tdbsql.query("SELECT * FROM array", path), ["x"]) == want


def test_a_double_that_rounds_a_bigint_is_refused(tmp_path):
    path = str(tmp_path / "a")
    create(path, S.Schema([S.Dim("x", "int64", (0, 99), 10)], [S.Attr("b", "int64")]))
    write(path, {"x": [1], "b": [9007199254740993]}, timestamp=10)
    with pytest.raises(UnsupportedSql, match="DOUBLE 9007199254740992.0 is done in DOUBLE"):
        delete(path, "b = 9007199254740993e0")


@pytest.mark.parametrize("condition, kept", [("y < 2.5", [3, 4]), ("y <= 2.5", [3, 4]),
                                             ("y = 2.5", [0, 1, 2, 3, 4]), ("y > 1.5", [0, 1]),
                                             ("y IN (1, 2.5)", [0, 2, 3, 4])])
def test_a_raw_count_datetime_field_compares_numbers_exactly(tmp_path, condition, kept):
    """A YEAR field reads as its raw count in SQL; a fractional constant compares with it as
    with any integer (y < 2.5 is y < 3), not cut to an integer first (it deleted y = 2's row
    only past 2)."""
    path = str(tmp_path / "years")
    schema = tiledb.ArraySchema(
        domain=tiledb.Domain(tiledb.Dim("x", domain=(0, 9), tile=10, dtype=np.int64)),
        sparse=True, attrs=[tiledb.Attr("y", dtype="datetime64[Y]")])
    tiledb.Array.create(path, schema)
    with tiledb.open(path, "w", timestamp=1) as array:
        array[np.arange(5)] = {"y": np.arange(5).astype("datetime64[Y]")}
    con = tdbsql.connect().register("t", path)
    con.sql(f"DELETE FROM t WHERE {condition}")
    with tiledb.open(path) as array:
        assert sorted(array[:]["x"].tolist()) == kept


def test_a_number_written_as_a_string_that_does_not_read(tmp_path):
    """DuckDB refuses 'abc' for an INTEGER column; so does DELETE, and nothing is written (the
    strings it reads: tests/test_delete_text_constants.py)."""
    import duckdb
    import os

    con = duckdb.connect()
    con.sql("CREATE TABLE t AS SELECT 1::INT i")
    with pytest.raises(duckdb.ConversionException):
        con.sql("DELETE FROM t WHERE i = 'abc'")
    path = str(tmp_path / "a")
    create(path, S.Schema([S.Dim("x", "int64", (0, 9), 10)], [S.Attr("i", "int32")]))
    write(path, {"x": [1], "i": np.array([1], np.int32)}, timestamp=1)
    with pytest.raises(SqlError, match="Could not convert string 'abc' to INT32"):
        delete(path, "i = 'abc'")
    assert not [f for f in os.listdir(os.path.join(path, "__commits")) if f.endswith(".del")]
