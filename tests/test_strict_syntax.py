"""What sqlglot reads but DuckDB refuses is a syntax error, not a different statement run.

sqlglot is lenient where DuckDB is not: it takes a reserved word for an alias
(``SELECT k FROM array LIMIT`` ran as the table aliased ``LIMIT``, with no limit), reads a
JOIN without ON or USING as a cross join, drops an ``AS`` naming nothing, closes parentheses
left open, reads a bare ``FETCH`` as ``LIMIT 1``, ``k IN`` as ``k IN ()`` and ``OVER`` as
``OVER ()``, and fills in a window frame's missing bounds.  tdbsql refuses each with an
``SqlError`` underlining the word at fault -- and DuckDB rejects every statement here too.
Quoted names, reserved words after ``AS`` in a select list, and CROSS / NATURAL / comma joins
still work, as in DuckDB.
"""

from __future__ import annotations

import re

import duckdb
import pytest

import tdbsql
from syntax_checks import assert_underlined, small_array
from tdbsql.errors import SqlError
from tdbsql.planner import parse as P


@pytest.fixture(scope="module")
def path(tmp_path_factory):
    return small_array(str(tmp_path_factory.mktemp("strict") / "array"))


@pytest.fixture(scope="module")
def duck():
    con = duckdb.connect()
    con.execute('CREATE TABLE "array" (k BIGINT, v BIGINT, s VARCHAR)')
    con.execute("""INSERT INTO "array" VALUES (0, 0, 'a'), (1, 10, 'b'), (2, 20, 'c'),
                   (3, 30, 'd'), (4, 40, 'e')""")
    return con


def _duck_sql(sql: str) -> str:
    """``array`` is a reserved word in DuckDB: the table is ``"array"`` there."""
    return re.sub(r'(?<![\w."])array(?![\w"])', '"array"', sql)


JOIN_NOTE = "only a CROSS or NATURAL JOIN goes without a join condition"

