"""Syntax errors read like a person wrote them.

A malformed statement raises ``SqlError`` whose message names what was found where the
statement went wrong -- a token by its text, or "end of the statement" -- and what was expected
there, with the culprit underlined; sqlglot's internals (``<Token token_type: ...>``,
``TokenType.SENTINEL``, ``<class 'sqlglot...'>``, "Required keyword") never show.  Every
statement here is one DuckDB rejects too (bar the empty ones, which DuckDB runs as nothing).
"""

from __future__ import annotations

import duckdb
import pytest

import tdbsql
from syntax_checks import LEAKS, assert_underlined, check_truncations, small_array
from tdbsql.errors import SqlError



@pytest.fixture(scope="module")
def path(tmp_path_factory):
    return small_array(str(tmp_path_factory.mktemp("syntax") / "array"))


# (SQL, the message without its underline, the text the underline covers)
CASES = [
    # truncated statements
    ("SELECT k FROM",
     "SQL syntax error: unexpected end of the statement after 'FROM'; expected a table name",
     "FROM"),
    ("SELECT k FROM array WHERE",
     "SQL syntax error: unexpected end of the statement after 'WHERE'; expected a condition",
     "WHERE"),
    ("SELECT k FROM array WHERE v >",
     "SQL syntax error: unexpected end of the statement after '>'; expected an expression", ">"),
    ("SELECT k FROM array WHERE v BETWEEN 1",
     "SQL syntax error: unexpected end of the statement after number 1; expected AND and an "
     "upper bound", "1"),
    ("SELECT k FROM array ORDER BY",
     "SQL syntax error: unexpected end of the statement after 'ORDER BY'; expected an "
     "expression", "ORDER BY"),
    ("SELECT k FROM array ORDER BY k LIMIT",
     "SQL syntax error: unexpected end of the statement after 'LIMIT'; expected a row count",
     "LIMIT"),
    # unbalanced parentheses
    ("SELECT (k + 1 FROM array",
     "SQL syntax error: unexpected 'FROM'; expected ')'", "FROM"),
    ("SELECT k FROM array WHERE k IN (1, 2",
     "SQL syntax error: unexpected end of the statement after number 2; expected ')'", "2"),
    ("SELECT k + 1) FROM array",
     "SQL syntax error: unexpected ')' with no '(' to close", ")"),
    ("SELECT k FROM array WHERE v = 1 )",
     "SQL syntax error: unexpected ')' with no '(' to close", ")"),
    # unterminated literals and comments, stray characters
    ("SELECT 'abc FROM array",
     "SQL syntax error: unterminated string literal: the ' that opens it is never closed",
     "'abc FROM array"),
    ("SELECT k FROM array WHERE s = 'it''s",
     "SQL syntax error: unterminated string literal: the ' that opens it is never closed",
     "'it''s"),
    ('SELECT "k FROM array',
     'SQL syntax error: unterminated quoted name: the " that opens it is never closed',
     '"k FROM array'),
    ("SELECT k FROM array /* no end",
     "SQL syntax error: unterminated comment: '/*' has no '*/'", "/*"),
    ("SELECT k FROM array WHERE v = $",
     "SQL syntax error: unexpected character '$'", "$"),
    # stray commas, operators, words
    ("SELECT k,, v FROM array",
     "SQL syntax error: unexpected ','; expected an expression between the commas", ","),
    ("SELECT k FROM array WHERE v = = 1",
     "SQL syntax error: unexpected '='; expected an expression", "="),
    ("SELECT k FROM array xyz abc", "SQL syntax error: unexpected 'abc'", "abc"),
    ("SELECT k FROM array LIMIT 1 2", "SQL syntax error: unexpected number 2", "2"),
    # misspelled or missing keywords
    ("SELEC k FROM array",
     "SQL syntax error: a statement cannot start with 'SELEC' (did you mean SELECT?)", "SELEC"),
    ("WITH w AS (SELECT k FROM array) SELCT * FROM w",
     "SQL syntax error: the query after WITH cannot start with 'SELCT' (did you mean SELECT?)",
     "SELCT"),
    ("SELECT k FORM array",
     "SQL syntax error: unexpected 'array' (is 'FORM' a misspelling of FROM?)", "array"),
    ("SELECT k FROM array WHRE v > 1",
     "SQL syntax error: unexpected 'v' (is 'WHRE' a misspelling of WHERE?)", "v"),
    ("SELECT s, count(*) FROM array GROUP s",
     "SQL syntax error: unexpected 's'; expected BY after GROUP", "s"),
    ("SELECT k FROM array ORDER k",
     "SQL syntax error: unexpected 'k'; expected BY after ORDER", "k"),
    ("SELECT CASE WHEN v > 1 THEN 1 FROM array",
     "SQL syntax error: unexpected 'FROM'; expected END to close the CASE", "FROM"),
    ("SELECT CAST(v AS) FROM array",
     "SQL syntax error: unexpected ')'; expected a type name", ")"),
    ("SELECT k FROM array WHERE v > 1 WHERE v < 3",
     "SQL syntax error: more than one WHERE clause", "WHERE"),
    ("SELECT lower(s, s) FROM array",
     "SQL syntax error: lower() takes at most 1 argument, got 2", "lower"),
]


