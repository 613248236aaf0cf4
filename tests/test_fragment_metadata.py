"""Fragment metadata (tdbsql.format.fragment_metadata / rtree / consolidated_fragment_metadata).

Oracle: arrays written by ``tiledb`` (TileDB 2.30, format 22).  The schema given to the parser
is built from tiledb's own view of the schema (``tiledb.ArraySchema.load``), so these tests do
not depend on the schema parser.  Per-tile statistics are recomputed with numpy from the cells
tiledb returns in global order (sparse tiles are ``capacity`` cells in global order).
"""

from __future__ import annotations

import glob
import io
import os
import struct
import subprocess
import tarfile

import numpy as np
import pyarrow as pa
import pytest
import tiledb
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tdbsql.datatypes import VAR_NUM, ArrayType, Datatype, Layout, type_info
from tdbsql.errors import CorruptArrayError, UnsupportedFormatError
from tdbsql.format.array_schema import ArraySchema, Attribute, Dimension
from tdbsql.format.consolidated_fragment_metadata import (
    encode_consolidated_fragment_metadata,
    parse_consolidated_fragment_metadata,
    read_consolidated_fragment_metadata,
)
from tdbsql.format.generic_tile import decode_generic_tile
from tdbsql.format.filter_pipeline import FilterPipeline
from tdbsql.format.fragment_metadata import (
    FragmentMetadata,
    FragmentStats,
    field_infos,
    read_fragment_metadata,
    sum_dtype,
)
from tdbsql.format.rtree import RTree

MIRROR = "/work/.mirror/TileDB-Inc+TileDB/repo"


# --- helpers --------------------------------------------------------------------------------


def _num(v):
    v = np.asarray(v)
    if np.issubdtype(v.dtype, np.datetime64) or np.issubdtype(v.dtype, np.timedelta64):
        v = v.astype("int64")
    return v.item()


def our_schema(ts: tiledb.ArraySchema, name: str = "") -> ArraySchema:
    """tdbsql's ArraySchema from tiledb's view of a schema (filters are irrelevant here)."""
    dims = []
    for d in ts.domain:
        dt = Datatype[d._tiledb_dtype.name]
        if d.isvar:
            dims.append(Dimension(d.name, dt, VAR_NUM, FilterPipeline(), None, None))
        else:
            lo, hi = d.domain
            tile = None if d.tile is None else _num(d.tile)
            dims.append(Dimension(d.name, dt, 1, FilterPipeline(), (_num(lo), _num(hi)), tile))
    attrs = [Attribute(a.name, Datatype[a._tiledb_dtype.name], VAR_NUM if a.isvar else a._ncell,
                       FilterPipeline(), b"", a.isnullable) for a in ts]
    return ArraySchema(22, ArrayType.SPARSE if ts.sparse else ArrayType.DENSE,
                       bool(ts.sparse and ts.allows_duplicates), Layout.ROW_MAJOR, Layout.ROW_MAJOR,
                       ts.capacity, FilterPipeline(), FilterPipeline(), FilterPipeline(),
                       tuple(dims), tuple(attrs), name=name)


def fragments(uri: str, schema=None):
    """[(folder, FragmentMetadata)] in timestamp order."""
    schema = schema or our_schema(tiledb.ArraySchema.load(uri))
    out = []
    for fd in sorted(glob.glob(os.path.join(uri, "__fragments", "*")),
                     key=lambda p: tuple(int(x) for x in os.path.basename(p).split("_")[2:4])):
        out.append((fd, read_fragment_metadata(fd, schema, os.path.basename(fd))))
    return out


def global_order_cells(uri: str, t: int) -> dict:
    """The cells of the fragment written at ``t`` in global order, as Python lists (None = null).

    Nullable attributes go through Arrow (numpy results drop nulls); the rest through numpy
    (tiledb's Arrow export fails on DATETIME_DAY).
    """
    with tiledb.open(uri, timestamp=(t, t)) as A:
        nullable = [a.name for a in A.schema if a.isnullable]
        plain = A.query(order="G")[:]
        out = {name: _plain_list(values) for name, values in plain.items()}
        if nullable:
            table = A.query(order="G", attrs=nullable, return_arrow=True).df[:]
            out.update({name: table[name].to_pylist() for name in nullable})
        return out


def _plain_list(values: np.ndarray) -> list:
    if values.dtype.kind == "M":
        values = values.astype(np.int64)
    if values.dtype.kind == "b":
        values = values.astype(np.uint8)
    return values.tolist()


def as_bytes(values) -> list:
    return [None if v is None else (v.encode() if isinstance(v, str) else bytes(v)) for v in values]


def file_size(fd: str, name: str) -> int:
    path = os.path.join(fd, name)
    return os.path.getsize(path) if os.path.exists(path) else 0


