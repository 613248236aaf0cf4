"""Aggregates and array scans joined on a key and run inside the join for the keys joined so
far (``engine.deferred_inputs``, ``engine.key_filter``), and correlated EXISTS with an inequality
answered from per-key MIN/MAX (``planner.exists_bounds``): results against DuckDB over the
same rows, the deferral seen in EXPLAIN ANALYZE, and the key filter against a semi hash join.
"""

from __future__ import annotations

import duckdb
import numpy as np
import pyarrow as pa
import pytest
import tiledb
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tdbsql
from sql_fixtures import assert_same_rows, oracle_table
from tdbsql.engine.hash_join import hash_join
from tdbsql.engine.key_filter import PRESENCE_MAX, KeyFilter

DEFERRED = "Keys from the join"


def _array(uri: str, rows: int, seed: int, capacity: int) -> str:
    rng = np.random.default_rng(seed)
    dom = tiledb.Domain(tiledb.Dim("id", domain=(1, 10_000), tile=100, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=capacity,
                                                attrs=[
        tiledb.Attr("k", dtype=np.int64, nullable=True),
        tiledb.Attr("k32", dtype=np.int32),
        tiledb.Attr("wide", dtype=np.int64),  # keys far apart: no presence table
        tiledb.Attr("s", dtype=str, var=True, nullable=True),
        tiledb.Attr("v", dtype=np.float64, nullable=True),
    ]))
    keys = rng.integers(0, 40, rows)
    null = rng.random((3, rows)) < 0.08
    with tiledb.open(uri, "w") as A:
        A[np.arange(1, rows + 1, dtype=np.int64)] = {
            "k": pa.array(keys, pa.int64(), mask=null[0]),
            "k32": keys.astype(np.int32),
            "wide": keys * (PRESENCE_MAX * 4) - 2**40,
            "s": pa.array([f"s{k % 13}" for k in keys], pa.string(), mask=null[1]),
            "v": pa.array(rng.integers(-20, 20, rows) / 4.0, pa.float64(), mask=null[2]),
        }
    return uri


@pytest.fixture(scope="module")
def engines(tmp_path_factory):
    root = tmp_path_factory.mktemp("deferred")
    outer = _array(str(root / "outer"), 60, 3, 16)
    inner = _array(str(root / "inner"), 900, 4, 32)  # 29 tiles: many batches
    con, oracle = tdbsql.connect(), duckdb.connect()
    for name, path in (("o", outer), ("i", inner)):
        con.register(name, path)
        oracle.register(name, oracle_table(path))
    return con, oracle


# (query, whether an aggregate must run inside its join)
QUERIES = [
    # TPC-H Q17's shape: a scalar subquery per key
    ("SELECT o.id, o.v FROM o WHERE o.v < (SELECT avg(i.v) FROM i WHERE i.k = o.k) "
     "ORDER BY o.id", True),
    ("SELECT o.id FROM o WHERE o.v > (SELECT 0.5 * sum(i.v) FROM i WHERE i.k32 = o.k32) "
     "ORDER BY o.id", True),
    # an int32 key against an int64 one, and keys too far apart for a presence table
    ("SELECT o.id, (SELECT count(*) FROM i WHERE i.k32 = o.k) AS n FROM o WHERE o.id < 30 "
     "ORDER BY o.id", True),
    ("SELECT o.id FROM o WHERE o.v <= (SELECT max(i.v) FROM i WHERE i.wide = o.wide) "
     "ORDER BY o.id", True),
    # strings: the semi hash join
    ("SELECT o.id FROM o WHERE o.v < (SELECT avg(i.v) FROM i WHERE i.s = o.s) ORDER BY o.id",
     True),
    # an explicit LEFT JOIN keeps the outer rows that match no group
    ("SELECT o.id, a.n, a.t FROM o LEFT JOIN (SELECT k, count(*) AS n, sum(v) AS t FROM i "
     "WHERE id > 450 GROUP BY k) a ON a.k = o.k ORDER BY o.id", True),
    # with HAVING: joined early as it is (few groups filter the other joins)
    ("SELECT o.id, a.n FROM o JOIN (SELECT k, count(*) AS n FROM i GROUP BY k HAVING "
     "count(*) > 22) a ON a.k = o.k WHERE o.id % 3 = 0 ORDER BY o.id", False),
    ("SELECT o.id FROM o WHERE o.k IN (SELECT k FROM i GROUP BY k HAVING sum(v) > 0) "
     "ORDER BY o.id", False),
    ("SELECT o.id FROM o WHERE o.k IN (SELECT k FROM i GROUP BY k) ORDER BY o.id", True),
    # TPC-H Q21's shape: EXISTS / NOT EXISTS with an inequality on the same key
    ("SELECT o.id FROM o WHERE EXISTS (SELECT * FROM i WHERE i.k = o.k AND i.k32 <> o.k32 + 1) "
     "ORDER BY o.id", True),
    ("SELECT o.id FROM o WHERE NOT EXISTS (SELECT * FROM i WHERE i.k = o.k AND i.v > o.v) "
     "ORDER BY o.id", True),
    ("SELECT o.id, EXISTS (SELECT * FROM i WHERE i.k = o.k AND i.s < o.s) AS e FROM o "
     "ORDER BY o.id", True),
    ("SELECT o.id FROM o WHERE EXISTS (SELECT * FROM i WHERE i.k = o.k AND o.v >= i.v) AND "
     "NOT EXISTS (SELECT * FROM i WHERE i.k = o.k AND i.s <> o.s AND i.v > 1) ORDER BY o.id",
     True),
]


