"""Consolidation of commits, fragment metadata and array metadata, with ``tiledb`` as oracle:
tdbsql writes the files TileDB writes (same content, fresh names), ``tiledb`` reads the result
equal to what it read before, and tdbsql reads arrays ``tiledb`` consolidated.  Also: dry runs
touch nothing, the maintenance lock refuses a second operation, bad arguments are refused."""

from __future__ import annotations

import os
import re
import shutil

import numpy as np
import pytest

from history_helpers import (
    assert_same, consolidate as tiledb_consolidate, create, delete, int_dim,
    tiledb, vacuum as tiledb_vacuum, write_sparse,
)
from tdbsql.errors import EncryptionKeyError, ProgrammingError
from tdbsql.format.commits import parse_consolidated_commits
from tdbsql.format.names import parse_name
from tdbsql.format.consolidated_fragment_metadata import read_consolidated_fragment_metadata
from tdbsql.storage.consolidate import consolidate
from tdbsql.storage.locking import LOCK_FILE, ArrayLockedError, maintenance_lock
from tdbsql.storage.vacuum import vacuum

KEY = "0123456789abcdeF0123456789abcdeF"


def build(uri: str, key=None) -> str:
    """Three overlapping sparse writes, a delete, three metadata writes (one deletes a key)."""
    create(uri, [int_dim()], [tiledb.Attr("a", dtype=np.int32),
                              tiledb.Attr("s", dtype=str, nullable=True)], key=key)
    for t in (1, 2, 3):
        xs = np.array([1, 2, t + 5], dtype=np.int64)
        write_sparse(uri, t, xs, key=key, a=(xs * 10 + t).astype(np.int32),
                     s=np.array([f"v{t}", None, "w"], dtype=object))
    delete(uri, 4, "a == 22", key=key)
    for t, (k, v) in zip((5, 6, 7), (("k", 5), ("j", "text"), ("k", None))):
        with tiledb.open(uri, "w", timestamp=t, key=key) as A:
            if v is None:
                del A.meta[k]
            else:
                A.meta[k] = v
    return uri


def files(uri: str) -> dict[str, bytes]:
    out = {}
    for root, _, names in os.walk(uri):
        for name in names:
            full = os.path.join(root, name)
            out[os.path.relpath(full, uri)] = open(full, "rb").read()
    out.pop(LOCK_FILE, None)
    return out


def stamps(relative: str) -> tuple[int, int]:
    return parse_name(relative).timestamp_range


def shape(relative: str) -> tuple:
    """A file's folder, timestamps and extension: what is equal between two runs."""
    parsed = parse_name(relative)
    folder = os.path.dirname(relative)
    return (folder, relative) if parsed is None else (folder, parsed.timestamp_range, parsed.ext)


def no_uuid(relative: str) -> str:
    """A path with its uuids blanked: equal for the files of two runs of the same steps."""
    return re.sub(r"[0-9a-f]{32}", "U", relative)


def new_files(before: dict, after: dict, ext: str = "") -> list[str]:
    return sorted(p for p in after if p not in before and p.endswith(ext))


def meta(uri, key=None, timestamp=None) -> dict:
    with tiledb.open(uri, key=key, timestamp=timestamp) as A:
        return dict(A.meta)


@pytest.fixture
def uri(tmp_path):
    return build(str(tmp_path / "arr"))


@pytest.fixture
def twin(uri, tmp_path):
    """A copy of the array for ``tiledb`` to consolidate the same way."""
    copy = str(tmp_path / "twin")
    shutil.copytree(uri, copy)
    return copy


# -- commits ------------------------------------------------------------------------------------


