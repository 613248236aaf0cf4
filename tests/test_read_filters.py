"""Every TileDB filter through the full read path (``tdbsql.query``): on attributes of several
types, on coordinates, on var offsets and on validity, with a small max chunk size so tiles span
many chunks; results equal ``tiledb``'s cells exactly."""

from __future__ import annotations

import numpy as np
import pytest

import tdbsql

tiledb = pytest.importorskip("tiledb")

from conftest import assert_same_cells, dense_write, oracle_cells  # noqa: E402

F = tiledb
N = 300
CHUNK = 64  # bytes: every tile is split into many chunks
RNG = np.random.default_rng(11)

# filters that accept any datatype
GENERIC = {
    "gzip": lambda: [F.GzipFilter(5)],
    "zstd": lambda: [F.ZstdFilter(3)],
    "lz4": lambda: [F.LZ4Filter()],
    "bzip2": lambda: [F.Bzip2Filter()],
    "rle": lambda: [F.RleFilter()],
    "byteshuffle": lambda: [F.ByteShuffleFilter()],
    "bitshuffle": lambda: [F.BitShuffleFilter()],
    "md5": lambda: [F.ChecksumMD5Filter()],
    "sha256": lambda: [F.ChecksumSHA256Filter()],
    "noop": lambda: [F.NoOpFilter()],
    "byteshuffle_zstd": lambda: [F.ByteShuffleFilter(), F.ZstdFilter()],
    "sha256_gzip_md5": lambda: [F.ChecksumSHA256Filter(), F.GzipFilter(), F.ChecksumMD5Filter()],
}
# filters for integers
INTEGER = {
    "delta": lambda: [F.DeltaFilter()],
    "double_delta": lambda: [F.DoubleDeltaFilter()],
    "bit_width": lambda: [F.BitWidthReductionFilter(window=64)],
    "xor": lambda: [F.XORFilter()],
    "double_delta_lz4": lambda: [F.DoubleDeltaFilter(), F.LZ4Filter()],
    "delta_bit_width_zstd": lambda: [F.DeltaFilter(), F.BitWidthReductionFilter(), F.ZstdFilter()],
    "bitshuffle_bit_width": lambda: [F.BitWidthReductionFilter(window=32), F.BitShuffleFilter()],
}
FLOATS = {
    "xor": lambda: [F.XORFilter()],
    "float_scale4": lambda: [F.FloatScaleFilter(0.5, 1.0, 4)],
    "float_scale8": lambda: [F.FloatScaleFilter(0.25, -3.0, 8)],
    "float_scale1": lambda: [F.FloatScaleFilter(1.0, 0.0, 1)],
    "float_scale2_zstd": lambda: [F.FloatScaleFilter(0.125, 0.0, 2), F.ZstdFilter()],
    "delta_as_int64": lambda: [F.DeltaFilter(reinterp_dtype=np.int64)],
    "double_delta_as_int64": lambda: [F.DoubleDeltaFilter(reinterp_dtype=np.int64)],
    "byteshuffle_zstd": lambda: [F.ByteShuffleFilter(), F.ZstdFilter()],
}
STRINGS = {
    "dictionary": lambda: [F.DictionaryFilter()],
    "dictionary_zstd": lambda: [F.DictionaryFilter(), F.ZstdFilter()],
    "rle_strings": lambda: [F.RleFilter()],
    "rle_gzip": lambda: [F.RleFilter(), F.GzipFilter()],
}

WORDS = ["aa", "bbb", "", "é", "日本", "zz\x00"]


def _walk(dtype, n):
    return np.cumsum(RNG.integers(-3, 10, n)).astype(dtype)


def _words(n, nullable=False):
    vals = [WORDS[i % len(WORDS)] * (i % 3) for i in range(n)]
    return np.array([None if nullable and i % 5 == 0 else v for i, v in enumerate(vals)],
                    dtype=object)


