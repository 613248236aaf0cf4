"""Array schemas and enumerations against `tiledb` (TileDB 2.30) as the oracle.

Each case creates an array with `tiledb`, parses every file in its ``__schema/`` (and
``__schema/__enumerations/``), compares every field with what `tiledb` loads, and checks that
re-serializing gives the decoded file bytes back byte for byte.
"""

from __future__ import annotations

import dataclasses
import struct
import time
from pathlib import Path

import numpy as np
import pytest
import tiledb
import tiledb.libtiledb as lt
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tdbsql.datatypes import VAR_NUM, ArrayType, DataOrder, Datatype, Layout
from tdbsql.errors import CorruptArrayError, EncryptionKeyError, UnsupportedFormatError
from tdbsql.format.array_schema import (
    ArraySchema, Attribute, CurrentDomain, Dimension, DimensionLabel, EnumerationRef,
    default_fill_value, parse_array_schema, read_array_schema, schema_timestamp_range,
    write_array_schema,
)
from tdbsql.format.enumeration import (
    Enumeration, parse_enumeration, read_enumeration, write_enumeration,
)
from tdbsql.format.filter_pipeline import FilterPipeline
from tdbsql.format.filters.compression import GzipFilter, ZstdFilter
from tdbsql.format.generic_tile import decode_generic_tile, read_header
from tdbsql.format.binary import Reader

# --- helpers ------------------------------------------------------------------------------


def schema_files(uri: Path) -> list[Path]:
    return sorted(p for p in (uri / "__schema").iterdir() if p.is_file())


def decoded(path: Path, key: bytes | None = None) -> bytes:
    return decode_generic_tile(path.read_bytes(), str(path), key).tobytes()


def load_checked(path: Path, key: bytes | None = None) -> ArraySchema:
    """Parse one schema file and assert byte-identical re-serialization."""
    ours = read_array_schema(path.read_bytes(), str(path), path.name, key)
    assert ours.to_bytes() == decoded(path, key)
    assert read_array_schema(write_array_schema(ours), "rewritten", path.name) == ours
    return ours


def latest(uri: Path) -> ArraySchema:
    files = schema_files(uri)
    schemas = [load_checked(p) for p in files]
    return max(schemas, key=lambda s: (s.timestamp_range, s.name))


# Filter type id -> compressor id written in the options (they differ for DICTIONARY, DELTA).
COMPRESSOR_ID = {1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 14: 7, 19: 8}


def tdb_datatype(dtype) -> int:
    if dtype is None:
        return Datatype.ANY
    return int(tiledb.datatypes.DataType.from_numpy(np.dtype(dtype)).tiledb_type)


def expected_options(f) -> bytes:
    fid = int(f._type)
    if fid in COMPRESSOR_ID:
        out = struct.pack("<Bi", COMPRESSOR_ID[fid], getattr(f, "level", -1))
        if fid in (6, 19):
            out += bytes([tdb_datatype(f.reinterp_dtype)])
        return out
    if fid in (7, 10):
        return struct.pack("<I", f.window)
    if fid == 15:
        return struct.pack("<ddQ", f.factor, f.offset, f.bytewidth)
    return b""


def check_filters(ours: FilterPipeline, theirs) -> None:
    assert [f.filter_id for f in ours.filters] == [int(f._type) for f in theirs]
    assert [f.options_bytes() for f in ours.filters] == [expected_options(f) for f in theirs]


def py(value):
    """A tiledb-py domain / tile value as a plain Python number."""
    if value is None:
        return None
    arr = np.asarray(value)
    if arr.dtype.kind in "mM":
        return int(arr.astype(np.int64))
    return arr.item()


def fill_bytes(fill) -> bytes:
    if isinstance(fill, str):
        return fill.encode("utf-8")
    if isinstance(fill, bytes):
        return fill
    return np.asarray(fill).tobytes()


def compare_with_tiledb(ours: ArraySchema, uri: Path, ctx=None) -> None:
    t = tiledb.ArraySchema.load(str(uri), ctx=ctx)
    assert ours.version == t.version == 22
    assert ours.array_type == int(t._array_type)
    assert ours.sparse == t.sparse
    assert ours.allows_duplicates == bool(t._allows_dups)
    assert ours.cell_order == int(t._cell_order)
    assert ours.tile_order == int(t._tile_order)
    assert ours.capacity == t.capacity
    check_filters(ours.coords_filters, t.coords_filters)
    check_filters(ours.offsets_filters, t.offsets_filters)
    check_filters(ours.validity_filters, t.validity_filters)
    assert len(ours.dimensions) == t.ndim
    for dim, tdim in zip(ours.dimensions, (t.domain.dim(i) for i in range(t.ndim))):
        compare_dimension(dim, tdim)
    assert len(ours.attributes) == t.nattr
    for attr, tattr in zip(ours.attributes, (t.attr(i) for i in range(t.nattr))):
        compare_attribute(attr, tattr)


def compare_dimension(dim: Dimension, tdim) -> None:
    assert dim.name == tdim.name
    assert dim.datatype == int(tdim._tiledb_dtype)
    assert dim.cell_val_num == tdim._ncell
    check_filters(dim.filters, tdim.filters)
    if dim.is_var:
        assert dim.domain is None and dim.tile_extent is None
        return
    lo, hi = tdim.domain
    assert dim.domain == (py(lo), py(hi))
    assert dim.tile_extent == py(tdim.tile)


