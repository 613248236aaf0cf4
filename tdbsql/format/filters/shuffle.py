"""BYTESHUFFLE (9) and BITSHUFFLE (8): reorder the bytes / bits of each part by element.

Metadata (both): ``num_parts u32`` and a ``u32`` size per part; the data is the parts one after
another, each shuffled on its own with the element size of the datatype the filter sees.
Bitshuffle splits its input into a part whose size is a multiple of 8 and the rest, and leaves
any part that is not a whole number of 8 bytes and of elements unshuffled (TileDB's rules).
The byte loops are ``tdbsql.kernels.shuffle``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...datatypes import datatype_size
from ...kernels import shuffle as kernels
from ..binary import Reader
from .base import (
    ChunkContext, Filter, as_uint8, part_sizes_header, read_part_sizes, register, rest,
    split_parts,
)


@register
@dataclass(frozen=True)
class ByteshuffleFilter(Filter):
    filter_id: ClassVar[int] = 9
    name: ClassVar[str] = "BYTESHUFFLE"

    def decode(self, metadata, data, ctx: ChunkContext):
        return _unshuffled(self.name, metadata, data, ctx,
                           lambda part, typesize: _run(kernels.byteunshuffle, part, typesize))

    def encode(self, metadata, data, ctx: ChunkContext):
        src = as_uint8(data)
        shuffled = _run(kernels.byteshuffle, src, datatype_size(ctx.datatype))
        return part_sizes_header([src.nbytes]) + bytes(metadata), shuffled


@register
@dataclass(frozen=True)
class BitshuffleFilter(Filter):
    filter_id: ClassVar[int] = 8
    name: ClassVar[str] = "BITSHUFFLE"

    def decode(self, metadata, data, ctx: ChunkContext):
        return _unshuffled(self.name, metadata, data, ctx,
                           lambda part, typesize: _bitshuffle(part, typesize, True))

    def encode(self, metadata, data, ctx: ChunkContext):
        src = as_uint8(data)
        cut = src.nbytes - src.nbytes % 8
        parts = [src[:cut], src[cut:]] if cut < src.nbytes else [src]
        typesize = datatype_size(ctx.datatype)
        out = [_bitshuffle(part, typesize, False) for part in parts]
        return part_sizes_header([p.nbytes for p in parts]) + bytes(metadata), _join(out)


def _unshuffled(name: str, metadata, data, ctx: ChunkContext, unshuffle):
    """(the metadata after the part sizes, the parts it lists each restored by
    ``unshuffle(part, element size)``, joined)."""
    r = Reader(metadata, ctx.where)
    sizes = read_part_sizes(r, name)
    typesize = datatype_size(ctx.datatype)
    out = [unshuffle(part, typesize) for part in split_parts(data, sizes, ctx.where, name)]
    return rest(r), _join(out)


def _bitshuffle(part: np.ndarray, typesize: int, invert: bool) -> np.ndarray:
    if part.nbytes % typesize != 0 or part.nbytes % 8 != 0:
        return part  # TileDB stores such parts as they are
    out = np.empty(part.nbytes, dtype=np.uint8)
    kernels.bitshuffle(part, out, typesize, invert)
    return out


def _run(kernel, part: np.ndarray, typesize: int) -> np.ndarray:
    out = np.empty(part.nbytes, dtype=np.uint8)
    kernel(part, out, typesize)
    return out


def _join(parts: list[np.ndarray]) -> np.ndarray:
    if len(parts) == 1:
        return parts[0]
    return np.concatenate(parts) if parts else np.empty(0, np.uint8)
