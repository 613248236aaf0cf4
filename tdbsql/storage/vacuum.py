"""Vacuum: remove what consolidation made redundant, exactly the files TileDB 2.30 removes.

In: an array folder and a mode.  Out: a ``VacuumReport`` listing the files and folders removed
(or, with ``dry_run``, that would be) and any ``.ign`` file written.

Modes (TileDB's ``sm.vacuum.mode``), with TileDB's rules:

- ``fragments``: every committed fragment that a ``.vac`` file lists goes, with its commit
  marker; a marker that only a ``.con`` holds cannot be deleted, so an ``.ign`` file lists it
  instead (written first).  Then the ``.vac`` files go.
- ``fragment_meta``: every consolidated fragment metadata file except the newest (largest end
  timestamp) goes.
- ``commits``: every commit file some ``.con`` lists goes; when one ``.con`` lists all of them
  (TileDB compares its lines literally, so a ``.con`` embedding a delete condition never
  qualifies), the other ``.con`` files and the ``.ign`` files go too.
- ``array_meta``: every metadata file a ``.vac`` lists goes, then the ``.vac`` files.

Order, so that a reader listing the array at any moment sees a consistent array: commit markers
before fragment folders, fragment folders and metadata files before the ``.vac`` that hides
them, superseded ``.con`` files before the ``.ign`` files that filter them.  A reader that
listed the array *before* vacuum and opens a removed file afterwards fails, in TileDB as in
tdbsql; open the array again after a vacuum.  Vacuum holds the maintenance lock, so it never
runs while a tdbsql consolidation reads the fragments it would remove.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..format.commits import encode_ignore_file, parse_vacuum_file
from ..format.fragment_metadata import WRITE_VERSION
from ..format.names import (
    COMMITS_DIR, FRAGMENT_META_DIR, IGNORE_EXT, META_DIR, META_EXT, VACUUM_EXT, array_relative,
    commit_marker,
)
from . import vfs
from .array import normalize_key
from .commit_files import read_commit_files
from .directory import UINT64_MAX, list_array, require_array
from .locking import maintenance_lock
from .maintenance import (
    MODES, check_mode, list_folder, remove, span_name,
)


@dataclass(frozen=True)
class VacuumReport:
    """Array-relative paths removed (or that would be), in removal order, and files written."""

    path: str
    mode: str
    dry_run: bool
    removed: tuple[str, ...] = ()
    written: tuple[str, ...] = ()


@dataclass(frozen=True)
class VacuumPlan:
    """What a vacuum does: write ``ignore_file`` listing ``ignore`` (first), then remove
    ``steps`` in order -- the same plan for a dry run and a real run."""

    steps: tuple[str, ...] = ()  # array-relative paths, removed in this order
    ignore: tuple[str, ...] = ()  # commit uris for a new .ign file
    ignore_file: str = ""  # its array-relative name

    @property
    def written(self) -> tuple[str, ...]:
        return (self.ignore_file,) if self.ignore_file else ()


def vacuum(path, *, mode: str = "fragments", key=None, dry_run: bool = False) -> VacuumReport:
    """Vacuum the array at ``path`` (``key`` is accepted for symmetry: vacuum reads no
    encrypted file, as in TileDB)."""
    path = vfs.local_path(path)
    check_mode(mode, "vacuum")
    normalize_key(key)
    require_array(path)  # a clear error if this is not an array
    if dry_run:
        chosen = plan(path, mode)
    else:
        with maintenance_lock(path, f"vacuum ({mode})"):
            chosen = plan(path, mode)
            _execute(path, chosen)
    return VacuumReport(path, mode, dry_run, chosen.steps, chosen.written)


def plan(path: str, mode: str) -> VacuumPlan:
    check_mode(mode, "vacuum")
    return _PLANS[mode](path)


def _execute(path: str, chosen: VacuumPlan) -> None:
    if chosen.ignore:
        vfs.atomic_write(path, chosen.ignore_file, encode_ignore_file(chosen.ignore))
    for relative in chosen.steps:
        remove(os.path.join(path, relative))


# -- fragments ----------------------------------------------------------------------------------


def _fragments_plan(path: str) -> VacuumPlan:
    """TileDB's ``FragmentConsolidator::vacuum``: over all time every ``.vac`` counts and every
    committed fragment it lists goes."""
    directory = list_array(path, (0, UINT64_MAX))
    hidden = set()
    for vac in directory.vacuum_files:
        hidden |= vac.hides
    ignore, steps = [], []
    for entry in directory.committed:
        if entry.name not in hidden:
            continue
        commit = commit_marker(entry.name, entry.version)
        if commit in directory.consolidated:  # a .con commits it: only an .ign file can retract that
            ignore.append(commit)
        if vfs.is_file(os.path.join(path, commit)):
            steps.append(commit)
        steps.append(os.path.relpath(entry.path, path))
    steps += [array_relative(COMMITS_DIR, v.name, v.version) for v in directory.vacuum_files]
    if not ignore:
        return VacuumPlan(tuple(steps))
    # TileDB names an .ign file with its own format version, whatever the array's.
    name = span_name(ignore, WRITE_VERSION, IGNORE_EXT)
    return VacuumPlan(tuple(steps), tuple(ignore), f"{COMMITS_DIR}/{name}")


# -- fragment metadata --------------------------------------------------------------------------


def _fragment_meta_plan(path: str) -> VacuumPlan:
    metas = list_folder(path, "", META_EXT) + list_folder(path, FRAGMENT_META_DIR, META_EXT)
    if not metas:
        return VacuumPlan()
    latest = max(m.parsed.t2 for m in metas)
    return VacuumPlan(tuple(m.relative for m in metas if m.parsed.t2 != latest))


# -- commits ------------------------------------------------------------------------------------


def _commits_plan(path: str) -> VacuumPlan:
    """TileDB's ``CommitsConsolidator::vacuum`` (``load_consolidated_commit_uris`` in COMMITS
    mode)."""
    files = read_commit_files(path)
    in_set = files.consolidated
    steps = [uri for uri in sorted(in_set) if vfs.is_file(os.path.join(path, uri))]
    for con in files.con_files:
        # TileDB reads the .con line by line here, condition bytes included: a .con with a
        # delete holds lines that are no commit and never "contains everything".
        raw = _raw_lines(files.con_data[con])
        if all(line in in_set for line in raw) and len(raw) == len(in_set):
            steps += [c for c in files.con_files if c != con]
            steps += list(files.ign_files)
            break
    return VacuumPlan(tuple(steps))


def _raw_lines(data: bytes) -> list[str]:
    """The lines ``std::getline`` yields (a last line without ``\\n`` counts)."""
    text = data.decode("utf-8", "surrogateescape")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


# -- array metadata -----------------------------------------------------------------------------


def _array_meta_plan(path: str) -> VacuumPlan:
    """TileDB's ``ArrayMetaConsolidator::vacuum``: over all time every ``.vac`` counts."""
    listing = list_folder(path, META_DIR, "", VACUUM_EXT)
    files = {m.relative for m in listing if m.parsed.ext == ""}
    vacs = [m for m in listing if m.parsed.ext == VACUUM_EXT]
    listed = set()
    for vac in vacs:
        listed.update(parse_vacuum_file(vfs.read_file(os.path.join(path, vac.relative)),
                                        vac.relative))
    steps = sorted(listed & files) + [vac.relative for vac in vacs]
    return VacuumPlan(tuple(steps))


_PLANS = {"fragments": _fragments_plan, "fragment_meta": _fragment_meta_plan,
          "commits": _commits_plan, "array_meta": _array_meta_plan}

__all__ = ["MODES", "VacuumPlan", "VacuumReport", "plan", "vacuum"]
