"""Every TileDB filter: tiles written by ``tiledb`` decode to the values written, our encoder
writes the same bytes where the filters are deterministic, round trips, and corrupt input only
ever raises ``CorruptArrayError`` (``ChecksumMismatchError`` / ``EncryptionKeyError``)."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

tiledb = pytest.importorskip("tiledb")

from tdbsql.datatypes import Datatype as D  # noqa: E402
from tdbsql.errors import (  # noqa: E402
    ChecksumMismatchError, CorruptArrayError, DataError, EncryptionKeyError, UnsupportedFormatError,
)
from tdbsql.format.array_schema import read_array_schema  # noqa: E402
from tdbsql.format.binary import Writer  # noqa: E402
from tdbsql.format.filter_pipeline import (  # noqa: E402
    EMPTY_TILE, FilterPipeline, iter_chunks, var_chunk_bounds,
)
from tdbsql.format.filters import (  # noqa: E402
    AesGcmFilter, BitshuffleFilter, BitWidthReductionFilter, ByteshuffleFilter, Bzip2Filter,
    ChecksumMd5Filter, ChecksumSha256Filter, DeltaFilter, DictionaryFilter, DoubleDeltaFilter,
    FloatScaleFilter, GzipFilter, Lz4Filter, NoopFilter, PositiveDeltaFilter, RleFilter,
    WebpFilter, XorFilter, ZstdFilter,
)

VERSION = 22
_ids = itertools.count()
RNG = np.random.default_rng(20240601)

NP_TO_TILEDB = {
    np.dtype("int8"): D.INT8, np.dtype("uint8"): D.UINT8, np.dtype("int16"): D.INT16,
    np.dtype("uint16"): D.UINT16, np.dtype("int32"): D.INT32, np.dtype("uint32"): D.UINT32,
    np.dtype("int64"): D.INT64, np.dtype("uint64"): D.UINT64, np.dtype("float32"): D.FLOAT32,
    np.dtype("float64"): D.FLOAT64, np.dtype("datetime64[ns]"): D.DATETIME_NS,
    np.dtype("datetime64[s]"): D.DATETIME_SEC, np.dtype("datetime64[D]"): D.DATETIME_DAY,
    np.dtype("S3"): D.CHAR,
}


# -- helpers ---------------------------------------------------------------------------------


def write_array(tmp_path, filters, values, *, dtype=None, var=False, nullable=False,
                sparse=False, key=None, tiles=1, validity=None) -> Path:
    """A one-attribute array ``a`` over ``d`` in [0, n) with ``tiles`` tiles; the fragment dir."""
    uri = str(tmp_path / f"array{next(_ids)}")
    n = len(values)
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, n - 1), tile=n // tiles, dtype=np.int64))
    attr = tiledb.Attr("a", dtype=dtype if dtype is not None else values.dtype, var=var,
                       nullable=nullable, filters=tiledb.FilterList(filters, chunksize=64))
    schema = tiledb.ArraySchema(domain=dom, attrs=[attr], sparse=sparse, capacity=n // tiles)
    tiledb.Array.create(uri, schema, key=key)
    with tiledb.open(uri, "w", key=key) as arr:
        payload = values
        if validity is not None:
            import pyarrow as pa

            payload = {"a": pa.array(values, mask=~validity)}
        if sparse:
            arr[np.arange(n)] = payload
        else:
            arr[:] = payload
    (frag,) = Path(uri, "__fragments").iterdir()
    return frag


def schema_of(frag: Path, key=None):
    schema_dir = frag.parent.parent / "__schema"
    (path,) = [p for p in schema_dir.iterdir() if p.is_file()]
    return read_array_schema(path.read_bytes(), str(path), path.name, key=key)


def split_tiles(raw: bytes) -> list[bytes]:
    """Cut a data file into its filtered tiles (each is self-delimiting)."""
    tiles, pos = [], 0
    while pos < len(raw):
        end = pos + 8
        for _orig, meta, data in iter_chunks(memoryview(raw)[pos:], "tile", exact=False):
            end += 12 + len(meta) + len(data)
        tiles.append(raw[pos:end])
        pos = end
    return tiles


def var_buffers(strings: list[bytes]) -> tuple[np.ndarray, bytes]:
    offsets = np.cumsum([0] + [len(s) for s in strings[:-1]]).astype(np.uint64)
    return offsets, b"".join(strings)


# -- fixed-size attributes: tiledb writes, we decode -----------------------------------------

N_BIG = 20000  # 160 KB of int64: three 64 KiB chunks


def sorted_ints(dtype, n, step=5):
    return np.cumsum(RNG.integers(0, step, n)).astype(dtype)


def ranged(dtype, n):
    """Windows of small and large ranges, so that bit width reduction picks several widths."""
    info = np.iinfo(dtype)
    parts = [RNG.integers(100, 140, n // 4), RNG.integers(0, 60000, n // 4),
             RNG.integers(-(2**20), 2**20, n // 4), RNG.integers(info.min, info.max, n - 3 * (n // 4), dtype=dtype)]
    return np.concatenate([p.astype(dtype) for p in parts])


FIXED = [
    # id, tiledb filters, our filters, values, exact (our encoder writes the same bytes)
    ("byteshuffle+zstd int32", lambda: [tiledb.ByteShuffleFilter(), tiledb.ZstdFilter()],
     (ByteshuffleFilter(), ZstdFilter()), RNG.integers(-1000, 1000, 40000).astype(np.int32), False),
    ("byteshuffle uint16 odd", lambda: [tiledb.ByteShuffleFilter()], (ByteshuffleFilter(),),
     RNG.integers(0, 65535, 1001).astype(np.uint16), True),
    ("bitshuffle+lz4 int64", lambda: [tiledb.BitShuffleFilter(), tiledb.LZ4Filter()],
     (BitshuffleFilter(), Lz4Filter()), sorted_ints(np.int64, N_BIG), False),
    ("bitshuffle int16 tail", lambda: [tiledb.BitShuffleFilter()], (BitshuffleFilter(),),
     RNG.integers(-300, 300, 1001).astype(np.int16), True),
    ("bitshuffle int64 leftover elems", lambda: [tiledb.BitShuffleFilter()], (BitshuffleFilter(),),
     RNG.integers(0, 2**40, 1001).astype(np.int64), True),
    ("bitshuffle float32 blocks", lambda: [tiledb.BitShuffleFilter()], (BitshuffleFilter(),),
     RNG.random(5003).astype(np.float32), True),
    ("bitshuffle uint8", lambda: [tiledb.BitShuffleFilter()], (BitshuffleFilter(),),
     RNG.integers(0, 255, 70001).astype(np.uint8), True),
    ("delta+bwr+zstd int32", lambda: [tiledb.DeltaFilter(), tiledb.BitWidthReductionFilter(), tiledb.ZstdFilter()],
     (DeltaFilter(), BitWidthReductionFilter(), ZstdFilter()), sorted_ints(np.int32, 40000), False),
    ("delta uint64", lambda: [tiledb.DeltaFilter()], (DeltaFilter(),),
     RNG.integers(0, 2**64 - 1, 3000, dtype=np.uint64), True),
    ("delta int8", lambda: [tiledb.DeltaFilter()], (DeltaFilter(),),
     RNG.integers(-128, 127, 70000).astype(np.int8), True),
    ("delta reinterpret float64 as int64 + zstd",
     lambda: [tiledb.DeltaFilter(reinterp_dtype=np.int64), tiledb.ZstdFilter()],
     (DeltaFilter(reinterpret_datatype=D.INT64), ZstdFilter()), RNG.random(3000), False),
    ("bwr int16", lambda: [tiledb.BitWidthReductionFilter()], (BitWidthReductionFilter(),),
     ranged(np.int16, 4000), True),
    ("bwr uint32 window 100", lambda: [tiledb.BitWidthReductionFilter(window=100)],
     (BitWidthReductionFilter(100),), ranged(np.uint32, 4001), True),
    ("bwr int64", lambda: [tiledb.BitWidthReductionFilter()], (BitWidthReductionFilter(),),
     ranged(np.int64, 7000), True),  # one chunk: see test_bit_width_overflow_windows
    ("bwr uint64", lambda: [tiledb.BitWidthReductionFilter()], (BitWidthReductionFilter(),),
     ranged(np.int64, 3000).view(np.uint64), True),
    ("bwr datetime ns", lambda: [tiledb.BitWidthReductionFilter()], (BitWidthReductionFilter(),),
     (np.datetime64("2024-01-01", "ns") + sorted_ints(np.int64, 3000, 10**6)), True),
    ("bwr int8 passes through", lambda: [tiledb.BitWidthReductionFilter()],
     (BitWidthReductionFilter(),), RNG.integers(-5, 5, 1000).astype(np.int8), True),
    ("double delta+lz4 int64", lambda: [tiledb.DoubleDeltaFilter(), tiledb.LZ4Filter()],
     (DoubleDeltaFilter(), Lz4Filter()), sorted_ints(np.int64, N_BIG), False),
    ("double delta int8 raw", lambda: [tiledb.DoubleDeltaFilter()], (DoubleDeltaFilter(),),
     RNG.integers(-128, 127, 999).astype(np.int8), True),
    ("double delta uint32", lambda: [tiledb.DoubleDeltaFilter()], (DoubleDeltaFilter(),),
     sorted_ints(np.uint32, 40001, 1000), True),
    ("double delta int16 negative", lambda: [tiledb.DoubleDeltaFilter()], (DoubleDeltaFilter(),),
     (5000 - sorted_ints(np.int16, 777, 9)).astype(np.int16), True),
    ("double delta datetime s", lambda: [tiledb.DoubleDeltaFilter()], (DoubleDeltaFilter(),),
     np.datetime64("2020-01-01", "s") + sorted_ints(np.int64, 5000, 3600), True),
    ("double delta uint64 big", lambda: [tiledb.DoubleDeltaFilter()], (DoubleDeltaFilter(),),
     (np.uint64(2**63) + sorted_ints(np.uint64, 3000, 100)), True),
    ("double delta reinterpret float32 as int32",
     lambda: [tiledb.DoubleDeltaFilter(reinterp_dtype=np.int32)],
     (DoubleDeltaFilter(reinterpret_datatype=D.INT32),), np.linspace(1, 2, 3000, dtype=np.float32), True),
    ("double delta two values", lambda: [tiledb.DoubleDeltaFilter()], (DoubleDeltaFilter(),),
     np.array([7, -3], dtype=np.int32), True),
    ("positive delta+gzip uint32", lambda: [tiledb.PositiveDeltaFilter(), tiledb.GzipFilter()],
     (PositiveDeltaFilter(), GzipFilter()), sorted_ints(np.uint32, 40000), False),
    ("positive delta int16", lambda: [tiledb.PositiveDeltaFilter(window=100)],
     (PositiveDeltaFilter(100),), (sorted_ints(np.int16, 3001, 3) - 3000).astype(np.int16), True),
    ("positive delta uint8", lambda: [tiledb.PositiveDeltaFilter()], (PositiveDeltaFilter(),),
     np.sort(RNG.integers(0, 255, 3000)).astype(np.uint8), True),
    ("positive delta datetime day", lambda: [tiledb.PositiveDeltaFilter()], (PositiveDeltaFilter(),),
     np.datetime64("1990-01-01") + sorted_ints(np.int64, 3000, 3), True),
    ("xor+zstd float64", lambda: [tiledb.XORFilter(), tiledb.ZstdFilter()],
     (XorFilter(), ZstdFilter()), np.cumsum(RNG.random(N_BIG)), False),
    ("xor float32", lambda: [tiledb.XORFilter()], (XorFilter(),), RNG.random(3001).astype(np.float32), True),
    ("xor int8", lambda: [tiledb.XORFilter()], (XorFilter(),), RNG.integers(-128, 127, 999).astype(np.int8), True),
    ("xor then bwr (XOR emits INT64)", lambda: [tiledb.XORFilter(), tiledb.BitWidthReductionFilter()],
     (XorFilter(), BitWidthReductionFilter()), sorted_ints(np.uint64, 3000), True),
    ("rle int32 runs", lambda: [tiledb.RleFilter()], (RleFilter(),),
     np.repeat(RNG.integers(0, 3, 300), RNG.integers(1, 400, 300)).astype(np.int32), True),
    ("rle long run", lambda: [tiledb.RleFilter()], (RleFilter(),), np.zeros(70000, np.uint8), True),
    ("rle char cells of 3", lambda: [tiledb.RleFilter()], (RleFilter(),),
     np.array([b"abc"] * 50 + [b"xyz"] * 7 + [b"abc"] * 3, dtype="S3"), True),
    ("checksum md5+zstd", lambda: [tiledb.ChecksumMD5Filter(), tiledb.ZstdFilter()],
     (ChecksumMd5Filter(), ZstdFilter()), RNG.integers(0, 9, N_BIG).astype(np.int64), False),
    ("checksum sha256+bzip2", lambda: [tiledb.ChecksumSHA256Filter(), tiledb.Bzip2Filter()],
     (ChecksumSha256Filter(), Bzip2Filter()), RNG.integers(0, 9, 5000).astype(np.int32), False),
    ("zstd then checksum", lambda: [tiledb.ZstdFilter(), tiledb.ChecksumSHA256Filter()],
     (ZstdFilter(), ChecksumSha256Filter()), RNG.integers(0, 9, 5000).astype(np.int32), False),
    ("checksum md5 alone", lambda: [tiledb.ChecksumMD5Filter()], (ChecksumMd5Filter(),),
     RNG.random(3000), True),
    ("shuffle+bwr+pdelta+checksum", lambda: [tiledb.PositiveDeltaFilter(), tiledb.BitWidthReductionFilter(),
                                             tiledb.ByteShuffleFilter(), tiledb.ChecksumMD5Filter()],
     (PositiveDeltaFilter(), BitWidthReductionFilter(), ByteshuffleFilter(), ChecksumMd5Filter()),
     sorted_ints(np.int64, N_BIG), False),  # TileDB checksums each metadata part: 3 of them
    ("stacked metadata + zstd", lambda: [tiledb.PositiveDeltaFilter(), tiledb.BitWidthReductionFilter(),
                                         tiledb.ChecksumMD5Filter(), tiledb.ZstdFilter()],
     (PositiveDeltaFilter(), BitWidthReductionFilter(), ChecksumMd5Filter(), ZstdFilter()),
     sorted_ints(np.int64, N_BIG), False),
]


@pytest.mark.parametrize("case", FIXED, ids=[c[0] for c in FIXED])
def test_fixed_tiles_written_by_tiledb(tmp_path, case):
    _, make_filters, ours, values, exact = case
    frag = write_array(tmp_path, make_filters(), values)
    raw = (frag / "a0.tdb").read_bytes()
    pipeline = FilterPipeline(ours, 64)
    assert schema_of(frag).attributes[0].filters == pipeline
    datatype = NP_TO_TILEDB[values.dtype]
    cell = values.dtype.itemsize
    decoded = pipeline.decode_tile(raw, datatype, VERSION, cell_size=cell, expected_size=values.nbytes)
    assert decoded.tobytes() == values.tobytes()
    if exact:
        assert pipeline.encode_tile(values.view(np.uint8), datatype, VERSION, cell_size=cell) == raw


@pytest.mark.parametrize("values,width", [(RNG.random(5000) * 100 - 50, 4), (RNG.random(3000) * 10, 8),
                                          (RNG.random(3000).astype(np.float32) * 60, 1),
                                          (RNG.random(40000).astype(np.float32) * 600, 2)])
def test_float_scale_written_by_tiledb(tmp_path, values, width):
    scale, offset = 0.25, -3.5
    frag = write_array(tmp_path, [tiledb.FloatScaleFilter(scale, offset, width)], values)
    raw = (frag / "a0.tdb").read_bytes()
    pipeline = FilterPipeline((FloatScaleFilter(scale, offset, width),), 64)
    assert schema_of(frag).attributes[0].filters == pipeline
    datatype = NP_TO_TILEDB[values.dtype]
    decoded = pipeline.decode_tile(raw, datatype, VERSION).view(values.dtype)
    with tiledb.open(str(frag.parent.parent)) as arr:
        expected = arr[:]["a"]
    np.testing.assert_array_equal(decoded, expected)
    assert pipeline.encode_tile(values, datatype, VERSION, cell_size=values.itemsize) == raw
    # Zstd after the scaling sees the INT{8*width} values.
    frag = write_array(tmp_path, [tiledb.FloatScaleFilter(scale, offset, width), tiledb.ZstdFilter()], values)
    both = FilterPipeline((FloatScaleFilter(scale, offset, width), ZstdFilter()))
    assert both.decode_tile((frag / "a0.tdb").read_bytes(), datatype, VERSION).tobytes() == decoded.tobytes()


def test_sparse_tile_and_coordinates(tmp_path):
    values = RNG.integers(0, 100, 3000).astype(np.int32)
    frag = write_array(tmp_path, [tiledb.DoubleDeltaFilter(), tiledb.ZstdFilter()], values, sparse=True)
    pipeline = FilterPipeline((DoubleDeltaFilter(), ZstdFilter()))
    decoded = pipeline.decode_tile((frag / "a0.tdb").read_bytes(), D.INT32, VERSION)
    assert decoded.tobytes() == values.tobytes()
    coords = schema_of(frag).coords_filters  # ZSTD by default
    d = coords.decode_tile((frag / "d0.tdb").read_bytes(), D.INT64, VERSION)
    assert d.view(np.int64).tolist() == list(range(3000))


def test_validity_tile(tmp_path):
    values = RNG.integers(0, 100, 500).astype(np.int32)
    validity = RNG.random(500) < 0.7
    frag = write_array(tmp_path, [tiledb.ZstdFilter()], values, nullable=True, validity=validity)
    schema = schema_of(frag)
    assert schema.validity_filters == FilterPipeline((RleFilter(),))
    raw = (frag / "a0_validity.tdb").read_bytes()
    decoded = schema.validity_filters.decode_tile(raw, D.UINT8, VERSION, cell_size=1)
    assert decoded.tolist() == validity.astype(np.uint8).tolist()
    assert schema.validity_filters.encode_tile(validity.astype(np.uint8), D.UINT8, VERSION) == raw


# -- var-sized attributes --------------------------------------------------------------------


def words(n, pool, runs=True):
    if runs:
        return [pool[i % len(pool)] for i in RNG.integers(0, len(pool), n // 4) for _ in range(4)]
    return [pool[i] for i in RNG.integers(0, len(pool), n)]


POOL_ASCII = [b"", b"a", b"HG543232", b"HG54", b"xyz" * 30, b"q" * 300]
POOL_UTF8 = ["", "ä", "日本語", "plain", "ß" * 140, "mixed ascii ünd ütf"]

VAR_STRINGS = [
    ("rle utf8", lambda: [tiledb.RleFilter()], (RleFilter(),), POOL_UTF8, str, True),
    ("rle+zstd ascii", lambda: [tiledb.RleFilter(), tiledb.ZstdFilter()], (RleFilter(), ZstdFilter()),
     POOL_ASCII, "ascii", False),
    ("dictionary utf8", lambda: [tiledb.DictionaryFilter()], (DictionaryFilter(),), POOL_UTF8, str, True),
    ("dictionary+lz4 ascii", lambda: [tiledb.DictionaryFilter(), tiledb.LZ4Filter()],
     (DictionaryFilter(), Lz4Filter()), POOL_ASCII, "ascii", False),
]


@pytest.mark.parametrize("case", VAR_STRINGS, ids=[c[0] for c in VAR_STRINGS])
@pytest.mark.parametrize("tiles", [1, 2])
def test_var_strings_with_rle_or_dictionary(tmp_path, case, tiles):
    _, make_filters, ours, pool, dtype, exact = case
    cells = words(4000, pool)
    values = np.array(cells, dtype=object)
    frag = write_array(tmp_path, make_filters(), values, dtype=dtype, var=True, tiles=tiles)
    schema = schema_of(frag)
    pipeline = FilterPipeline(ours, 64)
    assert schema.attributes[0].filters == pipeline
    datatype = D.STRING_UTF8 if dtype is str else D.STRING_ASCII
    assert pipeline.skip_offsets_filtering(datatype, VERSION)
    assert not pipeline.use_tile_chunking(True, VERSION, datatype)
    # The offsets file holds one empty tile (num_chunks = 0) per tile.
    assert (frag / "a0.tdb").read_bytes() == EMPTY_TILE * tiles
    encoded = [c.encode() if isinstance(c, str) else c for c in cells]
    per_tile = len(cells) // tiles
    data_tiles = split_tiles((frag / "a0_var.tdb").read_bytes())
    assert len(data_tiles) == tiles
    for t, raw in enumerate(data_tiles):
        strings = encoded[t * per_tile : (t + 1) * per_tile]
        offsets, data = var_buffers(strings)
        found: list[np.ndarray] = []
        decoded = pipeline.decode_tile(raw, datatype, VERSION, offsets_out=found)
        assert decoded.tobytes() == data
        assert len(found) == 1 and found[0].dtype == np.uint64
        assert found[0].tolist() == offsets.tolist()
        if exact:
            assert pipeline.encode_tile(np.frombuffer(data, np.uint8), datatype, VERSION,
                                        offsets=offsets) == raw


def test_string_dimension_with_rle(tmp_path):
    uri = str(tmp_path / "dim")
    dim = tiledb.Dim("s", domain=(None, None), tile=None, dtype="ascii",
                     filters=[tiledb.RleFilter(), tiledb.GzipFilter(level=9)])
    schema = tiledb.ArraySchema(domain=tiledb.Domain(dim), sparse=True,
                                attrs=[tiledb.Attr("a", dtype=np.int32)])
    tiledb.Array.create(uri, schema)
    keys = [b"apple", b"apple2", b"banana", b"cherry", b"cherry2"]
    with tiledb.open(uri, "w") as arr:
        arr[np.array(keys, dtype=object)] = np.arange(5, dtype=np.int32)
    (frag,) = Path(uri, "__fragments").iterdir()
    assert (frag / "d0.tdb").read_bytes() == EMPTY_TILE  # coordinates' offsets
    found: list[np.ndarray] = []
    pipeline = FilterPipeline((RleFilter(), GzipFilter(9)))
    out = pipeline.decode_tile((frag / "d0_var.tdb").read_bytes(), D.STRING_ASCII, VERSION,
                               offsets_out=found)
    offsets, data = var_buffers(keys)
    assert out.tobytes() == data and found[0].tolist() == offsets.tolist()


def test_var_strings_before_the_version_kept_offsets():
    pipeline = FilterPipeline((RleFilter(),))
    assert not pipeline.skip_offsets_filtering(D.STRING_ASCII, 11)
    assert pipeline.skip_offsets_filtering(D.STRING_ASCII, 12)
    assert not pipeline.skip_offsets_filtering(D.STRING_UTF8, 16)
    assert not FilterPipeline((DictionaryFilter(),)).skip_offsets_filtering(D.STRING_ASCII, 12)
    assert not FilterPipeline((RleFilter(),)).skip_offsets_filtering(D.CHAR, 22)
    # Without the offsets mode the same data is fixed-size RLE of 1-byte values.
    data = np.frombuffer(b"aaabbbbbbc", np.uint8)
    offsets = np.array([0, 3], np.uint64)
    old = pipeline.encode_tile(data, D.STRING_ASCII, 11, offsets=offsets)
    found: list[np.ndarray] = []
    assert pipeline.decode_tile(old, D.STRING_ASCII, 11, offsets_out=found).tobytes() == data.tobytes()
    assert found == []


def test_var_strings_with_other_filters_keep_offsets(tmp_path):
    cells = words(30000, POOL_ASCII, runs=False)  # > 64 KiB: several chunks at cell bounds
    frag = write_array(tmp_path, [tiledb.ByteShuffleFilter()], np.array(cells, dtype=object),
                       dtype="ascii", var=True)
    schema = schema_of(frag)
    offsets, data = var_buffers(cells)
    offsets_raw = (frag / "a0.tdb").read_bytes()
    decoded_offsets = schema.offsets_filters.decode_tile(offsets_raw, D.UINT64, VERSION, cell_size=8)
    assert decoded_offsets.view(np.uint64).tolist() == offsets.tolist()
    pipeline = FilterPipeline((ByteshuffleFilter(),), 64)
    raw = (frag / "a0_var.tdb").read_bytes()
    found: list[np.ndarray] = []
    assert pipeline.decode_tile(raw, D.STRING_ASCII, VERSION, offsets_out=found).tobytes() == data
    assert found == []
    assert len(list(iter_chunks(raw, ""))) > 1
    assert pipeline.encode_tile(np.frombuffer(data, np.uint8), D.STRING_ASCII, VERSION,
                                offsets=offsets) == raw


def test_var_numeric_rle(tmp_path):
    cells = [np.full(int(k), v, np.int32) for k, v in zip(RNG.integers(1, 5, 300), RNG.integers(0, 3, 300))]
    frag = write_array(tmp_path, [tiledb.RleFilter()], np.array(cells + [np.array([1], np.int32)], dtype=object)[:-1],
                       dtype=np.int32, var=True)
    raw = (frag / "a0_var.tdb").read_bytes()
    data = np.concatenate(cells)
    pipeline = FilterPipeline((RleFilter(),))
    found: list[np.ndarray] = []
    # Value size is the type's size (4), not the cell size.
    assert pipeline.decode_tile(raw, D.INT32, VERSION, offsets_out=found, cell_size=4).tobytes() == data.tobytes()
    assert found == []
    offsets = np.cumsum([0] + [c.nbytes for c in cells[:-1]]).astype(np.uint64)
    assert pipeline.encode_tile(data, D.INT32, VERSION, cell_size=4, offsets=offsets) == raw


def test_var_chunk_bounds_heuristic():
    # Cells of 40 KiB: the second does not fit, the chunk is under half full -> it joins.
    offsets = np.arange(0, 5 * 40960, 40960, dtype=np.uint64)
    assert var_chunk_bounds(offsets, 5 * 40960) == [0, 81920, 163840]
    assert var_chunk_bounds(np.array([0], np.uint64), 100) == [0]


# -- encryption ------------------------------------------------------------------------------

KEY = b"0123456789abcdeF0123456789abcdeF"


def test_encrypted_tiles(tmp_path):
    values = RNG.integers(0, 1000, N_BIG).astype(np.int64)
    frag = write_array(tmp_path, [tiledb.BitWidthReductionFilter(), tiledb.ZstdFilter()], values,
                       key=KEY.decode())
    raw = (frag / "a0.tdb").read_bytes()
    pipeline = FilterPipeline((BitWidthReductionFilter(), ZstdFilter()))
    decoded = pipeline.decode_tile(raw, D.INT64, VERSION, encryption=AesGcmFilter(KEY))
    assert decoded.tobytes() == values.tobytes()
    with pytest.raises(CorruptArrayError):
        pipeline.decode_tile(raw, D.INT64, VERSION)  # the ciphertext is no ZSTD data
    wrong = bytes(reversed(KEY))
    with pytest.raises(EncryptionKeyError) as err:
        pipeline.decode_tile(raw, D.INT64, VERSION, encryption=AesGcmFilter(wrong), where="a0.tdb")
    for k in (KEY, wrong):
        assert k.decode() not in str(err.value) and k.hex() not in str(err.value)
    assert "a0.tdb" in str(err.value)
    assert KEY.decode() not in repr(AesGcmFilter(KEY))


def test_encrypted_var_strings_and_round_trip(tmp_path):
    cells = words(400, POOL_ASCII)
    frag = write_array(tmp_path, [tiledb.DictionaryFilter()], np.array(cells, dtype=object),
                       dtype="ascii", var=True, key=KEY.decode())
    offsets, data = var_buffers(cells)
    assert (frag / "a0.tdb").read_bytes() == EMPTY_TILE  # skipped offsets are not encrypted
    found: list[np.ndarray] = []
    pipeline = FilterPipeline((DictionaryFilter(),))
    raw = (frag / "a0_var.tdb").read_bytes()
    out = pipeline.decode_tile(raw, D.STRING_ASCII, VERSION, encryption=AesGcmFilter(KEY), offsets_out=found)
    assert out.tobytes() == data and found[0].tolist() == offsets.tolist()
    again = pipeline.encode_tile(np.frombuffer(data, np.uint8), D.STRING_ASCII, VERSION,
                                 offsets=offsets, encryption=AesGcmFilter(KEY))
    assert again != raw  # fresh IVs
    assert pipeline.decode_tile(again, D.STRING_ASCII, VERSION, encryption=AesGcmFilter(KEY),
                                offsets_out=[]).tobytes() == data


def test_bad_keys_are_rejected_without_echo():
    with pytest.raises(EncryptionKeyError) as err:
        AesGcmFilter(b"short key")
    assert "short key" not in str(err.value)


# -- WEBP ------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt,depth", [("WEBP_RGB", 3), ("WEBP_RGBA", 4), ("WEBP_BGR", 3), ("WEBP_BGRA", 4)])
@pytest.mark.parametrize("lossless", [True, False])
def test_webp_tiles_written_by_tiledb(tmp_path, fmt, depth, lossless):
    pytest.importorskip("PIL")
    height, width = 16, 20 * depth
    uri = str(tmp_path / f"img{next(_ids)}")
    webp_format = getattr(tiledb.filter.lt.WebpInputFormat, fmt)
    dom = tiledb.Domain(tiledb.Dim("y", domain=(0, height - 1), tile=height, dtype=np.uint32),
                        tiledb.Dim("x", domain=(0, width - 1), tile=width, dtype=np.uint32))
    attr = tiledb.Attr("rgb", dtype=np.uint8,
                       filters=tiledb.FilterList([tiledb.WebpFilter(webp_format, 80.0, lossless)]))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=[attr]))
    gradient = np.add.outer(np.arange(height) * 8, np.arange(width) * 2) % 256
    image = gradient.astype(np.uint8)
    if depth == 4:
        image.reshape(height, -1, 4)[:, :, 3] = 255
    with tiledb.open(uri, "w") as arr:
        arr[:] = image
    with tiledb.open(uri) as arr:
        read_back = arr[:]["rgb"]
    (frag,) = Path(uri, "__fragments").iterdir()
    ours = WebpFilter(80.0, {"WEBP_RGB": 1, "WEBP_BGR": 2, "WEBP_RGBA": 3, "WEBP_BGRA": 4}[fmt],
                      lossless, height, width)
    pipeline = FilterPipeline((ours,), 65536)
    assert schema_of(frag).attributes[0].filters == pipeline
    assert not pipeline.use_tile_chunking(False, VERSION, D.UINT8)
    decoded = pipeline.decode_tile((frag / "a0.tdb").read_bytes(), D.UINT8, VERSION)
    if lossless:
        assert decoded.tobytes() == image.tobytes()
    assert decoded.tobytes() == read_back.tobytes()  # same libwebp decoding as TileDB
    again = pipeline.encode_tile(image, D.UINT8, VERSION)
    decoded_again = pipeline.decode_tile(again, D.UINT8, VERSION)
    if lossless:
        assert decoded_again.tobytes() == image.tobytes()
    else:
        assert np.abs(decoded_again.astype(int) - image.reshape(-1).astype(int)).mean() < 8


# -- round trips -----------------------------------------------------------------------------

INT_TYPES = [D.INT8, D.UINT8, D.INT16, D.UINT16, D.INT32, D.UINT32, D.INT64, D.UINT64,
             D.DATETIME_MS, D.TIME_NS]
NP_OF = {D.INT8: "<i1", D.UINT8: "<u1", D.INT16: "<i2", D.UINT16: "<u2", D.INT32: "<i4",
         D.UINT32: "<u4", D.INT64: "<i8", D.UINT64: "<u8", D.DATETIME_MS: "<i8", D.TIME_NS: "<i8",
         D.FLOAT32: "<f4", D.FLOAT64: "<f8"}

ANY_TYPE_FILTERS = [ByteshuffleFilter(), BitshuffleFilter(), DeltaFilter(), DoubleDeltaFilter(),
                    BitWidthReductionFilter(), BitWidthReductionFilter(16), XorFilter(), RleFilter(),
                    ChecksumMd5Filter(), ChecksumSha256Filter(), GzipFilter(), ZstdFilter(),
                    Lz4Filter(), Bzip2Filter()]


@st.composite
def tiles(draw, types=INT_TYPES):
    datatype = draw(st.sampled_from(types))
    dtype = np.dtype(NP_OF[datatype])
    n = draw(st.integers(0, 3000))
    style = draw(st.sampled_from(["random", "small", "sorted", "runs"]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 256, n * dtype.itemsize, dtype=np.uint8).view(dtype)
    if style == "small":
        raw = (raw.view(np.uint8)[: n].astype(dtype) if n else raw)
    elif style == "sorted":
        raw = np.sort(raw)
    elif style == "runs":
        raw = np.repeat(raw[: max(1, n // 50)], 50)[:n] if n else raw
    return datatype, np.ascontiguousarray(raw)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tile=tiles(), stack=st.lists(st.sampled_from(ANY_TYPE_FILTERS), min_size=1, max_size=3),
       cuts=st.lists(st.integers(0, 3000), max_size=3))
def test_round_trip_integer_tiles(tile, stack, cuts):
    datatype, values = tile
    pipeline = FilterPipeline(tuple(stack))
    width = values.dtype.itemsize
    bounds = sorted({0, *(c * width for c in cuts if c < values.size)}) if values.size else None
    if any(isinstance(f, (DeltaFilter, DoubleDeltaFilter, RleFilter, XorFilter)) for f in stack[1:]):
        return  # coding earlier filters' metadata as typed values needs whole values; skip
    encoded = pipeline.encode_tile(values, datatype, VERSION, cell_size=width, chunk_bounds=bounds)
    decoded = pipeline.decode_tile(encoded, datatype, VERSION, cell_size=width, expected_size=values.nbytes)
    assert decoded.tobytes() == values.tobytes()


@settings(max_examples=60, deadline=None)
@given(tile=tiles(), window=st.integers(1, 300), extra=st.sampled_from([None, GzipFilter(), Lz4Filter()]))
def test_round_trip_positive_delta(tile, window, extra):
    datatype, values = tile
    signed = values.dtype.kind == "i"
    values = np.sort(values)
    pipeline = FilterPipeline((PositiveDeltaFilter(window),) + ((extra,) if extra else ()))
    encoded = pipeline.encode_tile(values, datatype, VERSION, cell_size=values.itemsize)
    assert pipeline.decode_tile(encoded, datatype, VERSION).tobytes() == values.tobytes()
    del signed


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 2000), width=st.sampled_from([1, 2, 4, 8]), f64=st.booleans(),
       seed=st.integers(0, 2**32 - 1))
def test_round_trip_float_scale(n, width, f64, seed):
    rng = np.random.default_rng(seed)
    scale = 0.5 if width > 1 else 1.0
    values = (rng.integers(-100, 100, n) * scale + 3.0).astype(np.float64 if f64 else np.float32)
    pipeline = FilterPipeline((FloatScaleFilter(scale, 3.0, width), XorFilter(), ZstdFilter()))
    datatype = D.FLOAT64 if f64 else D.FLOAT32
    encoded = pipeline.encode_tile(values, datatype, VERSION, cell_size=values.itemsize)
    decoded = pipeline.decode_tile(encoded, datatype, VERSION)
    assert decoded.tobytes() == values.tobytes()  # multiples of the scale survive exactly


@settings(max_examples=80, deadline=None)
@given(cells=st.lists(st.sampled_from([b"", b"a", b"bb", b"\xc3\xa4", b"x" * 300, b"y" * 70000]),
                      min_size=1, max_size=60),
       dictionary=st.booleans(), utf8=st.booleans(), extra=st.sampled_from([None, ZstdFilter(), ChecksumMd5Filter()]))
def test_round_trip_var_strings(cells, dictionary, utf8, extra):
    first = DictionaryFilter() if dictionary else RleFilter()
    pipeline = FilterPipeline((first,) + ((extra,) if extra else ()))
    datatype = D.STRING_UTF8 if utf8 else D.STRING_ASCII
    offsets, data = var_buffers(cells)
    encoded = pipeline.encode_tile(np.frombuffer(data, np.uint8), datatype, VERSION, offsets=offsets)
    found: list[np.ndarray] = []
    assert pipeline.decode_tile(encoded, datatype, VERSION, offsets_out=found).tobytes() == data
    assert found[0].tolist() == offsets.tolist()


def test_empty_and_single_value_tiles():
    for f in ANY_TYPE_FILTERS + [PositiveDeltaFilter(), FloatScaleFilter(1.0, 0.0, 4)]:
        pipeline = FilterPipeline((f,))
        datatype = D.FLOAT64 if isinstance(f, FloatScaleFilter) else D.INT64
        for values in (np.empty(0, np.int64), np.array([-5], np.int64)):
            values = values.astype(np.float64) if datatype == D.FLOAT64 else values
            encoded = pipeline.encode_tile(values, datatype, VERSION, cell_size=8)
            assert pipeline.decode_tile(encoded, datatype, VERSION).tobytes() == values.tobytes()
    assert FilterPipeline((ZstdFilter(),)).encode_tile(b"", D.INT64, VERSION) == EMPTY_TILE


def test_fixed_chunking_follows_tiledb_not_max_chunk_size():
    pipeline = FilterPipeline((ZstdFilter(),), max_chunk_size=64)
    assert pipeline.chunk_bounds(200000, 8) == [0, 65536, 131072, 196608]
    assert pipeline.chunk_bounds(96, 12) == [0]
    assert pipeline.chunk_bounds(65544, 12) == [0, 65532]
    assert FilterPipeline((ZstdFilter(),), max_chunk_size=0).chunk_bounds(200000, 8) == [0]


# -- corrupt input ---------------------------------------------------------------------------

CORRUPTIBLE = [
    (ByteshuffleFilter(),), (BitshuffleFilter(),), (DeltaFilter(),), (DoubleDeltaFilter(),),
    (BitWidthReductionFilter(),), (PositiveDeltaFilter(),), (XorFilter(),), (RleFilter(),),
    (ChecksumMd5Filter(),), (ChecksumSha256Filter(),), (ZstdFilter(),), (GzipFilter(),),
    (Lz4Filter(),), (Bzip2Filter(),), (FloatScaleFilter(0.5, 0.0, 2),),
    (PositiveDeltaFilter(), BitWidthReductionFilter(), ZstdFilter()),
]


def _sample_tile(filters) -> tuple[int, np.ndarray]:
    if isinstance(filters[0], FloatScaleFilter):
        return D.FLOAT64, np.arange(300, dtype=np.float64) / 2
    return D.INT64, np.repeat(np.arange(0, 3000, 7, dtype=np.int64), 3)


def _rebuild_single_chunk(orig: int, meta: bytes, data: bytes) -> bytes:
    return Writer().u64(1).u32(orig).u32(len(data)).u32(len(meta)).raw(meta).raw(data).getvalue()


@pytest.mark.parametrize("filters", CORRUPTIBLE, ids=lambda fs: "+".join(f.name for f in fs))
def test_truncated_metadata_raises_corrupt_array_error(filters):
    pipeline = FilterPipeline(filters)
    datatype, values = _sample_tile(filters)
    encoded = pipeline.encode_tile(values, datatype, VERSION, cell_size=8)
    ((orig, meta, data),) = [(o, bytes(m), bytes(d)) for o, m, d in iter_chunks(encoded, "")]
    for cut in sorted({0, 1, 3, 4, 7, 8, 9, len(meta) // 2, len(meta) - 1}):
        if cut >= len(meta):
            continue
        broken = _rebuild_single_chunk(orig, meta[:cut], data)
        with pytest.raises(CorruptArrayError):
            pipeline.decode_tile(broken, datatype, VERSION, where="a0.tdb")
    for cut in (0, len(data) // 2, len(data) - 1):
        broken = _rebuild_single_chunk(orig, meta, data[:cut])
        with pytest.raises(CorruptArrayError):
            pipeline.decode_tile(broken, datatype, VERSION)


@settings(max_examples=150, deadline=None)
@given(which=st.integers(0, len(CORRUPTIBLE) - 1), pos=st.integers(0, 10**6), byte=st.integers(0, 255))
def test_random_corruption_never_crashes(which, pos, byte):
    filters = CORRUPTIBLE[which]
    pipeline = FilterPipeline(filters)
    datatype, values = _sample_tile(filters)
    encoded = bytearray(pipeline.encode_tile(values, datatype, VERSION, cell_size=8))
    index = 20 + pos % (len(encoded) - 20)  # past the chunk header
    encoded[index] = byte
    try:
        out = pipeline.decode_tile(bytes(encoded), datatype, VERSION)
    except CorruptArrayError:
        return
    assert out.nbytes == values.nbytes


def test_checksum_mismatch():
    values = np.arange(1000, dtype=np.int32)
    for f in (ChecksumMd5Filter(), ChecksumSha256Filter()):
        pipeline = FilterPipeline((f,))
        encoded = bytearray(pipeline.encode_tile(values, D.INT32, VERSION, cell_size=4))
        encoded[-10] ^= 1
        with pytest.raises(ChecksumMismatchError):
            pipeline.decode_tile(bytes(encoded), D.INT32, VERSION, where="a0.tdb, tile 0")
    # A checksum over metadata: corrupt the forwarded bit-width header.
    pipeline = FilterPipeline((BitWidthReductionFilter(), ChecksumMd5Filter()))
    encoded = pipeline.encode_tile(np.arange(1000, dtype=np.int64), D.INT64, VERSION, cell_size=8)
    ((orig, meta, data),) = [(o, bytearray(m), bytes(d)) for o, m, d in iter_chunks(encoded, "")]
    meta[-3] ^= 0xFF
    with pytest.raises(ChecksumMismatchError):
        pipeline.decode_tile(_rebuild_single_chunk(orig, bytes(meta), data), D.INT64, VERSION)


def test_corrupt_var_string_tiles():
    cells = [b"abc", b"abc", b"", b"zz"]
    offsets, data = var_buffers(cells)
    for f in (RleFilter(), DictionaryFilter()):
        pipeline = FilterPipeline((f,))
        encoded = pipeline.encode_tile(np.frombuffer(data, np.uint8), D.STRING_ASCII, VERSION, offsets=offsets)
        ((orig, meta, payload),) = [(o, bytes(m), bytes(d)) for o, m, d in iter_chunks(encoded, "")]
        for cut in range(len(meta)):
            with pytest.raises(CorruptArrayError):
                pipeline.decode_tile(_rebuild_single_chunk(orig, meta[:cut], payload),
                                     D.STRING_ASCII, VERSION, offsets_out=[])
        for pos in range(len(payload)):
            broken = bytearray(payload)
            broken[pos] ^= 0xFF
            try:
                pipeline.decode_tile(_rebuild_single_chunk(orig, meta, bytes(broken)),
                                     D.STRING_ASCII, VERSION, offsets_out=[])
            except CorruptArrayError:
                pass


def test_dictionary_outside_var_strings_is_unsupported():
    with pytest.raises(UnsupportedFormatError):
        FilterPipeline((DictionaryFilter(),)).decode_tile(
            Writer().u64(1).u32(4).u32(4).u32(0).raw(b"abcd").getvalue(), D.INT32, VERSION
        )


def test_missing_pillow_names_the_extra(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_pil(name, *args, **kwargs):
        if name == "PIL" or name.startswith("PIL."):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pil)
    from tdbsql.errors import MissingExtraError

    with pytest.raises(MissingExtraError, match=r"tdbsql\[webp\]"):
        FilterPipeline((WebpFilter(100.0, 1, True, 2, 6),)).decode_tile(
            Writer().u64(1).u32(12).u32(0).u32(4).u32(0).getvalue(), D.UINT8, VERSION
        )


# -- options and version conditions ----------------------------------------------------------

EVERY_FILTER = (
    GzipFilter(5), ZstdFilter(-1), Lz4Filter(1), RleFilter(), Bzip2Filter(9), DoubleDeltaFilter(reinterpret_datatype=D.UINT16),
    BitWidthReductionFilter(128), BitshuffleFilter(), ByteshuffleFilter(), PositiveDeltaFilter(64),
    ChecksumMd5Filter(), ChecksumSha256Filter(), DictionaryFilter(), FloatScaleFilter(0.25, -1.0, 2),
    XorFilter(), WebpFilter(75.0, 3, True, 100, 400), DeltaFilter(reinterpret_datatype=D.INT8),
    NoopFilter(),
)


def test_every_filter_options_round_trip():
    from tdbsql.format.binary import Reader

    pipeline = FilterPipeline(EVERY_FILTER, 1000)
    assert FilterPipeline.read(Reader(pipeline.to_bytes()), VERSION) == pipeline
    assert len(WebpFilter().options_bytes()) == 12


@pytest.mark.parametrize("cls,since", [(DeltaFilter, 19), (DoubleDeltaFilter, 20)])
def test_reinterpret_datatype_option_by_version(cls, since):
    from tdbsql.format.binary import Reader

    def pipeline_bytes(options: bytes) -> bytes:
        return Writer().u32(65536).u32(1).u8(cls.filter_id).u32(len(options)).raw(options).getvalue()

    code = cls.compressor_code
    old = FilterPipeline.read(Reader(pipeline_bytes(Writer().u8(code).i32(-1).getvalue())), since - 1)
    assert old == FilterPipeline((cls(),), 65536)
    new = FilterPipeline.read(Reader(pipeline_bytes(Writer().u8(code).i32(-1).u8(D.INT16).getvalue())), since)
    assert new == FilterPipeline((cls(reinterpret_datatype=D.INT16),), 65536)
    assert new.datatypes(D.FLOAT32) == [D.FLOAT32] and new.filters[0].output_datatype(D.FLOAT32) == D.INT16
    with pytest.raises(CorruptArrayError):  # options shorter than the version requires
        FilterPipeline.read(Reader(pipeline_bytes(Writer().u8(code).i32(-1).getvalue())), since)


@pytest.mark.parametrize("f", [BitWidthReductionFilter(), PositiveDeltaFilter()], ids=lambda f: f.name)
def test_dates_were_left_alone_before_version_20(f):
    values = np.datetime64("2001-01-01", "ms") + np.arange(0, 5000, 3)
    pipeline = FilterPipeline((f,))
    for version, changed in ((19, False), (20, True)):
        encoded = pipeline.encode_tile(values, D.DATETIME_MS, version, cell_size=8)
        ((_, meta, data),) = list(iter_chunks(encoded, ""))
        assert (len(meta) > 0) == changed and (bytes(data) != values.tobytes()) == changed
        assert pipeline.decode_tile(encoded, D.DATETIME_MS, version).tobytes() == values.tobytes()
    # A version-20 tile read as version 19 is not decoded: the stored bytes come back.
    encoded = pipeline.encode_tile(values, D.DATETIME_MS, 20, cell_size=8)
    try:
        assert pipeline.decode_tile(encoded, D.DATETIME_MS, 19).tobytes() != values.tobytes()
    except CorruptArrayError:
        pass  # bit width reduction changed the size


def test_xor_and_float_scale_feed_later_filters_their_output_type():
    pipeline = FilterPipeline((FloatScaleFilter(0.5, 0.0, 2), XorFilter(), DeltaFilter(), ZstdFilter()))
    assert pipeline.datatypes(D.FLOAT64) == [D.FLOAT64, D.INT16, D.INT16, D.INT16]
    assert FilterPipeline((XorFilter(), BitWidthReductionFilter())).datatypes(D.FLOAT32) == [D.FLOAT32, D.INT32]


@settings(max_examples=60, deadline=None)
@given(tile=tiles(types=[D.FLOAT32, D.FLOAT64, D.INT8, D.UINT16]),
       stack=st.lists(st.sampled_from([ByteshuffleFilter(), BitshuffleFilter(), XorFilter(),
                                       BitWidthReductionFilter(), ChecksumSha256Filter(), Lz4Filter()]),
                      min_size=1, max_size=3))
def test_round_trip_float_and_byte_tiles(tile, stack):
    datatype, values = tile
    pipeline = FilterPipeline(tuple(stack))
    try:
        encoded = pipeline.encode_tile(values, datatype, VERSION, cell_size=values.itemsize)
    except DataError as e:  # XOR after a filter leaving part values (TileDB cannot read it)
        assert "XOR input" in str(e) and XorFilter() in stack[1:]
        return
    assert pipeline.decode_tile(encoded, datatype, VERSION).tobytes() == values.tobytes()


def test_truncated_encryption_metadata():
    pipeline = FilterPipeline((ZstdFilter(),))
    values = np.arange(500, dtype=np.int64)
    encoded = pipeline.encode_tile(values, D.INT64, VERSION, cell_size=8, encryption=AesGcmFilter(KEY))
    ((orig, meta, data),) = [(o, bytes(m), bytes(d)) for o, m, d in iter_chunks(encoded, "")]
    for cut in range(0, len(meta), 5):
        with pytest.raises(CorruptArrayError):
            pipeline.decode_tile(_rebuild_single_chunk(orig, meta[:cut], data), D.INT64, VERSION,
                                 encryption=AesGcmFilter(KEY))
    broken = bytearray(data)
    broken[3] ^= 1
    with pytest.raises(EncryptionKeyError):
        pipeline.decode_tile(_rebuild_single_chunk(orig, meta, bytes(broken)), D.INT64, VERSION,
                             encryption=AesGcmFilter(KEY))


# --- which types a pipeline accepts (TileDB's check_filter_types) -----------------------------

_TYPE_CASES = [  # (tiledb Attr dtype, var, our datatype)
    (np.int8, False, D.INT8), (np.uint8, False, D.UINT8), (np.int16, False, D.INT16),
    (np.uint32, False, D.UINT32), (np.int64, False, D.INT64), (np.float32, False, D.FLOAT32),
    (np.float64, False, D.FLOAT64), (np.bool_, False, D.BOOL), ("S1", False, D.CHAR),
    ("ascii", True, D.STRING_ASCII), (str, True, D.STRING_UTF8), (bytes, True, D.CHAR),
    ("blob", True, D.BLOB), ("datetime64[ms]", False, D.DATETIME_MS),
    ("timedelta64[ns]", False, D.TIME_NS),
]
_PIPELINES = [  # (tiledb filters, ours)
    ([tiledb.DoubleDeltaFilter()], [DoubleDeltaFilter()]),
    ([tiledb.DeltaFilter()], [DeltaFilter()]),
    ([tiledb.DoubleDeltaFilter(reinterp_dtype=np.int64)],
     [DoubleDeltaFilter(reinterpret_datatype=D.INT64)]),
    ([tiledb.DeltaFilter(reinterp_dtype=np.float32)], [DeltaFilter(reinterpret_datatype=D.FLOAT32)]),
    ([tiledb.BitWidthReductionFilter()], [BitWidthReductionFilter()]),
    ([tiledb.PositiveDeltaFilter()], [PositiveDeltaFilter()]),
    ([tiledb.FloatScaleFilter(1.0, 0.0, 4)], [FloatScaleFilter(1.0, 0.0, 4)]),
    ([tiledb.XORFilter()], [XorFilter()]),
    ([tiledb.WebpFilter()], [WebpFilter()]),
    ([tiledb.FloatScaleFilter(1.0, 0.0, 2), tiledb.DoubleDeltaFilter()],  # delta sees INT16
     [FloatScaleFilter(1.0, 0.0, 2), DoubleDeltaFilter()]),
    ([tiledb.XORFilter(), tiledb.BitWidthReductionFilter()],  # bit width sees a signed int
     [XorFilter(), BitWidthReductionFilter()]),
    ([tiledb.ZstdFilter(), tiledb.RleFilter()], [ZstdFilter(), RleFilter()]),
    ([tiledb.DictionaryFilter(), tiledb.ZstdFilter()], [DictionaryFilter(), ZstdFilter()]),
]


def _tiledb_refuses(dtype, var: bool, filters) -> bool:
    # dense 2-D, as WEBP needs; the filter checks run when the attribute is built
    dom = tiledb.Domain(tiledb.Dim("y", domain=(0, 9), tile=10, dtype=np.int64),
                        tiledb.Dim("x", domain=(0, 29), tile=30, dtype=np.int64))
    try:
        attr = tiledb.Attr("a", dtype=dtype, var=var, filters=tiledb.FilterList(filters))
        tiledb.ArraySchema(domain=dom, sparse=False, attrs=[attr]).check()
    except tiledb.TileDBError:
        return True
    return False


@pytest.mark.parametrize("case", range(len(_PIPELINES)))
def test_pipeline_type_refusals_match_tiledb(case):
    """FilterPipeline.type_refusal (each filter's input_refusal along the pipeline, and RLE /
    DICTIONARY first on var-sized strings) refuses exactly what TileDB's schema check does."""
    theirs_filters, ours_filters = _PIPELINES[case]
    pipeline = FilterPipeline(tuple(ours_filters))
    for dtype, var, datatype in _TYPE_CASES:
        refusal = pipeline.type_refusal(datatype, var)
        assert (refusal is not None) == _tiledb_refuses(dtype, var, theirs_filters), \
            (dtype, var, [f.name for f in ours_filters], refusal)


@pytest.mark.parametrize("make", [BitWidthReductionFilter, PositiveDeltaFilter])
def test_bool_under_windowed_filters_round_trips_through_tiledb(tmp_path, make):
    """TileDB counts BOOL as an integer: a schema may put bit width reduction (which passes it
    through) or positive delta (uint8 deltas) on it; what tdbsql writes reads back in tiledb."""
    import tdbsql

    uri = str(tmp_path / "b")
    flt = tdbsql.BitWidthReduction() if make is BitWidthReductionFilter else tdbsql.PositiveDelta()
    tdbsql.create(uri, tdbsql.Schema([tdbsql.Dim("d", "int64", (0, 99), 10)],
                                     [tdbsql.Attr("b", "bool", filters=[flt])], sparse=True))
    values = np.array([False, False, True, True, True], dtype=bool)  # never decreasing
    tdbsql.write(uri, {"d": np.arange(5), "b": values})
    with tiledb.open(uri) as A:
        assert A[:]["b"].tolist() == values.tolist()
    assert tdbsql.query("SELECT b FROM array ORDER BY d", uri).column("b").to_pylist() == \
        values.tolist()
