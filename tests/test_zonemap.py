"""Tile zone maps: tiles dropped by min/max/null counts, results unchanged, and the soundness
rule (an overwritten row never comes back).

Oracle: DuckDB over the rows the same scan returns without a predicate (the unpruned reader is
tested against ``tiledb`` elsewhere), and over the rows the test wrote.
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest
import sqlglot
from hypothesis import given, settings
from hypothesis import strategies as st

from tdbsql.engine.evaluate import where_mask
from tdbsql.engine.fields import column_to_arrow
from tdbsql.engine.scan import STAT_KEYS, scan
from tdbsql.storage.tile_cache import tile_cache
from tdbsql.planner.pruning import leaf_mbrs, pick_tiles
from tdbsql.planner.zonemap import (
    ALWAYS, MAYBE, NEVER, Stats, attribute_stats, cell_counts, classify_test, field_kinds,
    parse_predicate, stats_getter,
)
from tdbsql.storage.array import Array

tiledb = pytest.importorskip("tiledb")
duckdb = pytest.importorskip("duckdb")

N = 1000
CAPACITY = 100


def _where(sql: str):
    return sqlglot.parse_one(f"SELECT * FROM t WHERE {sql}", read="duckdb").args["where"].this


def _sparse(path, dups=False):
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 10**6), tile=1000, dtype=np.int64))
    attrs = [tiledb.Attr("a", dtype=np.int32), tiledb.Attr("f", dtype=np.float64, nullable=True),
             tiledb.Attr("s", dtype="ascii", var=True), tiledb.Attr("t", dtype="datetime64[D]"),
             tiledb.Attr("n", dtype=np.int64, nullable=True)]
    schema = tiledb.ArraySchema(domain=dom, attrs=attrs, sparse=True, capacity=CAPACITY,
                                allows_duplicates=dups)
    tiledb.Array.create(str(path), schema)


def _rows(d: np.ndarray) -> dict:
    a = d.astype(np.int32)
    f = np.where(d % 7 == 0, np.nan, d / 10.0)  # NaN in data, NULL via validity below
    s = np.array([f"k{int(x) // 100:02d}" for x in d], dtype=object)
    t = (d // 10).astype("datetime64[D]")
    n = d * 3
    return {"d": d, "a": a, "f": f, "s": s, "t": t, "n": n}


def _write(path, d, timestamp, overrides=None):
    rows = _rows(np.asarray(d, dtype=np.int64))
    rows.update(overrides or {})
    f_valid = (rows["d"] % 5 != 0).astype(np.uint8)
    n_valid = (rows["d"] >= 500).astype(np.uint8) if "n_valid" not in rows else rows.pop("n_valid")
    data = {k: v for k, v in rows.items() if k != "d"}
    nulls = {"f": f_valid, "n": n_valid.astype(np.uint8)}
    with tiledb.open(str(path), "w", timestamp=timestamp) as arr:
        tiledb.sparse_array._setitem_impl_sparse(arr, rows["d"], data, nulls)


@pytest.fixture(scope="module")
def one_fragment(tmp_path_factory):
    path = tmp_path_factory.mktemp("zm") / "sparse"
    _sparse(path)
    _write(path, np.arange(N), 1)
    return str(path)


FIELDS = ["d", "a", "f", "s", "t", "n"]


def _table(array, result, fields) -> pa.Table:
    return pa.table({f: column_to_arrow(array, f, result.columns[f]) for f in fields})


def _check(path, predicate_sql, fields=FIELDS, ranges=None):
    """Pruned scan + filter == DuckDB over the unpruned scan; returns the pruned scan."""
    array = Array(path)
    node = _where(predicate_sql)
    pruned = scan(array, fields, ranges or {}, node)
    table = _table(array, pruned, fields)
    mask = where_mask(table, node, predicate_sql)
    got = table.filter(mask)
    if pruned.always is not None:  # rows flagged ALWAYS do satisfy the predicate
        assert np.asarray(mask)[pruned.always].all()
    unpruned = _table(array, scan(Array(path), fields, ranges or {}), fields)
    con = duckdb.connect()
    con.register("unpruned", unpruned)
    want = con.sql(f"SELECT * FROM unpruned WHERE {predicate_sql}").arrow()
    if isinstance(want, pa.RecordBatchReader):
        want = want.read_all()
    key = [(f, "ascending") for f in fields if f in ("d",)] or [(fields[0], "ascending")]
    assert _rows_of(got.sort_by(key)) == _rows_of(want.sort_by(key)), predicate_sql
    return pruned


def _rows_of(table: pa.Table) -> list:
    """Rows with NaN made comparable."""
    return [{k: "NaN" if isinstance(v, float) and math.isnan(v) else v for k, v in row.items()}
            for row in table.to_pylist()]


@pytest.mark.parametrize("pred, max_tiles", [
    ("a BETWEEN 250 AND 349", 2),
    ("a >= 905", 1),
    ("905 <= a", 1),
    ("99 >= a", 1),
    ("a > -5 AND a < 50", 1),
    ("a < 10.5", 1),
    ("a IN (5, 905)", 2),
    ("a = 2.5", 0),
    ("s >= 'k09'", 1),
    ("s < 'k01' AND a > 3", 1),
    ("t < DATE '1970-01-11'", 1),
    ("t BETWEEN DATE '1970-01-31' AND DATE '1970-02-09'", 2),
    ("n IS NOT NULL", 5),
    ("n IS NULL", 5),
    ("n > 2900", 1),
    ("d < 150 AND a > 120", 1),
    ("f > 95", 10),  # NaN tiles are not trusted: every tile stays
])
def test_zone_maps_drop_tiles(one_fragment, pred, max_tiles):
    result = _check(one_fragment, pred)
    s = result.stats
    assert s["tiles_total"] == s["tiles_after_domain"] == s["tiles_after_mbr"] == N // CAPACITY
    assert s["tiles_after_zonemap"] <= max_tiles
    assert set(STAT_KEYS) <= set(s)


def test_always_tiles_flagged(one_fragment):
    result = _check(one_fragment, "a BETWEEN 100 AND 399 AND s >= 'k00'")
    assert result.stats["tiles_after_zonemap"] == 3
    assert result.stats["tiles_always"] == 3
    assert result.always is not None and result.always.all()
    # an ununderstood conjunct: nothing is ALWAYS, pruning still works on the rest
    result = _check(one_fragment, "a BETWEEN 100 AND 399 AND a % 2 = 0")
    assert result.stats["tiles_after_zonemap"] == 3 and result.always is None
    # a nullable column: tiles with NULLs are MAYBE, not ALWAYS
    result = _check(one_fragment, "n >= 0")
    assert result.stats["tiles_after_zonemap"] == 5 and result.stats["tiles_always"] == 5


def test_stats_count_bytes_and_time(one_fragment):
    tile_cache().clear()
    result = _check(one_fragment, "a < 100", fields=["d", "a"])
    s = result.stats
    assert s["bytes_read"] > 0 and s["bytes_decoded"] >= 100 * (8 + 4)
    assert s["time_s"] >= 0 and s["rows"] == 100
    assert s["fragments_total"] == s["fragments_after_timestamps"] == 1
    # the same tiles again come from the tile cache: decoded bytes as before, none read
    again = _check(one_fragment, "a < 100", fields=["d", "a"]).stats
    assert again["bytes_read"] == 0 and again["bytes_decoded"] == s["bytes_decoded"]


def test_unpushable_predicates_keep_everything(one_fragment):
    for pred in ("a + 1 > 5", "s LIKE 'k0%'", "a > n", "f IS NULL OR a < 3"):
        result = _check(one_fragment, pred)
        assert result.stats["tiles_after_zonemap"] == N // CAPACITY


# -- soundness -------------------------------------------------------------------------------


def test_overwrite_never_resurrects_old_row(tmp_path):
    path = tmp_path / "over"
    _sparse(path)
    _write(path, np.arange(100), 1)  # a = d
    # newer fragment: d = 5 now holds a = 1000, which fails "a < 50"
    _write(path, [5], 2, {"a": np.array([1000], dtype=np.int32)})
    # a third fragment far away, also failing: isolated, so its tile may go
    _write(path, [5000], 3, {"a": np.array([2000], dtype=np.int32)})
    result = _check(str(path), "a < 50")
    d = result.columns["d"].values[np.asarray(
        where_mask(_table(Array(str(path)), result, ["a"]), _where("a < 50"), "a < 50"))]
    assert 5 not in d.tolist() and len(d) == 49
    # fragment 2's tile is NEVER but overlaps fragment 1: it must be read; fragment 3's goes
    assert result.stats["tiles_after_zonemap"] == 2
    assert result.stats["fragments_after_domain"] == 3


def test_overwrite_newer_matching_value_wins(tmp_path):
    path = tmp_path / "over2"
    _sparse(path)
    _write(path, np.arange(100), 1, {"a": np.full(100, 1000, dtype=np.int32)})
    _write(path, [5], 2, {"a": np.array([7], dtype=np.int32)})
    result = _check(str(path), "a < 50")
    assert result.stats["tiles_after_zonemap"] == 1  # the old tile may go: nothing resurrects


def test_duplicates_allowed_prunes_overlapping_fragments(tmp_path):
    path = tmp_path / "dups"
    _sparse(path, dups=True)
    _write(path, np.arange(100), 1)
    _write(path, [5], 2, {"a": np.array([1000], dtype=np.int32)})
    result = _check(str(path), "a < 50")
    assert result.stats["tiles_after_zonemap"] == 1


def test_nan_in_tile_is_not_trusted(tmp_path):
    path = tmp_path / "nan"
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 99), tile=10, dtype=np.int64))
    schema = tiledb.ArraySchema(domain=dom, attrs=[tiledb.Attr("f", dtype=np.float64)],
                                sparse=True, capacity=10)
    tiledb.Array.create(str(path), schema)
    with tiledb.open(str(path), "w", timestamp=1) as arr:
        # TileDB's running min ends at 5.0 here: 1.0 < NaN is false, NaN < 5.0 is false
        arr[np.array([0, 1, 2])] = {"f": np.array([1.0, np.nan, 5.0])}
    result = _check(str(path), "f < 2", fields=["d", "f"])
    assert result.length == 3


# -- dense -----------------------------------------------------------------------------------


def _dense(path, writes):
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 99), tile=10, dtype=np.int64))
    schema = tiledb.ArraySchema(domain=dom, attrs=[tiledb.Attr("a", dtype=np.int32)], sparse=False)
    tiledb.Array.create(str(path), schema)
    for ts, (lo, hi, values) in enumerate(writes, start=1):
        with tiledb.open(str(path), "w", timestamp=ts) as arr:
            arr[lo:hi + 1] = np.asarray(values, dtype=np.int32)


def test_dense_overwrite_never_resurrects(tmp_path):
    path = tmp_path / "dense"
    _dense(path, [(0, 99, np.arange(100)), (0, 9, np.full(10, 1000))])
    result = _check(str(path), "a < 5", fields=["d", "a"])
    assert result.length == 0  # the newer tile (1000s) is NEVER: its cells leave, not revert
    # only the old tile holding 0..9 is read (the newer NEVER tile is not)
    assert result.stats["tiles_after_zonemap"] == 1


def test_dense_newer_matching_value_wins(tmp_path):
    path = tmp_path / "dense2"
    _dense(path, [(0, 99, np.full(100, 1000)), (0, 9, np.arange(10))])
    result = _check(str(path), "a < 5", fields=["d", "a"])
    assert result.stats["tiles_after_zonemap"] == 1


def test_dense_fill_cells_stay(tmp_path):
    path = tmp_path / "dense3"
    _dense(path, [(0, 19, np.arange(20) + 100), (40, 59, np.arange(20) + 200)])
    result = _check(str(path), "a < 0", fields=["d", "a"])  # the fill value INT32_MIN matches
    assert result.stats["tiles_after_zonemap"] == 0
    result = _check(str(path), "a BETWEEN 200 AND 212", fields=["d", "a"])
    assert result.stats["tiles_after_zonemap"] == 2 and result.always is not None


def test_dense_dimension_and_attribute_conjuncts(tmp_path):
    path = tmp_path / "dense4"
    _dense(path, [(0, 99, np.arange(100) * 2)])
    result = _check(str(path), "d >= 15 AND a < 60", fields=["d", "a"])
    assert result.stats["tiles_after_zonemap"] == 2


# -- the zone-map lookup both scans and the metadata aggregates use -----------------------------


def test_stats_getter_narrows_to_listed_tiles(one_fragment):
    """Over some tiles: dimension stats are the bounds given, attribute stats the fragment's
    metadata narrowed to those tiles in their order; over every tile (``tiles`` None): the
    metadata as it is.  Each field's stats are worked out once."""
    array = Array(one_fragment)
    frag, schema = array.fragments[0], array.schema
    kinds = field_kinds(schema)
    cells = cell_counts(frag.metadata)
    mbrs = dict(zip(["d"], leaf_mbrs(frag.metadata)))
    every = stats_getter(frag, schema, kinds, mbrs, cells)
    tiles = np.array([7, 2, 5], dtype=np.int64)
    bounds = {name: (pick_tiles(lows, tiles), pick_tiles(highs, tiles))
              for name, (lows, highs) in mbrs.items()}
    some = stats_getter(frag, schema, kinds, bounds, cells[tiles], tiles)
    assert some("d").mins.tolist() == [700, 200, 500]
    assert some("d").maxes.tolist() == [799, 299, 599]
    assert every("a").mins.tolist() == list(range(0, N, CAPACITY))
    for name in ("a", "f", "s", "t", "n"):
        whole = attribute_stats(frag, kinds[name], True, cells)
        assert _same_stats(every(name), whole)
        part = some(name)
        assert part is some(name)  # cached
        for got, full in zip(vars(part).values(), vars(whole).values()):
            if isinstance(full, np.ndarray):
                assert isinstance(got, np.ndarray) and got.flags.c_contiguous
                np.testing.assert_array_equal(got, full[tiles])  # NaN equals NaN here
            else:
                assert isinstance(got, list) and got == [full[i] for i in tiles]