@pytest.mark.parametrize("sql, deferred", QUERIES, ids=range(len(QUERIES)))
def test_same_rows_as_duckdb(engines, sql, deferred):
    con, oracle = engines
    assert_same_rows(con.sql(sql).fetchall(), oracle.sql(sql).fetchall())
    if deferred is not None:
        assert (DEFERRED in con.explain(sql, analyze=True)) is deferred


# a plain array joined on an integer column: read inside the join, only the joined keys' cells
SCANS = [
    ("SELECT o.id, i.id, i.v FROM o JOIN i ON i.k = o.k WHERE o.id < 10 ORDER BY 1, 2", True),
    ("SELECT o.id, i.id FROM o LEFT JOIN i ON i.k32 = o.k32 AND i.v > 0 WHERE o.id < 8 "
     "ORDER BY 1, 2", True),
    ("SELECT o.id, count(i.id) FROM o JOIN i ON i.k = o.k AND i.v < 2 AND i.id > 100 "
     "WHERE o.v > 3 GROUP BY o.id ORDER BY 1", True),
    # keys too far apart for a presence table: not tested (the join matches them anyway)
    ("SELECT o.id, i.id FROM o JOIN i ON i.wide = o.wide WHERE o.id < 6 ORDER BY 1, 2", False),
    ("SELECT o.id, i.id, i2.id FROM o JOIN i ON i.k = o.k JOIN i AS i2 ON i2.k32 = i.k32 "
     "AND i2.id < 40 WHERE o.id < 4 ORDER BY 1, 2, 3", True),
    # not deferred: a string key, and a RIGHT join (its unmatched rows are kept)
    ("SELECT o.id, i.id FROM o JOIN i ON i.s = o.s WHERE o.id < 5 ORDER BY 1, 2", False),
    ("SELECT o.id, i.id FROM o RIGHT JOIN i ON i.k = o.k AND o.id < 5 ORDER BY 1, 2", False),
]


@pytest.mark.parametrize("sql, deferred", SCANS, ids=range(len(SCANS)))
def test_deferred_scans(engines, monkeypatch, sql, deferred):
    from tdbsql.engine import deferred_inputs

    monkeypatch.setattr(deferred_inputs, "SCANNED_CELLS_MIN", 0)  # the test arrays are small
    con, oracle = engines
    assert_same_rows(con.sql(sql).fetchall(), oracle.sql(sql).fetchall())
    assert (DEFERRED in con.explain(sql, analyze=True)) is deferred


# the big array first in FROM: the join starts from the small input and reads the source for
# its keys (SCANNED_CELLS_MIN between the two arrays' sizes: only i is big)
SOURCES = [
    ("SELECT * FROM i, o WHERE i.k = o.k AND o.id < 4 ORDER BY i.id, o.id", True),
    ("SELECT i.id, o.id FROM i JOIN o ON i.k = o.k WHERE o.id < 4 ORDER BY 1, 2", True),
    ("SELECT i.id, o.id, i.v + o.v FROM i, o WHERE i.k32 = o.k32 AND o.v > 3 ORDER BY 1, 2",
     True),
    ("SELECT count(*), sum(i.v) FROM i JOIN o ON i.k = o.k WHERE o.id < 9 AND i.v > 0", True),
    # an ON condition beyond the keys only drops pairs whose keys match (TPC-H Q19)
    ("SELECT count(*), sum(i.v) FROM i JOIN o ON i.k = o.k AND i.v < o.v WHERE o.id < 9",
     True),
    ("SELECT i.id, o.id FROM i JOIN o ON i.k = o.k AND (i.v > 1 OR o.v < 0) WHERE o.id < 9 "
     "ORDER BY 1, 2", True),
    # every key of o: not worth testing, the join runs as written
    ("SELECT count(*) FROM i JOIN o ON i.k = o.k", False),
    # an outer join, a string key: as written
    ("SELECT i.id, o.id FROM i LEFT JOIN o ON i.k = o.k AND o.id < 4 ORDER BY 1, 2", False),
    ("SELECT i.id, o.id FROM i JOIN o ON i.s = o.s WHERE o.id < 3 ORDER BY 1, 2", False),
]


@pytest.mark.parametrize("sql, deferred", SOURCES, ids=range(len(SOURCES)))
def test_deferred_sources(engines, monkeypatch, sql, deferred):
    from tdbsql.engine import deferred_inputs

    monkeypatch.setattr(deferred_inputs, "SCANNED_CELLS_MIN", 100)  # o: 60 cells, i: 900
    con, oracle = engines
    got, want = con.sql(sql), oracle.sql(sql)
    assert got.arrow().column_names == list(want.columns)
    assert_same_rows(got.fetchall(), want.fetchall())
    text = con.explain(sql, analyze=True)
    assert (DEFERRED in text) is deferred
    if deferred:
        order = next(line for line in text.splitlines() if "Joined in this order" in line)
        assert order.split(": ", 1)[1].startswith("o (")


