"""An array directory at a timestamp window: which schemas, fragments, deletes and consolidated
fragment metadata files count (spec: array_file_hierarchy.md; rules of TileDB's array directory).

In: the path of an array folder and a window ``(t_start, t_end)`` in ms.  Out: an
``ArrayDirectory``; ``visible_fragments(full_overlap_only)`` gives the fragments a read uses.

- A fragment is committed by ``__commits/<name>.wrt`` (format 12+), by an entry ``<name>.wrt``
  of a consolidated commits file ``.con`` that no ``.ign`` file lists, by ``<name>.ok`` in the
  root (formats 5-11, also as an ``.ok`` entry of a ``.con``), or -- before format 5 -- by the
  presence of its ``__fragment_metadata.tdb``.  Anything else is invisible.
- A fragment counts when its timestamp range lies inside the window; for sparse arrays a
  fragment of format 15+ counts when it merely overlaps (consolidated fragments then carry
  per-cell timestamps the reader filters).  Dense arrays use full overlap only.
- A vacuum file ``.vac`` that counts by the same rule hides the fragments it lists (they were
  merged into the consolidated fragment of the same name).
- Fragments sort by their first timestamp; ties keep the listing order (root, then ``.con``
  entries by name, then ``__commits``), as TileDB's sort of a short list does.
- Delete commits ``.del`` (in ``__commits`` or embedded in a ``.con``; ``.upd`` only in
  ``__commits``) count when their timestamp range lies inside the window; they sort by time.
- The schema in force is the last ``__schema/`` file, in name order, whose end timestamp is
  <= ``t_end``; if none, the first schema (the legacy ``__array_schema.tdb`` comes first).
  Names sort as strings, not by timestamp: with timestamps of different digit counts the
  "latest" schema is the last one by name, exactly as TileDB picks it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import ArrayNotFoundError
from ..format.commits import parse_vacuum_file
from ..format.names import (
    ARRAY_DIRS, COMMITS_DIR, CONDITION_EXTS, DELETE_EXT, FRAGMENT_META_DIR, FRAGMENTS_DIR,
    META_EXT, OK_EXT, SCHEMA_DIR, UPDATE_EXT, VACUUM_EXT, WRITE_EXT, extension,
    marked_fragment, parse_name,
)
from . import vfs
from .commit_files import CommitFiles, read_commit_files

UINT64_MAX = 2**64 - 1
CONSOLIDATION_WITH_TIMESTAMPS_MIN_VERSION = 15
LEGACY_SCHEMA = "__array_schema.tdb"
FRAGMENT_METADATA_FILE = "__fragment_metadata.tdb"
# Folders of the array root that are never fragments.
_RESERVED = frozenset({*ARRAY_DIRS, "__enumerations"})


@dataclass(frozen=True)
class FragmentEntry:
    name: str  # folder name: __t1_t2_uuid_v (or a legacy layout)
    path: str
    timestamp_range: tuple[int, int]
    version: int  # from the name: 2 for __uuid_t, 4 for __t1_t2_uuid


@dataclass(frozen=True)
class VacuumEntry:
    name: str
    timestamp_range: tuple[int, int]
    version: int
    hides: frozenset[str]  # fragment folder names it lists


@dataclass(frozen=True)
class DeleteEntry:
    marker: str  # "__commits/<name>.del", as TileDB names the condition
    timestamp: int  # the first timestamp of the name, TileDB's condition timestamp
    data: bytes  # the file holding the condition tile
    offset: int  # where the tile starts in ``data`` (non-zero inside a .con)
    where: str
    is_update: bool = False

    @property
    def name(self) -> str:
        return self.marker.rsplit("/", 1)[-1]


@dataclass(frozen=True)
class SchemaEntry:
    name: str
    path: str
    timestamp_range: tuple[int, int]  # (-1, -1) for the legacy __array_schema.tdb

    @property
    def timestamp(self) -> int:
        return self.timestamp_range[1]


@dataclass(frozen=True)
class ArrayDirectory:
    path: str
    window: tuple[int, int]
    schemas: tuple[SchemaEntry, ...]  # legacy file first, then by name
    committed: tuple[FragmentEntry, ...]  # every committed fragment, in listing order
    vacuum_files: tuple[VacuumEntry, ...]
    deletes: tuple[DeleteEntry, ...]  # in the window, sorted by timestamp
    fragment_meta_files: tuple[str, ...]  # consolidated fragment metadata (.meta) paths
    # commit uris ("__commits/<name>.wrt", "<name>.ok", ...) some .con lists and no .ign hides
    consolidated: frozenset[str] = frozenset()

    @property
    def latest_schema(self) -> SchemaEntry:
        return latest_schema(self.schemas, self.window[1])

    def visible_fragments(self, full_overlap_only: bool) -> tuple[FragmentEntry, ...]:
        """Fragments a read at the window uses (``full_overlap_only``: dense arrays)."""
        hidden: set[str] = set()
        for vac in self.vacuum_files:
            if self._counts(vac.timestamp_range, vac.version, full_overlap_only):
                hidden |= vac.hides
        keep = [e for e in self.committed if e.name not in hidden
                and self._counts(e.timestamp_range, e.version, full_overlap_only)]
        keep.sort(key=lambda e: e.timestamp_range[0])  # stable: ties keep listing order
        return tuple(keep)

    def _counts(self, rng: tuple[int, int], version: int, full_overlap_only: bool) -> bool:
        lo, hi = self.window
        if not full_overlap_only and version >= CONSOLIDATION_WITH_TIMESTAMPS_MIN_VERSION:
            return rng[0] <= hi and lo <= rng[1]
        return rng[0] >= lo and rng[1] <= hi


def latest_schema(schemas: Sequence[SchemaEntry], t_end: int) -> SchemaEntry:
    """The schema in force at ``t_end`` among ``schemas`` (as ``require_array`` lists them):
    the last ``__schema/`` file by name whose end timestamp is <= ``t_end``, else the first.
    Needs only the ``__schema`` listing, not the whole array's."""
    chosen = None
    for entry in schemas:
        if entry.name != LEGACY_SCHEMA and entry.timestamp_range[1] <= t_end:
            chosen = entry
    return chosen or schemas[0]