# (SQL over the table ``array``, the message without its underline, the underlined text)
CASES = [
    # a reserved word taken for an alias: an unfinished clause ...
    ("SELECT k FROM array LIMIT",
     "SQL syntax error: unexpected end of the statement after 'LIMIT'; expected a row count",
     "LIMIT"),
    ("SELECT k FROM array OFFSET",
     "SQL syntax error: unexpected end of the statement after 'OFFSET'; expected a row count",
     "OFFSET"),
    ("SELECT k FROM array ORDER",
     "SQL syntax error: unexpected end of the statement after 'ORDER'; expected BY after ORDER",
     "ORDER"),
    ("SELECT k FROM array GROUP",
     "SQL syntax error: unexpected end of the statement after 'GROUP'; expected BY after GROUP",
     "GROUP"),
    ("SELECT * FROM (SELECT k FROM array) LIMIT",
     "SQL syntax error: unexpected end of the statement after 'LIMIT'; expected a row count",
     "LIMIT"),
    ("SELECT k limit",
     "SQL syntax error: unexpected end of the statement after 'limit'; expected a row count",
     "limit"),
    # ... or a name that must be quoted
    ("SELECT k FROM array TRUE",
     "SQL syntax error: unexpected 'TRUE' (TRUE is a reserved word: write \"TRUE\" to use it "
     "as a name)", "TRUE"),
    ("SELECT k FROM array AS limit",
     "SQL syntax error: unexpected 'limit' (LIMIT is a reserved word: write \"limit\" to use it "
     "as a name)", "limit"),
    ("SELECT k FROM array AS join",
     "SQL syntax error: unexpected 'join' (JOIN is a reserved word: write \"join\" to use it "
     "as a name)", "join"),
    ("SELECT k FROM array a (limit)",
     "SQL syntax error: unexpected 'limit' (LIMIT is a reserved word: write \"limit\" to use it "
     "as a name)", "limit"),
    ("WITH window AS (SELECT k FROM array) SELECT * FROM window",
     "SQL syntax error: unexpected 'window' (WINDOW is a reserved word: write \"window\" to use "
     "it as a name)", "window"),
    ("SELECT k year FROM array",
     "SQL syntax error: unexpected 'year' (YEAR can be a column alias only after AS: write AS "
     "year)", "year"),
    ("SELECT k FROM array AS LIMIT 1",
     "SQL syntax error: unexpected 'LIMIT'; expected a name after AS (LIMIT is a reserved "
     "word: write \"LIMIT\" to use it as a name)", "LIMIT"),
    # AS naming nothing
    ("SELECT k FROM array AS",
     "SQL syntax error: unexpected end of the statement after 'AS'; expected a name after AS",
     "AS"),
    ("SELECT k AS, v FROM array",
     "SQL syntax error: unexpected ','; expected a name after AS", ","),
    ("SELECT * FROM (SELECT k FROM array) AS",
     "SQL syntax error: unexpected end of the statement after 'AS'; expected a name after AS",
     "AS"),
    # JOIN without a join condition, or CROSS / NATURAL JOIN with one
    ("SELECT a.k FROM array a JOIN array b",
     "SQL syntax error: unexpected end of the statement after 'b'; expected ON or USING "
     f"({JOIN_NOTE})", "b"),
    ("SELECT a.k FROM array a LEFT JOIN array b",
     "SQL syntax error: unexpected end of the statement after 'b'; expected ON or USING "
     f"({JOIN_NOTE})", "b"),
    ("SELECT a.k FROM array a FULL OUTER JOIN array b",
     "SQL syntax error: unexpected end of the statement after 'b'; expected ON or USING "
     f"({JOIN_NOTE})", "b"),
    ("SELECT a.k FROM array a INNER JOIN array b WHERE a.k = b.k",
     f"SQL syntax error: unexpected 'WHERE'; expected ON or USING ({JOIN_NOTE})", "WHERE"),
    ("SELECT a.k FROM array a JOIN array b JOIN array c ON b.k = c.k",
     f"SQL syntax error: unexpected 'JOIN'; expected ON or USING ({JOIN_NOTE})", " JOIN"),
    ("SELECT a.k FROM array a JOIN array b ON a.k = b.k JOIN array c",
     "SQL syntax error: unexpected end of the statement after 'c'; expected ON or USING "
     f"({JOIN_NOTE})", "c"),
    ("SELECT a.k FROM array a JOIN array b ON",
     "SQL syntax error: unexpected end of the statement after 'ON'; expected a join condition",
     "ON"),
    ("SELECT a.k FROM array a LEFT JOIN array b ON",
     "SQL syntax error: unexpected end of the statement after 'ON'; expected a join condition",
     "ON"),
    ("SELECT a.k FROM array a JOIN array b ON WHERE a.k > 1",
     "SQL syntax error: unexpected 'WHERE'; expected a join condition", "WHERE"),
    ("SELECT a.k FROM array a JOIN array b USING",
     "SQL syntax error: unexpected end of the statement after 'USING'; expected '(' and the "
     "names of the columns to join on", "USING"),
    ("SELECT a.k FROM array a JOIN array b USING ()",
     "SQL syntax error: unexpected ')'; expected a column name", ")"),
    ("SELECT a.k FROM array a CROSS JOIN array b ON a.k = b.k",
     "SQL syntax error: unexpected 'ON' (a CROSS JOIN takes no join condition)", "ON"),
    ("SELECT a.k FROM array a NATURAL JOIN array b USING (k)",
     "SQL syntax error: unexpected 'USING' (a NATURAL JOIN takes no join condition)", "USING"),
    # nothing selected, parentheses left open, DISTINCT of nothing
    ("SELECT",
     "SQL syntax error: unexpected end of the statement after 'SELECT'; expected an "
     "expression to select", "SELECT"),
    ("SELECT FROM array", "SQL syntax error: unexpected 'FROM'; expected an expression to "
     "select", "FROM"),
    ("SELECT DISTINCT FROM array", "SQL syntax error: unexpected 'FROM'; expected an "
     "expression to select", "FROM"),
    ("SELECT , k FROM array", "SQL syntax error: unexpected ','; expected an expression to "
     "select", ","),
    ("SELECT max(v",
     "SQL syntax error: unexpected end of the statement after 'v'; expected ')'", "v"),
    ("SELECT count(DISTINCT) FROM array",
     "SQL syntax error: unexpected ')'; expected an expression after DISTINCT", ")"),
    ("SELECT k FROM array GROUP BY , k",
     "SQL syntax error: unexpected ',' after 'GROUP BY'; expected an expression", ","),
    # FETCH, IN, OVER and window frames left unfinished
    ("SELECT k FROM array FETCH",
     "SQL syntax error: unexpected end of the statement after 'FETCH'; expected FIRST or NEXT "
     "after FETCH", "FETCH"),
    ("SELECT k FROM array FETCH FIRST",
     "SQL syntax error: unexpected end of the statement after 'FIRST'; expected ROWS ONLY",
     "FIRST"),
    ("SELECT k FROM array ORDER BY k FETCH FIRST 2 ROWS",
     "SQL syntax error: unexpected end of the statement after 'ROWS'; expected ONLY after ROWS",
     "ROWS"),
    ("SELECT k FROM array WHERE k IN",
     "SQL syntax error: unexpected end of the statement after 'IN'; expected '(' and a list "
     "of values or a query after IN", "IN"),
    ("SELECT k IN FROM array",
     "SQL syntax error: unexpected 'FROM'; expected '(' and a list of values or a query after "
     "IN", "FROM"),
    ("SELECT rank() OVER FROM array",
     "SQL syntax error: unexpected 'FROM'; expected '(' and a window, or a window name, after "
     "OVER", "FROM"),
    ("SELECT sum(v) OVER (ORDER BY k ROWS) FROM array",
     "SQL syntax error: unexpected ')'; expected UNBOUNDED PRECEDING, CURRENT ROW, or an "
     "offset and PRECEDING or FOLLOWING", ")"),
    ("SELECT sum(v) OVER (ORDER BY k RANGE BETWEEN 1 ) FROM array",
     "SQL syntax error: unexpected ')'; expected PRECEDING or FOLLOWING", ")"),
    ("SELECT sum(v) OVER (ORDER BY k ROWS BETWEEN 1 PRECEDING AND ) FROM array",
     "SQL syntax error: unexpected ')'; expected UNBOUNDED PRECEDING, CURRENT ROW, or an "
     "offset and PRECEDING or FOLLOWING", " )"),
    # one plain word
    ("SELEC k", "SQL syntax error: a statement cannot start with 'SELEC' (did you mean "
     "SELECT?)", "SELEC"),
]


