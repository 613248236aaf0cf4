"""The consolidated commits (``.con``) and ignore (``.ign``) files of ``__commits``, read once.

In: an array folder and the names its ``__commits`` folder holds (the caller's one listing).
Out: ``CommitFiles`` -- the ``.con`` / ``.ign`` files, each ``.con``'s bytes and entries, the
set of commit uris some ``.con`` lists and no ``.ign`` hides, and the condition tiles the
``.con`` files embed.  TileDB's rules (``ArrayDirectory::load_consolidated_commit_uris``): a
file is a ``.con`` / ``.ign`` by its extension; an ``.ign`` hides the lines it repeats from
every ``.con``.  Reads (``directory``) and consolidation / vacuum take them from here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property

from ..format.commits import ConsolidatedCommit, parse_consolidated_commits, parse_ignore_file
from ..format.names import COMMITS_DIR, CONSOLIDATED_EXT, IGNORE_EXT, extension
from . import vfs


@dataclass(frozen=True)
class CommitFiles:
    """What the ``.con`` and ``.ign`` files of ``__commits`` say; paths are array-relative
    (``__commits/<name>.con``), in name order."""

    con_files: tuple[str, ...]
    ign_files: tuple[str, ...]
    con_data: dict[str, bytes]  # .con path -> its bytes
    con_entries: dict[str, tuple[ConsolidatedCommit, ...]]  # .con path -> its entries, in order
    consolidated: frozenset[str]  # commit uris some .con lists and no .ign hides

    @cached_property
    def embedded(self) -> dict[str, bytes]:
        """``.del`` / ``.upd`` uri -> its condition tile, from the first ``.con`` holding it
        (built once: consolidating commits asks for it once per delete)."""
        out: dict[str, bytes] = {}
        for con in self.con_files:
            for entry in self.con_entries[con]:
                if entry.tile is not None:
                    out.setdefault(entry.uri, entry.tile)
        return out


def read_commit_files(path: str, names: list[str] | None = None) -> CommitFiles:
    """Read every ``.con`` and ``.ign`` file of the array at ``path`` once.  ``names``: the
    names ``__commits`` holds, as the caller listed them (default: listed here)."""
    if names is None:
        names = vfs.list_dir(os.path.join(path, COMMITS_DIR))
    con_files = tuple(f"{COMMITS_DIR}/{n}" for n in names if extension(n) == CONSOLIDATED_EXT)
    ign_files = tuple(f"{COMMITS_DIR}/{n}" for n in names if extension(n) == IGNORE_EXT)
    ignored: set[str] = set()
    for ign in ign_files:
        full = os.path.join(path, ign)
        ignored.update(parse_ignore_file(vfs.read_file(full), full))
    con_data, con_entries, consolidated = {}, {}, set()
    for con in con_files:
        full = os.path.join(path, con)
        con_data[con] = vfs.read_file(full)
        con_entries[con] = parse_consolidated_commits(con_data[con], full)
        consolidated.update(e.uri for e in con_entries[con] if e.uri not in ignored)
    return CommitFiles(con_files, ign_files, con_data, con_entries, frozenset(consolidated))


__all__ = ["CommitFiles", "read_commit_files"]