# a small unique input that joins into another input first, and the keys that input's array
# is read for: (query, the input joined first, the SQL counting the keys)
JOINED_FIRST = [
    # TPC-H Q18's shape: i is planned to be read for o's keys on k, but the few ids of s
    # (unique: grouped) key on i.id, so i is read for those and s joins into it first
    ("SELECT o.id, i.id, i.v FROM o JOIN i ON i.k = o.k JOIN (SELECT id FROM i WHERE v > 4.5 "
     "GROUP BY id HAVING count(*) = 1) s ON s.id = i.id ORDER BY 1, 2", "s into i",
     "SELECT count(*) FROM i WHERE v > 4.5"),
    # TPC-H Q11's shape: o's 60 ids cover i.k's values, so they are not worth testing; f
    # (unique, keyed on o's column) joins into o first, and i is read for the few ids left
    ("SELECT i.id, o.id, i.v FROM i JOIN o ON i.k = o.id JOIN (SELECT k32 AS g FROM o "
     "GROUP BY k32 HAVING k32 < 5) f ON o.k = f.g ORDER BY 1, 2", "f into o",
     "SELECT count(*) FROM o WHERE k < 5"),
]


@pytest.mark.parametrize("sql, joined, keys_sql", JOINED_FIRST, ids=["q18", "q11"])
def test_small_unique_input_joins_first_and_narrows_the_keys(engines, monkeypatch, sql, joined,
                                                             keys_sql):
    from tdbsql.engine import deferred_inputs

    monkeypatch.setattr(deferred_inputs, "SCANNED_CELLS_MIN", 100)  # o: 60 cells, i: 900
    con, oracle = engines
    assert_same_rows(con.sql(sql).fetchall(), oracle.sql(sql).fetchall())
    text = con.explain(sql, analyze=True)
    keys = oracle.sql(keys_sql).fetchall()[0][0]
    assert joined in text
    assert f"{DEFERRED}: {keys:,}" in text


def test_a_partner_of_most_values_reads_the_source_whole(engines, monkeypatch):
    from tdbsql.engine import deferred_inputs

    monkeypatch.setattr(deferred_inputs, "SCANNED_CELLS_MIN", 100)  # o: 60 cells, i: 900
    con, oracle = engines
    # o's ids are most of i.k's values: i is read whole
    plain = "SELECT i.id, o.id FROM i JOIN o ON i.k = o.id ORDER BY 1, 2"
    assert_same_rows(con.sql(plain).fetchall(), oracle.sql(plain).fetchall())
    assert DEFERRED not in con.explain(plain, analyze=True)


def test_many_joined_keys_read_every_cell(engines, monkeypatch):
    """As many joined rows as cells, nearly: the keys are not worth testing."""
    from tdbsql.engine import deferred_inputs

    monkeypatch.setattr(deferred_inputs, "SCANNED_CELLS_MIN", 0)
    monkeypatch.setattr(deferred_inputs, "KEYS_PER_CELL_MAX", 1000)
    con, oracle = engines
    sql = "SELECT o.id, i.id FROM o JOIN i ON i.k = o.k ORDER BY 1, 2"
    assert_same_rows(con.sql(sql).fetchall(), oracle.sql(sql).fetchall())
    assert DEFERRED not in con.explain(sql, analyze=True)


def test_repeated_joined_keys_are_counted_distinct(engines, monkeypatch):
    """300 joined rows for i's 900 cells are too many to test, but they hold 40 keys: the
    distinct keys decide (TPC-H Q9: 319K lineitem rows, 10,664 part keys, partsupp's 800K
    cells)."""
    from tdbsql.engine import deferred_inputs

    monkeypatch.setattr(deferred_inputs, "SCANNED_CELLS_MIN", 0)
    con, oracle = engines
    sql = ("SELECT a.id, b.id, b.v FROM i AS a JOIN i AS b ON b.id = a.k WHERE a.id <= 300 "
           "ORDER BY 1")
    assert_same_rows(con.sql(sql).fetchall(), oracle.sql(sql).fetchall())
    plan = con.explain(sql, analyze=True)
    assert f"{DEFERRED}: 40" in plan and "rows=39 " in plan


def test_deferred_aggregate_reads_only_joined_keys(engines):
    con, _ = engines
    sql = "SELECT o.id FROM o WHERE o.id < 5 AND o.v < (SELECT avg(i.v) FROM i WHERE i.k = o.k)"
    text = con.explain(sql, analyze=True)
    line = next(line for line in text.splitlines() if DEFERRED in line)
    keys = len({k for (k,) in con.sql("SELECT k FROM o WHERE id < 5 AND k IS NOT NULL")
                .fetchall()})
    assert line.strip() == f"{DEFERRED}: {keys:,}"


def _scanned_rows(text: str, alias: str) -> int:
    line = next(line for line in text.splitlines() if f"Scan {alias}: " in line)
    return int(line.split("[rows=")[1].split()[0].replace(",", ""))


