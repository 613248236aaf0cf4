"""The write API end to end against ``tiledb``: time travel, metadata, deletes, encryption,
enumerations, and bad input refused with nothing written."""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pytest

tiledb = pytest.importorskip("tiledb")

import tdbsql  # noqa: E402
from history_helpers import assert_deleted_as_duckdb  # noqa: E402
from tdbsql import schema as S  # noqa: E402
from tdbsql.errors import DataError, EncryptionKeyError, SqlError, TdbsqlError, UnsupportedSql  # noqa: E402
from tdbsql.storage.array import Array  # noqa: E402
from tdbsql.storage.writer import (  # noqa: E402
    create, delete, delete_metadata, put_metadata, write, write_fragment,
)

KEY = b"0123456789abcdef0123456789abcdef"


def _sparse(path, **kwargs):
    schema = S.Schema([S.Dim("x", "int64", (0, 99), 10)],
                      [S.Attr("a", "int32"), S.Attr("s", "utf8"),
                       S.Attr("n", "float64", nullable=True)], **kwargs)
    create(str(path), schema)
    return schema


def _data(xs, base=0):
    xs = np.asarray(xs)
    return {"x": xs, "a": (xs + base).astype(np.int32), "s": [f"v{x}" for x in xs],
            "n": pa.array([float(x) if x % 2 else None for x in xs])}


def test_directory_layout_matches_tiledb(tmp_path):
    create(str(tmp_path / "ours"), S.Schema([S.Dim("x", "int32", (0, 9), 5)], [S.Attr("a", "int8")]))
    tiledb.Array.create(str(tmp_path / "theirs"), tiledb.ArraySchema(
        domain=tiledb.Domain(tiledb.Dim("x", domain=(0, 9), tile=5, dtype=np.int32)),
        attrs=[tiledb.Attr("a", dtype=np.int8)], sparse=True))
    for sub in ("", "__schema"):
        ours = sorted(n for n in os.listdir(tmp_path / "ours" / sub) if not n.startswith("__1"))
        theirs = sorted(n for n in os.listdir(tmp_path / "theirs" / sub) if not n.startswith("__1"))
        assert ours == theirs
    assert len(os.listdir(tmp_path / "ours" / "__schema")) == 2  # the schema + __enumerations


def test_time_travel_across_writes(tmp_path):
    path = str(tmp_path / "a")
    _sparse(path)
    write(path, _data([1, 2, 3]), timestamp=10)
    write(path, _data([2, 5], base=100), timestamp=20)
    write(path, _data([7]), timestamp=30)
    for t, want in ((10, [1, 2, 3]), (20, [1, 2, 3, 5]), (30, [1, 2, 3, 5, 7])):
        with tiledb.open(path, timestamp=t) as A:
            got = A.multi_index[0:99]
        assert got["x"].tolist() == want
        mine = tdbsql.query("SELECT x, a FROM array ORDER BY x", path, timestamp=t)
        assert mine.column("x").to_pylist() == want
    with tiledb.open(path, timestamp=20) as A:
        assert A.multi_index[2:2]["a"].tolist() == [102]  # the later write wins


def test_metadata_every_value_type(tmp_path):
    path = str(tmp_path / "a")
    _sparse(path)
    values = {"i": 5, "f": 2.5, "s": "héllo", "b": b"\x00\x01", "li": [1, 2, 3], "lf": (1.5, 2.5),
              "np": np.array([1, 2, 3], dtype=np.uint16), "n2": np.arange(6.0).reshape(2, 3),
              "sc": np.int8(-3)}
    for i, (k, v) in enumerate(values.items()):
        put_metadata(path, k, v, timestamp=10 + i)
    delete_metadata(path, "f", timestamp=50)
    with tiledb.open(path) as A:
        # copies: TileDB-Py's arrays point into memory freed when the array closes
        theirs = {k: (A.meta[k].copy() if isinstance(A.meta[k], np.ndarray) else A.meta[k])
                  for k in A.meta.keys()}
    assert "f" not in theirs
    assert theirs["i"] == 5 and theirs["s"] == "héllo" and theirs["b"] == b"\x00\x01"
    assert tuple(theirs["li"]) == (1, 2, 3) and tuple(theirs["lf"]) == (1.5, 2.5)
    assert theirs["np"].tolist() == [1, 2, 3] and theirs["np"].dtype == np.uint16
    assert theirs["n2"].shape == (2, 3) and theirs["sc"] == -3
    mine = tdbsql.metadata(path)
    assert set(mine) == set(theirs)
    with tiledb.open(path, timestamp=12) as A:  # metadata time travel too
        assert set(A.meta.keys()) == {"i", "f", "s"}


def test_deletes_are_honoured_by_tiledb(tmp_path):
    path = str(tmp_path / "a")
    _sparse(path)
    write(path, _data(range(10)), timestamp=1)
    delete(path, "a < 2 OR s IN ('v5', 'v6') OR (x BETWEEN 8 AND 9 AND NOT a = 8)", timestamp=2)
    write(path, _data([0]), timestamp=3)  # written after the delete: survives
    with tiledb.open(path) as A:
        assert A.multi_index[0:99]["x"].tolist() == [0, 2, 3, 4, 7, 8]
    assert tdbsql.query("SELECT x FROM array ORDER BY x", path).column("x").to_pylist() == \
        [0, 2, 3, 4, 7, 8]
    with tiledb.open(path, timestamp=1) as A:  # before the delete
        assert len(A.multi_index[0:99]["x"]) == 10


def test_delete_never_removes_cells_sql_keeps(tmp_path):
    """SQL (DuckDB) deletes where the condition is TRUE; a TileDB delete commit also removes
    cells where it is NULL, and orders NaN as IEEE does: those are written back after the
    commit (tests/test_delete_write_back.py), so tiledb and tdbsql read exactly DuckDB's rows."""
    import duckdb

    path = str(tmp_path / "a")
    _sparse(path)  # n is NULL on even x
    write(path, _data(range(10)), timestamp=1)
    write(path, {"x": [50], "a": [50], "s": ["nan"], "n": [float("nan")]}, timestamp=2)
    oracle = duckdb.connect()
    oracle.register("source", pa.concat_tables([
        pa.table(_data(range(10))),
        pa.table({"x": [50], "a": pa.array([50], pa.int32()), "s": ["nan"],
                  "n": [float("nan")]})]))
    oracle.sql("CREATE TABLE t AS SELECT * FROM source")
    con = tdbsql.connect().register("t", path)
    for where in ("n < 0 AND a > 40", "n > 4", "NOT (n = 3)", "n IN (1, 3) OR x = 99"):
        con.sql(f"DELETE FROM t WHERE {where}")
        oracle.sql(f"DELETE FROM t WHERE {where}")
        want = oracle.sql("SELECT x FROM t ORDER BY x").fetchnumpy()["x"].tolist()
        with tiledb.open(path) as A:
            assert sorted(A.multi_index[0:99]["x"].tolist()) == want, where
        assert tdbsql.query("SELECT x FROM array ORDER BY x", path).column("x").to_pylist() \
            == want, where
    assert want == [0, 2, 4, 6, 8]  # every NULL n kept; the NaN went with n > 4


