"""Conjuncts tested on stored values (engine/stored_filter.py, kernels/predicate.py): random
comparisons, BETWEEN, IN and their negations over an array holding NULLs, NaN, infinities and
extreme integers give DuckDB's rows; the split leaves what the kernel cannot do to the
evaluator."""

from __future__ import annotations

import math

import duckdb
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlglot import parse_one

import tdbsql
from tdbsql.engine.stored_filter import stored_filter
from tdbsql.kernels import predicate as kernels
from tdbsql.planner.conjuncts import conjuncts, unqualified
from tdbsql.planner.zonemap import field_kinds, parse_predicate

N = 64


def _data() -> pa.Table:
    rng = np.random.default_rng(3)
    i32 = rng.integers(-5, 6, N).astype(np.int32)
    i32[:3] = [np.iinfo(np.int32).min, np.iinfo(np.int32).max, 0]
    f64 = rng.integers(-8, 9, N) / 4.0
    f64[:5] = [math.nan, math.inf, -math.inf, math.nan, -0.0]
    day = np.datetime64("2024-01-01") + rng.integers(0, 20, N).astype("timedelta64[D]")
    return pa.table({
        "id": pa.array(np.arange(N, dtype=np.int64)),
        "i": pa.array(i32, mask=rng.random(N) < 0.2),
        "f": pa.array(f64, mask=np.arange(N) % 9 == 4),
        "u": pa.array(rng.integers(0, 7, N).astype(np.uint16)),
        "d": pa.array(day, pa.date32()),
        # second columns of the same types, for column-to-column comparisons
        "i2": pa.array(np.roll(i32, 5), mask=rng.random(N) < 0.2),
        "f2": pa.array(np.where(np.arange(N) % 7 == 0, math.nan, np.roll(f64, 3)),
                       mask=np.arange(N) % 11 == 2),
        "d2": pa.array(np.roll(day, 9), pa.date32(), mask=rng.random(N) < 0.1),
    })


@pytest.fixture(scope="module")
def engines(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("stored") / "a")
    tdbsql.create(path, tdbsql.Schema(
        dims=(tdbsql.Dim("id", "int64", (0, N - 1), 8),),
        attrs=(tdbsql.Attr("i", "int32", nullable=True), tdbsql.Attr("f", "float64",
                                                                      nullable=True),
               tdbsql.Attr("u", "uint16"), tdbsql.Attr("d", "datetime64[D]"),
               tdbsql.Attr("i2", "int32", nullable=True),
               tdbsql.Attr("f2", "float64", nullable=True),
               tdbsql.Attr("d2", "datetime64[D]", nullable=True)),
        capacity=8))
    data = _data()
    tdbsql.write(path, data)
    con = tdbsql.connect()
    con.register("a", path)
    oracle = duckdb.connect()
    oracle.register("a", data)
    return con, oracle


LITERALS = {"i": st.sampled_from(["0", "-5", "3", "2.5", "-2147483648", "2147483647", "1e10",
                                  "-0.5"]),
            "f": st.sampled_from(["0", "1.25", "-2", "'inf'::DOUBLE", "'-inf'::DOUBLE",
                                  "'nan'::DOUBLE", "-0.0", "7"]),
            "u": st.sampled_from(["0", "3", "6.5", "-1", "70000"]),
            "d": st.sampled_from(["DATE '2024-01-05'", "DATE '2023-12-31'",
                                  "DATE '2024-01-19'", "TIMESTAMP '2024-01-07 12:00:00'"])}


@st.composite
def conjunct(draw) -> str:
    column = draw(st.sampled_from(sorted(LITERALS)))
    lit = LITERALS[column]
    shape = draw(st.sampled_from(["cmp", "between", "in", "flipped", "columns", "or"]))
    if shape == "or":  # branches on the one column: one "in" test over their intervals
        ops = st.sampled_from(["=", "<", "<=", ">", ">="])
        branches = [f"{column} {draw(ops)} {draw(lit)}" if draw(st.booleans()) else
                    f"({column} {draw(ops)} {draw(lit)} AND {column} {draw(ops)} {draw(lit)})"
                    for _ in range(draw(st.integers(2, 3)))]
        text = f"({' OR '.join(branches)})"
    elif shape == "columns":  # two stored columns of one type (or, for u, of two types)
        op = draw(st.sampled_from(["=", "<>", "<", "<=", ">", ">="]))
        other = {"i": "i2", "f": "f2", "u": "i", "d": "d2"}[column]
        text = f"{column} {op} {other}" if draw(st.booleans()) else f"{other} {op} {column}"
    elif shape == "between":
        text = f"{column} BETWEEN {draw(lit)} AND {draw(lit)}"
    elif shape == "in":
        text = f"{column} IN ({', '.join(draw(st.lists(lit, min_size=1, max_size=3)))})"
    else:
        op = draw(st.sampled_from(["=", "<>", "<", "<=", ">", ">="]))
        text = f"{column} {op} {draw(lit)}" if shape == "cmp" else f"{draw(lit)} {op} {column}"
    return f"NOT ({text})" if draw(st.booleans()) else text