def compare_attribute(attr: Attribute, tattr) -> None:
    assert attr.name == tattr.name
    assert attr.datatype == int(tattr._tiledb_dtype)
    assert attr.cell_val_num == tattr._ncell
    assert attr.nullable == tattr.isnullable
    assert attr.enumeration_name == tattr.enum_label
    check_filters(attr.filters, tattr.filters)
    # tiledb-py cannot give the fill of a nullable attribute, crashes reading that of a
    # var-sized numeric one and decodes UTF-16/32 fills: the tests check those directly.
    exotic = attr.datatype in (Datatype.STRING_UTF16, Datatype.STRING_UTF32,
                               Datatype.STRING_UCS2, Datatype.STRING_UCS4, Datatype.ANY)
    var_numeric = attr.is_var and attr.info.kind not in ("string", "binary")
    if not (exotic or var_numeric or attr.nullable):
        assert attr.fill_value == fill_bytes(tattr.fill)


def create(uri: Path, dims, attrs, **kw) -> Path:
    schema = tiledb.ArraySchema(domain=tiledb.Domain(*dims), attrs=attrs, **kw)
    tiledb.Array.create(str(uri), schema)
    return uri


def check_array(uri: Path) -> ArraySchema:
    ours = latest(uri)
    compare_with_tiledb(ours, uri)
    return ours


def int_dim(name="d", dtype=np.int64, domain=(0, 99), tile=10, **kw):
    return tiledb.Dim(name, domain=domain, tile=tile, dtype=dtype, **kw)


# --- attributes ---------------------------------------------------------------------------

NUMPY_TYPES = [
    np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
    np.float32, np.float64, np.bool_,
]
DATETIME_UNITS = ["Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as"]
TIME_UNITS = ["h", "m", "s", "ms", "us", "ns", "ps", "fs", "as"]
SPECIAL_TYPES = ["S1", str, "ascii", "blob", "wkb", "wkt"]
LT_STRING_TYPES = [lt.DataType.STRING_UTF16, lt.DataType.STRING_UTF32,
                   lt.DataType.STRING_UCS2, lt.DataType.STRING_UCS4, lt.DataType.ANY]


@pytest.mark.parametrize("sparse", [True, False])
def test_every_attribute_datatype(tmp_path, sparse):
    dtypes = NUMPY_TYPES + [f"M8[{u}]" for u in DATETIME_UNITS]
    dtypes += [f"m8[{u}]" for u in TIME_UNITS] + SPECIAL_TYPES
    attrs = [tiledb.Attr(f"a{i}", dtype=dt) for i, dt in enumerate(dtypes)]
    schema = tiledb.ArraySchema(domain=tiledb.Domain(int_dim()), attrs=attrs, sparse=sparse)
    for i, kind in enumerate(LT_STRING_TYPES):
        extra = lt.Attribute(tiledb.default_ctx(), f"x{i}", kind)
        extra._ncell = lt.TILEDB_VAR_NUM()
        schema._add_attr(extra)
    tiledb.Array.create(str(tmp_path / "a"), schema)
    ours = check_array(tmp_path / "a")
    assert {a.datatype for a in ours.attributes} == set(Datatype)
    zero = {Datatype.STRING_UTF16: 2, Datatype.STRING_UTF32: 4, Datatype.STRING_UCS2: 2,
            Datatype.STRING_UCS4: 4, Datatype.ANY: 1}
    for attr in ours.attributes[-len(LT_STRING_TYPES):]:
        assert attr.is_var and attr.fill_value == bytes(zero[attr.datatype])


def test_multi_value_var_and_fixed_strings(tmp_path):
    attrs = [
        tiledb.Attr("cx", dtype=np.complex64),  # FLOAT32 x 2
        tiledb.Attr("c128", dtype=np.complex128),  # FLOAT64 x 2
        tiledb.Attr("r3", dtype=np.dtype([("", "i4")] * 3)),
        tiledb.Attr("u3", dtype=np.dtype([("", "u2")] * 3)),
        tiledb.Attr("s3", dtype="S3"),
        tiledb.Attr("s2", dtype="S2"),
        tiledb.Attr("vi", dtype=np.int32, var=True),
        tiledb.Attr("vf", dtype=np.float64, var=True),
        tiledb.Attr("vs", dtype=str),
    ]
    ours = check_array(create(tmp_path / "a", [int_dim()], attrs, sparse=True))
    assert [a.cell_val_num for a in ours.attributes] == [2, 2, 3, 3, 3, 2, VAR_NUM, VAR_NUM,
                                                         VAR_NUM]


def test_nullable_and_custom_fill_values(tmp_path):
    attrs = [
        tiledb.Attr("i", dtype=np.int32, fill=7),
        tiledb.Attr("n", dtype=np.int16, fill=-3, nullable=True),
        tiledb.Attr("f", dtype=np.float64, fill=2.5),
        tiledb.Attr("f32", dtype=np.float32, fill=-0.25, nullable=True),
        tiledb.Attr("u", dtype=str, fill="héllo"),
        tiledb.Attr("un", dtype=str, nullable=True),
        tiledb.Attr("a", dtype="ascii", fill="zz"),
        tiledb.Attr("s3", dtype="S3", fill=b"abc"),
        tiledb.Attr("b", dtype=np.bool_, fill=True),
        tiledb.Attr("dt", dtype="M8[D]", fill=np.datetime64("2020-01-02", "D")),
        tiledb.Attr("cx", dtype=np.complex64, fill=1 + 2j),
        tiledb.Attr("u64", dtype=np.uint64, fill=2**64 - 2, nullable=True),
    ]
    ours = check_array(create(tmp_path / "a", [int_dim()], attrs, sparse=False))
    a = {x.name: x for x in ours.attributes}
    assert a["i"].fill_value == struct.pack("<i", 7)
    assert a["u"].fill_value == "héllo".encode()
    assert a["n"].nullable and not a["i"].nullable
    assert a["cx"].fill_value == struct.pack("<ff", 1.0, 2.0)
    # Nullable ones (tiledb-py cannot read their fill back).
    assert a["n"].fill_value == struct.pack("<h", -3)
    assert a["f32"].fill_value == struct.pack("<f", -0.25)
    assert a["u64"].fill_value == struct.pack("<Q", 2**64 - 2)
    assert a["un"].fill_value == b"\x00"
    assert not any(x.fill_value_validity for x in ours.attributes)


