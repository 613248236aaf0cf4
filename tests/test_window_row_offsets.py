"""ROWS frames whose offsets are read per row, tdbsql against DuckDB over 600 random rows:
frames that grow, shrink and jump (so min / max cannot slide a queue), NULLs in the values,
four partitions; each function's column compared row by row.  The same frames with EXCLUDE
run over rows ordered by a key with peers, every column a function of that key (so the order
among peers, which neither engine fixes, cannot change the rows' answers)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from sql_fixtures import arrow_engines, assert_same_rows, assert_same_table

duckdb = pytest.importorskip("duckdb")

ROWS = 600
FUNCTIONS = ["sum(v)", "min(v)", "max(v)", "avg(f)", "count(v)", "count(*)", "first_value(v)",
             "last_value(v)", "nth_value(v, 2)", "string_agg(s, ',')", "min(s)", "max(f)",
             "first_value(v IGNORE NULLS)", "array_agg(v)"]
FRAMES = ["ROWS BETWEEN a PRECEDING AND b FOLLOWING", "ROWS BETWEEN a PRECEDING AND CURRENT ROW",
          "ROWS BETWEEN b FOLLOWING AND a + b FOLLOWING",
          "ROWS BETWEEN a + 2 PRECEDING AND b PRECEDING"]
EXCLUSIONS = ["EXCLUDE CURRENT ROW", "EXCLUDE GROUP", "EXCLUDE TIES"]
# order-free over a frame's rows: the order among peers does not change them
SET_FUNCTIONS = ["sum(v)", "min(v)", "max(v)", "avg(f)", "count(v)", "count(*)", "min(s)",
                 "max(f)"]


def _columns(rng, rows: int) -> dict:
    return {"v": pa.array(rng.integers(-50, 50, rows), mask=rng.random(rows) < 0.1),
            "f": rng.random(rows), "s": [str(x) for x in rng.integers(0, 30, rows)],
            "a": rng.integers(0, 7, rows), "b": rng.integers(0, 5, rows)}


@pytest.fixture(scope="module")
def engines():
    rng = np.random.default_rng(5)
    return arrow_engines(pa.table({"id": np.arange(ROWS), "g": rng.integers(0, 4, ROWS),
                                   **_columns(rng, ROWS)}))


@pytest.fixture(scope="module")
def peer_engines():
    """Rows with a key ``k`` shared by about four rows each, every other column read off it."""
    rng = np.random.default_rng(11)
    keys = rng.integers(0, ROWS // 4, ROWS)
    per_key = pa.table({"g": rng.integers(0, 4, ROWS // 4), **_columns(rng, ROWS // 4)})
    return arrow_engines(pa.table({"k": keys}).append_column("g", per_key["g"].take(keys))
                         .append_column("v", per_key["v"].take(keys))
                         .append_column("f", per_key["f"].take(keys))
                         .append_column("s", per_key["s"].take(keys))
                         .append_column("a", per_key["a"].take(keys))
                         .append_column("b", per_key["b"].take(keys)))


@pytest.mark.parametrize("frame", FRAMES)
@pytest.mark.parametrize("function", FUNCTIONS)
def test_same_as_duckdb(engines, function, frame):
    ours, oracle = engines
    sql = f"SELECT id, {function} OVER (PARTITION BY g ORDER BY id {frame}) FROM t ORDER BY id"
    assert_same_rows(ours.execute(sql).fetchall(), oracle.execute(sql).fetchall())


@pytest.mark.parametrize("exclusion", EXCLUSIONS)
@pytest.mark.parametrize("frame", FRAMES)
@pytest.mark.parametrize("function", SET_FUNCTIONS)
def test_excluding_same_as_duckdb(peer_engines, function, frame, exclusion):
    ours, oracle = peer_engines
    sql = f"SELECT k, {function} OVER (PARTITION BY g ORDER BY k {frame} {exclusion}) AS x FROM t"
    assert_same_table(ours.execute(sql).arrow(), oracle.sql(sql).arrow())