@settings(deadline=None, derandomize=True, max_examples=300)
@given(terms=st.lists(conjunct(), min_size=1, max_size=3))
def test_stored_filters_give_duckdbs_rows(engines, terms):
    con, oracle = engines
    sql = f"SELECT id FROM a WHERE {' AND '.join(terms)} ORDER BY id"
    assert con.sql(sql).fetchall() == oracle.sql(sql).fetchall(), sql


def test_the_kernel_takes_numbers_and_dates_and_leaves_the_rest():
    _, split = _split("t.i > 2 AND t.s LIKE 'a%' AND t.f BETWEEN 0 AND 1 AND t.i + 1 = 3 "
                      "AND t.f IS NULL AND t.s LIKE 'a_' AND t.s ILIKE 'a%'")
    # LIKE of literal pieces and % over a stored string: matched on the stored bytes, last
    assert [t.column for t in split.tests] == ["i", "f", "s"]
    assert [c.sql() for c in conjuncts(split.residual)] == [
        "t.i + 1 = 3", "t.f IS NULL", "t.s LIKE 'a_'", "t.s ILIKE 'a%'"]


def test_an_or_over_one_column_is_one_test():
    """TPC-H Q19's ``(q >= 1 AND q <= 11) OR (q >= 10 AND q <= 20)``: one "in" test over the
    branches' intervals (each branch's conjuncts intersected), for the zone maps and the
    kernel; an OR over two columns, or with a branch the parser cannot read, stays with the
    evaluator."""
    predicate, split = _split(
        "((t.i >= 1 AND t.i <= 11 AND t.i < 9) OR t.i IN (20, 30) OR t.i > 99) "
        "AND (t.f < 0 OR t.i > 3) AND (t.i = 1 OR t.i + 1 = 3) "
        "AND (t.f > 1 OR (t.f > 5 AND t.f < 2))")
    tests = {t.position: (t.column, t.kind, [(i.lo, i.hi) for i in t.intervals])
             for t in predicate.tests}
    assert tests == {0: ("i", "in", [(1, 8), (20, 20), (30, 30), (100, 2**63 - 1)]),
                     3: ("f", "in", [(1, None)])}
    assert [c.sql() for c in conjuncts(split.residual)] == [
        "t.f < 0 OR t.i > 3", "t.i = 1 OR t.i + 1 = 3"]


def test_the_kernel_compares_two_columns_of_one_type():
    _, split = _split("t.i < t.j AND t.f >= t.f AND t.i = t.f AND t.s <> t.s")
    assert [(t.left, t.right, t.op) for t in split.tests] == [("i", "j", 2), ("f", "f", 5)]
    assert [c.sql() for c in conjuncts(split.residual)] == ["t.i = t.f", "t.s <> t.s"]


_TINY: dict = {}


def _split(condition_sql: str):
    """(the zone-map parser's predicate, the stored filter's split) of a condition over the
    tiny array's columns (``t.i``, ``t.f``, ``t.s``, ``t.j``)."""
    kinds = field_kinds(tdbsql.open(_tiny_array()).schema)
    condition = parse_one(condition_sql)
    predicate = parse_predicate(unqualified(condition), kinds)
    return predicate, stored_filter(condition, predicate, kinds)


def _tiny_array() -> str:
    if "path" not in _TINY:
        import tempfile

        path = tempfile.mkdtemp() + "/tiny"
        tdbsql.create(path, tdbsql.Schema(
            dims=(tdbsql.Dim("id", "int64", (0, 9), 10),),
            attrs=(tdbsql.Attr("i", "int64"), tdbsql.Attr("f", "float64", nullable=True),
                   tdbsql.Attr("s", "str"), tdbsql.Attr("j", "int64"))))
        tdbsql.write(path, {"id": [0], "i": [1], "f": [1.0], "s": ["a"], "j": [2]})
        _TINY["path"] = path
    return _TINY["path"]


def test_nat_is_null_for_datetimes():
    values = np.array([np.iinfo(np.int64).min, 5, 7], np.int64)
    keep = np.ones(3, bool)
    one = np.ones(1, np.int64)
    flag = np.zeros(1, np.bool_)
    kernels.keep_in_interval(values, np.zeros(0, np.uint8), 0, 6, False, False, True, False,
                             True, True, keep)  # NOT (d <= 6)
    assert keep.tolist() == [False, False, True]
    keep = np.ones(3, bool)
    kernels.keep_in_intervals(values, np.zeros(0, np.uint8), one * 5, one * 7, flag, flag,
                              flag, flag, False, True, keep)
    assert keep.tolist() == [False, True, True]


def test_aggregate_over_stored_filters_equals_duckdb(engines):
    con, oracle = engines
    sql = ("SELECT count(*), sum(i), min(d) FROM a WHERE f > 0 AND d < DATE '2024-01-10' "
           "AND u <> 3")
    assert con.sql(sql).fetchall() == oracle.sql(sql).fetchall()


WORDS = ["", "a", "ab", "ba", "abc", "xaby", "äb", "bä", "special requests", "specialrequests",
         "requests special", "%", "a%b", "aa"]