def _attr_specs():
    """name -> (Attr keyword arguments without filters, filter factory, data factory)."""
    specs = {}
    for fname, make in {**GENERIC, **INTEGER}.items():
        specs[f"{fname}__i64"] = ({"dtype": np.int64}, make, lambda n: _walk(np.int64, n))
        specs[f"{fname}__u16"] = ({"dtype": np.uint16}, make, lambda n: _walk(np.uint16, n))
        specs[f"{fname}__i8_null"] = ({"dtype": np.int8, "nullable": True}, make,
                                      lambda n: _walk(np.int8, n))
        specs[f"{fname}__datetime"] = ({"dtype": "M8[ms]"}, make,
                                       lambda n: _walk(np.int64, n).view("M8[ms]"))
    for fname, make in GENERIC.items():
        specs[f"{fname}__f32"] = ({"dtype": np.float32}, make,
                                  lambda n: RNG.normal(size=n).astype(np.float32))
        specs[f"{fname}__str"] = ({"dtype": str, "var": True}, make, _words)
        specs[f"{fname}__i32_var"] = (
            {"dtype": np.int32, "var": True}, make,
            lambda n: np.array([np.arange(i % 5, dtype=np.int32) for i in range(n)],
                               dtype=object))
        specs[f"{fname}__i16x3"] = (
            {"dtype": "i2,i2,i2"}, make,
            lambda n: np.array([(i, -i, 7) for i in range(n)], dtype="i2,i2,i2"))
    for fname, make in FLOATS.items():
        # reinterpreted as int64, negative floats make deltas overflow: TileDB refuses them
        sign = (lambda v: np.abs(v) + 1) if "int64" in fname else (lambda v: v)
        specs[f"{fname}__f64"] = ({"dtype": np.float64}, make,
                                  lambda n, sign=sign: sign(np.round(RNG.normal(size=n) * 8) / 4))
        if "int64" not in fname:
            specs[f"{fname}__f32"] = ({"dtype": np.float32}, make,
                                      lambda n: (np.round(RNG.normal(size=n) * 8) / 4)
                                      .astype(np.float32))
    for fname, make in STRINGS.items():
        specs[f"{fname}__str"] = ({"dtype": str, "var": True}, make, _words)
        specs[f"{fname}__str_null"] = ({"dtype": str, "var": True, "nullable": True}, make,
                                       lambda n: _words(n, nullable=True))
        specs[f"{fname}__ascii"] = (
            {"dtype": "ascii", "var": True}, make,
            lambda n: np.array([[b"aa", b"bbb", b"", b"z"][i % 4] * (i % 3) for i in range(n)],
                               dtype=object))
    return specs


ATTRS = _attr_specs()


def _attr(name, spec, chunk=CHUNK):
    kwargs, make, _ = spec
    return tiledb.Attr(name, filters=tiledb.FilterList(make(), chunksize=chunk), **kwargs)


@pytest.fixture(scope="module")
def filtered_sparse(tmp_path_factory):
    """One sparse array, one attribute per (filter pipeline, type); coords, offsets and validity
    pipelines of their own; tiles of 97 cells in chunks of 64 bytes; two fragments."""
    path = tmp_path_factory.mktemp("filters") / "sparse"
    dom = tiledb.Domain(tiledb.Dim("x", domain=(-1000, 1000), tile=100, dtype=np.int32,
                                   filters=tiledb.FilterList([F.DoubleDeltaFilter(),
                                                              F.ZstdFilter()], chunksize=CHUNK)))
    schema = tiledb.ArraySchema(
        domain=dom, sparse=True, capacity=97,
        attrs=[_attr(name, spec) for name, spec in ATTRS.items()],
        offsets_filters=tiledb.FilterList([F.DoubleDeltaFilter(), F.BitWidthReductionFilter(),
                                           F.LZ4Filter()], chunksize=CHUNK),
        validity_filters=tiledb.FilterList([F.RleFilter(), F.GzipFilter()], chunksize=CHUNK))
    tiledb.Array.create(str(path), schema)
    coords = RNG.choice(np.arange(-1000, 1001), N, replace=False).astype(np.int32)
    for ts, idx in ((1, coords), (2, coords[::7])):
        data = {name: spec[2](len(idx)) for name, spec in ATTRS.items()}
        nulls = {name: (np.arange(len(idx)) % 4 != 3).astype(np.uint8)
                 for name, spec in ATTRS.items()
                 if spec[0].get("nullable") and data[name].dtype != object}
        with tiledb.open(str(path), "w", timestamp=ts) as A:
            tiledb.sparse_array._setitem_impl_sparse(A, idx, data, nulls)
    return path, oracle_cells(path)


