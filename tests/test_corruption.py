"""Bad input on disk: truncated, flipped, missing or foreign files give a clear tdbsql error
naming the file -- never another exception, a hang or a huge allocation."""

from __future__ import annotations

import glob
import os
import shutil
import zlib
from dataclasses import replace

import numpy as np
import pytest
import tiledb

import tdbsql
from tdbsql.errors import ArrayNotFoundError, ChecksumMismatchError, CorruptArrayError
from tdbsql.format.array_schema import read_array_schema, write_array_schema
from tdbsql.datatypes import Datatype
from tdbsql.format.filter_pipeline import FilterPipeline
from tdbsql.format.filters import ZstdFilter
from tdbsql.format.generic_tile import decode_generic_tile, encode_generic_tile


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


def _schema_file(uri: str) -> str:
    return [s for s in glob.glob(os.path.join(uri, "__schema", "__*")) if os.path.isfile(s)][0]


def _rewrite_schema(uri: str, edit) -> None:
    """Rewrite the array's schema file, ``edit`` turning the parsed schema into another."""
    path = _schema_file(uri)
    parsed = read_array_schema(open(path, "rb").read(), path)
    with open(path, "wb") as f:
        f.write(write_array_schema(edit(parsed)))


def _rewrite_schema_body(uri: str, edit) -> None:
    """Rewrite the bytes the schema's generic tile holds (``edit`` changes a bytearray)."""
    path = _schema_file(uri)
    parsed = read_array_schema(open(path, "rb").read(), path)
    body = bytearray(decode_generic_tile(bytes(write_array_schema(parsed)), path))
    edit(body)
    with open(path, "wb") as f:
        f.write(encode_generic_tile(bytes(body), 22, pipeline=FilterPipeline()))


def test_unsupported_format_version(copy_of):
    uri = copy_of("zstd")
    _rewrite_schema_body(uri, lambda body: body.__setitem__(slice(0, 4), (99).to_bytes(4, "little")))
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


def _dimension(**changes):
    return lambda s: replace(s, dimensions=(replace(s.dimensions[0], **changes),))


def _attribute(**changes):
    return lambda s: replace(s, attributes=(replace(s.attributes[0], **changes),) + s.attributes[1:])


@pytest.mark.parametrize("edit, message", [
    (_dimension(domain=(9999, 0)), r"dimension 0 domain: \[9999, 0\] is empty"),
    (_dimension(tile_extent=0), "dimension 0 tile extent: 0 is not positive"),
    (_dimension(cell_val_num=3), "dimension 0 cell_val_num: 3"),
    (_attribute(cell_val_num=0), "attribute 0 cell_val_num: 0 values a cell"),
    (_attribute(cell_val_num=2**31), "attribute 0 cell_val_num: 2147483648 values a cell"),
])
def test_impossible_schema_values_are_corruption(copy_of, edit, message):
    """Values TileDB never writes (an empty domain, a zero tile extent, a cell of no values or
    of more than Arrow can hold) are refused when the schema is read, naming the field --
    they were an OverflowError from numpy or pyarrow deep in a query."""
    uri = copy_of("zstd")
    _rewrite_schema(uri, edit)
    with pytest.raises(CorruptArrayError, match=message):
        tdbsql.open(uri).schema


def test_unknown_filter_names_the_schema_file(copy_of):
    uri = copy_of("zstd")
    zstd = bytes([2])  # the coordinates' filter: type u8, options size u32 (5: type, level)

    def unknown_filter(body: bytearray) -> None:
        at = body.index(zstd + (5).to_bytes(4, "little"))
        body[at] = 99

    _rewrite_schema_body(uri, unknown_filter)
    with pytest.raises(tdbsql.UnsupportedFormatError,
                       match=r"__schema/__\w+: unsupported TileDB filter type id 99"):
        _read_all(uri)


def test_newer_generic_tile_version_is_unsupported(copy_of):
    """A generic tile of a newer format (its header, pipeline and data may be laid out
    differently) is refused, not parsed as if it were version 22."""
    uri = copy_of("zstd")
    path = _schema_file(uri)
    data = bytearray(open(path, "rb").read())
    data[0:4] = (24).to_bytes(4, "little")
    open(path, "wb").write(bytes(data))
    with pytest.raises(tdbsql.UnsupportedFormatError, match="generic tile format version 24"):
        _read_all(uri)


def _rewrite_fragment_metadata(uri: str, edit) -> None:
    """Rewrite the fragment's metadata, ``edit`` changing its loaded sections
    (``{("rtree",): tree, (kind, field_position): values, ...}``) in place."""
    from tdbsql.format.fragment_metadata import read_fragment_metadata

    path = os.path.join(_fragment(uri), "__fragment_metadata.tdb")
    schema = read_array_schema(open(_schema_file(uri), "rb").read(), _schema_file(uri))
    meta = read_fragment_metadata(open(path, "rb").read(), schema, os.path.basename(_fragment(uri)))
    meta.load_all()
    edit(meta.sections._cache, schema)
    open(path, "wb").write(meta.to_bytes(schema))


