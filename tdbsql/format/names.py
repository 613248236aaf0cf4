"""Timestamped names (spec: timestamped_name.md, array_file_hierarchy.md).

In: the name of a file or folder of an array (or a path / URI ending in one), e.g.
``__1_1_5ab1..._22.wrt``.  Out: a ``TimestampedName`` with the timestamp range, the uuid, the
format version (if the name carries one) and the extension.

Three layouts exist:

* ``__uuid_t1`` and ``__uuid_t1_t2`` (format versions 1-2, TileDB 1.4-1.5),
* ``__t1_t2_uuid`` (versions 3-4; also every schema and array-metadata file, which never carry
  a version),
* ``__t1_t2_uuid_v`` (version 5 and later).

``new_name`` makes a fresh name the way TileDB writes one.

This module is the one home of the naming rules of an array's files: the folder names, the
extensions of commit and maintenance files (``WRITE_EXT`` ... ``META_EXT``; ``MARKER_EXTS``
commit a fragment, ``CONDITION_EXTS`` hold a condition tile), where a file of a format version
lives (``array_relative``, ``commit_marker``), which fragment a marker commits
(``marked_fragment``) and a name's extension (``extension``).  What ``.con`` / ``.ign`` / ``.vac``
files hold is ``commits``; reading an array's ``.con`` / ``.ign`` set is
``tdbsql.storage.commit_files``.
"""

from __future__ import annotations

import re
import time
import uuid as _uuid
from dataclasses import dataclass

from ..errors import CorruptArrayError

# The extensions of commit and maintenance files (TileDB's constants::*_suffix).
WRITE_EXT = ".wrt"  # commits the fragment of its name (format 12+, in __commits)
OK_EXT = ".ok"  # the same before format 12, in the array root
DELETE_EXT = ".del"  # a delete commit: one condition tile
UPDATE_EXT = ".upd"  # an update commit: one condition tile
CONSOLIDATED_EXT = ".con"  # consolidated commits: commit uris (+ condition tiles)
IGNORE_EXT = ".ign"  # commit uris of .con files that no longer count
VACUUM_EXT = ".vac"  # what a consolidation made redundant (fragments, metadata files)
META_EXT = ".meta"  # consolidated fragment metadata
MARKER_EXTS = (WRITE_EXT, OK_EXT)  # commit markers of fragments
CONDITION_EXTS = (DELETE_EXT, UPDATE_EXT)  # commits holding a condition tile
# Every extension TileDB gives a timestamped name ("" is a fragment folder, schema or metadata).
KNOWN_EXTENSIONS = frozenset({"", *MARKER_EXTS, *CONDITION_EXTS, CONSOLIDATED_EXT, IGNORE_EXT,
                              VACUUM_EXT, META_EXT, ".tdb"})

# Layout ids (TileDB calls them fragment name versions ONE, TWO, THREE).
# The folders of an array (array_file_hierarchy.md).
SCHEMA_DIR = "__schema"
COMMITS_DIR = "__commits"
FRAGMENTS_DIR = "__fragments"
FRAGMENT_META_DIR = "__fragment_meta"
META_DIR = "__meta"
LABELS_DIR = "__labels"
GROUP_DETAILS_DIR = "__group"  # a group's member lists (group_file_hierarchy.md)
ARRAY_DIRS = (COMMITS_DIR, FRAGMENT_META_DIR, FRAGMENTS_DIR, LABELS_DIR, META_DIR, SCHEMA_DIR)
# From this format version on, fragments live in __fragments and their commit markers and
# vacuum files in __commits (consolidated fragment metadata in __fragment_meta); older
# formats keep them all in the array root.
FOLDERS_MIN_VERSION = 12

LAYOUT_UUID_FIRST = 1  # __uuid_t1[_t2]
LAYOUT_NO_VERSION = 2  # __t1_t2_uuid
LAYOUT_VERSIONED = 3  # __t1_t2_uuid_v

_UUID = r"[0-9a-fA-F]{32}"
_NUM = r"[0-9]{1,20}"
_VERSIONED = re.compile(rf"__({_NUM})_({_NUM})_({_UUID})_({_NUM})")
_NO_VERSION = re.compile(rf"__({_NUM})_({_NUM})_({_UUID})")
_UUID_FIRST = re.compile(rf"__({_UUID})_({_NUM})(?:_({_NUM}))?")

_UINT64_MAX = (1 << 64) - 1