# --- arrays -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sparse2d(tmp_path_factory):
    """x int32 (tile 10), y float64 (tile 1); six attribute types; capacity 4; 3 fragments."""
    uri = str(tmp_path_factory.mktemp("fm") / "sparse2d")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 99), tile=10, dtype=np.int32),
                        tiledb.Dim("y", domain=(-5.0, 5.0), tile=1.0, dtype=np.float64))
    attrs = [tiledb.Attr("a", dtype=np.int16), tiledb.Attr("s", dtype="ascii", var=True, nullable=True),
             tiledb.Attr("n", dtype=np.float32, nullable=True), tiledb.Attr("b", dtype=np.bool_),
             tiledb.Attr("d", dtype="datetime64[D]"), tiledb.Attr("u", dtype=np.uint64)]
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=4, attrs=attrs))
    rng = np.random.default_rng(7)
    for t, count in ((1, 9), (2, 13), (3, 4)):
        flat = rng.choice(100 * 11, size=count, replace=False)
        x = (flat // 11).astype(np.int32)
        y = (flat % 11).astype(np.float64) - 5.0
        strings = [None if rng.random() < 0.3 else "abcdefgh"[: rng.integers(0, 5)] + chr(97 + i % 26)
                   for i in range(count)]
        floats = [None if rng.random() < 0.3 else float(v) for v in rng.normal(size=count)]
        if t == 3:
            floats = [None] * count  # an all-null tile
        with tiledb.open(uri, "w", timestamp=t) as A:
            A[x, y] = {"a": rng.integers(-300, 300, count).astype(np.int16),
                       "s": pa.array(strings, type=pa.string()),
                       "n": pa.array(floats, type=pa.float32()),
                       "b": rng.integers(0, 2, count).astype(bool),
                       "d": rng.integers(-1000, 1000, count).astype("datetime64[D]"),
                       "u": rng.integers(0, 2**63, count, dtype=np.uint64) * np.uint64(2)}
    return uri


@pytest.fixture(scope="module")
def sparse3d(tmp_path_factory):
    """s STRING_ASCII (var), z int64 (tile 100), w float32; capacity 3; 2 fragments."""
    uri = str(tmp_path_factory.mktemp("fm") / "sparse3d")
    dom = tiledb.Domain(tiledb.Dim("s", dtype="ascii", var=True),
                        tiledb.Dim("z", domain=(0, 999), tile=100, dtype=np.int64),
                        tiledb.Dim("w", domain=(0.0, 1.0), tile=0.5, dtype=np.float32))
    attrs = [tiledb.Attr("v", dtype=np.uint16), tiledb.Attr("t", dtype=str, var=True),
             tiledb.Attr("c", dtype="S3")]
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=3, attrs=attrs))
    rng = np.random.default_rng(11)
    for t, count in ((1, 8), (2, 10)):
        s = np.array([("k" * int(rng.integers(1, 4)) + chr(97 + int(i))).encode() for i in rng.integers(0, 26, count)],
                     dtype=object)
        z = rng.choice(1000, size=count, replace=False).astype(np.int64)
        w = rng.random(count).astype(np.float32)
        with tiledb.open(uri, "w", timestamp=t) as A:
            A[s, z, w] = {"v": rng.integers(0, 60000, count).astype(np.uint16),
                          "t": np.array([f"t{i}" for i in range(count)], dtype=object),
                          "c": np.array([bytes([97 + int(i) % 26]) * 3 for i in range(count)], dtype="S3")}
    return uri


@pytest.fixture(scope="module")
def dense2d(tmp_path_factory):
    """r, c int64 with tile extents 4 x 3 on 1..8 x 1..6; a full write and a partial write."""
    uri = str(tmp_path_factory.mktemp("fm") / "dense2d")
    dom = tiledb.Domain(tiledb.Dim("r", domain=(1, 8), tile=4, dtype=np.int64),
                        tiledb.Dim("c", domain=(1, 6), tile=3, dtype=np.int64))
    attrs = [tiledb.Attr("a", dtype=np.int32), tiledb.Attr("f", dtype=np.float64),
             tiledb.Attr("s", dtype="ascii", var=True), tiledb.Attr("u", dtype=np.uint8, nullable=True)]
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=False, attrs=attrs))
    a = (np.arange(48, dtype=np.int32).reshape(8, 6) * 7) % 50 - 20
    strings = np.array([f"s{i:02d}" for i in range(48)], dtype=object).reshape(8, 6)
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[:] = {"a": a, "f": a * 0.5, "s": strings,
                "u": pa.array([None if i % 5 == 0 else i for i in range(48)], type=pa.uint8())}
    with tiledb.open(uri, "w", timestamp=2) as A:
        A[2:4, 2:6] = {"a": a[1:3, 1:5], "f": a[1:3, 1:5] * 1.0, "s": strings[1:3, 1:5],
                       "u": np.arange(8, dtype=np.uint8).reshape(2, 4)}
    return uri, a


@pytest.fixture(scope="module")
def consolidated(tmp_path_factory):
    """3 fragments, a delete, fragment consolidation, one more fragment, fragment_meta consolidation."""
    uri = str(tmp_path_factory.mktemp("fm") / "cons")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 99), tile=10, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=3,
                                                attrs=[tiledb.Attr("a", dtype=np.int32)]))
    for t in (1, 2, 3):
        with tiledb.open(uri, "w", timestamp=t) as A:
            x = np.arange(t * 5, t * 5 + 5, dtype=np.int64)
            A[x] = {"a": x.astype(np.int32) * t}
    with tiledb.open(uri, "d", timestamp=4) as A:
        A.query(cond="a == 20").submit()
    tiledb.consolidate(uri, config=tiledb.Config({"sm.consolidation.mode": "fragments"}))
    with tiledb.open(uri, "w", timestamp=6) as A:
        A[np.array([50], dtype=np.int64)] = {"a": np.array([1], dtype=np.int32)}
    tiledb.consolidate(uri, config=tiledb.Config({"sm.consolidation.mode": "fragment_meta"}))
    return uri


# --- footer vs FragmentInfo ---------------------------------------------------------------------