@pytest.mark.parametrize("sql,message,culprit", CASES, ids=[c[0] for c in CASES])
def test_syntax_error_message(path, sql, message, culprit):
    assert_underlined(lambda text: tdbsql.query(text, path), sql, message, culprit)


@pytest.mark.parametrize("sql,message,culprit", CASES, ids=[c[0] for c in CASES])
def test_duckdb_rejects_these_too(sql, message, culprit):
    con = duckdb.connect()
    con.execute("CREATE TABLE t (k BIGINT, v BIGINT, s VARCHAR)")
    with pytest.raises(duckdb.Error):
        con.execute(sql.replace("array", "t"))


def test_the_whole_statement_is_the_error_when_it_is_empty(path):
    for sql in ("", "   \n "):
        with pytest.raises(SqlError, match="^empty SQL statement$"):
            tdbsql.query(sql, path)
    for sql in ("-- only a comment", "/* only a comment */"):
        with pytest.raises(SqlError) as caught:
            tdbsql.query(sql, path)
        assert caught.value.plain_message == "empty SQL statement: it holds only a comment"
    with pytest.raises(SqlError) as caught:
        tdbsql.query(";", path)
    assert caught.value.plain_message == "empty SQL statement"


def test_two_statements_underline_the_second(path):
    """EXPLAIN takes one statement (a query runs a script: ``test_scripts.py``)."""
    sql = "SELECT k FROM array; SELECT 1"
    with pytest.raises(SqlError) as caught:
        tdbsql.explain(sql, path)
    assert caught.value.plain_message == "expected one SQL statement, got 2"
    assert sql[slice(*caught.value.span)] == "SELECT 1"


def test_the_underline_is_on_the_culprits_line(path):
    sql = "SELECT k\nFROM array\nWHERE (v > 1"
    with pytest.raises(SqlError) as caught:
        tdbsql.query(sql, path)
    assert str(caught.value) == ("SQL syntax error: unexpected end of the statement after "
                                 "number 1; expected ')'\n  WHERE (v > 1\n             ^")


def test_the_cli_prints_the_same_message(path, capsys):
    from tdbsql.cli import main

    code = main(["query", "SELECT k FROM", path])
    assert code == 1
    err = capsys.readouterr().err
    assert "unexpected end of the statement after 'FROM'; expected a table name" in err
    assert not LEAKS.search(err)


VALID = [
    "SELECT k, v FROM array WHERE v BETWEEN 10 AND 30 AND s IN ('a', 'b') ORDER BY k DESC "
    "LIMIT 2",
    "SELECT s, count(*) AS n, sum(v) FROM array GROUP BY s HAVING count(*) > 0 ORDER BY s",
    "SELECT CASE WHEN v > 10 THEN 'big' ELSE 'small' END, CAST(v AS DOUBLE) / 3 FROM array",
    "WITH w AS (SELECT k, v FROM array) SELECT w.k FROM w JOIN array a ON a.k = w.k",
    "SELECT k, sum(v) OVER (PARTITION BY s ORDER BY k ROWS BETWEEN 1 PRECEDING AND CURRENT "
    "ROW) FROM array",
    "SELECT k FROM array WHERE v > (SELECT avg(v) FROM array) OR s LIKE 'a%'",
    "SELECT lower(s) || '-' || upper(s), coalesce(NULL, v, 0) FROM array",
]


@pytest.mark.parametrize("sql", VALID)
def test_every_truncation_reads_like_a_person_wrote_it(sql):
    """Cut a valid statement after every token (and add a stray ')', ',' or quote): either it
    still parses or the message is tdbsql's own, with a span inside the SQL."""
    from tdbsql.planner.parse import parse

    check_truncations(sql, parse)