def list_array(path: str, window: tuple[int, int] = (0, UINT64_MAX),
               schemas: Sequence[SchemaEntry] | None = None) -> ArrayDirectory:
    """The whole directory at ``window``.  ``schemas``: the array's schema files as
    ``require_array`` listed them (then the array is known to exist and ``__schema`` is not
    listed again)."""
    path = os.path.abspath(path)
    if schemas is None:
        schemas = require_array(path)
    root = vfs.list_dir(path)
    commits = vfs.list_dir(os.path.join(path, COMMITS_DIR))
    files = read_commit_files(path, commits)
    consolidated = files.consolidated
    con_deletes = _embedded_deletes(path, files, window)
    legacy, legacy_vac = _root_fragments(path, root, consolidated)
    fragments, vacuums, dir_deletes = _commit_dir(path, commits, consolidated, window)
    deletes = sorted(con_deletes + dir_deletes, key=lambda d: d.timestamp)
    meta_files = [os.path.join(path, n) for n in root if extension(n) == META_EXT]
    meta_dir = os.path.join(path, FRAGMENT_META_DIR)
    meta_files += [os.path.join(meta_dir, n) for n in vfs.list_dir(meta_dir)
                   if extension(n) == META_EXT]
    return ArrayDirectory(path, window, tuple(schemas), tuple(legacy + fragments),
                          tuple(legacy_vac + vacuums), tuple(deletes), tuple(meta_files),
                          frozenset(consolidated))


def require_array(path: str) -> list[SchemaEntry]:
    """The schema files of the array at ``path``; a clear ArrayNotFoundError when it is none.
    Lists ``__schema`` only, so a caller that just needs the check does not list the array."""
    vfs.require_dir(path)
    schemas = _list_schemas(path)
    if not schemas:
        from .group import is_group

        if is_group(path):
            raise ArrayNotFoundError(f"{path!r} is a TileDB group, not an array: "
                                     "`tdbsql group PATH` lists its arrays, and "
                                     "tdbsql.query(sql, PATH) or con.register(name, PATH) "
                                     "makes them tables")
        raise ArrayNotFoundError(f"not a TileDB array: {path!r} has no array schema")
    return schemas