@pytest.mark.parametrize("name", ["sparse2d", "sparse3d"])
def test_sparse_footer_matches_fragment_info(name, request):
    uri = request.getfixturevalue(name)
    infos = {os.path.basename(f.uri): f for f in tiledb.array_fragments(uri)}
    for fd, m in fragments(uri):
        info = infos[os.path.basename(fd)]
        assert m.version == info.version == 22
        assert not m.dense and not m.has_timestamps and not m.has_delete_meta
        assert m.cell_count == info.cell_num
        expected = tuple(tuple(as_bytes(r)) if isinstance(r[0], (str, bytes)) else tuple(r)
                         for r in info.nonempty_domain)
        assert m.non_empty_domain == expected
        assert m.tile_count == m.sparse_tile_num == m.rtree.leaf_num
        assert m.processed_conditions == []


def test_field_order_and_keys(sparse2d):
    _, m = fragments(sparse2d)[0]
    assert m.field_names == ("a", "s", "n", "b", "d", "u", "__coords", "x", "y")
    assert m.tile_offsets[0] is m.tile_offsets["a"]  # cached: one load per section
    assert np.array_equal(m.tile_offsets[7], m.tile_offsets["x"])
    assert m.data_file_names("x") == ("d0.tdb", "d0_var.tdb", "d0_validity.tdb")
    assert m.data_file_names("s") == ("a1.tdb", "a1_var.tdb", "a1_validity.tdb")
    assert m.file_sizes["__coords"] == 0 and len(m.tile_offsets["__coords"]) == m.tile_count
    with pytest.raises(KeyError):
        m.tile_offsets["nope"]


@pytest.mark.parametrize("name", ["sparse2d", "sparse3d", "dense2d", "consolidated"])
def test_tile_offsets_match_data_files(name, request):
    uri = request.getfixturevalue(name)
    uri = uri[0] if isinstance(uri, tuple) else uri
    for fd, m in fragments(uri):
        for f in m.field_names:
            fixed, var, validity = m.data_file_names(f)
            for offsets, size, fname in ((m.tile_offsets[f], m.file_sizes[f], fixed),
                                         (m.tile_var_offsets[f], m.file_var_sizes[f], var),
                                         (m.tile_validity_offsets[f], m.file_validity_sizes[f], validity)):
                assert size == file_size(fd, fname)
                assert len(offsets) == m.tile_count and offsets.dtype == np.uint64
                if size == 0:
                    assert not offsets.any()
                    continue
                spans = [m.tile_range(f, i) if fname == fixed else
                         m.tile_var_range(f, i) if fname == var else m.tile_validity_range(f, i)
                         for i in range(m.tile_count)]
                assert spans[0][0] == 0 and all(s > 0 for _, s in spans)
                assert sum(s for _, s in spans) == size
                assert all(a + s == b for (a, s), (b, _) in zip(spans, spans[1:]))


# --- per-tile statistics vs numpy ----------------------------------------------------------


def _tiles(values, capacity):
    return [values[i : i + capacity] for i in range(0, len(values), capacity)]


def _check_numeric(m, field, tiles, dtype):
    mins, maxes, sums = m.tile_mins[field], m.tile_maxes[field], m.tile_sums[field]
    nulls = m.tile_null_counts[field] if m.field_info(field).nullable else None
    assert sums.dtype == sum_dtype(m.field_info(field).datatype)
    for i, cells in enumerate(tiles):
        valid = [v for v in cells if v is not None]
        if nulls is not None:
            assert nulls[i] == len(cells) - len(valid)
        if not valid:  # an all-null tile: TileDB stores zeros
            assert mins[i] == 0 and maxes[i] == 0 and sums[i] == 0
            continue
        arr = np.array(valid, dtype=dtype)
        assert mins[i] == arr.min() and maxes[i] == arr.max()
        if sums.dtype.kind == "f":
            assert sums[i] == pytest.approx(float(arr.astype(np.float64).sum()))
        else:
            assert int(sums[i]) == _saturating_sum(arr.tolist(), sums.dtype)


def _saturating_sum(values, dtype) -> int:
    """TileDB's integer tile sum: the first overflow pins the sum to the type's limit."""
    info = np.iinfo(dtype)
    total = 0
    for v in values:
        if total + v > info.max:
            return info.max
        if total + v < info.min:
            return info.min
        total += v
    return total


def test_sparse_tile_stats_match_numpy(sparse2d):
    for t, (fd, m) in enumerate(fragments(sparse2d), start=1):
        cells = global_order_cells(sparse2d, t)
        assert len(cells["x"]) == m.cell_count
        cap = 4
        for field, dtype in (("a", np.int16), ("n", np.float32), ("b", np.uint8), ("u", np.uint64)):
            _check_numeric(m, field, _tiles(cells[field], cap), dtype)
        _check_numeric(m, "d", _tiles(cells["d"], cap), np.int64)
        # var ascii nullable: bytes mins/maxes over the non-null cells
        for i, tile in enumerate(_tiles(as_bytes(cells["s"]), cap)):
            valid = [v for v in tile if v is not None]
            assert m.tile_null_counts["s"][i] == len(tile) - len(valid)
            if valid:
                assert m.tile_mins["s"][i] == min(valid) and m.tile_maxes["s"][i] == max(valid)
        assert len(m.tile_sums["s"]) == 0
        # fragment-level values agree with the tiles
        assert m.fragment_null_counts["n"] == int(m.tile_null_counts["n"].sum())
        assert m.fragment_min_value("a") == int(m.tile_mins["a"].min())
        assert m.fragment_max_value("u") == int(m.tile_maxes["u"].max())
        assert m.fragment_sums["a"] == int(m.tile_sums["a"].sum())
        # dimensions: R-tree leaves are the per-tile coordinate ranges; sums exist, no min/max
        for i, tile in enumerate(_tiles(list(zip(cells["x"], cells["y"])), cap)):
            xs, ys = [c[0] for c in tile], [c[1] for c in tile]
            assert m.rtree.leaf(i) == ((min(xs), max(xs)), (min(ys), max(ys)))
            assert m.tile_sums["x"][i] == sum(xs) and m.tile_sums["y"][i] == pytest.approx(sum(ys))
        assert len(m.tile_mins["x"]) == 0 and m.fragment_mins["x"] == b""