@pytest.mark.parametrize("column, in_scan", [("k", True), ("k32", True), ("s", False)])
def test_deferred_aggregate_tests_keys_in_the_scan(engines, column, in_scan):
    """An integer group key with a presence table is tested on each tile's stored column,
    before any row is built: the scan passes on only the joined keys' rows.  Other keys are
    tested on the batches' rows."""
    con, oracle = engines
    sql = (f"SELECT o.id FROM o WHERE o.id < 5 AND o.v < (SELECT avg(i.v) FROM i "
           f"WHERE i.{column} = o.{column}) ORDER BY o.id")
    assert_same_rows(con.sql(sql).fetchall(), oracle.sql(sql).fetchall())
    keyed = oracle.sql(f"SELECT count(*) FROM i WHERE {column} IN (SELECT {column} FROM o "
                       f"WHERE id < 5)").fetchall()[0][0]
    scanned = _scanned_rows(con.explain(sql, analyze=True), "i")
    assert scanned == (keyed if in_scan else 900)


def test_exists_with_inequality_skips_lists(engines):
    """The per-key lists sqlglot builds for such an EXISTS become MIN/MAX/COUNT."""
    con, _ = engines
    text = con.explain("SELECT o.id FROM o WHERE EXISTS (SELECT * FROM i WHERE i.k = o.k AND "
                       "i.v <> o.v)")
    assert "ARRAY_AGG" not in text and "MIN(" in text and "MAX(" in text


_KEY_TYPES = [pa.int8(), pa.int32(), pa.int64(), pa.uint32(), pa.uint64(), pa.float64(),
              pa.string()]


@st.composite
def _key_columns(draw):
    key_type = draw(st.sampled_from(_KEY_TYPES))
    wide = draw(st.booleans())
    if pa.types.is_string(key_type):
        values = st.text(alphabet="ab", max_size=2)
    elif pa.types.is_floating(key_type):
        values = st.sampled_from([0.0, -0.0, 1.5, 2.0, float("nan"), float("inf")])
    else:
        low = 0 if pa.types.is_unsigned_integer(key_type) else -4
        high = 2**key_type.bit_width // (1 if pa.types.is_unsigned_integer(key_type) else 2) - 1
        values = st.integers(low, high if wide else 9)
    column = draw(st.lists(st.none() | values, max_size=40))
    keys = draw(st.lists(values, max_size=8, unique_by=lambda v: (type(v), repr(v))))
    probe_type = pa.int64() if key_type in (pa.int8(), pa.int32()) and draw(st.booleans()) \
        else key_type
    return pa.array(column, probe_type), pa.array(keys, key_type).unique()


@settings(max_examples=150, derandomize=True, deadline=None)
@given(_key_columns())
def test_key_filter_is_a_semi_join(case):
    column, keys = case
    want = hash_join([column], [keys], "semi")[0]
    np.testing.assert_array_equal(KeyFilter(keys).rows(column), want)


@settings(max_examples=120, derandomize=True, deadline=None)
@given(_key_columns())
def test_keys_of_repeated_values_are_their_distinct_values(case):
    """``KeyFilter.of_values`` (repeats and NULLs marked straight into the bitmap) against a
    filter of ``pc.unique``: the same count, keys and rows kept."""
    column, keys = case
    repeated = pa.concat_arrays([keys, pa.nulls(2, keys.type), keys.slice(0, 3)])
    found, want = KeyFilter.of_values(repeated), KeyFilter(keys.drop_null())
    assert len(found) == len(want) and found.keys.type == keys.type
    assert sorted(map(repr, found.keys.to_pylist())) == sorted(map(repr, want.keys.to_pylist()))
    if want.present is not None:
        np.testing.assert_array_equal(found.sorted_values, want.sorted_values)
    np.testing.assert_array_equal(found.rows(column), want.rows(column))


# -- differential: random joins over arrays, every join input deferred where it can be -------

@pytest.fixture(scope="module")
def array_engines(tmp_path_factory):
    """The join-order differential test's tables, as arrays (a row-id dimension)."""
    from test_join_order_differential import _tables

    root = tmp_path_factory.mktemp("deferred_differential")
    con, oracle = tdbsql.connect(), duckdb.connect()
    for name, table in _tables().items():
        path = str(root / name)
        tdbsql.create(path, tdbsql.Schema(
            dims=(tdbsql.Dim("rid", "int64", (0, 9999), 16),),
            attrs=(tdbsql.Attr("u", "int64"), tdbsql.Attr("k", "int64"),
                   tdbsql.Attr("v", "int64"), tdbsql.Attr("s", "str", nullable=True)),
            capacity=8))
        tdbsql.write(path, {"rid": np.arange(table.num_rows, dtype=np.int64),
                            **{c: table[c] for c in table.column_names}})
        con.register(name, path)
        oracle.register(name, table)
    return con, oracle


