"""random(): a DOUBLE in [0, 1) drawn for each row (DuckDB's draws cannot be compared value
for value, so these are the properties DuckDB's have): per row in projections, in WHERE over
an array's tiles and in ORDER BY ... LIMIT (a sample), new draws on every run of a cached
plan, never folded into one constant."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import tiledb

import tdbsql

N = 100_000


def _array(tmp_path) -> str:
    uri = str(tmp_path / "a")
    dom = tiledb.Domain(tiledb.Dim("id", domain=(0, N), tile=1000, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=1000, attrs=[
        tiledb.Attr("v", dtype=np.int64)]))
    with tiledb.open(uri, "w") as A:
        A[np.arange(N, dtype=np.int64)] = {"v": np.arange(N, dtype=np.int64)}
    return uri


def test_random_draws_per_row_and_per_run(tmp_path):
    con = tdbsql.connect().register("t", _array(tmp_path))
    sql = "SELECT id, random() AS r FROM t"
    first = con.sql(sql).arrow()
    values = first["r"].to_numpy()
    assert first.schema.field("r").type == pa.float64()
    assert values.min() >= 0.0 and values.max() < 1.0 and len(np.unique(values)) > N - 10
    assert abs(values.mean() - 0.5) < 0.01  # 0.5 +- 11 standard errors
    again = con.sql(sql).arrow()["r"].to_numpy()  # the cached plan draws anew
    assert not np.array_equal(values, again)
    assert con.sql("SELECT typeof(random()), random() < 1.0, random() >= 0").fetchall() == \
        [("DOUBLE", True, True)]


def test_random_filters_and_samples(tmp_path):
    con = tdbsql.connect().register("t", _array(tmp_path))
    kept = con.sql("SELECT count(*) FROM t WHERE random() < 0.25").fetchall()[0][0]
    assert abs(kept - N / 4) < 1500  # binomial standard deviation 137
    sample = [row[0] for row in con.sql("SELECT v FROM t ORDER BY random() LIMIT 50").fetchall()]
    assert len(set(sample)) == 50 and all(0 <= v < N for v in sample)
    assert sample != sorted(sample)
