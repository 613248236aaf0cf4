"""``tdbsql shell`` with piped statements: each result printed in turn, errors reported and
the shell going on, dot commands."""

from __future__ import annotations

import os
import re
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


def test_modes_print_results_as_duckdb_shell_modes():
    proc = _shell(".mode csv\nSELECT 4 AS four, 'a|b' AS s;\n"
                  ".mode json\nSELECT 1 AS a, NULL AS b;\n.mode jsonlines\nSELECT 2 AS a;\n"
                  ".mode markdown\nSELECT 4 AS four, 'a|b' AS s UNION ALL SELECT 40, NULL;\n"
                  ".mode line\nSELECT 4 AS four, 'x' AS longname UNION ALL SELECT 40, NULL;\n"
                  ".mode\n.mode table\nSELECT 1 AS one;\n", SAMPLE)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        '"four","s"', '4,"a|b"',
        '{"a": 1, "b": null}', '{"a": 2}',
        "| four | s    |", "|-----:|------|", "|    4 | a\\|b |", "|   40 | NULL |",
        "    four = 4", "longname = x", "", "    four = 40", "longname = NULL",
        "current output mode: line",
        "one", "---", "  1", "(1 row)"]


def test_an_unknown_mode_is_an_error_and_the_mode_stays():
    proc = _shell(".mode csv\n.mode html\nSELECT 1 AS one;\n", SAMPLE)
    assert proc.returncode == 1
    assert "usage: .mode table|csv|json|jsonlines|line|markdown" in proc.stderr
    assert proc.stdout.splitlines() == ['"one"', "1"]


def test_read_runs_a_file_as_typed(tmp_path):
    script = tmp_path / "report.sql"
    script.write_text("-- a report\nSELECT count(*) AS n\n  FROM array WHERE station = 1;\n"
                      ".mode csv\nSELECT 2 AS two; SELECT nope;\n.quit\nSELECT 3 AS three;\n")
    proc = _shell(f".read {script}\nSELECT 4 AS four;\n.read '{tmp_path / 'none.sql'}'\n"
                  ".read\n", SAMPLE)
    assert proc.returncode == 1  # a statement of the file failed
    assert proc.stdout.splitlines() == [" n", "--", "45", "(1 row)", '"two"', "2", '"four"',
                                        "4"]  # .quit ended the file, the mode stays
    assert "unknown column 'nope'" in proc.stderr
    assert "cannot open" in proc.stderr and "none.sql" in proc.stderr
    assert "usage: .read FILE" in proc.stderr


def test_a_file_reading_itself_stops(tmp_path):
    script = tmp_path / "loop.sql"
    script.write_text(f"SELECT 1 AS one;\n.read {script}\n")
    proc = _shell(f".mode csv\n.read {script}\n", SAMPLE)
    assert proc.returncode == 1
    assert "more than 16 deep" in proc.stderr
    assert proc.stdout.splitlines().count("1") == 16


def test_output_goes_to_a_file_then_back(tmp_path):
    out = tmp_path / "out.txt"
    out.write_text("old text\n")
    proc = _shell(f".output {out}\n.mode csv\nSELECT 1 AS one;\nSELECT nope;\n.tables\n"
                  f".output\nSELECT 2 AS two;\n.output {tmp_path / 'no' / 'dir.txt'}\n"
                  "SELECT 3 AS three;\n", "-a", f"st={SAMPLE}")
    assert out.read_text().splitlines() == ['"one"', "1", "st"]  # replaced, not appended
    assert proc.stdout.splitlines() == ['"two"', "2", '"three"', "3"]
    assert "unknown column 'nope'" in proc.stderr and "cannot open" in proc.stderr


def test_timer_prints_each_statement_run_time():
    proc = _shell(".timer on\nSELECT 1 AS one;\n.timer off\nSELECT 2 AS two;\n.timer\n",
                  SAMPLE)
    lines = proc.stdout.splitlines()
    assert re.fullmatch(r"Run Time \(s\): real \d+\.\d{3} user \d+\.\d{6} sys \d+\.\d{6}",
                        lines[4])
    assert sum(line.startswith("Run Time") for line in lines) == 1
    assert "usage: .timer on|off" in proc.stderr


def test_help_lists_the_dot_commands():
    proc = _shell(".help\n", SAMPLE)
    for command in (".mode", ".read FILE", ".output [FILE]", ".timer on|off"):
        assert command in proc.stdout


def test_query_formats_line_and_markdown(capsys):
    from tdbsql.cli import main

    sql = "SELECT station, day FROM array WHERE station = 1 AND day < 2 ORDER BY day"
    assert main(["query", sql, SAMPLE, "--format", "markdown"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "| station | day |", "|--------:|----:|", "|       1 |   0 |", "|       1 |   1 |"]
    assert main(["query", sql, SAMPLE, "--format", "line"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "station = 1", "    day = 0", "", "station = 1", "    day = 1"]