@pytest.mark.parametrize("name", list(ATTRS))
def test_attribute_filters_sparse(filtered_sparse, name):
    path, expected = filtered_sparse
    table = tdbsql.query(f'SELECT x, "{name}" FROM array', str(path))
    assert_same_cells(table, expected, ["x"], [name], path=path)


DENSE_ATTRS = {
    "delta_bit_width_zstd": ({"dtype": np.int32}, INTEGER["delta_bit_width_zstd"],
                             lambda n: _walk(np.int32, n)),
    "double_delta_lz4": ({"dtype": np.uint64}, INTEGER["double_delta_lz4"],
                         lambda n: _walk(np.int64, n).astype(np.uint64)),
    "float_scale": ({"dtype": np.float64}, FLOATS["float_scale4"],
                    lambda n: np.round(RNG.normal(size=n) * 8) / 4),
    "byteshuffle_zstd": ({"dtype": np.float32}, GENERIC["byteshuffle_zstd"],
                         lambda n: RNG.normal(size=n).astype(np.float32)),
    "dictionary": ({"dtype": str, "var": True}, STRINGS["dictionary"], _words),
    "rle_strings": ({"dtype": str, "var": True, "nullable": True}, STRINGS["rle_strings"],
                    lambda n: _words(n, nullable=True)),
    "xor_null": ({"dtype": np.int16, "nullable": True}, INTEGER["xor"],
                 lambda n: _walk(np.int16, n)),
    "bitshuffle_var": ({"dtype": np.float64, "var": True}, GENERIC["bitshuffle"],
                       lambda n: np.array([np.arange(i % 4 + 1) / 3 for i in range(n)],
                                          dtype=object)),
}


@pytest.fixture(scope="module")
def filtered_dense(tmp_path_factory):
    """Dense 2-D array, writes not aligned to the 5x7 space tiles (padding cells in every tile),
    two overlapping fragments."""
    path = tmp_path_factory.mktemp("filters") / "dense"
    dom = tiledb.Domain(tiledb.Dim("r", domain=(-20, 19), tile=5, dtype=np.int64),
                        tiledb.Dim("c", domain=(0, 34), tile=7, dtype=np.int64))
    tiledb.Array.create(str(path), tiledb.ArraySchema(
        domain=dom, attrs=[_attr(name, spec) for name, spec in DENSE_ATTRS.items()],
        offsets_filters=tiledb.FilterList([F.DoubleDeltaFilter(), F.ZstdFilter()], chunksize=CHUNK),
        validity_filters=tiledb.FilterList([F.BitShuffleFilter(), F.ZstdFilter()],
                                           chunksize=CHUNK)))
    for ts, box in ((1, [(-18, 3), (2, 30)]), (2, [(0, 11), (9, 20)])):
        shape = [hi - lo + 1 for lo, hi in box]
        n = int(np.prod(shape))
        data = {name: spec[2](n).reshape(shape) for name, spec in DENSE_ATTRS.items()}
        nulls = {name: (np.arange(n) % 3 != 0).astype(np.uint8)
                 for name, spec in DENSE_ATTRS.items()
                 if spec[0].get("nullable") and data[name].dtype != object}
        dense_write(path, box, data, timestamp=ts, nullmaps=nulls)
    return path, oracle_cells(path)


@pytest.mark.parametrize("name", list(DENSE_ATTRS))
def test_attribute_filters_dense(filtered_dense, name):
    path, expected = filtered_dense
    table = tdbsql.query(f"SELECT r, c, {name} FROM array", str(path))
    assert_same_cells(table, expected, ["r", "c"], [name], path=path)


