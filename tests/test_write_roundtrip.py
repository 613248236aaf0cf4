"""tdbsql writes, ``tiledb`` reads: hypothesis-generated schemas and data, cell for cell.

Each example creates an array with ``tdbsql.schema`` + ``writer.create``, writes it with
``writer.write`` and checks three things: ``tiledb``'s raw cells equal the input cells, tdbsql's
own read equals ``tiledb``'s, and tdbsql's fragment passes TileDB's consistency checks by being
readable at all.  The oracle helpers are in ``conftest.py``.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

tiledb = pytest.importorskip("tiledb")

import tdbsql  # noqa: E402
from tdbsql import schema as S  # noqa: E402
from tdbsql.storage.writer import create, write  # noqa: E402

from conftest import assert_same_cells, oracle_cells  # noqa: E402

SETTINGS = settings(max_examples=12, deadline=None, derandomize=True,
                    suppress_health_check=list(HealthCheck))

INT_TYPES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
COMPRESSORS = [S.Zstd, S.Gzip, S.Lz4, S.Bzip2]


@st.composite
def filter_lists(draw, kind: str):
    """A pipeline valid for ``kind`` ("int", "float", "string")."""
    choices = [[], [draw(st.sampled_from(COMPRESSORS))(draw(st.integers(1, 9)))],
               [S.ByteShuffle(), S.Zstd(draw(st.integers(-3, 9)))], [S.ChecksumMD5()],
               [S.ChecksumSHA256(), S.Lz4()], [S.BitShuffle(), S.Gzip(6)]]
    if kind == "int":
        choices += [[S.DoubleDelta()], [S.Delta(), S.Zstd(3)], [S.BitWidthReduction(
            draw(st.sampled_from([64, 256, 1024])))], [S.Rle()], [S.Xor()]]
    if kind == "float":
        choices += [[S.Xor(), S.Zstd(1)], [S.Rle()]]
    if kind == "string":
        choices = [[], [S.Zstd(draw(st.integers(1, 9)))], [S.Rle()], [S.Dictionary()],
                   [S.Rle(), S.Zstd(2)], [S.Dictionary(), S.Gzip(3)], [S.ChecksumMD5()]]
    return S.FilterList(draw(st.sampled_from(choices)),
                        draw(st.sampled_from([65536, 65536, 1024])))


@st.composite
def dimensions(draw, index: int, sparse: bool):
    name = f"d{index}"
    kinds = ["int", "datetime"] + (["float", "string"] if sparse else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "string":
        return S.Dim(name, "ascii", filters=draw(filter_lists("string"))), kind
    if kind == "float":
        lo = draw(st.floats(-1000, 0, allow_nan=False))
        hi = lo + draw(st.floats(1, 1000))
        return S.Dim(name, "float64", (lo, hi), draw(st.sampled_from([None, (hi - lo) / 4]))), kind
    dtype = "datetime64[D]" if kind == "datetime" else draw(
        st.sampled_from(["int8", "int16", "int32", "int64", "uint16", "uint32"] if sparse
                        else ["int16", "int32", "int64"]))
    lo = draw(st.integers(-50, 50)) if dtype[0] in "id" else draw(st.integers(0, 50))
    hi = lo + draw(st.integers(0, 60))
    tile = draw(st.integers(1, hi - lo + 1))
    return S.Dim(name, dtype, (lo, hi), tile, filters=draw(filter_lists("int"))), kind


@st.composite
def attributes(draw, index: int, sparse: bool):
    name = f"a{index}"
    kind = draw(st.sampled_from(["int", "float", "string", "multi", "datetime", "bool"]))
    nullable = draw(st.booleans())
    if kind == "int":
        dtype = draw(st.sampled_from(INT_TYPES))
        return S.Attr(name, dtype, nullable=nullable, filters=draw(filter_lists("int"))), dtype
    if kind == "float":
        dtype = draw(st.sampled_from(["float32", "float64"]))
        return S.Attr(name, dtype, nullable=nullable, filters=draw(filter_lists("float"))), dtype
    if kind == "string":
        dtype = draw(st.sampled_from(["utf8", "ascii"]))
        return S.Attr(name, dtype, nullable=nullable, filters=draw(filter_lists("string"))), dtype
    if kind == "multi":
        return S.Attr(name, "int32", cell_val_num=draw(st.integers(2, 3)), nullable=nullable,
                      filters=draw(filter_lists("int"))), "multi"
    if kind == "bool":
        return S.Attr(name, "bool", nullable=nullable), "bool"
    return S.Attr(name, "datetime64[ms]", nullable=nullable, filters=draw(filter_lists("int"))), "datetime"


def _column(draw, attr: S.Attr, kind: str, n: int) -> pa.Array:
    nulls = [draw(st.booleans()) and attr.nullable for _ in range(n)]
    if kind in INT_TYPES:
        info = np.iinfo(kind)
        values = [draw(st.integers(int(info.min), int(info.max))) for _ in range(n)]
        arr = pa.array(values, type=pa.from_numpy_dtype(np.dtype(kind)))
    elif kind in ("float32", "float64"):
        values = [draw(st.floats(-1e6, 1e6, width=32 if kind == "float32" else 64)) for _ in range(n)]
        arr = pa.array(values, type=pa.float32() if kind == "float32" else pa.float64())
    elif kind in ("utf8", "ascii"):
        alphabet = st.characters(min_codepoint=32, max_codepoint=126 if kind == "ascii" else 0x2FF)
        arr = pa.array([draw(st.text(alphabet, max_size=6)) for _ in range(n)], type=pa.string())
    elif kind == "multi":
        k = attr.cell_val_num
        flat = pa.array([draw(st.integers(-(2**31), 2**31 - 1)) for _ in range(n * k)], pa.int32())
        arr = pa.FixedSizeListArray.from_arrays(flat, k)
    elif kind == "bool":
        arr = pa.array([draw(st.booleans()) for _ in range(n)])
    else:
        arr = pa.array([draw(st.integers(-(10**12), 10**12)) for _ in range(n)], pa.timestamp("ms"))
    if any(nulls):
        arr = pa.array([None if isnull else v for v, isnull in zip(arr.to_pylist(), nulls)],
                       type=arr.type)
    return arr


def _coords(draw, dim: S.Dim, kind: str, n: int) -> pa.Array:
    if kind == "string":
        return pa.array([draw(st.text(st.characters(min_codepoint=33, max_codepoint=126), max_size=4))
                         for _ in range(n)], pa.string())
    lo, hi = dim.domain
    if kind == "float":
        return pa.array([draw(st.floats(lo, hi, allow_nan=False)) for _ in range(n)], pa.float64())
    values = [draw(st.integers(lo, hi)) for _ in range(n)]
    if kind == "datetime":
        return pa.array(values, pa.int32()).cast(pa.date32())
    return pa.array(values, pa.from_numpy_dtype(np.dtype(dim.dtype)))


@st.composite
def sparse_cases(draw):
    n_dims = draw(st.integers(1, 2))
    dims = [draw(dimensions(i, True)) for i in range(n_dims)]
    attrs = [draw(attributes(i, True)) for i in range(draw(st.integers(1, 3)))]
    dups = draw(st.booleans())
    order = draw(st.sampled_from(["row-major", "col-major", "hilbert"]))
    schema = S.Schema([d for d, _ in dims], [a for a, _ in attrs], sparse=True,
                      capacity=draw(st.integers(1, 12)), cell_order=order,
                      tile_order=draw(st.sampled_from(["row-major", "col-major"])),
                      allows_duplicates=dups,
                      coords_filters=draw(filter_lists("float")),
                      offsets_filters=draw(st.sampled_from([[], [S.Zstd(1)], [S.DoubleDelta()]])),
                      validity_filters=draw(st.sampled_from([[], [S.Rle()], [S.Gzip(2)]])))
    n = draw(st.integers(1, 30))
    columns = {d.name: _coords(draw, d, kind, n) for d, kind in dims}
    if not dups:  # unique coordinates: keep the first cell of each
        keys = list(zip(*(c.to_pylist() for c in columns.values())))
        keep = sorted({k: i for i, k in reversed(list(enumerate(keys)))}.values())
        columns = {k: c.take(pa.array(keep)) for k, c in columns.items()}
        n = len(keep)
    columns.update({a.name: _column(draw, a, kind, n) for a, kind in attrs})
    return schema, pa.table(columns)


@SETTINGS
@given(sparse_cases())
def test_sparse_roundtrip(tmp_path_factory, case):
    schema, table = case
    path = tmp_path_factory.mktemp("w") / "arr"
    create(str(path), schema)
    write(str(path), table, timestamp=7)
    _check_against_input(path, table, schema)


def _check_against_input(path, table: pa.Table, schema: S.Schema, ranges=None):
    dims = [d.name for d in schema.dims]
    attrs = [a.name for a in schema.attrs]
    oracle = oracle_cells(path, ranges)
    # tiledb reads what went in ...
    assert_same_cells(table, oracle, dims, attrs, path=path, ordered=False, check_types=False)
    # ... and tdbsql reads what tiledb reads
    got = tdbsql.query("SELECT * FROM array", str(path))
    assert_same_cells(got, oracle, dims, attrs, path=path)


@st.composite
def dense_cases(draw):
    n_dims = draw(st.integers(1, 2))
    dims = []
    dtype = draw(st.sampled_from(["int16", "int32", "int64"]))
    for i in range(n_dims):
        lo = draw(st.integers(-20, 20))
        hi = lo + draw(st.integers(0, 12))
        dims.append(S.Dim(f"d{i}", dtype, (lo, hi), draw(st.integers(1, hi - lo + 1))))
    attrs = [draw(attributes(i, False)) for i in range(draw(st.integers(1, 3)))]
    order = draw(st.sampled_from(["row-major", "col-major"]))
    schema = S.Schema(dims, [a for a, _ in attrs], sparse=False, cell_order=order,
                      tile_order=draw(st.sampled_from(["row-major", "col-major"])),
                      coords_filters=draw(filter_lists("int")))
    box = []
    for d in dims:
        lo, hi = d.domain
        a = draw(st.integers(lo, hi))
        box.append((a, draw(st.integers(a, hi))))
    n = int(np.prod([hi - lo + 1 for lo, hi in box]))
    columns = {a.name: _column(draw, a, kind, n) for a, kind in attrs}
    return schema, tuple(box), columns


@SETTINGS
@given(dense_cases())
def test_dense_roundtrip(tmp_path_factory, case):
    schema, box, columns = case
    path = tmp_path_factory.mktemp("w") / "arr"
    create(str(path), schema)
    write(str(path), columns, subarray=box, timestamp=7)
    dims = [d.name for d in schema.dims]
    attrs = [a.name for a in schema.attrs]
    oracle = oracle_cells(path)
    # the input cells come in the schema's cell order; tiledb reads row-major
    grids = np.meshgrid(*[np.arange(lo, hi + 1) for lo, hi in box], indexing="ij")
    order = "F" if schema.cell_order == "col-major" else "C"
    coords = {d: pa.array(g.reshape(-1, order=order), pa.from_numpy_dtype(np.dtype(schema.dims[0].dtype)))
              for d, g in zip(dims, grids)}
    table = pa.table({**coords, **columns})
    assert_same_cells(table, oracle, dims, attrs, path=path, ordered=False, check_types=False)
    got = tdbsql.query("SELECT * FROM array", str(path))
    assert_same_cells(got, oracle, dims, attrs, path=path, ordered=False)


def test_arrow_pandas_and_dict_inputs_write_the_same_cells(tmp_path):
    pd = pytest.importorskip("pandas")
    schema = S.Schema([S.Dim("x", "int64", (0, 99), 10)], [S.Attr("v", "float64"), S.Attr("s", str)])
    frames = {
        "arrow": pa.table({"x": [3, 1, 2], "v": [0.5, 1.5, 2.5], "s": ["c", "a", "b"]}),
        "pandas": pd.DataFrame({"x": [3, 1, 2], "v": [0.5, 1.5, 2.5], "s": ["c", "a", "b"]}),
        "dict": {"x": np.array([3, 1, 2]), "v": np.array([0.5, 1.5, 2.5]), "s": ["c", "a", "b"]},
        "reader": pa.RecordBatchReader.from_batches(
            pa.schema([("x", pa.int64()), ("v", pa.float64()), ("s", pa.string())]),
            [pa.record_batch([[3, 1, 2], [0.5, 1.5, 2.5], ["c", "a", "b"]], names=["x", "v", "s"])]),
    }
    for label, data in frames.items():
        path = tmp_path / label
        create(str(path), schema)
        write(str(path), data, timestamp=1)
        with tiledb.open(str(path)) as A:
            got = A.multi_index[0:99]
        assert got["x"].tolist() == [1, 2, 3], label
        assert got["v"].tolist() == [1.5, 2.5, 0.5], label
        assert got["s"].tolist() == ["a", "b", "c"], label


def test_schema_fields_reach_tiledb(tmp_path):
    schema = S.Schema(
        [S.Dim("x", "int32", (0, 9), 5), S.Dim("y", "float64", (-1.0, 1.0), 0.5)],
        [S.Attr("a", "uint8", fill=7, filters=[S.Zstd(5)]),
         S.Attr("b", "int32", cell_val_num=2, nullable=True),
         S.Attr("c", "ascii", var=True, filters=S.FilterList([S.Rle()], max_chunk_size=4096))],
        capacity=77, cell_order="col-major", tile_order="col-major", allows_duplicates=True,
        coords_filters=[S.Gzip(3)], offsets_filters=[S.DoubleDelta(), S.Lz4(2)],
        validity_filters=[S.Bzip2(4)])
    create(str(tmp_path / "a"), schema)
    with tiledb.open(str(tmp_path / "a")) as A:
        s = A.schema
    assert s.sparse and s.capacity == 77 and s.allows_duplicates
    assert s.cell_order == "col-major" and s.tile_order == "col-major"
    assert s.domain.dim("x").tile == 5 and s.domain.dim("y").domain == (-1.0, 1.0)
    assert s.attr("a").fill == 7 and s.attr("a").filters[0].level == 5
    assert s.attr("b").ncells == 2 and s.attr("b").isnullable
    assert s.attr("c").isvar and s.attr("c").filters.chunksize == 4096
    assert isinstance(s.coords_filters[0], tiledb.GzipFilter) and s.coords_filters[0].level == 3
    assert isinstance(s.offsets_filters[1], tiledb.LZ4Filter)
    assert isinstance(s.validity_filters[0], tiledb.Bzip2Filter)


@pytest.mark.parametrize("level", [23, 99])
def test_zstd_levels_above_the_maximum_are_clamped_as_tiledb_does(tmp_path, level):
    """TileDB (libzstd) writes such levels as level 22; python-zstandard refused them, so a
    schema tdbsql accepted failed on every write with a raw ValueError."""
    paths = []
    for lvl in (level, 22):
        path = str(tmp_path / f"z{lvl}")
        create(path, S.Schema([S.Dim("x", "int64", (0, 999), 100)],
                              [S.Attr("a", "int64", filters=[S.Zstd(lvl)])]))
        write(path, {"x": np.arange(1000), "a": np.arange(1000) % 7}, timestamp=1)
        paths.append(path)
    with tiledb.open(paths[0]) as A:
        assert A.multi_index[0:999]["a"].tolist() == (np.arange(1000) % 7).tolist()
    files = [tdbsql.open(p).fragments[0].entry.path for p in paths]
    with open(f"{files[0]}/a0.tdb", "rb") as a, open(f"{files[1]}/a0.tdb", "rb") as b:
        assert a.read() == b.read()


def test_a_wide_array_writes_under_a_low_open_file_limit(tmp_path):
    """A fragment's files are open only while an append writes to them: 150 nullable string
    attributes (450 files) write under a limit of 256 open files, as tiledb writes them."""
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(f"""
        import resource, pyarrow as pa
        from tdbsql import schema as S
        from tdbsql.storage.writer import create, write
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, resource.getrlimit(
            resource.RLIMIT_NOFILE)[1]))
        path = {str(tmp_path / "wide")!r}
        names = [f"a{{i}}" for i in range(150)]
        create(path, S.Schema([S.Dim("k", "int64", (0, 100), 10)],
                              [S.Attr(n, "string", nullable=True) for n in names], capacity=2))
        write(path, pa.table({{"k": [1, 2, 3], **{{n: ["x", None, "yy"] for n in names}}}}),
              timestamp=1)
    """)
    subprocess.run([sys.executable, "-c", script], check=True)
    with tiledb.open(str(tmp_path / "wide")) as A:
        got = A.query(return_arrow=True).df[:]
    assert got.column("a149").to_pylist() == ["x", None, "yy"]