@dataclass(frozen=True)
class TimestampedName:
    """A parsed ``__t1_t2_uuid[_v][.ext]`` name; ``ext`` keeps its dot (``".wrt"``) or is ``""``."""

    t1: int
    t2: int
    uuid: str
    version: int | None
    ext: str
    layout: int = LAYOUT_VERSIONED

    @property
    def stem(self) -> str:
        """The name without its extension (the fragment folder name for a ``.wrt``)."""
        if self.layout == LAYOUT_UUID_FIRST:
            tail = f"_{self.t2}" if self.t2 != self.t1 else ""
            return f"__{self.uuid}_{self.t1}{tail}"
        base = f"__{self.t1}_{self.t2}_{self.uuid}"
        return base if self.version is None else f"{base}_{self.version}"

    @property
    def filename(self) -> str:
        return self.stem + self.ext

    @property
    def timestamp_range(self) -> tuple[int, int]:
        return (self.t1, self.t2)

    @property
    def format_version(self) -> int:
        """The format version TileDB infers from the name (2 for ``__uuid_t``, 4 for
        ``__t1_t2_uuid``), as it does to decide how to read a fragment."""
        if self.version is not None:
            return self.version
        return 2 if self.layout == LAYOUT_UUID_FIRST else 4

    def __str__(self) -> str:
        return self.filename


def array_relative(folder: str, name: str, version: int) -> str:
    """Where a fragment folder or commit file ``name`` of format ``version`` lives, relative to
    the array: in ``folder`` from format 12 on, in the array root before."""
    return f"{folder}/{name}" if version >= FOLDERS_MIN_VERSION else name


def commit_marker(fragment: str, version: int) -> str:
    """The array-relative file that commits ``fragment``: ``__commits/<name>.wrt`` from
    format 12 on, ``<name>.ok`` in the array root before."""
    ext = WRITE_EXT if version >= FOLDERS_MIN_VERSION else OK_EXT
    return array_relative(COMMITS_DIR, fragment + ext, version)


def marked_fragment(marker: str) -> str | None:
    """The fragment folder name a commit marker commits (``<name>.wrt`` / ``<name>.ok``, a
    file name or an array-relative uri such as a ``.con`` line); None for any other file."""
    last = marker.rsplit("/", 1)[-1]
    stem, ext = _split_extension(last)
    return stem if ext in MARKER_EXTS else None


def extension(name: str) -> str:
    """The last extension of the file a name or uri ends in, with its dot (``".wrt"``), or
    ``""``: ``extension(n) == ".wrt"`` exactly when ``n.endswith(".wrt")``."""
    return _split_extension(name.rsplit("/", 1)[-1])[1]


def base_name(path: str) -> str:
    """The last path part of a path or URI (trailing slashes ignored)."""
    return path.rstrip("/").rsplit("/", 1)[-1]


def parse_name(name: str, *, strict: bool = False) -> TimestampedName | None:
    """Parse a timestamped name; junk gives ``None`` (or ``CorruptArrayError`` if ``strict``)."""
    last = base_name(name)
    stem, ext = _split_extension(last)
    parsed = _parse_stem(stem, ext) if ext in KNOWN_EXTENSIONS else None
    if parsed is None and strict:
        raise CorruptArrayError(f"{last!r} is not a timestamped name", name)
    return parsed


def _split_extension(last: str) -> tuple[str, str]:
    # TileDB strips only the last extension; a dot left in the stem makes the name junk.
    dot = last.rfind(".")
    return (last, "") if dot < 0 else (last[:dot], last[dot:])


def _parse_stem(stem: str, ext: str) -> TimestampedName | None:
    m = _VERSIONED.fullmatch(stem)
    if m:
        t1, t2, uid, v = m.groups()
        return _checked(int(t1), int(t2), uid, int(v), ext, LAYOUT_VERSIONED)
    m = _NO_VERSION.fullmatch(stem)
    if m:
        t1, t2, uid = m.groups()
        return _checked(int(t1), int(t2), uid, None, ext, LAYOUT_NO_VERSION)
    m = _UUID_FIRST.fullmatch(stem)
    if m:
        uid, t1, t2 = m.groups()
        first = int(t1)
        return _checked(first, first if t2 is None else int(t2), uid, None, ext, LAYOUT_UUID_FIRST)
    return None


def _checked(t1: int, t2: int, uid: str, version, ext: str, layout: int) -> TimestampedName | None:
    # TileDB refuses a start timestamp after the end one; numbers must fit uint64/uint32.
    if t1 > t2 or t2 > _UINT64_MAX or (version is not None and version > 0xFFFFFFFF):
        return None
    return TimestampedName(t1, t2, uid, version, ext, layout)


def now_ms() -> int:
    """Milliseconds since the epoch, the unit of every TileDB timestamp."""
    return time.time_ns() // 1_000_000


def new_name(t1: int, t2: int, version: int | None = 22, ext: str = "") -> str:
    """A fresh ``__t1_t2_<uuid4 hex>[_version][ext]``; ``t1 == t2 == 0`` means now, as in TileDB."""
    if t1 > t2:
        raise ValueError(f"start timestamp {t1} is after end timestamp {t2}")
    if t1 == 0 and t2 == 0:
        t1 = t2 = now_ms()
    base = f"__{t1}_{t2}_{_uuid.uuid4().hex}"
    return (base if version is None else f"{base}_{version}") + ext


def consolidated_name(first: TimestampedName, last: TimestampedName, version: int | None = 22,
                      ext: str = "") -> str:
    """Name of a file covering ``first``..``last`` (consolidated fragment, ``.con``, ``.ign``)."""
    return new_name(first.t1, last.t2, version, ext)
