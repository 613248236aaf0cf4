"""Layouts and read semantics against ``tiledb``: tile/cell orders (row, col, Hilbert), small
capacities, dense writes not aligned to tiles, overlapping fragments (dense: newer hides older;
sparse: newest wins, or every cell with duplicates allowed), empty and single-cell arrays, and
WHERE pushdown returning exactly the cells ``tiledb`` returns for the same ranges/conditions."""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa
import pytest

import tdbsql

tiledb = pytest.importorskip("tiledb")

from conftest import (  # noqa: E402
    assert_same_cells, dense_write, normalize_domain, oracle_cells,
)

RNG = np.random.default_rng(23)
ORDERS = ["row-major", "col-major"]


def _dense_2d(path, tile_order="row-major", cell_order="row-major"):
    dom = tiledb.Domain(tiledb.Dim("r", domain=(-10, 9), tile=3, dtype=np.int32),
                        tiledb.Dim("c", domain=(1, 17), tile=4, dtype=np.int32))
    tiledb.Array.create(str(path), tiledb.ArraySchema(
        domain=dom, tile_order=tile_order, cell_order=cell_order,
        attrs=[tiledb.Attr("a", dtype=np.int32), tiledb.Attr("s", dtype=str, var=True),
               tiledb.Attr("n", dtype=np.float64, nullable=True)]))
    # three fragments: unaligned to the 3x4 tiles, overlapping; the last is a single cell
    for ts, box in enumerate([[(-9, -1), (2, 13)], [(-4, 5), (6, 17)], [(8, 8), (1, 1)]], 1):
        shape = [hi - lo + 1 for lo, hi in box]
        n = int(np.prod(shape))
        data = {"a": (np.arange(n) + 1000 * ts).reshape(shape).astype(np.int32),
                "s": np.array([f"{ts}:{i}" * (i % 3) for i in range(n)], dtype=object)
                .reshape(shape),
                "n": (np.arange(n) / 7).reshape(shape)}
        dense_write(path, box, data, timestamp=ts,
                    nullmaps={"n": (np.arange(n) % 5 != 0).astype(np.uint8)})


@pytest.mark.parametrize("tile_order,cell_order", list(itertools.product(ORDERS, ORDERS)))
def test_dense_orders_and_overlaps(tmp_path, tile_order, cell_order):
    path = tmp_path / "a"
    _dense_2d(path, tile_order, cell_order)
    table = tdbsql.query("SELECT r, c, a, s, n FROM array", str(path))
    assert table.num_rows == 18 * 17  # the box of the non-empty domain: r -9..8, c 1..17
    assert_same_cells(table, oracle_cells(path), ["r", "c"], ["a", "s", "n"], path=path)


@pytest.mark.parametrize("cell_order", ORDERS)
def test_dense_3d_unaligned_domain(tmp_path, cell_order):
    """The domain is not a multiple of the tile extents: the last tiles reach past it."""
    path = tmp_path / "a"
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 10), tile=4, dtype=np.uint16),
                        tiledb.Dim("y", domain=(0, 6), tile=3, dtype=np.uint16),
                        tiledb.Dim("z", domain=(0, 4), tile=5, dtype=np.uint16))
    tiledb.Array.create(str(path), tiledb.ArraySchema(
        domain=dom, tile_order="col-major", cell_order=cell_order,
        attrs=[tiledb.Attr("v", dtype=np.int64)]))
    dense_write(path, [(0, 10), (0, 6), (0, 4)], np.arange(11 * 7 * 5).reshape(11, 7, 5))
    dense_write(path, [(3, 9), (2, 2), (1, 3)], -np.arange(7 * 3).reshape(7, 1, 3))
    table = tdbsql.query("SELECT x, y, z, v FROM array", str(path))
    assert_same_cells(table, oracle_cells(path), ["x", "y", "z"], ["v"], path=path)


