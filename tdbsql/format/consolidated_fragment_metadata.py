"""Consolidated fragment metadata files (spec: consolidated_fragment_metadata_file.md).

In: the bytes of a ``__fragment_meta/<timestamped_name>.meta`` file (or of a legacy ``.meta``
file in the array folder, formats < 12) and optionally the encryption key.
Out: ``ConsolidatedFragmentMetadata`` -- the footer bytes of every fragment it covers, keyed by
fragment folder name, ready for ``read_fragment_metadata(..., footer=...)``.

The file is one generic tile (GZIP level 1) whose decoded bytes are
``fragment_num u32`` (the spec omits this field), then per fragment ``name_size u64, name,
footer_offset u64`` (offsets into the decoded bytes), then the footers back to back -- each
exactly as at the end of the fragment's own ``__fragment_metadata.tdb`` minus the trailing
footer length.  Names are folder names from format 9 on and absolute URIs before; both are
keyed here by the last path component.  Formats 1-2 have no footer and are never included.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..errors import CorruptArrayError
from .binary import Reader, Writer
from .fragment_metadata import GENERIC_TILE_PIPELINE
from .generic_tile import decode_generic_tile, encode_generic_tile


@dataclass(frozen=True)
class ConsolidatedFragmentMetadata:
    entries: tuple[tuple[str, int], ...]  # (name as stored, footer offset) in file order
    footers: dict[str, bytes]  # fragment folder name -> its footer bytes

    @property
    def fragment_names(self) -> tuple[str, ...]:
        return tuple(self.footers)

    def footer(self, fragment_name: str) -> bytes | None:
        return self.footers.get(fragment_name)


def fragment_key(stored_name: str) -> str:
    """The fragment folder name of an entry (pre-v9 entries are whole URIs)."""
    return stored_name.rstrip("/").rsplit("/", 1)[-1]


def read_consolidated_fragment_metadata(data, where: str, key: bytes | None = None) -> ConsolidatedFragmentMetadata:
    """Parse a whole ``.meta`` file."""
    raw = decode_generic_tile(data, where, key).tobytes()
    return parse_consolidated_fragment_metadata(raw, where)


def parse_consolidated_fragment_metadata(raw: bytes, where: str) -> ConsolidatedFragmentMetadata:
    """Parse the decoded bytes of a ``.meta`` file."""
    r = Reader(raw, where)
    count = r.u32("fragment count")
    if count > r.remaining // 16:
        raise r.error("fragment count", f"{count} entries cannot fit in {r.remaining} bytes")
    entries = []
    for i in range(count):
        name = r.string(r.u64(f"fragment {i} name size"), f"fragment {i} name")
        entries.append((name, r.u64(f"fragment {i} footer offset")))
    header_end = r.pos
    ends = [off for _, off in entries[1:]] + [len(raw)]
    footers: dict[str, bytes] = {}
    for (name, start), end in zip(entries, ends):
        if not header_end <= start <= end <= len(raw):
            raise CorruptArrayError(
                f"footer of {name!r}: offsets {start}..{end} are outside the footers area "
                f"{header_end}..{len(raw)}", where)
        # TileDB keeps the first entry of a name when several files list it; so do we.
        footers.setdefault(fragment_key(name), raw[start:end])
    return ConsolidatedFragmentMetadata(tuple(entries), footers)


def encode_consolidated_fragment_metadata(footers: Sequence[tuple[str, bytes]], version: int = 22,
                                          key: bytes | None = None) -> bytes:
    """A ``.meta`` file holding ``(fragment name, footer bytes)`` pairs, as TileDB writes it."""
    offset = 4 + sum(8 + len(name.encode("utf-8")) + 8 for name, _ in footers)
    w = Writer().u32(len(footers))
    for name, footer in footers:
        raw = name.encode("utf-8")
        w.u64(len(raw)).raw(raw).u64(offset)
        offset += len(footer)
    for _, footer in footers:
        w.raw(footer)
    return encode_generic_tile(w.getvalue(), version, pipeline=GENERIC_TILE_PIPELINE, key=key)
