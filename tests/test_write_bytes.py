"""tdbsql's fragments are byte-for-byte what TileDB 2.30 writes for the same cells.

The same schema (unfiltered, so codec builds cannot differ) and data are written once by
``tiledb`` and once by tdbsql; every data file must be identical and every fragment metadata
value (non-empty domain, R-tree, tile offsets, var sizes, validity offsets, tile and fragment
min/max/sum/null counts) equal.  Covers the global orders (row/col-major, Hilbert), string,
float and datetime dimensions, duplicates, and dense tiles with padding.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

tiledb = pytest.importorskip("tiledb")

from tdbsql import schema as S  # noqa: E402
from tdbsql.format.fragment_metadata import values_equal  # noqa: E402
from tdbsql.storage.array import Array  # noqa: E402
from tdbsql.storage.writer import create, write  # noqa: E402

PLAIN = dict(coords_filters=[], offsets_filters=[], validity_filters=[])
SECTIONS = ("tile_offsets", "tile_var_offsets", "tile_var_sizes", "tile_validity_offsets",
            "tile_mins", "tile_maxes", "tile_sums", "tile_null_counts", "file_sizes",
            "file_var_sizes", "file_validity_sizes")


def _metadata(path):
    meta = Array(str(path)).fragments[-1].metadata
    meta.load_all()
    return meta


def assert_same_fragment(theirs, ours):
    m1, m2 = _metadata(theirs), _metadata(ours)
    for attr in ("non_empty_domain", "sparse_tile_num", "last_tile_cell_num", "dense",
                 "field_names", "has_timestamps"):
        assert getattr(m1, attr) == getattr(m2, attr), attr
    assert m1.rtree == m2.rtree
    for kind in SECTIONS:
        for name in m1.field_names:
            assert values_equal(getattr(m1, kind)[name], getattr(m2, kind)[name]), (kind, name)
    assert m1.fragment_stats == m2.fragment_stats
    d1 = os.path.join(theirs, "__fragments", m1.name)
    d2 = os.path.join(ours, "__fragments", m2.name)
    assert sorted(os.listdir(d1)) == sorted(os.listdir(d2))
    for name in os.listdir(d1):
        if name != "__fragment_metadata.tdb":
            with open(os.path.join(d1, name), "rb") as a, open(os.path.join(d2, name), "rb") as b:
                assert a.read() == b.read(), name


def _pair(tmp_path, tiledb_schema, our_schema):
    theirs, ours = str(tmp_path / "theirs"), str(tmp_path / "ours")
    tiledb.Array.create(theirs, tiledb_schema)
    create(ours, our_schema)
    return theirs, ours


@pytest.mark.parametrize("order", ["row-major", "col-major", "hilbert"])
def test_sparse_numeric_dims(tmp_path, order):
    rng = np.random.default_rng(5)
    n = 60
    cols = {"x": rng.integers(-50, 51, n).astype(np.int32), "y": rng.random(n).astype(np.float32),
            "a": rng.integers(0, 60000, n).astype(np.uint16),
            "c": np.array([bytes(rng.integers(97, 100, 3).astype(np.uint8)) for _ in range(n)], "S3"),
            "f": rng.normal(size=n), "n": rng.integers(-9, 9, n).astype(np.float64)}
    nulls = rng.random(n) < 0.3
    theirs, ours = _pair(
        tmp_path,
        tiledb.ArraySchema(
            domain=tiledb.Domain(tiledb.Dim("x", domain=(-50, 50), tile=7, dtype=np.int32),
                                 tiledb.Dim("y", domain=(0.0, 1.0), tile=0.25, dtype=np.float32)),
            attrs=[tiledb.Attr("a", dtype=np.uint16), tiledb.Attr("c", dtype="S3"),
                   tiledb.Attr("f", dtype=np.float64), tiledb.Attr("n", dtype=np.float64, nullable=True)],
            sparse=True, capacity=4, cell_order=order, **PLAIN),
        S.Schema([S.Dim("x", "int32", (-50, 50), 7), S.Dim("y", "float32", (0.0, 1.0), 0.25)],
                 [S.Attr("a", "uint16"), S.Attr("c", "char", cell_val_num=3), S.Attr("f", "float64"),
                  S.Attr("n", "float64", nullable=True)], capacity=4, cell_order=order, **PLAIN))
    keys = list(zip(cols["x"].tolist(), cols["y"].tolist()))
    keep = sorted({k: i for i, k in enumerate(keys)}.values())
    cols = {k: v[keep] for k, v in cols.items()}
    nulls = nulls[keep]
    # TileDB-Py writes NaN in a nullable float attribute as NULL
    with tiledb.open(theirs, "w", timestamp=5) as A:
        A[cols["x"], cols["y"]] = {"a": cols["a"], "c": cols["c"], "f": cols["f"],
                                   "n": np.where(nulls, np.nan, cols["n"])}
    import pyarrow as pa
    ours_cols = dict(cols)
    ours_cols["n"] = pa.array(np.where(nulls, 0.0, cols["n"]), mask=nulls)
    write(ours, ours_cols, timestamp=5)
    assert_same_fragment(theirs, ours)


@pytest.mark.parametrize("order", ["row-major", "hilbert"])
def test_sparse_string_and_datetime_dims_with_duplicates(tmp_path, order):
    rng = np.random.default_rng(6)
    n = 50
    lo, hi = np.datetime64("2000-01-01"), np.datetime64("2030-01-01")
    theirs, ours = _pair(
        tmp_path,
        tiledb.ArraySchema(
            domain=tiledb.Domain(tiledb.Dim("s", dtype="ascii"),
                                 tiledb.Dim("t", domain=(lo, hi), tile=np.timedelta64(100, "D"),
                                            dtype="datetime64[D]")),
            attrs=[tiledb.Attr("v", dtype=np.float64), tiledb.Attr("w", dtype=str),
                   tiledb.Attr("k", dtype="ascii", var=True)],
            sparse=True, capacity=3, cell_order=order, allows_duplicates=True, **PLAIN),
        S.Schema([S.Dim("s", "ascii"), S.Dim("t", "datetime64[D]", (lo, hi), 100)],
                 [S.Attr("v", "float64"), S.Attr("w", "utf8"), S.Attr("k", "ascii")],
                 capacity=3, cell_order=order, allows_duplicates=True, **PLAIN))
    # one distinct key per cell: TileDB's sort is not stable, so duplicates must not differ
    s = np.array([f"k{i}" for i in rng.integers(0, 30, n)], dtype=object)
    t = (lo + rng.integers(0, 10000, n)).astype("datetime64[D]")
    cols = {"s": s, "t": t, "v": np.arange(n, dtype=np.float64) * 0 + 1.5,
            "w": np.array(["é"] * n, dtype=object), "k": np.array(["z\xff"[:1]] * n, dtype=object)}
    with tiledb.open(theirs, "w", timestamp=5) as A:
        A[s, t] = {"v": cols["v"], "w": cols["w"], "k": cols["k"]}
    write(ours, cols, timestamp=5)
    assert_same_fragment(theirs, ours)


@pytest.mark.parametrize("order", ["row-major", "col-major"])
def test_dense_tiles_with_padding(tmp_path, order):
    theirs, ours = _pair(
        tmp_path,
        tiledb.ArraySchema(
            domain=tiledb.Domain(tiledb.Dim("r", domain=(1, 10), tile=4, dtype=np.int32),
                                 tiledb.Dim("c", domain=(1, 6), tile=3, dtype=np.int32)),
            attrs=[tiledb.Attr("a", dtype=np.int32), tiledb.Attr("s", dtype="ascii", var=True),
                   tiledb.Attr("n", dtype=np.float64, nullable=True)],
            sparse=False, cell_order=order, tile_order=order, **PLAIN),
        S.Schema([S.Dim("r", "int32", (1, 10), 4), S.Dim("c", "int32", (1, 6), 3)],
                 [S.Attr("a", "int32"), S.Attr("s", "ascii"), S.Attr("n", "float64", nullable=True)],
                 sparse=False, cell_order=order, tile_order=order, **PLAIN))
    data = {"a": np.arange(10, 25, dtype=np.int32).reshape(5, 3),
            "s": np.array(list("abcdefghijklmno"), dtype=object).reshape(5, 3),
            "n": np.arange(15, dtype=np.float64).reshape(5, 3)}
    with tiledb.open(theirs, "w", timestamp=3) as A:
        A[2:7, 2:5] = data
    write(ours, data, subarray=((2, 6), (2, 4)), timestamp=3)
    assert_same_fragment(theirs, ours)