def _sparse_2d(path, cell_order, tile_order="row-major", duplicates=False, capacity=5):
    dom = tiledb.Domain(tiledb.Dim("r", domain=(-10, 9), tile=3, dtype=np.int32),
                        tiledb.Dim("c", domain=(1, 17), tile=4, dtype=np.int32))
    kwargs = {} if cell_order == "hilbert" else {"tile_order": tile_order}
    tiledb.Array.create(str(path), tiledb.ArraySchema(
        domain=dom, sparse=True, cell_order=cell_order, capacity=capacity,
        allows_duplicates=duplicates,
        attrs=[tiledb.Attr("a", dtype=np.int32), tiledb.Attr("s", dtype=str, var=True)],
        **kwargs))
    for ts in (1, 2, 3):
        r = RNG.integers(-10, 10, 60).astype(np.int32)
        c = RNG.integers(1, 18, 60).astype(np.int32)
        if not duplicates:  # one write may not repeat a coordinate
            r, c = np.unique(np.stack([r, c]), axis=1)
        n = len(r)
        with tiledb.open(str(path), "w", timestamp=ts) as A:
            A[r, c] = {"a": np.arange(n, dtype=np.int32) + 1000 * ts,
                       "s": np.array([f"{ts}-{i}" for i in range(n)], dtype=object)}


@pytest.mark.parametrize("tile_order,cell_order",
                         list(itertools.product(ORDERS, ORDERS)) + [("row-major", "hilbert")])
def test_sparse_orders_newest_wins(tmp_path, tile_order, cell_order):
    path = tmp_path / "a"
    _sparse_2d(path, cell_order, tile_order)
    table = tdbsql.query("SELECT r, c, a, s FROM array", str(path))
    assert_same_cells(table, oracle_cells(path), ["r", "c"], ["a", "s"], path=path)
    _check_domain(path)


@pytest.mark.parametrize("cell_order", ["row-major", "hilbert"])
def test_sparse_duplicates_all_kept(tmp_path, cell_order):
    path = tmp_path / "a"
    _sparse_2d(path, cell_order, duplicates=True)
    table = tdbsql.query("SELECT r, c, a, s FROM array", str(path))
    assert table.num_rows == 180
    assert_same_cells(table, oracle_cells(path), ["r", "c"], ["a", "s"], path=path)


def test_sparse_newest_write_of_a_coordinate_wins(tmp_path):
    path = tmp_path / "a"
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 99), tile=10, dtype=np.uint8))
    tiledb.Array.create(str(path), tiledb.ArraySchema(
        domain=dom, sparse=True, capacity=2, attrs=[tiledb.Attr("v", dtype=np.int16)]))
    for ts, coords in ((5, [1, 2, 3, 50]), (9, [2, 50, 51]), (7, [3, 2])):  # written out of order
        with tiledb.open(str(path), "w", timestamp=ts) as A:
            A[np.array(coords, np.uint8)] = np.full(len(coords), ts, np.int16)
    table = tdbsql.query("SELECT x, v FROM array ORDER BY x", str(path))
    assert table.to_pydict() == {"x": [1, 2, 3, 50, 51], "v": [5, 9, 7, 9, 9]}
    assert_same_cells(table, oracle_cells(path), ["x"], ["v"], path=path)


@pytest.mark.parametrize("sparse", [True, False])
def test_empty_array(tmp_path, sparse):
    path = tmp_path / "a"
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 9), tile=5, dtype=np.int64))
    tiledb.Array.create(str(path), tiledb.ArraySchema(
        domain=dom, sparse=sparse,
        attrs=[tiledb.Attr("a", dtype=np.float32), tiledb.Attr("s", dtype=str, var=True),
               tiledb.Attr("m", dtype="i4,i4", nullable=sparse)]))
    table = tdbsql.query("SELECT * FROM array", str(path))
    assert table.num_rows == 0
    assert table.schema.types == [pa.int64(), pa.float32(), pa.string(), pa.list_(pa.int32(), 2)]
    assert tdbsql.open(str(path)).non_empty_domain() is None
    assert tdbsql.query("SELECT a FROM array WHERE x > 3", str(path)).num_rows == 0


