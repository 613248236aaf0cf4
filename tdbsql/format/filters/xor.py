"""XOR (16): each element XOR the previous one, per part.

Metadata: ``num_parts u32`` and a ``u32`` size per part.  The element width is the size of the
datatype the filter sees; the filter emits the signed integer type of that width (TileDB's
``output_datatype``).  A part that is not whole elements (the XOR follows a compressor or
DOUBLE_DELTA) is refused when writing: TileDB leaves its last bytes unwritten, so it cannot read
such a tile back, from itself or from us.  Reading keeps those bytes as they are.  The loops are
``tdbsql.kernels.xor``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...datatypes import Datatype, datatype_size
from ...errors import DataError, UnsupportedFormatError
from ...kernels import xor as kernels
from ..binary import Reader
from .base import (
    ChunkContext, Filter, as_uint8, part_sizes_header, read_part_sizes, register, rest,
    split_parts, uint_view,
)

_SIGNED_BY_WIDTH = {1: Datatype.INT8, 2: Datatype.INT16, 4: Datatype.INT32, 8: Datatype.INT64}


@register
@dataclass(frozen=True)
class XorFilter(Filter):
    filter_id: ClassVar[int] = 16
    name: ClassVar[str] = "XOR"

    def output_datatype(self, datatype: int) -> int:
        return _SIGNED_BY_WIDTH[_width(datatype)]

    def input_refusal(self, datatype: int) -> str | None:
        """Values of 1, 2, 4 or 8 bytes."""
        return None if datatype_size(datatype) in _SIGNED_BY_WIDTH else \
            "XOR needs 1, 2, 4 or 8-byte values"

    def decode(self, metadata, data, ctx: ChunkContext):
        r = Reader(metadata, ctx.where)
        sizes = read_part_sizes(r, self.name)
        width = _width(ctx.datatype)
        arr = as_uint8(data)
        # The parts are consecutive slices of ``arr``: decode them in place.
        for part in split_parts(arr, sizes, ctx.where, self.name):
            whole = part.nbytes - part.nbytes % width
            kernels.xor_decode(uint_view(part[:whole], width))
        return rest(r), arr[: sum(sizes)]

    def encode(self, metadata, data, ctx: ChunkContext):
        src = as_uint8(data)
        width = _width(ctx.datatype)
        if src.nbytes % width:
            raise DataError(f"XOR input of {src.nbytes} bytes is not whole {width}-byte values "
                            "(TileDB could not read the tile back)")
        out = np.empty_like(src)
        kernels.xor_encode(uint_view(src, width), uint_view(out, width))
        return part_sizes_header([src.nbytes]) + bytes(metadata), out


def _width(datatype: int) -> int:
    width = datatype_size(datatype)
    if width not in _SIGNED_BY_WIDTH:
        raise UnsupportedFormatError(f"XOR filter cannot work on {width}-byte values")
    return width