# -- coordinate, offsets and validity pipelines ------------------------------------------------

PIPELINES = {
    "none": lambda: [],
    "zstd": lambda: [F.ZstdFilter()],
    "rle": lambda: [F.RleFilter()],
    "gzip_md5": lambda: [F.GzipFilter(), F.ChecksumMD5Filter()],
    "double_delta_lz4": lambda: [F.DoubleDeltaFilter(), F.LZ4Filter()],
    "delta_bit_width_zstd": lambda: [F.DeltaFilter(), F.BitWidthReductionFilter(), F.ZstdFilter()],
    "bitshuffle_bzip2": lambda: [F.BitShuffleFilter(), F.Bzip2Filter()],
    "byteshuffle_sha256": lambda: [F.ByteShuffleFilter(), F.ChecksumSHA256Filter()],
    "xor": lambda: [F.XORFilter()],
}


@pytest.mark.filterwarnings("ignore:coords_filters is deprecated")
@pytest.mark.parametrize("pipeline", list(PIPELINES))
def test_schema_level_pipelines(tmp_path, pipeline):
    """The same pipeline on coordinates (dimension ``i``'s own filters; ``f`` and ``s`` through
    the schema's coords filters), var offsets and validity."""
    make = PIPELINES[pipeline]
    flist = lambda: tiledb.FilterList(make(), chunksize=CHUNK)  # noqa: E731
    path = tmp_path / "a"
    # delta filters refuse floats (and TileDB checks coords filters against every dimension):
    # then the coords filters (float and string dimensions) are zstd, ``i`` has the pipeline.
    delta = "delta" in pipeline
    coords = tiledb.FilterList([F.ZstdFilter()]) if delta else flist()
    dims = [tiledb.Dim("i", domain=(-500, 500), tile=50, dtype=np.int64, filters=flist()),
            tiledb.Dim("f", domain=(-1.0, 1.0), tile=0.5, dtype=np.float64),
            tiledb.Dim("s", domain=(None, None), tile=None, dtype="ascii")]
    tiledb.Array.create(str(path), tiledb.ArraySchema(
        domain=tiledb.Domain(*dims), sparse=True, capacity=40,
        attrs=[tiledb.Attr("v", dtype=str, var=True, nullable=True),
               tiledb.Attr("n", dtype=np.float32, nullable=True)],
        coords_filters=coords, offsets_filters=flist(), validity_filters=flist()))
    n = 150
    s = np.array([["apple", "b", "", "cherry", "date" * 5][i % 5] + str(i % 7) for i in range(n)])
    data = {"v": _words(n, nullable=True), "n": RNG.normal(size=n).astype(np.float32)}
    with tiledb.open(str(path), "w") as A:
        tiledb.sparse_array._setitem_impl_sparse(
            A, (RNG.integers(-500, 501, n), RNG.uniform(-1, 1, n), s), data,
            {"n": (np.arange(n) % 6 != 0).astype(np.uint8)})
    table = tdbsql.query("SELECT i, f, s, v, n FROM array", str(path))
    assert_same_cells(table, oracle_cells(path), ["i", "f", "s"], ["v", "n"], path=path)


@pytest.mark.parametrize("pipeline", ["dictionary", "rle"])
def test_string_dimension_string_filters(tmp_path, pipeline):
    """RLE and dictionary encodings of var strings applied to a string dimension."""
    path = tmp_path / "a"
    make = {"dictionary": F.DictionaryFilter, "rle": F.RleFilter}[pipeline]
    dim = tiledb.Dim("s", domain=(None, None), tile=None, dtype="ascii",
                     filters=tiledb.FilterList([make()], chunksize=CHUNK))
    tiledb.Array.create(str(path), tiledb.ArraySchema(
        domain=tiledb.Domain(dim), sparse=True, capacity=16, allows_duplicates=True,
        attrs=[tiledb.Attr("a", dtype=np.int32)]))
    s = np.array([["k", "key", "keys", ""][i % 4] * (i % 3 + 1) for i in range(100)])
    with tiledb.open(str(path), "w") as A:
        A[s] = np.arange(100, dtype=np.int32)
    table = tdbsql.query("SELECT s, a FROM array", str(path))
    assert_same_cells(table, oracle_cells(path), ["s"], ["a"], path=path)