@pytest.mark.parametrize("where", ["f IN (0.0, 5)", "f NOT IN (0)", "f IN (-0.0)", "g IN (0)",
                                   "g NOT IN (-0.0, 1)", "NOT (f IN (2, -0.0))"])
def test_delete_in_finds_both_float_zeros(tmp_path, where):
    """TileDB tests IN on raw bytes; SQL finds -0.0 in (0.0): the list holds both zeros."""
    path = str(tmp_path / "z")
    create(path, S.Schema([S.Dim("x", "int64", (0, 9), 5)],
                          [S.Attr("f", "float64"), S.Attr("g", "float32")]))
    source = pa.table({"x": [1, 2, 3, 4], "f": [-0.0, 0.0, 1.0, 2.0],
                       "g": pa.array([-0.0, 0.0, 1.0, 2.0], pa.float32())})
    write(path, source, timestamp=1)
    delete(path, where, timestamp=2)
    assert_deleted_as_duckdb(path, source, where)


def test_delete_refuses_what_it_cannot_express(tmp_path):
    path = str(tmp_path / "a")
    _sparse(path)
    commits = set(os.listdir(os.path.join(path, "__commits")))
    for where, error in (("n = NULL", UnsupportedSql), ("a + 1 > 2", UnsupportedSql),
                         ("nope = 1", SqlError), ("a > 'x'", SqlError),
                         ("a >", SqlError)):
        with pytest.raises(error):
            delete(path, where)
    assert set(os.listdir(os.path.join(path, "__commits"))) == commits


def test_delete_refuses_a_dense_array_before_writing(tmp_path):
    # dense reads never apply delete commits (TileDB refuses them: "Only supported for sparse
    # arrays"), so a .del file would be silently ignored: refuse, through the API and SQL
    path = str(tmp_path / "d")
    create(path, S.Schema([S.Dim("r", "int32", (1, 4), 2)], [S.Attr("a", "int32")], sparse=False))
    write(path, {"a": np.arange(4, dtype=np.int32)}, subarray=[(1, 4)], timestamp=1)
    commits = set(os.listdir(os.path.join(path, "__commits")))
    with pytest.raises(tdbsql.NotSupportedError, match=r"dense array.*sparse arrays") as err:
        delete(path, "a < 2")
    assert path in str(err.value)  # the message names the array
    with pytest.raises(tdbsql.NotSupportedError, match="dense array"):
        tdbsql.delete(path, "r = 1")
    con = tdbsql.connect().register("d", path)
    with pytest.raises(tdbsql.NotSupportedError, match="dense array"):
        con.sql("DELETE FROM d WHERE a = 0")
    assert set(os.listdir(os.path.join(path, "__commits"))) == commits
    with tiledb.open(path) as A:
        assert A[1:5]["a"].tolist() == [0, 1, 2, 3]
    assert con.sql("SELECT a FROM d ORDER BY r").fetchall() == [(0,), (1,), (2,), (3,)]


def test_encrypted_array_round_trip(tmp_path):
    path = str(tmp_path / "a")
    schema = S.Schema([S.Dim("x", "int64", (0, 99), 10)], [S.Attr("a", "int32"), S.Attr("s", "utf8")],
                      enumerations=[S.Enumeration("e", ["lo", "hi"])])
    create(path, schema, key=KEY)
    write(path, {"x": [1, 2], "a": np.array([3, 4], np.int32), "s": ["p", "q"]}, timestamp=1, key=KEY)
    put_metadata(path, "m", 7, key=KEY)
    delete(path, "x = 1", key=KEY, timestamp=2)
    cfg = tiledb.Config({"sm.encryption_type": "AES_256_GCM", "sm.encryption_key": KEY.decode()})
    with tiledb.open(path, ctx=tiledb.Ctx(cfg)) as A:
        got = A.multi_index[0:99]
        assert got["x"].tolist() == [2] and got["s"].tolist() == ["q"]
        assert A.meta["m"] == 7
    with pytest.raises(tiledb.TileDBError):
        tiledb.open(path).close()  # no key: tiledb refuses too
    with pytest.raises(EncryptionKeyError):
        write(path, {"x": [3], "a": np.array([5], np.int32), "s": ["r"]})
    assert tdbsql.query("SELECT a FROM array", path, key=KEY).column("a").to_pylist() == [4]


def test_enumerations_are_read_by_tiledb(tmp_path):
    path = str(tmp_path / "a")
    schema = S.Schema([S.Dim("x", "int64", (0, 9), 5)],
                      [S.Attr("c", "uint8", enumeration="colour")],
                      enumerations=[S.Enumeration("colour", ["red", "green", "blue"], ordered=True)])
    create(path, schema)
    write(path, {"x": [0, 1, 2], "c": np.array([2, 0, 1], np.uint8)}, timestamp=1)
    with tiledb.open(path) as A:
        enum = A.enum("colour")
        assert list(enum.values()) == ["red", "green", "blue"] and enum.ordered
        assert A.df[0:9]["c"].tolist() == ["blue", "red", "green"]


@pytest.mark.parametrize("data, message", [
    ({"x": [1, 2], "a": [1, 2 ** 40], "s": ["a", "b"], "n": [1.0, 2.0]}, "column 'a', row 1"),
    ({"x": [1, 200], "a": [1, 2], "s": ["a", "b"], "n": [1.0, 2.0]}, "dimension 'x', row 1"),
    ({"x": [1, 2], "a": pa.array([1, None]), "s": ["a", "b"], "n": [1.0, 2.0]}, "column 'a', row 1"),
    ({"x": [3, 1, 3], "a": [1, 2, 3], "s": list("abc"), "n": [1.0, 2.0, 3.0]}, "duplicate coordinates (3)"),
    ({"x": [1], "a": ["one"], "s": ["a"], "n": [1.0]}, "column 'a'"),
    ({"x": [1], "a": [1], "n": [1.0]}, "missing column 's'"),
    ({"x": [1], "a": [1], "s": ["a"], "n": [1.0], "zz": [1]}, "column 'zz'"),
    ({"x": [1, 2], "a": [1], "s": ["a", "b"], "n": [1.0, 2.0]}, "cells"),
    ({"x": [1], "a": 5, "s": ["a"], "n": [1.0]}, "column 'a': cannot read the values"),
    ({"x": [1], "a": np.ones((1, 1, 1), np.int32), "s": ["a"], "n": [1.0]}, "column 'a': a 3-D"),
])
def test_bad_input_writes_nothing(tmp_path, data, message):
    path = str(tmp_path / "a")
    _sparse(path)
    with pytest.raises(DataError) as info:
        write(path, data)
    assert message in str(info.value)
    assert os.listdir(os.path.join(path, "__fragments")) == []
    assert os.listdir(os.path.join(path, "__commits")) == []


