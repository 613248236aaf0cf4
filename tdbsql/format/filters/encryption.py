"""AES-256-GCM encryption: the filter TileDB appends to every pipeline of an encrypted array.

It is never stored in a schema (its internal id 11 is not registered); readers add it with the
user's key.  Metadata: ``num_metadata_parts u32, num_data_parts u32`` then per part
``plaintext_len u32, encrypted_len u32, iv[12], tag[16]``; the data holds the encrypted metadata
parts then the encrypted data parts (the incoming metadata is encrypted, not forwarded).
Encoding draws a fresh random IV for every part.  A wrong key raises ``EncryptionKeyError``,
whose message never contains the key.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import ClassVar

from ...errors import CorruptArrayError, EncryptionKeyError
from ..binary import Reader, Writer
from .base import ChunkContext, Filter, as_uint8, located

KEY_BYTES = 32
IV_BYTES = 12
TAG_BYTES = 16


@dataclass(frozen=True)
class AesGcmFilter(Filter):
    filter_id: ClassVar[int] = 11
    name: ClassVar[str] = "AES_256_GCM"

    key: bytes = field(repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.key, (bytes, bytearray)) or len(self.key) != KEY_BYTES:
            raise EncryptionKeyError(f"an AES-256-GCM key must be {KEY_BYTES} bytes")

    def decode(self, metadata, data, ctx: ChunkContext):
        r = Reader(metadata, ctx.where)
        num_meta = r.u32("AES-256-GCM metadata part count")
        num_data = r.u32("AES-256-GCM data part count")
        if num_meta + num_data > r.remaining // (8 + IV_BYTES + TAG_BYTES):
            raise r.error("AES-256-GCM part count", f"{num_meta + num_data} parts do not fit")
        headers = [self._read_part_header(r) for _ in range(num_meta + num_data)]
        src = Reader(data, ctx.where)
        plain = [self._decrypt(src.bytes(size, "AES-256-GCM encrypted part"), iv, tag, orig, ctx)
                 for orig, size, iv, tag in headers]
        return b"".join(plain[:num_meta]), b"".join(plain[num_meta:])

    def encode(self, metadata, data, ctx: ChunkContext):
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        aes = AESGCM(bytes(self.key))
        parts = ([bytes(metadata)] if len(metadata) else []) + [as_uint8(data).tobytes()]
        w = Writer().u32(len(parts) - 1).u32(1)
        encrypted = []
        for part in parts:
            iv = os.urandom(IV_BYTES)
            sealed = aes.encrypt(iv, part, None)
            w.u32(len(part)).u32(len(part)).raw(iv).raw(sealed[len(part):])
            encrypted.append(sealed[: len(part)])
        return w.getvalue(), b"".join(encrypted)

    @staticmethod
    def _read_part_header(r: Reader) -> tuple[int, int, bytes, bytes]:
        orig = r.u32("AES-256-GCM plaintext length")
        size = r.u32("AES-256-GCM encrypted length")
        iv = r.bytes(IV_BYTES, "AES-256-GCM IV")
        tag = r.bytes(TAG_BYTES, "AES-256-GCM tag")
        return orig, size, iv, tag

    def _decrypt(self, ciphertext: bytes, iv: bytes, tag: bytes, orig: int, ctx) -> bytes:
        from cryptography.exceptions import InvalidTag
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        if orig != len(ciphertext):
            raise CorruptArrayError(
                f"AES-256-GCM part of {len(ciphertext)} bytes claims {orig} plaintext bytes",
                ctx.where,
            )
        try:
            return AESGCM(bytes(self.key)).decrypt(iv, ciphertext + tag, None)
        except InvalidTag:
            raise EncryptionKeyError(located(
                ctx.where, "AES-256-GCM decryption failed: wrong encryption key (or corrupt data)"
            )) from None