def test_var_dim_rtree_and_stats(sparse3d):
    for t, (fd, m) in enumerate(fragments(sparse3d), start=1):
        cells = global_order_cells(sparse3d, t)
        cap = 3
        s = _tiles(as_bytes(cells["s"]), cap)
        z = _tiles(cells["z"], cap)
        w = _tiles(cells["w"], cap)
        leaves = m.rtree.leaves
        assert isinstance(leaves[0], tuple) and leaves[1].dtype == np.int64 and leaves[2].dtype == np.float32
        for i in range(m.tile_count):
            assert m.rtree.leaf(i)[0] == (min(s[i]), max(s[i]))
            assert m.rtree.leaf(i)[1] == (min(z[i]), max(z[i]))
            assert leaves[2][i, 0] == np.float32(min(w[i])) and leaves[2][i, 1] == np.float32(max(w[i]))
            assert m.tile_var_sizes["s"][i] == sum(len(v) for v in s[i])
        # root covers everything; upper levels group `fanout` children
        root = m.rtree.levels[0]
        assert root[0][0] == m.non_empty_domain[0]
        _check_numeric(m, "v", _tiles(cells["v"], cap), np.uint16)
        c = _tiles(as_bytes(cells["c"]), cap)
        assert m.tile_mins["c"] == [min(x) for x in c] and m.tile_maxes["c"] == [max(x) for x in c]
        assert m.tile_mins["t"] == [] and len(m.tile_sums["c"]) == 0  # UTF-8: no min/max


def test_dense_metadata(dense2d):
    uri, a = dense2d
    infos = {os.path.basename(f.uri): f for f in tiledb.array_fragments(uri)}
    (fd1, full), (fd2, part) = fragments(uri)
    for fd, m in ((fd1, full), (fd2, part)):
        info = infos[os.path.basename(fd)]
        assert m.dense and m.cell_count == info.cell_num
        assert m.non_empty_domain == tuple(tuple(r) for r in info.nonempty_domain)
        assert m.rtree.levels == () and m.sparse_tile_num == 0
        assert m.last_tile_cell_num == 12  # TileDB writes a full dense tile
        assert len(m.tile_mins["r"]) == 0 and len(m.tile_sums["r"]) == 0  # no metadata on dense dims
    assert full.tile_count == 4 and full.cell_count == 48
    assert part.tile_count == 2 and part.cell_count == 24  # rows 2-3 x cols 2-5: two space tiles
    # full write: tile (ti, tj) holds a[4ti:4ti+4, 3tj:3tj+3], tiles in row-major tile order
    blocks = [a[4 * ti : 4 * ti + 4, 3 * tj : 3 * tj + 3] for ti in range(2) for tj in range(2)]
    assert list(full.tile_mins["a"]) == [b.min() for b in blocks]
    assert list(full.tile_maxes["a"]) == [b.max() for b in blocks]
    assert list(full.tile_sums["a"]) == [int(b.sum()) for b in blocks]
    assert list(full.tile_sums["f"]) == [float(b.sum()) * 0.5 for b in blocks]
    assert list(full.tile_null_counts["u"]) == [
        sum(1 for v in (np.arange(48).reshape(8, 6)[4 * ti : 4 * ti + 4, 3 * tj : 3 * tj + 3]).ravel() if v % 5 == 0)
        for ti in range(2) for tj in range(2)]
    # partial write: TileDB's statistics cover the written cells only
    written = a[1:3, 1:5]
    assert list(part.tile_mins["a"]) == [written[:, :2].min(), written[:, 2:].min()]
    assert list(part.tile_sums["a"]) == [int(written[:, :2].sum()), int(written[:, 2:].sum())]


def test_consolidation_timestamps_and_delete_meta(consolidated):
    uri = consolidated
    frags = fragments(uri)
    names = [os.path.basename(fd) for fd, _ in frags]
    fd, m = frags[names.index(next(n for n in names if n.startswith("__1_3_")))]
    assert m.has_timestamps and m.has_delete_meta
    assert m.field_names == ("a", "__coords", "x", "__timestamps", "__delete_timestamps",
                             "__delete_condition_index")
    assert [m.data_file_names(f)[0] for f in m.field_names[3:]] == ["t.tdb", "dt.tdb", "dci.tdb"]
    assert m.cell_count == 15  # the deleted cell stays, marked in dt/dci
    assert len(m.processed_conditions) == 1 and m.processed_conditions[0].endswith("_22.del")
    assert m.processed_conditions[0].startswith("__commits/__4_4_")
    # timestamps per tile of 3 cells: 5 cells at t=1, 5 at t=2, 5 at t=3
    ts = [1] * 5 + [2] * 5 + [3] * 5
    assert list(m.tile_mins["__timestamps"]) == [min(ts[i : i + 3]) for i in range(0, 15, 3)]
    assert list(m.tile_maxes["__timestamps"]) == [max(ts[i : i + 3]) for i in range(0, 15, 3)]
    assert int(m.tile_mins["__delete_timestamps"].min()) == 4  # the deleted cell (a == 20)
    assert m.fragment_min_value("__delete_condition_index") == 0
    for f in ("__timestamps", "__delete_timestamps", "__delete_condition_index"):
        assert m.file_sizes[f] == file_size(fd, m.data_file_names(f)[0]) > 0


