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

from ..errors import ProgrammingError
from ..format.commits import encode_ignore_file, parse_consolidated_commits, parse_vacuum_file
from ..format.names import new_name, parse_name
from . import vfs
from .array import normalize_key
from .directory import list_array
from .locking import maintenance_lock
from .maintenance import (
    COMMITS_DIR, FORMAT_VERSION, FRAGMENT_META_DIR, META_DIR, atomic_write,
    list_folder, remove_file, remove_tree,
)

MODES = ("fragments", "fragment_meta", "commits", "array_meta")
_ALL_TIME = (0, 2**64 - 1)


@dataclass(frozen=True)
class VacuumReport:
    """Array-relative paths removed (or that would be), in removal order, and files written."""

    path: str
    mode: str
    dry_run: bool
    removed: tuple[str, ...] = ()
    written: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Plan:
    ignore: tuple[str, ...] = ()  # commit uris for a new .ign file (written first)
    steps: tuple[str, ...] = ()  # array-relative paths, removed in this order


def vacuum(path, *, mode: str = "fragments", key=None, dry_run: bool = False) -> VacuumReport:
    """Vacuum the array at ``path`` (``key`` is accepted for symmetry: vacuum reads no
    encrypted file, as in TileDB)."""
    path = os.path.abspath(os.fspath(path))
    if mode not in MODES:
        raise ProgrammingError(f"unknown vacuum mode {mode!r}; use one of {', '.join(MODES)}")
    normalize_key(key)
    list_array(path)  # a clear error if this is not an array
    if dry_run:
        return _report(path, mode, True, plan(path, mode))
    with maintenance_lock(path, f"vacuum ({mode})"):
        chosen = plan(path, mode)
        written = _execute(path, chosen)
        return VacuumReport(path, mode, False, chosen.steps, written)


def plan(path: str, mode: str) -> _Plan:
    if mode == "fragments":
        return _fragments_plan(path)
    if mode == "fragment_meta":
        return _fragment_meta_plan(path)
    if mode == "commits":
        return _commits_plan(path)
    return _array_meta_plan(path)


def _report(path: str, mode: str, dry_run: bool, chosen: _Plan) -> VacuumReport:
    written = (f"{COMMITS_DIR}/{_ignore_name(chosen.ignore)}",) if chosen.ignore else ()
    return VacuumReport(path, mode, dry_run, chosen.steps, written)


def _execute(path: str, chosen: _Plan) -> tuple[str, ...]:
    written = ()
    if chosen.ignore:
        relative = f"{COMMITS_DIR}/{_ignore_name(chosen.ignore)}"
        atomic_write(path, relative, encode_ignore_file(chosen.ignore))
        written = (relative,)
    for relative in chosen.steps:
        full = os.path.join(path, relative)
        if os.path.isdir(full):
            remove_tree(full)
        else:
            remove_file(full)
    return written


def _ignore_name(uris) -> str:
    first, last = parse_name(uris[0]), parse_name(uris[-1])
    t1, t2 = first.t1, last.t2
    if t1 > t2:
        t1, t2 = min(parse_name(u).t1 for u in uris), max(parse_name(u).t2 for u in uris)
    return new_name(t1, t2, FORMAT_VERSION, ".ign")


# -- fragments ----------------------------------------------------------------------------------


def _fragments_plan(path: str) -> _Plan:
    """TileDB's ``FragmentConsolidator::vacuum``: over all time every ``.vac`` counts and every
    committed fragment it lists goes."""
    directory = list_array(path, _ALL_TIME)
    hidden = set()
    for vac in directory.vacuum_files:
        hidden |= vac.hides
    consolidated = _consolidated_commit_lines(path)
    ignore, steps = [], []
    for entry in directory.committed:
        if entry.name not in hidden:
            continue
        commit = _commit_file(entry)
        if commit in consolidated:  # a .con commits it: only an .ign file can retract that
            ignore.append(commit)
        if vfs.is_file(os.path.join(path, commit)):
            steps.append(commit)
        steps.append(os.path.relpath(entry.path, path))
    steps += [_vac_relative(v.name, v.version) for v in directory.vacuum_files]
    return _Plan(tuple(ignore), tuple(steps))


