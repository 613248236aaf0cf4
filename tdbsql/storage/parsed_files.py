"""What was parsed from write-once files, kept per process.

TileDB writes schemas, fragment metadata and consolidated fragment metadata once, under unique
names, and never changes them: a query that opens an array again need not parse them again.
Entries are keyed by the file's identity (device, inode, size, modification time), so a file
rewritten in place -- by a tool, or damaged -- is parsed afresh, plus whatever else the parse
depended on (the key as a digest, never the key itself; a footer; the schema files).  A file
that cannot be stat'ed is never cached.  Each cache keeps its newest ``kept`` entries.
"""

from __future__ import annotations

import hashlib
import threading
from typing import Callable, Generic, TypeVar

from . import vfs

T = TypeVar("T")


def key_digest(key: bytes | None) -> bytes | None:
    return None if key is None else hashlib.sha256(key).digest()


class ParsedFiles(Generic[T]):
    """One kind of parsed file (schemas, fragment metadata, ...), at most ``kept`` of them."""

    def __init__(self, kept: int):
        self.kept = kept
        self._entries: dict[tuple, T] = {}
        self._lock = threading.Lock()

    def get(self, path: str, parse: Callable[[int | None], T], *depends) -> T:
        """``parse(size)``'s result for ``path`` as it is now and ``depends`` (hashable);
        ``size`` is the file's size as stat'ed (None if it cannot be), saving a second stat."""
        identity = vfs.file_identity(path)
        if identity is None:
            return parse(None)
        key = (path, identity, *depends)
        with self._lock:
            found = self._entries.get(key)
        if found is None:
            found = parse(identity[2])  # outside the lock: another thread may parse the same file too
            with self._lock:
                if len(self._entries) >= self.kept:
                    self._entries.pop(next(iter(self._entries)))
                self._entries[key] = found
        return found
