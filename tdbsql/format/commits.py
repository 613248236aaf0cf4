"""Files of the ``__commits`` folder besides ``.wrt`` markers (spec: consolidated_commits_file.md,
ignore_file.md, vacuum_file.md).

In: the bytes of a ``.con``, ``.ign`` or ``.vac`` file.  Out: the URIs they list, relative to
the array folder (``__commits/__1_1_<uuid>_22.wrt``), and for the ``.del`` entries of a ``.con``
the embedded delete-commit file (a generic tile, see ``delete_condition``).  Writers produce
the bytes TileDB writes.

* ``.con``: one URI a line; a ``.del`` (or ``.upd``) line is followed by ``u64`` size and that
  many bytes: the whole delete file.
* ``.ign``: one URI a line, compared verbatim with the lines of ``.con`` files.
* ``.vac``: one URI a line; since format 19 relative with a leading ``/``
  (``/__fragments/<name>``), before that absolute.  ``vacuum_entry_path`` reduces either form
  to the array-relative path the way TileDB does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from .binary import Reader, Writer
from .names import (CONDITION_EXTS, FRAGMENTS_DIR, GROUP_DETAILS_DIR, META_DIR, TimestampedName,
                    extension, parse_name)


@dataclass(frozen=True)
class ConsolidatedCommit:
    """One entry of a ``.con`` file."""

    uri: str  # as stored: relative to the array, e.g. "__commits/__1_1_<uuid>_22.wrt"
    tile: bytes | None = None  # .del/.upd: the embedded commit file (a generic tile)
    tile_offset: int | None = None  # where ``tile`` starts inside the .con file

    @property
    def ext(self) -> str:
        return extension(self.uri)

    @property
    def name(self) -> TimestampedName | None:
        return parse_name(self.uri)


def parse_consolidated_commits(data: bytes, where: str = "") -> tuple[ConsolidatedCommit, ...]:
    """The entries of a ``.con`` file, in file order."""
    r = Reader(bytes(data), where)
    entries = []
    while not r.at_end():
        line = _read_line(r)
        if not line:
            continue  # an empty line names nothing
        if extension(line) in CONDITION_EXTS:  # the line is followed by the condition tile
            size = r.u64(f"condition tile size of {line}")
            offset = r.pos
            entries.append(ConsolidatedCommit(line, r.bytes(size, f"condition tile of {line}"), offset))
        else:
            entries.append(ConsolidatedCommit(line))
    return tuple(entries)


def _read_line(r: Reader) -> str:
    end = r.data.find(b"\n", r.pos)
    if end < 0:
        return r.string(r.remaining, "commit URI")  # like getline: a last line may lack "\n"
    line = r.string(end - r.pos, "commit URI")
    r.skip(1, "newline")
    return line


def encode_consolidated_commits(entries: Iterable[ConsolidatedCommit]) -> bytes:
    """The bytes TileDB writes for a ``.con`` listing ``entries`` (``.del`` ones need ``tile``)."""
    w = Writer()
    for e in entries:
        _check_line(e.uri)
        w.raw(e.uri.encode("utf-8") + b"\n")
        if extension(e.uri) in CONDITION_EXTS:
            if e.tile is None:
                raise ValueError(f"{e.uri}: a consolidated delete/update entry needs its file bytes")
            w.u64(len(e.tile)).raw(e.tile)
    return w.getvalue()


def parse_ignore_file(data: bytes, where: str = "") -> tuple[str, ...]:
    """The commit URIs (relative to the array, as in ``.con`` files) an ``.ign`` file hides."""
    return _lines(data, where)


def encode_ignore_file(uris: Iterable[str]) -> bytes:
    return _encode_lines(uris)


def parse_vacuum_file(data: bytes, where: str = "") -> tuple[str, ...]:
    """The array-relative paths a ``.vac`` file lists (``__fragments/<n>``, ``__meta/<n>`` or,
    for root-level legacy fragments, ``<n>``)."""
    return tuple(vacuum_entry_path(line, where) for line in _lines(data, where))


def vacuum_entry_path(line: str, where: str = "") -> str:
    """Reduce a ``.vac`` line (relative or absolute, any format version) to an array-relative
    path: from ``__fragments``, ``__meta`` or ``__group`` on, else the last path part (TileDB's
    rule)."""
    for folder in (FRAGMENTS_DIR, META_DIR, GROUP_DETAILS_DIR):
        pos = line.find(folder)
        if pos >= 0:
            return line[pos:]
    slash = line.rfind("/")
    if slash < 0:
        from ..errors import CorruptArrayError

        raise CorruptArrayError(f"vacuum entry {line!r} is not a URI", where or None)
    return line[slash + 1:]


def encode_vacuum_file(paths: Iterable[str]) -> bytes:
    """A ``.vac`` as TileDB 2.16+ writes it: ``/`` + array-relative path, one a line."""
    return _encode_lines("/" + p.lstrip("/") for p in paths)


def _lines(data: bytes, where: str) -> tuple[str, ...]:
    r = Reader(data, where)
    text = r.string(r.remaining, "URI list")
    return tuple(line for line in text.split("\n") if line)


def _encode_lines(lines: Iterable[str]) -> bytes:
    out = []
    for line in lines:
        _check_line(line)
        out.append(line + "\n")
    return "".join(out).encode("utf-8")


def _check_line(line: str) -> None:
    if not line or "\n" in line:
        raise ValueError(f"invalid URI line {line!r}")