def test_filter_refusing_data_leaves_no_fragment(tmp_path):
    path = str(tmp_path / "a")
    create(path, S.Schema([S.Dim("x", "int64", (0, 99), 10)],
                          [S.Attr("a", "int32", filters=[S.PositiveDelta()])]))
    with pytest.raises(DataError):
        write(path, {"x": [1, 2], "a": np.array([5, 1], np.int32)})
    assert os.listdir(os.path.join(path, "__fragments")) == []


@pytest.mark.parametrize("first", [S.Zstd(), S.DoubleDelta()], ids=["zstd", "double_delta"])
def test_xor_after_a_size_changing_filter_writes_only_what_tiledb_reads_back(tmp_path, first):
    """XOR over bytes that are not whole values (after a compressor or DOUBLE_DELTA): TileDB
    leaves the last bytes unwritten and reads such tiles wrong or not at all, so the write is
    refused (it was written, and tiledb read other values or failed); whole parts still agree."""
    tiledb = pytest.importorskip("tiledb")
    refused = 0
    for n in (3, 5, 17, 100, 1000):
        path = str(tmp_path / f"a{n}")
        create(path, S.Schema([S.Dim("x", "int64", (0, 9999), 10000)],
                              [S.Attr("a", "int32", filters=[first, S.Xor()])]))
        values = np.random.default_rng(n).integers(-1000, 1000, n).astype(np.int32)
        try:
            write(path, {"x": np.arange(n), "a": values})
        except DataError as e:
            assert "XOR input" in str(e)
            assert os.listdir(os.path.join(path, "__fragments")) == []
            refused += 1
            continue
        with tiledb.open(path) as arr:
            assert arr[:]["a"].tolist() == values.tolist()
    assert refused


@pytest.mark.parametrize("filters", [[S.DoubleDelta()], [S.DoubleDelta(), S.Gzip()]],
                         ids=["double_delta", "double_delta_gzip"])
def test_double_delta_tile_of_empty_cells_reads_in_tiledb(tmp_path, filters):
    """A var-sized tile whose cells are all empty gives DOUBLE_DELTA no values: it is stored in
    the raw form, which tiledb reads (TileDB's own coding of it, and ours before, made tiledb
    fail with 'Write would overflow buffer' / 'Read buffer overflow')."""
    tiledb = pytest.importorskip("tiledb")
    path = str(tmp_path / "a")
    create(path, S.Schema([S.Dim("x", "int64", (0, 99), 10)],
                          [S.Attr("a", "int64", var=True, filters=filters)], capacity=2))
    lists = [[], [], [1, 2], [], [3], [4, 5, 6]]
    write(path, {"x": np.arange(len(lists)), "a": pa.array(lists, pa.list_(pa.int64()))})
    with tiledb.open(path) as arr:
        assert [cell.tolist() for cell in arr[:]["a"]] == lists
    assert tdbsql.query("SELECT a FROM array ORDER BY x", path).column("a").to_pylist() == lists


def test_dense_subarray_errors(tmp_path):
    path = str(tmp_path / "d")
    create(path, S.Schema([S.Dim("r", "int32", (1, 4), 2)], [S.Attr("a", "int32")], sparse=False))
    with pytest.raises(DataError, match="subarray"):
        write(path, {"a": np.arange(3, dtype=np.int32)})
    with pytest.raises(DataError, match="outside the domain"):
        write(path, {"a": np.arange(3, dtype=np.int32)}, subarray=[(3, 5)])
    with pytest.raises(DataError, match="has 3 cells"):
        write(path, {"a": np.arange(3, dtype=np.int32)}, subarray=[(1, 4)])
    for bad in ((0.5, 2.5), ("1", "3"), (1,), None, (True, 3)):
        with pytest.raises(DataError, match="not a \\(lo, hi\\) pair of whole coordinates"):
            write(path, {"a": np.arange(3, dtype=np.int32)}, subarray=[bad])
    assert os.listdir(os.path.join(path, "__fragments")) == []


def test_write_fragment_with_cell_timestamps_and_late_commit(tmp_path):
    path = str(tmp_path / "a")
    _sparse(path)
    schema = tdbsql.open(path).schema
    table = pa.table({"x": [4, 1], "a": pa.array([1, 2], pa.int32()), "s": ["p", "q"],
                      "n": pa.array([None, 1.0])})
    name = write_fragment(path, schema, table, timestamp_range=(5, 9), cell_timestamps=[9, 5],
                          commit=False)
    with tiledb.open(path) as A:
        assert len(A.multi_index[0:99]["x"]) == 0  # not committed yet
    open(os.path.join(path, "__commits", f"{name}.wrt"), "wb").close()
    with tiledb.open(path, timestamp=(0, 6)) as A:  # per-cell timestamps filter the cells
        assert A.multi_index[0:99]["x"].tolist() == [1]
    with tiledb.open(path) as A:
        assert A.multi_index[0:99]["x"].tolist() == [1, 4]
    with pytest.raises(DataError, match="global order"):
        write_fragment(path, schema, table, ordered=True)


def test_create_refuses_an_existing_array(tmp_path):
    path = str(tmp_path / "a")
    _sparse(path)
    with pytest.raises(TdbsqlError, match="already"):
        _sparse(path)


def _coloured(path, nullable=False):
    create(path, S.Schema([S.Dim("x", "int64", (0, 9), 5)],
                          [S.Attr("c", "uint8", enumeration="colour", nullable=nullable)],
                          enumerations=[S.Enumeration("colour", ["red", "green", "blue"])]))


def test_enumerated_attributes_take_labels(tmp_path):
    path = str(tmp_path / "a")
    _coloured(path, nullable=True)
    write(path, {"x": [0, 1, 2], "c": ["blue", None, "red"]}, timestamp=1)
    # what a read returns (a dictionary array of the labels) writes back as it reads
    back = tdbsql.query("SELECT x + 5 AS x, c FROM array", path)
    assert pa.types.is_dictionary(back.column("c").type)
    write(path, back, timestamp=2)
    write(path, {"x": [9], "c": np.array([1], np.uint8)}, timestamp=3)  # or the stored index
    with tiledb.open(path) as A:
        got = A.df[0:9]
    assert got["x"].tolist() == [0, 1, 2, 5, 6, 7, 9]
    assert [None if v != v else v for v in got["c"].tolist()] == [
        "blue", None, "red", "blue", None, "red", "green"]