def test_commits_file_matches_tiledb(uri, twin):
    before = files(uri)
    report = consolidate(uri, mode="commits")
    tiledb_consolidate(twin, {"sm.consolidation.mode": "commits"})
    ours, theirs = new_files(before, files(uri)), new_files(before, files(twin))
    assert ours == list(report.created) and len(theirs) == 1
    assert ours[0].endswith(".con") and stamps(ours[0]) == stamps(theirs[0]) == (1, 4)
    # Same entries, same embedded delete condition, byte for byte.
    assert files(uri)[ours[0]] == files(twin)[theirs[0]]
    assert [e.uri for e in parse_consolidated_commits(files(uri)[ours[0]])] == list(report.inputs)
    assert_same(uri)
    assert_same(uri, 3)


def test_commits_vacuum_matches_tiledb(uri, twin):
    consolidate(uri, mode="commits")
    tiledb_consolidate(twin, {"sm.consolidation.mode": "commits"})
    report = vacuum(uri, mode="commits")
    tiledb_vacuum(twin, "commits")
    assert sorted(p for p in files(uri) if not p.endswith(".con")) == \
        sorted(p for p in files(twin) if not p.endswith(".con"))
    assert all(p.startswith("__commits/") and p.endswith((".wrt", ".del")) for p in report.removed)
    assert_same(uri)
    assert_same(uri, 2)


def test_second_commits_consolidation_and_vacuum_match_tiledb(uri, twin):
    """A later write, consolidated again: TileDB never vacuums a .con embedding a delete (it
    compares lines literally) -- tdbsql removes the same files."""
    for target, run in ((uri, lambda: consolidate(uri, mode="commits")),
                        (twin, lambda: tiledb_consolidate(twin, {"sm.consolidation.mode": "commits"}))):
        run()
        write_sparse(target, 8, np.array([50], dtype=np.int64), a=np.array([5], np.int32),
                     s=np.array(["late"], dtype=object))
        run()
    vacuum(uri, mode="commits")
    tiledb_vacuum(twin, "commits")
    ours, theirs = files(uri), files(twin)
    assert len([p for p in ours if p.endswith(".con")]) == len([p for p in theirs if p.endswith(".con")]) == 2
    assert sorted(p for p in ours if not p.endswith(".con") and "__fragments" not in p) == \
        sorted(p for p in theirs if not p.endswith(".con") and "__fragments" not in p)
    assert_same(uri)


def test_commits_already_consolidated_is_skipped(uri):
    consolidate(uri, mode="commits")
    vacuum(uri, mode="commits")
    report = consolidate(uri, mode="commits")
    assert not report.consolidated and "already" in report.reason


def test_tiledb_reads_commits_consolidated_without_deletes(tmp_path):
    uri = str(tmp_path / "plain")
    create(uri, [int_dim()], [tiledb.Attr("a", dtype=np.int32)])
    for t in (1, 2):
        write_sparse(uri, t, np.array([t], dtype=np.int64), a=np.array([t], np.int32))
    consolidate(uri, mode="commits")
    vacuum(uri, mode="commits")
    assert not [n for n in os.listdir(os.path.join(uri, "__commits")) if n.endswith(".wrt")]
    assert_same(uri)
    with tiledb.open(uri) as A:
        assert A[:]["a"].tolist() == [1, 2]


# -- fragment metadata --------------------------------------------------------------------------


def test_fragment_meta_matches_tiledb(uri, twin):
    before = files(uri)
    report = consolidate(uri, mode="fragment_meta")
    tiledb_consolidate(twin, {"sm.consolidation.mode": "fragment_meta"})
    ours, theirs = new_files(before, files(uri)), new_files(before, files(twin))
    assert ours == list(report.created) and ours[0].startswith("__fragment_meta/")
    assert len(theirs) == 1 and stamps(ours[0]) == stamps(theirs[0]) == (1, 3)
    mine = read_consolidated_fragment_metadata(files(uri)[ours[0]], ours[0])
    reference = read_consolidated_fragment_metadata(files(twin)[theirs[0]], theirs[0])
    assert mine.entries == reference.entries and mine.footers == reference.footers
    assert_same(uri)
    assert_same(uri, 2)