# --- dimensions, layouts, capacity ----------------------------------------------------------

INT_TYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


@pytest.mark.parametrize("dtype", INT_TYPES)
@pytest.mark.parametrize("sparse", [False, True])
def test_integer_dimensions(tmp_path, dtype, sparse):
    dims = [int_dim(f"d{i}", dtype, (i, 90 + i), 7 + i) for i in range(3 if not sparse else 2)]
    ours = check_array(create(tmp_path / "a", dims, [tiledb.Attr("a", dtype=np.int32)],
                              sparse=sparse))
    assert ours.dimensions[1].domain == (1, 91) and ours.dimensions[1].tile_extent == 8


def test_sparse_mixed_dimensions(tmp_path):
    dims = [
        tiledb.Dim("f32", domain=(-1.5, 2.5), tile=0.5, dtype=np.float32),
        tiledb.Dim("f64", domain=(-1e300, 1e300), tile=1e299, dtype=np.float64),
        tiledb.Dim("s", domain=(None, None), tile=None, dtype="ascii"),
        tiledb.Dim("day", domain=(np.datetime64("2000-01-01"), np.datetime64("2030-12-31")),
                   tile=np.timedelta64(30, "D"), dtype="M8[D]"),
        tiledb.Dim("ns", domain=(np.datetime64(0, "ns"), np.datetime64(10**15, "ns")),
                   tile=np.timedelta64(10**9, "ns"), dtype="M8[ns]"),
        tiledb.Dim("u8", domain=(0, 200), tile=None, dtype=np.uint8),
    ]
    ours = check_array(create(tmp_path / "a", dims, [tiledb.Attr("a", dtype=np.int32)],
                              sparse=True, capacity=1234, allows_duplicates=True))
    assert ours.dimensions[0].domain == (-1.5, 2.5) and ours.dimensions[0].tile_extent == 0.5
    assert ours.dimensions[2].is_var and ours.dimensions[2].domain is None
    assert ours.dimensions[5].tile_extent == 201  # tiledb-py fills in the domain size
    assert ours.capacity == 1234 and ours.allows_duplicates


def test_dense_datetime_dimensions(tmp_path):
    dims = [tiledb.Dim("t", domain=(np.datetime64(0, "s"), np.datetime64(999, "s")),
                       tile=np.timedelta64(100, "s"), dtype="M8[s]")]
    ours = check_array(create(tmp_path / "a", dims, [tiledb.Attr("a", dtype=np.int32)]))
    assert ours.dimensions[0].datatype == Datatype.DATETIME_SEC
    assert ours.dimensions[0].domain == (0, 999)


ORDERS = ["row-major", "col-major"]


@pytest.mark.parametrize("tile_order", ORDERS)
@pytest.mark.parametrize("cell_order", ORDERS)
@pytest.mark.parametrize("sparse", [False, True])
def test_layouts(tmp_path, tile_order, cell_order, sparse):
    dims = [int_dim("x"), int_dim("y")]
    ours = check_array(create(tmp_path / "a", dims, [tiledb.Attr("a", dtype=np.int32)],
                              sparse=sparse, tile_order=tile_order, cell_order=cell_order))
    assert ours.tile_order == ORDERS.index(tile_order)
    assert ours.cell_order == ORDERS.index(cell_order)


def test_hilbert_order(tmp_path):
    dims = [int_dim("x"), tiledb.Dim("y", domain=(0.0, 1.0), tile=0.1, dtype=np.float64)]
    ours = check_array(create(tmp_path / "a", dims, [tiledb.Attr("a", dtype=np.int32)],
                              sparse=True, cell_order="hilbert", capacity=5))
    assert ours.cell_order == Layout.HILBERT


# --- filter pipelines -----------------------------------------------------------------------


def test_filter_pipelines_with_options(tmp_path):
    dims = [
        int_dim("x", filters=[tiledb.DoubleDeltaFilter(reinterp_dtype=np.int64),
                              tiledb.BitWidthReductionFilter(window=128),
                              tiledb.ZstdFilter(level=7)]),
        tiledb.Dim("s", domain=(None, None), tile=None, dtype="ascii",
                   filters=[tiledb.RleFilter(), tiledb.GzipFilter(level=9)]),
        tiledb.Dim("y", domain=(0.0, 1.0), tile=0.1, dtype=np.float64),  # inherits coords
    ]
    attrs = [
        tiledb.Attr("f", dtype=np.float64, filters=[
            tiledb.FloatScaleFilter(factor=0.5, offset=1.0, bytewidth=4),
            tiledb.XORFilter(), tiledb.BitShuffleFilter(), tiledb.ChecksumMD5Filter()]),
        tiledb.Attr("str", dtype=str, filters=[tiledb.DictionaryFilter(),
                                             tiledb.ChecksumSHA256Filter()]),
        tiledb.Attr("i", dtype=np.int32, filters=[
            tiledb.DeltaFilter(reinterp_dtype=np.uint32), tiledb.ByteShuffleFilter(),
            tiledb.PositiveDeltaFilter(window=64), tiledb.LZ4Filter(level=3),
            tiledb.NoOpFilter(), tiledb.Bzip2Filter(level=4)]),
        tiledb.Attr("d", dtype=np.int64, filters=[tiledb.DeltaFilter(),
                                                  tiledb.DoubleDeltaFilter()]),
    ]
    schema = tiledb.ArraySchema(
        domain=tiledb.Domain(*dims), attrs=attrs, sparse=True,
        offsets_filters=[tiledb.PositiveDeltaFilter(window=32), tiledb.LZ4Filter(level=1)],
        validity_filters=[tiledb.RleFilter(), tiledb.Bzip2Filter(level=9)],
    )
    # tiledb-py's coords_filters= argument copies the list into every dimension and leaves
    # the schema's own list empty; set the schema's list directly.
    schema._coords_filters = tiledb.FilterList([tiledb.ByteShuffleFilter(),
                                                tiledb.ZstdFilter(level=2)])
    uri = tmp_path / "a"
    tiledb.Array.create(str(uri), schema)
    ours = check_array(uri)
    # A dimension with an empty stored pipeline uses the coords filters.
    y = ours.dimension("y")
    assert y.filters == ours.coords_filters and y.stored_filters == FilterPipeline()
    assert ours.dimension("x").stored_filters is None


