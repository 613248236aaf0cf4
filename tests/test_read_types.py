"""Every attribute and dimension datatype read through ``tdbsql.query`` equals ``tiledb``'s cells
(raw bytes, NULLs), and has the Arrow type of the README's table.

Arrays are built once per module with many attributes each; each test reads one attribute.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pyarrow as pa
import pytest

import tdbsql

tiledb = pytest.importorskip("tiledb")

from conftest import (  # noqa: E402
    NAT, assert_same_cells, dense_write, normalize_domain, oracle_cells,
)
import tiledb.libtiledb as lt  # noqa: E402

RNG = np.random.default_rng(7)
N = 40  # cells per write


def _ints(dtype, n):
    info = np.iinfo(dtype)
    vals = RNG.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    vals[:2] = [info.min, info.max]
    return vals


def _floats(dtype, n):
    vals = RNG.normal(0, 1e6, n).astype(dtype)
    vals[:5] = [np.nan, np.inf, -np.inf, -0.0, np.finfo(dtype).tiny]
    return vals


def _datetimes(unit, n):
    vals = RNG.integers(-10_000, 10_000, n).astype(np.int64)
    vals[3] = NAT
    return vals.view(f"M8[{unit}]")


def _times(unit, n):
    vals = RNG.integers(0, 86_400 // 3600 if unit == "h" else 1000, n).astype(np.int64)
    vals[2] = NAT
    return vals.view(f"m8[{unit}]")


UNICODE = ["", "a", "héllo", "日本語", "𝄞 clef", "tab\tnew\nline", "a\x00b", "trailing\x00"]


def _strings(n, nullable=False):
    vals = [UNICODE[i % len(UNICODE)] + ("x" * (i % 5)) for i in range(n)]
    if nullable:
        vals = [None if i % 4 == 1 else v for i, v in enumerate(vals)]
    return np.array(vals, dtype=object)


def _bytes(n, alphabet=range(256)):
    alphabet = np.array(list(alphabet), dtype=np.uint8)
    return np.array([bytes(RNG.choice(alphabet, i % 7)) for i in range(n)], dtype=object)


def _var_numeric(dtype, n):
    return np.array([np.arange(i % 4 + (i % 3 == 0), dtype=dtype) * (i + 1) for i in range(n)],
                    dtype=object)


def _wkb(n):
    points = [b"\x01\x01\x00\x00\x00" + np.array([i, -i], "<f8").tobytes() for i in range(n)]
    return np.array(points, dtype=object)


# name -> (Attr keyword arguments, data for n cells, dense writable)
ATTRS = {
    **{t: ({"dtype": t}, (lambda t: lambda n: _ints(t, n))(t), True)
       for t in ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64")},
    "float32": ({"dtype": "float32"}, lambda n: _floats("float32", n), True),
    "float64": ({"dtype": "float64"}, lambda n: _floats("float64", n), True),
    "bool": ({"dtype": bool}, lambda n: RNG.integers(0, 2, n).astype(bool), True),
    "char_var": ({"dtype": np.bytes_, "var": True}, lambda n: _bytes(n, range(1, 128)), True),
    "ascii": ({"dtype": "ascii", "var": True}, lambda n: _bytes(n, range(32, 127)), True),
    "utf8": ({"dtype": str, "var": True}, _strings, True),
    "blob": ({"dtype": "blob", "var": True}, _bytes, True),
    "wkb": ({"dtype": "wkb", "var": True}, _wkb, True),
    "wkt": ({"dtype": "wkt", "var": True},
            lambda n: np.array([f"POINT ({i} {-i})".encode() for i in range(n)], dtype=object),
            True),
    **{f"datetime_{u}": ({"dtype": f"M8[{u}]"}, (lambda u: lambda n: _datetimes(u, n))(u), True)
       for u in ("Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as")},
    **{f"time_{u}": ({"dtype": f"m8[{u}]"}, (lambda u: lambda n: _times(u, n))(u), True)
       for u in ("h", "m", "s", "ms", "us", "ns", "ps", "fs", "as")},
    "char3": ({"dtype": "S3"}, lambda n: np.array([b"abc", b"d", b"", b"\x00z\x00"] * (n // 4),
                                                   dtype="S3"), True),
    "int32x2": ({"dtype": "i4,i4"},
                lambda n: np.array([(i, -i) for i in range(n)], dtype="i4,i4"), True),
    "float64x3": ({"dtype": "f8,f8,f8"},
                  lambda n: np.array([(i, i / 3, -i) for i in range(n)], dtype="f8,f8,f8"),
                  True),
    "uint8x3": ({"dtype": "u1,u1,u1"},
                lambda n: np.array([(i, 255 - i, 7) for i in range(n)], dtype="u1,u1,u1"), True),
    "complex64": ({"dtype": np.complex64},
                  lambda n: (np.arange(n) + 1j * np.arange(n)[::-1]).astype(np.complex64), True),
    "int32_var": ({"dtype": np.int32, "var": True}, lambda n: _var_numeric(np.int32, n), True),
    "float64_var": ({"dtype": np.float64, "var": True}, lambda n: _var_numeric(np.float64, n),
                    True),
    "uint16_var": ({"dtype": np.uint16, "var": True}, lambda n: _var_numeric(np.uint16, n), True),
    "int32_null": ({"dtype": np.int32, "nullable": True}, lambda n: _ints("int32", n), True),
    "float32_null": ({"dtype": np.float32, "nullable": True}, lambda n: _floats("float32", n),
                     True),
    "bool_null": ({"dtype": bool, "nullable": True},
                  lambda n: RNG.integers(0, 2, n).astype(bool), True),
    "datetime_ms_null": ({"dtype": "M8[ms]", "nullable": True},
                         lambda n: _datetimes("ms", n), True),
    "utf8_null": ({"dtype": str, "var": True, "nullable": True},
                  lambda n: _strings(n, nullable=True), True),
    "blob_null": ({"dtype": "blob", "var": True, "nullable": True}, _bytes, True),
    "float64_var_null": ({"dtype": np.float64, "var": True, "nullable": True},
                         lambda n: _var_numeric(np.float64, n), True),
    # tiledb-py refuses dense writes of nullable fixed multi-value attributes
    "int32x2_null": ({"dtype": "i4,i4", "nullable": True},
                     lambda n: np.array([(i, 2 * i) for i in range(n)], dtype="i4,i4"), False),
    "char3_null": ({"dtype": "S3", "nullable": True},
                   lambda n: np.array([b"abc", b"d", b"", b"xyz"] * (n // 4), dtype="S3"), False),
}


def _nullmap(name, n):
    """Validity written for nullable attributes (None entries in strings are NULL already)."""
    return np.array([i % 3 != 2 for i in range(n)], dtype=np.uint8)


def _write_sparse(path, coords, names, n, timestamp):
    data = {name: ATTRS[name][1](n) for name in names}
    with tiledb.open(str(path), "w", timestamp=timestamp) as A:
        nulls = {k: _nullmap(k, n) for k in names
                 if ATTRS[k][0].get("nullable") and data[k].dtype != object}
        tiledb.sparse_array._setitem_impl_sparse(A, coords, data, nulls)


def _attrs(names):
    return [tiledb.Attr(name, **ATTRS[name][0]) for name in names]


@pytest.fixture(scope="module")
def sparse_types(tmp_path_factory):
    """Sparse 1-D array, every attribute type, small capacity, two overlapping fragments."""
    path = tmp_path_factory.mktemp("types") / "sparse"
    names = list(ATTRS)
    dom = tiledb.Domain(tiledb.Dim("x", domain=(-100, 100), tile=16, dtype=np.int32))
    tiledb.Array.create(str(path), tiledb.ArraySchema(domain=dom, sparse=True,
                                                      attrs=_attrs(names), capacity=7))
    coords = RNG.choice(np.arange(-100, 101), N, replace=False).astype(np.int32)
    _write_sparse(path, coords, names, N, timestamp=1)
    _write_sparse(path, coords[: N // 2] + 0, names, N // 2, timestamp=2)
    return path, oracle_cells(path)


@pytest.fixture(scope="module")
def dense_types(tmp_path_factory):
    """Dense 1-D array with a negative domain, three fragments: two disjoint (a gap of fill
    cells between them) and a third overlapping both (newer cells hide older ones)."""
    path = tmp_path_factory.mktemp("types") / "dense"
    names = [k for k, v in ATTRS.items() if v[2]]
    dom = tiledb.Domain(tiledb.Dim("x", domain=(-64, 63), tile=8, dtype=np.int64))
    tiledb.Array.create(str(path), tiledb.ArraySchema(domain=dom, sparse=False,
                                                      attrs=_attrs(names)))
    for ts, (lo, hi) in enumerate([(-61, -22), (3, 42), (-30, 5)], start=1):
        n = hi - lo + 1
        data = {name: ATTRS[name][1](n) for name in names}
        nulls = {k: _nullmap(k, n) for k in names
                 if ATTRS[k][0].get("nullable") and data[k].dtype != object}
        dense_write(path, [(lo, hi)], data, timestamp=ts, nullmaps=nulls)
    return path, oracle_cells(path)


@pytest.mark.parametrize("name", list(ATTRS))
def test_sparse_attribute_type(sparse_types, name):
    path, expected = sparse_types
    table = tdbsql.query(f'SELECT x, "{name}" FROM array', str(path))
    assert_same_cells(table, expected, ["x"], [name], path=path)


@pytest.mark.parametrize("name", [k for k, v in ATTRS.items() if v[2]])
def test_dense_attribute_type(dense_types, name):
    path, expected = dense_types
    table = tdbsql.query(f'SELECT x, "{name}" FROM array', str(path))
    assert_same_cells(table, expected, ["x"], [name], path=path)


def test_dense_select_star_matches(dense_types):
    path, expected = dense_types
    table = tdbsql.query("SELECT * FROM array", str(path))
    names = [k for k, v in ATTRS.items() if v[2]]
    assert table.column_names == ["x"] + names
    assert_same_cells(table, expected, ["x"], names, path=path)


# -- explicit values: the mapping means what the README says --------------------------------


def _one_cell_array(tmp_path, attr, value, sparse=True):
    path = tmp_path / "one"
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 3), tile=4, dtype=np.int32))
    tiledb.Array.create(str(path), tiledb.ArraySchema(domain=dom, sparse=sparse, attrs=[attr]))
    with tiledb.open(str(path), "w") as A:
        A[np.array([0], np.int32)] = value
    return path


@pytest.mark.parametrize("dtype,raw,expected", [
    ("M8[D]", 19000, dt.date(2022, 1, 8)),
    ("M8[W]", 1, dt.date(1970, 1, 8)),
    ("M8[h]", 25, dt.datetime(1970, 1, 2, 1)),
    ("M8[m]", -1, dt.datetime(1969, 12, 31, 23, 59)),
    ("M8[s]", 86_401, dt.datetime(1970, 1, 2, 0, 0, 1)),
    ("M8[us]", 1_500_000, dt.datetime(1970, 1, 1, 0, 0, 1, 500_000)),
    ("M8[Y]", 52, 52),
    ("M8[ps]", -5, -5),
    ("m8[h]", 2, dt.time(2)),
    ("m8[m]", 61, dt.time(1, 1)),
    ("m8[ms]", 1_001, dt.time(0, 0, 1, 1000)),
    ("m8[us]", 3_600_000_001, dt.time(1, 0, 0, 1)),
    ("m8[as]", 7, 7),
])
def test_temporal_values(tmp_path, dtype, raw, expected):
    path = _one_cell_array(tmp_path, tiledb.Attr("a", dtype=dtype),
                           np.array([raw], np.int64).view(dtype))
    value = tdbsql.query("SELECT a FROM array", str(path)).column("a")[0].as_py()
    if isinstance(expected, dt.datetime) and not isinstance(value, dt.datetime):
        value = value.to_pydatetime()  # pandas Timestamp for ns units
    assert value == expected


def test_nat_reads_as_null(tmp_path):
    path = _one_cell_array(tmp_path, tiledb.Attr("a", dtype="M8[Y]"),
                           np.array([NAT], np.int64).view("M8[Y]"))
    assert tdbsql.query("SELECT a FROM array", str(path)).column("a").to_pylist() == [None]


def test_strings_keep_raw_bytes(tmp_path):
    """Trailing NULs survive (numpy would strip them); CHAR comes back binary (as ``tiledb``
    reads it: bytes), valid UTF-8 or not."""
    path = _one_cell_array(tmp_path, tiledb.Attr("a", dtype=str, var=True),
                           np.array(["ab\x00\x00"], dtype=object))
    assert tdbsql.query("SELECT a FROM array", str(path)).column("a").to_pylist() == ["ab\x00\x00"]
    path2 = tmp_path / "char"
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 3), tile=4, dtype=np.int32))
    tiledb.Array.create(str(path2), tiledb.ArraySchema(
        domain=dom, sparse=True, attrs=[tiledb.Attr("a", dtype=np.bytes_, var=True)]))
    with tiledb.open(str(path2), "w") as A:
        A[np.array([0, 1], np.int32)] = np.array([b"\xff\xfe", b"ok"], dtype=object)
    column = tdbsql.query("SELECT a FROM array ORDER BY x", str(path2)).column("a")
    assert column.type == pa.binary()
    assert column.to_pylist() == [b"\xff\xfe", b"ok"]
    column = tdbsql.query("SELECT a FROM array WHERE x = 1", str(path2)).column("a")
    assert column.type == pa.binary()  # the type of the column, not of the cells read


def test_min_max_of_nullable_bool_with_all_null_tiles(tmp_path):
    """TileDB keeps no min / max of BOOL tiles: a tile holding only NULLs is still answered
    from its null count (it adds nothing) and the other tiles are read."""
    path = tmp_path / "b"
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 9), tile=10, dtype=np.int64))
    tiledb.Array.create(str(path), tiledb.ArraySchema(
        domain=dom, sparse=True, capacity=2, attrs=[tiledb.Attr("b", dtype=bool, nullable=True)]))
    x = np.arange(6)
    with tiledb.open(str(path), "w") as A:
        tiledb.sparse_array._setitem_impl_sparse(A, x, {"b": x % 2 == 0},
                                                 {"b": np.array([0, 0, 1, 1, 0, 1], np.uint8)})
    values = [c[0] for c in oracle_cells(path)["b"] if c is not None]
    got = tdbsql.query("SELECT min(b) AS lo, max(b) AS hi, count(b) AS c FROM array", str(path))
    assert got.to_pylist() == [{"lo": bool(min(values)), "hi": bool(max(values)),
                                "c": len(values)}]


# -- wide strings: tiledb-py has no numpy type for them; write raw buffers -----------------


WIDE = {"STRING_UTF16": "utf-16-le", "STRING_UTF32": "utf-32-le", "STRING_UCS2": "utf-16-le",
        "STRING_UCS4": "utf-32-le"}


def _raw_attr(name, datatype):
    attr = tiledb.Attr.__new__(tiledb.Attr)
    lt.Attribute.__init__(attr, lt.Context(tiledb.default_ctx()), name, datatype)
    attr._ncell = lt.TILEDB_VAR_NUM()
    return attr


def test_wide_string_types(tmp_path):
    path = tmp_path / "wide"
    attrs = [_raw_attr(n, getattr(lt.DataType, n)) for n in WIDE]
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 9), tile=2, dtype=np.int32))
    tiledb.Array.create(str(path), tiledb.ArraySchema(domain=dom, sparse=True, attrs=attrs,
                                                      capacity=2))
    strings = ["héllo", "", "𝄞x", "日本", "abc"]
    keep = []
    with tiledb.open(str(path), "w") as A:
        q = lt.Query(lt.Context(tiledb.default_ctx()), A.array, lt.QueryType.WRITE)
        q.layout = lt.LayoutType.UNORDERED
        x = np.arange(len(strings), dtype=np.int32)
        keep.append(x)
        q.set_data_buffer("x", x, np.uint64(len(x)))
        for name, codec in WIDE.items():
            encoded = [s.encode(codec) for s in strings]
            data = np.frombuffer(b"".join(encoded), dtype=np.uint8).copy()
            offsets = np.cumsum([0] + [len(e) for e in encoded[:-1]]).astype(np.uint64)
            keep += [data, offsets]
            width = 2 if "16" in codec else 4
            q.set_data_buffer(name, data, np.uint64(len(data) // width))
            q.set_offsets_buffer(name, offsets, np.uint64(len(offsets)))
        q._submit()
        q.finalize()
    table = tdbsql.query("SELECT * FROM array ORDER BY x", str(path))
    for name in WIDE:
        assert table.schema.field(name).type == pa.string()
        assert table.column(name).to_pylist() == strings


# -- fill values -----------------------------------------------------------------------------

FILLS = {
    "i4": {"dtype": np.int32, "fill": -7},
    "f8": {"dtype": np.float64, "fill": 2.5},
    "u8": {"dtype": np.uint8, "fill": 200},
    "b": {"dtype": bool, "fill": True},
    "s": {"dtype": str, "var": True, "fill": "xyz"},
    "s3": {"dtype": "S3", "fill": b"pqr"},
    "i4x2": {"dtype": "i4,i4", "fill": np.array([(5, 6)], dtype="i4,i4")},
    "d": {"dtype": "M8[D]", "fill": np.datetime64(100, "D")},
    "i4n": {"dtype": np.int32, "nullable": True, "fill": 9},
    "sn": {"dtype": str, "var": True, "nullable": True, "fill": "q"},
    # default fills: var strings "\x00", CHAR 0x80, numbers the type's minimum or NaN
    "i4_def": {"dtype": np.int32},
    "u64_def": {"dtype": np.uint64},
    "f4_def": {"dtype": np.float32},
    "b_def": {"dtype": bool},
    "s_def": {"dtype": str, "var": True},
    "c_def": {"dtype": np.bytes_, "var": True},
    "s3_def": {"dtype": "S3"},
    "i4x2_def": {"dtype": "i4,i4"},
    "blob_def": {"dtype": "blob", "var": True},
    "d_def": {"dtype": "M8[ns]"},
    "t_def": {"dtype": "m8[s]"},
    "i4n_def": {"dtype": np.int32, "nullable": True},
    "sn_def": {"dtype": str, "var": True, "nullable": True},
    "f8var_def": {"dtype": np.float64, "var": True},
}


def _fill_data(name, n):
    kw = FILLS[name]
    dtype = np.dtype(kw["dtype"]) if kw["dtype"] not in (str, np.bytes_, "blob") else None
    if kw.get("var") and dtype is not None and dtype.kind == "f":
        return np.array([np.arange(i % 3 + 1, dtype=dtype) for i in range(n)], dtype=object)
    if kw["dtype"] is str:
        return np.array([f"v{i}" for i in range(n)], dtype=object)
    if kw["dtype"] in (np.bytes_, "blob"):
        return np.array([b"w%d" % i for i in range(n)], dtype=object)
    if dtype.kind == "V":
        return np.array([(i, i + 1) for i in range(n)], dtype=dtype)
    if dtype.kind == "S":
        return np.array([b"ab%d" % (i % 10) for i in range(n)], dtype=dtype)
    return np.arange(n).astype(dtype)


@pytest.fixture(scope="module")
def fill_array(tmp_path_factory):
    path = tmp_path_factory.mktemp("fill") / "dense"
    dims = [tiledb.Dim("r", domain=(-5, 10), tile=3, dtype=np.int32),
            tiledb.Dim("c", domain=(0, 9), tile=4, dtype=np.int32)]
    attrs = [tiledb.Attr(k, **v) for k, v in FILLS.items()]
    tiledb.Array.create(str(path), tiledb.ArraySchema(domain=tiledb.Domain(*dims), attrs=attrs))
    for box in ([(-4, -2), (1, 3)], [(2, 3), (5, 8)]):
        shape = [hi - lo + 1 for lo, hi in box]
        n = int(np.prod(shape))
        data = {k: _fill_data(k, n).reshape(shape) for k in FILLS}
        dense_write(path, box, data)
    return path, oracle_cells(path)


@pytest.mark.parametrize("name", list(FILLS))
def test_fill_values(fill_array, name):
    path, expected = fill_array
    table = tdbsql.query(f"SELECT r, c, {name} FROM array", str(path))
    assert table.num_rows == 8 * 8  # the box of the non-empty domain
    assert_same_cells(table, expected, ["r", "c"], [name], path=path)


def test_default_fill_bytes(fill_array):
    path, _ = fill_array
    table = tdbsql.query("SELECT s_def, c_def, i4n_def, sn FROM array WHERE r = 0 AND c = 1",
                         str(path))
    assert table.to_pylist() == [{"s_def": "\x00", "c_def": b"\x80", "i4n_def": None,
                                  "sn": None}]


# -- dimension types -------------------------------------------------------------------------

INT_DIMS = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]


def _int_dim_domain(dtype):
    info = np.iinfo(dtype)
    return max(int(info.min), -120), min(int(info.max), 119)


@pytest.mark.parametrize("dtype", INT_DIMS + ["float32", "float64"])
def test_sparse_dimension_types(tmp_path, dtype):
    path = tmp_path / "a"
    if dtype.startswith("float"):
        dim = tiledb.Dim("x", domain=(-10.0, 10.0), tile=2.5, dtype=dtype)
        coords = np.unique(RNG.uniform(-10, 10, 30).astype(dtype))
        coords[:2] = [-10.0, 10.0]
    else:
        lo, hi = _int_dim_domain(dtype)
        dim = tiledb.Dim("x", domain=(lo, hi), tile=16, dtype=dtype)
        inner = RNG.choice(np.arange(lo + 1, hi), 28, replace=False)
        coords = np.concatenate([[lo, hi], inner]).astype(dtype)
    tiledb.Array.create(str(path), tiledb.ArraySchema(
        domain=tiledb.Domain(dim), sparse=True, attrs=[tiledb.Attr("a", dtype=np.int64)],
        capacity=4))
    with tiledb.open(str(path), "w") as A:
        A[coords] = np.arange(len(coords))
    table = tdbsql.query("SELECT x, a FROM array", str(path))
    assert_same_cells(table, oracle_cells(path), ["x"], ["a"], path=path)
    _check_domain(path)


@pytest.mark.parametrize("dtype", INT_DIMS)
def test_dense_dimension_types(tmp_path, dtype):
    path = tmp_path / "a"
    lo, hi = _int_dim_domain(dtype)
    tiledb.Array.create(str(path), tiledb.ArraySchema(
        domain=tiledb.Domain(tiledb.Dim("x", domain=(lo, hi), tile=16, dtype=dtype)),
        attrs=[tiledb.Attr("a", dtype=np.int64)]))
    dense_write(path, [(lo + 3, lo + 40)], np.arange(38))
    dense_write(path, [(hi - 20, hi)], np.arange(21) * 10)
    table = tdbsql.query("SELECT x, a FROM array", str(path))
    assert_same_cells(table, oracle_cells(path), ["x"], ["a"], path=path)
    _check_domain(path)


@pytest.mark.parametrize("unit", ["D", "s", "ns", "Y", "W"])
def test_sparse_datetime_dimension(tmp_path, unit):
    path = tmp_path / "a"
    dim = tiledb.Dim("t", domain=(np.datetime64(-1000, unit), np.datetime64(1000, unit)),
                     tile=np.timedelta64(50, unit), dtype=f"M8[{unit}]")
    tiledb.Array.create(str(path), tiledb.ArraySchema(
        domain=tiledb.Domain(dim), sparse=True, attrs=[tiledb.Attr("a", dtype=np.int64)],
        capacity=5))
    coords = RNG.choice(np.arange(-1000, 1001), 25, replace=False).astype(f"M8[{unit}]")
    with tiledb.open(str(path), "w") as A:
        A[coords] = np.arange(25)
    table = tdbsql.query("SELECT t, a FROM array", str(path))
    assert_same_cells(table, oracle_cells(path), ["t"], ["a"], path=path)
    _check_domain(path)


@pytest.mark.parametrize("sparse", [True, False])
def test_min_max_of_nanosecond_timestamps(tmp_path, sparse):
    """min / max of nanosecond timestamps (dimension and attributes), partly from tile metadata,
    keep their nanoseconds (a Python datetime cannot hold them: it raised ValueError)."""
    path = tmp_path / "a"
    dim = tiledb.Dim("t", domain=(np.datetime64(-1000, "ns"), np.datetime64(999, "ns")),
                     tile=np.timedelta64(10, "ns"), dtype="M8[ns]")
    tiledb.Array.create(str(path), tiledb.ArraySchema(
        domain=tiledb.Domain(dim), sparse=sparse, capacity=4,
        attrs=[tiledb.Attr("a", dtype="M8[ns]"), tiledb.Attr("m", dtype="M8[ms]")]))
    t = np.arange(-443, -377, dtype=np.int64)
    data = {"a": (t * 7 + 3).view("M8[ns]"), "m": (t * 3).view("M8[ms]")}
    if sparse:
        with tiledb.open(str(path), "w") as A:
            A[t.view("M8[ns]")] = data
    else:
        dense_write(path, [(np.datetime64(-443, "ns"), np.datetime64(-378, "ns"))], data)
    cells = oracle_cells(path)
    ints = {k: [int.from_bytes(c, "little", signed=True) for c in v] for k, v in cells.items()}
    got = tdbsql.query("SELECT min(t) AS t0, max(t) AS t1, min(a) AS a0, max(a) AS a1, "
                       "min(m) AS m0, max(m) AS m1, count(a) AS c FROM array", str(path))
    assert got.schema.types[:4] == [pa.timestamp("ns")] * 4
    assert got.schema.types[4:] == [pa.timestamp("ms")] * 2 + [pa.int64()]
    assert got.column("c").to_pylist() == [len(ints["a"])]
    want = [f(ints[k]) for k in "tam" for f in (min, max)]
    assert [got.column(i).cast(pa.int64())[0].as_py() for i in range(6)] == want


def test_dense_datetime_dimension(tmp_path):
    path = tmp_path / "a"
    dim = tiledb.Dim("t", domain=(np.datetime64(-100, "D"), np.datetime64(99, "D")),
                     tile=np.timedelta64(10, "D"), dtype="M8[D]")
    tiledb.Array.create(str(path), tiledb.ArraySchema(
        domain=tiledb.Domain(dim), attrs=[tiledb.Attr("a", dtype=np.int64)]))
    dense_write(path, [(np.datetime64(-37, "D"), np.datetime64(12, "D"))], np.arange(50))
    table = tdbsql.query("SELECT t, a FROM array", str(path))
    assert table.schema.field("t").type == pa.date32()
    assert_same_cells(table, oracle_cells(path), ["t"], ["a"], path=path)
    _check_domain(path)


def test_string_dimensions(tmp_path):
    path = tmp_path / "a"
    dims = [tiledb.Dim("s", domain=(None, None), tile=None, dtype="ascii"),
            tiledb.Dim("x", domain=(-50, 50), tile=7, dtype=np.int32)]
    tiledb.Array.create(str(path), tiledb.ArraySchema(
        domain=tiledb.Domain(*dims), sparse=True, capacity=3,
        attrs=[tiledb.Attr("a", dtype=np.int64), tiledb.Attr("u", dtype=str, var=True)]))
    words = ["", "a", "ab", "b", "a\x7fz", "zz", "Z", "abc" * 20]
    s = np.array([w for w in words for _ in range(3)], dtype=object)
    x = np.tile(np.array([-50, 0, 50], np.int32), len(words))
    with tiledb.open(str(path), "w") as A:
        A[s, x] = {"a": np.arange(len(s)), "u": np.array(["é"] * len(s), dtype=object)}
    table = tdbsql.query("SELECT s, x, a, u FROM array", str(path))
    assert_same_cells(table, oracle_cells(path), ["s", "x"], ["a", "u"], path=path)
    _check_domain(path)


def test_three_dimensions_mixed_types(tmp_path):
    path = tmp_path / "a"
    dims = [tiledb.Dim("x", domain=(-5, 5), tile=2, dtype=np.int16),
            tiledb.Dim("y", domain=(0.0, 1.0), tile=0.25, dtype=np.float64),
            tiledb.Dim("z", domain=(-100, -1), tile=10, dtype=np.int64)]
    tiledb.Array.create(str(path), tiledb.ArraySchema(
        domain=tiledb.Domain(*dims), sparse=True, capacity=4,
        attrs=[tiledb.Attr("a", dtype=np.float32)]))
    n = 50
    with tiledb.open(str(path), "w") as A:
        A[RNG.integers(-5, 6, n).astype(np.int16), RNG.uniform(0, 1, n),
          RNG.integers(-100, 0, n)] = RNG.normal(size=n).astype(np.float32)
    table = tdbsql.query("SELECT x, y, z, a FROM array", str(path))
    assert_same_cells(table, oracle_cells(path), ["x", "y", "z"], ["a"], path=path)
    _check_domain(path)


def test_dense_three_dimensions_negative(tmp_path):
    path = tmp_path / "a"
    dims = [tiledb.Dim(n, domain=d, tile=t, dtype=np.int16)
            for n, d, t in (("x", (-5, 5), 2), ("y", (-20, 20), 3), ("z", (-100, -1), 10))]
    tiledb.Array.create(str(path), tiledb.ArraySchema(
        domain=tiledb.Domain(*dims), attrs=[tiledb.Attr("a", dtype=np.int32)]))
    box = [(-4, 2), (-2, 5), (-30, -21)]
    dense_write(path, box, np.arange(7 * 8 * 10, dtype=np.int32).reshape(7, 8, 10))
    table = tdbsql.query("SELECT x, y, z, a FROM array", str(path))
    assert_same_cells(table, oracle_cells(path), ["x", "y", "z"], ["a"], path=path)
    _check_domain(path)


def _check_domain(path):
    with tiledb.open(str(path)) as A:
        want = normalize_domain(A.nonempty_domain())
    assert normalize_domain(tdbsql.open(str(path)).non_empty_domain()) == want


def test_invalid_wide_strings_stay_binary():
    """A lone surrogate is not text: the raw bytes come back as binary, never altered."""
    from tdbsql.datatypes import VAR_NUM, Datatype
    from tdbsql.engine.arrow_convert import to_arrow
    from tdbsql.engine.column import Column

    good = "ok𝄞".encode("utf-16-le")
    bad = b"\x00\xd8a\x00"  # high surrogate followed by 'a'
    raw = np.frombuffer(good + bad, np.uint8).copy()
    offsets = np.array([0, len(good), len(good) + len(bad)], np.int64)
    column = Column(raw, offsets, np.array([1, 1], np.uint8), VAR_NUM)
    arr = to_arrow(column, Datatype.STRING_UTF16, VAR_NUM, "w")
    assert arr.type == pa.binary() and arr.to_pylist() == [good, bad]
    column = Column(raw[: len(good)].copy(), offsets[:2].copy(), np.array([0], np.uint8), VAR_NUM)
    assert to_arrow(column, Datatype.STRING_UTF16, VAR_NUM, "w").to_pylist() == [None]


def test_scaled_datetime_overflow_is_a_clear_error(tmp_path):
    from tdbsql.errors import DataError

    path = _one_cell_array(tmp_path, tiledb.Attr("a", dtype="M8[h]"),
                           np.array([2**62], np.int64).view("M8[h]"))
    with pytest.raises(DataError, match="'a'"):
        tdbsql.query("SELECT a FROM array", str(path))


def test_time_attributes_compare_with_time_constants(tmp_path):
    """TIME_SEC / TIME_MIN / TIME_HR / TIME_MS read as time32 and compare with a TIME constant
    (time64[us]) as DuckDB compares its one TIME type: =, <, BETWEEN, IN (they were errors)."""
    import duckdb

    units = {"sec": "s", "min": "m", "hr": "h", "ms": "ms"}
    path = tmp_path / "times"
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 9), tile=3, dtype=np.int32))
    tiledb.Array.create(str(path), tiledb.ArraySchema(domain=dom, sparse=True, capacity=3, attrs=[
        tiledb.Attr(name, dtype=f"m8[{u}]", nullable=True) for name, u in units.items()]))
    x = np.arange(10, dtype=np.int32)
    with tiledb.open(str(path), "w") as A:
        tiledb.sparse_array._setitem_impl_sparse(
            A, x, {name: (x % 5).astype(f"m8[{u}]") for name, u in units.items()},
            {name: (x != 7).astype(np.uint8) for name in units})
    con = duckdb.connect()
    con.register("t", tdbsql.query("SELECT * FROM array", str(path)))
    for name, constant in [("sec", "TIME '00:00:02'"), ("min", "TIME '00:03:00'"),
                           ("hr", "TIME '01:00:00'"), ("ms", "TIME '00:00:00.002'")]:
        for where in [f"{name} = {constant}", f"{name} < {constant}",
                      f"{name} BETWEEN {constant} AND TIME '04:00:00'",
                      f"{name} IN ({constant}, TIME '00:00:04')"]:
            got = tdbsql.query(f"SELECT x FROM array WHERE {where} ORDER BY x", str(path))
            want = con.sql(f"SELECT x FROM t WHERE {where} ORDER BY x").fetchall()
            assert [(v,) for v in got.column("x").to_pylist()] == want, where
            assert want, where


@pytest.mark.parametrize("unit, values", [
    ("s", [100000, 5]), ("s", [-5, 5]), ("ms", [86_400_001, 0]), ("us", [10**11, 1]),
    ("ns", [-1, 2]), ("h", [25, 1])])
def test_times_outside_a_day_are_refused(tmp_path, unit, values):
    """TileDB's TIME_* are int64 counts; DuckDB's TIME lies in [00:00:00, 24:00:00].  A count
    outside was read wrapped around the clock (100000 s as 03:46:40, printed as '<value out of
    range>'): now a DataError naming the column and the value; 24:00:00 itself reads."""
    path = tmp_path / "a"
    tiledb.Array.create(str(path), tiledb.ArraySchema(
        domain=tiledb.Domain(tiledb.Dim("x", domain=(0, 9), tile=5, dtype=np.int64)),
        attrs=[tiledb.Attr("t", dtype=f"m8[{unit}]")], sparse=True))
    with tiledb.open(str(path), "w") as A:
        A[np.array([1, 2])] = {"t": np.array(values, dtype=f"m8[{unit}]")}
    message = rf"column .t.: the TIME_\w+ value {values[0]} is not a time"
    with pytest.raises(tdbsql.DataError, match=message):
        tdbsql.query("SELECT t FROM array", str(path))
    assert tdbsql.query("SELECT count(*) AS n FROM array", str(path)).to_pylist() == [{"n": 2}]


def test_time_of_24_hours_reads(tmp_path):
    path = tmp_path / "a"
    tiledb.Array.create(str(path), tiledb.ArraySchema(
        domain=tiledb.Domain(tiledb.Dim("x", domain=(0, 9), tile=5, dtype=np.int64)),
        attrs=[tiledb.Attr("t", dtype="m8[s]")], sparse=True))
    with tiledb.open(str(path), "w") as A:
        A[np.array([1, 2])] = {"t": np.array([86400, 0], dtype="m8[s]")}
    con = tdbsql.connect().register("a", str(path))
    assert con.sql("SELECT CAST(t AS VARCHAR) FROM a ORDER BY x").fetchall() == \
        [("24:00:00",), ("00:00:00",)]
