"""TileDB groups on disk: a folder naming arrays (and other groups) that belong together, the
way a database names its tables.

``Group(path, timestamp)`` reads the members as TileDB lists them at that time
(``format.group_details``: the details files of the window, replayed), each resolved to a
local path, and the group's metadata (the ``__meta`` folder, read as an array's).
``tables()`` names the member arrays for SQL: a member's name, else the last part of its URI;
a member group's arrays under ``sub.name``.

Writes go as TileDB 2.30 makes them, so each side reads what the other wrote:
``create_group`` makes the folder, ``add_member`` / ``remove_member`` write one details file
each: the whole member list after the change, plus the removed member marked deleted, stamped
after every details file already there.
"""

from __future__ import annotations

import os
import time
from functools import cached_property
from urllib.parse import urlparse

from ..errors import ArrayNotFoundError, InterfaceError
from ..format.generic_tile import decode_generic_tile, encode_generic_tile
from ..format.group_details import (ARRAY, DETAILS_VERSION, GROUP, GROUP_MARKER,
                                    Member, encode_details, replay)
from ..format.metadata import GENERIC_TILE_PIPELINE, load_metadata_dir, select_metadata_files
from ..format.fragment_metadata import WRITE_VERSION
from ..format.names import GROUP_DETAILS_DIR as DETAILS_DIR
from ..format.names import META_DIR, SCHEMA_DIR, new_name, now_ms, parse_name
from . import vfs
from .directory import LEGACY_SCHEMA

def is_group(path: str) -> bool:
    path = vfs.local_path(path)
    return os.path.isfile(os.path.join(path, GROUP_MARKER)) or \
        os.path.isdir(os.path.join(path, DETAILS_DIR))


def is_array(path: str) -> bool:
    path = vfs.local_path(path)
    return os.path.isdir(os.path.join(path, SCHEMA_DIR)) or \
        os.path.isfile(os.path.join(path, LEGACY_SCHEMA))


class Group:
    """A TileDB group opened at ``timestamp`` (ms; None: now)."""

    def __init__(self, path: str, timestamp: int | None = None):
        self.path = vfs.local_path(path)
        self.timestamp = timestamp
        if not is_group(self.path):
            what = "does not exist" if not os.path.exists(self.path) else "is not a TileDB group"
            raise ArrayNotFoundError(f"{path!r} {what}")

    @cached_property
    def members(self) -> list[tuple[Member, str]]:
        """Each member and its path (a URI other than a local file's stays as it is)."""
        folder = os.path.join(self.path, DETAILS_DIR)
        names = sorted(os.listdir(folder)) if os.path.isdir(folder) else []

        def read(name: str) -> bytes:
            return vfs.read_file(os.path.join(folder, name))

        chosen = select_metadata_files(names, read, 0, self.timestamp, folder=DETAILS_DIR)
        files = [(name, decode_generic_tile(read(name), f"{DETAILS_DIR}/{name}"))
                 for name in chosen]
        members = replay((name, payload.tobytes()) for name, payload in files)
        return [(m, self._resolved(m)) for m in members]

    def _resolved(self, member: Member) -> str:
        if member.relative:
            return os.path.normpath(os.path.join(self.path, member.uri))
        if urlparse(member.uri).scheme == "file":
            return vfs.local_path(member.uri)
        return member.uri if "://" in member.uri else os.path.normpath(member.uri)

    def metadata(self) -> dict:
        """The group's metadata as ``dict(tiledb.Group(path).meta)`` gives it."""
        return load_metadata_dir(os.path.join(self.path, META_DIR), 0, self.timestamp)

    def tables(self) -> dict[str, str]:
        """SQL name -> array path of every member array, member groups' arrays as
        ``sub.name`` (a group met again on the way is not entered twice).  Named members
        keep their names; a nameless one whose URI's last part another member already
        names is left out."""
        return self._tables(frozenset({self.path}))

    def _tables(self, entered: frozenset) -> dict[str, str]:
        named = {m.name for m, _ in self.members if m.name is not None}
        tables: dict[str, str] = {}
        for member, path in self.members:
            name = member.name
            if name is None:
                name = os.path.basename(path.rstrip("/"))
                if name in named:
                    continue
                named.add(name)
            if member.kind == ARRAY:
                tables[name] = path
            elif path not in entered and is_group(path):
                inner = Group(path, self.timestamp)._tables(entered | {path})
                tables.update({f"{name}.{table}": p for table, p in inner.items()})
        return tables