def test_consolidated_fragment_meta_file(consolidated):
    uri = consolidated
    (meta_path,) = glob.glob(os.path.join(uri, "__fragment_meta", "*.meta"))
    raw = open(meta_path, "rb").read()
    cfm = read_consolidated_fragment_metadata(raw, meta_path)
    visible = sorted(os.path.basename(f.uri) for f in tiledb.array_fragments(uri))
    assert sorted(cfm.fragment_names) == visible
    assert all(f.has_consolidated_metadata for f in tiledb.array_fragments(uri))
    schema = our_schema(tiledb.ArraySchema.load(uri))
    for name, footer in cfm.footers.items():
        fd = os.path.join(uri, "__fragments", name)
        direct = read_fragment_metadata(fd, schema, name)
        via_footer = read_fragment_metadata(fd, schema, name, footer=footer)
        assert via_footer == direct
        assert direct.footer_bytes() == footer
    assert encode_consolidated_fragment_metadata(list(cfm.footers.items())) == raw


def test_consolidated_file_with_uri_names(consolidated):
    """Before format 9 entries were whole fragment URIs: they are keyed by folder name."""
    (meta_path,) = glob.glob(os.path.join(consolidated, "__fragment_meta", "*.meta"))
    cfm = read_consolidated_fragment_metadata(open(meta_path, "rb").read(), meta_path)
    legacy = [(f"file:///arrays/cons/{name}", footer) for name, footer in cfm.footers.items()]
    again = read_consolidated_fragment_metadata(encode_consolidated_fragment_metadata(legacy, 8), "x")
    assert again.footers == cfm.footers
    assert [n for n, _ in again.entries] == [n for n, _ in legacy]
    corrupt = encode_consolidated_fragment_metadata([(legacy[0][0], b"")] + legacy[1:])
    raw = bytearray(decode_generic_tile(corrupt, "x").tobytes())
    struct.pack_into("<Q", raw, 4 + 8 + len(legacy[0][0]), 10**6)
    with pytest.raises(CorruptArrayError, match="outside the footers area"):
        parse_consolidated_fragment_metadata(bytes(raw), "x.meta")


# --- byte compatibility, round trips, laziness ---------------------------------------------------


@pytest.mark.parametrize("name", ["sparse2d", "sparse3d", "dense2d", "consolidated"])
def test_rewrite_is_byte_identical(name, request):
    uri = request.getfixturevalue(name)
    uri = uri[0] if isinstance(uri, tuple) else uri
    for fd, m in fragments(uri):
        original = open(os.path.join(fd, "__fragment_metadata.tdb"), "rb").read()
        written = m.to_bytes()
        assert written == original
        again = read_fragment_metadata(written, m.schema, m.name)
        assert again == m


def test_lazy_loading_reads_only_what_is_asked(sparse2d):
    fd, _ = fragments(sparse2d)[1]
    data = open(os.path.join(fd, "__fragment_metadata.tdb"), "rb").read()
    reads = []

    def read_range(offset, size):
        reads.append((offset, size))
        return data[offset : offset + size]

    schema = our_schema(tiledb.ArraySchema.load(sparse2d))
    m = read_fragment_metadata(read_range, schema, os.path.basename(fd), file_size=len(data))
    assert len(reads) == 2  # footer length, footer
    footer_start = reads[1][0]
    m.tile_offsets["a"]
    m.tile_offsets["a"]
    assert len(reads) == 4 and all(o + s <= footer_start for o, s in reads[2:])
    assert m.load_all() == read_fragment_metadata(data, schema, os.path.basename(fd))


def test_schema_evolution_picks_named_schema(tmp_path):
    uri = str(tmp_path / "evo")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 9), tile=5, dtype=np.int32))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, attrs=[tiledb.Attr("a", dtype=np.int32)]))
    schema_dir = os.path.join(uri, "__schema")
    first = [n for n in os.listdir(schema_dir) if os.path.isfile(os.path.join(schema_dir, n))]
    schemas = {n: our_schema(tiledb.ArraySchema.load(uri), n) for n in first}
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[np.array([1, 2], dtype=np.int32)] = {"a": np.array([1, 2], dtype=np.int32)}
    se = tiledb.ArraySchemaEvolution()
    se.add_attribute(tiledb.Attr("b", dtype=np.float64))
    se.array_evolve(uri)
    (second,) = {n for n in os.listdir(schema_dir) if os.path.isfile(os.path.join(schema_dir, n))} - set(first)
    schemas[second] = our_schema(tiledb.ArraySchema.load(uri), second)
    with tiledb.open(uri, "w") as A:
        A[np.array([3], dtype=np.int32)] = {"a": np.array([3], dtype=np.int32), "b": np.array([0.5])}
    got = {}
    for fd in glob.glob(os.path.join(uri, "__fragments", "*")):
        m = read_fragment_metadata(fd, schemas, os.path.basename(fd))
        got[m.schema_name] = m.field_names
        assert m.to_bytes() == open(os.path.join(fd, "__fragment_metadata.tdb"), "rb").read()
    assert got == {first[0]: ("a", "__coords", "x"), second: ("a", "b", "__coords", "x")}