def _same_stats(x: Stats, y: Stats) -> bool:
    return all(np.array_equal(a, b, equal_nan=np.asarray(a).dtype.kind == "f")
               for a, b in zip(vars(x).values(), vars(y).values()))


# -- the classification against brute force ----------------------------------------------------


def _stats(tiles: list[np.ndarray], dtype) -> Stats:
    mins = np.array([t.min() for t in tiles], dtype=dtype)
    maxes = np.array([t.max() for t in tiles], dtype=dtype)
    wide = np.float64 if np.dtype(dtype).kind == "f" else np.int64
    n = len(tiles)
    return Stats(mins.astype(wide), maxes.astype(wide), np.zeros(n, np.uint64),
                 np.array([len(t) for t in tiles], np.uint64), np.ones(n, np.uint8),
                 np.ones(n, np.uint8))


class _Schema:
    def __init__(self, dtype):
        from tdbsql.datatypes import Datatype

        class F:
            name, cell_val_num, nullable, enumeration_name = "x", 1, False, None
        self.dimensions = []
        f = F()
        f.datatype = Datatype.INT16 if dtype == np.int16 else Datatype.FLOAT64
        self.attributes = [f]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.integers(-50, 50), min_size=1, max_size=6), min_size=1, max_size=5),
       st.sampled_from(["<", "<=", ">", ">=", "=", "<>"]),
       st.one_of(st.integers(-60, 60), st.floats(-60, 60).map(lambda v: round(v, 1))),
       st.booleans())
def test_classes_match_brute_force(values, op, literal, as_float):
    dtype = np.float64 if as_float else np.int16
    tiles = [np.array(v, dtype=dtype) for v in values]
    kinds = field_kinds(_Schema(dtype))
    pred = parse_predicate(_where(f"x {op} {literal}"), kinds)
    assert pred.complete and len(pred.tests) == 1
    classes = classify_test(pred.tests[0], kinds["x"], _stats(tiles, dtype), len(tiles))
    py_op = {"<": lambda a: a < literal, "<=": lambda a: a <= literal,
             ">": lambda a: a > literal, ">=": lambda a: a >= literal,
             "=": lambda a: a == literal, "<>": lambda a: a != literal}[op]
    for tile, cls in zip(tiles, classes):
        truth = [bool(py_op(float(v) if as_float else int(v))) for v in tile]
        if cls == NEVER:
            assert not any(truth)
        elif cls == ALWAYS:
            assert all(truth)
        else:
            assert cls == MAYBE