def test_default_pipelines(tmp_path):
    ours = check_array(create(tmp_path / "a", [int_dim()], [tiledb.Attr("a", dtype=np.int8)]))
    assert [f.filter_id for f in ours.coords_filters.filters] == [2]  # ZSTD
    assert [f.filter_id for f in ours.validity_filters.filters] == [4]  # RLE
    assert ours.attributes[0].filters.filters == ()


# --- enumerations ----------------------------------------------------------------------------


def enumeration_files(uri: Path) -> dict[str, Enumeration]:
    out = {}
    for path in sorted((uri / "__schema" / "__enumerations").iterdir()):
        enm = read_enumeration(path.read_bytes(), str(path))
        assert enm.path_name == path.name
        assert enm.to_bytes() == decoded(path)
        assert read_enumeration(write_enumeration(enm), "rewritten") == enm
        out[path.name] = enm
    return out


def test_enumerations(tmp_path):
    enums = [
        tiledb.Enumeration("colors", True, ["red", "green", "blue", "ünï"]),
        tiledb.Enumeration("nums", False, np.array([10, -20, 30], dtype=np.int32)),
        tiledb.Enumeration("fl", True, np.array([0.5, 1.5], dtype=np.float64)),
        tiledb.Enumeration("bytes", False, [b"ab", b"", b"c"]),
        tiledb.Enumeration("empty_str", False, ["", "x"]),
    ]
    attrs = [
        tiledb.Attr("c", dtype=np.uint8, enum_label="colors"),
        tiledb.Attr("n", dtype=np.int16, enum_label="nums", nullable=True),
        tiledb.Attr("f", dtype=np.int32, enum_label="fl"),
        tiledb.Attr("b", dtype=np.int8, enum_label="bytes"),
        tiledb.Attr("e", dtype=np.uint32, enum_label="empty_str"),
        tiledb.Attr("plain", dtype=np.int32),
    ]
    uri = create(tmp_path / "a", [int_dim()], attrs, enums=enums, sparse=True)
    ours = check_array(uri)
    files = enumeration_files(uri)
    assert {r.name for r in ours.enumerations} == {e.name for e in enums}
    with tiledb.open(str(uri)) as arr:
        for ref in ours.enumerations:
            enm = files[ref.filename]
            theirs = arr.enum(ref.name)
            assert enm.name == ref.name
            assert enm.ordered == theirs.ordered
            assert enm.datatype == int(theirs.type)
            assert enm.cell_val_num == theirs.cell_val_num
            expected = list(theirs.values())
            got = enm.values()
            if enm.datatype == Datatype.STRING_ASCII:  # tiledb-py gives ASCII labels as bytes
                assert [g.encode("ascii") for g in got] == expected
            else:
                assert got == [x.item() if hasattr(x, "item") else x for x in expected]
    assert files[ours.enumeration_filename("colors")].values() == ["red", "green", "blue", "ünï"]
    assert files[ours.enumeration_filename("nums")].values() == [10, -20, 30]


def test_enumeration_values_shapes():
    fixed = Enumeration("m", "__x_0", Datatype.INT16, 2, False, np.arange(6, dtype="<i2").tobytes())
    assert fixed.values() == [(0, 1), (2, 3), (4, 5)] and len(fixed) == 3
    var = Enumeration("v", "__y_0", Datatype.INT32, VAR_NUM, True,
                      np.arange(3, dtype="<i4").tobytes(), (0, 4, 4))
    assert var.values() == [[0], [], [1, 2]]
    utf16 = Enumeration("w", "__z_0", Datatype.STRING_UTF16, VAR_NUM, False,
                        "hiß".encode("utf-16-le"), (0, 4))
    assert utf16.values() == ["hi", "ß"]
    flags = Enumeration("b", "__b_0", Datatype.BOOL, 1, False, b"\x00\x01")
    assert flags.values() == [False, True]
    for enm in (fixed, var, utf16, flags):
        assert parse_enumeration(enm.to_bytes(), "mem") == enm


def test_enumeration_corruption():
    good = Enumeration("v", "__y_0", Datatype.STRING_UTF8, VAR_NUM, False, b"abc", (0, 1))
    raw = good.to_bytes()
    for cut in range(len(raw)):
        with pytest.raises(CorruptArrayError):
            parse_enumeration(raw[:cut], "enm")
    bad_offsets = Enumeration("v", "__y_0", Datatype.STRING_UTF8, VAR_NUM, False, b"abc", (0, 9))
    with pytest.raises(CorruptArrayError, match="offsets"):
        parse_enumeration(bad_offsets.to_bytes(), "enm")
    with pytest.raises(UnsupportedFormatError, match="version"):
        parse_enumeration(struct.pack("<I", 1) + raw[4:], "enm")


