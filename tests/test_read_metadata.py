"""``tdbsql.metadata(path)`` equals ``dict(A.meta)`` of ``tiledb``: value types, overwrites,
deletes, time travel, consolidated and vacuumed metadata."""

from __future__ import annotations

import os

import numpy as np
import pytest

from history_helpers import consolidate, create, int_dim, tdbsql, tiledb, vacuum

WINDOWS = (5, 10, 15, 20, 30, 40, None, (15, 35), (20, 20), (31, 50))


def put(uri_, when, /, **values):
    with tiledb.open(uri_, "w", timestamp=when) as A:
        for k, v in values.items():
            A.meta[k] = v


def remove(uri_, when, *keys):
    with tiledb.open(uri_, "w", timestamp=when) as A:
        for k in keys:
            del A.meta[k]


def same_value(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype
                and a.shape == b.shape and np.array_equal(a, b))
    return type(a) is type(b) and (a == b or (a != a and b != b))


def tiledb_meta(uri, timestamp=None, key=None) -> dict:
    """``dict(A.meta)``, ndarrays copied before the array closes: TileDB-Py 0.36 returns views
    of TileDB's buffers, which hold garbage once the array is closed."""
    with tiledb.open(uri, timestamp=timestamp, key=key) as A:
        return {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in A.meta.items()}


def assert_same_meta(uri, timestamp=None, key=None):
    expected = tiledb_meta(uri, timestamp, key)
    got = tdbsql.metadata(uri, key=key, timestamp=timestamp)
    assert list(got) == list(expected), f"at {timestamp}"
    for k in expected:
        assert same_value(got[k], expected[k]), f"at {timestamp}: {k!r}: {got[k]!r} != {expected[k]!r}"
    return got


@pytest.fixture
def meta_uri(tmp_path):
    uri = create(str(tmp_path / "a"), [int_dim()], [tiledb.Attr("a", dtype=np.int32)])
    put(uri, 10, i=1, f=2.5, s="hello", u="ünï", e="", b=b"\x00\x01", t=(1, 2, 3), tf=(1.5, 2.5),
        arr=np.arange(6, dtype=np.int32), f32=np.float32(1.5), u64=np.uint64(2**63 + 5),
        i8=np.int8(-3), flag=True, grid=np.arange(6.0).reshape(2, 3),
        chars=np.array([b"x"]))
    put(uri, 20, i=2, new="x", arr=np.array([7.5, 8.5]))
    remove(uri, 30, "f", "arr", "grid")
    put(uri, 40, f=9.0, grid=np.ones((3, 1)))
    return uri


def test_value_types_and_history(meta_uri):
    for window in WINDOWS:
        assert_same_meta(meta_uri, window)
    latest = tdbsql.metadata(meta_uri)
    assert latest["i"] == 2 and "arr" not in latest and latest["f"] == 9.0
    assert latest["grid"].shape == (3, 1)


def test_before_any_metadata_is_empty(meta_uri):
    assert tdbsql.metadata(meta_uri, timestamp=5) == {}
    assert tdbsql.open(meta_uri, timestamp=5).metadata() == {}


@pytest.mark.parametrize("do_vacuum", [False, True])
def test_consolidated_metadata(meta_uri, do_vacuum):
    consolidate(meta_uri, {"sm.consolidation.mode": "array_meta"})
    names = os.listdir(os.path.join(meta_uri, "__meta"))
    assert any(n.endswith(".vac") for n in names)
    if do_vacuum:
        vacuum(meta_uri, "array_meta")
        assert len(os.listdir(os.path.join(meta_uri, "__meta"))) == 1
    for window in WINDOWS:
        assert_same_meta(meta_uri, window)


def test_consolidated_window_of_metadata(meta_uri):
    consolidate(meta_uri, {"sm.consolidation.mode": "array_meta",
                           "sm.consolidation.timestamp_start": 15,
                           "sm.consolidation.timestamp_end": 35})
    for window in WINDOWS:
        assert_same_meta(meta_uri, window)
    put(meta_uri, 50, i=50)
    for window in WINDOWS + (50, (35, 60)):
        assert_same_meta(meta_uri, window)


def test_multidimensional_array_values(tmp_path):
    uri = create(str(tmp_path / "a"), [int_dim()], [tiledb.Attr("a", dtype=np.int32)])
    grid = np.arange(12, dtype=np.int64).reshape(3, 4)
    put(uri, 10, grid=grid)
    got = tdbsql.metadata(uri)["grid"]
    assert got.dtype == grid.dtype and np.array_equal(got, grid)
    assert_same_meta(uri)


def test_metadata_of_dense_array_with_data(tmp_path):
    uri = create(str(tmp_path / "d"), [int_dim(hi=9, tile=5)], [tiledb.Attr("a", dtype=np.int32)],
                 sparse=False)
    with tiledb.open(uri, "w", timestamp=10) as A:
        A[0:4] = np.arange(4, dtype=np.int32)
        A.meta["written_with_data"] = "yes"
    put(uri, 20, x=1)
    for window in (10, 15, 20, None):
        assert_same_meta(uri, window)
