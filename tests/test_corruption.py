"""Bad input on disk: truncated, flipped, missing or foreign files give a clear tdbsql error
naming the file -- never another exception, a hang or a huge allocation."""

from __future__ import annotations

import glob
import os
import shutil
import zlib

import numpy as np
import pytest
import tiledb

import tdbsql
from tdbsql.errors import ArrayNotFoundError, ChecksumMismatchError, CorruptArrayError


def _make(uri: str, filters) -> str:
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 9999), tile=1000, dtype=np.int64))
    schema = tiledb.ArraySchema(domain=dom, sparse=True, capacity=500, attrs=[
        tiledb.Attr("a", dtype=np.int64, filters=filters),
        tiledb.Attr("s", dtype=str, var=True, filters=filters),
    ])
    tiledb.Array.create(uri, schema)
    d = np.arange(0, 10000, 3, dtype=np.int64)
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[d] = {"a": d * 7, "s": np.array([f"v{x}" for x in d], dtype=object)}
    return uri


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    root = tmp_path_factory.mktemp("corrupt")
    return {
        "zstd": _make(str(root / "zstd"), tiledb.FilterList([tiledb.ZstdFilter()])),
        "md5": _make(str(root / "md5"), tiledb.FilterList([tiledb.ChecksumMD5Filter()])),
        "sha": _make(str(root / "sha"), tiledb.FilterList([tiledb.ChecksumSHA256Filter(),
                                                           tiledb.LZ4Filter()])),
    }


@pytest.fixture
def copy_of(pristine, tmp_path):
    def make(kind: str) -> str:
        target = str(tmp_path / kind)
        shutil.copytree(pristine[kind], target)
        return target
    return make


def _fragment(uri: str) -> str:
    return glob.glob(os.path.join(uri, "__fragments", "*"))[0]


def _read_all(uri: str):
    return tdbsql.query("SELECT * FROM array", uri)


def _flip(path: str, offset: int) -> None:
    with open(path, "r+b") as f:
        f.seek(offset)
        byte = f.read(1)
        f.seek(offset)
        f.write(bytes([byte[0] ^ 0xFF]))


def test_pristine_reads(pristine):
    assert _read_all(pristine["zstd"]).num_rows == 3334


@pytest.mark.parametrize("name", ["a0.tdb", "a1.tdb", "a1_var.tdb", "d0.tdb",
                                  "__fragment_metadata.tdb"])