# --- legacy arrays from TileDB's test inputs -------------------------------------------------


@pytest.fixture(scope="module")
def legacy(tmp_path_factory):
    if not os.path.isdir(MIRROR):
        pytest.skip("TileDB source mirror not available")
    out = tmp_path_factory.mktemp("legacy")
    tar = subprocess.run(["git", "--git-dir", MIRROR, "archive", "HEAD", "test/inputs/arrays"],
                         check=True, capture_output=True).stdout
    tarfile.open(fileobj=io.BytesIO(tar)).extractall(out, filter="data")
    return str(out / "test" / "inputs" / "arrays")


def test_legacy_v1_sparse(legacy):
    from tdbsql.format.array_schema import read_array_schema

    uri = os.path.join(legacy, "non_split_coords_v1_4_0")
    schema = read_array_schema(open(os.path.join(uri, "__array_schema.tdb"), "rb").read(), uri,
                               "__array_schema.tdb")
    (fd,) = [p for p in glob.glob(os.path.join(uri, "__*")) if os.path.isdir(p)]
    m = read_fragment_metadata(fd, schema, os.path.basename(fd), has_coords_file=True)
    assert m.version == 1 and not m.dense and m.field_names == ("a", "__coords")
    assert m.non_empty_domain == ((1, 4), (10, 10)) and m.cell_count == 4
    assert m.rtree.leaf(0) == ((1, 4), (10, 10))
    assert m.data_file_names("a")[0] == "a.tdb" and m.data_file_names("__coords")[0] == "__coords.tdb"
    assert m.file_sizes["a"] == file_size(fd, "a.tdb") and m.file_sizes["__coords"] == file_size(fd, "__coords.tdb")


def test_legacy_v10_var_dim_and_future_version(legacy):
    uri = os.path.join(legacy, "zero_var_chunks_v10")
    schema = our_schema(tiledb.ArraySchema.load(uri))
    (fd,) = [p for p in glob.glob(os.path.join(uri, "__1*")) if os.path.isdir(p)]
    m = read_fragment_metadata(fd, schema, os.path.basename(fd))
    (info,) = tiledb.array_fragments(uri)
    assert m.version == info.version == 10 and m.cell_count == info.cell_num == 1
    assert m.non_empty_domain == ((b"", b""),)
    assert m.to_bytes() == open(os.path.join(fd, "__fragment_metadata.tdb"), "rb").read()
    future = os.path.join(legacy, "experimental_array_vUINT32_MAX", "__fragments")
    (fd,) = [p for p in glob.glob(os.path.join(future, "__*")) if os.path.isdir(p)]
    with pytest.raises(UnsupportedFormatError, match="4294967295"):
        read_fragment_metadata(fd, schema, os.path.basename(fd))


# --- corruption -----------------------------------------------------------------------------------


@pytest.fixture()
def one_fragment(sparse2d):
    fd, m = fragments(sparse2d)[0]
    return os.path.basename(fd), open(os.path.join(fd, "__fragment_metadata.tdb"), "rb").read(), m.schema


def test_truncated_file(one_fragment):
    name, data, schema = one_fragment
    with pytest.raises(CorruptArrayError, match="__fragment_metadata.tdb.*footer"):
        read_fragment_metadata(data[:-100], schema, name)
    with pytest.raises(CorruptArrayError, match="too short"):
        read_fragment_metadata(data[:5], schema, name)


def test_bad_footer_length(one_fragment):
    name, data, schema = one_fragment
    (length,) = struct.unpack("<Q", data[-8:])
    with pytest.raises(CorruptArrayError, match="exceeds the file size"):
        read_fragment_metadata(data[:-8] + struct.pack("<Q", len(data) * 2), schema, name)
    for wrong in (length - 8, length + 8, length - 1):
        with pytest.raises(CorruptArrayError, match=r"__fragment_metadata.tdb: .*footer length"):
            read_fragment_metadata(data[:-8] + struct.pack("<Q", wrong), schema, name)


def test_section_offset_beyond_file(one_fragment):
    name, data, schema = one_fragment
    (length,) = struct.unpack("<Q", data[-8:])
    m = read_fragment_metadata(data, schema, name)
    n = len(m.field_names)
    # footer: version, schema name, dense, null flag, NED (int32 + float64 pairs), tile num,
    # last tile cells, two flags, 3 x n file sizes, then the R-tree offset and n tile offsets
    rtree_pos = (len(data) - 8 - length) + 4 + 8 + len(m.schema_name) + 1 + 1 + 24 + 8 + 8 + 2 + 3 * n * 8
    a_pos = rtree_pos + 8
    assert struct.unpack_from("<Q", data, rtree_pos)[0] == 0
    bad = bytearray(data)
    struct.pack_into("<Q", bad, a_pos, len(data) + 1000)
    with pytest.raises(CorruptArrayError, match=r"__fragment_metadata.tdb: .*tile offsets of 'a'"):
        read_fragment_metadata(bytes(bad), schema, name)
    # a corrupt persisted size inside a section names the section and field
    start = struct.unpack_from("<Q", data, a_pos)[0]
    bad = bytearray(data)
    struct.pack_into("<Q", bad, start + 4, 10**9)
    lazy = read_fragment_metadata(bytes(bad), schema, name)
    assert np.array_equal(lazy.tile_offsets["x"], m.tile_offsets["x"])
    with pytest.raises(CorruptArrayError, match=r"__fragment_metadata.tdb, tile offsets of 'a'"):
        lazy.tile_offsets["a"]