@pytest.mark.parametrize("sparse", [True, False])
def test_single_cell(tmp_path, sparse):
    path = tmp_path / "a"
    dom = tiledb.Domain(tiledb.Dim("x", domain=(-5, 5), tile=11, dtype=np.int8),
                        tiledb.Dim("y", domain=(-5, 5), tile=2, dtype=np.int8))
    tiledb.Array.create(str(path), tiledb.ArraySchema(
        domain=dom, sparse=sparse, attrs=[tiledb.Attr("s", dtype=str, var=True)]))
    if sparse:
        with tiledb.open(str(path), "w") as A:
            A[np.array([-5], np.int8), np.array([5], np.int8)] = np.array(["only"], dtype=object)
    else:
        dense_write(path, [(-5, -5), (5, 5)], np.array([["only"]], dtype=object))
    table = tdbsql.query("SELECT * FROM array", str(path))
    assert table.to_pydict() == {"x": [-5], "y": [5], "s": ["only"]}
    assert_same_cells(table, oracle_cells(path), ["x", "y"], ["s"], path=path)
    _check_domain(path)


# -- WHERE pushdown: exactly tiledb's cells for the same ranges / conditions ------------------

WORDS = ["apple", "b", "banana", "c", "d", "zed", ""]


@pytest.fixture(scope="module")
def sparse_where(tmp_path_factory):
    path = tmp_path_factory.mktemp("where") / "sparse"
    dom = tiledb.Domain(tiledb.Dim("x", domain=(-100, 100), tile=10, dtype=np.int64),
                        tiledb.Dim("s", domain=(None, None), tile=None, dtype="ascii"))
    tiledb.Array.create(str(path), tiledb.ArraySchema(
        domain=dom, sparse=True, capacity=6,
        attrs=[tiledb.Attr("a", dtype=np.int32),
               tiledb.Attr("f", dtype=np.float64, nullable=True),
               tiledb.Attr("u", dtype=str, var=True)]))
    for ts in (1, 2):
        n = 120
        x = RNG.integers(-100, 101, n)
        s = np.array([WORDS[i % len(WORDS)] + str(RNG.integers(0, 3)) for i in range(n)])
        pairs = sorted(set(zip(x.tolist(), s.tolist())))
        x = np.array([p[0] for p in pairs], np.int64)
        s = np.array([p[1] for p in pairs])
        n = len(x)
        with tiledb.open(str(path), "w", timestamp=ts) as A:
            tiledb.sparse_array._setitem_impl_sparse(
                A, (x, s), {"a": RNG.integers(0, 100, n).astype(np.int32),
                            "f": RNG.uniform(-1, 1, n),
                            "u": np.array([WORDS[i % 7] * 2 for i in range(n)], dtype=object)},
                {"f": (RNG.integers(0, 4, n) != 0).astype(np.uint8)})
    return path


# (SQL WHERE, tiledb condition, multi_index key giving the same cells or None)
SPARSE_WHERE = [
    ("x BETWEEN -5 AND 20", "x >= -5 and x <= 20", (slice(-5, 20), slice(None))),
    ("x < 0", "x < 0", (slice(-100, -1), slice(None))),
    ("x >= 10", "x >= 10", (slice(10, 100), slice(None))),
    ("x > 10", "x > 10", (slice(11, 100), slice(None))),
    ("x = 7", "x == 7", ([7], slice(None))),
    ("x IN (1, 5, 7, -3, 99)", "x == 1 or x == 5 or x == 7 or x == -3 or x == 99",
     ([-3, 1, 5, 7, 99], slice(None))),
    ("x < -50 OR x > 50", "x < -50 or x > 50", ([slice(-100, -51), slice(51, 100)], slice(None))),
    ("(x BETWEEN -90 AND -80 OR x BETWEEN 0 AND 5) AND s >= 'c'",
     "((x >= -90 and x <= -80) or (x >= 0 and x <= 5)) and s >= 'c'", None),
    ("s BETWEEN 'b' AND 'c1'", "s >= 'b' and s <= 'c1'", (slice(None), slice("b", "c1"))),
    ("s = 'apple1'", "s == 'apple1'", (slice(None), ["apple1"])),
    ("s IN ('b0', 'zed2', '0')", "s == 'b0' or s == 'zed2' or s == '0'",
     (slice(None), ["0", "b0", "zed2"])),
    ("s < 'c'", "s < 'c'", None),
    ("s > 'c'", "s > 'c'", None),
    ("x >= 0 AND s < 'banana'", "x >= 0 and s < 'banana'", None),
    ("a > 50", "a > 50", None),
    ("a >= 3 AND a < 40 AND x < 0", "a >= 3 and a < 40 and x < 0", None),
    ("f < 0.5", "f < 0.5", None),
    ("f IS NULL", "f == None", None),
    ("f IS NOT NULL AND x > 0", "f != None and x > 0", None),
    ("u = 'bb'", "u == 'bb'", None),
    ("u = '' OR a = 3", "u == '' or a == 3", None),
    ("x > 200", "x > 200", None),
]


