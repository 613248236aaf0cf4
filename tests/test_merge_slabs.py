"""Merging overlapping fragments slab by slab (``engine.merge_slabs``): every cell falls in one
slab whose tile list holds its tile, results equal ``tiledb``'s, and memory is a slab's tiles."""

from __future__ import annotations

import duckdb
import numpy as np
import pytest
import tiledb
from hypothesis import given, settings
from hypothesis import strategies as st

import tdbsql
from sql_fixtures import assert_same_rows, oracle_table
from tdbsql.engine.memory import MemoryBudget
from tdbsql.engine.merge_slabs import plan_slabs
from tdbsql.engine.scan import open_scan
from tdbsql.engine.sparse_scan import SlabTask
from tdbsql.planner.pruning import Ranges


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(-50, 50), st.integers(0, 30)), min_size=1, max_size=80),
       st.integers(1, 6), st.data())
def test_every_cell_has_exactly_one_slab_holding_its_tile(tiles, per_slab, data):
    lows = np.array([low for low, _ in tiles], np.int64)
    highs = np.array([low + width for low, width in tiles], np.int64)
    slabs = plan_slabs(lows, highs, per_slab)
    for tile, (low, high) in enumerate(zip(lows.tolist(), highs.tolist())):
        cell = data.draw(st.integers(low, high))
        owners = [s for s in slabs if (s.low is None or cell >= s.low)
                  and (s.high is None or cell < s.high)]
        assert len(owners) == 1 and tile in owners[0].tiles
    assert all(a.high == b.low for a, b in zip(slabs, slabs[1:]))  # disjoint, in order


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.binary(max_size=3), st.binary(max_size=3)), min_size=1,
                max_size=60), st.integers(1, 6), st.data())
def test_byte_string_bounds_cut_alike(tiles, per_slab, data):
    """A string first dimension: MBR bounds are byte strings, ordered as TileDB orders them."""
    lows = np.array([min(pair) for pair in tiles], dtype=object)
    highs = np.array([max(pair) for pair in tiles], dtype=object)
    slabs = plan_slabs(lows, highs, per_slab)
    for tile, (low, high) in enumerate(zip(lows, highs)):
        cell = data.draw(st.sampled_from([low, high, low + b"\x00", high[:-1]]))
        if not low <= cell <= high:
            continue
        owners = [s for s in slabs if (s.low is None or cell >= s.low)
                  and (s.high is None or cell < s.high)]
        assert len(owners) == 1 and tile in owners[0].tiles
    assert all(a.high == b.low for a, b in zip(slabs, slabs[1:]))


@pytest.fixture(scope="module")
def layered(tmp_path_factory) -> str:
    """Four writes over overlapping id ranges (updates of earlier cells), small tiles, and a
    delete: reading merges, newest wins."""
    uri = str(tmp_path_factory.mktemp("slabs") / "layered")
    dom = tiledb.Domain(tiledb.Dim("id", domain=(0, 10**6), tile=500, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=100, attrs=[
        tiledb.Attr("g", dtype=np.int32), tiledb.Attr("x", dtype=np.float64),
        tiledb.Attr("s", dtype=str, var=True)]))
    rng = np.random.default_rng(11)
    for ts, (start, stop, step) in enumerate([(0, 20_000, 2), (5_000, 15_000, 1),
                                              (9_000, 30_000, 3), (0, 30_000, 7)], start=1):
        ids = np.arange(start, stop, step, dtype=np.int64)
        with tiledb.open(uri, "w", timestamp=ts) as A:
            A[ids] = {"g": rng.integers(0, 5, len(ids)).astype(np.int32),
                      "x": rng.random(len(ids)) + ts,
                      "s": np.array([f"v{ts}-{i % 13}" for i in ids], dtype=object)}
    with tiledb.open(uri, "d", timestamp=5) as A:
        A.query(cond="g == 3 and x < 2.5").submit()
    return uri


@pytest.fixture(scope="module")
def layered_text(tmp_path_factory) -> str:
    """The same kind of history on a string first dimension (and an integer second one):
    the slabs are cut at byte strings."""
    uri = str(tmp_path_factory.mktemp("slabs") / "layered_text")
    dom = tiledb.Domain(tiledb.Dim("k", dtype="ascii"),
                        tiledb.Dim("n", domain=(0, 99), tile=10, dtype=np.int32))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=64, attrs=[
        tiledb.Attr("g", dtype=np.int32), tiledb.Attr("x", dtype=np.float64)]))
    rng = np.random.default_rng(12)
    for ts, (start, stop, step) in enumerate([(0, 6_000, 1), (1_000, 4_000, 2),
                                              (3_500, 9_000, 3), (0, 9_000, 5)], start=1):
        ids = np.arange(start, stop, step)
        keys = np.array([f"key{i // 7:05d}" + "z" * (i % 3) for i in ids], dtype=object)
        with tiledb.open(uri, "w", timestamp=ts) as A:
            A[keys, (ids % 7).astype(np.int32)] = {
                "g": rng.integers(0, 5, len(ids)).astype(np.int32),
                "x": rng.random(len(ids)) + ts}
    with tiledb.open(uri, "d", timestamp=5) as A:
        A.query(cond="g == 3 and x < 2.5").submit()
    return uri


