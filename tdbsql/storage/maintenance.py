"""Shared by consolidate and vacuum: which files exist, how TileDB names and writes them.

In: an array folder.  Out: listings of ``__commits`` / ``__meta`` / ``__fragment_meta`` with
parsed names, the write format version TileDB would use, and ``atomic_write`` -- every file
consolidation creates appears whole (written to a ``.tmp`` sibling, flushed, renamed), so a
reader listing the folder never meets half a ``.con``, ``.meta`` or ``.vac``.  The temporary
file lives in the array root as ``.tdbsql-<uuid>.tmp``: a dotted name in the root is never a
fragment for TileDB or tdbsql, whereas TileDB reads *every* file of ``__fragment_meta``.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass

from ..format.names import TimestampedName, parse_name
from . import vfs

COMMITS_DIR = "__commits"
FRAGMENTS_DIR = "__fragments"
META_DIR = "__meta"
FRAGMENT_META_DIR = "__fragment_meta"
# TileDB writes with the schema's version unless it predates back-compatible writes (v7).
BACK_COMPAT_WRITES_MIN_VERSION = 7
FORMAT_VERSION = 22


@dataclass(frozen=True)
class Listed:
    """A timestamped file of one folder: its name relative to the array and its parsed name."""

    relative: str  # e.g. "__commits/__1_1_<uuid>_22.wrt"
    parsed: TimestampedName

    @property
    def name(self) -> str:
        return self.relative.rsplit("/", 1)[-1]


def write_version(schema_version: int) -> int:
    """The format version TileDB writes new files of an array with (``write_version()``)."""
    return FORMAT_VERSION if schema_version < BACK_COMPAT_WRITES_MIN_VERSION else schema_version


def list_folder(path: str, folder: str, *extensions: str) -> list[Listed]:
    """Timestamped files of ``<path>/<folder>`` with one of ``extensions``, in name order."""
    base = os.path.join(path, folder) if folder else path
    found = []
    for name in vfs.list_dir(base):
        parsed = parse_name(name)
        if parsed is not None and parsed.ext in extensions and vfs.is_file(os.path.join(base, name)):
            found.append(Listed(f"{folder}/{name}" if folder else name, parsed))
    return found


def atomic_write(array_path: str, relative: str, data: bytes) -> None:
    """Create ``<array_path>/<relative>`` with ``data``; no reader ever sees it partly written."""
    path = os.path.join(array_path, relative)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = os.path.join(array_path, f".tdbsql-{uuid.uuid4().hex}.tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def remove_file(path: str) -> bool:
    """Remove a file if it is there; True if it was."""
    try:
        os.remove(path)
        return True
    except FileNotFoundError:
        return False


def remove_tree(path: str) -> bool:
    """Remove a fragment folder if it is there (files first, then the folder)."""
    if not os.path.isdir(path):
        return False
    for root, dirs, files in os.walk(path, topdown=False):
        for name in files:
            remove_file(os.path.join(root, name))
        for name in dirs:
            os.rmdir(os.path.join(root, name))
    os.rmdir(path)
    return True
