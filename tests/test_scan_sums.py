"""Aggregates summed straight from the tiles (``engine.scan_sums``, ``kernels.expression_sums``)
equal DuckDB over the cells ``tiledb`` reads; what the path cannot take goes the usual way."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest
import tiledb
from hypothesis import given, settings
from hypothesis import strategies as st

import tdbsql
from sql_fixtures import assert_same_table, duckdb_over
from tdbsql.engine import scan_step, scan_sums
from tdbsql.kernels import expression_sums as K

N = 3000
CAPACITY = 100  # 30 tiles


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> str:
    uri = str(tmp_path_factory.mktemp("scan_sums") / "t")
    rng = np.random.default_rng(11)
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 100_000), tile=1000, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=CAPACITY, attrs=[
        tiledb.Attr("flag", dtype=str, var=True),
        tiledb.Attr("status", dtype="ascii", var=True),
        tiledb.Attr("name", dtype=str, var=True),
        tiledb.Attr("k", dtype=np.int32),
        tiledb.Attr("day", dtype="datetime64[D]"),
        tiledb.Attr("x", dtype=np.float64),
        tiledb.Attr("y", dtype=np.float64),
        tiledb.Attr("z", dtype=np.float64),
        tiledb.Attr("nx", dtype=np.float64, nullable=True),
        tiledb.Attr("i", dtype=np.int64),
    ]))
    d = np.arange(N, dtype=np.int64) * 3
    names = np.array(["ab", "über", "", "seven77"], dtype=object)[rng.integers(0, 4, N)]
    names[d > 6000] = "more than seven bytes"  # the last tiles cannot pack their keys
    with tiledb.open(uri, "w") as A:
        A[d] = {
            # constant over tiles (whole blocks of one group) and mixed row by row
            "flag": np.array(["A", "N", "R"], dtype=object)[(d // 2100) % 3],
            "status": np.array(["F", "O"], dtype=object)[rng.integers(0, 2, N)],
            "name": names,
            "k": rng.integers(-5, 5, N).astype(np.int32),
            "day": (d // 300).astype("datetime64[D]"),
            "x": rng.integers(-10**6, 10**6, N) / 100.0,
            "y": rng.integers(0, 11, N) / 100.0,
            "z": rng.random(N) * 1e12,  # large and small terms: the compensation matters
            "nx": pa.array(rng.random(N), mask=rng.random(N) < 0.2),
            "i": rng.integers(-100, 100, N),
        }
    return uri


@pytest.fixture(scope="module")
def oracle(table):
    return duckdb_over(table)


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch):
    monkeypatch.setattr(scan_step, "CHUNK_CELLS", 700)  # several chunks: partials combine


SUMMED = [
    "SELECT flag, status, sum(x), sum(x * (1 - y)), sum(x * (1 - y) * (1 + z)), avg(x), "
    "avg(y), count(*), count(x) FROM t GROUP BY flag, status",
    "SELECT k, sum(-x + 2.5 * y), sum(-(z - x)), avg(x * x) FROM t GROUP BY k",
    "SELECT day, sum(x - y), count(*) FROM t WHERE d < 4500 GROUP BY day",
    "SELECT sum(x), avg(z), sum(z + x), count(*) FROM t",
    "SELECT sum(x * y) AS revenue FROM t WHERE x > 1000.5 AND d BETWEEN 300 AND 7500",
    "SELECT status, sum(z) / count(*) AS mean, avg(z) FROM t GROUP BY status HAVING sum(x) > 0",
    "SELECT flag, k, sum(x) FROM t GROUP BY ALL ORDER BY 3 DESC LIMIT 4",
    # int64 / float64 bounds (TPC-H Q21's per-order MIN / MAX / COUNT)
    "SELECT flag, min(x), max(x) FROM t GROUP BY flag",
    "SELECT k, min(i), max(i), count(*), sum(x) FROM t GROUP BY k",
    "SELECT status, min(d), max(z) FROM t WHERE d > 300 GROUP BY status",
]
NOT_SUMMED = [
    "SELECT flag, min(k), max(day) FROM t GROUP BY flag",
    "SELECT flag, min(nx), max(name) FROM t GROUP BY flag",
    "SELECT flag, sum(i) FROM t GROUP BY flag",
    "SELECT flag, sum(nx), count(nx) FROM t GROUP BY flag",
    "SELECT flag, sum(x / (y + 1)) FROM t GROUP BY flag",
    "SELECT flag, sum(x) FILTER (WHERE y > 0.05) FROM t GROUP BY flag",
    "SELECT flag, sum(DISTINCT y) FROM t GROUP BY flag",
    "SELECT flag, sum(x) FROM t WHERE lower(status) = 'f' GROUP BY flag",
    "SELECT x > 0 AS positive, sum(x) FROM t GROUP BY positive",
    "SELECT flag, sum(2) FROM t GROUP BY flag",
    # numbers alone are exact integers (past 2**53 too) or decimals: the evaluator's
    "SELECT flag, sum(x * (9007199254740993 - 9007199254740992)) FROM t GROUP BY flag",
    "SELECT flag, sum(x * (0.5 + 0.25)) FROM t GROUP BY flag",
    "SELECT flag, sum(x * -(3 - 1)) FROM t GROUP BY flag",
]


def _summed_tiles(sql: str, path: str) -> int:
    text = tdbsql.connect().register("t", path).sql(f"EXPLAIN ANALYZE {sql}").arrow()[0][0]
    lines = [line for line in text.as_py().splitlines() if "Summed in the scan" in line]
    return int(lines[0].split(":")[1].split()[0].replace(",", "")) if lines else 0


def _assert_equal(path: str, oracle, sql: str) -> None:
    assert_same_table(tdbsql.connect().register("t", path).sql(sql).arrow(),
                      oracle.sql(sql).arrow())


@pytest.mark.parametrize("sql", SUMMED)
def test_summed_from_tiles_equals_duckdb(table, oracle, sql):
    _assert_equal(table, oracle, sql)
    assert _summed_tiles(sql, table) > 0


@pytest.mark.parametrize("sql", NOT_SUMMED)
def test_other_aggregates_go_the_usual_way(table, oracle, sql):
    _assert_equal(table, oracle, sql)
    assert _summed_tiles(sql, table) == 0


def test_integer_overflow_in_numbers_is_an_error(table):
    with pytest.raises(tdbsql.SqlError, match="overflow"):
        tdbsql.connect().register("t", table).sql(
            "SELECT flag, sum(x * (4611686018427387904 * 2)) FROM t GROUP BY flag").arrow()


def test_no_rows_left(table, oracle):
    _assert_equal(table, oracle, "SELECT flag, sum(x), count(*) FROM t WHERE d >= 50000 "
                                 "GROUP BY flag")
    _assert_equal(table, oracle, "SELECT sum(x), count(*) FROM t WHERE d >= 50000")


def test_chunks_with_long_string_keys_go_the_usual_way(table, oracle):
    sql = "SELECT name, sum(x), avg(y), count(*) FROM t GROUP BY name"
    _assert_equal(table, oracle, sql)
    summed = _summed_tiles(sql, table)
    assert 0 < summed < N // CAPACITY  # the tiles after d = 6000 hold 21-byte names


def test_same_sums_with_one_thread(table, oracle, monkeypatch):
    monkeypatch.setenv("TDBSQL_THREADS", "1")
    _assert_equal(table, oracle, SUMMED[0])


# -- the kernel ------------------------------------------------------------------------------

# registers 0 and 1 are x and y; 6.. the instructions' results
CODE = [
    (K.CONSTANT_SUBTRACT, 6, 1, 0),  # 1 - y
    (K.MULTIPLY, 7, 0, 6),  # x * (1 - y)
    (K.NEGATE, 8, 1, 0),  # -y
    (K.ADD, 9, 8, 0),  # -y + x
    (K.MULTIPLY_CONSTANT, 10, 9, 1),  # (-y + x) * 3.5
    (K.SUBTRACT_CONSTANT, 11, 0, 1),  # x - 3.5
    (K.ADD_CONSTANT, 12, 11, 0),  # x - 3.5 + 1
    (K.SUBTRACT, 13, 12, 1),  # x - 3.5 + 1 - y
]
RESULTS = [0, 7, 10, 13]


def _expected(x, y):
    return [x, x * (1.0 - y), (-y + x) * 3.5, x - 3.5 + 1.0 - y]


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.integers(1, 5000), st.integers(1, 40), st.sampled_from([1, 2, 4, 8]),
       st.integers(0, 2**32 - 1), st.booleans())
def test_kernel_sums_equal_exact_sums(n, groups, lanes, seed, runs):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n) * 10.0 ** rng.integers(-3, 12, n)
    y = rng.standard_normal(n)
    ids = rng.integers(0, groups, n).astype(np.int64)
    if runs:  # long stretches of one group, as rows sorted by what the groups follow
        ids = np.sort(ids)
    sums = np.zeros((len(RESULTS), lanes * groups))
    errors = np.zeros_like(sums)
    none, no_codes = np.empty(0), np.empty(0, np.uint8)
    K.fold_expression_sums(np.array(CODE, np.int64), np.array([1.0, 3.5]),
                           np.array(RESULTS, np.int64), (x, y) + (none,) * 4,
                           (no_codes,) * 6, (none,) * 6, ids, lanes, sums, errors,
                           np.empty((K.COLUMNS + len(CODE), K.BLOCK)))
    out = np.empty((len(RESULTS), groups))
    K.finish_sums(sums, errors, lanes, out)
    for e, values in enumerate(_expected(x, y)):
        for group in range(groups):
            exact = math.fsum(values[ids == group])
            scale = math.fsum(np.abs(values[ids == group]))
            # exact to a block: 136 plain adds at most between two compensated ones
            assert abs(out[e, group] - exact) <= 1e-13 * scale + 1e-300


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.integers(1, 5000), st.floats(0.0, 1.0), st.integers(0, 2**32 - 1), st.booleans())
def test_selected_sums_equal_the_gathered_rows_sums_to_the_bit(n, share, seed, coded):
    """``fold_selected_sums`` over a tile's kept rows gives what ``fold_expression_sums``
    gives over those rows copied out: the same blocks, added in the same order."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n) * 10.0 ** rng.integers(-3, 12, n)
    dictionary = np.round(rng.random(7), 2)
    codes = rng.integers(0, 7, n).astype(np.uint8)
    y = dictionary[codes]
    selected = np.flatnonzero(rng.random(n) < share).astype(np.int64)
    none, no_codes = np.empty(0), np.empty(0, np.uint8)
    code, constants = np.array(CODE, np.int64), np.array([1.0, 3.5])
    results, registers = np.array(RESULTS, np.int64), np.empty((K.COLUMNS + len(CODE), K.BLOCK))
    columns = (x, none if coded else y) + (none,) * 4
    code_columns = (no_codes, codes if coded else no_codes) + (no_codes,) * 4
    dictionaries = (none, dictionary if coded else none) + (none,) * 4
    sums, errors = np.zeros((len(RESULTS), 8)), np.zeros((len(RESULTS), 8))
    K.fold_selected_sums(code, constants, results, columns, code_columns, dictionaries,
                         selected, (none,) * 6, (no_codes,) * 6, sums, errors, registers)
    want_sums, want_errors = np.zeros_like(sums), np.zeros_like(errors)
    K.fold_expression_sums(code, constants, results, (x[selected], y[selected]) + (none,) * 4,
                           (no_codes,) * 6, (none,) * 6, np.zeros(len(selected), np.int64),
                           8, want_sums, want_errors, registers)
    assert sums.tobytes() == want_sums.tobytes() and errors.tobytes() == want_errors.tobytes()