def test_truncated_file_names_it(copy_of, name):
    uri = copy_of("zstd")
    path = os.path.join(_fragment(uri), name)
    size = os.path.getsize(path)
    with open(path, "r+b") as f:
        f.truncate(size // 2)
    with pytest.raises(CorruptArrayError) as err:
        _read_all(uri)
    assert name in str(err.value) or os.path.basename(_fragment(uri)) in str(err.value)


def test_missing_data_file(copy_of):
    uri = copy_of("zstd")
    os.remove(os.path.join(_fragment(uri), "a0.tdb"))
    with pytest.raises(CorruptArrayError, match="a0.tdb"):
        _read_all(uri)


@pytest.mark.parametrize("name", ["a0.tdb", "a1_var.tdb", "d0.tdb", "__fragment_metadata.tdb"])
def test_byte_flips_never_escape(copy_of, name):
    """Flip bytes all over a file: every read either succeeds or raises a tdbsql error."""
    uri = copy_of("zstd")
    path = os.path.join(_fragment(uri), name)
    original = open(path, "rb").read()
    rng = np.random.default_rng(zlib.crc32(name.encode()))  # the same offsets every run
    offsets = sorted(set(rng.integers(0, len(original), 24).tolist()) | {0, 8, len(original) - 1})
    for offset in offsets:
        with open(path, "wb") as f:
            f.write(original)
        _flip(path, offset)
        try:
            _read_all(uri)
        except tdbsql.Error:
            pass


def test_dense_flag_in_a_sparse_array_is_corruption(copy_of):
    """A footer claiming a dense fragment in a sparse array (one flipped byte) is refused by
    name, not read with the wrong tile count (which indexed past the R-tree)."""
    uri = copy_of("zstd")
    path = os.path.join(_fragment(uri), "__fragment_metadata.tdb")
    data = bytearray(open(path, "rb").read())
    footer = len(data) - 8 - int.from_bytes(data[-8:], "little")
    name_length = int.from_bytes(data[footer + 4:footer + 12], "little")
    flag = footer + 12 + name_length  # version u32, schema name (u64 length + bytes), dense u8
    assert data[flag] == 0
    data[flag] = 0xFF
    open(path, "wb").write(bytes(data))
    with pytest.raises(CorruptArrayError, match="dense fragment in a sparse array"):
        _read_all(uri)


@pytest.mark.parametrize("kind", ["md5", "sha"])
def test_checksum_mismatch(copy_of, kind):
    uri = copy_of(kind)
    path = os.path.join(_fragment(uri), "a0.tdb")
    size = os.path.getsize(path)
    _flip(path, size - 5)  # inside the stored values / compressed payload
    with pytest.raises(CorruptArrayError) as err:
        _read_all(uri)
    if kind == "md5":
        assert isinstance(err.value, ChecksumMismatchError)
    assert "a0.tdb" in str(err.value)


def test_huge_chunk_count_is_refused(copy_of):
    uri = copy_of("zstd")
    path = os.path.join(_fragment(uri), "a0.tdb")
    with open(path, "r+b") as f:
        f.write((2**62).to_bytes(8, "little"))
    with pytest.raises(CorruptArrayError, match="chunk"):
        _read_all(uri)


def test_corrupt_schema(copy_of):
    uri = copy_of("zstd")
    schema = glob.glob(os.path.join(uri, "__schema", "__*"))
    schema = [s for s in schema if os.path.isfile(s)][0]
    with open(schema, "r+b") as f:
        f.truncate(40)
    with pytest.raises(CorruptArrayError):
        _read_all(uri)


def test_not_an_array(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ArrayNotFoundError, match="not a TileDB array"):
        _read_all(str(tmp_path / "empty"))
    (tmp_path / "file").write_text("hello")
    with pytest.raises(ArrayNotFoundError, match="not a directory"):
        _read_all(str(tmp_path / "file"))
    with pytest.raises(ArrayNotFoundError, match="does not exist"):
        _read_all(str(tmp_path / "missing"))


def test_unsupported_format_version(copy_of):
    uri = copy_of("zstd")
    schema = [s for s in glob.glob(os.path.join(uri, "__schema", "__*")) if os.path.isfile(s)][0]
    from tdbsql.format.array_schema import read_array_schema, write_array_schema
    import dataclasses

    parsed = read_array_schema(open(schema, "rb").read(), schema)
    raw = bytearray(write_array_schema(parsed))
    # the decoded schema starts with its version: rewrite the whole tile at version 99
    from tdbsql.format.generic_tile import decode_generic_tile, encode_generic_tile

    body = bytearray(decode_generic_tile(bytes(raw), schema))
    body[0:4] = (99).to_bytes(4, "little")
    with open(schema, "wb") as f:
        f.write(encode_generic_tile(bytes(body), 22, pipeline=parsed.coords_filters.__class__()))
    del dataclasses
    with pytest.raises(tdbsql.UnsupportedFormatError, match="99"):
        _read_all(uri)


def _zero(path: str, start: int, size: int) -> None:
    with open(path, "r+b") as f:
        f.seek(start)
        f.write(bytes(size))


def test_empty_offsets_tile_is_corruption(copy_of):
    """An offsets tile with no chunks (its chunk count zeroed) holds fewer offsets than the
    tile has cells: refused by name, not read as a shorter column (an Arrow length error,
    or a crash in a kernel indexing the offsets by cell)."""
    uri = copy_of("zstd")
    _zero(os.path.join(_fragment(uri), "a1.tdb"), 0, 16)
    with pytest.raises(CorruptArrayError, match=r"a1\.tdb \(field 's'\), tile 0"):
        _read_all(uri)


@pytest.fixture(scope="module")
def two_fragments(tmp_path_factory):
    """A sparse array of two fragments of different sizes (the second one a third as big)."""
    uri = str(tmp_path_factory.mktemp("two") / "two")
    _make(uri, tiledb.FilterList([tiledb.ZstdFilter()]))
    d = np.arange(1, 10000, 9, dtype=np.int64)
    with tiledb.open(uri, "w", timestamp=2) as A:
        A[d] = {"a": d, "s": np.array([f"w{x}" for x in d], dtype=object)}
    return uri


@pytest.mark.parametrize("name", ["__fragment_metadata.tdb", "a0.tdb", "a1_var.tdb"])
def test_file_of_another_fragment_is_refused(two_fragments, tmp_path, name):
    """A file copied over from another fragment parses, and its tiles decode: only its size,
    checked against the fragment metadata, tells it is foreign (was a silently wrong answer)."""
    uri = str(tmp_path / "two")
    shutil.copytree(two_fragments, uri)
    first, second = sorted(glob.glob(os.path.join(uri, "__fragments", "*")))
    shutil.copyfile(os.path.join(second, name), os.path.join(first, name))
    with pytest.raises(CorruptArrayError, match="fragment metadata records"):
        _read_all(uri)


def test_encryption_key_of_another_type(pristine):
    with pytest.raises(tdbsql.EncryptionKeyError, match="str or bytes, not int"):
        tdbsql.query("SELECT count(*) FROM array", pristine["zstd"], key=12345)