def refuse_key(key) -> None:
    """Group metadata is never encrypted here: a key is a mistake, not ignored."""
    if key is not None:
        raise InterfaceError("a group's metadata is not encrypted: use it without a key")


def create_group(path: str) -> None:
    """An empty group at ``path`` (refuses a path that exists and is not an empty folder)."""
    path = vfs.local_path(path)
    if os.path.exists(path) and (not os.path.isdir(path) or os.listdir(path)):
        raise InterfaceError(f"cannot create a group at {path!r}: the path exists and is not "
                             "an empty folder")
    for folder in (DETAILS_DIR, META_DIR):
        os.makedirs(os.path.join(path, folder), exist_ok=True)
    vfs.write_durable(os.path.join(path, GROUP_MARKER), b"")  # last: now it is a group


def add_member(group: str, uri: str, *, name: str | None = None) -> None:
    """Add the array or group at ``uri`` to ``group``, under ``name`` if given.  A member
    inside the group's folder is stored relative to it (the folder can move), any other by
    its absolute ``file://`` URI."""
    current = Group(group)
    target = vfs.local_path(uri)
    kind = ARRAY if is_array(target) else GROUP if is_group(target) else None
    if kind is None:
        raise ArrayNotFoundError(f"cannot add {uri!r} to the group: it is neither a TileDB "
                                 "array nor a group")
    inside = os.path.relpath(target, current.path)
    relative = not inside.startswith(os.pardir) and inside != os.curdir
    stored = inside if relative else "file://" + target
    member = Member(stored.replace(os.sep, "/"), kind, relative, name)
    for existing, path in current.members:
        if existing.key == member.key or (name is None and path == target):
            raise InterfaceError(f"the group already has a member {existing.key!r}")
    _write(current, [m for m, _ in current.members] + [member])


def remove_member(group: str, name_or_uri: str) -> None:
    """Remove the member named ``name_or_uri`` (else the one member at that URI or path)."""
    current = Group(group)
    found = [m for m, _ in current.members if m.name == name_or_uri]
    if not found:
        target = os.path.abspath(name_or_uri) if "://" not in name_or_uri else None
        found = [m for m, path in current.members
                 if m.uri == name_or_uri or (target is not None and path == target)]
    if len(found) != 1:
        problem = "has no member" if not found else "has several members at"
        raise InterfaceError(f"the group {problem} {name_or_uri!r}" +
                             ("; remove them by name" if found else ""))
    gone = found[0]
    kept = [m for m, _ in current.members if m is not gone]
    _write(current, kept + [Member(gone.uri, gone.kind, gone.relative, gone.name, True)])


def _write(group: Group, members: list[Member]) -> None:
    folder = os.path.join(group.path, DETAILS_DIR)
    stamps = [p.t2 for p in map(parse_name, os.listdir(folder)) if p is not None] \
        if os.path.isdir(folder) else []
    while stamps and now_ms() <= max(stamps):  # after every change already made
        time.sleep(0.0005)
    t = now_ms()
    data = encode_generic_tile(encode_details(members), WRITE_VERSION,
                               pipeline=GENERIC_TILE_PIPELINE)
    vfs.atomic_write(group.path, f"{DETAILS_DIR}/{new_name(t, t, DETAILS_VERSION)}", data)
