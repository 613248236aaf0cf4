"""``tdbsql shell`` with piped statements: each result printed in turn, errors reported and
the shell going on, dot commands."""

from __future__ import annotations

import os
import subprocess
import sys

SAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "stations")


def _shell(text: str, *args):
    return subprocess.run([sys.executable, "-m", "tdbsql", "shell", *args], input=text,
                          capture_output=True, text=True, timeout=120)


def test_piped_statements_each_answered():
    proc = _shell("SELECT count(*) AS n\n  FROM array\n WHERE station = 1;\n"
                  "CREATE VIEW v AS SELECT 'x;\ny' AS s; SELECT s FROM v;\n"
                  "SELECT 42 AS answer", SAMPLE)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[:4] == [" n", "--", "45", "(1 row)"]
    assert "x;" in proc.stdout and "answer" in proc.stdout and "42" in lines[-2]
    assert "Count" not in proc.stdout  # CREATE prints nothing


def test_an_error_is_reported_and_the_shell_goes_on():
    proc = _shell("SELECT nope FROM array;\nSELECT 1 AS one;\n", SAMPLE)
    assert proc.returncode == 1  # piped input: a statement failed
    assert "unknown column 'nope'" in proc.stderr
    assert proc.stdout.splitlines()[:3] == ["one", "---", "  1"]


def test_dot_commands():
    proc = _shell(".tables\n.schema st\n.nope\n.help\n.quit\nSELECT 1;\n", "-a",
                  f"st={SAMPLE}")
    assert proc.stdout.splitlines()[0] == "st"
    assert "temp_c" in proc.stdout and "dimension 1 of 2" in proc.stdout
    assert "unknown command '.nope'" in proc.stderr
    assert "Statements end with ';'" in proc.stdout
    assert "(1 row)" not in proc.stdout  # .quit left before the SELECT


def test_blank_lines_and_comments_are_nothing_to_run():
    proc = _shell("\n-- a report\n/* header */\n\nSELECT 1 AS one;\n\n", SAMPLE)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[:3] == ["one", "---", "  1"]


def test_each_statement_of_a_line_runs_and_a_plan_prints_as_text():
    proc = _shell("SELECT nope; SELECT 2 AS two;\n"
                  "EXPLAIN SELECT count(*) FROM array WHERE day < 3;\n.schema\n", SAMPLE)
    assert proc.returncode == 1
    assert "unknown column 'nope'" in proc.stderr and "usage: .schema NAME" in proc.stderr
    assert proc.stdout.splitlines()[:3] == ["two", "---", "  2"]
    assert "Logical plan:" in proc.stdout and 'Pushed: "array"."day" < 3' in proc.stdout
