"""RLE (4): run-length encoding, a compressor with two forms.

Fixed-size values (the usual form): the compression framing of ``compression`` (every metadata
and data part compressed on its own) where a part is runs of ``value, run_length u16 big-endian``
and a value is one cell of the tile (``ChunkContext.value_size``: cell_val_num x type size for
fixed attributes, the type size for var data, 8 for offsets, 1 for validity).

Var-sized STRING_ASCII / STRING_UTF8 tiles (``var_strings``): the header of ``var_strings`` then
``run_len_bytes u8, string_len_bytes u8``; the data is runs of ``run length, string length``
(big-endian, those widths) and the string.  Decoding rebuilds the cell offsets into
``ctx.offsets_out``.  The loops are ``tdbsql.kernels.rle``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...errors import CorruptArrayError, DataError
from ...kernels import rle as kernels
from ..binary import Reader, Writer
from .base import ChunkContext, as_uint8, register, rest
from .compression import CompressionFilter
from .var_strings import (
    VarStringHeader, cell_bounds, is_var_string_chunk, normalized_width, width_code,
)


@register
@dataclass(frozen=True)
class RleFilter(CompressionFilter):
    filter_id: ClassVar[int] = 4
    name: ClassVar[str] = "RLE"

    # -- fixed-size values ---------------------------------------------------------------------

    def compress_part(self, data: bytes, ctx: ChunkContext) -> bytes:
        size = ctx.value_size
        src = as_uint8(data)
        if src.nbytes % size:
            raise DataError(f"RLE input of {src.nbytes} bytes is not whole {size}-byte values")
        out = np.empty(src.nbytes // size * (size + 2), dtype=np.uint8)
        return out[: kernels.rle_encode(src, size, out)].tobytes()

    def decompress_part(self, data: bytes, size: int, ctx: ChunkContext) -> bytes:
        src = as_uint8(data)
        total = kernels.rle_decoded_size(src, ctx.value_size)
        if total != size:
            raise CorruptArrayError(
                f"RLE runs expand to {total} bytes, expected {size}"
                if total >= 0 else f"RLE data of {src.nbytes} bytes is not whole runs",
                ctx.where,
            )
        out = np.empty(total, dtype=np.uint8)
        kernels.rle_decode(src, ctx.value_size, out)
        return out.tobytes()

    # -- var-sized strings ---------------------------------------------------------------------

    def decode(self, metadata, data, ctx: ChunkContext):
        if not is_var_string_chunk(ctx):
            return super().decode(metadata, data, ctx)
        r = Reader(metadata, ctx.where)
        header = VarStringHeader.read(r, self.name)
        run_code = r.u8("RLE run length width")
        len_code = r.u8("RLE string length width")
        if run_code == 0 or len_code == 0:
            raise r.error("RLE widths", "a run or string length width of 0")
        encoded = as_uint8(Reader(data, ctx.where).view(header.encoded_size, "RLE string runs"))
        out, offsets = _decode_strings(
            encoded, normalized_width(run_code), normalized_width(len_code), header, ctx.where
        )
        if ctx.offsets_out is not None:
            ctx.offsets_out.append(offsets)
        return rest(r), out

    def encode(self, metadata, data, ctx: ChunkContext):
        if not is_var_string_chunk(ctx):
            return super().encode(metadata, data, ctx)
        if ctx.offsets_in is None:
            raise DataError("RLE on var-sized strings needs the cell offsets")
        src = as_uint8(data)
        starts, ends = cell_bounds(ctx.offsets_in, src.nbytes)
        params = np.zeros(4, dtype=np.int64)
        kernels.rle_strings_params(src, starts, ends, params)
        max_run, max_len, runs, string_bytes = (int(v) for v in params)
        run_bytes, len_bytes = width_code(max_run), width_code(max_len)
        out = np.empty(runs * (run_bytes + len_bytes) + string_bytes, dtype=np.uint8)
        kernels.rle_strings_encode(src, starts, ends, run_bytes, len_bytes, out)
        w = VarStringHeader(src.nbytes, out.nbytes, starts.size).write(Writer())
        w.u8(run_bytes).u8(len_bytes)
        return w.getvalue() + bytes(metadata), out


def _decode_strings(encoded, run_bytes: int, len_bytes: int, header: VarStringHeader, where: str):
    found = np.zeros(2, dtype=np.int64)
    status = kernels.rle_strings_scan(
        encoded, run_bytes, len_bytes, header.cell_count, header.data_size, found
    )
    if status < 0 or found[0] != header.cell_count or found[1] != header.data_size:
        raise CorruptArrayError(
            f"RLE string runs do not give the {header.cell_count} cells and {header.data_size} "
            "bytes the metadata announces", where,
        )
    out = np.empty(header.data_size, dtype=np.uint8)
    offsets = np.empty(header.cell_count, dtype=np.uint64)
    kernels.rle_strings_decode(encoded, run_bytes, len_bytes, out, offsets)
    return out, offsets