def _list_schemas(path: str) -> list[SchemaEntry]:
    entries = []
    schema_dir = os.path.join(path, SCHEMA_DIR)
    for name in vfs.list_dir(schema_dir):
        full = os.path.join(schema_dir, name)
        parsed = parse_name(name) if name.startswith("__") else None
        if parsed is not None and parsed.ext == "" and vfs.is_file(full):
            entries.append(SchemaEntry(name, full, parsed.timestamp_range))
    # TileDB lists a folder in byte order of the names and keeps that order here (so a
    # schema stamped 25 sorts after one stamped 1700000000000).
    entries.sort(key=lambda s: s.name)
    legacy = os.path.join(path, LEGACY_SCHEMA)
    if vfs.is_file(legacy):
        entries.insert(0, SchemaEntry(LEGACY_SCHEMA, legacy, (-1, -1)))
    return entries


def _inside(rng: tuple[int, int], window: tuple[int, int]) -> bool:
    return rng[0] >= window[0] and rng[1] <= window[1]


def _embedded_deletes(path: str, files: CommitFiles, window) -> list[DeleteEntry]:
    """The delete commits ``.con`` files embed whose range lies in ``window`` (TileDB takes
    them whether or not an ``.ign`` file lists them)."""
    deletes: list[DeleteEntry] = []
    for con in files.con_files:
        full = os.path.join(path, con)
        for entry in files.con_entries[con]:
            parsed = entry.name
            if entry.ext == DELETE_EXT and parsed is not None and _inside(parsed.timestamp_range, window):
                deletes.append(DeleteEntry(entry.uri, parsed.t1, files.con_data[con],
                                           entry.tile_offset, full))
    return deletes


def _root_fragments(path: str, root: list[str], consolidated: set[str]):
    """Fragments of formats < 12 (in the array root) and the root's vacuum files."""
    oks = {marked_fragment(n) for n in root if extension(n) == OK_EXT}
    found, vacuums = [], []
    for name in root:
        if extension(name) == VACUUM_EXT:
            vac = _vacuum_entry(path, os.path.join(path, name), name)
            if vac is not None:
                vacuums.append(vac)
            continue
        if "." in name or name in _RESERVED or name == LEGACY_SCHEMA:
            continue
        parsed = parse_name(name)
        full = os.path.join(path, name)
        if parsed is None or not vfs.is_dir(full):
            continue
        committed = name in oks or name + OK_EXT in consolidated
        if not committed and parsed.format_version < 5:
            committed = vfs.is_file(os.path.join(full, FRAGMENT_METADATA_FILE))
        if committed:
            found.append(FragmentEntry(name, full, parsed.timestamp_range, parsed.format_version))
    return found, vacuums


def _commit_dir(path: str, commits: list[str], consolidated: set[str], window):
    """Fragments committed in ``__commits`` (``.con`` entries first), vacuum files, deletes."""
    names = sorted(marked_fragment(u) for u in consolidated if extension(u) == WRITE_EXT)
    vacuums, deletes = [], []
    for name in commits:
        full = os.path.join(path, COMMITS_DIR, name)
        relative = f"{COMMITS_DIR}/{name}"
        ext = extension(name)
        if ext == WRITE_EXT and relative not in consolidated:
            names.append(marked_fragment(name))
        elif ext == VACUUM_EXT:
            vac = _vacuum_entry(path, full, name)
            if vac is not None:
                vacuums.append(vac)
        elif ext in CONDITION_EXTS and relative not in consolidated:
            parsed = parse_name(name)
            if parsed is not None and _inside(parsed.timestamp_range, window):
                deletes.append(DeleteEntry(relative, parsed.t1, vfs.read_file(full), 0, full,
                                           is_update=ext == UPDATE_EXT))
    fragments = []
    for name in names:
        parsed = parse_name(name)
        if parsed is not None:
            fragments.append(FragmentEntry(name, os.path.join(path, FRAGMENTS_DIR, name),
                                           parsed.timestamp_range, parsed.format_version))
    return fragments, vacuums, deletes


def _vacuum_entry(path: str, full: str, name: str) -> VacuumEntry | None:
    parsed = parse_name(name)
    if parsed is None:
        return None
    lines = parse_vacuum_file(vfs.read_file(full), full)
    hides = frozenset(line.rstrip("/").rsplit("/", 1)[-1] for line in lines)
    return VacuumEntry(name, parsed.timestamp_range, parsed.format_version, hides)
