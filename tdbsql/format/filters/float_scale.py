"""SCALE_FLOAT (15): floats stored as ``round((x - offset) / scale)`` in 1, 2, 4 or 8 bytes.

Options: ``scale f64, offset f64, byte_width u64``.  Metadata: ``num_parts u32`` and per part
the ``u32`` size of its stored integers.  The float width is the size of the datatype the filter
sees (4 -> float32, 8 -> float64, whatever the type is called); the filter emits the signed
integer type of ``byte_width``.  Lossy: decoding gives ``scale * stored + offset``.  The loops
are ``tdbsql.kernels.float_scale``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...datatypes import Datatype, datatype_size
from ...errors import DataError, UnsupportedFormatError
from ...kernels import float_scale as kernels
from ..binary import Reader, Writer
from .base import (
    ChunkContext, Filter, as_uint8, part_sizes_header, read_part_sizes, register, rest,
    split_parts,
)

_INT_BY_WIDTH = {1: Datatype.INT8, 2: Datatype.INT16, 4: Datatype.INT32, 8: Datatype.INT64}
_FLOAT_BY_WIDTH = {4: np.dtype("<f4"), 8: np.dtype("<f8")}


@register
@dataclass(frozen=True)
class FloatScaleFilter(Filter):
    filter_id: ClassVar[int] = 15
    name: ClassVar[str] = "SCALE_FLOAT"

    scale: float = 1.0
    offset: float = 0.0
    byte_width: int = 8

    @classmethod
    def read_options(cls, r: Reader, size: int, version: int) -> "FloatScaleFilter":
        scale = r.f64("SCALE_FLOAT scale")
        offset = r.f64("SCALE_FLOAT offset")
        width = r.u64("SCALE_FLOAT byte width")
        if width not in _INT_BY_WIDTH:
            raise r.error("SCALE_FLOAT byte width", f"must be 1, 2, 4 or 8, not {width}")
        return cls(scale, offset, width)

    def options_bytes(self) -> bytes:
        return Writer().f64(self.scale).f64(self.offset).u64(self.byte_width).getvalue()

    @property
    def lossy(self) -> bool:
        return True

    def output_datatype(self, datatype: int) -> int:
        return _INT_BY_WIDTH[self.byte_width]

    def input_refusal(self, datatype: int) -> str | None:
        """Values of a float width (whatever the type is called)."""
        if datatype_size(datatype) in _FLOAT_BY_WIDTH:
            return None
        return f"SCALE_FLOAT needs 4- or 8-byte values, not {Datatype(datatype).name}"

    def decode(self, metadata, data, ctx: ChunkContext):
        r = Reader(metadata, ctx.where)
        sizes = read_part_sizes(r, self.name)
        ftype = _float_type(ctx.datatype)
        stored_type = np.dtype(f"<i{self.byte_width}")
        out = []
        for part in split_parts(data, sizes, ctx.where, self.name):
            stored = part[: part.nbytes - part.nbytes % self.byte_width].view(stored_type)
            values = np.empty(stored.size, dtype=ftype)
            kernels.float_scale_decode(stored.astype(np.int64), self.scale, self.offset, values)
            out.append(values.view(np.uint8))
        return rest(r), np.concatenate(out) if out else np.empty(0, np.uint8)

    def encode(self, metadata, data, ctx: ChunkContext):
        ftype = _float_type(ctx.datatype)
        src = as_uint8(data)
        if src.nbytes % ftype.itemsize:
            raise DataError(
                f"SCALE_FLOAT input of {src.nbytes} bytes is not whole {ftype.itemsize}-byte floats"
            )
        wide = np.empty(src.nbytes // ftype.itemsize, dtype=np.int64)
        kernels.float_scale_encode(src.view(ftype), self.scale, self.offset, wide)
        stored = wide.astype(f"<i{self.byte_width}").view(np.uint8)  # C-style truncation
        return part_sizes_header([stored.nbytes]) + bytes(metadata), stored


def _float_type(datatype: int) -> np.dtype:
    width = datatype_size(datatype)
    if width not in _FLOAT_BY_WIDTH:
        raise UnsupportedFormatError(f"SCALE_FLOAT cannot work on {width}-byte values")
    return _FLOAT_BY_WIDTH[width]
