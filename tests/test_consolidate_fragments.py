"""Fragment consolidation by tdbsql, with ``tiledb`` as oracle: what both read before equals
what both read after (every time-travel window, sparse and dense, nullable/var attributes,
duplicates, encryption, deletes), the merged fragment holds what TileDB's own consolidation
writes (cells, per-cell timestamps, order), and readers opening between any two steps of a
consolidation or a vacuum read the same cells."""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest

from history_helpers import (
    assert_same, consolidate as tiledb_consolidate, create, delete, int_dim, tiledb,
    vacuum as tiledb_vacuum, write_sparse,
)
from tdbsql.storage import cell_merge, fragment_consolidation
from tdbsql.storage.array import Array
from tdbsql.storage.consolidate import consolidate
from tdbsql.storage.vacuum import plan as vacuum_plan, vacuum

KEY = "0123456789abcdeF0123456789abcdeF"
WINDOWS = (5, 10, 15, 20, 25, 30, None, (15, 25), (20, 20), (11, 29), (31, 40))


@pytest.fixture(autouse=True, params=["rounds of batches", "a tile at a time"])
def lending(request, monkeypatch):
    """Every test twice: the merged fragments lend their few tiles at once (one round of the
    merge), and one tile at a time (``cell_merge``: many rounds, a frontier each); a dense
    consolidation likewise reads and writes its region whole, or one row of tiles at a
    time."""
    if request.param == "a tile at a time":
        monkeypatch.setattr(cell_merge, "LENT_CELLS", 1)
        monkeypatch.setattr(fragment_consolidation, "BAND_CELLS", 1)