@st.composite
def _correlated(draw):
    """A correlated scalar / EXISTS / NOT EXISTS subquery over two of the tables, or a scalar
    over a join of two."""
    from test_join_order_differential import TABLES

    outer, inner, third = draw(st.lists(st.sampled_from(TABLES), min_size=3, max_size=3,
                                        unique=True))
    key = draw(st.sampled_from(["k", "u"]))
    op = draw(st.sampled_from(["<", "<=", ">", ">=", "<>"]))
    test = draw(st.sampled_from([
        # an aggregate over a join (TPC-H Q2's subquery)
        f"{outer}.v {op} (SELECT min({inner}.v) FROM {inner}, {third} WHERE {inner}.{key} = "
        f"{outer}.k AND {third}.u = {inner}.k AND {third}.v {op} {inner}.v)",
        f"{outer}.v {op} (SELECT count(*) FROM {inner} JOIN {third} ON {third}.k = "
        f"{inner}.u WHERE {inner}.{key} = {outer}.k)",
        f"{outer}.v {op} (SELECT avg({inner}.v) FROM {inner} WHERE {inner}.{key} = "
        f"{outer}.k)",
        f"EXISTS (SELECT * FROM {inner} WHERE {inner}.{key} = {outer}.k AND "
        f"{inner}.v {op} {outer}.v)",
        f"NOT EXISTS (SELECT * FROM {inner} WHERE {inner}.{key} = {outer}.k AND "
        f"{inner}.s {op} {outer}.s)",
    ]))
    return f"SELECT count(*), sum({outer}.v) FROM {outer} WHERE {test}"


