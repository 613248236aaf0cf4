"""Filter pipelines (spec: filter_pipeline.md) and the chunked tile framing (spec: tile.md).

A serialized pipeline is ``max_chunk_size u32, num_filters u32`` then per filter
``type u8, options_size u32, options``.  A filtered tile is ``num_chunks u64`` then per chunk
``original_len u32, filtered_len u32, metadata_len u32, metadata, filtered data``.

``FilterPipeline.decode_tile`` turns the bytes of one filtered tile into its original bytes (a
writable C-contiguous uint8 array, ready for the kernels); ``encode_tile`` does the reverse.

Chunking (what TileDB 2.x writes): a fixed-size tile is cut into chunks of
``TILE_CHUNK_SIZE`` (64 KiB) rounded down to whole cells -- the pipeline's stored
``max_chunk_size`` is *not* used for that, only ``max_chunk_size == 0`` turns chunking off; a
var-sized tile is cut at cell boundaries (``var_chunk_bounds``); WEBP tiles and var-sized
string tiles with RLE or DICTIONARY are a single chunk.  An empty tile has no chunks.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, replace

import numpy as np

from ..datatypes import Datatype
from ..errors import CorruptArrayError, DataError
from .binary import Reader, Writer
from .filters import ChunkContext, Filter, filter_class  # the package registers every filter
from .filters.compression import CompressionFilter

_CHUNK_HEADER = struct.Struct("<III")
ENCRYPTION_MARKER_ID = 11  # TILEDB_FILTER_AES_256_GCM, serialized only in generic tile headers

TILE_CHUNK_SIZE = 65536  # TileDB's constants::max_tile_chunk_size
_RLE, _DICTIONARY, _WEBP = 4, 14, 18


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
            if filter_id == ENCRYPTION_MARKER_ID:
                # Encrypted generic tiles name the AES filter in their header pipeline; the
                # keyed filter is supplied by the reader, so the marker is only skipped here.
                r.skip(options_size, "encryption filter options")
                continue
            start = r.pos
            f = filter_class(filter_id, r.where).read_options(r, options_size, version)
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

    @property
    def lossy(self) -> bool:
        """Whether a filter may decode to other values than were written (float scaling, lossy
        WEBP): TileDB's tile min / max / sum then describe values no read returns."""
        return any(f.lossy for f in self.filters)

    def skip_offsets_filtering(self, datatype: int, version: int) -> bool:
        """Whether var-sized tiles of ``datatype`` keep their offsets inside the data tile
        (RLE / DICTIONARY on strings): the offsets file then holds an empty tile per tile.

        ``version`` is the array schema's format version, as in TileDB's reader."""
        ascii_, utf8 = datatype == Datatype.STRING_ASCII, datatype == Datatype.STRING_UTF8
        if self.has(_RLE) and ((version >= 12 and ascii_) or (version >= 17 and utf8)):
            return True
        return self.has(_DICTIONARY) and ((version >= 13 and ascii_) or (version >= 17 and utf8))

    def use_tile_chunking(self, is_var: bool, version: int, datatype: int) -> bool:
        """Whether TileDB cuts tiles of this pipeline into chunks (else one chunk a tile)."""
        if self.max_chunk_size == 0:
            return False
        if is_var and datatype in (Datatype.STRING_ASCII, Datatype.STRING_UTF8):
            return not ((version >= 12 and self.has(_RLE))
                        or (version >= 13 and self.has(_DICTIONARY)))
        return not self.has(_WEBP)

    def type_refusal(self, datatype: int, is_var: bool) -> str | None:
        """Why TileDB refuses this pipeline on tiles of ``datatype`` (``is_var``: var-sized
        cells) -- ``FilterPipeline::check_filter_types``, run when a schema is built: RLE or
        DICTIONARY after another filter on var-sized ASCII/UTF-8 strings, or a filter whose
        ``input_refusal`` refuses the type the filters before it emit.  None: accepted."""
        filters = self.filters
        if is_var and len(filters) > 1 and datatype in (Datatype.STRING_ASCII,
                                                        Datatype.STRING_UTF8):
            for filter_id, label in ((_RLE, "RLE"), (_DICTIONARY, "DICTIONARY")):
                if self.has(filter_id) and filters[0].filter_id != filter_id:
                    return f"{label} must be the first filter on a var-sized string"
        for f in filters:
            refusal = f.input_refusal(datatype)
            if refusal:
                return refusal
            datatype = f.output_datatype(datatype)
        return None

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
        cell_size: int = 0,
        schema_version: int | None = None,
    ) -> np.ndarray:
        """Decode one filtered tile to its original bytes.

        ``version`` is the tile's (fragment's) format version; ``schema_version`` (default: the
        same) the array schema's, which decides whether a var-sized string tile carries its
        offsets.  ``encryption`` is the AES-256-GCM filter of an encrypted array (it runs first
        on decode, as TileDB appends it to every pipeline).  ``cell_size`` is the tile's cell
        size (fixed RLE runs are that wide; 0 = the datatype's size).

        ``offsets_out``: pass a list when decoding a var-sized data tile.  If the pipeline keeps
        the offsets in the data (``skip_offsets_filtering``), the rebuilt uint64 cell start
        offsets (relative to the tile start, one per cell, no trailing end offset) are appended
        to it and the offsets file's tile -- an empty tile, ``num_chunks = 0`` -- need not be
        read; otherwise the list stays untouched.
        """
        if encryption is None and len(self.filters) == 1:
            codec = self.filters[0]
            if isinstance(codec, CompressionFilter) and codec.byte_codec:
                out = codec.decode_chunks(data, where)
                if out is not None:
                    if expected_size is not None and out.nbytes != expected_size:
                        raise CorruptArrayError(
                            f"chunks add up to {out.nbytes} bytes, expected {expected_size}",
                            where)
                    return out
        chunks = list(iter_chunks(data, where))
        total = sum(c[0] for c in chunks)
        if expected_size is not None and total != expected_size:
            raise CorruptArrayError(
                f"chunks add up to {total} bytes, expected {expected_size}", where
            )
        var_strings = offsets_out is not None and self.skip_offsets_filtering(
            datatype, version if schema_version is None else schema_version
        )
        base = ChunkContext(datatype, version, where, cell_size=cell_size, var_strings=var_strings,
                            offsets_out=offsets_out if var_strings else None)
        out = np.empty(total, dtype=np.uint8)
        filters = list(self.filters) + ([encryption] if encryption is not None else [])
        types = self.datatypes(datatype) + ([datatype] if encryption is not None else [])
        pos = 0
        for chunk_idx, (orig_len, metadata, payload) in enumerate(chunks):
            chunk_where = f"{where}, chunk {chunk_idx}" if len(chunks) > 1 else where
            found = len(offsets_out) if var_strings else 0
            ctx = replace(base, where=chunk_where)
            decoded = self._decode_chunk(filters, types, metadata, payload, ctx)
            if decoded.nbytes != orig_len:
                raise CorruptArrayError(
                    f"decoded {decoded.nbytes} bytes, expected {orig_len}", chunk_where
                )
            out[pos : pos + orig_len] = decoded
            if var_strings:
                for i in range(found, len(offsets_out)):  # offsets are per chunk
                    offsets_out[i] += np.uint64(pos)
            pos += orig_len
        return out

    @staticmethod
    def _decode_chunk(filters, types, metadata, payload, ctx: ChunkContext) -> np.ndarray:
        # Read-only, so no filter decodes in place into the caller's buffer.
        meta: object = memoryview(metadata).toreadonly()
        data: object = memoryview(payload).toreadonly()
        for f, datatype in zip(reversed(filters), reversed(types)):
            meta, data = f.decode(_as_view(meta), _as_view(data), replace(ctx, datatype=datatype))
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
        offsets: np.ndarray | None = None,
    ) -> bytes:
        """Filter one tile's bytes into the chunked on-disk form, chunked as TileDB does.

        ``offsets`` (the uint64 cell start offsets) marks a var-sized data tile: chunks then
        end at cell boundaries, and RLE / DICTIONARY string tiles fold the offsets into the
        single chunk (write an empty tile, ``EMPTY_TILE``, to the offsets file).
        ``chunk_bounds`` (byte offsets where chunks start) overrides the chunking.
        """
        raw = _as_uint8(data)
        var_strings = offsets is not None and self.skip_offsets_filtering(datatype, version)
        if chunk_bounds is not None:
            bounds = chunk_bounds
        elif raw.nbytes == 0 and offsets is None:
            bounds = []  # an empty fixed-size tile has no chunks; a var-sized one has one
        elif not self.use_tile_chunking(offsets is not None, version, datatype):
            bounds = [0]
        elif offsets is not None:
            bounds = var_chunk_bounds(offsets, raw.nbytes)
        else:
            bounds = self.chunk_bounds(raw.nbytes, cell_size)
        filters = list(self.filters) + ([encryption] if encryption is not None else [])
        types = self.datatypes(datatype) + ([datatype] if encryption is not None else [])
        w = Writer().u64(len(bounds))
        read_back = self.lossy_behind_others
        for start, end in zip(bounds, bounds[1:] + [raw.nbytes]):
            ctx = ChunkContext(datatype, version, cell_size=cell_size, var_strings=var_strings,
                               offsets_in=np.asarray(offsets, np.uint64) if var_strings else None)
            meta, payload = self._encode_chunk(filters, types, raw[start:end], ctx)
            if read_back:
                self._check_read_back(filters, types, meta, payload, ctx, raw[start:end])
            w.u32(end - start).u32(len(payload)).u32(len(meta)).raw(meta).raw(payload)
        return w.getvalue()

    @property
    def lossy_behind_others(self) -> bool:
        """A lossy filter (float scaling) behind another filter: it then rounds bytes that are
        not the values (a compressor's, a shuffle's or XOR's output) or breaks a checksum taken
        of the values, so TileDB reads the tile back as garbage or fails -- unless the rounding
        happens to be exact."""
        return any(f.lossy for f in self.filters[1:])

    @classmethod
    def _check_read_back(cls, filters, types, meta, payload, ctx, chunk: np.ndarray) -> None:
        """``DataError`` unless the encoded chunk decodes (checksums verified) to exactly
        ``chunk``: a tile TileDB would not read back as written is never written."""
        why = "float scaling follows another filter; put it first"
        try:
            decoded = cls._decode_chunk(filters, types, meta, payload, ctx)
        except DataError as err:  # CorruptArrayError, ChecksumMismatchError
            raise DataError(f"a tile could not be read back: {err} ({why})") from None
        if not np.array_equal(decoded, _as_uint8(chunk)):
            raise DataError(f"a tile would read back other values than written ({why})")

    @staticmethod
    def _encode_chunk(filters, types, chunk: np.ndarray, ctx: ChunkContext) -> tuple[bytes, bytes]:
        meta: bytes = b""
        payload: object = chunk
        for f, ftype in zip(filters, types):
            meta, payload = f.encode(meta, payload, replace(ctx, datatype=ftype))
        return bytes(meta), bytes(_as_uint8(payload))

    def chunk_bounds(self, nbytes: int, cell_size: int) -> list[int]:
        """Chunk start offsets of a fixed-size tile, as TileDB's ``compute_chunk_size``: 64 KiB
        rounded down to whole cells (at least one cell); none for an empty tile."""
        if nbytes == 0:
            return []
        if self.max_chunk_size == 0:
            return [0]
        chunk = min(TILE_CHUNK_SIZE, nbytes)
        chunk = max(cell_size, chunk // cell_size * cell_size)
        return list(range(0, nbytes, chunk))


EMPTY_TILE = bytes(8)  # a filtered tile with no chunks: what TileDB writes for skipped offsets


def var_chunk_bounds(
    offsets: np.ndarray, nbytes: int, chunk_size: int = TILE_CHUNK_SIZE
) -> list[int]:
    """Chunk starts of a var-sized tile (TileDB's ``get_var_chunk_sizes``): whole cells, a
    chunk may pass ``chunk_size`` while under half full or up to 1.5 x ``chunk_size``."""
    if nbytes <= chunk_size:
        return [0]
    from ..kernels.chunking import var_chunk_bounds as kernel

    starts = np.ascontiguousarray(offsets, dtype=np.int64).copy()
    out = np.empty(2 * len(starts) + 2, dtype=np.int64)
    count = kernel(starts, np.int64(nbytes), np.int64(chunk_size), out)
    # TileDB can end on a boundary equal to the tile size: that is no chunk.
    return [b for i, b in enumerate(out[:count].tolist()) if b < nbytes or i == 0]


def iter_chunks(data, where: str, exact: bool = True):
    """Yield ``(original_len, metadata, filtered_data)`` for each chunk of a filtered tile.
    ``exact``: ``data`` is the tile's byte range, which is its chunks exactly, so bytes left
    after the last one are an error (raised once it is yielded); else ``data`` may go on past
    the tile (a file's tiles one after another)."""
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
    if exact and r.remaining:
        raise CorruptArrayError(f"{r.remaining} bytes after the tile's {num_chunks} chunks",
                                where)


def _as_view(buf) -> memoryview:
    if isinstance(buf, np.ndarray):
        return memoryview(np.ascontiguousarray(buf).view(np.uint8).reshape(-1))
    return memoryview(buf).cast("B") if not isinstance(buf, memoryview) or buf.format != "B" else buf


def _as_uint8(buf) -> np.ndarray:
    if isinstance(buf, np.ndarray):
        arr = np.ascontiguousarray(buf).view(np.uint8).reshape(-1)
        return arr if arr.flags.writeable else arr.copy()
    return np.frombuffer(buf, dtype=np.uint8).copy()