def test_unknown_label_writes_nothing(tmp_path):
    path = str(tmp_path / "a")
    _coloured(path)
    with pytest.raises(DataError, match=r"column 'c', row 1: 'pink' is not a label"):
        write(path, {"x": [0, 1], "c": ["red", "pink"]})
    assert os.listdir(os.path.join(path, "__fragments")) == []


def test_fixed_size_strings_are_nul_padded(tmp_path):
    path = str(tmp_path / "a")
    create(path, S.Schema([S.Dim("x", "int64", (0, 9), 5)],
                          [S.Attr("s", "char", cell_val_num=3, nullable=True)]))
    write(path, {"x": [0, 1, 2, 3], "s": pa.array([b"ab", None, b"", b"abc"])}, timestamp=1)
    with tiledb.open(path) as A:
        got = A.query(return_arrow=True).df[0:9]
    assert got.column("s").to_pylist() == [b"ab\x00", None, b"\x00\x00\x00", b"abc"]
    with pytest.raises(DataError, match="row 1: 4 bytes do not fit a 3-byte cell"):
        write(path, {"x": [4, 5], "s": [b"a", b"abcd"]})


def test_write_fragment_refuses_a_timestamp_per_cell_mismatch(tmp_path):
    path = str(tmp_path / "a")
    _sparse(path)
    table = pa.table({"x": [4, 1], "a": pa.array([1, 2], pa.int32()), "s": ["p", "q"],
                      "n": pa.array([None, 1.0])})
    with pytest.raises(DataError, match="cell_timestamps has 3 values for 2 cells"):
        write_fragment(path, tdbsql.open(path).schema, table, cell_timestamps=[1, 2, 3])
    assert os.listdir(os.path.join(path, "__fragments")) == []


@pytest.mark.parametrize("order", ["row-major", "col-major", "hilbert"])
def test_ordered_check_agrees_with_the_sort(order):
    from tdbsql.storage import tiling
    from tdbsql.storage.write_buffers import field_buffer

    schema = S.Schema([S.Dim("x", "int32", (0, 99), 10), S.Dim("s", "ascii")],
                      [S.Attr("a", "int8")], cell_order=order).to_format()
    rng = np.random.default_rng(7)
    columns = [np.asarray(rng.integers(0, 100, 300), np.int32),
               [f"k{v}" for v in rng.integers(0, 40, 300)]]
    coords = tiling.Coords(schema, [field_buffer(c, d.name, d.datatype, d.cell_val_num, False)
                                    for c, d in zip(columns, schema.dimensions)])
    assert tiling.first_out_of_order(coords) >= 0
    perm = tiling.global_order(coords)
    ordered = coords.take(perm)
    assert tiling.first_out_of_order(ordered) == -1
    swapped = np.arange(300)
    swapped[[10, 200]] = swapped[[200, 10]]
    shuffled = ordered.take(swapped)
    expected = int(np.argmax(tiling.global_order(shuffled) != np.arange(300)))
    assert tiling.first_out_of_order(shuffled) in (expected, expected + 1)