def build_sparse(uri: str, *, dups=False, key=None, writes=(10, 20, 30)) -> str:
    create(uri, [int_dim()], [tiledb.Attr("a", dtype=np.int32),
                              tiledb.Attr("s", dtype=str, nullable=True),
                              tiledb.Attr("f", dtype=np.float64)],
           allows_duplicates=dups, key=key)
    for t in writes:
        xs = np.arange(t // 10, 20, 3, dtype=np.int64)
        write_sparse(uri, t, xs, key=key, a=(xs * t).astype(np.int32),
                     s=np.array([None if x % 5 == 0 else f"v{t}_{x}" for x in xs], dtype=object),
                     f=xs / t)
    return uri


def build_dense(uri: str, spans=((10, 1, 13), (20, 7, 19), (30, 12, 24))) -> str:
    create(uri, [int_dim(lo=1, hi=40, tile=5)], [tiledb.Attr("a", dtype=np.int32),
                                                 tiledb.Attr("s", dtype=str)], sparse=False)
    for t, lo, hi in spans:
        with tiledb.open(uri, "w", timestamp=t) as A:
            n = hi - lo + 1
            A[lo:hi + 1] = {"a": np.arange(n, dtype=np.int32) + t,
                            "s": np.array([f"d{t}_{i}" for i in range(n)], dtype=object)}
    return uri


def snapshot(uri: str, key=None, windows=WINDOWS) -> dict:
    return {w: assert_same(uri, w, key=key) for w in windows}


def assert_reads(uri: str, expected: dict, key=None) -> None:
    for window, rows in expected.items():
        assert assert_same(uri, window, key=key) == rows, f"window {window}"


def cells(uri: str, key=None) -> list[tuple]:
    """(coordinate, timestamp, a) of every cell of the one fragment, in stored order."""
    array = Array(uri, key=key)
    (frag,) = array.fragments
    fields = frag.fields
    out = []
    for tile_idx in range(frag.metadata.tile_count):
        xs = frag.tiles.read(fields["x"], tile_idx).values.view(np.int64)
        ts = frag.tiles.read(fields["__timestamps"], tile_idx).values.view(np.uint64)
        a = frag.tiles.read(fields["a"], tile_idx).values.view(np.int32)
        out += list(zip(xs.tolist(), ts.tolist(), a.tolist()))
    return out


@pytest.mark.parametrize("dups", [False, True])
def test_sparse_reads_equal_before_and_after(tmp_path, dups):
    uri = build_sparse(str(tmp_path / "a"), dups=dups)
    twin = str(tmp_path / "twin")
    shutil.copytree(uri, twin)
    expected = snapshot(uri)
    report = consolidate(uri)
    assert len(report.inputs) == 3 and report.created[0].startswith("__fragments/__10_30_")
    assert_reads(uri, expected)
    # Same cells, timestamps and order as TileDB's own consolidation.
    tiledb_consolidate(twin)
    vacuum(uri)
    tiledb_vacuum(twin)
    assert cells(uri) == cells(twin)
    assert_reads(uri, expected)


def test_encrypted_sparse(tmp_path):
    uri = build_sparse(str(tmp_path / "enc"), key=KEY)
    expected = snapshot(uri, key=KEY, windows=(15, None))
    consolidate(uri, key=KEY)
    vacuum(uri)
    assert_reads(uri, expected, key=KEY)


def test_window_matches_tiledb(tmp_path):
    uri = build_sparse(str(tmp_path / "w"), writes=(10, 20, 30, 40))
    twin = str(tmp_path / "twin")
    shutil.copytree(uri, twin)
    windows = WINDOWS + (35, (25, 45))
    expected = snapshot(uri, windows=windows)
    report = consolidate(uri, timestamp=(20, 30))
    assert [p.split("__")[2].split("_")[:2] for p in report.inputs] == [["20", "20"], ["30", "30"]]
    # tiledb.consolidate(timestamp=...) raises TypeError in 0.36.1: use the config keys.
    tiledb_consolidate(twin, {"sm.consolidation.timestamp_start": 20,
                              "sm.consolidation.timestamp_end": 30})
    for target in (uri, twin):
        assert_reads(target, expected)
        vacuum(target)
        assert_reads(target, expected)
    assert sorted(os.listdir(os.path.join(uri, "__fragments")))[0].startswith("__10_10_")


def test_consolidating_a_consolidated_fragment(tmp_path):
    uri = build_sparse(str(tmp_path / "c"), writes=(10, 20))
    tiledb_consolidate(uri)
    tiledb_vacuum(uri)
    write_sparse(uri, 30, np.array([2, 50], dtype=np.int64), a=np.array([7, 8], np.int32),
                 s=np.array(["late", None], dtype=object),
                 f=np.array([1.5, 2.5]))
    expected = snapshot(uri)
    consolidate(uri)
    vacuum(uri)
    assert_reads(uri, expected)
    assert len(Array(uri).fragments) == 1


def test_purge_deleted_cells_matches_tiledb(tmp_path):
    uri = build_sparse(str(tmp_path / "p"))
    delete(uri, 25, "a == 280 or a == 260")
    twin = str(tmp_path / "twin")
    shutil.copytree(uri, twin)
    consolidate(uri, purge_deleted_cells=True)
    tiledb_consolidate(twin, {"sm.consolidation.purge_deleted_cells": "true"})
    vacuum(uri)
    tiledb_vacuum(twin)
    # Purging loses history inside the window in TileDB too: compare with its result.
    for window in WINDOWS:
        assert assert_same(uri, window) == assert_same(twin, window), f"window {window}"
    assert cells(uri) == cells(twin)


def test_purging_every_cell_is_skipped_and_the_array_stays_readable(tmp_path):
    """TileDB refuses such a run ("Consolidation read 0 cells"); an empty merged fragment
    would make the array unreadable in ``tiledb``, so tdbsql writes nothing."""
    uri = build_sparse(str(tmp_path / "p"))
    delete(uri, 35, "a >= 0")
    expected = snapshot(uri)
    with pytest.raises(tiledb.TileDBError, match="0 cells"):
        tiledb_consolidate(uri, {"sm.consolidation.purge_deleted_cells": "true"})
    report = consolidate(uri, purge_deleted_cells=True)
    assert not report.consolidated and "purged" in report.reason
    assert len(os.listdir(os.path.join(uri, "__fragments"))) == 3
    assert_reads(uri, expected)


@pytest.mark.parametrize("consolidator", ["tdbsql", "tiledb"])
def test_versions_sharing_a_timestamp_read_as_tiledb_reads_them(tmp_path, consolidator):
    """Overwrites written at one timestamp: the merged fragment keeps every version, newest
    (by fragment order) first with equal per-cell timestamps; TileDB reads the first of them,
    so the winner is the same before and after consolidation, in both readers."""
    for trial in range(4):
        uri = str(tmp_path / f"{consolidator}{trial}")
        create(uri, [int_dim()], [tiledb.Attr("a", dtype=np.int32)])
        for k in range(4):
            write_sparse(uri, 5, np.array([1, 2], dtype=np.int64), a=np.array([k, k], np.int32))
        before = assert_same(uri)
        if consolidator == "tdbsql":
            consolidate(uri)
        else:
            tiledb_consolidate(uri, {})
        assert assert_same(uri) == before
        vacuum(uri)
        assert assert_same(uri) == before
        assert [a for x, _, a in cells(uri) if x == 1][0] == before["a"][0]  # stored first


def test_deletes_keep_history(tmp_path):
    """TileDB's default: deleted cells stay, with their delete time (delete metadata)."""
    uri = build_sparse(str(tmp_path / "d"))
    delete(uri, 25, "a == 280 or a == 260")
    delete(uri, 35, "x < 4")
    expected = snapshot(uri, windows=WINDOWS + (35, (21, 36)))
    consolidate(uri)
    vacuum(uri)
    assert_reads(uri, expected)


def test_deletes_before_the_window_need_no_delete_metadata(tmp_path):
    uri = str(tmp_path / "early")
    create(uri, [int_dim()], [tiledb.Attr("a", dtype=np.int32)])
    write_sparse(uri, 10, np.array([1, 2], dtype=np.int64), a=np.array([1, 2], np.int32))
    delete(uri, 15, "a == 1")
    for t in (20, 30):
        write_sparse(uri, t, np.array([1, t], dtype=np.int64), a=np.array([t, t], np.int32))
    expected = snapshot(uri)
    consolidate(uri, timestamp=(20, 30))
    vacuum(uri)
    assert_reads(uri, expected)


def test_dense_reads_equal(tmp_path):
    uri = build_dense(str(tmp_path / "dense"))
    twin = str(tmp_path / "twin")
    shutil.copytree(uri, twin)
    windows = (10, 20, 30, None, (15, 25))
    expected = snapshot(uri, windows=windows)
    report = consolidate(uri)
    assert report.consolidated
    tiledb_consolidate(twin)
    assert_reads(uri, expected)
    vacuum(uri)
    tiledb_vacuum(twin)
    for window in (None, 30, 40):
        assert assert_same(uri, window) == assert_same(twin, window)
    with tiledb.open(uri) as A, tiledb.open(twin) as B:
        assert A.nonempty_domain() == B.nonempty_domain()


def test_dense_with_gaps_is_left_alone_as_tiledb_does(tmp_path):
    uri = build_dense(str(tmp_path / "gaps"), spans=((10, 1, 3), (20, 12, 13), (30, 3, 7)))
    twin = str(tmp_path / "twin")
    shutil.copytree(uri, twin)
    report = consolidate(uri)
    assert not report.consolidated and "fill values" in report.reason
    tiledb_consolidate(twin)
    assert sorted(os.listdir(os.path.join(twin, "__fragments"))) == \
        sorted(os.listdir(os.path.join(uri, "__fragments")))


def test_dry_run_touches_nothing(tmp_path):
    uri = build_sparse(str(tmp_path / "dry"))
    before = sorted(os.walk(uri))
    plan = consolidate(uri, dry_run=True)
    assert plan.dry_run and len(plan.inputs) == 3 and len(plan.created) == 3
    assert sorted(os.walk(uri)) == before
    assert vacuum(uri, dry_run=True).removed == ()


def test_readers_between_consolidation_and_vacuum_steps(tmp_path):
    """Replays a consolidation and a vacuum file by file: a reader opening at any point reads
    what it read before, in tdbsql and in tiledb."""
    uri = build_sparse(str(tmp_path / "steps"), writes=(10, 20, 30))
    windows = (15, 25, None, (15, 25))
    expected = snapshot(uri, windows=windows)
    final = str(tmp_path / "final")
    shutil.copytree(uri, final)
    report = consolidate(final)
    fragment, commit, vac = report.created
    # 1. the fragment's files, no commit yet
    shutil.copytree(os.path.join(final, fragment), os.path.join(uri, fragment))
    assert_reads(uri, expected)
    # 2. the commit (old and new fragments both visible)
    shutil.copy(os.path.join(final, commit), os.path.join(uri, commit))
    assert_reads(uri, expected)
    # 3. the vacuum file
    shutil.copy(os.path.join(final, vac), os.path.join(uri, vac))
    assert_reads(uri, expected)
    # Vacuum, one removal at a time, in vacuum's order.
    for relative in vacuum_plan(uri, "fragments").steps:
        full = os.path.join(uri, relative)
        shutil.rmtree(full) if os.path.isdir(full) else os.remove(full)
        assert_reads(uri, {None: expected[None], 25: expected[25]})


def test_failed_consolidation_leaves_no_fragment(tmp_path):
    """A source fragment vanishing mid-way (e.g. another tool's vacuum) fails the run cleanly:
    no committed or orphaned fragment, the array reads as before."""
    uri = build_sparse(str(tmp_path / "fail"))
    expected = snapshot(uri, windows=(None,))
    array = Array(uri)
    victim = os.path.join(array.fragments[1].entry.path, "a0.tdb")
    saved = open(victim, "rb").read()
    os.remove(victim)
    with pytest.raises(Exception, match="a0.tdb"):
        consolidate(uri)
    with open(victim, "wb") as f:
        f.write(saved)
    assert len(os.listdir(os.path.join(uri, "__fragments"))) == 3
    assert not [n for n in os.listdir(os.path.join(uri, "__commits")) if n.endswith(".vac")]
    assert_reads(uri, expected)


def test_purge_groups_string_and_float_coordinates_like_tiledb(tmp_path):
    """Purge drops older versions of a deleted coordinate: coordinates compare by their bytes,
    for var-sized (string) and float dimensions alike."""
    uri = str(tmp_path / "sdim")
    create(uri, [tiledb.Dim("k", dtype="ascii"),
                 tiledb.Dim("y", domain=(-10.0, 10.0), tile=5.0, dtype=np.float64)],
           [tiledb.Attr("a", dtype=np.int32)])
    keys = np.array(["a", "bb", "a", "ccc"], dtype=object)
    ys = np.array([0.0, 1.5, -2.5, 2.0])
    for t, take in ((10, [0, 1, 2, 3]), (20, [1, 2]), (30, [0, 3])):
        with tiledb.open(uri, "w", timestamp=t) as A:
            A[keys[take], ys[take]] = {"a": np.array(take, dtype=np.int32) + t}
    delete(uri, 25, "a == 21 or a == 30")
    twin = str(tmp_path / "twin")
    shutil.copytree(uri, twin)
    consolidate(uri, purge_deleted_cells=True)
    tiledb_consolidate(twin, {"sm.consolidation.purge_deleted_cells": "true"})
    vacuum(uri)
    tiledb_vacuum(twin)
    for window in (None, 15, 25, (20, 30)):
        assert assert_same(uri, window) == assert_same(twin, window), f"window {window}"
