"""A malformed INSERT or DELETE gets the same syntax errors as a malformed query.

Whether it comes as a statement (``con.sql("DELETE FROM t WHERE v >")``) or as the condition
of ``tdbsql.delete(path, "v >")``, a malformed DML statement raises ``SqlError`` naming what
was found and what was expected, the culprit underlined; never sqlglot's own words
("Required keyword: ...", "Invalid expression / Unexpected token") nor a Python error from a
statement sqlglot read loosely (``DELETE t``, ``INSERT INTO VALUES``).  Nothing is written.
DuckDB rejects every statement here too, on a table of the same columns.
"""

from __future__ import annotations

import os

import duckdb
import pytest
import sqlglot

import tdbsql
from syntax_checks import LEAKS, check_truncations, small_array
from tdbsql.errors import ArrayNotFoundError, SqlError, UnsupportedSql
from tdbsql.planner.parse import parse



@pytest.fixture(scope="module")
def path(tmp_path_factory):
    return small_array(str(tmp_path_factory.mktemp("dml_syntax") / "array"))


@pytest.fixture(scope="module")
def con(path):
    return tdbsql.connect().register("t", path)


def _written(path: str) -> list[str]:
    """Every file of the array's fragment and commit folders: what a write would add to."""
    found = []
    for folder in ("__fragments", "__commits"):
        for root, _, files in os.walk(os.path.join(path, folder)):
            found += [os.path.join(root, f) for f in files]
    return sorted(found)


def _duckdb_rejects(sql: str) -> bool:
    con = duckdb.connect()
    con.execute("CREATE TABLE t (k BIGINT, v BIGINT, s VARCHAR)")
    con.execute("INSERT INTO t VALUES (0, 0, 'a'), (1, 10, 'b')")
    try:
        con.execute(sql)
    except duckdb.Error:
        return True
    return False


def _culprit(sql: str, culprit) -> tuple[int, int]:
    """``culprit`` is the underlined text, or (text, n): its n-th occurrence (from 1)."""
    text, nth = (culprit, 1) if isinstance(culprit, str) else culprit
    start = -1
    for _ in range(nth):
        start = sql.index(text, start + 1)
    return start, start + len(text)


def _check(err: SqlError, sql: str, message: str, culprit) -> None:
    assert err.plain_message == message
    assert err.span == _culprit(sql, culprit), (err.span, str(err))
    text = str(err)
    assert not LEAKS.search(text), text
    head, line, carets = text.split("\n")
    start, end = err.span
    assert head == message and line == "  " + sql
    assert carets == "  " + " " * start + "^" * (end - start)