@pytest.mark.parametrize("order", ["row-major", "col-major", "hilbert"])
def test_coords_carry_string_ranks_through_take(order):
    """Ranks taken along with the cells answer every step as ranks computed afresh would:
    the order, its check, the duplicates and the MBRs."""
    from tdbsql.storage import tiling
    from tdbsql.storage.write_buffers import field_buffer

    tile = None if order == "hilbert" else 10
    schema = S.Schema([S.Dim("s", "ascii"), S.Dim("x", "int32", (0, 99), tile),
                       S.Dim("t", "ascii")], [S.Attr("a", "int8")], cell_order=order,
                      capacity=7, allows_duplicates=True).to_format()
    rng = np.random.default_rng(3)
    n = 400
    columns = [[f"k{v}" for v in rng.integers(0, 25, n)],
               np.asarray(rng.integers(0, 100, n), np.int32),
               ["", "a", "ab", "b", "\x00", "zz"] * (n // 6) + ["a"] * (n % 6)]
    buffers = [field_buffer(c, d.name, d.datatype, d.cell_val_num, False)
               for c, d in zip(columns, schema.dimensions)]
    coords = tiling.Coords(schema, buffers)
    perm = tiling.global_order(coords)
    carried = coords.take(perm)  # ranks from the unsorted cells, permuted
    fresh = tiling.Coords(schema, [b.take(perm, 1) for b in buffers])
    for dim_idx in (0, 2):
        np.testing.assert_array_equal(carried.rank(dim_idx), fresh.rank(dim_idx))
    assert tiling.first_out_of_order(carried) == tiling.first_out_of_order(fresh) == -1
    np.testing.assert_array_equal(tiling.duplicate_rows(carried), tiling.duplicate_rows(fresh))
    leaves, ned = tiling.mbrs(carried, 7)
    assert ned[0] == (b"k0", b"k9") and ned[2] == (b"", b"zz")
    assert _same_mbrs((leaves, ned), tiling.mbrs(fresh, 7))
    # a selection keeps the ranks' order (gaps are fine): same duplicates and MBRs
    pick = np.sort(rng.choice(n, 150, replace=False))
    picked, fresh_pick = carried.take(pick), tiling.Coords(
        schema, [b.take(pick, 1) for b in fresh.buffers])
    np.testing.assert_array_equal(tiling.duplicate_rows(picked), tiling.duplicate_rows(fresh_pick))
    assert _same_mbrs(tiling.mbrs(picked, 7), tiling.mbrs(fresh_pick, 7))


def _same_mbrs(a, b) -> bool:
    (leaves_a, ned_a), (leaves_b, ned_b) = a, b
    return ned_a == ned_b and all(
        np.array_equal(x, y) if isinstance(x, np.ndarray) else x == y
        for x, y in zip(leaves_a, leaves_b))


def test_a_sparse_write_ranks_each_string_dimension_once(tmp_path, monkeypatch):
    """Sorting, the duplicate check and the MBRs of one write share the string ranks."""
    from tdbsql.storage import tiling

    calls = []
    real = tiling.string_ranks
    monkeypatch.setattr(tiling, "string_ranks", lambda buf: calls.append(1) or real(buf))
    path = str(tmp_path / "a")
    create(path, S.Schema([S.Dim("s", "ascii"), S.Dim("t", "ascii")], [S.Attr("a", "int8")],
                          capacity=2))
    write(path, {"s": ["b", "a", "c", "a"], "t": ["x", "y", "x", "x"],
                 "a": np.arange(4, dtype=np.int8)})
    assert len(calls) == 2  # one per string dimension
    calls.clear()
    write_fragment(path, Array(path).schema, pa.table({
        "s": ["a", "a", "b"], "t": ["x", "y", "x"], "a": np.arange(3, dtype=np.int8)}),
        ordered=True)
    assert len(calls) == 2
    assert tdbsql.query(f"SELECT count(*) AS n FROM '{path}'").column("n").to_pylist() == [4]


def test_dense_write_and_insert_without_subarray(tmp_path):
    """Cells given with their coordinates, in any order, fill their rectangle (row- and
    col-major); INSERT into a dense array goes the same way; holes are refused."""
    for order in ("row-major", "col-major"):
        path = str(tmp_path / order)
        tdbsql.create(path, tdbsql.Schema(
            [tdbsql.Dim("r", "int64", (0, 9), 4), tdbsql.Dim("c", "int64", (0, 9), 4)],
            [tdbsql.Attr("v", "int64")], sparse=False, cell_order=order, tile_order=order))
        r, c = np.meshgrid(np.arange(2, 5), np.arange(1, 3), indexing="ij")
        cells = pa.table({"r": r.ravel()[::-1], "c": c.ravel()[::-1],
                          "v": (r * 10 + c).ravel()[::-1]})
        tdbsql.write(path, cells)
        con = tdbsql.connect().register("g", path)
        con.sql("INSERT INTO g VALUES (7, 7, 77)")
        with tiledb.open(path) as arr:
            got = arr.multi_index[2:4, 1:2]["v"]
            assert got.tolist() == (np.arange(2, 5)[:, None] * 10 + np.arange(1, 3)).tolist()
            assert arr.multi_index[7:7, 7:7]["v"].tolist() == [[77]]
        with pytest.raises(tdbsql.Error, match="do not fill the rectangle"):
            tdbsql.write(path, cells.slice(1))


def test_sort_cells_is_stable_and_write_sorted_keeps_per_cell_fields(tmp_path):
    """The writer's two steps fragment consolidation also runs: a stable sort of every field
    (equal coordinates keep their input order -- consolidation's newest-first order), then one
    fragment whose per-cell timestamps and delete metadata come from the fields given."""
    from tdbsql.format.fragment_metadata import (
        DELETE_CONDITION_INDEX, DELETE_TIMESTAMPS, TIMESTAMPS,
    )
    from tdbsql.format.names import new_name
    from tdbsql.storage import tiling
    from tdbsql.storage.write_buffers import FieldBuffer
    from tdbsql.storage.writer import sort_cells, write_sorted

    path = str(tmp_path / "a")
    create(path, S.Schema([S.Dim("x", "int64", (0, 99), 10)], [S.Attr("a", "int32")],
                          capacity=2, allows_duplicates=True), timestamp=1)
    schema = Array(path).schema
    none = np.iinfo(np.uint64).max
    buffers = {"x": FieldBuffer(np.array([5, 1, 5, 1, 3], np.int64)),
               "a": FieldBuffer(np.arange(5, dtype=np.int32)),
               TIMESTAMPS: FieldBuffer(np.array([10, 20, 30, 40, 50], np.uint64)),
               DELETE_TIMESTAMPS: FieldBuffer(np.array([none, 60, none, none, none], np.uint64)),
               DELETE_CONDITION_INDEX: FieldBuffer(np.array([none, 0, none, none, none], np.uint64))}
    coords = tiling.Coords(schema, [buffers["x"]])
    ordered, coords, order = sort_cells(schema, buffers, coords)
    assert order.tolist() == [1, 3, 4, 0, 2]
    assert ordered[TIMESTAMPS].values.tolist() == [20, 40, 50, 10, 30]
    assert ordered[DELETE_TIMESTAMPS].values.tolist() == [60, none, none, none, none]
    assert coords.buffers[0] is ordered["x"]
    name = new_name(10, 50, 22)
    writer = write_sorted(path, schema, ordered, coords, (10, 50), None, name=name,
                          processed_conditions=("__commits/__60_60_" + "0" * 32 + "_22.del",))
    assert writer.name == name
    writer.commit()
    frag = Array(path).fragments[0]
    meta = frag.metadata
    assert frag.name == name and meta.has_timestamps and meta.has_delete_meta
    assert meta.processed_conditions == ["__commits/__60_60_" + "0" * 32 + "_22.del"]
    assert meta.non_empty_domain == ((1, 5),) and meta.sparse_tile_num == 3
    with tiledb.open(path) as arr:  # TileDB reads it back, cells in global order
        got = arr[:]
    assert got["x"].tolist() == [1, 1, 3, 5, 5] and got["a"].tolist() == [1, 3, 4, 0, 2]


def test_dense_coordinates_convert_exactly_or_are_refused(tmp_path):
    """Dense writes given their coordinates convert them as sparse writes do: a fraction, a
    time of day on a DATETIME_DAY dimension or a NULL is a DataError (nothing written), and a
    duration in another unit is scaled, not taken as a raw count."""
    path = str(tmp_path / "d")
    tdbsql.create(path, tdbsql.Schema(
        [tdbsql.Dim("day", "datetime64[D]", (0, 99), 10)], [tdbsql.Attr("v", "int32")],
        sparse=False))
    with pytest.raises(DataError, match="row 1: .* exactly to unit 'D'"):
        write(path, {"day": pa.array([0, 30 * 3600_000], pa.timestamp("ms")), "v": [1, 2]})
    path_x = str(tmp_path / "x")
    tdbsql.create(path_x, tdbsql.Schema([tdbsql.Dim("x", "int64", (0, 99), 10)],
                                        [tdbsql.Attr("v", "int32")], sparse=False))
    with pytest.raises(DataError, match="column 'x', row 0: cannot store double"):
        write(path_x, {"x": [0.5, 1.5], "v": [1, 2]})
    with pytest.raises(DataError, match="column 'x', row 1: NULL"):
        write(path_x, {"x": pa.array([0, None]), "v": [1, 2]})
    assert not os.listdir(os.path.join(path, "__fragments"))
    assert not os.listdir(os.path.join(path_x, "__fragments"))
    path_t = str(tmp_path / "t")
    tdbsql.create(path_t, tdbsql.Schema([tdbsql.Dim("t", "timedelta64[ms]", (0, 9999), 10)],
                                        [tdbsql.Attr("v", "int32")], sparse=False))
    with pytest.raises(DataError, match=r"rectangle t 1000\.\.2000 \(1,001 cells\)"):
        write(path_t, {"t": pa.array([2, 1], pa.duration("s")), "v": [2, 1]})
    write(path_t, {"t": pa.array([2, 1], pa.duration("ms")), "v": [2, 1]})
    got = tdbsql.query("SELECT t, v FROM array ORDER BY t", path_t)  # tiledb cannot read TIME
    assert got.column("t").cast("int32").to_pylist() == [1, 2]  # dimensions; 2 cells, so raw
    assert got.column("v").to_pylist() == [1, 2]


@pytest.mark.parametrize("dtype, domain, tile", [
    ("uint64", (2**64 - 10, 2**64 - 2), 3), ("int64", (-2**63, -2**63 + 99), 7),
    ("int64", (2**63 - 100, 2**63 - 1), 10)])
def test_dense_writes_near_the_type_limits(tmp_path, dtype, domain, tile):
    """Boxes and given coordinates at the ends of a 64-bit domain, as ``tiledb`` reads them."""
    path = str(tmp_path / "a")
    tdbsql.create(path, tdbsql.Schema([tdbsql.Dim("x", dtype, domain, tile)],
                                      [tdbsql.Attr("v", "int32")], sparse=False))
    lo, hi = domain
    write(path, {"v": np.array([1, 2, 3], np.int32)}, subarray=((hi - 2, hi),))
    write(path, {"x": np.array([lo + 1, lo], dtype), "v": np.array([5, 4], np.int32)})
    with tiledb.open(path) as A:
        assert A.multi_index[hi - 2:hi]["v"].tolist() == [1, 2, 3]
        assert A.multi_index[lo:lo + 1]["v"].tolist() == [4, 5]
    got = tdbsql.query("SELECT x, v FROM array WHERE v > 0 ORDER BY x", path).to_pylist()
    assert got == [{"x": lo, "v": 4}, {"x": lo + 1, "v": 5}, {"x": hi - 2, "v": 1},
                   {"x": hi - 1, "v": 2}, {"x": hi, "v": 3}]


@pytest.mark.parametrize("dtype, domain, extent", [
    ("int8", (-100, 100), 101), ("int8", (0, 127), 64), ("int16", (-30000, 30000), 30001),
    ("int8", (3, 9), 7)])
def test_sparse_dimension_without_tile_extent_gets_one_that_fits(tmp_path, dtype, domain, extent):
    """No tile extent: the domain's width, as TileDB's -- halved until it fits the type when
    it does not (was a raw OverflowError; TileDB itself stores the width wrapped around)."""
    path = str(tmp_path / "a")
    tdbsql.create(path, tdbsql.Schema([tdbsql.Dim("x", dtype, domain)], [tdbsql.Attr("v", "int32")]))
    lo, hi = domain
    write(path, {"x": np.array([hi, lo, 0 if lo < 0 else lo + 1], dtype),
                 "v": np.array([1, 2, 3], np.int32)})
    with tiledb.open(path) as A:
        assert A.schema.domain.dim(0).tile == extent
        assert sorted(A.multi_index[lo:hi]["v"].tolist()) == [1, 2, 3]
    assert tdbsql.query("SELECT v FROM array WHERE x = " + str(hi), path).to_pylist() == [{"v": 1}]


def test_dense_int8_rectangle_wider_than_127(tmp_path):
    """A dense INT8 dimension over [-100, 100]: cells given with their coordinates (the
    offsets wrapped in INT8: ValueError) and an ingest, whose default tile extent is split
    to fit INT8 (was a SchemaError), both as ``tiledb`` reads them."""
    k = np.arange(-100, 101, dtype=np.int8)[::-1].copy()
    path = str(tmp_path / "a")
    tdbsql.create(path, tdbsql.Schema([tdbsql.Dim("k", "int8", (-100, 100), 101)],
                                      [tdbsql.Attr("v", "int32")], sparse=False))
    write(path, {"k": k, "v": k.astype(np.int32) * 2})
    tdbsql.ingest(pa.table({"k": k, "v": k.astype(np.int32) * 3}), str(tmp_path / "b"),
                  dims=["k"], sparse=False)
    for name, factor in (("a", 2), ("b", 3)):
        with tiledb.open(str(tmp_path / name)) as A:
            assert A.schema.domain.dim(0).tile == 101
            assert A.multi_index[-100:100]["v"].tolist() == list(range(-100 * factor, 101 * factor, factor))


def test_float_dimension_of_one_point_has_tile_extent_zero(tmp_path):
    """A float domain [v, v] without a tile extent gets TileDB's null extent, 0: every cell is
    in tile 0 (the write divided by it: ZeroDivisionError) -- an ingest of one row too."""
    path = str(tmp_path / "a")
    tdbsql.create(path, tdbsql.Schema([tdbsql.Dim("x", "float64", (1.5, 1.5)),
                                       tdbsql.Dim("y", "int32", (0, 9), 3)],
                                      [tdbsql.Attr("v", "int32")]))
    for t, ys in ((1, [5, 0]), (2, [9, 5])):
        write(path, {"x": [1.5, 1.5], "y": np.array(ys, np.int32),
                     "v": np.array(ys, np.int32) * t}, timestamp=t)
    tdbsql.consolidate(path)
    with tiledb.open(path) as A:
        assert A.schema.domain.dim(0).tile == 0.0
        assert A[:]["v"].tolist() == [0, 10, 18]
    assert tdbsql.query("SELECT y, v FROM array ORDER BY y", path).to_pylist() == \
        [{"y": 0, "v": 0}, {"y": 5, "v": 10}, {"y": 9, "v": 18}]
    tdbsql.ingest(pa.table({"k": [2.5], "v": [1]}), str(tmp_path / "b"), dims=["k"])
    with tiledb.open(str(tmp_path / "b")) as A:
        assert A[:]["v"].tolist() == [1]


@pytest.mark.parametrize("dims", [
    [S.Dim("x", "int64", (0, 9), 2)], [S.Dim("s", "ascii")],
    [S.Dim("x", "int64", (0, 9), 2), S.Dim("y", "int32", (0, 9), 2)]])
def test_an_empty_sparse_write_writes_nothing(tmp_path, dims):
    """As TileDB: no committed fragment (an empty one would break ``tiledb``'s reads and
    fragment info); later writes and INSERTs of no rows are unaffected."""
    path = str(tmp_path / "a")
    create(path, S.Schema(dims, [S.Attr("a", "int32"), S.Attr("v", "utf8", nullable=True)]))
    empty = {d.name: pa.array([], pa.string() if d.dtype == "ascii" else pa.int64()) for d in dims}
    assert write(path, {**empty, "a": pa.array([], pa.int32()), "v": pa.array([], pa.string())},
                 timestamp=5) is None
    assert os.listdir(os.path.join(path, "__fragments")) == []
    one = {d.name: ["q"] if d.dtype == "ascii" else [1] for d in dims}
    write(path, {**one, "a": [7], "v": [None]}, timestamp=6)
    tdbsql.connect().register("t", path).sql("INSERT INTO t SELECT * FROM t WHERE a > 100")
    with tiledb.open(path) as A:
        assert A.query(return_arrow=True).df[:].column("a").to_pylist() == [7]
    assert len(tiledb.array_fragments(path)) == 1
    assert tdbsql.query("SELECT a, v FROM array", path).to_pylist() == [{"a": 7, "v": None}]


@pytest.mark.parametrize("bad", ["now", -1, 1.5, 2**64, True, [5]])
def test_bad_timestamps_are_refused_before_anything_is_written(tmp_path, bad):
    """A timestamp names the files a write makes; one that is not whole milliseconds in
    [0, 2**64 - 1] named fragments (``__now_now_...``) that made the array unreadable."""
    path = str(tmp_path / "a")
    _sparse(path)
    before = sorted(os.walk(path))
    operations = {
        "write": lambda: write(path, _data([1]), timestamp=bad),
        "delete": lambda: delete(path, "a > 1", timestamp=bad),
        "put_metadata": lambda: put_metadata(path, "k", 1, timestamp=bad),
        "delete_metadata": lambda: delete_metadata(path, "k", timestamp=bad),
        "write_fragment": lambda: write_fragment(path, Array(path).schema, pa.table(_data([1])),
                                                 timestamp_range=(bad, bad)),
        "ingest": lambda: tdbsql.ingest(pa.table(_data([1])), path, append=True, dims=["x"],
                                        timestamp=bad),
    }
    for name, run in operations.items():
        with pytest.raises(tdbsql.InterfaceError, match="timestamp"):
            run()
    with pytest.raises(tdbsql.InterfaceError, match="timestamp"):
        create(str(tmp_path / "b"), S.Schema([S.Dim("x", "int64", (0, 9), 5)]), timestamp=bad)
    assert sorted(os.walk(path)) == before and not os.path.exists(tmp_path / "b")
    write(path, _data([1]), timestamp=2**64 - 2)  # the largest timestamps are fine
    with tiledb.open(path, timestamp=2**64 - 2) as A:
        assert A.query(return_arrow=True).df[:].column("x").to_pylist() == [1]


def test_a_float_nan_in_a_list_is_a_value_as_in_numpy_and_pandas(tmp_path):
    """A NaN among floats is a float value whatever holds the column (TileDB-Py writes it);
    it was turned into NULL, so a non-nullable float attribute refused it."""
    path = str(tmp_path / "a")
    create(path, S.Schema([S.Dim("x", "int64", (0, 9), 5)], [
        S.Attr("f", "float64"), S.Attr("g", "float32", nullable=True),
        S.Attr("s", "utf8", nullable=True)]))
    write(path, {"x": [1, 2], "f": [float("nan"), 1.0], "g": (float("nan"), None),
                 "s": ["a", float("nan")]}, timestamp=1)  # among strings NaN is pandas' NULL
    write(path, {"x": [3], "f": np.array([np.nan]), "g": [2.0],
                 "s": np.array([np.nan], dtype=object)}, timestamp=2)
    with tiledb.open(path) as A:
        got = A.query(return_arrow=True).df[0:9].to_pydict()
    assert [np.isnan(v) for v in got["f"]] == [True, False, True]
    assert np.isnan(got["g"][0]) and got["g"][1:] == [None, 2.0]
    assert got["s"] == ["a", None, None]
    with pytest.raises(DataError, match="column 'f': cannot read the values"):
        write(path, {"x": [4], "f": [np.datetime64("NaT")], "g": [1.0], "s": ["a"]})


def test_delete_guard_reads_an_attribute_whose_name_holds_a_quote(tmp_path):
    """The NULL/NaN guard of a DELETE names attributes as quoted SQL identifiers: a '"' in a
    name was pasted into its query as is (a syntax error, not the guard's answer)."""
    path = str(tmp_path / "q")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 99), tile=10, dtype=np.int64))
    tiledb.Array.create(path, tiledb.ArraySchema(domain=dom, sparse=True, attrs=[
        tiledb.Attr('we"ird', dtype=np.float64), tiledb.Attr("v", dtype=np.int64)]))
    with tiledb.open(path, "w") as A:
        A[np.array([1, 2, 3])] = {'we"ird': np.array([0.5, np.nan, 1.5]),
                                  "v": np.array([1, 2, 3])}
    con = tdbsql.connect()
    con.register("t", path)
    con.sql('DELETE FROM t WHERE "we""ird" < 1')  # keeps the NaN (written back)
    with tiledb.open(path) as A:
        assert sorted(A[:]["x"].tolist()) == [2, 3]
    con.sql("DELETE FROM t WHERE v = 3")
    with tiledb.open(path) as A:
        assert sorted(A[:]["x"].tolist()) == [2]


