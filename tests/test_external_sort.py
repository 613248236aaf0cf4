"""ORDER BY past the memory budget: sorted runs on disk, merged (``engine.external_sort``).
Results compared row for row with DuckDB over the same cells; the runs are counted, so each
test knows it sorted on disk, and their folder is checked empty afterwards."""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pytest

tiledb = pytest.importorskip("tiledb")
duckdb = pytest.importorskip("duckdb")
from hypothesis import given, settings, strategies as st  # noqa: E402

import tdbsql  # noqa: E402
import tdbsql.engine.external_sort as external_sort  # noqa: E402
from tdbsql.errors import MemoryLimitError  # noqa: E402

N = 20_000
MB = 128  # a run: at most 128 KB


@pytest.fixture(scope="module")
def array(tmp_path_factory):
    """Three fragments of a sparse array, side by side: ints, floats
    with NaN and NULL, nullable Unicode strings, dates."""
    path = str(tmp_path_factory.mktemp("xs") / "a")
    dom = tiledb.Domain(tiledb.Dim("id", domain=(0, 10 * N), tile=1000, dtype=np.int64))
    tiledb.Array.create(path, tiledb.ArraySchema(domain=dom, sparse=True, capacity=2000, attrs=[
        tiledb.Attr("g", dtype=np.int32),
        tiledb.Attr("f", dtype=np.float64, nullable=True),
        tiledb.Attr("s", dtype=str, var=True, nullable=True),
        tiledb.Attr("d", dtype="datetime64[D]")]))
    rng = np.random.default_rng(7)
    for t in (1, 2, 3):
        ids = (t - 1) * N + np.arange(N, dtype=np.int64)
        f = rng.normal(size=N).round(2)
        f[rng.random(N) < 0.05] = np.nan
        words = np.array(["", "a", "b", "ä", "zz", "Z", "ab", "🙂", "a b"], dtype=object)
        s = words[rng.integers(0, len(words), N)] + rng.integers(0, 50, N).astype(str)
        with tiledb.open(path, "w", timestamp=t) as A:
            A[ids] = {"g": rng.integers(-5, 5, N).astype(np.int32),
                      "f": np.ma.masked_array(f, mask=rng.random(N) < 0.05),
                      "s": np.ma.masked_array(s, mask=rng.random(N) < 0.05),
                      "d": np.datetime64("2020-01-01") + rng.integers(0, 900, N).astype(
                          "timedelta64[D]")}
    return path


@pytest.fixture(scope="module")
def duck(array):
    con = duckdb.connect()
    con.register("rows", tdbsql.query("SELECT * FROM array", array))
    con.sql("CREATE TABLE a AS SELECT * FROM rows")
    return con


@pytest.fixture()
def runs(monkeypatch, tmp_path):
    """The runs each query writes, in a folder of the test's own; a run holds at most a
    thousandth of the memory budget (not a quarter), so small arrays make many runs."""
    monkeypatch.setenv("TDBSQL_SPILL_DIR", str(tmp_path))
    monkeypatch.setattr(external_sort, "_SHARE", 1000)
    written = []
    spill = external_sort._spill

    def counted(*args):
        written.append(args[-2])  # the run's number
        return spill(*args)

    monkeypatch.setattr(external_sort, "_spill", counted)
    return written, tmp_path


def _streamed(con, sql) -> pa.Table:
    return pa.Table.from_batches(list(con.sql(sql).fetch_record_batch()))


QUERIES = [
    "SELECT id, f FROM a ORDER BY f, id",
    "SELECT id, f FROM a ORDER BY f DESC NULLS FIRST, id",
    "SELECT s, id, g * 2 AS g2 FROM a WHERE g > -3 ORDER BY s NULLS FIRST, id DESC",
    "SELECT * FROM a ORDER BY d DESC, g, id",
    "SELECT upper(s) AS u, id FROM a WHERE f < 0.5 OR f IS NULL ORDER BY u DESC, id",
    "SELECT id FROM a ORDER BY g, f DESC, s, id",  # keys not selected
]


@pytest.mark.parametrize("sql", QUERIES)
def test_sorted_on_disk_as_duckdb(array, duck, runs, sql):
    written, folder = runs
    con = tdbsql.connect(memory_mb=MB).register("a", array)
    got = _streamed(con, sql)
    assert len(written) >= 3, "sorted in memory: the test does not test the merge"
    expected = duck.sql(sql).arrow()
    expected = expected.read_all() if isinstance(expected, pa.RecordBatchReader) else expected
    assert got.column_names == expected.column_names
    assert got.to_pylist() == expected.to_pylist()
    assert os.listdir(folder) == []  # the runs are removed


def test_within_the_budget_nothing_is_written(array, duck, runs):
    written, _ = runs
    sql = QUERIES[0]
    got = tdbsql.connect().register("a", array).sql(sql).fetchall()
    assert written == []
    assert got == duck.sql(sql).fetchall()


def test_a_result_dropped_half_read_removes_its_runs(array, runs):
    written, folder = runs
    con = tdbsql.connect(memory_mb=MB).register("a", array)
    reader = con.sql("SELECT id, s FROM a ORDER BY s, id").fetch_record_batch()
    first = reader.read_next_batch()
    assert first.num_rows and written
    reader.close()
    del reader
    assert os.listdir(folder) == []


def test_a_list_key_past_the_budget_is_refused(array, runs):
    con = tdbsql.connect(memory_mb=MB).register("a", array)
    with pytest.raises(MemoryLimitError, match="list, struct or MAP key"):
        con.sql("SELECT id FROM a ORDER BY [g, id]").arrow()


@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["g", "f", "s", "d", "f * g", "length(s)"]),
                          st.booleans(), st.booleans()), min_size=1, max_size=3))
def test_random_orders_as_duckdb(array, duck, keys):
    order = ", ".join(f"{k} {'DESC' if desc else 'ASC'} NULLS {'FIRST' if first else 'LAST'}"
                      for k, desc, first in keys)
    sql = f"SELECT id, {keys[0][0]} AS k FROM a ORDER BY {order}, id"
    got = _streamed(tdbsql.connect(memory_mb=MB).register("a", array), sql)
    assert got.to_pylist() == [dict(zip(("id", "k"), r)) for r in duck.sql(sql).fetchall()]


def test_many_runs_merge_in_passes_whatever_the_names(array, duck, runs, monkeypatch):
    """Past 16 runs, groups of 16 are merged on disk first; the result may repeat a name or
    name a column as the runs name their key columns."""
    written, folder = runs
    monkeypatch.setattr(external_sort, "_SHARE", 8000)
    sql = "SELECT id, id, s AS k0, f AS k0_nan FROM a ORDER BY s DESC, f, id"
    got = _streamed(tdbsql.connect(memory_mb=MB).register("a", array), sql)
    assert len(written) > 16
    assert got.column_names == ["id", "id", "k0", "k0_nan"]
    assert list(zip(*(c.to_pylist() for c in got.columns))) == duck.sql(sql).fetchall()
    assert os.listdir(folder) == []


def test_a_spill_folder_that_cannot_be_made_is_an_operational_error(array, runs, monkeypatch):
    monkeypatch.setenv("TDBSQL_SPILL_DIR", "/nonexistent/spill")
    con = tdbsql.connect(memory_mb=MB).register("a", array)
    with pytest.raises(tdbsql.OperationalError, match="no folder for its runs can be made in "
                                                      "'/nonexistent/spill'"):
        con.sql("SELECT id FROM a ORDER BY s")
