"""BIT_WIDTH_REDUCTION (7) and POSITIVE_DELTA (10): windowed integer codings.

Both cut the chunk into windows of at most ``max_window_size`` bytes (options: that ``u32``;
defaults 256 and 1024) holding whole values of the type the filter sees.

Bit width reduction metadata: ``input_length u32, num_windows u32`` then per window
``minimum T, bit_width u8, window_bytes u32``; a window stores its values minus the minimum in
8/16/32/64 bits, or raw when that does not shrink them (or the window is not whole values).

Positive delta metadata: ``num_windows u32`` then per window ``first_value T, window_bytes u32``;
a window stores each value minus its predecessor (the first minus itself).

Types: 16..64-bit integers (bit width) / 8..64-bit integers and bytes (positive delta); dates
and times as int64 only from format version 20 (TileDB left them unfiltered before, a version
of the *fragment*); anything else passes through unchanged.  Loops: ``tdbsql.kernels``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...datatypes import Datatype, type_info
from ...errors import CorruptArrayError, DataError
from ...kernels import bit_width as bw_kernels
from ...kernels import delta as delta_kernels
from ..binary import Reader, Writer
from .base import ChunkContext, Filter, as_uint8, register, rest, uint_view

D = Datatype
_WIDE_INTS = {D.INT16: (2, True), D.UINT16: (2, False), D.INT32: (4, True),
              D.UINT32: (4, False), D.INT64: (8, True), D.UINT64: (8, False)}
_BYTES = {D.INT8: (1, True), D.UINT8: (1, False), D.BOOL: (1, False), D.BLOB: (1, False),
          D.GEOM_WKB: (1, False), D.GEOM_WKT: (1, False)}
# What a schema may put either filter on besides integers, dates and times: BOOL (an integer
# to TileDB: bit width passes it through, positive delta codes it as uint8) and bytes.
_ACCEPTED_BYTES = frozenset({D.BOOL, D.BLOB, D.GEOM_WKB, D.GEOM_WKT})
del D


def _time_type(datatype: int, version: int) -> tuple[int, bool] | None:
    name = Datatype(datatype).name
    if name.startswith(("DATETIME_", "TIME_")) and version >= 20:
        return 8, True
    return None


def bit_width_value_type(datatype: int, version: int) -> tuple[int, bool] | None:
    """``(width, signed)`` bit width reduction works on, None when it passes data through."""
    return _WIDE_INTS.get(datatype) or _time_type(datatype, version)


def positive_delta_value_type(datatype: int, version: int) -> tuple[int, bool] | None:
    """``(width, signed)`` positive delta works on, None when it passes data through."""
    return _WIDE_INTS.get(datatype) or _BYTES.get(datatype) or _time_type(datatype, version)


@dataclass(frozen=True)
class _WindowFilter(Filter):
    max_window_size: int = 0

    @classmethod
    def read_options(cls, r: Reader, size: int, version: int) -> "_WindowFilter":
        return cls(r.u32(f"{cls.name} max window size"))

    def options_bytes(self) -> bytes:
        return Writer().u32(self.max_window_size).getvalue()

    def input_refusal(self, datatype: int) -> str | None:
        """Integers, dates and times, and blobs (whatever the codec then passes through)."""
        if type_info(datatype).kind in ("int", "datetime", "time") or datatype in _ACCEPTED_BYTES:
            return None
        return f"{self.name} needs integer values, not {Datatype(datatype).name}"

    def windows(self, nbytes: int, width: int) -> list[tuple[int, int]]:
        """``(start, length)`` of each window of an ``nbytes`` input, as TileDB cuts them."""
        size = min(nbytes, self.max_window_size) // width * width
        if size == 0:
            return [(0, nbytes)] if nbytes else []
        return [(start, min(size, nbytes - start)) for start in range(0, nbytes, size)]


@register
@dataclass(frozen=True)
class BitWidthReductionFilter(_WindowFilter):
    filter_id: ClassVar[int] = 7
    name: ClassVar[str] = "BIT_WIDTH_REDUCTION"
    max_window_size: int = 256

    def decode(self, metadata, data, ctx: ChunkContext):
        vtype = bit_width_value_type(ctx.datatype, ctx.version)
        if vtype is None:
            return metadata, data
        width, signed = vtype
        r = Reader(metadata, ctx.where)
        length = r.u32("BIT_WIDTH_REDUCTION input length")
        count = r.u32("BIT_WIDTH_REDUCTION window count")
        table = r.array(_window_table(width), count, "BIT_WIDTH_REDUCTION windows")
        src = as_uint8(data)
        _check_windows(table, width, length, src.nbytes, ctx.where)
        out = np.empty(length, dtype=np.uint8)
        bw_kernels.bit_width_decode(
            src, table["min"].astype(np.uint64), table["bits"].copy(),
            table["nbytes"].astype(np.int64), width, signed, out,
        )
        return rest(r), out

    def encode(self, metadata, data, ctx: ChunkContext):
        vtype = bit_width_value_type(ctx.datatype, ctx.version)
        if vtype is None:
            return metadata, data
        width, signed = vtype
        src = as_uint8(data)
        windows = self.windows(src.nbytes, width)
        whole = [(s, n) for s, n in windows if n % width == 0]  # only the last may be partial
        values = uint_view(src[: sum(n for _, n in whole)], width).astype(np.uint64)
        mins = np.zeros(len(windows), dtype=np.uint64)
        bits = np.full(len(windows), 8 * width, dtype=np.uint8)
        packed = np.empty(src.nbytes, dtype=np.uint8)
        used = 0
        if whole:
            used = bw_kernels.bit_width_encode(values, width, signed, whole[0][1] // width,
                                               mins, bits, packed)
        if len(whole) < len(windows):
            start, n = windows[-1]
            packed[used : used + n] = src[start : start + n]
            used += n
        header = np.zeros(len(windows), _window_table(width))
        header["min"], header["bits"], header["nbytes"] = mins, bits, [n for _, n in windows]
        w = Writer().u32(src.nbytes).u32(len(windows)).raw(header.tobytes())
        return w.getvalue() + bytes(metadata), packed[:used]


def _window_table(width: int) -> np.dtype:
    """One bit width reduction window header: ``minimum T, bit_width u8, window_bytes u32``."""
    return np.dtype([("min", f"<u{width}"), ("bits", "u1"), ("nbytes", "<u4")])


def _check_windows(table, width: int, length: int, available: int, where: str) -> None:
    full = 8 * width
    nbytes = table["nbytes"].astype(np.int64)
    bits = table["bits"].astype(np.int64)
    raw = (bits >= full) | (nbytes % width != 0)
    if not np.isin(bits[~raw], (8, 16, 32, 64)).all():
        raise CorruptArrayError("BIT_WIDTH_REDUCTION window bit width is not 8/16/32/64", where)
    packed = int(np.where(raw, nbytes, nbytes // width * (bits // 8)).sum())
    if int(nbytes.sum()) != length or packed > available:
        raise CorruptArrayError(
            f"BIT_WIDTH_REDUCTION windows ({int(nbytes.sum())} bytes from {packed} packed) do not "
            f"match the input length {length} and the {available} bytes stored", where,
        )


@register
@dataclass(frozen=True)
class PositiveDeltaFilter(_WindowFilter):
    filter_id: ClassVar[int] = 10
    name: ClassVar[str] = "POSITIVE_DELTA"
    max_window_size: int = 1024

    def decode(self, metadata, data, ctx: ChunkContext):
        vtype = positive_delta_value_type(ctx.datatype, ctx.version)
        if vtype is None:
            return metadata, data
        width, _ = vtype
        r = Reader(metadata, ctx.where)
        count = r.u32("POSITIVE_DELTA window count")
        table = r.array(np.dtype([("first", f"<u{width}"), ("nbytes", "<u4")]), count,
                        "POSITIVE_DELTA windows")
        src = as_uint8(data)
        nbytes = table["nbytes"].astype(np.int64)
        total = int(nbytes.sum())
        # TileDB's windows: all of one size but the last, which is raw when not whole values.
        coded = nbytes[:-1] if count and nbytes[-1] % width else nbytes
        window = int(coded[0]) if coded.size else 0
        uneven = coded.size and (window == 0 or window % width or coded[-1] > window
                                 or (coded[:-1] != window).any())
        if total > src.nbytes or uneven:
            raise CorruptArrayError(
                f"POSITIVE_DELTA windows ({total} bytes) do not fit the {src.nbytes} bytes stored",
                ctx.where,
            )
        out = src[:total].copy()
        whole = int(coded.sum())
        if whole:
            delta_kernels.positive_delta_decode(
                uint_view(src[:whole], width), uint_view(out[:whole], width), window // width,
                table["first"].copy(),
            )
        return rest(r), out

    def encode(self, metadata, data, ctx: ChunkContext):
        vtype = positive_delta_value_type(ctx.datatype, ctx.version)
        if vtype is None:
            return metadata, data
        width, signed = vtype
        src = as_uint8(data)
        windows = self.windows(src.nbytes, width)
        whole = sum(n for _, n in windows if n % width == 0)
        out = src.copy()
        values = uint_view(src[:whole], width)
        if whole:
            bias = values.dtype.type(1 << (8 * width - 1) if signed else 0)
            bad = delta_kernels.positive_delta_encode(
                values, uint_view(out[:whole], width), windows[0][1] // width, bias
            )
            if bad >= 0:
                raise DataError(f"POSITIVE_DELTA: value {bad} is smaller than the one before it")
        table = np.zeros(len(windows), np.dtype([("first", f"<u{width}"), ("nbytes", "<u4")]))
        table["nbytes"] = [n for _, n in windows]
        firsts = [s // width for s, n in windows if n % width == 0]
        table["first"][: len(firsts)] = values[firsts]
        w = Writer().u32(len(windows)).raw(table.tobytes())
        return w.getvalue() + bytes(metadata), out