@pytest.mark.parametrize("sql,message,culprit", CASES, ids=[c[0] for c in CASES])
def test_refused_with_the_word_underlined(path, sql, message, culprit):
    assert_underlined(lambda text: tdbsql.query(text, path), sql, message, culprit.strip())


@pytest.mark.parametrize("sql,message,culprit", CASES, ids=[c[0] for c in CASES])
def test_duckdb_rejects_these_too(duck, sql, message, culprit):
    with pytest.raises(duckdb.Error):
        duck.execute(_duck_sql(sql))


ACCEPTED = [
    'SELECT k AS "limit", v AS "order" FROM array ORDER BY "limit"',
    'SELECT "limit".k FROM array AS "limit" ORDER BY 1',
    'SELECT k "limit" FROM array ORDER BY 1',
    "SELECT k AS limit, v AS year, s AS from FROM array ORDER BY 1",  # any word after AS
    "SELECT k AS y, count(*) AS n FROM array a GROUP BY k ORDER BY k LIMIT 2 OFFSET 1",
    "WITH w AS (SELECT k FROM array) SELECT w.k FROM w, array b WHERE w.k = b.k ORDER BY 1",
    "SELECT count(*) FROM array a CROSS JOIN array b",
    "SELECT count(*) FROM array a, array b",
    "SELECT a.k, b.v FROM array a JOIN array b ON a.k = b.k ORDER BY 1",
    "SELECT a.k FROM array a LEFT JOIN array b USING (k) ORDER BY 1",
    "SELECT a.k FROM array a JOIN array b USING (k,) ORDER BY 1",
    "SELECT k FROM array ORDER BY k FETCH FIRST ROW ONLY",
    "SELECT k FROM array ORDER BY k OFFSET 1 ROWS FETCH NEXT 2 ROWS ONLY",
    "SELECT k, sum(v) OVER (ORDER BY k ROWS 1 PRECEDING) FROM array ORDER BY k",
    "SELECT k, sum(v) OVER (ORDER BY k NULLS FIRST RANGE BETWEEN UNBOUNDED PRECEDING AND "
    "CURRENT ROW) FROM array ORDER BY k",
    "SELECT k, sum(v) OVER w FROM array WINDOW w AS (ORDER BY k ROWS BETWEEN (1 + 1) PRECEDING "
    "AND 1 FOLLOWING) ORDER BY k",
    "SELECT k, v, k IS DISTINCT FROM 1 FROM array WHERE k IN (1, 2, 3) ORDER BY k",
    "SELECT k, v FROM array ORDER BY k,",
]