@pytest.mark.parametrize("where,cond,key", SPARSE_WHERE, ids=[w for w, _, _ in SPARSE_WHERE])
def test_sparse_where_matches_tiledb(sparse_where, where, cond, key):
    path = sparse_where
    table = tdbsql.query(f"SELECT x, s, a, f, u FROM array WHERE {where}", str(path))
    dims, attrs = ["x", "s"], ["a", "f", "u"]
    assert_same_cells(table, oracle_cells(path, cond=cond), dims, attrs, path=path)
    if key is not None:
        assert_same_cells(table, oracle_cells(path, key), dims, attrs, path=path)


@pytest.fixture(scope="module")
def dense_where(tmp_path_factory):
    path = tmp_path_factory.mktemp("where") / "dense"
    _dense_2d(path)
    return path


# (SQL WHERE, multi_index key inside the non-empty domain r -9..8, c 1..17, or a predicate on
# the int32 attribute ``a`` applied to the whole box)
DENSE_WHERE = [
    ("r BETWEEN -3 AND 2", (slice(-3, 2), slice(1, 17))),
    ("r < 0 AND c >= 10", (slice(-9, -1), slice(10, 17))),
    ("r = 4", (slice(4, 4), slice(1, 17))),
    ("c IN (1, 7, 17)", (slice(-9, 8), [1, 7, 17])),
    ("r < -7 OR r > 6", ([slice(-9, -8), slice(7, 8)], slice(1, 17))),
    ("r BETWEEN -20 AND -8", (slice(-9, -8), slice(1, 17))),
    ("r > 100", None),
    ("a >= 2000", lambda a: a >= 2000),
    ("a < 1010 AND r > 0", None),
]


@pytest.mark.parametrize("where,key", DENSE_WHERE, ids=[w for w, _ in DENSE_WHERE])
def test_dense_where_matches_tiledb(dense_where, where, key):
    path = dense_where
    table = tdbsql.query(f"SELECT r, c, a, s, n FROM array WHERE {where}", str(path))
    names = ["r", "c", "a", "s", "n"]
    full = oracle_cells(path)
    if callable(key) or key is None:
        if key is None:  # evaluate the predicate on the decoded box in Python
            keep = [_dense_predicate(where, full, i) for i in range(len(full["a"]))]
        else:
            values = np.frombuffer(b"".join(full["a"]), np.int32)
            keep = key(values)
        expected = {n: [v for v, k in zip(full[n], keep) if k] for n in names}
    else:
        expected = oracle_cells(path, key)
    assert_same_cells(table, expected, ["r", "c"], ["a", "s", "n"], path=path)


def _dense_predicate(where, cells, i):
    r = int.from_bytes(cells["r"][i], "little", signed=True)
    a = int.from_bytes(cells["a"][i], "little", signed=True)
    return {"r > 100": r > 100, "a < 1010 AND r > 0": a < 1010 and r > 0}[where]