# --- dimension labels, current domain -------------------------------------------------------


def test_dimension_labels(tmp_path):
    d0, d1 = int_dim("x", np.uint32), int_dim("y", np.uint32, (0, 9), 5)
    labels = {
        0: {"xl": d0.create_label_schema("decreasing", np.float64)},
        1: {"yl": d1.create_label_schema("increasing", "ascii"),
            "yi": d1.create_label_schema("increasing", np.int16)},
    }
    uri = create(tmp_path / "a", [d0, d1], [tiledb.Attr("a", dtype=np.int32)],
                 dim_labels=labels)
    ours = check_array(uri)
    t = tiledb.ArraySchema.load(str(uri))
    assert len(ours.dimension_labels) == 3
    for label in ours.dimension_labels:
        theirs = t.dim_label(label.name)
        assert label.dimension_index == theirs.dim_index
        assert label.order == DataOrder[theirs.order.upper()]
        assert label.attribute_name == theirs.label_attr_name
        assert (label.cell_val_num == VAR_NUM) == theirs.isvar
        assert label.relative_uri and not label.is_external
        assert theirs.uri.endswith("/" + label.uri)
        # The label data is an array of its own, with its own schema.
        label_schema = latest(uri / label.uri)
        assert label_schema.attributes[0].name == label.attribute_name
        assert label_schema.attributes[0].datatype == label.datatype
    assert ours.dimension_labels[0].datatype == Datatype.FLOAT64


def make_current_domain(schema, ranges):
    ctx = tiledb.default_ctx()
    ndr = tiledb.NDRectangle(ctx, schema.domain)
    for name, (lo, hi) in ranges.items():
        ndr.set_range(name, lo, hi)
    cd = tiledb.CurrentDomain(ctx)
    cd.set_ndrectangle(ndr)
    schema.set_current_domain(cd)


def test_current_domain(tmp_path):
    dims = [int_dim("x", np.int32, (1, 100)), tiledb.Dim("s", dtype="ascii"),
            tiledb.Dim("f", domain=(0.0, 10.0), tile=1.0, dtype=np.float32)]
    schema = tiledb.ArraySchema(domain=tiledb.Domain(*dims),
                                attrs=[tiledb.Attr("a", dtype=np.int32)], sparse=True)
    make_current_domain(schema, {"x": (5, 50), "s": ("aa", "zzz"), "f": (0.5, 2.25)})
    tiledb.Array.create(str(tmp_path / "a"), schema)
    ours = check_array(tmp_path / "a")
    assert ours.current_domain == CurrentDomain(0, False, ((5, 50), (b"aa", b"zzz"), (0.5, 2.25)))
    ndr = tiledb.ArraySchema.load(str(tmp_path / "a")).current_domain.ndrectangle
    assert ndr.range(0) == (5, 50) and ndr.range(1) == ("aa", "zzz")


def test_empty_current_domain(tmp_path):
    ours = check_array(create(tmp_path / "a", [int_dim()], [tiledb.Attr("a", dtype=np.int8)]))
    assert ours.current_domain == CurrentDomain(0, True)


# --- schema evolution, timestamps -----------------------------------------------------------


def test_schema_evolution(tmp_path):
    uri = create(tmp_path / "a", [int_dim()], [tiledb.Attr("a", dtype=np.int32,
                                                           enum_label="nums")],
                 enums=[tiledb.Enumeration("nums", True, np.array([1, 2], dtype=np.int32))],
                 sparse=True)
    steps = []
    se = tiledb.ArraySchemaEvolution()
    se.add_attribute(tiledb.Attr("b", dtype=np.float32, nullable=True))
    steps.append(se)
    se = tiledb.ArraySchemaEvolution()
    se.drop_attribute("b")
    se.add_enumeration(tiledb.Enumeration("cols", False, ["r", "g"]))
    se.add_attribute(tiledb.Attr("c", dtype=np.uint8, enum_label="cols"))
    steps.append(se)
    for se in steps:
        time.sleep(0.002)  # distinct millisecond timestamps in the file names
        se.array_evolve(str(uri))
    time.sleep(0.002)
    with tiledb.open(str(uri)) as arr:
        extended = arr.enum("nums").extend(np.array([3], dtype=np.int32))
    se = tiledb.ArraySchemaEvolution()
    se.extend_enumeration(extended)
    se.array_evolve(str(uri))

    schemas = sorted((load_checked(p) for p in schema_files(uri)), key=lambda s: s.timestamp_range)
    assert [[a.name for a in s.attributes] for s in schemas] == [
        ["a"], ["a", "b"], ["a", "c"], ["a", "c"]]
    compare_with_tiledb(schemas[-1], uri)
    files = enumeration_files(uri)
    assert files[schemas[0].enumeration_filename("nums")].values() == [1, 2]
    assert files[schemas[-1].enumeration_filename("nums")].values() == [1, 2, 3]
    assert files[schemas[-1].enumeration_filename("cols")].values() == ["r", "g"]


def test_timestamp_range_from_name():
    assert schema_timestamp_range("__12_34_0123456789abcdef0123456789abcdef") == (12, 34)
    assert schema_timestamp_range("x/__5_5_0123456789abcdef0123456789abcdef_22") == (5, 5)
    assert schema_timestamp_range("__array_schema.tdb") == (0, 0)
    with pytest.raises(CorruptArrayError):
        schema_timestamp_range("__9_1_0123456789abcdef0123456789abcdef")
    with pytest.raises(CorruptArrayError):
        schema_timestamp_range("garbage")


