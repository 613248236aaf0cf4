"""Byte compressors: GZIP, ZSTD, LZ4, BZIP2 (spec: tile.md "Compression Filters").

Chunk metadata: ``num_metadata_parts u32, num_data_parts u32``, then ``(original_len u32,
compressed_len u32)`` per metadata part and per data part; the chunk data holds the compressed
metadata parts followed by the compressed data parts.  Compressors compress the metadata of
earlier filters too, so decoding returns the decompressed metadata as the metadata to forward.

The codecs come from their libraries: zlib and bz2 (stdlib), zstandard, lz4.block.  RLE,
DELTA, DOUBLE_DELTA and DICTIONARY share this framing (``CompressionFilter``) with codecs that
depend on the values' type (``compress_part`` / ``decompress_part`` get the ``ChunkContext``);
they live in ``rle``, ``delta`` and ``dictionary``.
"""

from __future__ import annotations

import bz2
import struct
import threading
import zlib
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...errors import CorruptArrayError, UnsupportedFormatError
from ..binary import Reader, Writer
from .base import ChunkContext, Filter, register

_PART = struct.Struct("<II")
_U64 = struct.Struct("<Q")
# A chunk holding one compressed data part: original, filtered and metadata lengths, then
# the codec's metadata (no metadata parts, one data part, its two lengths).
_SIMPLE_CHUNK = struct.Struct("<IIIIIII")


def _as_bytes(data) -> bytes | memoryview:
    """Bytes of a chunk buffer (numpy arrays of any dtype are taken byte for byte)."""
    if isinstance(data, np.ndarray):
        return np.ascontiguousarray(data).view(np.uint8).reshape(-1).data
    return data


@dataclass(frozen=True)
class CompressionFilter(Filter):
    """A compressor with TileDB's ``compressor type u8, level i32`` options."""

    level: int = -1
    # TileDB's ``Compressor`` enum value written in the options; it equals the filter id except
    # for DICTIONARY (7) and DELTA (8).
    compressor_code: ClassVar[int] = 0

    @classmethod
    def read_options(cls, r: Reader, size: int, version: int) -> "CompressionFilter":
        if size < 5:
            r.skip(size, f"{cls.name} options")
            return cls()
        r.u8(f"{cls.name} compressor type")
        level = r.i32(f"{cls.name} compression level")
        return cls(level=level)

    def options_bytes(self) -> bytes:
        return Writer().u8(self.compressor_code or self.filter_id).i32(self.level).getvalue()

    # One part at a time; subclasses supply the codec.
    def compress(self, data: bytes) -> bytes:  # pragma: no cover - overridden
        raise TypeError(f"{self.name} has no codec")

    def decompress(self, data: bytes, size: int) -> bytes:  # pragma: no cover - overridden
        raise TypeError(f"{self.name} has no codec")

    # Codecs that depend on the values' type (RLE, DELTA, DOUBLE_DELTA) override these two.
    def compress_part(self, data: bytes, ctx: ChunkContext) -> bytes:
        return self.compress(data)

    def decompress_part(self, data: bytes, size: int, ctx: ChunkContext) -> bytes:
        return self.decompress(data, size)

    def decode(self, metadata, data, ctx: ChunkContext):
        r = Reader(metadata, ctx.where)
        num_meta = r.u32(f"{self.name} metadata part count")
        num_data = r.u32(f"{self.name} data part count")
        if num_meta + num_data > r.remaining // 8:
            raise r.error(f"{self.name} part count", f"{num_meta + num_data} parts do not fit")
        sizes = [(r.u32(f"{self.name} part length"), r.u32(f"{self.name} part compressed length"))
                 for _ in range(num_meta + num_data)]
        src = Reader(data, ctx.where)
        parts = []
        for orig, comp in sizes:
            compressed = src.bytes(comp, f"{self.name} compressed part")
            parts.append(self._checked_decompress(compressed, orig, ctx))
        return b"".join(parts[:num_meta]), b"".join(parts[num_meta:])

    def _checked_decompress(self, compressed: bytes, size: int, ctx: ChunkContext) -> bytes:
        try:
            out = self.decompress_part(compressed, size, ctx)
        except (CorruptArrayError, UnsupportedFormatError):
            raise
        except Exception as exc:  # the codec's own error type varies per library
            raise CorruptArrayError(
                f"{self.name} decompression failed ({exc})", ctx.where
            ) from None
        if len(out) != size:
            raise CorruptArrayError(
                f"{self.name} decompressed {len(out)} bytes, expected {size}", ctx.where
            )
        return out

    @property
    def byte_codec(self) -> bool:
        """Does the codec work on bytes alone (not RLE / DELTA / DICTIONARY, which need the
        values' type)?"""
        return type(self).decompress_part is CompressionFilter.decompress_part

    def decode_chunks(self, data, where: str) -> np.ndarray | None:
        """Every chunk of a tile filtered by this codec alone, decoded straight into one
        buffer -- the common pipeline without the per-chunk framework.  None when a chunk is
        laid out otherwise (the general path then decodes the tile)."""
        view = memoryview(data).cast("B")
        size = len(view)
        if size < 8:
            return None
        (num_chunks,) = _U64.unpack_from(view, 0)
        if num_chunks > size // 28:
            return None
        chunks, pos, total = [], 8, 0
        for _ in range(num_chunks):
            if pos + 28 > size:
                return None
            orig, filtered, meta_len, num_meta, num_data, part_orig, part_comp = \
                _SIMPLE_CHUNK.unpack_from(view, pos)
            pos += 28
            if meta_len != 16 or num_meta != 0 or num_data != 1 or part_orig != orig or \
                    part_comp != filtered or pos + filtered > size:
                return None
            chunks.append((pos, orig, filtered))
            pos += filtered
            total += orig
        if pos != size:  # bytes after the chunks: the general path names the error
            return None
        out = np.empty(total, dtype=np.uint8)
        filled = 0
        for start, orig, filtered in chunks:
            try:
                part = self.decompress(view[start:start + filtered], orig)
            except Exception as exc:  # the codec's own error type varies per library
                raise CorruptArrayError(f"{self.name} decompression failed ({exc})",
                                        where) from None
            if len(part) != orig:
                raise CorruptArrayError(f"{self.name} decompressed {len(part)} bytes, "
                                        f"expected {orig}", where)
            out[filled:filled + orig] = np.frombuffer(part, dtype=np.uint8)
            filled += orig
        return out

    def encode(self, metadata, data, ctx: ChunkContext):
        meta_parts = [bytes(metadata)] if len(metadata) else []
        data_parts = [bytes(_as_bytes(data))]
        compressed = [self.compress_part(p, ctx) for p in meta_parts + data_parts]
        w = Writer().u32(len(meta_parts)).u32(len(data_parts))
        for part, comp in zip(meta_parts + data_parts, compressed):
            w.u32(len(part)).u32(len(comp))
        return w.getvalue(), b"".join(compressed)