def _commit_file(entry) -> str:
    if entry.version < 12:
        return f"{entry.name}.ok"
    return f"{COMMITS_DIR}/{entry.name}.wrt"


def _vac_relative(name: str, version: int) -> str:
    return name if version < 12 else f"{COMMITS_DIR}/{name}"


def _consolidated_commit_lines(path: str) -> set[str]:
    """Commit uris that ``.con`` files list and no ``.ign`` hides (TileDB's consolidated set)."""
    lines = set()
    ignored = set()
    for listed in list_folder(path, COMMITS_DIR, ".ign"):
        ignored.update(_raw_lines(vfs.read_file(os.path.join(path, listed.relative))))
    for listed in list_folder(path, COMMITS_DIR, ".con"):
        data = vfs.read_file(os.path.join(path, listed.relative))
        lines.update(e.uri for e in parse_consolidated_commits(data, listed.relative)
                     if e.uri not in ignored)
    return lines


# -- fragment metadata --------------------------------------------------------------------------


def _fragment_meta_plan(path: str) -> _Plan:
    metas = [m for m in list_folder(path, "", ".meta")] + list_folder(path, FRAGMENT_META_DIR, ".meta")
    if not metas:
        return _Plan()
    latest = max(m.parsed.t2 for m in metas)
    return _Plan((), tuple(m.relative for m in metas if m.parsed.t2 != latest))


# -- commits ------------------------------------------------------------------------------------


def _commits_plan(path: str) -> _Plan:
    """TileDB's ``CommitsConsolidator::vacuum`` (``load_consolidated_commit_uris`` in COMMITS
    mode)."""
    ignored = set()
    ign_files = list_folder(path, COMMITS_DIR, ".ign")
    for listed in ign_files:
        ignored.update(_raw_lines(vfs.read_file(os.path.join(path, listed.relative))))
    con_files = list_folder(path, COMMITS_DIR, ".con")
    contents = {c.relative: vfs.read_file(os.path.join(path, c.relative)) for c in con_files}
    in_set = set()
    for relative, data in contents.items():
        in_set.update(e.uri for e in parse_consolidated_commits(data, relative) if e.uri not in ignored)
    steps = [uri for uri in sorted(in_set) if vfs.is_file(os.path.join(path, uri))]
    for con in con_files:
        # TileDB reads the .con line by line here, condition bytes included: a .con with a
        # delete holds lines that are no commit and never "contains everything".
        raw = _raw_lines(contents[con.relative])
        if all(line in in_set for line in raw) and len(raw) == len(in_set):
            steps += [c.relative for c in con_files if c.relative != con.relative]
            steps += [i.relative for i in ign_files]
            break
    return _Plan((), tuple(steps))


def _raw_lines(data: bytes) -> list[str]:
    """The lines ``std::getline`` yields (a last line without ``\\n`` counts)."""
    text = data.decode("utf-8", "surrogateescape")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


# -- array metadata -----------------------------------------------------------------------------


def _array_meta_plan(path: str) -> _Plan:
    """TileDB's ``ArrayMetaConsolidator::vacuum``: over all time every ``.vac`` counts."""
    meta_dir = os.path.join(path, META_DIR)
    files = {m.name for m in list_folder(path, META_DIR, "") if not m.name.endswith(".tmp")}
    vacs = list_folder(path, META_DIR, ".vac")
    listed = set()
    for vac in vacs:
        data = vfs.read_file(os.path.join(meta_dir, vac.name))
        listed.update(parse_vacuum_file(data, vac.relative))
    steps = sorted(rel for rel in listed if rel.startswith(f"{META_DIR}/")
                   and rel[len(META_DIR) + 1:] in files)
    steps += [vac.relative for vac in vacs]
    return _Plan((), tuple(steps))


__all__ = ["MODES", "VacuumReport", "vacuum"]