def test_fragment_meta_vacuum_keeps_the_newest(uri, twin):
    first = consolidate(uri, mode="fragment_meta").created[0]
    write_sparse(uri, 9, np.array([60], dtype=np.int64), a=np.array([6], np.int32),
                 s=np.array(["x"], dtype=object))
    second = consolidate(uri, mode="fragment_meta").created[0]
    assert vacuum(uri, mode="fragment_meta", dry_run=True).removed == (first,)
    shutil.rmtree(twin)
    shutil.copytree(uri, twin)
    vacuum(uri, mode="fragment_meta")
    tiledb_vacuum(twin, "fragment_meta")
    assert sorted(files(uri)) == sorted(files(twin))
    assert second in files(uri)
    assert_same(uri)


def test_encrypted_fragment_meta_and_commits(tmp_path):
    uri = build(str(tmp_path / "enc"), key=KEY)
    with pytest.raises(EncryptionKeyError):
        consolidate(uri, mode="fragment_meta")
    consolidate(uri, mode="fragment_meta", key=KEY)
    consolidate(uri, mode="commits", key=KEY)
    vacuum(uri, mode="commits", key=KEY)
    assert_same(uri, key=KEY)
    assert_same(uri, 3, key=KEY)


# -- array metadata -----------------------------------------------------------------------------


def test_array_meta_matches_tiledb(uri, twin):
    before = files(uri)
    expected = meta(uri)
    report = consolidate(uri, mode="array_meta")
    tiledb_consolidate(twin, {"sm.consolidation.mode": "array_meta"})
    ours, theirs = new_files(before, files(uri)), new_files(before, files(twin))
    assert ours == sorted(report.created) and len(theirs) == 2
    assert [stamps(p) for p in ours] == [stamps(p) for p in theirs] == [(5, 7), (5, 7)]
    assert meta(uri) == meta(twin) == expected == {"j": "text"}
    # Time travel before the end of the merged window still sees the old files.
    assert meta(uri, timestamp=5) == {"k": 5}
    import tdbsql

    assert tdbsql.metadata(uri) == expected
    vacuum(uri, mode="array_meta")
    tiledb_vacuum(twin, "array_meta")
    assert sorted(map(shape, files(uri))) == sorted(map(shape, files(twin)))
    assert meta(uri) == expected and tdbsql.metadata(uri) == expected


def test_array_meta_window(uri):
    report = consolidate(uri, mode="array_meta", timestamp=(5, 6))
    assert [stamps(p) for p in report.inputs] == [(5, 5), (6, 6)]
    assert stamps(report.created[0]) == (5, 6)
    assert meta(uri) == {"j": "text"}
    assert meta(uri, timestamp=6) == {"k": 5, "j": "text"}


def test_array_meta_all_deleted_writes_only_the_vac(tmp_path):
    uri = str(tmp_path / "gone")
    create(uri, [int_dim()], [tiledb.Attr("a", dtype=np.int32)])
    with tiledb.open(uri, "w", timestamp=1) as A:
        A.meta["k"] = 1
    with tiledb.open(uri, "w", timestamp=2) as A:
        del A.meta["k"]
    report = consolidate(uri, mode="array_meta")
    assert len(report.created) == 1 and report.created[0].endswith(".vac")
    assert meta(uri) == {} and meta(uri, timestamp=1) == {"k": 1}
    vacuum(uri, mode="array_meta")
    assert os.listdir(os.path.join(uri, "__meta")) == []


# -- fragments vacuum after tiledb consolidated -------------------------------------------------


