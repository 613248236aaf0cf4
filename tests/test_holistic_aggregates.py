"""Aggregate results the sqllogic files cannot show -- lists of quantiles -- and the holistic
aggregates' memory budget; the misspelt-aggregate error of a grouped query."""

from __future__ import annotations

import duckdb
import numpy as np
import pyarrow as pa
import pytest

import tdbsql
from sql_fixtures import assert_same_table


@pytest.fixture(scope="module")
def table() -> pa.Table:
    rng = np.random.default_rng(5)
    n = 200
    return pa.table({
        "k": pa.array(rng.integers(0, 4, n), pa.int32()),
        "x": pa.array(rng.integers(-50, 50, n), pa.int64(), mask=rng.random(n) < 0.1),
        "f": pa.array(rng.integers(-400, 400, n) / 8.0, mask=rng.random(n) < 0.1),
        "s": pa.array([f"w{i}" for i in rng.integers(0, 30, n)]),
        "d": pa.array(rng.integers(19000, 19100, n).astype(np.int32), pa.date32()),
    })


@pytest.mark.parametrize("sql", [
    "SELECT k, quantile_cont(x, [0.1, 0.5, 0.9]) AS q FROM t GROUP BY k",
    "SELECT k, quantile_disc(s, [0.75, 0.25]) AS q, quantile_disc(x, [0.3, 0.3::DOUBLE]) AS r "
    "FROM t GROUP BY k",
    "SELECT quantile_cont(f, [-0.2, -0.7]) AS q, quantile_cont(d, [0.5]) AS r FROM t",
    "SELECT k, percentile_cont([0.25, 0.5]) WITHIN GROUP (ORDER BY f DESC) AS q FROM t GROUP BY k",
    "SELECT k, quantile_cont(x, []) AS q FROM t GROUP BY k",
    "SELECT k, quantile_cont(x, [0.5]) FILTER (WHERE x > 1000) AS q FROM t GROUP BY k",
    "SELECT k, quantile_disc(x, [0.5, 0.1]) OVER (PARTITION BY k) AS q FROM t",
    # a zero beside negative fractions counts from the top with them; a decimal -0.0 is 0
    "SELECT k, quantile_disc(x, [0, -0.5]) AS q, quantile_disc(x, [0.5, -0.0]) AS r "
    "FROM t GROUP BY k",
])
def test_quantile_lists_as_duckdb(table, sql):
    con = tdbsql.connect()
    con.register("t", table)
    oracle = duckdb.connect()
    oracle.register("t", table)
    assert_same_table(con.sql(sql).arrow(), oracle.sql(sql).arrow(), rel=1e-12)


def test_quantile_list_signs_agree():
    con = tdbsql.connect()
    con.register("t", pa.table({"x": [1, 2]}))
    with pytest.raises(tdbsql.SqlError, match="consistent signs"):
        con.sql("SELECT quantile_cont(x, [-0.2, 0.2]) FROM t").arrow()


def test_holistic_sort_is_held_to_the_budget():
    con = tdbsql.connect(memory_mb=1)
    con.register("t", pa.table({"x": np.arange(200_000, dtype=np.int64)}))
    with pytest.raises(tdbsql.MemoryLimitError, match=r"median\(\)"):
        con.sql("SELECT median(x) FROM t").arrow()
    assert con.sql("SELECT sum(x) FROM t").fetchone() == (sum(range(200_000)),)


def test_misspelt_aggregate_in_a_grouped_query_names_the_function():
    con = tdbsql.connect()
    con.register("t", pa.table({"k": [1, 2], "x": [3, 4]}))
    with pytest.raises(tdbsql.SqlError, match=r"unknown function prodct\(\); did you mean "
                                              r"product\(\)\?"):
        con.sql("SELECT k, prodct(x) FROM t GROUP BY k").arrow()
    with pytest.raises(tdbsql.SqlError, match=r'column "x" must appear in the GROUP BY'):
        con.sql("SELECT k, abs(x) FROM t GROUP BY k").arrow()