@pytest.mark.parametrize("dtype, domain, tile", [
    ("int8", (0, 127), 22), ("uint8", (13, 255), 52), ("int16", (32618, 32767), 47),
    ("uint32", (4294967261, 4294967292), 10)])
def test_sparse_domain_whose_tile_expansion_passes_a_small_type(tmp_path, dtype, domain, tile):
    """TileDB checks the tile-expanded domain max against the 64-bit range only, so it takes a
    sparse int8 domain [0, 127] with extent 22 (the last tile would end at 131): so does
    tdbsql, and both read the top cells alike."""
    path = str(tmp_path / "a")
    tdbsql.create(path, tdbsql.Schema([tdbsql.Dim("d", dtype, domain, tile)],
                                      [tdbsql.Attr("a", "int64")]))
    keys = np.arange(domain[1] - 9, domain[1] + 1).astype(dtype)
    tdbsql.write(path, {"d": keys, "a": np.arange(10)})
    with tiledb.open(path) as A:
        assert A.schema.domain.dim(0).tile == tile
        cells = A.query()[:]
    want = sorted(zip(cells["d"].tolist(), cells["a"].tolist()))
    got = tdbsql.query("SELECT d, a FROM array ORDER BY d", path).to_pylist()
    assert [(r["d"], r["a"]) for r in got] == want == list(zip(keys.tolist(), range(10)))