def test_where_on_datetime_dimension(tmp_path):
    """Datetime dimensions are not pushed down: the predicate still filters exactly."""
    path = tmp_path / "a"
    dim = tiledb.Dim("t", domain=(np.datetime64(-1000, "D"), np.datetime64(1000, "D")),
                     tile=np.timedelta64(30, "D"), dtype="M8[D]")
    tiledb.Array.create(str(path), tiledb.ArraySchema(
        domain=tiledb.Domain(dim), sparse=True, capacity=4,
        attrs=[tiledb.Attr("a", dtype=np.int64)]))
    days = np.arange(-40, 40, 3)
    with tiledb.open(str(path), "w") as A:
        A[days.astype("M8[D]")] = days
    table = tdbsql.query("SELECT t, a FROM array WHERE t >= CAST('1970-01-10' AS DATE)",
                         str(path))
    expected = oracle_cells(path, (slice(np.datetime64(9, "D"), np.datetime64(1000, "D")),))
    assert_same_cells(table, expected, ["t"], ["a"], path=path)


@pytest.mark.parametrize("op,lo,hi", [("=", -126, -126), ("<", -129, -127), (">=", -126, -100),
                                       ("BETWEEN", -128, -126)])
@pytest.mark.parametrize("sparse", [True, False])
def test_where_on_nanosecond_dimension(tmp_path, sparse, op, lo, hi):
    """A TIMESTAMP_NS literal keeps its nanoseconds (it was cut to microseconds, so the range
    pushed down and the filter after it disagreed: ``t = ...874`` found nothing)."""
    path = tmp_path / "a"
    dim = tiledb.Dim("t", domain=(np.datetime64(-200, "ns"), np.datetime64(-100, "ns")),
                     tile=np.timedelta64(7, "ns"), dtype="M8[ns]")
    tiledb.Array.create(str(path), tiledb.ArraySchema(
        domain=tiledb.Domain(dim), sparse=sparse, attrs=[tiledb.Attr("a", dtype=np.int64)]))
    t = np.arange(-129, -99, dtype=np.int64)
    if sparse:
        with tiledb.open(str(path), "w") as A:
            A[t.view("M8[ns]")] = t
    else:
        dense_write(path, [(np.datetime64(-129, "ns"), np.datetime64(-100, "ns"))], t)
    stamp = "TIMESTAMP_NS '1969-12-31 23:59:59.999999{:03d}'".format
    where = f"t BETWEEN {stamp(1000 + lo)} AND {stamp(1000 + hi)}" if op == "BETWEEN" else \
        f"t {op} {stamp(1000 + (lo if op != '<' else hi + 1))}"
    table = tdbsql.query(f"SELECT t, a FROM array WHERE {where}", str(path))
    expected = oracle_cells(path, (slice(np.datetime64(lo, "ns"), np.datetime64(hi, "ns")),))
    assert_same_cells(table, expected, ["t"], ["a"], path=path, ordered=False)


def test_dense_string_tile_bounds_are_not_trusted(tmp_path):
    """TileDB 2.30 stores garbage bounds for an ASCII attribute of a dense write of three
    attributes (``'aa'`` plus stray bytes for a tile holding ``'zz\\0zz'``): predicates and
    min / max go by the cells."""
    path = tmp_path / "a"
    tiledb.Array.create(str(path), tiledb.ArraySchema(
        domain=tiledb.Domain(tiledb.Dim("x", domain=(-67, -44), tile=2, dtype=np.int64)),
        attrs=[tiledb.Attr("s", dtype="ascii", var=True), tiledb.Attr("u", dtype=str, var=True),
               tiledb.Attr("b", dtype="blob", var=True)]))
    dense_write(path, [(-62, -61)], {"s": np.array([b"zz\x00zz", b"aa"], dtype=object),
                                      "u": np.array(["", "xyz"], dtype=object),
                                      "b": np.array([b"R", b""], dtype=object)})
    cells = oracle_cells(path)["s"]
    got = tdbsql.query("SELECT count(*) AS c, min(s) AS lo, max(s) AS hi FROM array "
                       "WHERE s >= 'b'", str(path)).to_pylist()
    kept = [c.decode() for c in cells if c >= b"b"]
    assert got == [{"c": len(kept), "lo": min(kept), "hi": max(kept)}]
    where = tdbsql.query("SELECT x, s, u, b FROM array WHERE s >= 'b'", str(path))
    expected = oracle_cells(path, (slice(np.int64(-62), np.int64(-62)),))
    assert_same_cells(where, expected, ["x"], ["s", "u", "b"], path=path)