def test_schema_name_and_timestamps(tmp_path):
    uri = create(tmp_path / "a", [int_dim()], [tiledb.Attr("a", dtype=np.int8)])
    (path,) = schema_files(uri)
    ours = load_checked(path)
    start, end, _ = path.name[2:].split("_", 2)
    assert ours.name == path.name and ours.timestamp_range == (int(start), int(end))


# --- writing: tiledb reads what we write ----------------------------------------------------


def test_tiledb_reads_our_schema_file(tmp_path):
    dims = [int_dim("x"), tiledb.Dim("s", dtype="ascii")]
    attrs = [tiledb.Attr("a", dtype=np.int32, fill=5), tiledb.Attr("v", dtype=str)]
    uri = create(tmp_path / "a", dims, attrs, sparse=True, capacity=99)
    (path,) = schema_files(uri)
    ours = load_checked(path)
    header = read_header(Reader(path.read_bytes(), str(path)))
    assert [f.filter_id for f in header.pipeline.filters] == [1]  # GZIP level 1
    assert header.pipeline.filters[0].level == 1
    changed = dataclasses.replace(ours, capacity=4321, attributes=ours.attributes[:1])
    path.write_bytes(write_array_schema(changed))
    t = tiledb.ArraySchema.load(str(uri))
    assert t.capacity == 4321 and t.nattr == 1
    compare_with_tiledb(load_checked(path), uri)


# --- legacy versions (files from TileDB's test/inputs/arrays) -------------------------------

LEGACY_FILES = {
    # non_split_coords_v1_4_0/__array_schema.tdb: format version 1 (domain datatype byte, no
    # dimension datatypes / filters, no fill values)
    "v1": (
        "0100000060000000000000006a00000000000000040100000000000000001200000000000100010000000105"
        "000000010100000001000000000000006a0000003c0000001000000000000000010000006a0000003c000000"
        "7801636460606064645cd0c6086480008206b1985841c47f20606002b18038c510483008a803094120011632"
        "4211026904e144a861102301e12607a8"
    ),
    # zero_var_chunks_v10/__schema/__1693562063520_...: version 10, a string dimension
    "v10": (
        "0a00000064000000000000008900000000000000040100000000000000001200000000000100010000000105"
        "0000000101000000010000000000000089000000400000001000000000000000010000008900000040000000"
        "7801e3620002460606017510030418415c06265610f11f08708bb080d4b080d4807480700a374c079003078c"
        "30e944b0228852a04eb802860606060049ce11b4"
    ),
    # sparse_array_v11/__schema/__1646080196909_...: version 11 (before attribute order,
    # enumerations, current domain)
    "v11": (
        "0b0000009b000000000000003801000000000000040100000000000000001200000000000100010000000105"
        "0000000101000000010000000000000038010000770000001000000000000000010000003801000077000000"
        "780195904b0e80300805e9c7c4e8c6abb49ec8c47be8d1bc9932f4e3c68d24d0420778e92c6a4ec4739a3952"
        "f103e156e3f9bb1261220cddf89e26509ba871b17bcb94ad79df663df95f4fd021f46dc9643579013101317d"
        "8bc859d16c2a1bea401d6811fb72ab6772e3de3f18ad4ab88ee20fb56b2306"
    ),
    # dense_array_v1_3_0/__array_schema.tdb: TileDB 1.3, before format version 1 (TileDB itself
    # refuses it)
    "v1_3_0": (
        "5100000000000000630000000000000004010000000000000001010000000100000000000000630000000000"
        "00003900000000000000780163646060600662281050873098fe0301986060028ab00071517e793123940d16"
        "000926e7e7a00a82548070220303c8081013000b861030"
    ),
}


def legacy(name: str, file_name: str = "__array_schema.tdb") -> ArraySchema:
    return read_array_schema(bytes.fromhex(LEGACY_FILES[name]), name, file_name)


def upgraded(s: ArraySchema) -> ArraySchema:
    """What TileDB makes of an old schema when it writes it again: version 22 and an empty
    current domain, nothing else changed."""
    return dataclasses.replace(s, version=22, current_domain=CurrentDomain(0, True))


def test_legacy_v1_schema():
    s = legacy("v1")
    assert s.version == 1 and s.sparse and not s.allows_duplicates
    assert s.tile_order == s.cell_order == Layout.COL_MAJOR and s.capacity == 100000
    assert [d.name for d in s.dimensions] == ["d1", "d2"]
    assert all(d.datatype == Datatype.INT32 and d.domain == (0, 10000) and d.tile_extent == 10001
               for d in s.dimensions)
    # Before v6 attributes get TileDB's default fill value; before v7 no validity filters.
    assert s.attributes[0].fill_value == struct.pack("<i", -(2**31))
    assert s.validity_filters == FilterPipeline() and s.current_domain is None
    assert s.timestamp_range == (0, 0) and s.name == "__array_schema.tdb"
    assert parse_array_schema(s.to_bytes(), "v1 upgraded", s.name) == upgraded(s)


def test_legacy_v10_v11_schemas():
    v11 = legacy("v11", "__1646080196909_1646080196909_295490b3104f401e943c4a7a58143d3a")
    assert v11.version == 11 and v11.timestamp_range == (1646080196909, 1646080196909)
    assert [(a.name, a.datatype, a.cell_val_num) for a in v11.attributes] == [
        ("a1", Datatype.INT32, 1), ("a2", Datatype.CHAR, VAR_NUM), ("a3", Datatype.FLOAT32, 2)]
    assert [f.filter_id for a in v11.attributes for f in a.filters.filters] == [3, 1, 2]
    assert v11.attributes[2].fill_value == np.array([np.nan] * 2, dtype="<f4").tobytes()
    assert v11.dimensions[0].domain == (1, 4) and v11.dimensions[0].tile_extent == 2
    assert v11.dimensions[0].datatype == Datatype.UINT64 and v11.capacity == 2
    v10 = legacy("v10")
    assert v10.dimensions[0].is_var and v10.dimensions[0].domain is None
    for s in (v10, v11):
        assert parse_array_schema(s.to_bytes(), "upgraded", s.name) == upgraded(s)


