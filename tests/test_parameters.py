"""Query parameters (``planner.parameters``): ``?``, ``$1`` and ``$name`` bound to Python values,
against DuckDB binding the same values over the same rows; round trips of each Python type;
INSERT / DELETE with parameters read back by ``tiledb``; and the errors for a wrong count, a
wrong container or a value with no SQL type."""

from __future__ import annotations

import datetime
import decimal
import math

import duckdb
import numpy as np
import pytest
import tiledb
from hypothesis import given, settings
from hypothesis import strategies as st

import tdbsql
from sql_fixtures import assert_same_rows, oracle_table, sql_arrays  # noqa: F401


@pytest.fixture(scope="module")
def engines(sql_arrays):  # noqa: F811
    con, oracle = tdbsql.connect(), duckdb.connect()
    for name in ("items", "emp", "dept"):
        con.register(name, sql_arrays[name])
        oracle.register(name, oracle_table(sql_arrays[name]))
    return con, oracle


QUERIES = [
    ("SELECT id, qty FROM items WHERE qty > ? AND grp = ? ORDER BY id", [10, "alpha"]),
    ("SELECT count(*) FROM items WHERE price BETWEEN ? AND ?", (2.5, 40.0)),
    ("SELECT id FROM items WHERE grp IN (?, ?, ?) ORDER BY id", ["beta", "Beta", None]),
    ("SELECT id FROM items WHERE day >= ? ORDER BY id", [datetime.date(2024, 3, 1)]),
    ("SELECT id FROM items WHERE ts < ? ORDER BY id", [datetime.datetime(2024, 1, 2, 12)]),
    ("SELECT id, qty * $1 + $1 FROM items WHERE id < $2 ORDER BY id", [3, 20]),
    ("SELECT ename FROM emp WHERE salary > $low AND dept_id = $dept ORDER BY ename",
     {"low": 5000, "dept": 10}),
    ("SELECT grp, count(*) FROM items GROUP BY grp HAVING count(*) >= ? ORDER BY grp", [5]),
    ("SELECT id FROM items ORDER BY id LIMIT ? OFFSET ?", [3, 2]),
    ("SELECT e.ename, d.dname FROM emp e JOIN dept d ON e.dept_id = d.dept_id "
     "WHERE d.city = ? ORDER BY 1", ["Oslo"]),
    ("SELECT ? || name FROM items WHERE id = ?", ["x-", 3]),
    # ? bound in the order written, however deep: a subquery's before the outer WHERE's
    ("SELECT * FROM (SELECT id FROM items WHERE id < ?) s WHERE id > ? ORDER BY id", [20, 5]),
    ("SELECT (SELECT max(qty) FROM items WHERE id < ?) + ?", [30, 100]),
    ("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < ?) "
     "SELECT n FROM r WHERE n > ? ORDER BY n", [4, 1]),
    ("SELECT list_contains(?, grp) FROM items WHERE id < 6 ORDER BY id", [["alpha", "beta"]]),
    ("SELECT count(*) FROM items WHERE price > ?", [decimal.Decimal("12.50")]),
    # a slice's open start beside parameters: ``[:$n]`` / ``[:?]`` end at the value
    ("SELECT name[:$n], name[$n:] FROM items WHERE id < 8 ORDER BY id", {"n": 2}),
    ("SELECT name[:?] FROM items WHERE id < ? ORDER BY id", [3, 8]),
]


@pytest.mark.parametrize("sql, params", QUERIES, ids=range(len(QUERIES)))
def test_same_rows_as_duckdb(engines, sql, params):
    con, oracle = engines
    assert_same_rows(con.sql(sql, params).fetchall(), oracle.execute(sql, params).fetchall())


def test_a_string_parameter_is_a_value_not_sql(engines):
    con, _ = engines
    trick = "alpha' OR '1' = '1"
    assert con.sql("SELECT count(*) FROM items WHERE grp = ?", [trick]).fetchall() == [(0,)]
    assert con.sql("SELECT ?", [trick]).fetchall() == [(trick,)]


def test_the_plan_is_not_kept_for_one_set_of_values(engines):
    con, oracle = engines
    sql = "SELECT count(*) FROM items WHERE id < ?"
    for bound in (5, 50, 500):
        assert con.sql(sql, [bound]).fetchall() == oracle.execute(sql, [bound]).fetchall()


def test_explain_and_the_one_liner(engines, sql_arrays):  # noqa: F811
    con, _ = engines
    text = con.explain("SELECT count(*) FROM items WHERE id < ?", analyze=True, params=[9])
    assert "Scan items" in text
    assert con.sql("EXPLAIN SELECT id FROM items WHERE id = ?", [3]).arrow().num_rows == 1
    got = tdbsql.query("SELECT count(*) FROM array WHERE id >= ?", sql_arrays["items"],
                       params=[100]).to_pylist()
    assert got == [{"count_star()": oracle_table(sql_arrays["items"]).filter(
        np.asarray(oracle_table(sql_arrays["items"])["id"]) >= 100).num_rows}]


SCALARS = (st.none() | st.booleans() | st.integers(-2**63, 2**63 - 1)
           | st.floats(allow_nan=False) | st.text(max_size=20)
           | st.decimals(min_value=-10**9, max_value=10**9, places=4, allow_nan=False)
           | st.dates() | st.datetimes(min_value=datetime.datetime(1, 1, 1))
           | st.binary(max_size=10))


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.lists(SCALARS, min_size=1, max_size=4))
def test_values_round_trip(values):
    """``SELECT ?, ...`` gives each value back, as DuckDB does."""
    sql = "SELECT " + ", ".join("?" for _ in values)
    got = tdbsql.connect().sql(sql, values).fetchall()
    want = duckdb.connect().execute(sql, values).fetchall()
    assert len(got) == 1
    for ours, theirs, value in zip(got[0], want[0], values):
        if isinstance(value, float):
            assert ours == theirs or math.isclose(ours, theirs, rel_tol=0, abs_tol=0)
        else:
            assert ours == theirs == value or (ours, theirs) == (value, value)