@settings(max_examples=200, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(sql=st.data())
def test_deferred_joins_give_duckdbs_rows(array_engines, monkeypatch, sql):
    from test_join_order_differential import _same_as_duckdb, explicit_joins, queries
    from tdbsql.engine import deferred_inputs

    monkeypatch.setattr(deferred_inputs, "SCANNED_CELLS_MIN", 0)  # defer every array scan
    monkeypatch.setattr(deferred_inputs, "KEYS_PER_CELL_MAX", 0)  # and always test the keys
    con, oracle = array_engines
    _same_as_duckdb(con, oracle, sql.draw(st.one_of(queries(), explicit_joins(),
                                                    _correlated())))


def test_explain_analyze_shows_the_join_order_that_ran(array_engines, monkeypatch):
    """The deferred t3 scan runs after the joins whose keys are ready, not where planned."""
    from tdbsql.engine import deferred_inputs

    monkeypatch.setattr(deferred_inputs, "SCANNED_CELLS_MIN", 0)
    con, _ = array_engines
    text = con.explain("SELECT count(*) FROM t1 JOIN t3 ON t3.k = t1.k JOIN t2 ON t2.u = t1.u",
                       analyze=True)
    line = next(line.strip() for line in text.splitlines() if "Joined in this order" in line)
    rows = con.sql("SELECT count(*) FROM t1 JOIN t3 ON t3.k = t1.k JOIN t2 ON t2.u = t1.u"
                   ).fetchall()[0][0]
    assert line.startswith("Joined in this order: t2 (") and f"t3 ({rows:,} rows)" in line


# -- what must not be deferred, or deferred without changing an answer (review findings) ------

def test_a_window_over_the_joined_rows_is_not_cut_short(engines, monkeypatch):
    """A window function in the CTE counts every row: the key test must not run below it."""
    from tdbsql.engine import deferred_inputs

    monkeypatch.setattr(deferred_inputs, "SCANNED_CELLS_MIN", 0)
    con, oracle = engines
    for sql in ("WITH w AS (SELECT id, k, row_number() OVER (ORDER BY id) AS rn, count(*) "
                "OVER () AS n FROM i) SELECT o.id, w.id, w.rn, w.n FROM o JOIN w ON w.k = o.k "
                "WHERE o.id < 6 ORDER BY 1, 2",
                "WITH w AS (SELECT id, k FROM i QUALIFY row_number() OVER (PARTITION BY k "
                "ORDER BY id) = 2) SELECT o.id, w.id FROM o JOIN w ON w.k = o.k ORDER BY 1, 2"):
        assert_same_rows(con.sql(sql).fetchall(), oracle.sql(sql).fetchall())
        assert DEFERRED not in con.explain(sql, analyze=True)


def test_enumeration_labels_are_not_tested_as_stored_indices(tmp_path, monkeypatch):
    """An enumerated attribute stores label indices: its keys are the labels."""
    from tdbsql.engine import deferred_inputs

    monkeypatch.setattr(deferred_inputs, "SCANNED_CELLS_MIN", 0)
    big, small = str(tmp_path / "big"), str(tmp_path / "small")
    dom = tiledb.Domain(tiledb.Dim("id", domain=(0, 9999), tile=100, dtype=np.int64))
    tiledb.Array.create(big, tiledb.ArraySchema(
        domain=dom, sparse=True, capacity=50,
        enums=[tiledb.Enumeration("e", False, np.arange(40, dtype=np.int64) + 1000)],
        attrs=[tiledb.Attr("k", dtype=np.uint16, enum_label="e")]))
    labels = np.random.default_rng(2).integers(0, 40, 900).astype(np.uint16)
    with tiledb.open(big, "w") as A:
        A[np.arange(900, dtype=np.int64)] = {"k": labels}
    tiledb.Array.create(small, tiledb.ArraySchema(domain=dom, sparse=True, attrs=[
        tiledb.Attr("k", dtype=np.int64)]))
    with tiledb.open(small, "w") as A:
        A[np.arange(2, dtype=np.int64)] = {"k": np.array([1000, 1001])}
    con = tdbsql.connect().register("big", big).register("small", small)
    sql = "SELECT s.k, count(*) FROM small s JOIN big b ON b.k = s.k GROUP BY s.k ORDER BY 1"
    assert con.sql(sql).fetchall() == [(1000, int((labels == 0).sum())),
                                       (1001, int((labels == 1).sum()))]


def test_outer_joins_after_a_join_without_rows(engines):
    con, oracle = engines
    for sql in ("SELECT o.id, i.id, i2.id FROM o JOIN i ON i.k = o.k AND o.id < 0 "
                "RIGHT JOIN i AS i2 ON i2.k = o.k WHERE i2.id < 20 ORDER BY 3",
                "SELECT o.id, i.id, i2.id FROM o JOIN i ON i.k = o.k AND o.id < 0 "
                "FULL JOIN i AS i2 ON i2.k = o.k WHERE i2.id < 20 ORDER BY 3"):
        assert_same_rows(con.sql(sql).fetchall(), oracle.sql(sql).fetchall())


def test_exists_comparing_two_type_families_keeps_its_lists(engines):
    """MIN/MAX of strings order bytewise, but a string compared with a number compares as
    numbers row by row: no MIN/MAX rewrite there."""
    con, _ = engines
    text = con.explain("SELECT o.id FROM o WHERE EXISTS (SELECT * FROM i WHERE i.k = o.k AND "
                       "i.s > o.k32)")
    assert "ARRAY_AGG" in text


def _grouped_array(uri: str, overwrite: bool) -> str:
    """Cells 1..2000 in tiles of 50 whose ``g`` (= id // 50) is one value a tile; with
    ``overwrite``, a second fragment gives ids 1..49 the key 999 (no join key)."""
    dom = tiledb.Domain(tiledb.Dim("id", domain=(1, 10_000), tile=2000, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=50, attrs=[
        tiledb.Attr("g", dtype=np.int64), tiledb.Attr("v", dtype=np.float64)]))
    ids = np.arange(1, 2001, dtype=np.int64)
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[ids] = {"g": ids // 50, "v": (ids % 7) / 2.0}
    if overwrite:
        with tiledb.open(uri, "w", timestamp=2) as A:
            A[ids[:49]] = {"g": np.full(49, 999), "v": np.zeros(49)}
    return uri


@pytest.mark.parametrize("overwrite", [False, True])
def test_tiles_without_a_join_key_in_their_bounds_are_not_read(tmp_path, monkeypatch,
                                                                overwrite):
    """A scan read for a join's keys skips tiles whose bounds on the key column (the MBRs
    for a dimension, the zone map for an attribute) hold no key; a newer tile that hides
    older cells is read all the same, or the older cells would come back."""
    from tdbsql.engine import deferred_inputs

    monkeypatch.setattr(deferred_inputs, "SCANNED_CELLS_MIN", 100)
    big = _grouped_array(str(tmp_path / "big"), overwrite)
    small = _array(str(tmp_path / "small"), 60, 5, 16)
    con, oracle = tdbsql.connect(), duckdb.connect()
    for name, path in (("b", big), ("s", small)):
        con.register(name, path)
        oracle.register(name, oracle_table(path))
    for sql, column in (
            ("SELECT b.id, s.id, b.v FROM b, s WHERE b.g = s.k32 AND s.id < 6 ORDER BY 1, 2",
             "g"),
            ("SELECT b.id, b.v, s.id FROM b, s WHERE b.id = s.k32 + 10 AND s.id < 9 "
             "ORDER BY 1, 3", "id")):
        assert_same_rows(con.sql(sql).fetchall(), oracle.sql(sql).fetchall())
        text = con.explain(sql, analyze=True)
        if not overwrite:  # one fragment: read tile by tile, the keys' tiles only
            funnels = [line for line in text.splitlines() if "Tiles:" in line]
            assert len(funnels) == 2 and sum("(join keys)" in f for f in funnels) == 1, text
            funnel = next(line for line in funnels if "(join keys)" in line)
            kept = int(funnel.split("->")[3].split("(")[0])
            assert 0 < kept < 40, (column, funnel)


def test_a_filtered_partner_is_read_first_and_the_source_for_its_keys(engines, monkeypatch):
    """Both inputs are arrays a join could read for the other's keys: the filtered one (i)
    is read first and the unfiltered source (o) for its keys (TPC-H Q12: lineitem's 31K
    rows, then orders for those, not all 1.5M orders hashed)."""
    from tdbsql.engine import deferred_inputs

    monkeypatch.setattr(deferred_inputs, "SCANNED_CELLS_MIN", 0)
    monkeypatch.setattr(deferred_inputs, "PARTNER_FIRST_CELLS_MIN", 0)
    monkeypatch.setattr(deferred_inputs, "KEYS_PER_CELL_MAX", 1)  # o has 60 cells only
    con, oracle = engines
    sql = ("SELECT o.id, i.id, o.v + i.v FROM o, i WHERE o.k32 = i.k32 AND i.v > 4.5 "
           "AND i.id > 100 ORDER BY 1, 2")
    assert_same_rows(con.sql(sql).fetchall(), oracle.sql(sql).fetchall())
    text = con.explain(sql, analyze=True)
    order = next(line for line in text.splitlines() if "Joined in this order" in line)
    assert order.split(": ", 1)[1].startswith("i ("), text
    # unfiltered on both sides: as planned, the source first
    sql = "SELECT o.id, i.id FROM o, i WHERE o.k32 = i.k32 AND o.id < 3 ORDER BY 1, 2"
    assert_same_rows(con.sql(sql).fetchall(), oracle.sql(sql).fetchall())


def _keyed_scan(con, sql: str) -> str:
    """The array whose scan was read for the join's keys."""
    lines = con.explain(sql, analyze=True).splitlines()
    at = next(n for n, line in enumerate(lines) if DEFERRED in line)
    scan = next(line for line in reversed(lines[:at]) if line.strip().startswith("Scan "))
    return scan.split('AS "')[1].split('"')[0]


def test_both_filtered_the_far_smaller_partner_is_read_first(engines, monkeypatch):
    """TPC-H Q19's shape: both arrays filtered, the partner (o, 60 cells) far smaller than
    the source (i, 900): o is read first and i for its keys -- unless the source is under
    PARTNER_FIRST_CELLS_MIN, when the source is read first (Q5's customer) as planned."""
    from tdbsql.engine import deferred_inputs

    monkeypatch.setattr(deferred_inputs, "SCANNED_CELLS_MIN", 0)
    monkeypatch.setattr(deferred_inputs, "PARTNER_FIRST_CELLS_MIN", 0)
    con, oracle = engines
    sql = ("SELECT i.id, o.id FROM i, o WHERE i.k32 = o.k32 AND i.v > 0 AND o.v > 4 "
           "ORDER BY 1, 2")
    assert_same_rows(con.sql(sql).fetchall(), oracle.sql(sql).fetchall())
    assert _keyed_scan(con, sql) == "i"
    monkeypatch.setattr(deferred_inputs, "PARTNER_FIRST_CELLS_MIN", 1000)
    assert_same_rows(con.sql(sql).fetchall(), oracle.sql(sql).fetchall())
    # i is read first; o, planned to be read for i's 400-odd keys, has too few cells
    assert DEFERRED not in con.explain(sql, analyze=True)


@settings(max_examples=80, deadline=None, derandomize=True)
@given(st.lists(st.integers(-2**63, 2**63 - 1) | st.integers(-20, 60), min_size=1, max_size=300),
       st.lists(st.integers(0, 40), max_size=40), st.sampled_from([np.int64, np.int32]))
def test_presence_bitmap_tests_every_value(values, keys, dtype):
    """``kernels.membership`` against ``np.isin``: values below, inside and past the keys'
    span (past it they read the bitmap's spare clear bit), NULLs never kept."""
    from tdbsql.kernels import membership

    raw = np.array(values, np.int64)
    if dtype is np.int32:
        raw = np.clip(raw, -2**31, 2**31 - 1)
    column = raw.astype(dtype)
    found = KeyFilter(pa.array(sorted(set(keys)), pa.int64()))
    keep = np.ones(len(column), bool)
    valid = (np.arange(len(column)) % 5 != 3).astype(np.uint8)
    kept = membership.keep_present(column, valid, found.low, found.size, found.present, keep)
    want = np.isin(raw, np.array(keys, np.int64)) & (valid == 1)
    assert kept == want.sum() and np.array_equal(keep, want)
    rows = np.empty(len(column), np.int64)
    hits = membership.rows_present(column, found.low, found.size, found.present, rows)
    assert np.array_equal(rows[:hits], np.flatnonzero(np.isin(raw, np.array(keys, np.int64))))


# an aggregate over inner joins grouped by a stored integer column of one of the joined arrays
# (TPC-H Q2's subquery): run inside its join, that array read for the joined keys only
OVER_JOINS = [
    # Q2's shape: a correlated scalar over a join
    ("SELECT o.id, o.v FROM o WHERE o.id < 20 AND o.v >= (SELECT min(i.v) FROM i, i AS j "
     "WHERE i.k = o.k AND j.id = i.id + 1 AND j.v > 0) ORDER BY o.id", True),
    # a derived table LEFT joined, grouped by the joined side's column; a residual condition
    ("SELECT o.id, a.n, a.t FROM o LEFT JOIN (SELECT j.k32 AS g, count(*) AS n, sum(i.v) AS t "
     "FROM i JOIN i AS j ON j.id = i.id + 3 WHERE i.v < j.v GROUP BY j.k32) a ON a.g = o.k32 "
     "WHERE o.id < 8 ORDER BY o.id", True),
    # three inputs, a count and an average
    ("SELECT o.id, (SELECT count(*) FROM i, i AS j, i AS m WHERE i.k = o.k AND j.id = i.id "
     "AND m.id = j.id + 1 AND m.k32 > 20) AS n FROM o WHERE o.id < 7 ORDER BY o.id", True),
    # not deferred: a LEFT join inside (its unmatched rows would change), a string key
    ("SELECT o.id, a.n FROM o JOIN (SELECT i.k, count(j.id) AS n FROM i LEFT JOIN i AS j "
     "ON j.id = i.id + 1 AND j.v > 0 GROUP BY i.k) a ON a.k = o.k WHERE o.id < 9 "
     "ORDER BY o.id", False),
    ("SELECT o.id, a.n FROM o JOIN (SELECT i.s, count(*) AS n FROM i JOIN i AS j "
     "ON j.id = i.id + 1 GROUP BY i.s) a ON a.s = o.s WHERE o.id < 9 ORDER BY o.id", False),
]


@pytest.mark.parametrize("sql, deferred", OVER_JOINS, ids=range(len(OVER_JOINS)))
def test_aggregates_over_joins(engines, monkeypatch, sql, deferred):
    from tdbsql.engine import deferred_inputs

    monkeypatch.setattr(deferred_inputs, "SCANNED_CELLS_MIN", 100)  # o: 60 cells, i: 900
    con, oracle = engines
    assert_same_rows(con.sql(sql).fetchall(), oracle.sql(sql).fetchall())
    text = con.explain(sql, analyze=True)
    aggregate = text[text.index("Aggregate "):]
    assert (aggregate.splitlines()[1].strip().startswith(DEFERRED)) is deferred


def test_an_aggregate_over_joins_reads_only_the_joined_keys(engines, monkeypatch):
    from tdbsql.engine import deferred_inputs

    monkeypatch.setattr(deferred_inputs, "SCANNED_CELLS_MIN", 100)
    con, oracle = engines
    sql = ("SELECT o.id FROM o WHERE o.id < 6 AND o.v >= (SELECT min(i.v) FROM i, i AS j "
           "WHERE i.k = o.k AND j.id = i.id) ORDER BY o.id")
    assert_same_rows(con.sql(sql).fetchall(), oracle.sql(sql).fetchall())
    keys, keyed = oracle.sql("SELECT count(DISTINCT k), (SELECT count(*) FROM i WHERE k IN "
                             "(SELECT k FROM o WHERE id < 6)) FROM o WHERE id < 6").fetchall()[0]
    text = con.explain(sql, analyze=True)
    assert f"{DEFERRED}: {keys:,}" in text
    scans = [line for line in text.splitlines() if "Scan i: " in line]
    assert any(f"[rows={keyed:,} " in line for line in scans)  # i: its keys' rows only


def test_a_cte_read_by_two_deferred_scans_runs_for_each(engines, monkeypatch):
    """A CTE's steps, read by two scans that both run inside their joins, run once for each
    of them (for its keys), not whole; read by one deferred scan and one other, whole once."""
    from tdbsql.engine import deferred_inputs

    monkeypatch.setattr(deferred_inputs, "SCANNED_CELLS_MIN", 100)
    con, oracle = engines
    both = ("WITH c AS (SELECT id, k, v FROM i WHERE v > -3) SELECT o.id, c.id FROM o JOIN c "
            "ON c.k = o.k WHERE o.id < 5 AND c.v = (SELECT min(d.v) FROM c AS d, i AS j "
            "WHERE d.k = o.k AND j.id = d.id) ORDER BY 1, 2")
    assert_same_rows(con.sql(both).fetchall(), oracle.sql(both).fetchall())
    text = con.explain(both, analyze=True)
    assert "Ran 2 times (rows and time summed)" in text
    one = ("WITH c AS (SELECT id, k, v FROM i WHERE v > -3) SELECT o.id, c.id FROM o JOIN c "
           "ON c.k = o.k WHERE o.id < 5 AND c.v > (SELECT avg(v) FROM c) ORDER BY 1, 2")
    assert_same_rows(con.sql(one).fetchall(), oracle.sql(one).fetchall())
    assert "Ran 2 times" not in con.explain(one, analyze=True)


# deferrals inside deferrals: an aggregate over joins whose join reads another aggregate over
# joins (that one runs whole), a CTE read by two subqueries and the query
NESTED = [
    "SELECT o.id, a.n FROM o JOIN (SELECT i.k, count(*) AS n FROM i JOIN (SELECT m.k32, "
    "max(m.v) AS mv FROM i AS m JOIN i AS q ON q.id = m.id GROUP BY m.k32) b ON b.k32 = i.k32 "
    "JOIN i AS j ON j.id = i.id WHERE i.v <= b.mv GROUP BY i.k) a ON a.k = o.k WHERE o.id < 9 "
    "ORDER BY 1",
    "SELECT o.id FROM o WHERE o.id < 9 AND o.v >= (SELECT min(i.v) FROM i, i AS j WHERE "
    "i.k = o.k AND j.id = i.id AND j.v <= (SELECT max(m.v) FROM i AS m, i AS n WHERE "
    "m.k = j.k AND n.id = m.id + 1)) ORDER BY 1",
    "WITH c AS (SELECT id, k, v FROM i) SELECT o.id, (SELECT min(c.v) FROM c, c AS d WHERE "
    "c.k = o.k AND d.id = c.id) AS m, (SELECT count(*) FROM c AS e WHERE e.k = o.k) AS n "
    "FROM o WHERE o.id < 9 ORDER BY 1",
]


@pytest.mark.parametrize("sql", NESTED, ids=range(len(NESTED)))
def test_nested_deferrals_give_duckdbs_rows(engines, monkeypatch, sql):
    from tdbsql.engine import deferred_inputs

    monkeypatch.setattr(deferred_inputs, "SCANNED_CELLS_MIN", 0)
    monkeypatch.setattr(deferred_inputs, "KEYS_PER_CELL_MAX", 0)
    con, oracle = engines
    assert_same_rows(con.sql(sql).fetchall(), oracle.sql(sql).fetchall())