def test_webp_through_the_read_path(tmp_path):
    pytest.importorskip("PIL")
    path = tmp_path / "img"
    height, width = 12, 8 * 3
    dom = tiledb.Domain(tiledb.Dim("y", domain=(0, height - 1), tile=6, dtype=np.uint32),
                        tiledb.Dim("x", domain=(0, width - 1), tile=width, dtype=np.uint32))
    webp = F.WebpFilter(tiledb.filter.lt.WebpInputFormat.WEBP_RGB, 100.0, True)
    tiledb.Array.create(str(path), tiledb.ArraySchema(
        domain=dom, attrs=[tiledb.Attr("rgb", dtype=np.uint8, filters=[webp])]))
    image = (np.add.outer(np.arange(height) * 9, np.arange(width) * 5) % 256).astype(np.uint8)
    with tiledb.open(str(path), "w") as A:
        A[:] = image
    table = tdbsql.query("SELECT y, x, rgb FROM array", str(path))
    assert_same_cells(table, oracle_cells(path), ["y", "x"], ["rgb"], path=path)
    assert table.column("rgb").to_numpy().tobytes() == image.tobytes()  # lossless


def test_positive_delta(tmp_path):
    """Positive delta needs strictly increasing input in global order: values that grow with the
    coordinate, and var offsets of non-empty strings."""
    path = tmp_path / "a"
    pos = lambda: tiledb.FilterList([F.PositiveDeltaFilter(window=16)], chunksize=CHUNK)  # noqa
    dim = tiledb.Dim("x", domain=(-1000, 1000), tile=100, dtype=np.int32, filters=pos())
    tiledb.Array.create(str(path), tiledb.ArraySchema(
        domain=tiledb.Domain(dim), sparse=True, capacity=50, offsets_filters=pos(),
        attrs=[tiledb.Attr("u", dtype=np.uint32, filters=pos()),
               tiledb.Attr("w", dtype=str, var=True)]))
    x = np.sort(RNG.choice(np.arange(-1000, 1001), 200, replace=False)).astype(np.int32)
    with tiledb.open(str(path), "w") as A:
        A[x] = {"u": ((x.astype(np.int64) + 1000) * 3 + 1).astype(np.uint32),
                "w": np.array(["w" * (i % 4 + 1) for i in range(len(x))], dtype=object)}
    table = tdbsql.query("SELECT x, u, w FROM array", str(path))
    assert_same_cells(table, oracle_cells(path), ["x"], ["u", "w"], path=path)