def test_fragment_vacuum_matches_tiledb_with_ignore_file(uri, twin):
    """Commits consolidated first, then fragments: the old .wrt live only in the .con, so
    vacuum must write an .ign file instead of deleting them -- as TileDB does."""
    for target in (uri, twin):
        tiledb_consolidate(target, {"sm.consolidation.mode": "commits"})
        tiledb_consolidate(target)
    before = files(uri)
    plan = vacuum(uri, dry_run=True)
    assert files(uri) == before
    report = vacuum(uri)
    tiledb_vacuum(twin)
    assert report.removed == plan.removed and len(report.written) == 1
    assert list(map(no_uuid, plan.written)) == list(map(no_uuid, report.written))
    ours, theirs = files(uri), files(twin)
    assert sorted(map(no_uuid, ours)) == sorted(map(no_uuid, theirs))
    ign = [p for p in theirs if p.endswith(".ign")]
    assert ours[report.written[0]] == theirs[ign[0]]
    assert_same(uri)
    assert_same(uri, 2)


def test_fragment_vacuum_matches_tiledb(uri, twin):
    for target in (uri, twin):
        tiledb_consolidate(target, {"sm.consolidation.timestamp_start": 2,
                                    "sm.consolidation.timestamp_end": 3})
    report = vacuum(uri)
    tiledb_vacuum(twin)
    assert sorted(map(no_uuid, files(uri))) == sorted(map(no_uuid, files(twin)))
    assert len([p for p in report.removed if p.startswith("__fragments/")]) == 2
    assert_same(uri)
    assert_same(uri, 1)


def test_nothing_to_vacuum(uri):
    before = files(uri)
    for mode in ("fragments", "fragment_meta", "commits", "array_meta"):
        assert vacuum(uri, mode=mode).removed == ()
    assert files(uri) == before


# -- dry run, lock, arguments -------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["commits", "fragment_meta", "array_meta"])
def test_dry_run_touches_nothing(uri, mode):
    before = {p: (data, os.stat(os.path.join(uri, p)).st_mtime_ns) for p, data in files(uri).items()}
    plan = consolidate(uri, mode=mode, dry_run=True)
    assert plan.dry_run and plan.created and plan.inputs
    after = {p: (data, os.stat(os.path.join(uri, p)).st_mtime_ns) for p, data in files(uri).items()}
    assert after == before and not os.path.exists(os.path.join(uri, LOCK_FILE))
    real = consolidate(uri, mode=mode)
    assert real.inputs == plan.inputs
    assert list(map(shape, real.created)) == list(map(shape, plan.created))


def test_second_maintenance_operation_is_refused(uri):
    with maintenance_lock(uri, "consolidate (fragments)"):
        with pytest.raises(ArrayLockedError, match=r"cannot vacuum.*consolidate \(fragments\) \(pid"):
            vacuum(uri)
        with pytest.raises(ArrayLockedError, match="cannot consolidate"):
            consolidate(uri, mode="commits")
        # Dry runs and readers need no lock.
        assert consolidate(uri, mode="commits", dry_run=True).created
        assert_same(uri)
    assert consolidate(uri, mode="commits").created  # released afterwards


def test_tiledb_ignores_the_lock_file(uri):
    consolidate(uri, mode="commits")
    assert os.path.exists(os.path.join(uri, LOCK_FILE))
    tiledb_consolidate(uri)
    tiledb_vacuum(uri)
    assert os.path.exists(os.path.join(uri, LOCK_FILE))
    assert_same(uri)


def test_bad_arguments(uri, tmp_path):
    with pytest.raises(ProgrammingError, match="unknown consolidation mode 'fragment'"):
        consolidate(uri, mode="fragment")
    with pytest.raises(ProgrammingError, match="unknown vacuum mode"):
        vacuum(uri, mode="everything")
    with pytest.raises(ProgrammingError, match="starts after it ends"):
        consolidate(uri, timestamp=(5, 1))
    with pytest.raises(ProgrammingError, match="pair"):
        consolidate(uri, timestamp=5)
    from tdbsql.errors import ArrayNotFoundError

    with pytest.raises(ArrayNotFoundError):
        vacuum(str(tmp_path / "missing"))
    with pytest.raises(ArrayNotFoundError):
        consolidate(str(tmp_path / "missing"), mode="commits")