@pytest.mark.parametrize("values, readable", [
    (np.arange(20, dtype=np.float32) * 0.5, True),  # scaling is exact: the checksum holds
    (np.arange(20, dtype=np.float32) * 0.37, False)])
def test_float_scaling_behind_a_checksum_is_written_only_when_it_reads_back(tmp_path, values,
                                                                            readable):
    """The checksum is of the values, the tile stores them rounded: TileDB's reader then fails
    ("checksum mismatch"), so the write is a ``DataError`` and leaves nothing behind."""
    path = str(tmp_path / "a")
    tdbsql.create(path, tdbsql.Schema([tdbsql.Dim("d", "int64", (0, 99), 10)], [
        tdbsql.Attr("a", "float32", filters=[tdbsql.ChecksumSHA256(), tdbsql.FloatScale(0.5, 0, 4)])]))
    data = {"d": np.arange(20), "a": values}
    if not readable:
        with pytest.raises(tdbsql.DataError, match="could not be read back: CHECKSUM_SHA256"):
            tdbsql.write(path, data)
        assert tdbsql.open(path).fragments == []
        return
    tdbsql.write(path, data)
    with tiledb.open(path) as A:
        assert A[:]["a"].tolist() == values.tolist()
    assert tdbsql.query("SELECT a FROM array ORDER BY d", path).column(0).to_pylist() == \
        values.tolist()