def test_nan_infinity_and_big_integers():
    con = tdbsql.connect()
    got = con.sql("SELECT ?, ?, ?, ?", [math.inf, -math.inf, 2**70, -2**63]).fetchall()[0]
    assert got[:2] == (math.inf, -math.inf)
    assert got[2] == decimal.Decimal(2**70)  # exact (DuckDB: HUGEINT), not a DOUBLE
    assert got[3] == -2**63
    assert math.isnan(con.sql("SELECT ?", [math.nan]).fetchall()[0][0])


def _kvs(tmp_path, name: str):
    """(path, a connection with it as table ``name``) of a new sparse array k -> (v, s)."""
    uri = str(tmp_path / name)
    dom = tiledb.Domain(tiledb.Dim("k", domain=(0, 99), tile=10, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, attrs=[
        tiledb.Attr("v", dtype=np.float64), tiledb.Attr("s", dtype=str, var=True)]))
    return uri, tdbsql.connect().register(name, uri)


def _tiledb_rows(uri: str) -> list[tuple]:
    with tiledb.open(uri) as A:
        data = A[:]
    return sorted(zip(data["k"].tolist(), data["v"].tolist(),
                      [s.decode() if isinstance(s, bytes) else s for s in data["s"]]))


def test_insert_and_delete_with_parameters_read_back_by_tiledb(tmp_path):
    uri, con = _kvs(tmp_path, "a")
    for k, v, s in ((1, 1.5, "one"), (2, -2.0, "it's"), (3, 3.25, "three")):
        con.sql("INSERT INTO a VALUES (?, ?, ?)", [k, v, s])
    con.sql("DELETE FROM a WHERE k = $k", {"k": 3})
    assert _tiledb_rows(uri) == [(1, 1.5, "one"), (2, -2.0, "it's")]


@pytest.mark.parametrize("sql, params, error, match", [
    ("SELECT ?, ?", [1], tdbsql.InterfaceError, "takes 2 parameters, but 1 was given"),
    ("SELECT ?", None, tdbsql.InterfaceError, r"has parameters \(1 \?\)"),
    ("SELECT 1", [1], tdbsql.InterfaceError, "has no parameters, but 1 was given"),
    ("SELECT ?", {"a": 1}, tdbsql.InterfaceError, "take a list or tuple of values, not dict"),
    ("SELECT ?", "ab", tdbsql.InterfaceError, "not str"),
    ("SELECT $a", [1], tdbsql.InterfaceError, "take a dict of values, not list"),
    ("SELECT $a, $b", {"a": 1}, tdbsql.InterfaceError, r"no value for \$b"),
    ("SELECT $a", {"a": 1, "c": 2}, tdbsql.InterfaceError, r"no parameter named \$c"),
    ("SELECT $0", [1], tdbsql.InterfaceError, r"count from \$1"),
    ("SELECT $2", [1], tdbsql.InterfaceError, "takes 2 parameters, but 1 was given"),
    ("SELECT ?, $1", [1], tdbsql.SqlError, "one style of parameter"),
    ("SELECT ?", [object()], tdbsql.InterfaceError, "a object cannot be a SQL value"),
    ("SELECT ?", [datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)],
     tdbsql.UnsupportedSql, "time zone"),
    ("SELECT ?", [10**40], tdbsql.InterfaceError, "more than 38 digits"),
])
def test_errors_name_the_problem(sql, params, error, match):
    with pytest.raises(error, match=match):
        tdbsql.connect().sql(sql, params).fetchall()


def test_non_text_statements_and_names_are_type_errors():
    con = tdbsql.connect()
    with pytest.raises(TypeError, match="must be a str, not NoneType"):
        con.sql(None)
    with pytest.raises(TypeError, match="non-empty str"):
        con.register("", "x")


def test_executemany_inserts_every_set_as_one_fragment(tmp_path):
    """INSERT ... VALUES of one row of placeholders, many sets of values: one write (one
    fragment), read back by ``tiledb``; a set of the wrong size writes nothing."""
    uri, con = _kvs(tmp_path, "m")
    rows = [(1, 1.5, "one"), (2, -2.0, "it's"), (3, 3.25, "three")]
    assert con.executemany("INSERT INTO m VALUES (?, ?, ?)", rows).fetchall() == [(3,)]
    assert _tiledb_rows(uri) == rows
    fragments = lambda: len(tiledb.array_fragments(uri))  # noqa: E731
    assert fragments() == 1
    with pytest.raises(tdbsql.InterfaceError, match="takes 3 parameters, but 2 were given"):
        con.executemany("INSERT INTO m VALUES (?, ?, ?)", [(4, 4.0, "four"), (5, 5.0)])
    assert fragments() == 1
    # named values, and any other statement once per set (the last set's result)
    con.executemany("INSERT INTO m VALUES ($k, $v, $s)", [{"k": 9, "v": 0.5, "s": "nine"}])
    assert con.executemany("SELECT s FROM m WHERE k = ?", [(1,), (9,)]).fetchall() == [("nine",)]
    with pytest.raises(tdbsql.InterfaceError, match="at least one set"):
        con.executemany("SELECT ?", [])
