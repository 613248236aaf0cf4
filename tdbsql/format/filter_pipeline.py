"""Filter pipelines (spec: filter_pipeline.md) and the chunked tile framing (spec: tile.md).

A serialized pipeline is ``max_chunk_size u32, num_filters u32`` then per filter
``type u8, options_size u32, options``.  A filtered tile is ``num_chunks u64`` then per chunk
``original_len u32, filtered_len u32, metadata_len u32, metadata, filtered data``.

``FilterPipeline.decode_tile`` turns the bytes of one filtered tile into its original bytes (a
writable C-contiguous uint8 array, ready for the kernels); ``encode_tile`` does the reverse.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from ..errors import CorruptArrayError
from . import filters as _filters  # noqa: F401  (registers every filter)
from .binary import Reader, Writer
from .filters import ChunkContext, Filter, filter_class

_CHUNK_HEADER = struct.Struct("<III")


@dataclass(frozen=True)
class FilterPipeline:
    filters: tuple[Filter, ...] = ()
    max_chunk_size: int = 65536

    # -- serialization -------------------------------------------------------------------

    @classmethod
    def read(cls, r: Reader, version: int) -> "FilterPipeline":
        max_chunk_size = r.u32("filter pipeline max chunk size")
        num_filters = r.u32("filter pipeline filter count")
        if num_filters > 64:
            raise r.error("filter pipeline filter count", f"implausible value {num_filters}")
        filters = []
        for _ in range(num_filters):
            filter_id = r.u8("filter type")
            options_size = r.u32("filter options size")
            start = r.pos
            f = filter_class(filter_id).read_options(r, options_size, version)
            # Options may grow in later versions: honour the stated size.
            consumed = r.pos - start
            if consumed < options_size:
                r.skip(options_size - consumed, "filter options")
            elif consumed > options_size:
                raise r.error("filter options", f"{f.name} read past its {options_size} bytes")
            filters.append(f)
        return cls(tuple(filters), max_chunk_size)

    def write(self, w: Writer) -> None:
        w.u32(self.max_chunk_size).u32(len(self.filters))
        for f in self.filters:
            options = f.options_bytes()
            w.u8(f.filter_id).u32(len(options)).raw(options)

    def to_bytes(self) -> bytes:
        w = Writer()
        self.write(w)
        return w.getvalue()

    def has(self, filter_id: int) -> bool:
        return any(f.filter_id == filter_id for f in self.filters)

    def datatypes(self, datatype: int) -> list[int]:
        """The datatype each filter sees, from the tile's datatype through each filter."""
        types = []
        for f in self.filters:
            types.append(datatype)
            datatype = f.output_datatype(datatype)
        return types

    # -- decoding --------------------------------------------------------------------------

    def decode_tile(
        self,
        data: bytes | memoryview | np.ndarray,
        datatype: int,
        version: int,
        *,
        where: str = "",
        encryption: Filter | None = None,
        expected_size: int | None = None,
        offsets_out: list[np.ndarray] | None = None,
    ) -> np.ndarray:
        """Decode one filtered tile to its original bytes.

        ``encryption`` is the AES-256-GCM filter of an encrypted array (it runs first on decode,
        as TileDB appends it to every pipeline).  ``offsets_out`` collects the cell offsets that
        RLE/DICTIONARY rebuild for var-sized string tiles.
        """
        chunks = list(iter_chunks(data, where))
        total = sum(c[0] for c in chunks)
        if expected_size is not None and total != expected_size:
            raise CorruptArrayError(
                f"chunks add up to {total} bytes, expected {expected_size}", where
            )
        out = np.empty(total, dtype=np.uint8)
        filters = list(self.filters) + ([encryption] if encryption is not None else [])
        types = self.datatypes(datatype) + ([datatype] if encryption is not None else [])
        pos = 0
        for chunk_idx, (orig_len, metadata, payload) in enumerate(chunks):
            chunk_where = f"{where}, chunk {chunk_idx}" if len(chunks) > 1 else where
            decoded = self._decode_chunk(
                filters, types, metadata, payload, version, chunk_where, offsets_out
            )
            if decoded.nbytes != orig_len:
                raise CorruptArrayError(
                    f"decoded {decoded.nbytes} bytes, expected {orig_len}", chunk_where
                )
            out[pos : pos + orig_len] = decoded
            pos += orig_len
        return out

    @staticmethod
    def _decode_chunk(filters, types, metadata, payload, version, where, offsets_out) -> np.ndarray:
        meta: object = metadata
        data: object = payload
        for f, datatype in zip(reversed(filters), reversed(types)):
            ctx = ChunkContext(datatype, version, where, offsets_out=offsets_out)
            meta, data = f.decode(_as_view(meta), _as_view(data), ctx)
        return _as_uint8(data)

    # -- encoding --------------------------------------------------------------------------

    def encode_tile(
        self,
        data: np.ndarray | bytes,
        datatype: int,
        version: int,
        *,
        cell_size: int = 1,
        encryption: Filter | None = None,
        chunk_bounds: list[int] | None = None,
    ) -> bytes:
        """Filter one tile's bytes into the chunked on-disk form.

        ``chunk_bounds`` (byte offsets where chunks start) overrides the fixed-size chunking;
        var-sized tiles use it so that cells never straddle chunks.
        """
        raw = _as_uint8(data)
        bounds = chunk_bounds if chunk_bounds is not None else self.chunk_bounds(raw.nbytes, cell_size)
        filters = list(self.filters) + ([encryption] if encryption is not None else [])
        types = self.datatypes(datatype) + ([datatype] if encryption is not None else [])
        w = Writer().u64(len(bounds))
        for start, end in zip(bounds, bounds[1:] + [raw.nbytes]):
            chunk = raw[start:end]
            meta: bytes = b""
            payload: object = chunk
            for f, ftype in zip(filters, types):
                meta, payload = f.encode(meta, payload, ChunkContext(ftype, version))
            payload = bytes(_as_uint8(payload))
            w.u32(end - start).u32(len(payload)).u32(len(meta)).raw(meta).raw(payload)
        return w.getvalue()

    def chunk_bounds(self, nbytes: int, cell_size: int) -> list[int]:
        """Chunk start offsets of a fixed-size tile, as TileDB's ``compute_chunk_size``."""
        if nbytes == 0:
            return [0]
        if self.max_chunk_size == 0:
            return [0]
        chunk = min(self.max_chunk_size, nbytes)
        chunk = max(cell_size, chunk // cell_size * cell_size)
        return list(range(0, nbytes, chunk))


def iter_chunks(data, where: str):
    """Yield ``(original_len, metadata, filtered_data)`` for each chunk of a filtered tile."""
    r = Reader(data, where)
    num_chunks = r.u64("chunk count")
    # Each chunk needs at least its 12-byte header.
    if num_chunks > r.remaining // 12 + 1:
        raise r.error("chunk count", f"{num_chunks} chunks cannot fit in {r.remaining} bytes")
    for chunk_idx in range(num_chunks):
        orig_len, filtered_len, meta_len = (
            r.u32(f"chunk {chunk_idx} original length"),
            r.u32(f"chunk {chunk_idx} filtered length"),
            r.u32(f"chunk {chunk_idx} metadata length"),
        )
        metadata = r.view(meta_len, f"chunk {chunk_idx} metadata")
        payload = r.view(filtered_len, f"chunk {chunk_idx} data")
        yield orig_len, metadata, payload


def _as_view(buf) -> memoryview:
    if isinstance(buf, np.ndarray):
        return memoryview(np.ascontiguousarray(buf).view(np.uint8).reshape(-1))
    return memoryview(buf).cast("B") if not isinstance(buf, memoryview) or buf.format != "B" else buf


def _as_uint8(buf) -> np.ndarray:
    if isinstance(buf, np.ndarray):
        arr = np.ascontiguousarray(buf).view(np.uint8).reshape(-1)
        return arr if arr.flags.writeable else arr.copy()
    return np.frombuffer(buf, dtype=np.uint8).copy()
