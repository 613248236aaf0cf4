"""A subexpression repeated across an aggregate's operands is computed once (TPC-H Q1's
``price * (1 - disc)``), and results stay DuckDB's."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pytest
import sqlglot
from sqlglot import planner

import tdbsql
from sql_fixtures import assert_same_rows
from tdbsql.planner.build import build

SCHEMA = {"t": {"g": "TEXT", "a": "DOUBLE", "b": "DOUBLE", "c": "BIGINT"}}


def _operands(sql: str) -> list[str]:
    query = build(sqlglot.parse_one(sql, read="duckdb"), SCHEMA, sql)
    step = next(s for s in query.plan.dag if isinstance(s, planner.Aggregate))
    return [operand.sql() for operand in step.operands]


def test_later_operand_reads_the_earlier_one():
    operands = _operands("SELECT sum(a * (1 - b)), sum(a * (1 - b) * (1 + c)) FROM t")
    assert operands[0] == '"t"."a" * (1 - "t"."b") AS _a_0'
    assert operands[1] == '"_a_0" * (1 + "t"."c") AS _a_1'


def test_bare_columns_and_unrelated_operands_are_left_alone():
    operands = _operands("SELECT sum(a + 1), sum(b * 2), max(a) FROM t")
    assert operands == ['"t"."a" + 1 AS _a_0', '"t"."b" * 2 AS _a_1']


@pytest.mark.parametrize("sql", [
    "SELECT g, sum(a * (1 - b)) AS x, sum(a * (1 - b) * (1 + c)) AS y, "
    "avg(a * (1 - b)) AS z, count(*) AS n FROM t GROUP BY g ORDER BY g",
    "SELECT sum(coalesce(a, 0) + b), max(coalesce(a, 0) + b + c), "
    "min(abs(coalesce(a, 0) + b)) FROM t",
    "SELECT g, sum(CASE WHEN c > 1 THEN a ELSE b END), "
    "sum((CASE WHEN c > 1 THEN a ELSE b END) * 2) FROM t GROUP BY g ORDER BY g",
])
def test_results_equal_duckdb_with_nulls(sql):
    table = pa.table({"g": ["x", "y", None, "x", "y", "x"],
                      "a": [1.5, None, 3.0, 4.25, 5.0, -2.0],
                      "b": [0.1, 0.2, None, 0.4, 0.5, 0.0],
                      "c": [1, 2, 3, None, 5, 2]})
    con = tdbsql.connect()
    con.register_arrow("t", table)
    ours = con.sql(sql).fetchall()
    duck = duckdb.connect()
    duck.register("t", table)
    theirs = duck.sql(sql).fetchall()
    assert_same_rows(ours, theirs)