def test_ungrouped_sums_read_kept_cells_in_place(table, oracle, monkeypatch):
    """Without group keys or min / max, a filtered tile's kept cells are summed through their
    indices; the partial is the one gathering them first gives, to the bit."""
    sql = ("SELECT sum(x * (1 - y)) AS s, avg(z) AS a, count(*) AS c FROM t "
           "WHERE y BETWEEN 0.02 AND 0.07 AND x < 5000 AND d BETWEEN 600 AND 8000")
    selected = []
    kernel = K.fold_selected_sums
    monkeypatch.setattr(K, "fold_selected_sums",
                        lambda *args: selected.append(len(args[6])) or kernel(*args))
    got = tdbsql.connect().register("t", table).sql(sql).arrow()
    assert selected and sum(selected) == got["c"][0].as_py()
    _assert_equal(table, oracle, sql)
    monkeypatch.setattr(scan_sums.ScanSums, "selects", property(lambda self: False))
    assert tdbsql.connect().register("t", table).sql(sql).arrow().equals(got)


def test_infinities_and_nan_as_duckdb(tmp_path):
    uri = str(tmp_path / "inf")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 99), tile=10, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=4, attrs=[
        tiledb.Attr("g", dtype=np.int64), tiledb.Attr("x", dtype=np.float64)]))
    x = [1.0, math.inf, 2.0, math.nan, -math.inf, math.inf, 5.0, -0.0, 1e308, 1e308, 3.0, 4.0]
    with tiledb.open(uri, "w") as A:
        A[np.arange(12)] = {"g": np.array([0, 0, 0, 1, 2, 2, 3, 4, 5, 5, 6, 6]),
                            "x": np.array(x)}
    sql = "SELECT g, sum(x), avg(x), sum(x * 2 - 1), min(x), max(x) FROM t GROUP BY g"
    oracle = duckdb_over(uri)
    got = tdbsql.connect().register("t", uri).sql(sql + " ORDER BY g").arrow()
    want = oracle.sql(sql + " ORDER BY g").arrow()
    want = want.read_all() if isinstance(want, pa.RecordBatchReader) else want
    for a, b in zip(got.to_pylist(), want.to_pylist()):
        for name in a:
            u, v = a[name], b[name]
            assert (math.isnan(u) and math.isnan(v)) or u == v, (name, a, b)
    assert _summed_tiles(sql, uri) > 0