def test_v23_optional_sections(one_fragment):
    name, data, schema = one_fragment
    (length,) = struct.unpack("<Q", data[-8:])
    body, footer = data[: len(data) - 8 - length], data[len(data) - 8 - length : -8]
    n_dims = len(schema.dimensions)
    extra = (struct.pack("<I", 2) + struct.pack("<QI", 99, 3) + b"abc"
             + struct.pack("<QI", 0, 16 * n_dims) + bytes(16 * n_dims))
    footer23 = struct.pack("<I", 23) + footer[4:] + extra
    name23 = name[: name.rindex("_")] + "_23"
    m = read_fragment_metadata(body + footer23 + struct.pack("<Q", len(footer23)), schema, name23)
    assert m.version == 23 and m.optional_sections == ((99, b"abc"), (0, bytes(16 * n_dims)))
    assert np.array_equal(m.tile_offsets["a"], read_fragment_metadata(data, schema, name).tile_offsets["a"])
    bad = struct.pack("<I", 23) + footer[4:] + struct.pack("<I", 1) + struct.pack("<QI", 0, 8) + bytes(8)
    with pytest.raises(CorruptArrayError, match="global order"):
        read_fragment_metadata(body + bad + struct.pack("<Q", len(bad)), schema, name23)
    with pytest.raises(CorruptArrayError, match="fragment name says 22"):
        read_fragment_metadata(body + footer23 + struct.pack("<Q", len(footer23)), schema, name)


# --- hypothesis round trip ---------------------------------------------------------------------

_ATTR_TYPES = [(Datatype.INT8, 1), (Datatype.UINT16, 1), (Datatype.FLOAT32, 1), (Datatype.INT64, 1),
               (Datatype.STRING_ASCII, VAR_NUM), (Datatype.CHAR, 3), (Datatype.BOOL, 1),
               (Datatype.DATETIME_MS, 1), (Datatype.STRING_UTF8, VAR_NUM)]


@st.composite
def metadata(draw):
    version = draw(st.sampled_from([3, 4, 5, 6, 7, 9, 10, 11, 12, 14, 15, 16, 21, 22]))
    ndim = draw(st.integers(1, 3))
    dims = []
    # formats 3-4: one datatype for all dimensions, no string dimensions
    legacy_kind = draw(st.sampled_from(["i32", "i64", "f64"])) if version < 5 else None
    for i in range(ndim):
        kind = legacy_kind or draw(st.sampled_from(["i32", "i64", "f64", "str"]))
        if kind == "str":
            dims.append(Dimension(f"d{i}", Datatype.STRING_ASCII, VAR_NUM, FilterPipeline(), None, None))
        elif kind == "f64":
            dims.append(Dimension(f"d{i}", Datatype.FLOAT64, 1, FilterPipeline(), (-10.0, 10.0), 2.5))
        else:
            dt = Datatype.INT32 if kind == "i32" else Datatype.INT64
            dims.append(Dimension(f"d{i}", dt, 1, FilterPipeline(), (0, 999), 10))
    attrs = tuple(Attribute(f"a{i}", dt, cvn, FilterPipeline(), b"", draw(st.booleans()))
                  for i, (dt, cvn) in enumerate(draw(st.lists(st.sampled_from(_ATTR_TYPES), min_size=1, max_size=4))))
    schema = ArraySchema(version, ArrayType.SPARSE, False, Layout.ROW_MAJOR, Layout.ROW_MAJOR, 5,
                         FilterPipeline(), FilterPipeline(), FilterPipeline(), tuple(dims), attrs, name="__1_1_ab")
    has_ts = version >= 14 and draw(st.booleans())
    has_dm = version >= 15 and draw(st.booleans())
    tiles = draw(st.integers(1, 25))
    infos = field_infos(schema, version, has_ts, has_dm)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    sections: dict = {k: {} for k in ("tile_offsets", "tile_var_offsets", "tile_var_sizes",
                                      "tile_validity_offsets", "tile_mins", "tile_maxes",
                                      "tile_sums", "tile_null_counts")}
    for info in infos:
        for k in ("tile_offsets", "tile_var_offsets", "tile_var_sizes", "tile_validity_offsets"):
            sections[k][info.name] = np.cumsum(rng.integers(1, 100, tiles)).astype(np.uint64)
        if version >= 11:
            if info.is_var or info.cell_val_num != 1 or info.is_string:
                size = None if info.is_var else info.cell_val_num * type_info(info.datatype).size
                sections["tile_mins"][info.name] = [bytes(rng.integers(0, 256, size or int(rng.integers(0, 5))).astype(np.uint8))
                                                    for _ in range(tiles)]
                sections["tile_maxes"][info.name] = list(reversed(sections["tile_mins"][info.name]))
            else:
                np_type = type_info(info.datatype).numpy
                sections["tile_mins"][info.name] = rng.integers(0, 100, tiles).astype(np_type)
                sections["tile_maxes"][info.name] = rng.integers(0, 100, tiles).astype(np_type)
            sections["tile_sums"][info.name] = rng.integers(-50, 50, tiles).astype(sum_dtype(info.datatype))
            if info.nullable:
                sections["tile_null_counts"][info.name] = rng.integers(0, 5, tiles).astype(np.uint64)
    n = len(infos)
    stats = FragmentStats(tuple(bytes(rng.integers(0, 256, int(rng.integers(0, 9))).astype(np.uint8)) for _ in range(n)),
                          tuple(b"" for _ in range(n)), tuple(struct.pack("<q", int(v)) for v in rng.integers(-9, 9, n)),
                          tuple(int(v) for v in rng.integers(0, 9, n)))
    leaves = tuple(tuple((b"a" * int(rng.integers(0, 3)), b"b" * int(rng.integers(1, 3))) for _ in range(tiles))
                   if d.is_var else np.sort(rng.integers(0, 999, (tiles, 2)), axis=1).astype(d.info.numpy)
                   for d in dims)
    homogeneous = all(not d.is_var and d.datatype == dims[0].datatype for d in dims)
    ned = None if homogeneous and draw(st.booleans()) else tuple(  # the leaves' union, as TileDB's
        (b"a", b"zz") if d.is_var else (lvs[:, 0].min().item(), lvs[:, 1].max().item())
        for d, lvs in zip(dims, leaves))
    return FragmentMetadata.create(
        schema, dense=False, non_empty_domain=ned, sparse_tile_num=tiles,
        last_tile_cell_num=int(rng.integers(1, 6)), has_timestamps=has_ts, has_delete_meta=has_dm,
        file_sizes={i.name: int(rng.integers(0, 1000)) for i in infos},
        file_var_sizes={i.name: int(rng.integers(0, 1000)) for i in infos},
        file_validity_sizes={i.name: int(rng.integers(0, 1000)) for i in infos} if version >= 7 else None,
        rtree=RTree.from_leaves(leaves, dims, fanout=int(rng.integers(2, 11))), sections=sections,
        fragment_stats=stats if version >= 12 else None,
        processed_conditions=["__commits/__1_1_x_22.del"] if version >= 16 else (),
        version=version, name=f"__1_1_{'0' * 32}" + (f"_{version}" if version >= 5 else ""))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(metadata())