@register
@dataclass(frozen=True)
class GzipFilter(CompressionFilter):
    filter_id: ClassVar[int] = 1
    name: ClassVar[str] = "GZIP"

    def compress(self, data: bytes) -> bytes:
        return zlib.compress(data, self.level if -1 <= self.level <= 9 else 6)

    def decompress(self, data: bytes, size: int) -> bytes:
        d = zlib.decompressobj()
        out = d.decompress(data, size)
        return out


@register
@dataclass(frozen=True)
class ZstdFilter(CompressionFilter):
    filter_id: ClassVar[int] = 2
    name: ClassVar[str] = "ZSTD"

    def compress(self, data: bytes) -> bytes:
        return _ZSTD.compressor(self.level if self.level != -1 else 3).compress(data)

    def decompress(self, data: bytes, size: int) -> bytes:
        return _ZSTD.decompressor().decompress(data, max_output_size=size)


class _ZstdCodecs(threading.local):
    """This thread's zstd contexts, made once and reused for every 64 KiB chunk (making one
    allocates its working memory, which costs more than compressing a small chunk).  Per
    thread because a zstandard context must not be used by two threads at once."""

    def __init__(self):
        self._compressors: dict = {}
        self._decompressor = None

    def compressor(self, level: int):
        found = self._compressors.get(level)
        if found is None:
            import zstandard

            # libzstd (so TileDB) clamps a level above its maximum; python-zstandard refuses it
            found = self._compressors[level] = zstandard.ZstdCompressor(
                level=min(level, zstandard.MAX_COMPRESSION_LEVEL))
        return found

    def decompressor(self):
        if self._decompressor is None:
            import zstandard

            self._decompressor = zstandard.ZstdDecompressor()
        return self._decompressor


_ZSTD = _ZstdCodecs()


@register
@dataclass(frozen=True)
class Lz4Filter(CompressionFilter):
    filter_id: ClassVar[int] = 3
    name: ClassVar[str] = "LZ4"

    def compress(self, data: bytes) -> bytes:
        import lz4.block

        return lz4.block.compress(data, store_size=False)

    def decompress(self, data: bytes, size: int) -> bytes:
        import lz4.block

        if size == 0:
            return b""
        return lz4.block.decompress(data, uncompressed_size=size)


@register
@dataclass(frozen=True)
class Bzip2Filter(CompressionFilter):
    filter_id: ClassVar[int] = 5
    name: ClassVar[str] = "BZIP2"

    def compress(self, data: bytes) -> bytes:
        level = self.level if 1 <= self.level <= 9 else 9
        return bz2.compress(data, level)

    def decompress(self, data: bytes, size: int) -> bytes:
        return bz2.decompress(data) if data else b""


@register
@dataclass(frozen=True)
class NoopFilter(Filter):
    """NONE (0): passes everything through (also how TileDB stores a "no compression" filter)."""

    filter_id: ClassVar[int] = 0
    name: ClassVar[str] = "NONE"

    def decode(self, metadata, data, ctx: ChunkContext):
        return metadata, data

    def encode(self, metadata, data, ctx: ChunkContext):
        return metadata, data