def test_many_string_groups_past_the_small_table(tmp_path):
    """Two string keys with more groups than the small lookup table holds are grouped the
    general way; the sums are the same."""
    uri = str(tmp_path / "many")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 9999), tile=1000, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=500, attrs=[
        tiledb.Attr("a", dtype=str, var=True), tiledb.Attr("b", dtype=str, var=True),
        tiledb.Attr("x", dtype=np.float64)]))
    n = 3000
    with tiledb.open(uri, "w") as A:
        A[np.arange(n)] = {"a": np.array([f"a{i % 700}" for i in range(n)], dtype=object),
                           "b": np.array([f"{i % 3}" for i in range(n)], dtype=object),
                           "x": np.arange(n) / 4.0}
    oracle = duckdb_over(uri)
    for sql in ("SELECT a, b, sum(x), count(*) FROM t GROUP BY a, b",
                "SELECT b, sum(x * 2) FROM t GROUP BY b"):
        _assert_equal(uri, oracle, sql)
        assert _summed_tiles(sql, uri) > 0


def test_count_of_a_column_without_nulls_is_the_group_size(table, oracle):
    """count(k) of a non-nullable column of any type counts every row: summed in the scan
    with the other calls, no program for it."""
    sql = "SELECT flag, count(k), count(name), count(day), sum(x) FROM t GROUP BY flag"
    _assert_equal(table, oracle, sql)
    assert _summed_tiles(sql, table) > 0


