"""One maintenance operation at a time per array: an advisory lock for consolidate and vacuum.

In: an array folder and the name of the operation.  Out: a context manager holding an exclusive
``fcntl.flock`` on ``<array>/.tdbsql.lock`` for its duration, or ``ArrayLockedError`` naming
the holder (pid and operation) when another process holds it.

Why a lock and not a protocol: the harmful interleavings are between two *writers of
maintenance files* -- vacuum deleting fragments a running consolidation is still reading, or
two consolidations merging the same fragments into two fragments (duplicated cells in arrays
that allow duplicates).  Both are avoided only if the second operation does not start, so the
second one is refused at once with a message saying who holds the array.  Readers and ordinary
writes never take the lock: consolidation and vacuum order their files so that a reader that
lists the array at any moment sees a consistent set (see ``consolidate`` and ``vacuum``).

The lock file stays in the array (removing it would race with a process about to lock it).  Its
name contains a dot, so TileDB never takes it for a fragment, and neither does tdbsql.  flock
locks die with their process: a crashed consolidation never leaves the array locked.
"""

from __future__ import annotations

import fcntl
import os
from contextlib import contextmanager
from typing import Iterator

from ..errors import ArrayLockedError

LOCK_FILE = ".tdbsql.lock"


@contextmanager
def maintenance_lock(path: str, operation: str) -> Iterator[None]:
    """Hold the array's maintenance lock while the block runs (refuse if it is taken)."""
    lock_path = os.path.join(path, LOCK_FILE)
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            raise ArrayLockedError(
                f"{path}: cannot {operation}: {holder} is running on this array; "
                f"retry when it has finished (lock file {LOCK_FILE})") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()} {operation}\n".encode(), 0)
        try:
            yield
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _holder(fd: int) -> str:
    """'consolidate (pid 123)' from the lock file, or a neutral phrase if it is unreadable."""
    try:
        text = os.pread(fd, 200, 0).decode("utf-8", "replace").split()
    except OSError:
        text = []
    if len(text) >= 2 and text[0].isdigit():
        return f"{' '.join(text[1:])} (pid {text[0]})"
    return "another consolidate or vacuum"


__all__ = ["ArrayLockedError", "LOCK_FILE", "maintenance_lock"]
