"""DICTIONARY (14): var-sized STRING_ASCII / STRING_UTF8 tiles as word ids into a dictionary.

Metadata: the header of ``var_strings``, then ``id_bytes u8, string_len_bytes u8,
dictionary_size u32`` and the dictionary (per distinct string in order of first appearance: its
length, ``string_len_bytes`` big-endian, and its bytes).  Data: one id per cell, ``id_bytes``
big-endian.  (The format spec mentions a word count before the dictionary; TileDB writes none.)
Decoding rebuilds the cell offsets into ``ctx.offsets_out``.  TileDB applies the filter to
nothing else.  The decoding loops are ``tdbsql.kernels.dictionary``; encoding numbers the
strings with Arrow's hash-based ``dictionary_encode``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...errors import CorruptArrayError, DataError, UnsupportedFormatError
from ...kernels import dictionary as kernels
from ..binary import Reader, Writer
from .base import ChunkContext, as_uint8, located, register, rest
from .compression import CompressionFilter
from .var_strings import (
    VarStringHeader, cell_bounds, is_var_string_chunk, normalized_width, width_code,
)


@register
@dataclass(frozen=True)
class DictionaryFilter(CompressionFilter):
    filter_id: ClassVar[int] = 14
    name: ClassVar[str] = "DICTIONARY"
    compressor_code: ClassVar[int] = 7

    def decode(self, metadata, data, ctx: ChunkContext):
        if not is_var_string_chunk(ctx):
            raise UnsupportedFormatError(located(
                ctx.where, "the DICTIONARY filter only applies to var-sized ASCII/UTF-8 strings "
                "(pass offsets_out when decoding a var-sized tile)"))
        r = Reader(metadata, ctx.where)
        header = VarStringHeader.read(r, self.name)
        id_code = r.u8("DICTIONARY id width")
        len_code = r.u8("DICTIONARY string length width")
        if id_code == 0 or len_code == 0:
            raise r.error("DICTIONARY widths", "an id or string length width of 0")
        words = as_uint8(r.view(r.u32("DICTIONARY size"), "DICTIONARY words"))
        ids = as_uint8(Reader(data, ctx.where).view(header.encoded_size, "DICTIONARY ids"))
        out, offsets = _decode(ids, normalized_width(id_code), words, normalized_width(len_code),
                               header, ctx.where)
        if ctx.offsets_out is not None:
            ctx.offsets_out.append(offsets)
        return rest(r), out

    def encode(self, metadata, data, ctx: ChunkContext):
        if not is_var_string_chunk(ctx) or ctx.offsets_in is None:
            raise DataError("the DICTIONARY filter needs var-sized ASCII/UTF-8 strings and offsets")
        src = as_uint8(data)
        starts, ends = cell_bounds(ctx.offsets_in, src.nbytes)
        encoded = pc.dictionary_encode(_cells(src, starts, ends))
        word_bytes, word_offsets = _buffers(encoded.dictionary)
        id_bytes = width_code(starts.size)
        len_bytes = width_code(int(np.diff(word_offsets).max(initial=0)))
        stored_ids = encoded.indices.to_numpy().astype(f">u{id_bytes}").view(np.uint8)
        words = _serialize_words(word_bytes, word_offsets, len_bytes)
        w = VarStringHeader(src.nbytes, stored_ids.nbytes, starts.size).write(Writer())
        w.u8(id_bytes).u8(len_bytes).u32(words.nbytes).raw(words)
        return w.getvalue() + bytes(metadata), stored_ids


def _cells(src: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> pa.LargeBinaryArray:
    """The tile's strings as an Arrow array over the same bytes (no copy).  Its dictionary
    encoding numbers the distinct strings in order of first appearance, as TileDB does."""
    offsets = np.append(starts, ends[-1:] if ends.size else 0).astype(np.int64)
    return pa.LargeBinaryArray.from_buffers(
        pa.large_binary(), starts.size, [None, pa.py_buffer(offsets), pa.py_buffer(src)])


def _buffers(words: pa.LargeBinaryArray) -> tuple[np.ndarray, np.ndarray]:
    """The data buffer of ``words`` and its ``len(words) + 1`` offsets into it."""
    _, offsets, data = words.buffers()
    offsets = np.frombuffer(offsets, dtype=np.int64)[words.offset:words.offset + len(words) + 1]
    return (np.empty(0, dtype=np.uint8) if data is None else np.frombuffer(data, dtype=np.uint8),
            offsets)


def _serialize_words(values: np.ndarray, offsets: np.ndarray, len_bytes: int) -> np.ndarray:
    """Per word its length (``len_bytes`` big-endian) then its bytes: the length headers are
    scattered to their places and every other byte is word data, in order."""
    lengths = np.diff(offsets)
    record = lengths + len_bytes
    headers = ((np.cumsum(record) - record)[:, None] + np.arange(len_bytes)).ravel()
    out = np.empty(int(record.sum()), dtype=np.uint8)
    out[headers] = lengths.astype(f">u{len_bytes}").view(np.uint8)
    is_word = np.ones(out.size, dtype=bool)
    is_word[headers] = False
    out[is_word] = values[offsets[0]:offsets[-1]]
    return out


def _decode(ids, id_bytes: int, words, len_bytes: int, header: VarStringHeader, where: str):
    if ids.nbytes % id_bytes or ids.nbytes // id_bytes != header.cell_count:
        raise CorruptArrayError(
            f"DICTIONARY has {ids.nbytes} id bytes for {header.cell_count} cells", where
        )
    empty = np.empty(0, dtype=np.int64)
    count = kernels.dictionary_words(words, len_bytes, empty, empty)
    if count < 0:
        raise CorruptArrayError("DICTIONARY words run past the dictionary", where)
    starts = np.empty(count, dtype=np.int64)
    lengths = np.empty(count, dtype=np.int64)
    kernels.dictionary_words(words, len_bytes, starts, lengths)
    total = kernels.dictionary_decoded_size(ids, id_bytes, lengths)
    if total != header.data_size:
        raise CorruptArrayError(
            "DICTIONARY id outside the dictionary" if total < 0 else
            f"DICTIONARY strings take {total} bytes, expected {header.data_size}", where,
        )
    out = np.empty(total, dtype=np.uint8)
    offsets = np.empty(header.cell_count, dtype=np.uint64)
    kernels.dictionary_decode(ids, id_bytes, words, starts, lengths, out, offsets)
    return out, offsets