# (statement, the message without its underline, the underlined text or (text, occurrence))
STATEMENTS = [
    # a DELETE's condition, unfinished or broken
    ("DELETE FROM t WHERE",
     "SQL syntax error: unexpected end of the statement after 'WHERE'; expected a condition",
     "WHERE"),
    ("DELETE FROM t WHERE v >",
     "SQL syntax error: unexpected end of the statement after '>'; expected an expression",
     ">"),
    ("DELETE FROM t WHERE (v > 1",
     "SQL syntax error: unexpected end of the statement after number 1; expected ')'", "1"),
    ("DELETE FROM t WHERE v > 'x",
     "SQL syntax error: unterminated string literal: the ' that opens it is never closed",
     "'x"),
    ("DELETE FROM t WHERE v > 1 )",
     "SQL syntax error: unexpected ')' with no '(' to close", ")"),
    ("DELETE FROM t WHERE v > 1 AND",
     "SQL syntax error: unexpected end of the statement after 'AND'; expected an expression",
     "AND"),
    ("DELETE FROM t WHERE v = = 1",
     "SQL syntax error: unexpected '='; expected an expression", ("=", 2)),
    ("DELETE FROM t WHERE v BETWEEN 1",
     "SQL syntax error: unexpected end of the statement after number 1; expected AND and an "
     "upper bound", "1"),
    ("DELETE FROM t WHERE v IN",
     "SQL syntax error: unexpected end of the statement after 'IN'; expected '(' and a list "
     "of values or a query after IN", "IN"),
    ("DELETE FROM t WHERE v >= 1 v < 2", "SQL syntax error: unexpected 'v'", ("v", 2)),
    ("DELETE FROM t WHERE s IN ('a', 'b'",
     "SQL syntax error: unexpected end of the statement after string 'b'; expected ')'",
     "'b'"),
    # the rest of a DELETE
    ("DELETE t WHERE v > 1",
     "SQL syntax error: unexpected 't'; expected FROM after DELETE", "t"),
    ("DELETE FROM WHERE v > 1",
     "SQL syntax error: unexpected 'WHERE'; expected a table name", "WHERE"),
    ("DELETE FROM t LIMIT WHERE v > 1",
     "SQL syntax error: unexpected 'WHERE'; expected a row count", "WHERE"),
    ("DELETE FROM t AS WHERE v > 1",
     "SQL syntax error: unexpected 'WHERE'; expected a name after AS (WHERE is a reserved "
     "word: write \"WHERE\" to use it as a name)", "WHERE"),
    # INSERT
    ("INSERT t VALUES (1, 2, 'a')",
     "SQL syntax error: unexpected 't'; expected INTO after INSERT", "t"),
    ("INSERT INTO VALUES (1, 2, 'a')",
     "SQL syntax error: unexpected 'VALUES'; expected a table name", "VALUES"),
    ("INSERT INTO t",
     "SQL syntax error: unexpected end of the statement after 't'; expected VALUES or a query",
     "t"),
    ("INSERT INTO t VALUES (1, 2",
     "SQL syntax error: unexpected end of the statement after number 2; expected ')'", "2"),
    ("INSERT INTO t VALUES ()", "SQL syntax error: unexpected ')'; expected a value", ")"),
    ("INSERT INTO t VALUES (1, 2, 'a') (3, 4, 'b')",
     "SQL syntax error: unexpected '('; expected ',' between the rows", ("(", 2)),
    ("INSERT INTO t (k, v) VALUES (1, 2) (3, 4)",
     "SQL syntax error: unexpected '('; expected ',' between the rows", ("(", 3)),
    ("INSERT INTO t VALUES (1,, 2, 'a')",
     "SQL syntax error: unexpected ','; expected an expression between the commas", (",", 2)),
    ("INSERT INTO t VALUES (1, 2, 'a') AS x",
     "SQL syntax error: unexpected 'AS' (the VALUES of an INSERT take no alias)", "AS"),
    ("INSERT INTO t () VALUES (1)",
     "SQL syntax error: unexpected ')'; expected a column name", ")"),
    ("INSERT INTO t (k v) VALUES (1, 2)",
     "SQL syntax error: unexpected 'v'; expected ',' or ')' in the list of columns", "v"),
    ("INSERT INTO t (k, v, s VALUES (1, 2, 'a')",
     "SQL syntax error: unexpected 'VALUES'; expected ')'", "VALUES"),
    ("INSERT INTO t SELECT",
     "SQL syntax error: unexpected end of the statement after 'SELECT'; expected an "
     "expression to select", "SELECT"),
    ("INSERT INTO t SELECT k + 50, v, s FROM t WHERE",
     "SQL syntax error: unexpected end of the statement after 'WHERE'; expected a condition",
     "WHERE"),
    ("INSERT INTO t SELECT k + 50, v, s FROM t LIMIT",
     "SQL syntax error: unexpected end of the statement after 'LIMIT'; expected a row count",
     "LIMIT"),
    ("INSERT INTO t SELECT t.k + 50, t.v, t.s FROM t JOIN t AS u",
     "SQL syntax error: unexpected end of the statement after 'u'; expected ON or USING (only "
     "a CROSS or NATURAL JOIN goes without a join condition)", ("u", 1)),
    # not syntax, but wrong: a column given twice
    ("INSERT INTO t (k, k, v, s) VALUES (1, 1, 2, 'a')",
     "INSERT: column 'k' is listed twice", ("k", 2)),
]


@pytest.mark.parametrize("sql,message,culprit", STATEMENTS, ids=[c[0] for c in STATEMENTS])
def test_malformed_statement(path, con, sql, message, culprit):
    before = _written(path)
    with pytest.raises(SqlError) as caught:
        con.sql(sql)
    _check(caught.value, sql, message, culprit)
    assert _written(path) == before  # nothing written


@pytest.mark.parametrize("sql,message,culprit", STATEMENTS, ids=[c[0] for c in STATEMENTS])
def test_duckdb_rejects_these_too(sql, message, culprit):
    assert _duckdb_rejects(sql)


# tdbsql.delete(path, condition): the condition alone, underlined in itself
CONDITIONS = [
    ("v >",
     "SQL syntax error: unexpected end of the condition after '>'; expected an expression",
     ">"),
    ("(v > 1", "SQL syntax error: unexpected end of the condition after number 1; expected ')'",
     "1"),
    ("v > 'x",
     "SQL syntax error: unterminated string literal: the ' that opens it is never closed",
     "'x"),
    ("v > 1 )", "SQL syntax error: unexpected ')' with no '(' to close", ")"),
    ("v > 1 AND",
     "SQL syntax error: unexpected end of the condition after 'AND'; expected an expression",
     "AND"),
    ("v IN",
     "SQL syntax error: unexpected end of the condition after 'IN'; expected '(' and a list of "
     "values or a query after IN", "IN"),
    ("v = = 1", "SQL syntax error: unexpected '='; expected an expression", ("=", 2)),
    ("v >= 1 v < 2", "SQL syntax error: unexpected 'v'", ("v", 2)),
    ("WHERE v > 1",
     "SQL syntax error: unexpected 'WHERE' (give the condition alone, without WHERE)",
     "WHERE"),
    ("v > 1; v < 2", "expected one condition, got 2", "v < 2"),
]


