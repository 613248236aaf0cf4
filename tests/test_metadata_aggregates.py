"""Aggregates answered from tile metadata equal DuckDB over the same rows; unsound cases fall
back (overlapping fragments, deletes, saturated sums, NaN tiles)."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest
import sqlglot

import tdbsql

from tdbsql.engine.fields import column_to_arrow
from tdbsql.engine.scan import scan
from tdbsql.engine.metadata_residual import answer_from_metadata
from tdbsql.storage.array import Array

tiledb = pytest.importorskip("tiledb")
duckdb = pytest.importorskip("duckdb")

N = 1000
AGGS = [("count_star", None), ("count", "n"), ("sum", "a"), ("sum", "big"), ("sum", "n"),
        ("sum", "f"), ("min", "a"), ("max", "a"), ("min", "f"), ("max", "f"), ("min", "t"),
        ("max", "t"), ("min", "s"), ("max", "s"), ("min", "n"), ("max", "n"), ("min", "d"),
        ("max", "d"), ("count", "d"), ("min", "u")]


def _where(sql):
    return sqlglot.parse_one(f"SELECT * FROM t WHERE {sql}", read="duckdb").args["where"].this


def _schema(dups=False):
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 10**6), tile=1000, dtype=np.int64))
    attrs = [tiledb.Attr("a", dtype=np.int32), tiledb.Attr("big", dtype=np.int64),
             tiledb.Attr("f", dtype=np.float64), tiledb.Attr("n", dtype=np.int64, nullable=True),
             tiledb.Attr("t", dtype="datetime64[D]"), tiledb.Attr("s", dtype="ascii", var=True),
             tiledb.Attr("u", dtype=np.uint64)]
    return tiledb.ArraySchema(domain=dom, attrs=attrs, sparse=True, capacity=100,
                              allows_duplicates=dups)


def _write(path, d, timestamp, shift=0):
    d = np.asarray(d, dtype=np.int64)
    big = np.where(d < 100, 2**62, d * 1_000_003).astype(np.int64)  # tile 0's sum saturates
    data = {"a": (d * 7 - 3000 + shift).astype(np.int32), "big": big,
            "f": (d % 97) / 4.0 - 10.0, "n": d * 3 + shift, "t": (d // 10).astype("datetime64[D]"),
            "s": np.array([f"k{int(x) % 13:02d}" for x in d], dtype=object),
            "u": (d.astype(np.uint64) + np.uint64(2**63))}
    nulls = {"n": ((d % 4 != 0) & ~((d >= 300) & (d < 400))).astype(np.uint8)}  # tile 3: all NULL
    with tiledb.open(str(path), "w", timestamp=timestamp) as arr:
        tiledb.sparse_array._setitem_impl_sparse(arr, d, data, nulls)


@pytest.fixture(scope="module")
def sparse(tmp_path_factory):
    path = tmp_path_factory.mktemp("meta") / "sparse"
    tiledb.Array.create(str(path), _schema())
    _write(path, np.arange(N), 1)
    return str(path)


def _oracle(path, aggs, predicate=None, ranges=None):
    """DuckDB over every row the unpruned scan returns."""
    array = Array(path)
    fields = ["d", "a", "big", "f", "n", "t", "s", "u"]
    result = scan(array, fields, ranges or {})
    rows = pa.table({f: column_to_arrow(array, f, result.columns[f]) for f in fields})
    sql = ", ".join("count(*)" if f == "count_star" else
                    f"{f}({c})" if f != "sum" else f"sum({c})::HUGEINT" if c not in ("f",) else
                    f"sum({c})" for f, c in aggs)
    con = duckdb.connect()
    con.register("rows_tbl", rows)
    where = f" WHERE {predicate}" if predicate else ""
    return list(con.sql(f"SELECT {sql} FROM rows_tbl{where}").fetchall()[0])


def _same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if isinstance(w, float):
            assert g == pytest.approx(w, rel=1e-12), (got, want)
        else:
            assert g == w and type(g) is type(w), (got, want)


def test_whole_array(sparse):
    stats = {}
    got = answer_from_metadata(Array(sparse), {}, None, AGGS, stats)
    _same(got, _oracle(sparse, AGGS))
    # tile 0's sum of big saturated at INT64_MAX in the metadata: that tile is decoded
    assert stats["tiles_from_metadata"] == 9 and stats["tiles_after_zonemap"] == 1
    # every uint64 sum saturates (values past 2**63): nothing left to answer
    assert answer_from_metadata(Array(sparse), {}, None, [("sum", "u")]) is None


def test_count_min_max_all_from_metadata(sparse):
    aggs = [("count_star", None), ("count", "n"), ("min", "a"), ("max", "s"), ("sum", "a")]
    stats = {}
    got = answer_from_metadata(Array(sparse), {}, None, aggs, stats)
    _same(got, _oracle(sparse, aggs))
    assert stats["tiles_from_metadata"] == 10 and stats["tiles_after_zonemap"] == 0
    assert stats["bytes_decoded"] == 0


@pytest.mark.parametrize("predicate, ranges, from_meta", [
    ("d BETWEEN 150 AND 649", {"d": [(150, 649)]}, 4),
    ("d >= 150", {"d": [(150, 10**6)]}, 8),
    ("a >= 0", None, 5),  # a >= 0 from d >= 429: tiles 5..9 are ALWAYS
    ("a >= 0 AND s >= 'k00'", None, 5),
    ("n IS NOT NULL AND d < 100", {"d": [(0, 99)]}, 0),
])
def test_ranges_and_predicates(sparse, predicate, ranges, from_meta):
    aggs = [("count_star", None), ("count", "n"), ("sum", "a"), ("min", "f"), ("max", "t"),
            ("sum", "n"), ("min", "s")]
    stats = {}
    got = answer_from_metadata(Array(sparse), ranges or {}, _where(predicate), aggs, stats)
    if from_meta == 0:
        assert got is None
        return
    _same(got, _oracle(sparse, aggs, predicate, ranges))
    assert stats["tiles_from_metadata"] == from_meta


def test_unsupported_predicate_declines(sparse):
    assert answer_from_metadata(Array(sparse), {}, _where("a + 1 > 0"), [("count_star", None)]) is None
    assert answer_from_metadata(Array(sparse), {}, None, [("sum", "s")]) is None


def test_overlapping_fragments_fall_back(tmp_path):
    path = tmp_path / "over"
    tiledb.Array.create(str(path), _schema())
    _write(path, np.arange(N), 1)
    _write(path, np.arange(0, N, 10), 2, shift=5)  # overlaps every tile: nothing is sound
    assert answer_from_metadata(Array(str(path)), {}, None, [("count_star", None)]) is None
    # a newer fragment far away: the old tiles are isolated again, except where it lands
    path2 = tmp_path / "over2"
    tiledb.Array.create(str(path2), _schema())
    _write(path2, np.arange(N), 1)
    _write(path2, [250, 260], 2, shift=5)
    stats = {}
    aggs = [("count_star", None), ("sum", "a"), ("max", "n"), ("min", "d")]
    got = answer_from_metadata(Array(str(path2)), {}, None, aggs, stats)
    _same(got, _oracle(str(path2), aggs))
    assert stats["tiles_from_metadata"] == 9  # tile 2 of fragment 1 and fragment 2 decoded


def test_duplicates_allowed_counts_every_cell(tmp_path):
    path = tmp_path / "dups"
    tiledb.Array.create(str(path), _schema(dups=True))
    _write(path, np.arange(N), 1)
    _write(path, np.arange(0, N, 10), 2, shift=5)
    stats = {}
    aggs = [("count_star", None), ("sum", "a"), ("min", "n")]
    got = answer_from_metadata(Array(str(path)), {}, None, aggs, stats)
    _same(got, _oracle(str(path), aggs))
    assert stats["tiles_from_metadata"] == 11


def test_deletes_fall_back(tmp_path):
    path = tmp_path / "del"
    tiledb.Array.create(str(path), _schema())
    _write(path, np.arange(N), 1)
    with tiledb.open(str(path), "d", timestamp=2) as arr:
        arr.query(cond="a < 0").submit()
    assert answer_from_metadata(Array(str(path)), {}, None, [("count_star", None)]) is None


def test_nan_tiles_are_decoded(tmp_path):
    path = tmp_path / "nan"
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 99), tile=10, dtype=np.int64))
    tiledb.Array.create(str(path), tiledb.ArraySchema(
        domain=dom, attrs=[tiledb.Attr("f", dtype=np.float64)], sparse=True, capacity=10))
    f = np.arange(20, dtype=np.float64)
    f[4] = np.nan
    with tiledb.open(str(path), "w", timestamp=1) as arr:
        arr[np.arange(20)] = {"f": f}
    stats = {}
    got = answer_from_metadata(Array(str(path)), {}, None,
                               [("min", "f"), ("max", "f"), ("count", "f")], stats)
    assert got[0] == 0.0 and math.isnan(got[1]) and got[2] == 20
    assert stats["tiles_from_metadata"] == 1


def test_dense(tmp_path):
    path = tmp_path / "dense"
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 99), tile=10, dtype=np.int64),
                        tiledb.Dim("y", domain=(0, 19), tile=5, dtype=np.int64))
    tiledb.Array.create(str(path), tiledb.ArraySchema(
        domain=dom, attrs=[tiledb.Attr("a", dtype=np.int32),
                           tiledb.Attr("n", dtype=np.float64, nullable=True)], sparse=False))
    a = (np.arange(100 * 20).reshape(100, 20) - 500).astype(np.int32)
    with tiledb.open(str(path), "w", timestamp=1) as arr:
        arr[0:100, 0:20] = {"a": a, "n": np.arange(2000, dtype=np.float64).reshape(100, 20) / 8}
    with tiledb.open(str(path), "w", timestamp=2) as arr:  # newer: overwrites x 30..34
        arr[30:35, 0:20] = {"a": np.full((5, 20), 7, np.int32), "n": np.ones((5, 20))}
    array = Array(str(path))
    aggs = [("count_star", None), ("sum", "a"), ("min", "a"), ("max", "a"), ("count", "n"),
            ("sum", "n"), ("min", "x"), ("max", "y")]
    for predicate, ranges in [(None, {}), ("x BETWEEN 12 AND 77", {"x": [(12, 77)]}),
                              ("a >= 0 AND y < 15", {"y": [(0, 14)]})]:
        stats = {}
        got = answer_from_metadata(array, ranges, None if predicate is None else _where(predicate),
                                   aggs, stats)
        result = scan(Array(str(path)), ["x", "y", "a", "n"], ranges)
        rows = pa.table({f: column_to_arrow(array, f, result.columns[f]) for f in ["x", "y", "a", "n"]})
        con = duckdb.connect()
        con.register("rows_tbl", rows)
        where = f" WHERE {predicate}" if predicate else ""
        want = list(con.sql("SELECT count(*), sum(a)::HUGEINT, min(a), max(a), count(n), sum(n), "
                            f"min(x), max(y) FROM rows_tbl{where}").fetchall()[0])
        _same(got, want)
        assert stats["tiles_from_metadata"] > 0


def test_enumeration_min_max_compare_labels(tmp_path):
    """Tile min/max of an enumeration attribute are label indices: min/max come from the
    decoded labels (as the ordinary plan orders them), count still from metadata."""
    path = tmp_path / "enum"
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 99), tile=10, dtype=np.int64))
    labels = tiledb.Enumeration("colors", False, ["zebra", "apple", "mango"])
    tiledb.Array.create(str(path), tiledb.ArraySchema(
        domain=dom, attrs=[tiledb.Attr("c", dtype=np.uint8, enum_label="colors")], sparse=True,
        capacity=10, enums=[labels]))
    with tiledb.open(str(path), "w", timestamp=1) as arr:
        arr[np.arange(20)] = {"c": np.array([0, 1, 2, 0] * 5, dtype=np.uint8)}
    assert answer_from_metadata(Array(str(path)), {}, None, [("min", "c"), ("max", "c")]) is None
    assert answer_from_metadata(Array(str(path)), {}, None, [("count", "c")]) == [20]
    got = tdbsql.query("SELECT min(c) AS lo, max(c) AS hi FROM array", str(path)).to_pylist()
    assert got == [{"lo": "apple", "hi": "zebra"}]


def test_min_max_from_metadata_keep_the_column_type(tmp_path):
    """min / max answered from tile metadata have the column's type, as when its tiles are
    read and as in DuckDB (an INTEGER column's min is INTEGER), not BIGINT / DOUBLE."""
    uri = str(tmp_path / "types")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 99), tile=10, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, attrs=[
        tiledb.Attr("k", dtype=np.int32), tiledb.Attr("f", dtype=np.float32),
        tiledb.Attr("u", dtype=np.uint8), tiledb.Attr("i16", dtype=np.int16)]))
    with tiledb.open(uri, "w") as A:
        A[np.arange(20)] = {"k": np.arange(20, dtype=np.int32) - 5,
                            "f": np.arange(20, dtype=np.float32) / 3, "u": np.arange(20, dtype=np.uint8),
                            "i16": np.arange(20, dtype=np.int16) * 7}
    con = tdbsql.connect().register("t", uri)
    sql = "SELECT min(k), max(k), min(f), max(f), min(u), max(u), min(i16), max(i16) FROM t"
    answered = con.sql(sql).arrow()
    assert "answered from metadata" in con.explain(sql, analyze=True)
    scanned = con.sql(sql + " WHERE d % 1 = 0").arrow()  # an expression: the tiles are read
    assert answered.schema.types == scanned.schema.types == [
        pa.int32(), pa.int32(), pa.float32(), pa.float32(), pa.uint8(), pa.uint8(), pa.int16(),
        pa.int16()]
    assert answered.to_pylist()[0].values() and \
        list(answered.to_pylist()[0].values()) == list(scanned.to_pylist()[0].values())
