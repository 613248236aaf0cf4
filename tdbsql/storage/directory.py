"""An array directory at a timestamp window: which schemas, fragments, deletes and metadata count.

The rules follow TileDB's array directory (spec: array_file_hierarchy.md):

- fragments are committed by ``__commits/<name>.wrt`` (v12+), by an entry of a consolidated
  commits file ``.con`` that no ``.ign`` file ignores, by ``<name>.ok`` in the root (v5-v11), or by
  the presence of ``__fragment_metadata.tdb`` (before v5); uncommitted fragments are invisible;
- a fragment counts when its timestamp range lies inside the window ``[t_start, t_end]`` -- or
  merely overlaps it for fragments of format 15+ (consolidated fragments then carry per-cell
  timestamps that the reader filters);
- a vacuum file ``.vac`` overlapping the window hides the fragments it lists (they were merged
  into the consolidated fragment of the same name);
- delete commits ``.del`` (also embedded in ``.con`` files) count when inside the window;
- the schema is the newest one written at or before ``t_end`` (legacy ``__array_schema.tdb`` is
  older than every ``__schema/`` file); each fragment is read with the schema it names.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass

from ..errors import ArrayNotFoundError
from ..format.names import parse_name
from . import vfs

UINT64_MAX = 2**64 - 1
CONSOLIDATION_WITH_TIMESTAMPS_MIN_VERSION = 15


@dataclass(frozen=True)
class FragmentEntry:
    name: str  # folder name: __t1_t2_uuid_v
    path: str
    timestamp_range: tuple[int, int]
    version: int


@dataclass(frozen=True)
class DeleteEntry:
    name: str  # __t1_t2_uuid_v.del
    timestamp: int
    data: bytes  # the serialized condition (a generic tile)
    where: str


@dataclass(frozen=True)
class SchemaEntry:
    name: str
    path: str
    timestamp: int


@dataclass(frozen=True)
class ArrayDirectory:
    path: str
    window: tuple[int, int]
    schemas: tuple[SchemaEntry, ...]  # oldest first
    fragments: tuple[FragmentEntry, ...]  # sorted by timestamp range, then name
    deletes: tuple[DeleteEntry, ...]  # sorted by timestamp
    metadata_files: tuple[str, ...]  # paths under __meta/ (and legacy), filtered later

    @property
    def latest_schema(self) -> SchemaEntry:
        t_end = self.window[1]
        candidates = [s for s in self.schemas if s.timestamp <= t_end] or list(self.schemas[:1])
        return candidates[-1]


def list_array(path: str, window: tuple[int, int] = (0, UINT64_MAX)) -> ArrayDirectory:
    path = os.path.abspath(path)
    vfs.require_dir(path)
    schemas = _list_schemas(path)
    if not schemas:
        raise ArrayNotFoundError(f"not a TileDB array: {path!r} has no array schema")
    commits = vfs.list_dir(os.path.join(path, "__commits"))
    ignored = _ignored_commits(path, commits)
    consolidated, con_deletes = _consolidated_commits(path, commits, ignored)
    candidates = _committed_fragments(path, commits, consolidated)
    vacuumed = _vacuumed(path, commits, window)
    fragments = _in_window(candidates, vacuumed, window)
    deletes = _deletes(path, commits, consolidated, con_deletes, window)
    meta = tuple(
        os.path.join(path, "__meta", name)
        for name in vfs.list_dir(os.path.join(path, "__meta"))
        if not name.endswith(".vac")
    )
    return ArrayDirectory(path, window, tuple(schemas), tuple(fragments), tuple(deletes), meta)


def _list_schemas(path: str) -> list[SchemaEntry]:
    entries = []
    legacy = os.path.join(path, "__array_schema.tdb")
    if vfs.is_file(legacy):
        entries.append(SchemaEntry("__array_schema.tdb", legacy, -1))
    schema_dir = os.path.join(path, "__schema")
    for name in vfs.list_dir(schema_dir):
        full = os.path.join(schema_dir, name)
        if name.startswith("__") and vfs.is_file(full):
            parsed = parse_name(name, strict=False)
            if parsed is not None:
                entries.append(SchemaEntry(name, full, parsed.t1))
    entries.sort(key=lambda s: (s.timestamp, s.name))
    return entries


def _ignored_commits(path: str, commits: list[str]) -> set[str]:
    ignored: set[str] = set()
    for name in commits:
        if name.endswith(".ign"):
            text = vfs.read_file(os.path.join(path, "__commits", name)).decode("utf-8", "replace")
            ignored.update(line for line in text.splitlines() if line)
    return ignored


def _consolidated_commits(path: str, commits: list[str], ignored: set[str]):
    """Entries of ``.con`` files: committed names (relative URIs) and embedded deletes."""
    names: set[str] = set()
    deletes: list[DeleteEntry] = []
    for con in (c for c in commits if c.endswith(".con")):
        con_path = os.path.join(path, "__commits", con)
        data = vfs.read_file(con_path)
        pos = 0
        while pos < len(data):
            end = data.find(b"\n", pos)
            end = len(data) if end == -1 else end
            marker = data[pos:end].decode("utf-8", "replace")
            pos = end + 1
            if not marker:
                continue
            if marker not in ignored:
                names.add(marker)
            if marker.endswith(".del"):
                if pos + 8 > len(data):
                    from ..errors import CorruptArrayError

                    raise CorruptArrayError(f"delete entry {marker!r} is truncated", con_path)
                (size,) = struct.unpack_from("<Q", data, pos)
                body = data[pos + 8 : pos + 8 + size]
                pos += 8 + size
                if marker not in ignored:
                    deletes.append(_delete_entry(os.path.basename(marker), body, con_path))
    return names, deletes


def _committed_fragments(path: str, commits: list[str], consolidated: set[str]) -> list[FragmentEntry]:
    names: set[str] = set()
    for marker in consolidated:
        if marker.endswith(".wrt"):
            names.add(os.path.basename(marker)[: -len(".wrt")])
    for name in commits:
        if name.endswith(".wrt"):
            names.add(name[: -len(".wrt")])
    entries = [_fragment(path, os.path.join(path, "__fragments", n), n) for n in names]
    entries.extend(_legacy_fragments(path))
    return [e for e in entries if e is not None]


def _legacy_fragments(path: str) -> list[FragmentEntry | None]:
    """Fragments in the array root (format < 12): committed by ``.ok`` or (< v5) metadata."""
    root = vfs.list_dir(path)
    oks = {n[: -len(".ok")] for n in root if n.endswith(".ok")}
    found = []
    for name in root:
        full = os.path.join(path, name)
        if not name.startswith("__") or name.startswith(("__schema", "__fragments", "__commits",
                                                           "__meta", "__fragment_meta", "__labels",
                                                           "__array_schema", "__lock")):
            continue
        if not vfs.is_dir(full):
            continue
        if name in oks or vfs.is_file(os.path.join(full, "__fragment_metadata.tdb")):
            found.append(_fragment(path, full, name))
    return found


def _fragment(root: str, full: str, name: str) -> FragmentEntry | None:
    parsed = parse_name(name, strict=False)
    if parsed is None:
        return None
    return FragmentEntry(name, full, (parsed.t1, parsed.t2), parsed.version or 0)


def _overlaps(rng: tuple[int, int], window: tuple[int, int], partial: bool) -> bool:
    if partial:
        return rng[0] <= window[1] and window[0] <= rng[1]
    return rng[0] >= window[0] and rng[1] <= window[1]


def _vacuumed(path: str, commits: list[str], window: tuple[int, int]) -> set[str]:
    """Fragment folder names hidden by vacuum files that overlap the window."""
    hidden: set[str] = set()
    for name in commits:
        if not name.endswith(".vac"):
            continue
        parsed = parse_name(name, strict=False)
        if parsed is None:
            continue
        partial = (parsed.version or 0) >= CONSOLIDATION_WITH_TIMESTAMPS_MIN_VERSION
        if not _overlaps((parsed.t1, parsed.t2), window, partial):
            continue
        text = vfs.read_file(os.path.join(path, "__commits", name)).decode("utf-8", "replace")
        hidden.update(os.path.basename(line.rstrip("/")) for line in text.splitlines() if line)
    return hidden


def _in_window(entries, vacuumed: set[str], window) -> list[FragmentEntry]:
    keep = []
    for entry in entries:
        if entry.name in vacuumed:
            continue
        partial = entry.version >= CONSOLIDATION_WITH_TIMESTAMPS_MIN_VERSION
        if _overlaps(entry.timestamp_range, window, partial):
            keep.append(entry)
    keep.sort(key=lambda e: (e.timestamp_range, e.path))
    return keep


def _deletes(path, commits, consolidated, con_deletes, window) -> list[DeleteEntry]:
    found = []
    for name in commits:
        if name.endswith(".del") and f"__commits/{name}" not in consolidated:
            full = os.path.join(path, "__commits", name)
            found.append(_delete_entry(name, vfs.read_file(full), full))
    found.extend(con_deletes)
    found = [d for d in found if window[0] <= d.timestamp <= window[1]]
    found.sort(key=lambda d: (d.timestamp, d.name))
    return found


def _delete_entry(name: str, data: bytes, where: str) -> DeleteEntry:
    parsed = parse_name(name, strict=False)
    timestamp = parsed.t2 if parsed is not None else 0
    return DeleteEntry(name, timestamp, data, where)
