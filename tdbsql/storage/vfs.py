"""Local files: the only code that touches the file system for reading, and ``atomic_write``,
the one way whole files (schemas, metadata, commits, consolidation results) are created;
``write_durable`` / ``fsync_dir`` make a fragment's files and its ``.wrt`` marker durable.

Errors become tdbsql errors naming the path; ranged reads validate offsets against the file size
so a corrupt offset cannot trigger a huge read.
"""

from __future__ import annotations

import os
import re
import stat
import threading
import time
import uuid
from contextlib import contextmanager
from urllib.parse import urlparse

from ..errors import ArrayNotFoundError, CorruptArrayError, UnsupportedFormatError


# A listing is kept only if its directory was last modified this long before it was taken
SETTLED_NS = 2_000_000_000
_LISTINGS_KEPT = 4096
_listings: dict[str, tuple[tuple, tuple[str, ...]]] = {}  # path -> (stamp, names)
_listings_lock = threading.Lock()


def local_path(path) -> str:
    """The absolute local path ``path`` names: a path, or a ``file://`` URI as TileDB writes
    them.  Another scheme (``s3://``, ``gcs://``, ...) is refused by name: tdbsql reads and
    writes arrays on the local file system only."""
    text = os.fspath(path)
    scheme = _SCHEME.match(text)
    if scheme is None:
        return os.path.abspath(text)
    if scheme.group(1).lower() == "file":
        parsed = urlparse(text)
        if parsed.netloc not in ("", "localhost"):  # file://data/a: no local path, as TileDB
            raise ArrayNotFoundError(f"{text!r} is not a valid file:// URI (it names the host "
                                     f"{parsed.netloc!r}); write file:///absolute/path")
        return os.path.abspath(parsed.path)  # as written: TileDB does not decode %xx
    raise UnsupportedFormatError(f"{text!r}: {scheme.group(1)}:// storage is not supported; "
                                 "tdbsql reads and writes arrays on the local file system")


_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")


def list_dir(path: str) -> list[str]:
    """Names in a directory, sorted (empty if it does not exist).

    Every query lists an array's folders to see the writes made since the last one, and a
    stat costs a fraction of a listing (2 against 8-14 us here).  So a listing is kept with
    its directory's device, inode and modification time, and served again while a stat
    shows them unchanged.  Only the listing of a directory last modified ``SETTLED_NS``
    before it was taken is kept: file systems stamp a modification by a coarse clock (a few
    ms here, seconds on some network file systems), so a change made in the same tick as the
    state listed would leave the time unchanged.  A change after a settled listing is
    stamped later than it, so it is always seen (the racy-entry rule of git's index)."""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return []
    stamp = (st.st_dev, st.st_ino, st.st_mtime_ns)
    found = _listings.get(path)
    if found is not None and found[0] == stamp:
        return list(found[1])
    try:
        names = sorted(os.listdir(path))
    except FileNotFoundError:
        return []
    except NotADirectoryError:  # e.g. a file named __commits: not an empty folder
        raise CorruptArrayError("is a file, expected a folder", path) from None
    if time.time_ns() - st.st_mtime_ns > SETTLED_NS:  # stat'ed before listing: never newer
        with _listings_lock:
            if len(_listings) >= _LISTINGS_KEPT:
                _listings.pop(next(iter(_listings)))
            _listings[path] = (stamp, tuple(names))
    return names


def is_dir(path: str) -> bool:
    return os.path.isdir(path)


def is_file(path: str) -> bool:
    return os.path.isfile(path)


def file_size(path: str) -> int:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise CorruptArrayError("file is missing", path) from None
    except OSError as exc:
        raise CorruptArrayError(f"cannot stat ({exc.strerror})", path) from None
    if stat.S_ISDIR(st.st_mode):
        raise CorruptArrayError("is a directory, expected a file", path)
    return st.st_size


def file_identity(path: str) -> tuple[int, int, int, int] | None:
    """(device, inode, size, modification time in ns) of a file, None if it cannot be
    stat'ed or is a directory: what tells a rewritten file from the one read before."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if stat.S_ISDIR(st.st_mode):  # no file: its read says so
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def read_file(path: str) -> bytes:
    with _reading(path), open(path, "rb") as f:
        return f.read()


def read_range(path: str, offset: int, size: int) -> bytes:
    """``size`` bytes at ``offset``; a range past the end of the file is a CorruptArrayError."""
    with _reading(path), open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        end = f.tell()
        if offset < 0 or size < 0 or offset + size > end:
            raise CorruptArrayError(
                f"byte range {offset}..{offset + size} lies outside the file ({end} bytes)", path
            )
        f.seek(offset)
        return f.read(size)


@contextmanager
def _reading(path: str):
    """A read of ``path`` whose OS errors become CorruptArrayErrors naming it."""
    try:
        yield
    except FileNotFoundError:
        raise CorruptArrayError("file is missing", path) from None
    except IsADirectoryError:
        raise CorruptArrayError("is a directory, expected a file", path) from None
    except OSError as exc:
        raise CorruptArrayError(f"cannot read ({exc.strerror})", path) from None


def atomic_write(array_path: str, relative: str, data: bytes) -> None:
    """Create (or replace) ``<array_path>/<relative>`` with ``data``, durably and atomically.

    The bytes go to a temporary file, are fsync'ed, and the file is renamed into place: a reader
    listing the folder sees the whole file or none, and after a crash a visible file is not
    empty or truncated; the folder is fsync'ed after the rename, so the file stays.  The temporary file lives in the array root as ``.tdbsql-<uuid>.tmp``:
    a dotted name in the root is never a fragment for TileDB or tdbsql, whereas TileDB takes
    every file of ``__fragment_meta`` (and the names in ``__schema``, ``__meta``,
    ``__commits``) for its own.  A failed write removes its temporary file.
    """
    path = os.path.join(array_path, relative)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = os.path.join(array_path, f".tdbsql-{uuid.uuid4().hex}.tmp")
    try:
        write_synced(tmp, data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.remove(tmp)
        except FileNotFoundError:
            pass
        raise
    fsync_dir(os.path.dirname(path))  # the rename itself survives a power loss


def write_durable(path: str, data: bytes) -> None:
    """Create (or replace) ``path`` with ``data`` in place and make it durable: the bytes are
    fsync'ed, then the folder holding it, so after a power loss the file is there, whole.
    Not atomic (a reader may see it half written): for files whose appearance is itself the
    event, e.g. an empty ``.wrt`` commit marker, or files no reader looks at yet."""
    write_synced(path, data)
    fsync_dir(os.path.dirname(path))


def write_synced(path: str, data: bytes) -> None:
    """Create (or replace) ``path`` with ``data`` and fsync the file (not its folder: the
    caller does that once for all the files it writes, e.g. a fragment at its commit)."""
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def fsync_file(path: str) -> None:
    """Make a file written earlier (and closed) durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(path: str) -> None:
    """Make the entries of a folder (files created, renamed or removed in it) durable.  A no-op
    where folders cannot be opened (Windows), which persists entries with the files."""
    try:
        fd = os.open(path or ".", os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except (PermissionError, IsADirectoryError):
        return
    try:
        os.fsync(fd)
    except OSError:  # some file systems refuse fsync on a directory: nothing more to do
        pass
    finally:
        os.close(fd)


def require_dir(path: str) -> None:
    if not os.path.exists(path):
        raise ArrayNotFoundError(f"no such array: {path!r} does not exist")
    if not os.path.isdir(path):
        raise ArrayNotFoundError(f"not a TileDB array: {path!r} is not a directory")
