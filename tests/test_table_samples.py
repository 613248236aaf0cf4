"""TABLESAMPLE / USING SAMPLE over an array (``planner/table_samples.py``): the sampled rows
are rows of the table as read (time travel included), a share keeps about p of them, a
reservoir exactly n distinct ones, and the sample is drawn before WHERE.  The rows drawn are
random, so DuckDB checks only what is fixed (tests/sql/select/samples.test)."""

from __future__ import annotations

import numpy as np
import pytest
import tiledb

import tdbsql

N = 20_000


@pytest.fixture(scope="module")
def array(tmp_path_factory) -> str:
    uri = str(tmp_path_factory.mktemp("samples") / "a")
    dom = tiledb.Domain(tiledb.Dim("id", domain=(0, 10**6), tile=1000, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=500, attrs=[
        tiledb.Attr("v", dtype=np.int64)]))
    for stamp, ids in ((1000, np.arange(N)), (2000, np.arange(N, 2 * N))):
        with tiledb.open(uri, "w", timestamp=stamp) as A:
            A[ids.astype(np.int64)] = {"v": ids.astype(np.int64) * 3}
    return uri


def test_a_share_keeps_rows_of_the_table(array):
    con = tdbsql.connect().register("t", array)
    rows = con.sql("SELECT id, v FROM t USING SAMPLE 10%").fetchall()
    assert abs(len(rows) - 2 * N / 10) < 600  # binomial standard deviation 60
    assert all(v == 3 * i for i, v in rows) and len({i for i, _ in rows}) == len(rows)
    old = con.sql("SELECT count(*), max(id) FROM t FOR SYSTEM_TIME AS OF 1500 "
                  "TABLESAMPLE 100%").fetchall()
    assert old == [(N, N - 1)]  # the version read is the one sampled


def test_a_reservoir_holds_exactly_n_distinct_rows(array):
    con = tdbsql.connect().register("t", array)
    for n in (0, 1, 37, 5000):
        rows = con.sql(f"SELECT id, v FROM t USING SAMPLE {n} ROWS").fetchall()
        assert len(rows) == n == len({i for i, _ in rows})
        assert all(v == 3 * i and 0 <= i < 2 * N for i, v in rows)
    draws = {tuple(sorted(con.sql("SELECT id FROM t TABLESAMPLE 5 ROWS").fetchall()))
             for _ in range(5)}
    assert len(draws) > 1  # a new draw on every run
    assert con.sql("SELECT count(*) FROM t FOR SYSTEM_TIME AS OF 1500 USING SAMPLE "
                   f"{3 * N} ROWS").fetchall() == [(N,)]


def test_the_sample_is_drawn_before_where(array):
    con = tdbsql.connect().register("t", array)
    rows = con.sql("SELECT id FROM t WHERE id % 10 = 0 USING SAMPLE 1000 ROWS").fetchall()
    assert all(i % 10 == 0 for i, in rows)
    assert 40 < len(rows) < 170  # about a tenth of the 1,000 drawn (sd 9.5)