def test_pre_v1_schema_is_refused():
    with pytest.raises((CorruptArrayError, UnsupportedFormatError)):
        legacy("v1_3_0")


# --- errors ----------------------------------------------------------------------------------


def tiledb_schema_bytes(tmp_path) -> bytes:
    dims = [int_dim("x"), tiledb.Dim("s", dtype="ascii")]
    attrs = [tiledb.Attr("a", dtype=np.int32, nullable=True, enum_label="e"),
             tiledb.Attr("v", dtype=str, filters=[tiledb.ZstdFilter(4)])]
    schema = tiledb.ArraySchema(domain=tiledb.Domain(*dims), attrs=attrs, sparse=True,
                                enums=[tiledb.Enumeration("e", False, ["p", "q"])])
    make_current_domain(schema, {"x": (1, 5), "s": ("a", "b")})
    tiledb.Array.create(str(tmp_path / "a"), schema)
    (path,) = schema_files(tmp_path / "a")
    return path.read_bytes()


def test_truncated_schema_raises_corrupt(tmp_path):
    data = tiledb_schema_bytes(tmp_path)
    raw = decode_generic_tile(data, "s").tobytes()
    for cut in range(len(raw)):
        with pytest.raises(CorruptArrayError):
            parse_array_schema(raw[:cut], "schema")
    with pytest.raises(CorruptArrayError, match="unexpected bytes"):
        parse_array_schema(raw + b"\x00", "schema")
    for cut in range(0, len(data), 7):
        with pytest.raises(CorruptArrayError):
            read_array_schema(data[:cut], "schema file")


def test_corrupted_bytes_never_escape(tmp_path):
    raw = decode_generic_tile(tiledb_schema_bytes(tmp_path), "s").tobytes()
    rng = np.random.default_rng(7)
    for pos in range(len(raw)):
        for value in (0x00, 0xFF, int(rng.integers(256))):
            bad = raw[:pos] + bytes([value]) + raw[pos + 1:]
            try:
                parse_array_schema(bad, "schema")
            except (CorruptArrayError, UnsupportedFormatError):
                pass


def test_corrupted_file_bytes_raise_corrupt(tmp_path):
    data = bytearray(tiledb_schema_bytes(tmp_path))
    for pos in range(60, len(data), 3):  # inside the compressed body
        bad = bytes(data[:pos]) + bytes([data[pos] ^ 0x5A]) + bytes(data[pos + 1:])
        try:
            read_array_schema(bad, "schema file")
        except (CorruptArrayError, UnsupportedFormatError):
            pass


def test_unknown_datatype_is_unsupported(tmp_path):
    raw = decode_generic_tile(tiledb_schema_bytes(tmp_path), "s").tobytes()
    schema = parse_array_schema(raw, "s")
    bad_attr = dataclasses.replace(schema.attributes[0], datatype=99)
    bad = dataclasses.replace(schema, attributes=(bad_attr,) + schema.attributes[1:])
    with pytest.raises(UnsupportedFormatError, match="attribute 0 datatype: unknown datatype"):
        parse_array_schema(bad.to_bytes(), "s")
    bad_dim = dataclasses.replace(schema.dimensions[1], datatype=200)
    bad = dataclasses.replace(schema, dimensions=(schema.dimensions[0], bad_dim),
                              current_domain=CurrentDomain(0, True))
    with pytest.raises(UnsupportedFormatError, match="unknown datatype id 200"):
        parse_array_schema(bad.to_bytes(), "s")


def test_unsupported_versions():
    for version in (0, 24, 2**32 - 1):
        with pytest.raises(UnsupportedFormatError, match="version"):
            parse_array_schema(struct.pack("<I", version) + bytes(40), "s")


def test_invalid_enum_values_are_corrupt(tmp_path):
    raw = bytearray(decode_generic_tile(tiledb_schema_bytes(tmp_path), "s").tobytes())
    for offset, field in ((5, "array type"), (6, "tile order"), (7, "cell order")):
        bad = bytes(raw[:offset]) + b"\x09" + bytes(raw[offset + 1:])
        with pytest.raises(CorruptArrayError, match=field):
            parse_array_schema(bad, "s")


# --- round trips of generated schemas -------------------------------------------------------

names = st.text(st.characters(blacklist_categories=("Cs",)), max_size=6)
pipelines = st.builds(
    FilterPipeline,
    st.lists(st.one_of(st.builds(GzipFilter, st.integers(-1, 9)),
                       st.builds(ZstdFilter, st.integers(-5, 19))), max_size=3).map(tuple),
    st.sampled_from([65536, 1024, 0]),
)
INT_DIM_TYPES = [Datatype.INT8, Datatype.UINT16, Datatype.INT32, Datatype.UINT64,
                 Datatype.DATETIME_DAY]


@st.composite
def dimensions(draw, index):
    if draw(st.booleans()):
        return Dimension(f"d{index}", Datatype.STRING_ASCII, VAR_NUM, draw(pipelines), None, None)
    datatype = draw(st.sampled_from(INT_DIM_TYPES + [Datatype.FLOAT32, Datatype.FLOAT64]))
    if datatype in (Datatype.FLOAT32, Datatype.FLOAT64):
        values, extents = st.floats(-1e6, 1e6, width=32), st.floats(0.5, 1e6, width=32)
    else:
        info = np.iinfo(np.dtype(datatype_numpy(datatype)))
        values, extents = st.integers(int(info.min), int(info.max)), st.integers(1, int(info.max))
    lo, hi = sorted((draw(values), draw(values)))
    extent = draw(st.one_of(st.none(), extents))  # a read refuses a tile extent of 0 or less
    return Dimension(f"d{index}", datatype, 1, draw(pipelines), (lo, hi), extent)


