"""Atomicity and concurrency: a writer killed at any moment leaves a readable array with no
partial fragment visible; several writer processes at once lose no cell."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

tiledb = pytest.importorskip("tiledb")

import tdbsql  # noqa: E402
from tdbsql import schema as S  # noqa: E402
from tdbsql.storage.writer import create  # noqa: E402

WRITER = """
import sys, numpy as np
from tdbsql.storage.writer import write
path, first, count, batch = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
for start in range(first, first + count, batch):
    xs = np.arange(start, start + batch)
    write(path, {"x": xs, "v": xs.astype(np.float64), "s": [f"s{x}" for x in xs]})
"""


def _schema():
    return S.Schema([S.Dim("x", "int64", (0, 10**6), 1000)],
                    [S.Attr("v", "float64", filters=[S.Zstd(3)]), S.Attr("s", "utf8")],
                    capacity=50)


def _spawn(path, first, count, batch):
    return subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(first), str(count),
                             str(batch)], stderr=subprocess.PIPE)


def _check_readable(path):
    """Both readers agree and every visible fragment is whole (batches of 100 cells)."""
    with tiledb.open(str(path)) as A:
        xs = A.multi_index[0:10**6]["x"]
    table = tdbsql.query("SELECT x, v, s FROM array", str(path))
    assert sorted(table.column("x").to_pylist()) == sorted(xs.tolist())
    assert len(xs) % 100 == 0, f"a partial fragment is visible ({len(xs)} cells)"
    assert table.column("v").to_pylist() == [float(x) for x in table.column("x").to_pylist()]
    return len(xs)


def test_killed_writers_leave_no_partial_fragment(tmp_path):
    path = tmp_path / "a"
    create(str(path), _schema())
    rng = np.random.default_rng(0)
    seen = 0
    for round_idx in range(6):
        commits = path / "__commits"
        base = len(os.listdir(commits))
        target = base + int(rng.integers(1, 4))
        proc = _spawn(path, round_idx * 10**5, 2000, 100)
        deadline = time.time() + 60
        while len(os.listdir(commits)) < target and time.time() < deadline and proc.poll() is None:
            time.sleep(0.005)
        time.sleep(float(rng.uniform(0, 0.03)))  # then somewhere inside the next write
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        seen = _check_readable(path)
    assert seen > 0  # some writes did commit


def test_concurrent_writers_lose_nothing(tmp_path):
    path = tmp_path / "a"
    create(str(path), _schema())
    procs = [_spawn(path, i * 10**4, 1000, 100) for i in range(4)]
    for proc in procs:
        assert proc.wait(timeout=120) == 0, proc.stderr.read().decode()
    with tiledb.open(str(path)) as A:
        xs = A.multi_index[0:10**6]["x"]
    want = sorted(i * 10**4 + k for i in range(4) for k in range(1000))
    assert sorted(xs.tolist()) == want
    got = tdbsql.query("SELECT count(*) AS n FROM array", str(path)).column("n").to_pylist()
    assert got == [4000]


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc to name fsync'ed fds")
def test_commit_marker_is_durable_only_after_the_data(tmp_path, monkeypatch):
    """Power-loss safety: every data file and the fragment's folder are fsync'ed before the
    ``.wrt`` exists, and the ``.wrt`` is fsync'ed with ``__commits``."""
    path = tmp_path / "a"
    create(str(path), _schema())
    events = []
    real_fsync = os.fsync

    def fsync(fd):
        events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        return real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    xs = np.arange(100)
    tdbsql.write(str(path), {"x": xs, "v": xs.astype(np.float64), "s": [f"s{x}" for x in xs]})
    monkeypatch.undo()
    (name,) = os.listdir(path / "__fragments")
    fragment = str(path / "__fragments" / name)
    synced = [p for _, p in events]
    marker = str(path / "__commits" / f"{name}.wrt")
    assert marker in synced
    at_marker = synced.index(marker)
    before = synced[:at_marker]
    for file in os.listdir(fragment):  # a0.tdb, a1.tdb, a1_var.tdb, d0.tdb, metadata
        assert os.path.join(fragment, file) in before, file
    assert fragment in before and str(path / "__fragments") in before
    assert str(path / "__commits") in synced[at_marker + 1:]
