"""Shared by consolidate and vacuum: the modes, which files exist, how TileDB names and writes
them, and the report a consolidation returns.

In: an array folder.  Out: listings of ``__commits`` / ``__meta`` / ``__fragment_meta`` with
parsed names, the write format version TileDB would use.  (The ``.con`` / ``.ign`` files are
read by ``commit_files``, as for reads.)  Every file consolidation and vacuum create appears whole
(``vfs.atomic_write``), so a reader listing the folder never meets half a ``.con``, ``.meta``,
``.vac`` or ``.ign``.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from dataclasses import dataclass

from ..errors import ProgrammingError
from ..format.fragment_metadata import WRITE_VERSION
from ..format.names import TimestampedName, new_name, parse_name
from . import vfs

# TileDB's sm.consolidation.mode / sm.vacuum.mode values, shared by both operations.
MODES = ("fragments", "fragment_meta", "commits", "array_meta")
# TileDB writes with the schema's version unless it predates back-compatible writes (v7).
BACK_COMPAT_WRITES_MIN_VERSION = 7


def check_mode(mode: str, operation: str) -> None:
    """Refuse a mode TileDB does not have (``operation``: "consolidation" or "vacuum")."""
    if mode not in MODES:
        raise ProgrammingError(f"unknown {operation} mode {mode!r}; use one of {', '.join(MODES)}")


@dataclass(frozen=True)
class ConsolidationReport:
    """What a consolidation merged (``inputs``) and wrote (``created``), array-relative.

    With ``dry_run`` nothing was written and ``created`` shows the names it would use (the
    uuid part differs in a real run).  ``reason`` says why nothing was (or would be) done.
    """

    path: str
    mode: str
    dry_run: bool
    inputs: tuple[str, ...] = ()
    created: tuple[str, ...] = ()
    reason: str = ""

    @property
    def consolidated(self) -> bool:
        return bool(self.created)

    def skipped(self, reason: str) -> "ConsolidationReport":
        """The same inputs, nothing created, and why."""
        return dataclasses.replace(self, created=(), reason=reason)

    def creating(self, *relative: str) -> "ConsolidationReport":
        return dataclasses.replace(self, created=self.created + relative)


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
    return WRITE_VERSION if schema_version < BACK_COMPAT_WRITES_MIN_VERSION else schema_version


def list_folder(path: str, folder: str, *extensions: str) -> list[Listed]:
    """Timestamped files of ``<path>/<folder>`` with one of ``extensions``, in name order."""
    base = os.path.join(path, folder) if folder else path
    found = []
    for name in vfs.list_dir(base):
        parsed = parse_name(name)
        if parsed is not None and parsed.ext in extensions and vfs.is_file(os.path.join(base, name)):
            found.append(Listed(f"{folder}/{name}" if folder else name, parsed))
    return found


def span_name(uris, version: int | None, ext: str) -> str:
    """A fresh name covering ``uris`` (in listing order): TileDB takes the first one's start
    and the last one's end; where names sorted as strings make that an invalid range, the
    smallest start and largest end are taken instead."""
    stamps = [parse_name(u) for u in uris]
    t1, t2 = stamps[0].t1, stamps[-1].t2
    if t1 > t2:
        t1, t2 = min(s.t1 for s in stamps), max(s.t2 for s in stamps)
    return new_name(t1, t2, version, ext)


def remove(path: str) -> None:
    """Remove a file or a fragment folder if it is there."""
    if os.path.isdir(path):
        shutil.rmtree(path)
    else:
        try:
            os.remove(path)
        except FileNotFoundError:
            pass
