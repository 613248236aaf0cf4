"""Array metadata (``__meta``) against ``dict(A.meta)`` of ``tiledb``."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

tiledb = pytest.importorskip("tiledb")

from tdbsql.datatypes import Datatype  # noqa: E402
from tdbsql.errors import CorruptArrayError  # noqa: E402
from tdbsql.format.generic_tile import decode_generic_tile, encode_generic_tile  # noqa: E402
from tdbsql.format.metadata import (  # noqa: E402
    GENERIC_TILE_PIPELINE,
    MetadataEntry,
    encode_metadata,
    encode_metadata_file,
    load_metadata_dir,
    merge_metadata,
    parse_metadata,
    put_entry,
    raw_metadata,
    read_metadata_file,
    select_metadata_files,
    tiledb_py_delete,
    tiledb_py_put,
)
from tdbsql.format.names import new_name  # noqa: E402

# Every value kind TileDB-Py stores, with the type it is stored as.
VALUES = {
    "i8": np.int8(-3), "u8": np.uint8(200), "i16": np.int16(-300), "u16": np.uint16(60000),
    "i32": np.int32(-7), "u32": np.uint32(4_000_000_000), "i64": np.int64(-(2**40)),
    "u64": np.uint64(2**63 + 5), "f32": np.float32(1.5), "f64": np.float64(-2.25),
    "pyint": 7, "pyfloat": 3.5, "pybool": True, "str": "héllo wörld", "bytes": b"\x00ab\xff",
    "ints": (1, -2, 3), "floats": [1.5, 2.5, float("inf")], "empty_str": "", "empty_bytes": b"",
    "empty_tuple": (), "one_tuple": (9,), "npbytes": np.bytes_(b"xyz"), "npstr": np.str_("abc"),
    "arr2d": np.arange(6, dtype=np.int16).reshape(2, 3), "arr1d": np.array([1.0, 2.0], np.float32),
    "arr_u64": np.array([0, 2**64 - 1], np.uint64), "arr_bool": np.array([True, False, True]),
    "arr_empty": np.array([], np.int32), "arr_str": np.array(["abc"]), "arr_bytes": np.array([b"q"]),
    "arr_dates": np.array(["2020-01-01", "1969-12-31"], dtype="datetime64[D]"),
    "arr_3d": np.arange(8, dtype=np.uint8).reshape(2, 2, 2), "arr_0d": np.array(5.0),
    "arr_col": np.arange(3, dtype=np.int64).reshape(3, 1), "é key": 1, "": "empty key",
}


def _create(uri: str) -> None:
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 9), tile=10, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True,
                                                attrs=[tiledb.Attr("a", dtype=np.int32)]))


def _meta_files(uri: str) -> dict[str, bytes]:
    d = os.path.join(uri, "__meta")
    out = {}
    for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        with open(os.path.join(d, name), "rb") as f:
            out[name] = f.read()
    return out


def _tiledb_dict(uri: str, timestamp=None) -> dict:
    # TileDB-Py's numpy values view the open array's memory: copy them before closing.
    with tiledb.open(uri, timestamp=timestamp) as A:
        return {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in A.meta.items()}


def assert_same_meta(ours: dict, theirs: dict) -> None:
    assert list(ours) == list(theirs)  # same keys in the same (byte) order
    for k, expected in theirs.items():
        got = ours[k]
        assert type(got) is type(expected), (k, got, expected)
        if isinstance(expected, np.ndarray):
            assert got.dtype == expected.dtype and got.shape == expected.shape, k
            assert np.array_equal(got, expected), k
        else:
            assert got == expected, (k, got, expected)


@pytest.fixture(scope="module")
def all_types(tmp_path_factory):
    uri = str(tmp_path_factory.mktemp("meta") / "types")
    _create(uri)
    with tiledb.open(uri, "w", timestamp=1) as A:
        for k, v in VALUES.items():
            A.meta[k] = v
    return uri


def test_every_value_type_reads_like_tiledb(all_types):
    assert_same_meta(load_metadata_dir(os.path.join(all_types, "__meta")), _tiledb_dict(all_types))


def test_tiledb_types_of_stored_values(all_types):
    raw = load_metadata_dir(os.path.join(all_types, "__meta"), raw=True)
    assert raw["u16"].datatype == Datatype.UINT16 and raw["u16"].num == 1
    assert raw["str"].datatype == Datatype.STRING_UTF8 and raw["str"].num == len("héllo wörld".encode())
    assert raw["bytes"].datatype == Datatype.BLOB
    assert raw["npbytes"].datatype == Datatype.CHAR
    assert raw["pybool"].datatype == Datatype.INT64
    assert raw["empty_tuple"].datatype == Datatype.INT32 and raw["empty_tuple"].num == 0
    assert raw["__np_flat_arr_bool"].datatype == Datatype.BOOL
    assert raw["__np_flat_arr_dates"].datatype == Datatype.DATETIME_DAY
    assert raw["__np_flat_arr_bytes"].datatype == Datatype.STRING_ASCII
    assert raw["__np_shape_arr2d"].raw == np.array([2, 3], np.int64).tobytes()
    assert "__np_shape_arr1d" not in raw


def test_writer_is_byte_compatible_with_tiledb_py(all_types):
    (name, data), = _meta_files(all_types).items()
    entries = [e for k, v in VALUES.items() for e in tiledb_py_put(k, v)]
    payload = decode_generic_tile(data, name).tobytes()
    assert encode_metadata(entries) == payload
    assert encode_metadata_file(entries) == data


def test_tiledb_reads_what_we_write(tmp_path):
    uri = str(tmp_path / "ours")
    _create(uri)
    os.makedirs(os.path.join(uri, "__meta"), exist_ok=True)
    batches = {3: [e for k, v in VALUES.items() for e in tiledb_py_put(k, v)],
               5: tiledb_py_delete("i8") + tiledb_py_delete("arr2d") + tiledb_py_put("u8", "now a str")
               + [put_entry("raw_u16", Datatype.UINT16, np.array([1, 2], np.uint16).tobytes())]}
    for t, entries in batches.items():
        path = os.path.join(uri, "__meta", new_name(t, t, None))
        with open(path, "wb") as f:
            f.write(encode_metadata_file(entries))
    theirs = _tiledb_dict(uri)
    assert "i8" not in theirs and "arr2d" not in theirs and theirs["u8"] == "now a str"
    assert theirs["raw_u16"] == (1, 2)
    assert_same_meta(load_metadata_dir(os.path.join(uri, "__meta")), theirs)
    assert_same_meta(load_metadata_dir(os.path.join(uri, "__meta"), 0, 4), _tiledb_dict(uri, 4))


WINDOWS = [None, 1, 2, 3, 4, (2, 3), (2, 4), (1, 3), (3, 4), (4, 4), (5, 9), (0, 0)]


def _window(ts):
    if ts is None:
        return 0, None
    return (0, ts) if isinstance(ts, int) else ts


def _check_windows(uri: str) -> None:
    files = _meta_files(uri)
    for ts in WINDOWS:
        t_start, t_end = _window(ts)
        assert_same_meta(merge_metadata(files, t_start, t_end), _tiledb_dict(uri, ts))


def test_overwrite_delete_time_travel_consolidate_vacuum(tmp_path):
    uri = str(tmp_path / "history")
    _create(uri)
    steps = [(1, {"a": 1, "b": 2, "arr": np.arange(4).reshape(2, 2)}),
             (2, {"a": 10, "c": "x", "arr": 5}),
             (3, {"-b": None, "-arr": None, "e": (1.5, 2.5)}),
             (4, {"d": np.float32(4.0), "a": b"bytes now"})]
    for t, ops in steps:
        with tiledb.open(uri, "w", timestamp=t) as A:
            for k, v in ops.items():
                if k.startswith("-"):
                    del A.meta[k[1:]]
                else:
                    A.meta[k] = v
    _check_windows(uri)
    # Partial consolidation: TileDB's consolidated file forgets the deletion of "b" (made
    # at 3, of a key put at 1 outside the range), which then reappears; we must agree.
    tiledb.consolidate(uri, config=tiledb.Config({
        "sm.consolidation.mode": "array_meta",
        "sm.consolidation.timestamp_start": "2", "sm.consolidation.timestamp_end": "3"}))
    assert "b" in merge_metadata(_meta_files(uri), 0, 3)
    _check_windows(uri)
    tiledb.consolidate(uri, config=tiledb.Config({"sm.consolidation.mode": "array_meta"}))
    _check_windows(uri)
    tiledb.vacuum(uri, config=tiledb.Config({"sm.vacuum.mode": "array_meta"}))
    assert len(_meta_files(uri)) == 1
    _check_windows(uri)


def test_selection_rules():
    u = "0123456789abcdef0123456789abcdef"
    names = [f"__1_1_{u}", f"__2_2_{u}", f"__3_3_{u}", f"__1_3_{u}", f"__1_3_{u}.vac",
             f"__4_4_{u}.tmp", "junk", f"__5_5_{u}"]
    vac = f"/__meta/__1_1_{u}\n/__meta/__2_2_{u}\n/__meta/__3_3_{u}\n".encode()
    reads = []

    def read(name):
        reads.append(name)
        return vac

    assert select_metadata_files(names, read, 0, 10) == [f"__1_3_{u}", f"__5_5_{u}"]
    assert reads == [f"__1_3_{u}.vac"]
    # The .vac is outside [2, 10]: nothing is hidden, and the consolidated file is outside too.
    assert select_metadata_files(names, read, 2, 10) == [f"__2_2_{u}", f"__3_3_{u}", f"__5_5_{u}"]
    assert reads == [f"__1_3_{u}.vac"]
    # Ties on the first timestamp load in name order.
    assert select_metadata_files([f"__7_9_{'b' * 32}", f"__7_7_{'a' * 32}"], read, 0, 10) == \
        [f"__7_7_{'a' * 32}", f"__7_9_{'b' * 32}"]


def test_no_meta_folder(tmp_path):
    assert load_metadata_dir(tmp_path / "missing") == {}


def test_corrupt_metadata_files(all_types):
    (name, data), = _meta_files(all_types).items()
    payload = decode_generic_tile(data, name).tobytes()
    for cut in (1, 5, len(payload) - 1):
        with pytest.raises(CorruptArrayError) as err:
            parse_metadata(payload[:cut], f"__meta/{name}")
        assert name in str(err.value)
    for cut in (10, len(data) - 3):
        with pytest.raises(CorruptArrayError):
            read_metadata_file(data[:cut], name)
    bad_type = b"\x01\x00\x00\x00k\x00\x63\x01\x00\x00\x00\x00"
    with pytest.raises(CorruptArrayError, match="unknown datatype 99"):
        parse_metadata(bad_type)
    huge = b"\x01\x00\x00\x00k\x00\x01\xff\xff\xff\xff"
    with pytest.raises(CorruptArrayError):
        parse_metadata(huge)
    with pytest.raises(CorruptArrayError):
        merge_metadata({f"__1_1_{'a' * 32}": data[:-5]}, 0, 10)


_ENTRY_TYPES = [Datatype.INT8, Datatype.UINT16, Datatype.INT32, Datatype.FLOAT64, Datatype.BLOB,
                Datatype.STRING_UTF8, Datatype.BOOL, Datatype.DATETIME_MS]


@st.composite
def entries(draw):
    key = draw(st.text(max_size=6))
    if draw(st.booleans()):
        return MetadataEntry(key, True)
    dt = draw(st.sampled_from(_ENTRY_TYPES))
    num = draw(st.integers(0, 4))
    size = {Datatype.INT8: 1, Datatype.UINT16: 2, Datatype.INT32: 4, Datatype.FLOAT64: 8,
            Datatype.BLOB: 1, Datatype.STRING_UTF8: 1, Datatype.BOOL: 1, Datatype.DATETIME_MS: 8}[dt]
    return MetadataEntry(key, False, dt, num, draw(st.binary(min_size=num * size, max_size=num * size)))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(entries(), max_size=8))
def test_encode_parse_round_trip(batch):
    last = {}
    for e in batch:
        last[e.key] = e
    expected = [last[k] for k in sorted(last, key=lambda k: k.encode("utf-8", "surrogateescape"))]
    assert list(parse_metadata(encode_metadata(batch))) == expected
    tile = encode_generic_tile(encode_metadata(batch), 22, pipeline=GENERIC_TILE_PIPELINE)
    assert list(read_metadata_file(tile)) == expected
    files = {f"__1_1_{'a' * 32}": tile}
    assert list(raw_metadata(files, 0, 5).values()) == [e for e in expected if not e.deleted]


def test_consolidation_and_reads_load_metadata_alike(tmp_path):
    """array_meta consolidation loads ``__meta`` with the readers' helpers: its merged file
    holds exactly the entries a read of the window loads, and tiledb reads the same after."""
    import tdbsql
    from tdbsql.format.metadata import load_metadata, read_merged

    uri = str(tmp_path / "a")
    _create(uri)
    with tiledb.open(uri, "w", timestamp=1) as array:
        array.meta["x"] = 1
        array.meta["y"] = "a"
    with tiledb.open(uri, "w", timestamp=2) as array:
        del array.meta["x"]
        array.meta["z"] = (1.5, 2.5)
    with tiledb.open(uri, "w", timestamp=3) as array:
        array.meta["y"] = b"b"
    meta_dir = os.path.join(uri, "__meta")
    files = _meta_files(uri)
    loaded = load_metadata(sorted(files), files.__getitem__, 0, 10)
    assert loaded == read_merged(select_metadata_files(files, files.__getitem__, 0, 10),
                                 files.__getitem__) == raw_metadata(files, 0, 10)
    report = tdbsql.consolidate(uri, mode="array_meta")
    merged, = (p for p in report.created if not p.endswith(".vac"))
    with open(os.path.join(uri, merged), "rb") as f:
        assert list(read_metadata_file(f.read())) == list(loaded.values())
    assert load_metadata_dir(meta_dir, raw=True) == loaded
    assert_same_meta(load_metadata_dir(meta_dir), _tiledb_dict(uri))
    name, data = next(iter(files.items()))
    with pytest.raises(CorruptArrayError, match=f"__meta/{name}"):
        read_merged([name], {name: data[:-5]}.__getitem__)
