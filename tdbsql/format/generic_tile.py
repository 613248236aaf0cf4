"""Generic tiles (spec: generic_tile.md): a self-describing filtered tile.

Header: ``version u32, persisted_size u64, tile_size u64, datatype u8, cell_size u64,
encryption_type u8, pipeline_size u32, pipeline``, then ``persisted_size`` bytes of chunked,
filtered tile data.  Schemas, fragment metadata sections, array metadata, delete conditions and
consolidated files are generic tiles.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..datatypes import Datatype, EncryptionType
from ..errors import EncryptionKeyError, UnsupportedFormatError
from .binary import Reader, Writer
from .filter_pipeline import ENCRYPTION_MARKER_ID, FilterPipeline

HEADER_FIXED_SIZE = 4 + 8 + 8 + 1 + 8 + 1 + 4
# The newest TileDB format version tdbsql reads: of generic tiles, schemas and fragments.
MAX_READ_VERSION = 23


@dataclass(frozen=True)
class GenericTileHeader:
    version: int
    persisted_size: int
    tile_size: int
    datatype: int
    cell_size: int
    encryption_type: int
    pipeline: FilterPipeline
    header_size: int


def read_header(r: Reader) -> GenericTileHeader:
    start = r.pos
    version = r.u32("generic tile version")
    if version > MAX_READ_VERSION:  # its header or pipeline may be laid out differently
        where = f"{r.where}: " if r.where else ""
        raise UnsupportedFormatError(f"{where}generic tile format version {version} is newer "
                                     f"than the versions tdbsql reads (up to {MAX_READ_VERSION})")
    persisted_size = r.u64("generic tile persisted size")
    tile_size = r.u64("generic tile size")
    datatype = r.u8("generic tile datatype")
    cell_size = r.u64("generic tile cell size")
    encryption_type = r.u8("generic tile encryption type")
    pipeline_size = r.u32("generic tile filter pipeline size")
    pipeline = FilterPipeline.read(Reader(r.view(pipeline_size, "generic tile filter pipeline"), r.where), version)
    if persisted_size > r.remaining:
        raise r.error("generic tile persisted size", f"{persisted_size} exceeds the {r.remaining} bytes left")
    return GenericTileHeader(version, persisted_size, tile_size, datatype, cell_size,
                             encryption_type, pipeline, r.pos - start)


def read_generic_tile(r: Reader, key: bytes | None = None) -> np.ndarray:
    """Read and decode the generic tile at ``r.pos``; advance ``r`` past it."""
    header = read_header(r)
    payload = r.view(header.persisted_size, "generic tile data")
    encryption = _encryption_filter(header.encryption_type, key, r.where)
    return header.pipeline.decode_tile(
        payload, header.datatype, header.version, where=r.where,
        encryption=encryption, expected_size=header.tile_size,
    )


def decode_generic_tile(data, where: str, key: bytes | None = None, offset: int = 0) -> np.ndarray:
    return read_generic_tile(Reader(data, where, offset), key)


def encode_generic_tile(
    data: bytes | np.ndarray,
    version: int,
    *,
    pipeline: FilterPipeline = FilterPipeline(),
    datatype: int = Datatype.CHAR,
    cell_size: int = 1,
    key: bytes | None = None,
) -> bytes:
    raw = np.frombuffer(bytes(data), dtype=np.uint8) if not isinstance(data, np.ndarray) else data
    encryption_type = EncryptionType.AES_256_GCM if key is not None else EncryptionType.NO_ENCRYPTION
    encryption = _encryption_filter(encryption_type, key, "")
    body = pipeline.encode_tile(raw, datatype, version, cell_size=cell_size, encryption=encryption)
    pipe = pipeline.to_bytes()
    if encryption is not None:  # the header names the AES filter after the others, no options
        pipe = (Writer().u32(pipeline.max_chunk_size).u32(len(pipeline.filters) + 1).getvalue()
                + pipe[8:] + Writer().u8(ENCRYPTION_MARKER_ID).u32(0).getvalue())
    w = Writer().u32(version).u64(len(body)).u64(raw.nbytes).u8(datatype).u64(cell_size)
    w.u8(encryption_type).u32(len(pipe)).raw(pipe).raw(body)
    return w.getvalue()


def _encryption_filter(encryption_type: int, key: bytes | None, where: str):
    if encryption_type == EncryptionType.NO_ENCRYPTION:
        return None
    if encryption_type != EncryptionType.AES_256_GCM:
        raise EncryptionKeyError(f"{where}: unknown encryption type {encryption_type}")
    if key is None:
        raise EncryptionKeyError("the array is encrypted (AES-256-GCM): pass its key")
    from .filters.encryption import AesGcmFilter

    return AesGcmFilter(key)