def datatype_numpy(datatype):
    from tdbsql.datatypes import type_info

    return type_info(datatype).numpy


@st.composite
def attributes(draw, index):
    datatype = draw(st.sampled_from(list(Datatype)))
    cvn = draw(st.sampled_from([1, 2, 3, VAR_NUM]))
    cell = None if cvn == VAR_NUM else len(default_fill_value(datatype, cvn))  # a fill is a cell
    return Attribute(
        f"a{index}{draw(names)}", datatype, cvn, draw(pipelines),
        draw(st.binary(min_size=cell or 1, max_size=cell or 9)),
        draw(st.booleans()), draw(st.booleans()), draw(st.sampled_from(list(DataOrder))),
        draw(st.one_of(st.none(), names.filter(bool))),
    )


@st.composite
def schemas(draw):
    dims = tuple(draw(dimensions(i)) for i in range(draw(st.integers(1, 3))))
    attrs = tuple(draw(attributes(i)) for i in range(draw(st.integers(0, 3))))
    labels = tuple(
        DimensionLabel(draw(st.integers(0, 2)), draw(st.sampled_from(list(DataOrder))),
                       draw(names), draw(st.booleans()), draw(names), draw(names),
                       draw(st.sampled_from(list(Datatype))), draw(st.sampled_from([1, VAR_NUM])),
                       draw(st.booleans()))
        for _ in range(draw(st.integers(0, 2))))
    enums = tuple(EnumerationRef(draw(names), draw(names)) for _ in range(draw(st.integers(0, 2))))
    current = CurrentDomain(0, True)
    if draw(st.booleans()):
        ranges = tuple((b"a", b"zz") if d.is_var else d.domain for d in dims)
        current = CurrentDomain(0, False, ranges)
    return ArraySchema(
        version=22, array_type=draw(st.sampled_from(list(ArrayType))),
        allows_duplicates=draw(st.booleans()), tile_order=draw(st.sampled_from(list(Layout))),
        cell_order=draw(st.sampled_from(list(Layout))), capacity=draw(st.integers(0, 2**64 - 1)),
        coords_filters=draw(pipelines), offsets_filters=draw(pipelines),
        validity_filters=draw(pipelines), dimensions=dims, attributes=attrs,
        dimension_labels=labels, enumerations=enums, current_domain=current,
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schemas())
def test_generated_schema_round_trip(schema):
    # Empty stored dimension pipelines mean "inherit the coords filters" on reading.
    dims = tuple(
        dataclasses.replace(d, filters=schema.coords_filters, stored_filters=d.filters)
        if not d.filters.filters else d
        for d in schema.dimensions)
    schema = dataclasses.replace(schema, dimensions=dims)
    assert read_array_schema(write_array_schema(schema), "generated") == schema
    assert parse_array_schema(schema.to_bytes(), "generated").to_bytes() == schema.to_bytes()


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(list(Datatype)), st.booleans(),
       st.lists(st.binary(max_size=5), max_size=5))
def test_generated_enumeration_round_trip(datatype, ordered, labels):
    starts = np.cumsum([0] + [len(x) for x in labels[:-1]]) if labels else []
    offsets = tuple(int(x) for x in starts)
    enm = Enumeration("e", "__e_0", datatype, VAR_NUM, ordered, b"".join(labels), offsets)
    assert read_enumeration(write_enumeration(enm), "generated") == enm


# --- encrypted arrays (last: needs the AES-256-GCM filter) ----------------------------------

KEY = "0123456789abcdeF0123456789abcdeF"


def test_encrypted_schema_and_enumeration(tmp_path):
    pytest.importorskip("tdbsql.format.filters.encryption")
    ctx = tiledb.Ctx({"sm.encryption_type": "AES_256_GCM", "sm.encryption_key": KEY})
    dom = tiledb.Domain(int_dim(ctx=ctx), ctx=ctx)
    schema = tiledb.ArraySchema(
        domain=dom, sparse=True, ctx=ctx,
        attrs=[tiledb.Attr("a", dtype=np.int8, enum_label="e", ctx=ctx)],
        enums=[tiledb.Enumeration("e", True, ["lo", "hi"], ctx=ctx)],
    )
    uri = tmp_path / "enc"
    tiledb.Array.create(str(uri), schema, ctx=ctx)
    key = KEY.encode()
    (path,) = schema_files(uri)
    ours = load_checked(path, key)
    compare_with_tiledb(ours, uri, ctx)
    (enm_path,) = (uri / "__schema" / "__enumerations").iterdir()
    assert read_enumeration(enm_path.read_bytes(), str(enm_path), key).values() == ["lo", "hi"]
    with pytest.raises(EncryptionKeyError) as missing:
        read_array_schema(path.read_bytes(), str(path), path.name)
    with pytest.raises(EncryptionKeyError) as wrong:
        read_array_schema(path.read_bytes(), str(path), path.name, b"x" * 32)
    assert KEY not in str(missing.value) + str(wrong.value)
    # TileDB reads the encrypted file we write.
    path.write_bytes(write_array_schema(dataclasses.replace(ours, capacity=77), key))
    assert tiledb.ArraySchema.load(str(uri), ctx=ctx).capacity == 77
    enm_path.write_bytes(write_enumeration(read_enumeration(enm_path.read_bytes(), "e", key), key))
    with tiledb.open(str(uri), ctx=ctx) as arr:
        assert list(arr.enum("e").values()) == ["lo", "hi"]
