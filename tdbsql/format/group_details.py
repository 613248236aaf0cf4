"""Group members: the ``__group`` folder of a TileDB group (spec: group.md,
group_file_hierarchy.md; where the spec is short, what TileDB 2.30 writes).

A group is a folder holding an empty ``__tiledb_group.tdb``, a ``__group`` folder of
timestamped *details* files (``__group``) and a ``__meta`` folder (metadata, encoded as an array's:
``format.metadata``).  A details file is one generic tile:

    version u32 (1 or 2), member_num u64, then member_num members:
        version u32, type u8 (1 group, 2 array), relative u8, uri_size u64, uri,
        name_set u8 [, name_size u64, name], and from member version 2: deleted u8

(The spec gives a u32 URI size and leaves out the name and the count's width; TileDB writes
the above.)  A member is keyed by its name, else by its URI; a relative URI is relative to
the group's folder.

Which files count (TileDB's ``GroupDirectory`` / ``Group::load_group_details``): those whose
timestamps lie inside the window, minus those a ``.vac`` file in the window lists, in order of
their first timestamp.  Version 2 files replay in that order: a deleted member removes its key,
another sets it (TileDB 2.30 writes each change as the whole list plus the removed members
marked deleted).  When the newest file is a version 1 file (a name of four underscores, or
ending in ``_1``), it alone is the list.

Out: ``Member`` tuples in key order, from ``read_members`` (one file's bytes) and
``replay`` (the selected files); ``encode_details`` writes a version 2 file's tile payload.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from .binary import Reader, Writer

GROUP_MARKER = "__tiledb_group.tdb"  # the empty file that makes a folder a group
DETAILS_VERSION = 2  # written; 1 and 2 are read
GROUP = 1  # member types (TileDB's ObjectType)
ARRAY = 2


@dataclass(frozen=True)
class Member:
    uri: str  # as stored: relative to the group, or absolute (file:///...)
    kind: int  # GROUP or ARRAY
    relative: bool
    name: str | None
    deleted: bool = False

    @property
    def key(self) -> str:
        """What identifies the member in its group: the name, else the URI."""
        return self.uri if self.name is None else self.name


def read_members(payload: bytes, where: str) -> tuple[int, list[Member]]:
    """The details version and the members of one file's (decoded) tile."""
    r = Reader(payload, where)
    version = r.u32("group details version")
    if version not in (1, 2):
        raise r.error("group details version", f"{version} is not 1 or 2")
    count = r.u64("group member count")
    members = [_read_member(r) for _ in range(count)]
    if not r.at_end():
        raise r.error("group details", f"{r.remaining} bytes after the last member")
    return version, members


def _read_member(r: Reader) -> Member:
    version = r.u32("group member version")
    if version not in (1, 2):
        raise r.error("group member version", f"{version} is not 1 or 2")
    kind = r.u8("group member type")
    if kind not in (GROUP, ARRAY):
        raise r.error("group member type", f"{kind} is neither a group (1) nor an array (2)")
    relative = r.bool("group member relative")
    uri = r.string(r.u64("group member URI size"), "group member URI")
    name = r.string(r.u64("group member name size"), "group member name") \
        if r.bool("group member name set") else None
    deleted = r.bool("group member deleted") if version >= 2 else False
    return Member(uri, kind, relative, name, deleted)


def replay(files: Iterable[tuple[str, bytes]]) -> list[Member]:
    """The members after the details files ``(filename, payload)``, given in load order."""
    files = list(files)
    if files and _is_version_1_name(files[-1][0]):
        return _sorted(read_members(files[-1][1], files[-1][0])[1])
    members: dict[str, Member] = {}
    for filename, payload in files:
        for member in read_members(payload, filename)[1]:
            if member.deleted:
                members.pop(member.key, None)
            else:
                members[member.key] = member
    return _sorted(members.values())


def _is_version_1_name(filename: str) -> bool:
    underscores = filename.count("_")
    return underscores == 4 or (underscores == 5 and filename.endswith("_1"))


def _sorted(members: Iterable[Member]) -> list[Member]:
    return sorted(members, key=lambda m: m.key)


def encode_details(members: Iterable[Member]) -> bytes:
    """A version 2 details payload: the members (deleted ones marked so)."""
    members = list(members)
    w = Writer().u32(DETAILS_VERSION).u64(len(members))
    for m in members:
        uri = m.uri.encode()
        w.u32(DETAILS_VERSION).u8(m.kind).u8(int(m.relative)).u64(len(uri)).raw(uri)
        w.u8(m.name is not None)
        if m.name is not None:
            name = m.name.encode()
            w.u64(len(name)).raw(name)
        w.u8(int(m.deleted))
    return w.getvalue()