def test_non_empty_domain_string_and_float(sparse_where, tmp_path):
    _check_domain(sparse_where)
    path = tmp_path / "f"
    dom = tiledb.Domain(tiledb.Dim("f", domain=(-1.0, 1.0), tile=0.5, dtype=np.float32))
    tiledb.Array.create(str(path), tiledb.ArraySchema(
        domain=dom, sparse=True, attrs=[tiledb.Attr("a", dtype=np.int8)]))
    for ts, vals in ((1, [-0.75, 0.25]), (2, [0.5, 0.875])):
        with tiledb.open(str(path), "w", timestamp=ts) as A:
            A[np.array(vals, np.float32)] = np.arange(2, dtype=np.int8)
    _check_domain(path)


def _check_domain(path):
    with tiledb.open(str(path)) as A:
        want = normalize_domain(A.nonempty_domain())
    assert normalize_domain(tdbsql.open(str(path)).non_empty_domain()) == want


def test_uint64_dimensions_past_int64(tmp_path):
    path = tmp_path / "a"
    hi = 2**64 - 2
    tiledb.Array.create(str(path), tiledb.ArraySchema(
        domain=tiledb.Domain(tiledb.Dim("x", domain=(hi - 999, hi), tile=100, dtype=np.uint64)),
        attrs=[tiledb.Attr("a", dtype=np.int32)]))
    dense_write(path, [(hi - 150, hi - 3)], np.arange(148, dtype=np.int32))
    table = tdbsql.query("SELECT x, a FROM array", str(path))
    assert_same_cells(table, oracle_cells(path), ["x"], ["a"], path=path)
    _check_domain(path)


def test_dense_uint64_tile_answers_past_int64(tmp_path):
    """Aggregates answered from dense tile metadata place tiles of a uint64 domain past int64
    (they overflowed int64 arithmetic)."""
    path = tmp_path / "a"
    top = 2**64 - 3
    tiledb.Array.create(str(path), tiledb.ArraySchema(domain=tiledb.Domain(
        tiledb.Dim("x", domain=(top - 59, top), tile=4, dtype=np.uint64),
        tiledb.Dim("y", domain=(7, 14), tile=2, dtype=np.uint64)),
        attrs=[tiledb.Attr("a", dtype=np.int32)]))
    dense_write(path, [(top - 40, top - 1), (8, 13)], np.arange(240, dtype=np.int32).reshape(40, 6))
    cells = oracle_cells(path)
    xs = [int.from_bytes(c, "little") for c in cells["x"]]
    a = [int.from_bytes(c, "little", signed=True) for c in cells["a"]]
    table = tdbsql.query("SELECT count(*) AS n, min(x) AS lo, max(x) AS hi, sum(a) AS s "
                         f"FROM array WHERE x >= {top - 20}", str(path))
    kept = [v for v, x in zip(a, xs) if x >= top - 20]
    assert table.to_pylist() == [{"n": len(kept), "lo": top - 20, "hi": max(xs), "s": sum(kept)}]
    groups = tdbsql.query("SELECT x, count(*) AS n FROM array GROUP BY x ORDER BY x",
                          str(path)).to_pylist()
    assert groups == [{"x": x, "n": xs.count(x)} for x in sorted(set(xs))]


@pytest.fixture
def uint64_sparse(tmp_path):
    path = tmp_path / "u"
    tiledb.Array.create(str(path), tiledb.ArraySchema(
        domain=tiledb.Domain(tiledb.Dim("x", domain=(0, 2**64 - 2), tile=2**40, dtype=np.uint64)),
        sparse=True, capacity=3, attrs=[tiledb.Attr("a", dtype=np.int32)]))
    x = np.array([0, 1, 2**63, 2**63 + 5, 2**64 - 2, 2**64 - 3, 12345], np.uint64)
    with tiledb.open(str(path), "w") as A:
        A[x] = np.arange(len(x), dtype=np.int32)
    return path