def test_round_trip(m):
    data = m.to_bytes()
    back = read_fragment_metadata(data, m.schema, m.name)
    assert back == m
    assert back.to_bytes() == data
    assert back.cell_count == (m.sparse_tile_num - 1) * 5 + m.last_tile_cell_num
    assert back.rtree.leaf_num == m.sparse_tile_num and len(back.rtree.levels[0][0]) == 1


def test_rtree_levels_follow_tiledb_height():
    dims = (Dimension("x", Datatype.INT32, 1, FilterPipeline(), (0, 10**6), 10),)
    lo = np.arange(1000, dtype=np.int32)
    tree = RTree.from_leaves((np.stack([lo, lo + 1], axis=1),), dims)
    assert [len(level[0]) for level in tree.levels] == [1, 10, 100, 1000]
    assert tree.levels[1][0][3].tolist() == [300, 400]
    single = RTree.from_leaves((np.array([[1, 2]], dtype=np.int32),), dims)
    assert len(single.levels) == 1


def test_missing_metadata_file(tmp_path):
    folder = tmp_path / f"__1_1_{'0' * 32}_22"
    folder.mkdir()
    schema = ArraySchema(22, ArrayType.SPARSE, False, Layout.ROW_MAJOR, Layout.ROW_MAJOR, 5,
                         FilterPipeline(), FilterPipeline(), FilterPipeline(),
                         (Dimension("x", Datatype.INT32, 1, FilterPipeline(), (0, 9), 5),), ())
    with pytest.raises(CorruptArrayError, match="__fragment_metadata.tdb"):
        read_fragment_metadata(str(folder), schema, folder.name)


def test_array_fragment_metadata_stats_the_file_once(tmp_path, monkeypatch):
    """``Fragment.metadata`` stats ``__fragment_metadata.tdb`` once (its size), reads it by
    ranges through vfs, and never looks for a format 1-2 ``__coords.tdb``."""
    from tdbsql.storage import vfs
    from tdbsql.storage.array import Array

    uri = str(tmp_path / "a")
    dom = tiledb.Domain(tiledb.Dim("id", domain=(1, 1000), tile=10, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=10, attrs=[
        tiledb.Attr("a", dtype=np.int64)]))
    with tiledb.open(uri, "w") as A:
        A[np.arange(1, 101)] = {"a": np.arange(100, dtype=np.int64)}
    array = Array(uri)
    (fragment,) = array.fragments
    array.schemas, array.consolidated_footers  # noqa: B018 - loaded before counting
    stats, reads = [], []
    real_stat, real_read = os.stat, vfs.read_range

    def stat(path, *args, **kwargs):
        stats.append(os.path.basename(os.fspath(path)))
        return real_stat(path, *args, **kwargs)

    def read_range(path, offset, size):
        reads.append(os.path.basename(path))
        return real_read(path, offset, size)

    monkeypatch.setattr(os, "stat", stat)
    monkeypatch.setattr(vfs, "read_range", read_range)
    meta = fragment.metadata
    meta.load_all()
    monkeypatch.undo()
    assert stats == ["__fragment_metadata.tdb"]
    assert reads and set(reads) == {"__fragment_metadata.tdb"}
    assert meta.sparse_tile_num == 10
    assert meta == read_fragment_metadata(fragment.entry.path, array.schema,
                                          fragment.name).load_all()
