"""The cells of a sparse tile inside the query's dimension ranges (``SparseScan._range_mask``):
a sorted coordinate (a row-major tile's first dimension, one space tile wide on the others)
is bounded by binary search and the other dimensions tested between those bounds; unsorted
ones (small extents on the second dimension, col-major order) are tested cell by cell.
Checked against the cells ``tiledb`` wrote, filtered by numpy, over random ranges."""

from __future__ import annotations

import numpy as np
import pytest
import tiledb
from hypothesis import given, settings
from hypothesis import strategies as st

import tdbsql
from tdbsql.engine.column import Column

N = 3000


def _array(root, name: str, extent: int, order: str, dtype) -> tuple[str, dict]:
    uri = str(root / name)
    dom = tiledb.Domain(tiledb.Dim("a", domain=(0, 99), tile=10, dtype=dtype),
                        tiledb.Dim("b", domain=(-500, 499), tile=extent, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=700,
                                                cell_order=order, tile_order=order,
                                                allows_duplicates=True,
                                                attrs=[tiledb.Attr("v", dtype=np.int64)]))
    rng = np.random.default_rng(len(name))
    cells = {"a": rng.integers(0, 100, N).astype(dtype), "b": rng.integers(-500, 500, N),
             "v": np.arange(N, dtype=np.int64)}
    with tiledb.open(uri, "w") as A:
        A[cells["a"], cells["b"]] = {"v": cells["v"]}
    return uri, cells


@pytest.fixture(scope="module")
def arrays(tmp_path_factory):
    root = tmp_path_factory.mktemp("range_mask")
    return {"sorted": _array(root, "sorted", 1000, "row-major", np.int32),
            "tiled": _array(root, "tiled", 50, "row-major", np.int64),
            "col": _array(root, "col", 1000, "col-major", np.uint16)}


_RANGE = st.tuples(st.integers(-600, 600), st.integers(0, 300)).map(
    lambda r: (r[0], r[0] + r[1]))


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(["sorted", "tiled", "col"]),
       a_ranges=st.lists(st.tuples(st.integers(-5, 105), st.integers(0, 40)).map(
           lambda r: (r[0], r[0] + r[1])), min_size=0, max_size=4),
       b_ranges=st.lists(_RANGE, min_size=0, max_size=2))
def test_cells_inside_the_ranges_are_the_ones_numpy_finds(arrays, name, a_ranges, b_ranges):
    uri, cells = arrays[name]
    terms, want = [], np.ones(N, dtype=bool)
    for dim, ranges in (("a", a_ranges), ("b", b_ranges)):
        if ranges:
            terms.append("(" + " OR ".join(f"{dim} BETWEEN {lo} AND {hi}"
                                           for lo, hi in ranges) + ")")
            values = cells[dim].astype(np.int64)
            want &= np.logical_or.reduce([(values >= lo) & (values <= hi)
                                          for lo, hi in ranges])
    where = " WHERE " + " AND ".join(terms) if terms else ""
    got = tdbsql.query(f"SELECT v FROM array{where}", uri).column("v").to_numpy()
    assert sorted(got.tolist()) == sorted(cells["v"][want].tolist())


@settings(max_examples=30, deadline=None)
@given(name=st.sampled_from(["sorted", "tiled", "col"]),
       members=st.lists(st.integers(-5, 105), min_size=1, max_size=80),
       b_range=st.one_of(st.none(), _RANGE))
def test_a_long_in_list_keeps_the_cells_numpy_finds(arrays, name, members, b_range):
    """Past 32 ranges, a sorted dimension's pieces are marked by a running count."""
    uri, cells = arrays[name]
    where = f"a IN ({', '.join(map(str, members))})"
    want = np.isin(cells["a"].astype(np.int64), members)
    if b_range is not None:
        where += f" AND b BETWEEN {b_range[0]} AND {b_range[1]}"
        want &= (cells["b"] >= b_range[0]) & (cells["b"] <= b_range[1])
    got = tdbsql.query(f"SELECT v FROM array WHERE {where}", uri).column("v").to_numpy()
    assert sorted(got.tolist()) == sorted(cells["v"][want].tolist())


def test_a_column_is_ascending_when_no_cell_decreases():
    assert Column(np.array([1, 1, 2, 5], np.int64)).ascending
    assert Column(np.array([], np.int64)).ascending
    assert not Column(np.array([1, 3, 2], np.int64)).ascending
    assert not Column(np.array([1.0, np.nan, 2.0])).ascending
    assert not Column(np.array([1, 2, 3, 4], np.int64), cell_val_num=2).ascending
    assert not Column(np.frombuffer(b"abc", np.uint8),
                      offsets=np.array([0, 1, 2, 3], np.int64)).ascending