@pytest.mark.parametrize("sparse", [True, False])
def test_lossy_filters_keep_tile_metadata_out_of_answers(tmp_path, sparse):
    """TileDB's tile min / max / sum are of the values written; behind float scaling the cells
    read back differ (10.3 stored in steps of 0.5 reads 10.5), so aggregates, predicates and
    join keys go by the cells, as tiledb returns them."""
    path = tmp_path / "a"
    scaled = lambda: tiledb.FilterList([F.FloatScaleFilter(0.5, 0.0, 1)])  # noqa: E731
    tiledb.Array.create(str(path), tiledb.ArraySchema(
        domain=tiledb.Domain(tiledb.Dim("x", domain=(0, 99), tile=10, dtype=np.int64)),
        sparse=sparse, attrs=[tiledb.Attr("f", dtype=np.float64, filters=scaled()),
                              tiledb.Attr("n", dtype=np.float32, nullable=True,
                                          filters=scaled())]))
    x = np.arange(20)
    data = {"f": 10.3 + x * 0.01, "n": (x * 0.3).astype(np.float32)}
    if sparse:
        with tiledb.open(str(path), "w") as A:
            tiledb.sparse_array._setitem_impl_sparse(A, x, data, {"n": (x % 3 > 0).astype(np.uint8)})
    else:
        dense_write(path, [(0, 19)], data, nullmaps={"n": (x % 3 > 0).astype(np.uint8)})
    cells = oracle_cells(path)
    f = np.frombuffer(b"".join(cells["f"]), "<f8")
    n = np.array([np.frombuffer(c, "<f4")[0] for c in cells["n"] if c is not None])
    assert set(f) == {10.5}  # what tiledb reads back
    got = tdbsql.query("SELECT min(f) AS lo, max(f) AS hi, sum(f) AS s, min(n) AS nlo, "
                       "max(n) AS nhi, count(n) AS c FROM array", str(path)).to_pylist()
    assert got == [{"lo": 10.5, "hi": 10.5, "s": f.sum(), "nlo": n.min(), "nhi": n.max(),
                    "c": len(n)}]
    where = tdbsql.query("SELECT count(*) AS c FROM array WHERE f = 10.5 AND n > 2.6",
                         str(path)).to_pylist()
    assert where == [{"c": int((n > 2.6).sum())}]
    joined = tdbsql.query("SELECT count(*) AS c FROM array a JOIN (VALUES (10.5)) v(k) "
                          "ON a.f = v.k", str(path)).to_pylist()
    assert joined == [{"c": len(f)}]


@pytest.mark.parametrize("pipeline", [
    lambda: [F.LZ4Filter(), F.DeltaFilter(), F.GzipFilter()],
    lambda: [F.ZstdFilter(), F.DeltaFilter()],
    lambda: [F.LZ4Filter(), F.DoubleDeltaFilter()],
], ids=["lz4_delta_gzip", "zstd_delta", "lz4_double_delta"])
def test_delta_codings_after_a_compressor_never_guess(tmp_path, pipeline):
    """DELTA / DOUBLE_DELTA after a filter whose output is not whole values: TileDB stores the
    whole values only, and its reader leaves the last bytes as its buffer holds them (right by
    luck, or garbage).  tdbsql reads the cells written, or refuses the tile with
    CorruptArrayError naming the lost bytes -- never other values."""
    refused = 0
    for dtype in (np.int16, np.int64):
        for n in (5, 7, 20, 33, 300):
            path = str(tmp_path / f"a_{np.dtype(dtype).name}_{n}")
            dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 999), tile=1000, dtype=np.int64))
            tiledb.Array.create(path, tiledb.ArraySchema(
                domain=dom, attrs=[tiledb.Attr("a", dtype=dtype, filters=pipeline())]))
            values = np.random.default_rng(n).integers(-100, 100, n).astype(dtype)
            try:
                dense_write(path, [(0, n - 1)], {"a": values})
            except tiledb.TileDBError:  # TileDB's own coding refused the data
                continue
            try:
                got = tdbsql.query("SELECT a FROM array", path).column("a").to_pylist()
            except tdbsql.CorruptArrayError as e:
                assert "TileDB did not store the last" in str(e)
                refused += 1
                continue
            assert got == values.tolist(), (np.dtype(dtype).name, n)
    assert refused


def test_float_scaled_coordinates_outside_their_tile_mbr(tmp_path):
    """Float scaling on a float dimension is lossy: 3.3 reads back 3.0, below the R-tree MBR
    [3.3, 3.3] of its tile (TileDB computes MBRs before filtering).  The merge of overlapping
    fragments cut into slabs by MBR must still see every cell tiledb reads back."""
    path = tmp_path / "a"
    tiledb.Array.create(str(path), tiledb.ArraySchema(
        domain=tiledb.Domain(tiledb.Dim("x", domain=(0.0, 1000.0), tile=10.0, dtype=np.float64,
                                        filters=[F.FloatScaleFilter(1.0, 0.0, 4)])),
        sparse=True, capacity=1, attrs=[tiledb.Attr("v", dtype=np.int64)]))
    for ts, keys in ((1, np.arange(0, 100)), (2, np.arange(50, 150))):
        with tiledb.open(str(path), "w", timestamp=ts) as A:
            A[keys + 0.3] = {"v": keys * 10 + ts}
    table = tdbsql.query("SELECT x, v FROM array", str(path))
    assert table.num_rows == 150
    assert_same_cells(table, oracle_cells(path), ["x"], ["v"], path=path)


