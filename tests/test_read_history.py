"""Reads over an array's history equal ``tiledb``'s: time travel (AS OF / BETWEEN, the Python
``timestamp=`` argument), uncommitted fragments, and every kind of consolidation with and
without vacuuming (fragments, windows of fragments, fragment metadata, commits), dense and
sparse."""

from __future__ import annotations

import os

import numpy as np
import pytest

from history_helpers import (
    assert_same, consolidate, create, int_dim, sorted_rows, sql_window, tdbsql, tiledb, vacuum,
    write_sparse,
)

WRITES = (10, 20, 30, 40)
WINDOWS = (5, 10, 15, 20, 35, 40, 10**6, None, (15, 35), (20, 20), (41, 50), (0, 10))


def build_sparse(uri: str, writes=WRITES, dups: bool = False) -> str:
    """Fragments at ``writes`` whose coordinates overlap (each rewrites part of the last)."""
    create(uri, [int_dim()], [tiledb.Attr("a", dtype=np.int32),
                              tiledb.Attr("s", dtype=str, nullable=True)], allows_duplicates=dups)
    for t in writes:
        xs = np.arange(t // 10, 45, 3, dtype=np.int64)
        strings = np.array([None if x % 5 == 0 else f"v{t}_{x}" for x in xs], dtype=object)
        write_sparse(uri, t, xs, a=(xs * t).astype(np.int32), s=strings)
    return uri


def build_dense(uri: str, writes=(10, 20, 30)) -> str:
    create(uri, [int_dim(lo=1, hi=40, tile=5)], [tiledb.Attr("a", dtype=np.int32),
                                                 tiledb.Attr("f", dtype=np.float64)], sparse=False)
    for i, t in enumerate(writes):
        lo = 1 + 6 * i
        with tiledb.open(uri, "w", timestamp=t) as A:
            A[lo:lo + 13] = {"a": np.arange(13, dtype=np.int32) + t, "f": np.full(13, t / 4.0)}
    return uri


@pytest.fixture
def sparse_uri(tmp_path):
    return build_sparse(str(tmp_path / "sparse"))


@pytest.fixture
def dense_uri(tmp_path):
    return build_dense(str(tmp_path / "dense"))


def test_sparse_time_travel(sparse_uri):
    for window in WINDOWS:
        assert_same(sparse_uri, window)


def test_dense_time_travel(dense_uri):
    for window in (5, 10, 15, 20, 30, None, (15, 25), (11, 19), (20, 30)):
        assert_same(dense_uri, window)


def test_dense_before_first_write_is_empty(dense_uri):
    # tiledb: no non-empty domain (reading the whole domain would give fill values).
    with tiledb.open(dense_uri, timestamp=5) as A:
        assert A.nonempty_domain() is None
    assert tdbsql.query("SELECT * FROM array", dense_uri, timestamp=5).num_rows == 0
    assert tdbsql.open(dense_uri, timestamp=5).non_empty_domain() is None


def test_sparse_before_first_write_is_empty(sparse_uri):
    table = tdbsql.query("SELECT x, a, s FROM array FOR SYSTEM_TIME AS OF 9", sparse_uri)
    assert table.num_rows == 0 and table.column_names == ["x", "a", "s"]


@pytest.mark.parametrize("window", [15, 30, (15, 35), (20, 20)])
def test_sql_clause_equals_timestamp_argument(sparse_uri, dense_uri, window):
    for uri in (sparse_uri, dense_uri):
        by_arg = tdbsql.query("SELECT * FROM array", uri, timestamp=window)
        by_sql = sql_window(uri, window)
        assert sorted_rows(by_sql, ["x"]) == sorted_rows(by_arg, ["x"])


def test_sql_clause_overrides_argument(sparse_uri):
    by_sql = tdbsql.query("SELECT * FROM array FOR SYSTEM_TIME AS OF 20", sparse_uri,
                          timestamp=40)
    assert sorted_rows(by_sql, ["x"]) == assert_same(sparse_uri, 20)


def test_open_lists_window_fragments(sparse_uri):
    for window, stamps in ((25, [10, 20]), ((15, 35), [20, 30]), (None, list(WRITES))):
        array = tdbsql.open(sparse_uri, timestamp=window)
        assert [f.timestamp_range[0] for f in array.fragments] == stamps
        with tiledb.open(sparse_uri, timestamp=window) as A:
            assert array.non_empty_domain() == A.nonempty_domain()


def test_uncommitted_fragment_is_invisible(sparse_uri):
    commits = os.path.join(sparse_uri, "__commits")
    victim = next(n for n in os.listdir(commits) if n.startswith("__20_20_"))
    os.remove(os.path.join(commits, victim))
    for window in (25, None, (15, 25)):
        rows = assert_same(sparse_uri, window)
        assert not any(v.startswith("v20_") for v in rows["s"] if v)


def test_dense_uncommitted_fragment_is_invisible(dense_uri):
    commits = os.path.join(dense_uri, "__commits")
    os.remove(os.path.join(commits, next(n for n in os.listdir(commits) if "_30_30_" in n)))
    for window in (25, None):
        assert_same(dense_uri, window)


@pytest.mark.parametrize("do_vacuum", [False, True])
def test_sparse_consolidation_time_travel(sparse_uri, do_vacuum):
    consolidate(sparse_uri)
    if do_vacuum:
        vacuum(sparse_uri)
        assert len(os.listdir(os.path.join(sparse_uri, "__fragments"))) == 1
    # The consolidated fragment carries per-cell timestamps: reads inside it still travel.
    for window in WINDOWS:
        assert_same(sparse_uri, window)


def test_sparse_consolidation_then_more_writes(sparse_uri):
    consolidate(sparse_uri)
    vacuum(sparse_uri)
    build_more = (50, 60)
    for t in build_more:
        xs = np.arange(0, 45, 7, dtype=np.int64)
        write_sparse(sparse_uri, t, xs, a=(xs + t).astype(np.int32),
                     s=np.array([f"w{t}"] * len(xs), dtype=object))
    consolidate(sparse_uri)
    for window in WINDOWS + (55, (35, 55), (45, 70)):
        assert_same(sparse_uri, window)
    vacuum(sparse_uri)
    for window in (15, 45, 55, None, (35, 55)):
        assert_same(sparse_uri, window)


@pytest.mark.parametrize("do_vacuum", [False, True])
def test_consolidation_of_a_window(sparse_uri, do_vacuum):
    consolidate(sparse_uri, {"sm.consolidation.timestamp_start": 20,
                             "sm.consolidation.timestamp_end": 30})
    names = os.listdir(os.path.join(sparse_uri, "__fragments"))
    assert any(n.startswith("__20_30_") for n in names)
    if do_vacuum:
        vacuum(sparse_uri)
    for window in WINDOWS + ((25, 45), (10, 25)):
        assert_same(sparse_uri, window)


@pytest.mark.parametrize("do_vacuum", [False, True])
def test_dense_consolidation(dense_uri, do_vacuum):
    consolidate(dense_uri)
    if do_vacuum:
        vacuum(dense_uri)
    # Dense arrays never read part of a consolidated fragment: before its end the originals
    # count (or, once vacuumed, nothing does).
    for window in (5, 10, 15, 20, 30, None, (15, 35), (20, 20)):
        assert_same(dense_uri, window)


def test_dense_consolidation_then_write(dense_uri):
    consolidate(dense_uri)
    vacuum(dense_uri)
    with tiledb.open(dense_uri, "w", timestamp=50) as A:
        A[3:9] = {"a": np.full(6, -1, dtype=np.int32), "f": np.full(6, -0.5)}
    for window in (30, 50, None, (40, 60)):
        assert_same(dense_uri, window)


@pytest.mark.parametrize("do_vacuum", [False, True])
def test_fragment_metadata_consolidation(sparse_uri, dense_uri, do_vacuum):
    for uri in (sparse_uri, dense_uri):
        consolidate(uri, {"sm.consolidation.mode": "fragment_meta"})
        assert os.listdir(os.path.join(uri, "__fragment_meta"))
        if do_vacuum:
            vacuum(uri, "fragment_meta")
        for window in (15, 25, None, (15, 35)):
            assert_same(uri, window)


@pytest.mark.parametrize("do_vacuum", [False, True])
def test_commits_consolidation(sparse_uri, do_vacuum):
    consolidate(sparse_uri, {"sm.consolidation.mode": "commits"})
    commits = os.listdir(os.path.join(sparse_uri, "__commits"))
    assert any(n.endswith(".con") for n in commits)
    if do_vacuum:
        vacuum(sparse_uri, "commits")
        assert all(n.endswith(".con") for n in os.listdir(os.path.join(sparse_uri, "__commits")))
    for window in WINDOWS:
        assert_same(sparse_uri, window)


def test_commits_then_fragments_consolidation_writes_ignore_file(sparse_uri):
    consolidate(sparse_uri, {"sm.consolidation.mode": "commits"})
    vacuum(sparse_uri, "commits")
    consolidate(sparse_uri)
    vacuum(sparse_uri)
    # The vacuumed fragments' commits live on in the .con file: an .ign file hides them.
    assert any(n.endswith(".ign") for n in os.listdir(os.path.join(sparse_uri, "__commits")))
    for window in (15, 25, None, (15, 35)):
        assert_same(sparse_uri, window)
    write_sparse(sparse_uri, 50, np.array([1, 2], dtype=np.int64),
                 a=np.array([7, 8], dtype=np.int32), s=np.array(["n", None], dtype=object))
    consolidate(sparse_uri, {"sm.consolidation.mode": "commits"})
    for window in (25, 45, None):
        assert_same(sparse_uri, window)


def test_fragments_at_the_same_coordinates_newest_wins(tmp_path):
    uri = create(str(tmp_path / "a"), [int_dim(), int_dim("y", 0, 9, 5)],
                 [tiledb.Attr("a", dtype=np.int64)])
    for t in range(1, 8):
        xs = np.array([1, 2, 3, t + 3], dtype=np.int64)
        write_sparse(uri, t * 10, (xs, xs % 3), a=np.full(4, t, dtype=np.int64))
    consolidate(uri, {"sm.consolidation.timestamp_start": 20,
                      "sm.consolidation.timestamp_end": 50})
    for window in (15, 25, 45, 55, None, (25, 45), (45, 65)):
        assert_same(uri, window)
    vacuum(uri)
    for window in (15, 25, 45, 55, None, (25, 45)):
        assert_same(uri, window)


def test_duplicates_array_history(tmp_path):
    uri = build_sparse(str(tmp_path / "dups"), dups=True)
    with tiledb.open(uri, "w", timestamp=45) as A:  # the same coordinate twice in one write
        A[np.array([4, 4], dtype=np.int64)] = {"a": np.array([1, 2], dtype=np.int32),
                                               "s": np.array(["p", "q"], dtype=object)}
    for window in (15, 25, None, (15, 35)):
        rows = assert_same(uri, window)
        assert len(rows["x"]) == sum(1 for _ in rows["x"])
    consolidate(uri)
    for window in (15, 25, None, (15, 35)):
        assert_same(uri, window)


def test_where_on_dimension_with_history(sparse_uri):
    consolidate(sparse_uri)
    for window in (15, 25, None):
        table = tdbsql.query("SELECT x, a FROM array WHERE x BETWEEN 4 AND 20 ORDER BY x",
                             sparse_uri, timestamp=window)
        with tiledb.open(sparse_uri, timestamp=window) as A:
            expected = A.query(attrs=["a"], return_arrow=True).df[4:20]
        assert sorted_rows(table, ["x"]) == sorted_rows(expected.select(["x", "a"]), ["x"])


def test_same_timestamp_ties_follow_fragment_order(tmp_path):
    # Fragments with the same first timestamp keep TileDB's listing (name) order; the last one
    # wins a coordinate.  Names hold random uuids, so a few arrays cover several orders.
    for trial in range(4):
        uri = create(str(tmp_path / f"t{trial}"), [int_dim()], [tiledb.Attr("a", dtype=np.int32)])
        for v in range(5):
            write_sparse(uri, 10 + v % 2, np.array([1, 2]), a=np.array([v, v], dtype=np.int32))
        for window in (10, 11, None):
            assert_same(uri, window)


def test_consolidating_chosen_fragments(tmp_path):
    # Fragments 10 and 30 merged around 20: per-cell timestamps keep 20's cells in between.
    uri = create(str(tmp_path / "a"), [int_dim()], [tiledb.Attr("a", dtype=np.int32)])
    for t in (10, 20, 30, 40):
        xs = np.arange(0, 20, 1 + t // 10, dtype=np.int64)
        write_sparse(uri, t, xs, a=np.full(len(xs), t, dtype=np.int32))
    names = sorted(os.listdir(os.path.join(uri, "__fragments")), key=lambda n: int(n.split("_")[2]))
    tiledb.consolidate(uri, fragment_uris=[names[0], names[2]],
                       config=tiledb.Config({"sm.consolidation.buffer_size": "65536"}))
    windows = (10, 15, 20, 25, 30, 35, None, (15, 35), (20, 30))
    for window in windows:
        assert_same(uri, window)
    vacuum(uri)
    for window in windows:
        assert_same(uri, window)


def test_delete_fragments_in_consolidated_commits(sparse_uri):
    consolidate(sparse_uri, {"sm.consolidation.mode": "commits"})
    tiledb.Array.delete_fragments(sparse_uri, 15, 25)
    # The removed fragment's commit is inside the .con file: TileDB writes an .ign file.
    assert any(n.endswith(".ign") for n in os.listdir(os.path.join(sparse_uri, "__commits")))
    for window in WINDOWS:
        assert_same(sparse_uri, window)


def test_string_and_integer_dimensions_history(tmp_path):
    uri = create(str(tmp_path / "a"),
                 [tiledb.Dim("k", domain=(None, None), tile=None, dtype="ascii"),
                  int_dim("y", 0, 9, 5)],
                 [tiledb.Attr("a", dtype=np.int64)])
    for t in (10, 20, 30):
        keys = np.array([f"k{(i * t) % 17:02d}" for i in range(12)], dtype=object)
        write_sparse(uri, t, (keys, np.arange(12) % 3), a=np.arange(12) + t)
    windows = (10, 20, 25, 30, None, (15, 35))
    for window in windows:
        assert_same(uri, window)
    consolidate(uri)
    vacuum(uri)
    for window in windows:
        assert_same(uri, window)


def test_raw_cells_over_history(sparse_uri):
    # Byte-exact check against tiledb's raw query buffers (NULLs from the validity buffers).
    from conftest import assert_same_cells, oracle_cells

    consolidate(sparse_uri, {"sm.consolidation.timestamp_start": 20,
                             "sm.consolidation.timestamp_end": 40})
    for window in (15, 25, None, (15, 35)):
        table = tdbsql.query("SELECT x, a, s FROM array", sparse_uri, timestamp=window)
        expected = oracle_cells(sparse_uri, timestamp=window)
        assert_same_cells(table, expected, ["x"], ["a", "s"], path=sparse_uri)