def test_uint64_sparse_full_scan(uint64_sparse):
    table = tdbsql.query("SELECT x, a FROM array", str(uint64_sparse))
    assert_same_cells(table, oracle_cells(uint64_sparse), ["x"], ["a"], path=uint64_sparse)
    _check_domain(uint64_sparse)


def test_uint64_literals_past_int64(uint64_sparse):
    table = tdbsql.query(f"SELECT x, a FROM array WHERE x >= {2**63}", str(uint64_sparse))
    expected = oracle_cells(uint64_sparse, (slice(2**63, 2**64 - 2),))
    assert_same_cells(table, expected, ["x"], ["a"], path=uint64_sparse)


def test_float32_comparisons_with_decimal_literals(tmp_path):
    path = tmp_path / "f"
    tiledb.Array.create(str(path), tiledb.ArraySchema(
        domain=tiledb.Domain(tiledb.Dim("f", domain=(-1, 1), tile=0.5, dtype=np.float32)),
        sparse=True, attrs=[tiledb.Attr("v", dtype=np.float32)]))
    f = np.array([-1, -0.5, 0.1, 0.25, 0.3, 1], np.float32)
    with tiledb.open(str(path), "w") as A:
        A[f] = f
    for where, key in (("f = 0.3", ([0.3],)), ("f <= 0.1", (slice(-1, 0.1),)),
                       ("v = 0.3", ([0.3],))):
        table = tdbsql.query(f"SELECT f, v FROM array WHERE {where}", str(path))
        assert_same_cells(table, oracle_cells(path, key), ["f"], ["v"], path=path)


def test_sparse_hilbert_float_and_string_dimensions(tmp_path):
    path = tmp_path / "h"
    dom = tiledb.Domain(tiledb.Dim("f", domain=(-1, 1), tile=None, dtype=np.float64),
                        tiledb.Dim("s", domain=(None, None), tile=None, dtype="ascii"))
    tiledb.Array.create(str(path), tiledb.ArraySchema(
        domain=dom, sparse=True, cell_order="hilbert", capacity=7,
        attrs=[tiledb.Attr("a", dtype=np.int32)]))
    for ts in (1, 2):
        # quarter steps: exact binary fractions
        f = RNG.integers(-4, 5, 100) / 4
        pairs = sorted(set(zip(f.tolist(), (f"k{i % 5}" for i in range(100)))))
        with tiledb.open(str(path), "w", timestamp=ts) as A:
            A[np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])] = \
                np.arange(len(pairs), dtype=np.int32) + ts * 1000
    table = tdbsql.query("SELECT f, s, a FROM array", str(path))
    assert_same_cells(table, oracle_cells(path), ["f", "s"], ["a"], path=path)
    table = tdbsql.query("SELECT f, s, a FROM array WHERE f BETWEEN -0.5 AND 0.5 AND s >= 'k2'",
                         str(path))
    expected = oracle_cells(path, (slice(-0.5, 0.5), slice("k2", "k9")))
    assert_same_cells(table, expected, ["f", "s"], ["a"], path=path)


def test_sparse_negative_zero_is_its_own_coordinate(tmp_path):
    path = tmp_path / "z"
    tiledb.Array.create(str(path), tiledb.ArraySchema(
        domain=tiledb.Domain(tiledb.Dim("f", domain=(-1, 1), tile=0.5, dtype=np.float64)),
        sparse=True, attrs=[tiledb.Attr("a", dtype=np.int32)]))
    with tiledb.open(str(path), "w", timestamp=1) as A:
        A[np.array([0.0, 0.5])] = np.array([1, 2], np.int32)
    with tiledb.open(str(path), "w", timestamp=2) as A:
        A[np.array([-0.0])] = np.array([3], np.int32)
    table = tdbsql.query("SELECT f, a FROM array", str(path))
    assert_same_cells(table, oracle_cells(path), ["f"], ["a"], path=path)