def test_float_scaling_behind_a_compressor_never_writes_what_tiledb_cannot_read(tmp_path):
    """Scaling rounds the compressor's bytes as if they were floats: whatever tdbsql writes,
    tiledb reads back as tdbsql does; a tile that would not decode is a ``DataError``."""
    written = 0
    for n in range(1, 40):
        path = str(tmp_path / f"a{n}")
        tdbsql.create(path, tdbsql.Schema([tdbsql.Dim("d", "int64", (0, 99), 10)], [
            tdbsql.Attr("a", "float32", filters=[tdbsql.Gzip(9), tdbsql.FloatScale(0.5, 0, 4)])]))
        try:
            tdbsql.write(path, {"d": np.arange(n), "a": np.arange(n, dtype=np.float32) * 0.37})
        except tdbsql.DataError:
            continue
        written += 1
        with tiledb.open(path) as A:
            theirs = A[:]
        ours = tdbsql.query("SELECT d, a FROM array ORDER BY d", path)
        assert ours.column("a").to_pylist() == theirs["a"].tolist()
    assert written < 39


def _current_domain_array(path: str, sparse: bool) -> None:
    """``x`` in [0, 99] with the current domain [0, 49] (and ``s`` in ['b', 'm'] if sparse)."""
    ctx = tiledb.Ctx()
    dims = ([tiledb.Dim("s", domain=(None, None), tile=None, dtype="ascii")] if sparse else []) + \
        [tiledb.Dim("x", domain=(0, 99), tile=10, dtype=np.int64)]
    schema = tiledb.ArraySchema(tiledb.Domain(*dims), [tiledb.Attr("v", dtype=np.int64)],
                                sparse=sparse)
    box = tiledb.NDRectangle(ctx, schema.domain)
    if sparse:
        box.set_range("s", "b", "m")
    box.set_range("x", 0, 49)
    current = tiledb.CurrentDomain(ctx)
    current.set_ndrectangle(box)
    schema.set_current_domain(current)
    tiledb.Array.create(path, schema)


@pytest.mark.parametrize("cells", [{"s": ["c"], "x": [70]}, {"s": ["z"], "x": [3]},
                                   {"s": ["mm"], "x": [3]}])
def test_sparse_writes_outside_the_current_domain_are_refused(tmp_path, cells):
    """TileDB refuses cells outside the current domain; tdbsql wrote them, and no reader could
    see them (reads stop at the current domain)."""
    path = str(tmp_path / "a")
    _current_domain_array(path, sparse=True)
    with pytest.raises(tiledb.TileDBError, match="outside of the defined current domain"):
        with tiledb.open(path, "w") as A:
            A[np.array(cells["s"], dtype=object), np.array(cells["x"])] = {"v": np.array([1])}
    with pytest.raises(tdbsql.DataError, match="outside the current domain"):
        tdbsql.write(path, {**cells, "v": [1]})
    con = tdbsql.connect().register("t", path)
    with pytest.raises(tdbsql.DataError, match="outside the current domain"):
        con.sql(f"INSERT INTO t VALUES ('{cells['s'][0]}', {cells['x'][0]}, 1)")
    assert tdbsql.open(path).fragments == []
    tdbsql.write(path, {"s": ["b", "m"], "x": [0, 49], "v": [1, 2]})  # the edges are inside
    with tiledb.open(path) as A:
        assert sorted(A.query()[:]["v"].tolist()) == [1, 2]


def test_dense_writes_outside_the_current_domain_are_refused(tmp_path):
    path = str(tmp_path / "a")
    _current_domain_array(path, sparse=False)
    with pytest.raises(tdbsql.DataError, match=r"subarray \[45, 54\] is outside the current"):
        tdbsql.write(path, {"v": np.arange(10)}, subarray=((45, 54),))
    with pytest.raises(tdbsql.DataError, match="outside the current domain"):
        tdbsql.write(path, {"x": [50], "v": [1]})
    tdbsql.write(path, {"v": np.arange(10)}, subarray=((40, 49),))
    with tiledb.open(path) as A:
        assert A.nonempty_domain() == ((40, 49),)


@pytest.mark.parametrize("before", [tdbsql.ByteShuffle, tdbsql.Xor, tdbsql.BitShuffle])
def test_float_scaling_behind_a_reordering_filter_is_refused_unless_exact(tmp_path, before):
    """Behind a shuffle or XOR, float scaling rounds bytes that are not the values: TileDB reads
    such a tile back as other values (tiledb writes it so, and tdbsql's consolidation of such
    an array wrote cells tiledb and tdbsql then read differently).  tdbsql refuses the tile
    unless the round trip is exact."""
    path = str(tmp_path / "a")
    tdbsql.create(path, tdbsql.Schema([tdbsql.Dim("d", "int64", (0, 99), 10)], [
        tdbsql.Attr("a", "float32", filters=[before(), tdbsql.FloatScale(1.0, 0, 4)])]))
    with pytest.raises(tdbsql.DataError, match="would read back other values"):
        tdbsql.write(path, {"d": np.arange(20), "a": np.arange(20, dtype=np.float32) * 0.37 + 1})
    assert tdbsql.open(path).fragments == []
    zeros = np.zeros(20, dtype=np.float32)  # all-zero bytes survive any reordering
    tdbsql.write(path, {"d": np.arange(20), "a": zeros})
    with tiledb.open(path) as A:
        assert A[:]["a"].tolist() == zeros.tolist()