@pytest.mark.parametrize("sql", ACCEPTED)
def test_what_duckdb_accepts_still_runs(path, duck, sql):
    got = tdbsql.query(sql, path)
    assert list(zip(*(c.to_pylist() for c in got.columns))) == \
        duck.execute(_duck_sql(sql)).fetchall()


def test_natural_join_is_no_syntax_error(path, duck):
    sql = "SELECT a.k FROM array a NATURAL JOIN array b ORDER BY a.k"
    got = tdbsql.query(sql, path)
    assert got.column("k").to_pylist() == [k for k, in duck.execute(_duck_sql(sql)).fetchall()]


# -- every DuckDB keyword in every alias position ---------------------------------------------

FORMS = {  # where a word stands as a name, and whether it is a table alias (DuckDB's ColId)
    "SELECT k FROM t {}": True,
    "SELECT k FROM t {} WHERE k > 0": True,
    "SELECT k FROM t AS {}": True,
    "SELECT * FROM (SELECT k FROM t) {}": True,
    "SELECT x.k FROM t AS x({})": True,
    "WITH {} AS (SELECT k FROM t) SELECT 1": True,
    "SELECT k {} FROM t": False,
    "SELECT k {}": False,
}


def _keywords(duck) -> list[str]:
    return sorted({row[0] for row in duck.execute("SELECT keyword_name FROM duckdb_keywords()")
                   .fetchall()})


def _duck_parses(duck, sql: str) -> bool:
    try:
        duck.extract_statements(sql)
    except duckdb.ParserException:
        return False
    return True


def _tdbsql_parses(sql: str) -> bool:
    try:
        P.parse(sql)
    except SqlError:
        return False
    return True


def test_no_keyword_duckdb_refuses_as_a_name_is_taken_for_one(duck):
    """For every DuckDB keyword in every alias position: DuckDB refuses it there => tdbsql
    refuses it too (sqlglot alone would read most of them as the alias)."""
    lax = [form.format(word) for word in _keywords(duck) for form in FORMS
           if not _duck_parses(duck, form.format(word)) and _tdbsql_parses(form.format(word))]
    assert lax == []


def test_the_refused_words_are_duckdbs(duck):
    """Each word tdbsql refuses as an alias DuckDB refuses there too; quoted, both engines
    take it; after AS in a select list, both take it (bar NOT and SELECT, which sqlglot
    cannot read there)."""
    for word in sorted(P._NOT_ALIASES):
        for form, table in FORMS.items():
            if table:
                assert not _duck_parses(duck, form.format(word.lower())), (form, word)
    for word in sorted(P._NOT_BARE_LABELS):
        assert not _duck_parses(duck, f"SELECT k {word.lower()} FROM t"), word
        for form in FORMS:
            quoted = form.format(f'"{word.lower()}"')
            assert _duck_parses(duck, quoted) and _tdbsql_parses(quoted), quoted
        after_as = f"SELECT k AS {word.lower()} FROM t"
        assert _duck_parses(duck, after_as), word
        assert _tdbsql_parses(after_as) or word in ("NOT", "SELECT"), word
