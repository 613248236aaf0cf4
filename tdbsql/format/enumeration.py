"""Enumerations: the label lists of attributes (files in ``__schema/__enumerations/``).

In: the bytes of an enumeration file (a generic tile).  Out: an ``Enumeration`` whose
``values()`` are the labels as Python values; ``write_enumeration`` writes the file back the
way TileDB does.

Decoded layout (as TileDB writes it; the spec's table leaves out the two names and says the
offsets are always present)::

    version u32 (0), name length u32, name, path name length u32, path name, datatype u8,
    cell_val_num u32, ordered u8, data size u64, data,
    offsets size u64, offsets (uint64 start of each value; only when cell_val_num is var)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..datatypes import VAR_NUM, Datatype, string_codec, type_info
from ..errors import UnsupportedFormatError
from .array_schema import (
    GENERIC_TILE_PIPELINE, SCHEMA_WRITE_VERSION, read_datatype, read_name, write_name,
)
from .binary import Reader, Writer
from .generic_tile import decode_generic_tile, encode_generic_tile

ENUMERATION_VERSION = 0
ENUMERATIONS_DIR = "__schema/__enumerations"


@dataclass(frozen=True)
class Enumeration:
    name: str
    path_name: str  # the file name in __schema/__enumerations/
    datatype: Datatype
    cell_val_num: int  # values per label, or VAR_NUM
    ordered: bool
    data: bytes  # all labels' bytes back to back
    offsets: tuple[int, ...] = ()  # byte start of each label (var-sized only)
    version: int = ENUMERATION_VERSION

    @property
    def is_var(self) -> bool:
        return self.cell_val_num == VAR_NUM

    def __len__(self) -> int:
        if self.is_var:
            return len(self.offsets)
        return len(self.data) // (type_info(self.datatype).size * self.cell_val_num)

    def raw_values(self) -> list[bytes]:
        """The stored bytes of each label."""
        if self.is_var:
            ends = self.offsets[1:] + (len(self.data),)
            return [self.data[a:b] for a, b in zip(self.offsets, ends)]
        width = type_info(self.datatype).size * self.cell_val_num
        return [self.data[i : i + width] for i in range(0, len(self.data), width)]

    def values(self) -> list:
        """Labels as Python values: ``str`` for strings (``bytes`` if not decodable),
        ``bytes`` for blobs, numbers (``bool`` for BOOL), tuples / lists of numbers when a
        label has several values."""
        info = type_info(self.datatype)
        if info.kind == "string":
            return [_decode_text(raw, self.datatype) for raw in self.raw_values()]
        if info.kind == "binary":
            return self.raw_values()
        numbers = np.frombuffer(self.data, dtype=info.numpy)
        if info.kind == "bool":
            numbers = numbers.astype(bool)
        if self.is_var:
            return [numbers[a // info.size : b // info.size].tolist() for a, b in self._bounds()]
        if self.cell_val_num == 1:
            return numbers.tolist()
        return [tuple(row) for row in numbers.reshape(-1, self.cell_val_num).tolist()]

    def _bounds(self) -> list[tuple[int, int]]:
        ends = self.offsets[1:] + (len(self.data),)
        return list(zip(self.offsets, ends))

    def to_bytes(self) -> bytes:
        """The decoded file bytes, as TileDB 2.30 writes them."""
        w = Writer().u32(self.version)
        write_name(w, self.name)
        write_name(w, self.path_name)
        w.u8(self.datatype).u32(self.cell_val_num).bool(self.ordered)
        w.u64(len(self.data)).raw(self.data)
        if self.is_var:
            w.u64(8 * len(self.offsets)).raw(np.asarray(self.offsets, dtype="<u8").tobytes())
        return w.getvalue()


def _decode_text(raw: bytes, datatype: Datatype) -> str | bytes:
    try:
        return raw.decode(string_codec(datatype))
    except UnicodeDecodeError:
        return raw


def read_enumeration(data: bytes, where: str, key: bytes | None = None) -> Enumeration:
    """Parse an enumeration file (a generic tile)."""
    return parse_enumeration(decode_generic_tile(data, where, key).tobytes(), where)


def write_enumeration(enumeration: Enumeration, key: bytes | None = None) -> bytes:
    """The whole enumeration file, a GZIP(level 1) generic tile as TileDB writes it."""
    return encode_generic_tile(
        enumeration.to_bytes(), SCHEMA_WRITE_VERSION, pipeline=GENERIC_TILE_PIPELINE,
        datatype=Datatype.CHAR, cell_size=1, key=key,
    )


def parse_enumeration(raw: bytes, where: str) -> Enumeration:
    """Parse the decoded bytes of an enumeration file."""
    r = Reader(raw, where)
    version = r.u32("enumeration version")
    if version > ENUMERATION_VERSION:
        prefix = f"{where}: " if where else ""
        raise UnsupportedFormatError(f"{prefix}enumeration version {version} is not supported")
    name = read_name(r, "enumeration name")
    path_name = read_name(r, "enumeration path name")
    datatype = read_datatype(r, "enumeration datatype")
    cell_val_num = r.u32("enumeration cell_val_num")
    ordered = r.bool("enumeration ordered flag")
    data = r.bytes(r.u64("enumeration data size"), "enumeration data")
    offsets: tuple[int, ...] = ()
    if cell_val_num == VAR_NUM:
        offsets = _read_offsets(r, len(data))
    elif cell_val_num == 0 or len(data) % (type_info(datatype).size * cell_val_num):
        raise r.error("enumeration data size", f"{len(data)} bytes is not a whole number of "
                      f"{cell_val_num}-value labels")
    if not r.at_end():
        raise r.error("enumeration", f"{r.remaining} unexpected bytes after the data")
    return Enumeration(name, path_name, datatype, cell_val_num, ordered, data, offsets, version)


def _read_offsets(r: Reader, data_size: int) -> tuple[int, ...]:
    size = r.u64("enumeration offsets size")
    if size % 8:
        raise r.error("enumeration offsets size", f"{size} is not a multiple of 8")
    offsets = r.array("<u8", size // 8, "enumeration offsets")
    if offsets.size and (offsets[0] != 0 or np.any(np.diff(offsets.astype(np.int64)) < 0)
                         or int(offsets[-1]) > data_size):
        raise r.error("enumeration offsets", "are not increasing from 0 within the data")
    return tuple(offsets.tolist())
