"""TABLESAMPLE / USING SAMPLE over an array (``planner/table_samples.py``): the sampled rows
are rows of the table as read (time travel included), a BERNOULLI share keeps about p of them,
a SYSTEM share (the default) about p of the tiles, whole, reading only those when the scan
streams, a reservoir exactly n distinct rows, and the sample is drawn before WHERE.  The rows
drawn are random, so DuckDB checks only what is fixed (tests/sql/select/samples.test)."""

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
    rows = con.sql("SELECT id, v FROM t USING SAMPLE 10% (bernoulli)").fetchall()
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


def test_a_system_share_reads_whole_tiles_and_only_those(array):
    """80 tiles of 500 cells in two fragments side by side (nothing to merge): each tile is
    kept or dropped whole, and only the kept ones are decoded."""
    con = tdbsql.connect().register("t", array)
    rows = con.sql("SELECT id, v FROM t TABLESAMPLE SYSTEM (25%)").fetchall()
    assert all(v == 3 * i for i, v in rows) and len({i for i, _ in rows}) == len(rows)
    tiles = {}
    for i, _ in rows:
        tiles[i // 500] = tiles.get(i // 500, 0) + 1
    assert set(tiles.values()) <= {500} and 4 <= len(tiles) <= 40  # binomial(80, 1/4): sd 3.9
    plan = con.explain("SELECT count(*) FROM t USING SAMPLE 25%", analyze=True)
    drawn = int(plan.split(" (sample)")[0].rsplit("-> ", 1)[1])
    decoded = int(plan.split(" decoded; ")[1].split(" cells")[0].replace(",", ""))
    assert decoded == 500 * drawn < 2 * N
    assert con.sql("SELECT count(*) FROM t TABLESAMPLE 0%").fetchall() == [(0,)]
    assert con.sql("SELECT count(*), sum(v) FROM t TABLESAMPLE 100% WHERE id % 2 = 0"
                   ).fetchall() == [(N, sum(3 * i for i in range(0, 2 * N, 2)))]
    sampled = con.sql("SELECT count(*) FROM t USING SAMPLE 25% WHERE id < 20000").fetchall()
    assert sampled[0][0] % 500 == 0  # drawn before WHERE: whole tiles of the first fragment


def test_a_system_share_over_fragments_to_merge_samples_rows(tmp_path):
    """Overlapping fragments are merged newest-wins: dropping a newer tile would bring back
    the older cells it overwrote, so rows are drawn after the merge, each with chance p."""
    uri = str(tmp_path / "o")
    dom = tiledb.Domain(tiledb.Dim("id", domain=(0, 10**6), tile=1000, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=500, attrs=[
        tiledb.Attr("v", dtype=np.int64)]))
    ids = np.arange(N, dtype=np.int64)
    for stamp, factor in ((1000, 1), (2000, 7)):
        with tiledb.open(uri, "w", timestamp=stamp) as A:
            A[ids] = {"v": ids * factor}
    con = tdbsql.connect().register("t", uri)
    rows = con.sql("SELECT id, v FROM t TABLESAMPLE 10%").fetchall()
    assert all(v == 7 * i for i, v in rows)  # the newest cells only
    assert abs(len(rows) - N / 10) < 300  # row by row: binomial sd 42
    assert "(sample)" not in con.explain("SELECT * FROM t TABLESAMPLE 10%", analyze=True)


def test_a_repeatable_system_share_draws_the_same_tiles_every_run(array):
    """``REPEATABLE (seed)`` / ``(system, seed)``: the same whole tiles on every run over the
    same array (and the same rows of an Arrow table, read in one batch); another seed draws
    others.  With BERNOULLI a seed is refused by name."""
    import pyarrow as pa

    con = tdbsql.connect().register("t", array)
    first = con.sql("SELECT id FROM t USING SAMPLE 25% (system, 42) ORDER BY id").fetchall()
    again = con.sql("SELECT id FROM t TABLESAMPLE SYSTEM (25%) REPEATABLE (42) "
                    "ORDER BY id").fetchall()
    assert first == again and len(first) % 500 == 0 and 0 < len(first) < 2 * N
    others = {len(con.sql(f"SELECT id FROM t USING SAMPLE 25% (system, {seed})").fetchall())
              for seed in range(8)}
    assert len(others) > 1
    con.register_arrow("r", pa.table({"i": np.arange(N)}))
    rows = [con.sql("SELECT i FROM r USING SAMPLE 10% (system, 7) ORDER BY i").fetchall()
            for _ in range(2)]
    assert rows[0] == rows[1] and abs(len(rows[0]) - N / 10) < 300
    with pytest.raises(tdbsql.UnsupportedSql, match="REPEATABLE"):
        con.sql("SELECT * FROM r USING SAMPLE 10% (bernoulli, 7)")


def test_a_system_share_of_a_dense_array_samples_rows(tmp_path):
    """A dense scan reads its tiles whole (no task per tile to draw): the mark keeps each
    row with chance p."""
    uri = str(tmp_path / "d")
    dom = tiledb.Domain(tiledb.Dim("id", domain=(0, N - 1), tile=1000, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=False, attrs=[
        tiledb.Attr("v", dtype=np.int64)]))
    with tiledb.open(uri, "w") as A:
        A[:] = {"v": np.arange(N, dtype=np.int64) * 3}
    con = tdbsql.connect().register("d", uri)
    rows = con.sql("SELECT id, v FROM d TABLESAMPLE 10%").fetchall()
    assert all(v == 3 * i for i, v in rows) and abs(len(rows) - N / 10) < 300
    assert "(sample)" not in con.explain("SELECT * FROM d TABLESAMPLE 10%", analyze=True)


def test_a_repeatable_share_of_merged_cells_does_not_repeat_per_slab(tmp_path):
    """Two fragments over the same ids must be merged (newest wins), so the scan reads slabs
    and a SYSTEM share draws rows, not tiles.  With REPEATABLE the draws are the same on
    every run but each slab has its own: before, every slab kept the same offsets (one
    random stream restarted per batch), so slab 2 was slab 1 shifted."""
    uri = str(tmp_path / "m")
    dom = tiledb.Domain(tiledb.Dim("id", domain=(0, 10**6), tile=1000, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=1000, attrs=[
        tiledb.Attr("v", dtype=np.int64)]))
    ids = np.arange(2 * N, dtype=np.int64)
    for stamp in (1000, 2000):
        with tiledb.open(uri, "w", timestamp=stamp) as A:
            A[ids] = {"v": ids * stamp}
    con = tdbsql.connect().register("t", uri)
    sql = "SELECT id, v FROM t TABLESAMPLE 10% REPEATABLE (7) ORDER BY id"
    assert "merge in" in con.explain(sql, analyze=True)  # slabs: several batches
    rows = con.sql(sql).fetchall()
    assert rows == con.sql(sql).fetchall() and all(v == 2000 * i for i, v in rows)
    assert abs(len(rows) - 2 * N / 10) < 600  # each row with chance 0.1: sd 60
    kept = np.array([i for i, _ in rows])
    for period in (1000, 2000, 4000, 8000, N // 2):  # no slab size repeats the draws
        first = set(kept[kept < period].tolist())
        second = set((kept[(kept >= period) & (kept < 2 * period)] - period).tolist())
        assert len(first & second) < 0.5 * len(first), period
    other = con.sql(sql.replace("(7)", "(8)")).fetchall()
    assert other != rows