def test_float_scaled_coordinates_merge_by_the_values_read(tmp_path):
    """3.3 and 2.8 both read back 3.0: one coordinate, newest wins, as in tiledb, although the
    fragments' non-empty domains are disjoint; SQL answers go by the cells read (tiledb's own
    ``multi_index[3.0:3.0]`` prunes by MBR and finds nothing there)."""
    path = tmp_path / "a"
    tiledb.Array.create(str(path), tiledb.ArraySchema(
        domain=tiledb.Domain(tiledb.Dim("x", domain=(0.0, 1000.0), tile=10.0, dtype=np.float64,
                                        filters=[F.FloatScaleFilter(1.0, 0.0, 4)])),
        sparse=True, capacity=1, attrs=[tiledb.Attr("v", dtype=np.int64)]))
    for ts, keys, values in ((1, [3.3, 7.2], [1, 2]), (2, [2.8], [3])):
        with tiledb.open(str(path), "w", timestamp=ts) as A:
            A[np.array(keys)] = {"v": np.array(values)}
    table = tdbsql.query("SELECT x, v FROM array", str(path))
    assert_same_cells(table, oracle_cells(path), ["x"], ["v"], path=path)
    assert sorted(table.to_pylist(), key=lambda r: r["x"]) == \
        [{"x": 3.0, "v": 3}, {"x": 7.0, "v": 2}]
    run = lambda sql: tdbsql.query(sql, str(path)).to_pylist()  # noqa: E731
    assert run("SELECT count(*) AS n, min(x) AS lo, max(x) AS hi FROM array") == \
        [{"n": 2, "lo": 3.0, "hi": 7.0}]
    assert run("SELECT v FROM array WHERE x BETWEEN 2.9 AND 3.1") == [{"v": 3}]
    assert run("SELECT v FROM array WHERE x > 7.1") == []
    assert run("SELECT x FROM array ORDER BY x LIMIT 1") == [{"x": 3.0}]


def test_float_scaled_coordinates_alike_in_one_fragment_are_all_kept(tmp_path):
    """2.8 and 3.3 of one fragment both read back 3.0: TileDB merges fragments, not the cells of
    one, so both stay -- until a newer fragment writes 3.0, which hides both."""
    path = tmp_path / "a"
    tiledb.Array.create(str(path), tiledb.ArraySchema(
        domain=tiledb.Domain(tiledb.Dim("x", domain=(0.0, 1000.0), tile=10.0, dtype=np.float64,
                                        filters=[F.FloatScaleFilter(1.0, 0.0, 4)])),
        sparse=True, capacity=2, attrs=[tiledb.Attr("v", dtype=np.int64)]))
    for ts, keys, values in ((1, [2.8, 3.3, 7.2], [1, 2, 3]), (2, [7.4], [4]), (3, [3.1], [9])):
        with tiledb.open(str(path), "w", timestamp=ts) as A:
            A[np.array(keys)] = {"v": np.array(values)}
    for ts, expected in ((1, [(3.0, 1), (3.0, 2), (7.0, 3)]), (2, [(3.0, 1), (3.0, 2), (7.0, 4)]),
                         (3, [(3.0, 9), (7.0, 4)])):
        table = tdbsql.query("SELECT x, v FROM array", str(path), timestamp=ts)
        with tiledb.open(str(path), timestamp=ts) as A:
            cells = A.query()[:]
        assert sorted(zip(cells["x"].tolist(), cells["v"].tolist())) == expected
        assert sorted((r["x"], r["v"]) for r in table.to_pylist()) == expected
