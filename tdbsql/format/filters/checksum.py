"""CHECKSUM_MD5 (12) and CHECKSUM_SHA256 (13): verify the bytes, change nothing.

Metadata: ``num_metadata_checksums u32, num_data_checksums u32``, then per checksum
``checksummed_bytes u64`` and the digest (16 / 32 bytes); the metadata checksums cover
consecutive pieces of the metadata that follows this header, the data checksums consecutive
pieces of the chunk data.  A mismatch raises ``ChecksumMismatchError``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import ClassVar

from ...errors import ChecksumMismatchError
from ..binary import Reader, Writer
from .base import ChunkContext, Filter, as_uint8, register, rest


@dataclass(frozen=True)
class ChecksumFilter(Filter):
    """A checksum over every metadata and data part; subclasses name the hash."""

    algorithm: ClassVar[str] = ""
    digest_size: ClassVar[int] = 0

    def decode(self, metadata, data, ctx: ChunkContext):
        r = Reader(metadata, ctx.where)
        meta_sums, data_sums = self._read_header(r)
        forwarded = rest(r)
        self._verify(forwarded, meta_sums, "metadata", ctx.where)
        self._verify(data, data_sums, "data", ctx.where)
        return forwarded, data

    def encode(self, metadata, data, ctx: ChunkContext):
        meta = bytes(metadata)
        payload = as_uint8(data)
        meta_parts = [meta] if meta else []
        w = Writer().u32(len(meta_parts)).u32(1)
        for part in meta_parts:
            w.u64(len(part)).raw(self._digest(part))
        w.u64(payload.nbytes).raw(self._digest(payload))
        return w.getvalue() + meta, payload

    def _read_header(self, r: Reader) -> tuple[list[tuple[int, bytes]], list[tuple[int, bytes]]]:
        num_meta = r.u32(f"{self.name} metadata checksum count")
        num_data = r.u32(f"{self.name} data checksum count")
        entry = 8 + self.digest_size
        if num_meta + num_data > r.remaining // entry:
            raise r.error(f"{self.name} checksum count",
                          f"{num_meta + num_data} checksums do not fit in the metadata")
        sums = [(r.u64(f"{self.name} checksummed byte count"),
                 r.bytes(self.digest_size, f"{self.name} digest"))
                for _ in range(num_meta + num_data)]
        return sums[:num_meta], sums[num_meta:]

    def _verify(self, buf, sums: list[tuple[int, bytes]], what: str, where: str) -> None:
        view = memoryview(buf).cast("B")
        total = sum(size for size, _ in sums)
        if total > view.nbytes:
            raise ChecksumMismatchError(
                f"{self.name} covers {total} {what} bytes but only {view.nbytes} are there", where
            )
        pos = 0
        for index, (size, expected) in enumerate(sums):
            if self._digest(view[pos : pos + size]) != expected:
                raise ChecksumMismatchError(
                    f"{self.name} checksum mismatch in {what} part {index} ({size} bytes)", where
                )
            pos += size

    def _digest(self, part) -> bytes:
        return hashlib.new(self.algorithm, part).digest()


@register
@dataclass(frozen=True)
class ChecksumMd5Filter(ChecksumFilter):
    filter_id: ClassVar[int] = 12
    name: ClassVar[str] = "CHECKSUM_MD5"
    algorithm: ClassVar[str] = "md5"
    digest_size: ClassVar[int] = 16


@register
@dataclass(frozen=True)
class ChecksumSha256Filter(ChecksumFilter):
    filter_id: ClassVar[int] = 13
    name: ClassVar[str] = "CHECKSUM_SHA256"
    algorithm: ClassVar[str] = "sha256"
    digest_size: ClassVar[int] = 32
