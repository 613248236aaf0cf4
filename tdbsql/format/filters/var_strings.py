"""The framing RLE and DICTIONARY share on var-sized STRING_ASCII / STRING_UTF8 tiles.

Since format version 12 (RLE, ASCII), 13 (DICTIONARY, ASCII) and 17 (UTF-8) such a tile is one
chunk and the filter encodes the strings *and* their offsets; the offsets file then holds, per
tile, only an empty filtered tile (``num_chunks u64 = 0``).  The filter's metadata starts with

``num_metadata_parts u32 (0), num_data_parts u32 (1), data_size u32, encoded_size u32,
offsets_size u32`` (``offsets_size`` = 8 x the number of cells)

followed by the filter's own fields.  Decoding rebuilds the uint64 cell start offsets.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...datatypes import Datatype
from ..binary import Reader, Writer

STRING_TYPES = (Datatype.STRING_ASCII, Datatype.STRING_UTF8)


@dataclass(frozen=True)
class VarStringHeader:
    data_size: int  # bytes of the strings
    encoded_size: int  # bytes of the filter's output data
    cell_count: int

    @classmethod
    def read(cls, r: Reader, name: str) -> "VarStringHeader":
        r.u32(f"{name} metadata part count")
        r.u32(f"{name} data part count")
        data_size = r.u32(f"{name} string bytes")
        encoded_size = r.u32(f"{name} encoded bytes")
        offsets_size = r.u32(f"{name} offsets bytes")
        if offsets_size % 8:
            raise r.error(f"{name} offsets bytes", f"{offsets_size} is not a multiple of 8")
        return cls(data_size, encoded_size, offsets_size // 8)

    def write(self, w: Writer) -> Writer:
        return w.u32(0).u32(1).u32(self.data_size).u32(self.encoded_size).u32(8 * self.cell_count)


def is_var_string_chunk(ctx) -> bool:
    """Whether this chunk takes the var-string form (see the module docstring)."""
    return ctx.var_strings and ctx.datatype in STRING_TYPES


def width_code(value: int) -> int:
    """TileDB's byte size for an unsigned count: 1, 2, 4 or 8."""
    if value <= 0xFF:
        return 1
    if value <= 0xFFFF:
        return 2
    if value <= 0xFFFFFFFF:
        return 4
    return 8


def normalized_width(code: int) -> int:
    """How TileDB reads a stored byte size (anything above 4 means 8)."""
    return 1 if code <= 1 else 2 if code <= 2 else 4 if code <= 4 else 8


def cell_bounds(offsets: np.ndarray, data_size: int) -> tuple[np.ndarray, np.ndarray]:
    """Start and end (int64) of each cell from the cell start offsets of a tile."""
    starts = np.ascontiguousarray(offsets, dtype=np.int64)
    ends = np.empty_like(starts)
    ends[:-1] = starts[1:]
    if starts.size:
        ends[-1] = data_size
    return starts, ends
