"""Directory listings served again while their directory is unchanged (``vfs.list_dir``):
kept only once the directory has settled, and never stale after a change."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

import tdbsql
from tdbsql.errors import CorruptArrayError
from tdbsql.storage import vfs

OLD = 1_600_000_000 * 10**9  # a modification time long past (ns)


def _settle(path) -> None:
    os.utime(path, ns=(OLD, OLD))


@pytest.fixture
def counted(monkeypatch):
    """The directories ``os.listdir`` read, in order."""
    listed = []
    real = os.listdir

    def listdir(path):
        listed.append(os.fspath(path))
        return real(path)

    monkeypatch.setattr(vfs.os, "listdir", listdir)
    return listed


def test_a_settled_directory_is_listed_once_until_it_changes(tmp_path, counted):
    (tmp_path / "b").write_bytes(b"")
    (tmp_path / "a").write_bytes(b"")
    _settle(tmp_path)
    assert vfs.list_dir(str(tmp_path)) == ["a", "b"]
    assert vfs.list_dir(str(tmp_path)) == ["a", "b"]
    assert counted == [str(tmp_path)]
    (tmp_path / "c").write_bytes(b"")  # stamped now: a new modification time
    assert vfs.list_dir(str(tmp_path)) == ["a", "b", "c"]
    assert len(counted) == 2
    got = vfs.list_dir(str(tmp_path))
    got.append("x")  # a caller's list is its own
    assert vfs.list_dir(str(tmp_path)) == ["a", "b", "c"]


def test_a_recently_changed_directory_is_listed_every_time(tmp_path, counted):
    """A change in the same clock tick as the listed state keeps the modification time: a
    listing of a directory changed less than ``SETTLED_NS`` ago is not kept."""
    (tmp_path / "a").write_bytes(b"")
    stamp = os.stat(tmp_path).st_mtime_ns
    assert time.time_ns() - stamp < vfs.SETTLED_NS
    assert vfs.list_dir(str(tmp_path)) == ["a"]
    (tmp_path / "b").write_bytes(b"")
    os.utime(tmp_path, ns=(stamp, stamp))  # the same tick as the listing's state
    assert vfs.list_dir(str(tmp_path)) == ["a", "b"]
    assert len(counted) == 2


def test_missing_directories_list_empty(tmp_path):
    assert vfs.list_dir(str(tmp_path / "none")) == []
    (tmp_path / "file").write_bytes(b"")
    assert vfs.list_dir(str(tmp_path / "file" / "below")) == []
    # a file where a folder belongs (a __commits file) is damage, not an empty folder
    with pytest.raises(CorruptArrayError, match="is a file, expected a folder"):
        vfs.list_dir(str(tmp_path / "file"))


def test_a_query_sees_a_fragment_written_after_a_settled_listing(tmp_path):
    path = str(tmp_path / "a")
    tdbsql.create(path, tdbsql.Schema([tdbsql.Dim("d", "int64", (0, 99), 10)],
                                      [tdbsql.Attr("v", "int64")], sparse=True))
    tdbsql.write(path, {"d": np.arange(5), "v": np.arange(5)}, timestamp=10)
    for root, dirs, _ in os.walk(path):
        for name in dirs + [""]:
            _settle(os.path.join(root, name))
    con = tdbsql.connect().register("a", path)
    assert con.sql("SELECT count(*) FROM a").fetchall() == [(5,)]
    tdbsql.write(path, {"d": np.arange(5, 8), "v": np.arange(3)}, timestamp=20)
    assert con.sql("SELECT count(*) FROM a").fetchall() == [(8,)]
