"""PIVOT's and UNPIVOT's column names: DuckDB's, the text of each value (``-0.0`` apart from
``0.0``, ``''`` for the empty string, a repeated name with ``_1``), in the order DuckDB gives
them, through chains and nesting."""

from __future__ import annotations

import pyarrow as pa
import pytest

from sql_fixtures import arrow_engines

TABLE = pa.table({
    "g": pa.array([1, 1, 2, 2, 3, 3], pa.int64()),
    "x": pa.array([-0.0, 0.0, float("nan"), None, 1.0, 10.0], pa.float64()),
    "n": pa.array([2, 10, -1, None, 2, 10], pa.int64()),
    "s": pa.array(["", "a", None, "b", "", "g"]),
})

PIVOTS = [
    "PIVOT t ON x USING count(*) GROUP BY g",
    "PIVOT t ON n USING count(*) GROUP BY g",
    "PIVOT t ON s USING count(*) GROUP BY g",
    "PIVOT t ON s IN ('', 'a', NULL) USING count(*) GROUP BY g",
    "PIVOT t ON n IN ('2', 2, 'g') USING count(*) GROUP BY g",
    "PIVOT t ON x IN (1e0, 1.00, '-0.0') USING sum(n) AS total GROUP BY g",
    "PIVOT t ON s, n IN (2, 10) USING max(x) GROUP BY g",
    "WITH q AS (PIVOT t ON s USING count(*) GROUP BY g) SELECT * FROM q",
    "PIVOT t ON s USING count(*) GROUP BY g ORDER BY g DESC LIMIT 2",
    "PIVOT t ON s IN ('a' AS first, 'b') USING count(*) + 1 AS c GROUP BY g",
    "SELECT * FROM t UNPIVOT INCLUDE NULLS ((v) FOR k IN (g, n))",
    "SELECT * FROM t UNPIVOT (v FOR k IN (g, n)) PIVOT (sum(v) FOR k IN ('g', 'n'))",
    "UNPIVOT (PIVOT t ON s USING max(n) GROUP BY g) ON COLUMNS(* EXCLUDE (g))",
    "PIVOT t ON s IN (a, b, B, g) USING count(*) GROUP BY g",
    "PIVOT t ON n IN (1 + 1, 5 * 2 AS ten, -1) USING count(*) GROUP BY g",
    "PIVOT t ON n USING count(*) GROUP BY g UNION ALL SELECT 0, 0, 0, 0",
]


@pytest.fixture(scope="module")
def engines():
    return arrow_engines(TABLE)


@pytest.mark.parametrize("sql", PIVOTS)
def test_pivot_names_and_rows(engines, sql):
    ours, oracle = engines
    got, want = ours.sql(sql).arrow(), oracle.sql(sql)
    assert got.column_names == want.columns, sql
    assert sorted(map(repr, zip(*(c.to_pylist() for c in got.columns)))) == \
        sorted(map(repr, want.fetchall())), sql