LIKE_PATTERNS = ["", "%", "%%", "a%", "%a", "%ab%", "ä%", "%ä", "%b%c%", "ab", "%special%requests%",
                 "a%%b", "%a%a%"]


@pytest.fixture(scope="module")
def texts(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("like") / "t")
    rng = np.random.default_rng(8)
    n = 300
    tdbsql.create(path, tdbsql.Schema(
        dims=(tdbsql.Dim("id", "int64", (0, n - 1), 50),),
        attrs=(tdbsql.Attr("s", "utf8", nullable=True), tdbsql.Attr("a", "ascii"),
               tdbsql.Attr("x", "int64")), capacity=40))
    data = pa.table({
        "id": pa.array(np.arange(n, dtype=np.int64)),
        "s": pa.array([WORDS[k] for k in rng.integers(0, len(WORDS), n)],
                      mask=rng.random(n) < 0.15),
        "a": pa.array([WORDS[k] for k in rng.integers(0, 6, n)]),
        "x": pa.array(rng.integers(0, 10, n)),
    })
    tdbsql.write(path, data)
    con = tdbsql.connect().register("t", path)
    oracle = duckdb.connect()
    oracle.register("t", data)
    return con, oracle


@pytest.mark.parametrize("pattern", LIKE_PATTERNS)
def test_like_on_stored_strings_gives_duckdbs_rows(texts, pattern):
    """LIKE / NOT LIKE of literal pieces and % run on the tiles' bytes (``_Like``): NULL
    matches neither, UTF-8 pieces match as bytes, '' only the empty string."""
    con, oracle = texts
    quoted = pattern.replace("'", "''")
    for where in (f"s LIKE '{quoted}'", f"s NOT LIKE '{quoted}'", f"NOT (s LIKE '{quoted}')",
                  f"x > 3 AND s LIKE '{quoted}' AND a LIKE 'a%'",
                  f"a NOT LIKE '{quoted}' AND x < 8"):
        sql = f"SELECT id FROM t WHERE {where} ORDER BY id"
        assert con.sql(sql).fetchall() == oracle.sql(sql).fetchall(), sql


TEXT_TESTS = ["s = 'ab'", "'ab' = s", "s <> 'ab'", "NOT (s = '')", "s = ''", "s = 'a%b'",
              "s IN ('a', 'äb', '')", "s NOT IN ('a', 'ba')", "NOT (s IN ('%', 'aa'))",
              "a IN ('a', 'ab') AND s <> 'ab'", "x > 2 AND a = 'ab' AND s IN ('ab', 'abc')",
              "s IN ('a', NULL)", "s NOT IN ('a', NULL)", "s = a", "s IN (a, 'b')",
              "s = 'a' OR s LIKE '%b'", "NOT (s LIKE 'a%' OR s IN ('', 'ba'))",
              "x < 5 AND (a = 'ab' OR a LIKE 'b%' OR a = '')", "s = 'a' OR a = 'a'",
              "s = 'a' OR s <> 'b'", "(s = 'a' OR s = NULL)"]


@pytest.mark.parametrize("where", TEXT_TESTS)
def test_text_equality_on_stored_strings_gives_duckdbs_rows(texts, where):
    """``=``, ``<>``, ``[NOT] IN`` of string literals over a stored string column run on the
    tiles' bytes too (one anchored piece each, ``%`` and ``_`` literal); a NULL in the list or
    a column on the other side stays with the evaluator."""
    con, oracle = texts
    sql = f"SELECT id FROM t WHERE {where} ORDER BY id"
    assert con.sql(sql).fetchall() == oracle.sql(sql).fetchall(), sql


def test_text_tests_are_stored_tests():
    _, split = _split("t.s = 'ab' AND t.s IN ('a', 'b') AND t.s IN ('a', NULL) "
                      "AND t.s = t.s AND NOT t.s <> 'x' AND t.s NOT LIKE 'a%b' "
                      "AND NOT t.s NOT LIKE '%c'")
    assert [(t.column, len(t.patterns), t.negate) for t in split.tests] == [
        ("s", 1, False), ("s", 2, False), ("s", 1, False), ("s", 1, True), ("s", 1, False)]
    assert [c.sql() for c in conjuncts(split.residual)] == ["t.s IN ('a', NULL)", "t.s = t.s"]


def test_an_or_of_text_tests_on_one_column_is_one_text_test():
    """The branches' patterns are matched together (TPC-H Q19's ``p_container IN (...) OR
    ...`` shape); a negated branch, or one over another column, leaves the OR whole to the
    evaluator."""
    _, split = _split("(t.s = 'a' OR t.s LIKE '%b%' OR t.s IN ('c', 'd')) "
                      "AND NOT (t.s LIKE 'x%' OR (t.s = 'y')) "
                      "AND (t.s = 'a' OR t.s <> 'b') AND (t.s = 'a' OR t.i = 1)")
    assert [(t.column, len(t.patterns), t.negate) for t in split.tests] == [
        ("s", 4, False), ("s", 2, True)]
    assert [c.sql() for c in conjuncts(split.residual)] == [
        "t.s = 'a' OR t.s <> 'b'", "t.s = 'a' OR t.i = 1"]