@pytest.mark.parametrize("where,message,culprit", CONDITIONS, ids=[c[0] for c in CONDITIONS])
def test_malformed_delete_condition(path, where, message, culprit):
    before = _written(path)
    with pytest.raises(SqlError) as caught:
        tdbsql.delete(path, where)
    _check(caught.value, where, message, culprit)
    assert _written(path) == before


@pytest.mark.parametrize("where,message,culprit", CONDITIONS, ids=[c[0] for c in CONDITIONS])
def test_duckdb_rejects_these_conditions_too(where, message, culprit):
    assert _duckdb_rejects(f"DELETE FROM t WHERE {where}")


def test_an_empty_condition(path):
    for where in ("", "  "):
        with pytest.raises(SqlError, match="^empty condition$"):
            tdbsql.delete(path, where)
    with pytest.raises(SqlError) as caught:
        tdbsql.delete(path, "-- nothing")
    assert caught.value.plain_message == "empty condition: it holds only a comment"


@pytest.mark.parametrize("where,message,culprit", [
    ("nope > 1", "unknown column 'nope' in the DELETE condition (fields: v, s, k)", "nope"),
    ("v > 'x'", "column 'v': Could not convert string 'x' to INT64", "'x'"),
    ("s = 1", "column 's' is a string: compare it with a string literal", "1"),
])
def test_condition_errors_underline_the_culprit_in_the_statement(path, con, where, message,
                                                                   culprit):
    """What the DELETE writer refuses is underlined where the user wrote it: in the
    statement for ``DELETE ... WHERE``, in the condition for ``tdbsql.delete``."""
    sql = f"DELETE FROM t WHERE {where}"
    with pytest.raises(SqlError) as caught:
        con.sql(sql)
    assert caught.value.plain_message == message
    assert sql[slice(*caught.value.span)] == culprit
    with pytest.raises(SqlError) as caught:
        tdbsql.delete(path, where)
    assert caught.value.plain_message == message
    assert where[slice(*caught.value.span)] == culprit


def test_default_values_is_refused_not_a_crash(con):
    with pytest.raises(UnsupportedSql, match="INSERT ... DEFAULT VALUES is not supported"):
        con.sql("INSERT INTO t DEFAULT VALUES")


def test_wellformed_dml_still_runs(tmp_path):
    path = small_array(str(tmp_path / "a"))
    con = tdbsql.connect().register("t", path)
    assert con.sql("INSERT INTO t (k, v, s) VALUES (10, 100, 'x'), (11, 110, 'y'),"
                   ).fetchall() == [(2,)]
    assert con.sql("INSERT INTO t SELECT k + 20, v, s FROM t WHERE k < 2").fetchall() == [(2,)]
    con.sql("DELETE FROM t AS d WHERE d.v >= 100 AND s IN ('x', 'y')")
    tdbsql.delete(path, "k BETWEEN 20 AND 20;")
    assert sorted(con.sql("SELECT k FROM t").fetchall()) == [(0,), (1,), (2,), (3,), (4,),
                                                           (21,)]


VALID = [
    "INSERT INTO t (k, v, s) VALUES (1, 10, 'a'), (2, 20, 'b')",
    "INSERT INTO t SELECT k + 50, v, s FROM t WHERE v > 10 ORDER BY k LIMIT 2",
    "DELETE FROM t WHERE v > 10 AND s IN ('a', 'b') OR k BETWEEN 1 AND 3",
    "DELETE FROM t WHERE NOT (v = 10 OR s <> 'c')",
]


@pytest.mark.parametrize("sql", VALID)
def test_every_truncation_reads_like_a_person_wrote_it(sql):
    """Cut a valid statement after every token (and add a stray ')', ',' or quote): it parses,
    or the message is tdbsql's own with a span inside the SQL -- never a Python error."""
    check_truncations(sql, parse)


@pytest.mark.parametrize("sql", VALID[2:])
def test_every_truncated_condition_reads_like_a_person_wrote_it(path, sql):
    where = sql.split(" WHERE ", 1)[1]
    cuts = sorted({t.end + 1 for t in sqlglot.tokenize(where, read="duckdb")})
    for cut in cuts:
        for broken in (where[:cut], where[:cut] + " )", where[:cut] + " 'x"):
            # a condition that does not parse is refused before the array is opened
            with pytest.raises((SqlError, ArrayNotFoundError)) as caught:
                tdbsql.delete(path + "-missing", broken)
            if isinstance(caught.value, ArrayNotFoundError):
                parse(f"DELETE FROM t WHERE {broken}")  # it did parse
                continue
            assert not LEAKS.search(str(caught.value)), (broken, str(caught.value))
            assert caught.value.plain_message.startswith("SQL syntax error: "), broken
