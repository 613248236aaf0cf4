"""DELTA (19) and DOUBLE_DELTA (6): integer delta codings, compressors in TileDB's framing.

Both use the compression framing of ``compression`` (each metadata and data part coded on its
own).  Options: ``compressor u8 (8 / 6), level i32`` and, since format version 19 (DELTA) /
20 (DOUBLE_DELTA), ``reinterpret_datatype u8``: the values are read as that type (ANY = the
type the filter sees), which is also what the filter emits.

DELTA part: ``count u64``, the first value, then each value minus its predecessor.
DOUBLE_DELTA part: ``bitsize u8, count u64``, then either the raw values (when ``bitsize`` >=
bits of the type - 1) or the first two values and the bit-packed double deltas (see
``tdbsql.kernels.delta``).  Arithmetic wraps like TileDB's integer casts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...datatypes import Datatype, type_info
from ...errors import DataError, UnsupportedFormatError
from ...kernels import delta as kernels
from ..binary import Reader, Writer
from .base import ChunkContext, as_uint8, register, uint_view
from .compression import CompressionFilter

D = Datatype
_BYTE_TYPES = {D.BLOB, D.GEOM_WKB, D.GEOM_WKT, D.BOOL, D.UINT8, D.ANY, D.STRING_ASCII,
               D.STRING_UTF8, D.STRING_UTF16, D.STRING_UTF32, D.STRING_UCS2, D.STRING_UCS4}
_INT_TYPES = {D.INT8: (1, True), D.CHAR: (1, True), D.INT16: (2, True), D.UINT16: (2, False),
              D.INT32: (4, True), D.UINT32: (4, False), D.INT64: (8, True), D.UINT64: (8, False)}
del D


def delta_value_type(datatype: int) -> tuple[int, bool]:
    """``(width, signed)`` of the integers TileDB's delta codings read for ``datatype``.

    Byte-like and all string types are unsigned bytes (even UTF-16/32), dates and times int64."""
    dt = Datatype(datatype)
    if dt in _INT_TYPES:
        return _INT_TYPES[dt]
    if dt in _BYTE_TYPES:
        return 1, False
    if dt.name.startswith(("DATETIME_", "TIME_")):
        return 8, True
    raise UnsupportedFormatError(f"delta codings do not support {dt.name} values")


@dataclass(frozen=True)
class _DeltaBase(CompressionFilter):
    reinterpret_datatype: int = Datatype.ANY
    reinterpret_since: ClassVar[int] = 0

    @classmethod
    def read_options(cls, r: Reader, size: int, version: int) -> "_DeltaBase":
        r.u8(f"{cls.name} compressor type")
        level = r.i32(f"{cls.name} compression level")
        reinterpret = Datatype.ANY
        if version >= cls.reinterpret_since:
            code = r.u8(f"{cls.name} reinterpret datatype")
            try:
                reinterpret = Datatype(code)
            except ValueError:
                raise r.error(
                    f"{cls.name} reinterpret datatype", f"unknown datatype {code}"
                ) from None
        return cls(level=level, reinterpret_datatype=reinterpret)

    def options_bytes(self) -> bytes:
        return super().options_bytes() + bytes([int(self.reinterpret_datatype)])

    def output_datatype(self, datatype: int) -> int:
        return datatype if self.reinterpret_datatype == Datatype.ANY else self.reinterpret_datatype

    def input_refusal(self, datatype: int) -> str | None:
        """No floats, as stored or reinterpreted; a reinterpret type must divide the type."""
        target = self.output_datatype(datatype)
        if type_info(target).kind == "float":
            return (f"{self.name} does not accept floating point values "
                    "(give reinterpret_dtype an integer type)")
        reinterpreted = self.reinterpret_datatype != Datatype.ANY
        if reinterpreted and type_info(datatype).size % type_info(target).size:
            return f"{self.name} reinterpret type size does not divide {Datatype(datatype).name}"
        return None

    def value_type(self, ctx: ChunkContext) -> tuple[int, bool]:
        return delta_value_type(self.output_datatype(ctx.datatype))


@register
@dataclass(frozen=True)
class DeltaFilter(_DeltaBase):
    filter_id: ClassVar[int] = 19
    name: ClassVar[str] = "DELTA"
    compressor_code: ClassVar[int] = 8
    reinterpret_since: ClassVar[int] = 19

    def compress_part(self, data: bytes, ctx: ChunkContext) -> bytes:
        width, _ = self.value_type(ctx)
        values = _whole_values(data, width, self.name)
        out = np.empty_like(values)
        kernels.delta_encode(values, out)
        return Writer().u64(values.size).raw(out).getvalue()

    def decompress_part(self, data: bytes, size: int, ctx: ChunkContext) -> bytes:
        width, _ = self.value_type(ctx)
        r = Reader(data, ctx.where)
        count = r.u64("DELTA value count")
        _check_count(r, self.name, count, width, size)
        values = r.array(f"<u{width}", count, "DELTA values")
        kernels.delta_decode(values)
        return values.tobytes()


@register
@dataclass(frozen=True)
class DoubleDeltaFilter(_DeltaBase):
    filter_id: ClassVar[int] = 6
    name: ClassVar[str] = "DOUBLE_DELTA"
    compressor_code: ClassVar[int] = 6
    reinterpret_since: ClassVar[int] = 20

    def compress_part(self, data: bytes, ctx: ChunkContext) -> bytes:
        width, signed = self.value_type(ctx)
        values = _whole_values(data, width, self.name)
        wide, unsigned64 = _as_int64(values, signed)
        bitsize = kernels.double_delta_bitsize(wide, unsigned64)
        w = Writer()
        if bitsize < 0 or bitsize >= 8 * width - 1 or values.size == 0:
            # Not worth it (or deltas leave int64, which TileDB refuses): store the values.
            # An empty part (a var tile of empty cells) is stored so too: TileDB's own coding
            # of it (bit size 0, then two values it does not have) its reader cannot read.
            stored_bits = bitsize if bitsize >= 8 * width - 1 else 8 * width - 1
            return w.u8(stored_bits).u64(values.size).raw(values).getvalue()
        words = np.zeros(kernels.double_delta_words(values.size, bitsize), dtype="<u8")
        kernels.double_delta_pack(wide, bitsize, words)
        return w.u8(bitsize).u64(values.size).raw(values[:2]).raw(words).getvalue()

    def decompress_part(self, data: bytes, size: int, ctx: ChunkContext) -> bytes:
        width, _ = self.value_type(ctx)
        r = Reader(data, ctx.where)
        bitsize = r.u8("DOUBLE_DELTA bit size")
        count = r.u64("DOUBLE_DELTA value count")
        if bitsize >= 8 * width - 1:
            return r.bytes(r.remaining, "DOUBLE_DELTA raw values")
        _check_count(r, self.name, count, width, size)
        out = np.zeros(count, dtype=np.uint64)
        out[: min(count, 2)] = r.array(f"<u{width}", min(count, 2), "DOUBLE_DELTA first values")
        needed = kernels.double_delta_words(count, bitsize)
        words = r.array("<u8", needed, "DOUBLE_DELTA bit stream")
        kernels.double_delta_unpack(words, bitsize, out)
        return out.astype(f"<u{width}").tobytes()


def _check_count(r: Reader, name: str, count: int, width: int, size: int) -> None:
    """A part of ``size`` bytes holds ``count`` values.  When a few bytes are missing, the
    filter follows one whose output is not whole values (a compressor, say): TileDB codes the
    whole values only and never stores the rest, and reads back whatever its buffer holds --
    so the cells are lost, reported as corrupt rather than guessed."""
    missing = size - count * width
    if missing == 0:
        return
    why = (f"; TileDB did not store the last {missing} byte(s): {name} follows a filter "
           "whose output is not whole values") if 0 < missing < width else ""
    raise r.error(f"{name} value count", f"{count} values do not make {size} bytes{why}")


def _whole_values(data, width: int, name: str) -> np.ndarray:
    src = as_uint8(data)
    if src.nbytes % width:
        raise DataError(f"{name} input of {src.nbytes} bytes is not whole {width}-byte values")
    return uint_view(src, width)


def _as_int64(values: np.ndarray, signed: bool) -> tuple[np.ndarray, bool]:
    """The values as int64 (exact), and whether they are uint64 bits held in int64."""
    if values.itemsize == 8:
        return values.view(np.int64), not signed
    if signed:
        return values.view(f"<i{values.itemsize}").astype(np.int64), False
    return values.astype(np.int64), False