@pytest.fixture(scope="module")
def oracle(layered):
    con = duckdb.connect()
    con.register("t", oracle_table(layered))
    return con


@pytest.fixture(scope="module")
def oracle_text(layered_text):
    con = duckdb.connect()
    con.register("t", oracle_table(layered_text))
    return con


def test_overlapping_fragments_are_read_in_slabs(layered):
    tasks = open_scan(tdbsql.open(layered), ["id", "x"], Ranges({})).tasks()
    assert len(tasks) > 10 and all(isinstance(t, SlabTask) for t in tasks)


@pytest.mark.parametrize("sql", [
    "SELECT count(*), sum(x), min(x), max(x), count(DISTINCT id) FROM t",
    "SELECT g, count(*), sum(x), max(s) FROM t GROUP BY g ORDER BY g",
    "SELECT id, g, x, s FROM t WHERE id BETWEEN 4990 AND 5020 OR id > 29950 ORDER BY id",
    "SELECT s, count(*) FROM t WHERE x > 3.5 GROUP BY s ORDER BY s",
])
def test_slab_merge_equals_tiledb(layered, oracle, sql):
    got = tdbsql.connect().register("t", layered).sql(sql).fetchall()
    assert_same_rows(got, oracle.sql(sql).fetchall())


def test_slabs_keep_a_merge_within_a_budget_the_whole_merge_exceeds(layered, oracle):
    fields = ["id", "g", "x", "s"]
    whole = open_scan(tdbsql.open(layered), fields, Ranges({}), budget=MemoryBudget(2))
    with pytest.raises(tdbsql.MemoryLimitError, match="merging the overlapping fragments"):
        whole.read(None)  # every tile at once
    sliced = open_scan(tdbsql.open(layered), fields, Ranges({}), budget=MemoryBudget(2))
    assert sum(sliced.read(task).length for task in sliced.tasks()) == \
        oracle.sql("SELECT count(*) FROM t").fetchall()[0][0]
    sql = "SELECT g, count(*), sum(x) FROM t GROUP BY g ORDER BY g"
    got = tdbsql.connect(memory_mb=2).register("t", layered).sql(sql).fetchall()
    assert_same_rows(got, oracle.sql(sql).fetchall())



def test_explain_analyze_counts_the_slabs(layered):
    text = tdbsql.explain("SELECT count(*) FROM array", layered, analyze=True)
    tasks = open_scan(tdbsql.open(layered), ["x"], Ranges({})).tasks()
    assert f"newest-wins merge in {len(tasks)} slabs" in text, text


def test_a_string_first_dimension_is_merged_in_slabs(layered_text, oracle_text):
    tasks = open_scan(tdbsql.open(layered_text), ["k", "x"], Ranges({})).tasks()
    assert len(tasks) > 10 and all(isinstance(t, SlabTask) for t in tasks)
    assert all(isinstance(t.low, bytes) for t in tasks[1:])
    fields = ["k", "n", "g", "x"]
    whole = open_scan(tdbsql.open(layered_text), fields, Ranges({}), budget=MemoryBudget(1))
    with pytest.raises(tdbsql.MemoryLimitError, match="merging the overlapping fragments"):
        whole.read(None)
    sliced = open_scan(tdbsql.open(layered_text), fields, Ranges({}), budget=MemoryBudget(1))
    assert sum(sliced.read(task).length for task in sliced.tasks()) == \
        oracle_text.sql("SELECT count(*) FROM t").fetchall()[0][0]


@pytest.mark.parametrize("sql", [
    "SELECT count(*), sum(x), min(k), max(k), count(DISTINCT k) FROM t",
    "SELECT g, count(*), sum(x), max(k) FROM t GROUP BY g ORDER BY g",
    "SELECT k, n, g, x FROM t WHERE k BETWEEN 'key00300' AND 'key00302z' OR k > 'key01284' "
    "ORDER BY k, n",
    "SELECT k, sum(x) FROM t WHERE x > 3.5 GROUP BY k ORDER BY 2 DESC, k LIMIT 20",
])
@pytest.mark.parametrize("memory_mb", [None, 1])
def test_string_slab_merge_equals_tiledb(layered_text, oracle_text, sql, memory_mb):
    options = {} if memory_mb is None else {"memory_mb": memory_mb}
    got = tdbsql.connect(**options).register("t", layered_text).sql(sql).fetchall()
    assert_same_rows(got, oracle_text.sql(sql).fetchall())
