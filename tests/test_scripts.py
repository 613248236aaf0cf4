"""Scripts: a text of several statements runs them in order and answers the last one's
result, as DuckDB's ``con.sql`` does."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

duckdb = pytest.importorskip("duckdb")

import tdbsql  # noqa: E402
from tdbsql.errors import InterfaceError, SqlError  # noqa: E402

SAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "stations")


@pytest.fixture()
def con(tmp_path):
    path = str(tmp_path / "stations")
    shutil.copytree(SAMPLE, path)
    return tdbsql.connect().register("a", path), path


def test_a_script_answers_its_last_statement_as_duckdb(con):
    con, _ = con
    duck = duckdb.connect()
    duck.register("rows", con.sql("SELECT * FROM a").arrow())
    duck.sql("CREATE TABLE a AS SELECT * FROM rows")
    script = """CREATE VIEW wet AS SELECT city, rain_mm FROM a WHERE rain_mm > 1;
                -- a comment; with a semicolon
                SELECT ';' AS semi, city, count(*) AS n FROM wet GROUP BY city ORDER BY city;;"""
    assert con.sql(script).fetchall() == duck.sql(script).fetchall()
    assert con.sql("SELECT 1; SELECT 2;").fetchall() == [(2,)]
    assert con.sql("SELECT 'a;b'").fetchall() == [("a;b",)]  # one statement
    assert con.sql("SELECT 1; -- done").fetchall() == [(1,)]  # one, then a comment
    assert con.sql("SELECT 1; /* done */").fetchall() == [(1,)]


def test_statements_run_in_order_and_a_syntax_error_runs_none(con):
    con, path = con
    con.sql("UPDATE a SET temp_c = 0 WHERE day = 1; UPDATE a SET temp_c = temp_c + 1 "
            "WHERE day = 1")
    assert con.sql("SELECT DISTINCT temp_c FROM a WHERE day = 1").fetchall() == [(1.0,)]
    fragments = len(os.listdir(os.path.join(path, "__fragments")))
    for script in ("UPDATE a SET temp_c = 5 WHERE day = 1; SELEC 2",
                   "UPDATE a SET temp_c = 5 WHERE day = 1; EXPLAIN SELEC 2"):
        with pytest.raises(SqlError, match="SELEC"):
            con.sql(script)
    assert len(os.listdir(os.path.join(path, "__fragments"))) == fragments
    with pytest.raises(SqlError, match="unknown column 'nope'"):  # runs until it fails
        con.sql("UPDATE a SET temp_c = 5 WHERE day = 1; SELECT nope FROM a")
    assert con.sql("SELECT DISTINCT temp_c FROM a WHERE day = 1").fetchall() == [(5.0,)]


def test_parameters_belong_to_the_last_statement(con):
    con, _ = con
    assert con.sql("SELECT 1; SELECT ? + 1", [41]).fetchall() == [(42,)]
    with pytest.raises(InterfaceError, match="only supported in the last statement"):
        con.sql("SELECT ?; SELECT 1", [1])


def test_a_script_on_the_command_line(con):
    _, path = con
    proc = subprocess.run([sys.executable, "-m", "tdbsql", "query", "-", path, "-f", "csv"],
                          input="CREATE VIEW v AS SELECT * FROM array WHERE station = 1;\n"
                                "SELECT count(*) AS n FROM v;\n",
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ['"n"', "45"]
