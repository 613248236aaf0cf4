"""planner.pushdown.implied_filters: single-table filters implied by a disjunction over several
tables, and that pushing them never changes a result (outer joins included), against DuckDB."""

from __future__ import annotations

import duckdb
import pytest
from sqlglot import parse_one

import tdbsql
from sql_fixtures import oracle_table, sql_arrays  # noqa: F401 - the session fixture
from tdbsql.planner.pushdown import implied_filters


def _implied(sql: str) -> dict[str, str]:
    return {alias: node.sql() for alias, node in implied_filters(parse_one(sql))}


def test_every_disjunct_must_constrain_the_table():
    got = _implied("(p.a = l.b AND p.x = 1 AND l.y < 3) OR (p.a = l.b AND p.x = 2 AND l.y > 5) "
                   "OR (p.a = l.b AND (p.x = 3 OR p.w = 1))")
    assert got == {"p": "p.x = 1 OR p.x = 2 OR (p.x = 3 OR p.w = 1)"}  # l: not in the third


def test_parts_of_a_disjunct_stay_together():
    got = _implied("(a.x = 1 AND a.y = 2 AND b.z = 3) OR (a.x = 4 AND b.z = 5 AND b.w = 6)")
    assert got == {"a": "(a.x = 1 AND a.y = 2) OR a.x = 4", "b": "b.z = 3 OR (b.z = 5 AND b.w = 6)"}


@pytest.mark.parametrize("sql", [
    "a.x = 1 AND b.y = 2",  # not a disjunction
    "a.x = 1 OR b.y = 2",  # no table in every disjunct
    "(a.x = 1 AND b.y IN (SELECT 1)) OR (a.x = 2 AND b.y = 3)",  # a subquery: left alone
])
def test_nothing_implied(sql):
    assert _implied(sql) == {}


@pytest.fixture(scope="module")
def engines(sql_arrays):
    con, oracle = tdbsql.connect(), duckdb.connect()
    for name in ("emp", "dept"):
        con.register(name, sql_arrays[name])
        oracle.register(name, oracle_table(sql_arrays[name]))
    return con, oracle


@pytest.mark.parametrize("join", ["JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN"])
def test_pushed_implications_keep_results(engines, join):
    """On the NULL-supplying side of an outer join nothing is pushed: the WHERE must see the
    NULL rows the join makes (d.city IS NULL holds for them)."""
    con, oracle = engines
    sql = (f"SELECT e.ename, d.dname FROM emp e {join} dept d ON e.dept_id = d.dept_id "
           "WHERE (d.city IS NULL AND e.salary > 3000) OR (d.budget > 1000 AND e.salary < 5000) "
           "OR (d.dname LIKE 'S%' AND e.ename IS NOT NULL)")
    assert sorted(con.sql(sql).fetchall(), key=str) == \
        sorted(oracle.sql(sql).fetchall(), key=str)


def test_terms_every_disjunct_shares_become_filters_of_their_own():
    """(A AND B) OR (A AND C) implies A and (B OR C) on that table (TPC-H Q19's l_shipinstruct):
    the shared term alone can use zone maps and stored-value filters."""
    got = implied_filters(parse_one(
        "(l.i = 'D' AND l.q < 5 AND p.b = 1) OR (l.i = 'D' AND l.q > 9 AND p.b = 2)"))
    assert [(a, n.sql()) for a, n in got] == [
        ("l", "l.i = 'D'"), ("l", "l.q < 5 OR l.q > 9"), ("p", "p.b = 1 OR p.b = 2")]
    only_shared = implied_filters(parse_one("(a.x = 1 AND b.y = 2) OR (a.x = 1 AND b.y = 3)"))
    assert [(a, n.sql()) for a, n in only_shared] == [("a", "a.x = 1"), ("b", "b.y = 2 OR b.y = 3")]