def test_mbr_outside_the_non_empty_domain_is_corruption(copy_of):
    """A leaf MBR that is no range inside the fragment's non-empty domain (a flipped byte in
    the R-tree) is refused: it pruned its tile from filtered queries, a silently wrong answer."""
    from tdbsql.format.rtree import RTree

    def move_tile_3(sections, schema):
        tree = sections[("rtree",)]
        leaves = tree.leaves[0].copy()
        leaves[3, 0] = leaves[3, 1] + 1  # tile 3: its low end past its high end
        sections[("rtree",)] = RTree.from_leaves((leaves,), schema.dimensions, tree.fanout)

    uri = copy_of("zstd")
    _rewrite_fragment_metadata(uri, move_tile_3)
    with pytest.raises(CorruptArrayError, match=r"R-tree: the MBR of tile 3 on 'd'"):
        tdbsql.query("SELECT count(*) FROM array WHERE d BETWEEN 3000 AND 3100", uri)


def test_decreasing_tile_offsets_are_corruption(copy_of):
    """Tile 2 of 'a' starting where tile 0 starts read tile 0's cells (its chunks, the bytes
    after them ignored) for a query that skipped tiles 0 and 1: a silently wrong answer."""
    def restart_tile_2(sections, schema):
        offsets = sections[("tile_offsets", 0)].copy()
        offsets[2] = offsets[0]
        sections[("tile_offsets", 0)] = offsets

    uri = copy_of("zstd")
    _rewrite_fragment_metadata(uri, restart_tile_2)
    with pytest.raises(CorruptArrayError, match="tile offsets of 'a'.*: tile offsets decrease"):
        tdbsql.query("SELECT sum(a) FROM array WHERE d BETWEEN 3000 AND 3100", uri)


@pytest.mark.parametrize("filters", [(), (ZstdFilter(),)])  # the general path, one codec's own
def test_bytes_after_a_tiles_chunks_are_corruption(filters):
    """A tile's byte range holds its chunks exactly: bytes left over mean a wrong range."""
    pipeline = FilterPipeline(filters)
    encoded = pipeline.encode_tile(np.arange(100, dtype=np.int64), Datatype.INT64, 22, cell_size=8)
    assert pipeline.decode_tile(encoded, Datatype.INT64, 22).view(np.int64)[99] == 99
    with pytest.raises(CorruptArrayError, match="3 bytes after the tile's 1 chunks"):
        pipeline.decode_tile(encoded + b"xyz", Datatype.INT64, 22, where="a0.tdb")


@pytest.mark.parametrize("folder, read", [
    ("__commits", _read_all),  # was read as no commits: an empty table, silently
    ("__meta", lambda uri: tdbsql.metadata(uri)),  # was a raw NotADirectoryError
    ("__fragments/*/a0.tdb", _read_all),  # a folder where a data file belongs
])
def test_file_where_a_folder_belongs(copy_of, folder, read):
    uri = copy_of("zstd")
    os.makedirs(os.path.join(uri, "__meta"), exist_ok=True)
    (path,) = glob.glob(os.path.join(uri, folder))
    if os.path.isdir(path):
        shutil.rmtree(path)
        open(path, "w").write("not a folder")
        message = "is a file, expected a folder"
    else:
        os.remove(path)
        os.makedirs(path)
        message = "is a directory, expected a file"
    with pytest.raises(CorruptArrayError, match=message):
        read(uri)


@pytest.mark.parametrize("cells", [0, 501, 2**40])
def test_last_tile_cell_count_past_the_capacity_is_corruption(copy_of, cells):
    """count(*) is answered from the footer's counts, no tile read: a last tile of 0 cells or
    of more than the capacity (500) counted wrong rows, silently."""
    uri = copy_of("zstd")
    path = os.path.join(_fragment(uri), "__fragment_metadata.tdb")
    data = bytearray(open(path, "rb").read())
    counts = (7).to_bytes(8, "little") + (334).to_bytes(8, "little")  # 3334 cells, 500 a tile
    at = data.index(counts, len(data) - 8 - int.from_bytes(data[-8:], "little"))
    data[at + 8:at + 16] = cells.to_bytes(8, "little")
    open(path, "wb").write(bytes(data))
    with pytest.raises(CorruptArrayError, match=f"last tile cell count: {cells} cells for tiles of 500"):
        tdbsql.query("SELECT count(*) FROM array", uri)


def test_fill_value_of_another_cell_size_is_corruption(copy_of):
    """A cell_val_num changed on disk (an int64 of 2**24 values a cell) no longer matches the
    attribute's fill value, one cell: refused, not read into cells of 128 MiB each (the
    fill of a 600-cell box was a 13 GiB allocation)."""
    uri = copy_of("zstd")
    _rewrite_schema(uri, _attribute(cell_val_num=2**24))
    with pytest.raises(CorruptArrayError, match="attribute 0 fill value: 8 bytes for cells of 134217728"):
        tdbsql.open(uri).schema
