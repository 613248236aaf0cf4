"""Consolidation: merge many small files of an array into one, the way TileDB 2.30 does.

In: an array folder, a mode, optionally a ``(t1, t2)`` window and the encryption key.
Out: a ``ConsolidationReport`` naming what was (or, with ``dry_run``, would be) merged and the
files created.  Nothing is removed here: ``vacuum`` removes what consolidation made redundant.

Modes (TileDB's ``sm.consolidation.mode``):

- ``fragments``: the fragments committed inside the window become one fragment named for the
  window they cover (``__<first t1>_<last t2>_<uuid>_<v>``); see ``fragment_consolidation``.
  A ``.vac`` file named like it lists the merged fragments.
- ``fragment_meta``: the footers of every visible fragment go into one
  ``__fragment_meta/<name>.meta`` file, so opening the array reads one file instead of one per
  fragment.
- ``commits``: every commit marker (``.wrt``, ``.del`` with its condition, root ``.ok``) goes
  into one ``__commits/<name>.con`` file.
- ``array_meta``: the metadata files of the window are merged (later puts and deletes win) into
  one ``__meta/<name>`` file plus a ``.vac`` listing the merged files.

Safety for readers: every file appears atomically (``vfs.atomic_write``); a new
``.con`` or ``.meta`` only repeats information that is still in place, and a metadata
``.vac`` is written after the merged file it points readers to.  Fragment consolidation commits
its fragment before its ``.vac`` (see ``fragment_consolidation``).  Consolidate and vacuum
hold the array's maintenance lock (``locking``), so vacuum cannot delete fragments a running
consolidation reads, and two consolidations cannot merge the same fragments twice.

Differences from TileDB, all deliberate: a ``commits`` run whose only input is one existing
``.con`` (and no ``.ign``) is skipped instead of rewriting the same list; the consolidated
commits name takes the smallest and largest timestamps when TileDB's first/last rule would
give an invalid name; ``.del`` conditions whose file was already vacuumed are copied from the
``.con`` that embeds them (TileDB fails there).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass

from ..errors import ProgrammingError, UnsupportedFormatError
from ..format.commits import ConsolidatedCommit, encode_consolidated_commits, encode_vacuum_file
from ..format.consolidated_fragment_metadata import encode_consolidated_fragment_metadata
from ..format.fragment_metadata import raw_footer
from ..format.metadata import encode_metadata_file, read_merged, select_metadata_files
from ..format.names import (
    COMMITS_DIR, CONSOLIDATED_EXT, DELETE_EXT, FOLDERS_MIN_VERSION, FRAGMENT_META_DIR,
    FRAGMENTS_DIR, META_DIR, META_EXT, OK_EXT, VACUUM_EXT, WRITE_EXT, array_relative, extension,
    new_name, parse_name,
)
from . import vfs
from .array import Array, normalize_key
from .commit_files import CommitFiles, read_commit_files
from .directory import FRAGMENT_METADATA_FILE, UINT64_MAX
from .locking import maintenance_lock
from .maintenance import (
    MODES, ConsolidationReport, check_mode, list_folder, span_name, write_version,
)

def consolidate(path, *, mode: str = "fragments", timestamp=None, key=None, dry_run: bool = False,
                purge_deleted_cells: bool = False) -> ConsolidationReport:
    """Consolidate the array at ``path``; see the module docstring for the modes.

    ``timestamp``: ``(t1, t2)`` in ms -- only fragments (or metadata files) written wholly
    inside it are merged (TileDB's ``sm.consolidation.timestamp_start/_end``).
    ``purge_deleted_cells``: drop cells that delete commits removed instead of keeping them
    with their delete time (TileDB's ``sm.consolidation.purge_deleted_cells``, default off).
    """
    path = vfs.local_path(path)
    check_mode(mode, "consolidation")
    window = _window(timestamp)
    key = normalize_key(key)
    array = Array(path, timestamp=(0, None), key=key)
    array.schema  # opening checks the key (before the lock file is touched), as TileDB does
    if dry_run:
        return _run(array, mode, window, dry_run=True, purge=purge_deleted_cells)
    with maintenance_lock(path, f"consolidate ({mode})"):
        # List again under the lock: what another process did before we got it counts.
        array = Array(path, timestamp=(0, None), key=key)
        return _run(array, mode, window, dry_run=False, purge=purge_deleted_cells)


def _run(array: Array, mode: str, window, dry_run: bool, purge: bool) -> ConsolidationReport:
    version = _require_version(array, mode)
    if mode == "fragments":
        from .fragment_consolidation import consolidate_fragments  # the engine: import on use

        return consolidate_fragments(array, window, dry_run, purge)
    if mode == "fragment_meta":
        return _fragment_meta(array, version, dry_run)
    if mode == "commits":
        return _commits(array, version, dry_run)
    return _array_meta(array, version, window, dry_run)


def _window(timestamp) -> tuple[int, int]:
    """TileDB's consolidation window: everything unless ``(t1, t2)`` is given."""
    if timestamp is None:
        return (0, UINT64_MAX)
    if not isinstance(timestamp, (tuple, list)) or len(timestamp) != 2:
        raise ProgrammingError(f"timestamp must be a (start, end) pair in ms, got {timestamp!r}")
    start, end = (0 if timestamp[0] is None else int(timestamp[0]),
                  UINT64_MAX if timestamp[1] is None else int(timestamp[1]))
    if start > end:
        raise ProgrammingError(f"timestamp window ({start}, {end}) starts after it ends")
    return (start, end)


def _require_version(array: Array, mode: str) -> int:
    version = write_version(array.schema.version)
    if version < FOLDERS_MIN_VERSION:  # no __commits / __fragment_meta to write into
        what = mode.replace("_meta", " metadata")
        raise UnsupportedFormatError(
            f"{array.path}: consolidating {what} needs an array of format {FOLDERS_MIN_VERSION} "
            f"or later (this one is format {array.schema.version}); upgrade it with tiledb first")
    return version


# -- commits ------------------------------------------------------------------------------------


def _commits(array: Array, version: int, dry_run: bool) -> ConsolidationReport:
    path = array.path
    plan = commits_plan(path)
    report = ConsolidationReport(path, "commits", dry_run, plan.entries)
    if not plan.entries:
        return report.skipped("no commits to consolidate")
    if not plan.new_entries and len(plan.files.con_files) <= 1 and not plan.files.ign_files:
        return report.skipped("commits are already consolidated in one file")
    report = report.creating(f"{COMMITS_DIR}/{span_name(plan.entries, version, CONSOLIDATED_EXT)}")
    if not dry_run:
        entries = [ConsolidatedCommit(uri, plan.condition_bytes(path, uri)) for uri in plan.entries]
        vfs.atomic_write(path, report.created[0], encode_consolidated_commits(entries))
    return report


@dataclass(frozen=True)
class CommitsPlan:
    """TileDB's list of commits to consolidate (``load_commits_uris_to_consolidate``)."""

    entries: tuple[str, ...]  # array-relative, in the order the .con lists them
    new_entries: tuple[str, ...]  # those no .con lists yet
    files: CommitFiles

    def condition_bytes(self, path: str, uri: str) -> bytes | None:
        if extension(uri) != DELETE_EXT:
            return None
        full = os.path.join(path, uri)
        return vfs.read_file(full) if vfs.is_file(full) else self.files.embedded[uri]


def commits_plan(path: str) -> CommitsPlan:
    files = read_commit_files(path)
    listed = files.consolidated
    new = [c.relative for c in list_folder(path, "", OK_EXT) if c.relative not in listed]
    new += [c.relative for c in list_folder(path, COMMITS_DIR, WRITE_EXT, DELETE_EXT)
            if c.relative not in listed]
    # TileDB copies only .wrt/.ok/.del lines into a new .con (an .upd stays in its file).
    kept = sorted(u for u in listed if extension(u) in (WRITE_EXT, OK_EXT, DELETE_EXT))
    return CommitsPlan(tuple(kept + new), tuple(new), files)


# -- fragment metadata --------------------------------------------------------------------------


def _fragment_meta(array: Array, version: int, dry_run: bool) -> ConsolidationReport:
    fragments = [f for f in array.fragments if f.entry.version > 2]  # 1-2 have no footer
    report = ConsolidationReport(array.path, "fragment_meta", dry_run,
                                 tuple(array_relative(FRAGMENTS_DIR, f.name, f.entry.version)
                                       for f in fragments))
    if len(fragments) < 2:
        return report.skipped("fewer than two fragments")
    first, last = fragments[0].timestamp_range, fragments[-1].timestamp_range
    report = report.creating(
        f"{FRAGMENT_META_DIR}/{new_name(first[0], last[1], version, META_EXT)}")
    if not dry_run:
        footers = [(f.name, _footer(array, f)) for f in fragments]
        vfs.atomic_write(array.path, report.created[0],
                     encode_consolidated_fragment_metadata(footers, version, array.key))
    return report


def _footer(array: Array, fragment) -> bytes:
    """The footer bytes of a fragment: from a consolidated .meta that has it, else the tail of
    its ``__fragment_metadata.tdb`` (as TileDB re-serializes it, byte for byte)."""
    known = array.consolidated_footers.get(fragment.name)
    if known is not None:
        return known
    source = os.path.join(fragment.entry.path, FRAGMENT_METADATA_FILE)
    data, _ = raw_footer(functools.partial(vfs.read_range, source), vfs.file_size(source),
                         array.schema_for_fragment(fragment.entry), fragment.entry.version, source)
    return data


# -- array metadata -----------------------------------------------------------------------------


def _array_meta(array: Array, version: int, window, dry_run: bool) -> ConsolidationReport:
    meta_dir = os.path.join(array.path, META_DIR)

    def read(name: str) -> bytes:
        return vfs.read_file(os.path.join(meta_dir, name))

    chosen = select_metadata_files(vfs.list_dir(meta_dir), read, *window)
    report = ConsolidationReport(array.path, "array_meta", dry_run,
                                 tuple(f"{META_DIR}/{n}" for n in chosen))
    if len(chosen) <= 1:
        return report.skipped("fewer than two metadata files in the window")
    # TileDB names the merged file from the first file's start and the last file's end.
    name = new_name(parse_name(chosen[0]).t1, parse_name(chosen[-1]).t2, None)
    merged = read_merged(chosen, read, array.key)
    # All keys deleted: TileDB writes no metadata file, only the .vac that retires the old ones.
    report = report.creating(*((f"{META_DIR}/{name}",) if merged else ()),
                             f"{META_DIR}/{name}{VACUUM_EXT}")
    if not dry_run:
        if merged:
            vfs.atomic_write(array.path, report.created[0],
                         encode_metadata_file(merged.values(), version, array.key))
        vfs.atomic_write(array.path, report.created[-1], encode_vacuum_file(report.inputs))
    return report


__all__ = ["ConsolidationReport", "MODES", "consolidate", "commits_plan"]