def test_dense_arrays_are_summed_too(tmp_path):
    uri = str(tmp_path / "dense")
    dom = tiledb.Domain(tiledb.Dim("r", domain=(0, 999), tile=100, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=False, attrs=[
        tiledb.Attr("g", dtype=np.int64), tiledb.Attr("x", dtype=np.float64)]))
    rng = np.random.default_rng(5)
    with tiledb.open(uri, "w") as A:
        A[0:1000] = {"g": rng.integers(0, 7, 1000), "x": rng.random(1000) * 100}
    with tiledb.open(uri, "w") as A:  # a second write over part of it: the newest cells win
        A[200:450] = {"g": rng.integers(0, 7, 250), "x": rng.random(250) - 0.5}
    oracle = duckdb_over(uri)
    sql = "SELECT g, sum(x), avg(x * 2 - 1), count(*), min(x), max(x) FROM t GROUP BY g"
    _assert_equal(uri, oracle, sql)
    assert _summed_tiles(sql, uri) > 0


def test_shared_registers_follow_structure_not_sql_text():
    """``x - (y + z)`` built without a Paren prints as ``x - y + z``, like ``(x - y) + z``: the
    compiler tells them apart by structure, and shares only what is the same computation."""
    from sqlglot import exp

    from tdbsql.engine.scan_sums import _Compiler

    fields = {name: type("F", (), {"datatype": tdbsql.datatypes.Datatype.FLOAT64,
                                   "cell_val_num": 1, "nullable": False})()
              for name in ("x", "y", "z")}
    compiler = _Compiler("t", fields, {})
    x, y, z = (exp.column(name, "t") for name in "xyz")
    apart = exp.Sub(this=x.copy(), expression=exp.Add(this=y.copy(), expression=z.copy()))
    grouped = exp.Add(this=exp.Sub(this=x.copy(), expression=y.copy()), expression=z.copy())
    assert apart.sql() == grouped.sql()
    first, second = compiler.expression(apart), compiler.expression(grouped)
    assert first != second
    again = compiler.expression(exp.Add(this=exp.Sub(this=x.copy(), expression=y.copy()),
                                        expression=z.copy()))
    assert again == second  # the same computation: the same sum
    assert len(compiler.code) == 4  # y + z, x - (y + z), x - y, (x - y) + z