def _one_dim(root, name: str, dtype, domain, cells) -> str:
    uri = str(root / name)
    dom = tiledb.Domain(tiledb.Dim("d", domain=domain, tile=2**40, dtype=dtype))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=100,
                                                attrs=[tiledb.Attr("v", dtype=np.int64)]))
    with tiledb.open(uri, "w") as A:
        A[np.array(cells, dtype)] = {"v": np.arange(1, len(cells) + 1, dtype=np.int64)}
    return uri


@pytest.mark.parametrize("where,want", [
    # a float literal past 2**53 is rounded to a float64 by the planner: its range is
    # stepped outward so the conjunct, tested exactly, still sees the cells it keeps
    ("d <= 9007199254740993.0", [1, 2]), ("d = 9007199254740993.0", [2]),
    ("d BETWEEN 5 AND 9007199254740993.0", [1, 2]), ("d > 9007199254740993.0", [3]),
    # infinite bounds beside another range of the dimension
    ("d BETWEEN 1 AND 20 OR d >= 1e400", [1]), ("d BETWEEN 1 AND 20 OR d <= -1e400", [1]),
    ("d >= -1e400", [1, 2, 3])])
def test_float_bounds_on_integer_dimensions_keep_what_duckdb_keeps(tmp_path, where, want):
    uri = _one_dim(tmp_path, "big", np.int64, (0, 2**62), [10, 2**53 + 1, 2**53 + 3])
    got = tdbsql.query(f"SELECT v FROM array WHERE {where}", uri).column("v").to_pylist()
    assert sorted(got) == want


def test_a_float_bound_rounded_past_uint64_keeps_the_cells_below_it(tmp_path):
    top = 2**64 - 11
    uri = _one_dim(tmp_path, "u64", np.uint64, (0, top), [5, top])
    got = tdbsql.query("SELECT v FROM array WHERE d >= 18446744073709551605.0", uri)
    assert got.column("v").to_pylist() == [2]  # the literal rounds to 2**64 as a float64


@pytest.fixture(scope="module")
def text_array(tmp_path_factory):
    """A sorted first dimension over tiles of 40 cells, with a nullable var-sized text and a
    nullable float attribute, written by ``tiledb`` at 10 and at 20, then consolidated."""
    uri = str(tmp_path_factory.mktemp("runs") / "text")
    dom = tiledb.Domain(tiledb.Dim("a", domain=(0, 999), tile=1000, dtype=np.int64),
                        tiledb.Dim("b", domain=(0, 9), tile=10, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(
        domain=dom, sparse=True, capacity=40, allows_duplicates=True,
        attrs=[tiledb.Attr("s", dtype=str, nullable=True),
               tiledb.Attr("f", dtype=np.float64, nullable=True)]))
    rng = np.random.default_rng(7)
    for stamp in (10, 20):
        a = np.sort(rng.integers(0, 1000, 300))
        s = np.array(["x" * int(k) for k in rng.integers(0, 6, 300)], dtype=object)
        with tiledb.open(uri, "w", timestamp=stamp) as A:
            A[a, rng.integers(0, 10, 300)] = {
                "s": np.ma.masked_array(s, mask=rng.random(300) < 0.2),
                "f": np.ma.masked_array(rng.random(300), mask=rng.random(300) < 0.3)}
    tiledb.consolidate(uri)  # one fragment of both writes, each cell with its timestamp
    return uri


@settings(max_examples=40, deadline=None)
@given(lo=st.integers(-5, 1000), width=st.integers(0, 400), as_of=st.sampled_from([None, 15]))
def test_one_range_of_a_sorted_dimension_reads_a_run_of_each_tile(text_array, lo, width,
                                                                     as_of):
    """One range on the sorted dimension keeps a run of each tile it cuts: those cells are
    read as views of the tile (text offsets rebased), or through a mask when the read is
    as of a time inside the consolidated fragment's writes."""
    hi = lo + width
    travel = "" if as_of is None else f" FOR SYSTEM_TIME AS OF {as_of}"
    got = tdbsql.query(f"SELECT a, b, s, f FROM array{travel} WHERE a BETWEEN {lo} AND {hi}",
                       text_array)
    want = []
    if hi >= 0 and lo <= 999:
        with tiledb.open(text_array, timestamp=as_of) as A:  # Arrow: NULLs kept
            cells = A.query(attrs=["s", "f"], return_arrow=True).df[max(lo, 0):min(hi, 999), :]
        want = sorted(zip(*(cells.column(c).to_pylist() for c in "absf")), key=repr)
    assert sorted(zip(*(got.column(c).to_pylist() for c in "absf")), key=repr) == want
