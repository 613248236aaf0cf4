"""The `tdbsql` command: every subcommand, output format and error path, in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

SAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "stations")


def run(*args, stdin: str | None = None, env: dict | None = None):
    return subprocess.run([sys.executable, "-m", "tdbsql", *args], capture_output=True, text=True,
                          input=stdin, env={**os.environ, **(env or {})}, timeout=120)


def test_query_table_output():
    proc = run("query", "SELECT day, station, city FROM array WHERE day = 26 AND station <= 2", SAMPLE)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["day", "|", "station", "|", "city"]
    assert lines[-1] == "(2 rows)"
    assert "Oslo" in proc.stdout and "Lima" in proc.stdout


def test_a_table_with_two_columns_of_one_name():
    """Columns are printed by position (a self join's a.day, b.day): rows as dicts merged
    them, an internal error."""
    proc = run("query", "SELECT a.day, b.day FROM array a JOIN array b ON a.day = b.day + 1 "
               "AND a.station = b.station WHERE a.day = 26 AND a.station = 1", SAMPLE)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[2].split() == ["26", "|", "25"]


def test_float_values_print_as_duckdb_prints_them():
    """A FLOAT (float32) cell shows its shortest digits (12.7), not the float64 it widens to
    (12.699999809265137), in the table and in JSON lines."""
    from tdbsql.output import render_json, render_table

    table = pa.table({"f": pa.array([12.7, 1e20, None], pa.float32()),
                      "d": pa.array([12.7, 0.1, 2.5])})
    lines = render_table(table).splitlines()
    assert [line.split("|")[0].strip() for line in lines[2:5]] == ["12.7", "1e+20", "NULL"]
    assert [line.split("|")[1].strip() for line in lines[2:5]] == ["12.7", "0.1", "2.5"]
    assert [json.loads(line)["f"] for line in render_json(table).splitlines()] == \
        [12.7, 1e20, None]


@pytest.mark.parametrize("fmt, want", [("table", "24:00:00 | 10:00:00.500000"),
                                       ("csv", '"24:00:00",10:00:00.500000'),
                                       ("json", '{"t": "24:00:00", "u": "10:00:00.500000"}')])
def test_the_end_of_the_day_prints_as_duckdb_prints_it(fmt, want):
    """TIME '24:00:00' (DuckDB's end of the day, Arrow's one past its last time of day) has no
    Python time and no Arrow text: it printed as 00:00:00 or Arrow's '<value out of range>'."""
    proc = run("query", "SELECT TIME '24:00:00' AS t, TIME '10:00:00.5' AS u", "--format", fmt)
    assert proc.returncode == 0, proc.stderr
    assert want in proc.stdout


def test_query_sql_from_stdin_and_csv():
    proc = run("query", "-", SAMPLE, "--format", "csv",
               stdin="SELECT day, station FROM array WHERE day = 0 ORDER BY station")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ['"day","station"'] + [f"0,{s}" for s in range(1, 6)]


def test_csv_writes_a_list_column_as_duckdb_prints_it():
    """A quantile list (or any list) in CSV is its text, quoted, as DuckDB's COPY writes it
    (Arrow's CSV writer has no list type: it was an internal error)."""
    proc = run("query", "SELECT station, quantile_disc(day, [0.0, 1.0]) AS q, ['x', NULL] AS l "
               "FROM array WHERE station = 1 GROUP BY station", SAMPLE, "-f", "csv")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ['"station","q","l"', '1,"[0, 44]","[x, NULL]"']


def test_csv_of_a_list_column_before_any_query():
    """``render_csv`` used on its own in a fresh process (a library caller): the engine's
    function modules load in their order, not in a circular import."""
    code = ("import pyarrow as pa; from tdbsql.output import render_csv; "
            "print(render_csv(pa.table({'l': pa.array([[1, None]])})), end='')")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ['"l"', '"[1, NULL]"']


def test_csv_writes_every_digit_of_a_decimal_scale():
    """A DECIMAL of scale > 6 in CSV is DuckDB's text of it (quoted), not Arrow's exponent
    (``1.500E-9``, ``0E-12``); one of scale <= 6 never has one and stays a bare number."""
    import decimal

    import duckdb

    from tdbsql.output import render_csv

    values = ["0", "1.5E-9", "-3E-12", "12.5"]
    table = pa.table({"d": pa.array([decimal.Decimal(v) for v in values] + [None],
                                    pa.decimal128(18, 12)),
                      "m": pa.array([decimal.Decimal("1.25")] * 5, pa.decimal128(10, 2))})
    oracle = duckdb.connect()
    texts = [oracle.execute(f"SELECT CAST({v} AS DECIMAL(18, 12))::VARCHAR").fetchone()[0]
             for v in values]
    assert render_csv(table).splitlines() == \
        ['"d","m"'] + [f'"{t}",1.25' for t in texts] + [",1.25"]
    assert texts[1] == "0.000000001500"


def test_query_json_lines():
    proc = run("query", "SELECT day, rain_mm FROM array WHERE day = 1 ORDER BY station", SAMPLE,
               "-f", "json")
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["day"] for r in rows] == [1] * 5
    assert any(r["rain_mm"] is None for r in rows)


@pytest.mark.parametrize("fmt", ["parquet", "arrow"])
def test_query_binary_formats(tmp_path, fmt):
    out = tmp_path / f"out.{fmt}"
    proc = run("query", "SELECT * FROM array WHERE day < 3", SAMPLE, "-f", fmt, "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    table = pq.read_table(out) if fmt == "parquet" else pa.ipc.open_file(str(out)).read_all()
    assert table.num_rows == 15
    assert table.column_names == ["day", "station", "temp_c", "rain_mm", "city"]


def test_as_of_option():
    before = run("query", "SELECT day FROM array", SAMPLE, "--as-of", "1500", "-f", "csv")
    after = run("query", "SELECT day FROM array", SAMPLE, "-f", "csv")
    assert len(before.stdout.splitlines()) - 1 == 150
    assert len(after.stdout.splitlines()) - 1 == 225


def test_schema_and_fragments():
    schema = run("schema", SAMPLE, "--json")
    assert schema.returncode == 0, schema.stderr
    described = json.loads(schema.stdout)
    assert described["type"] == "sparse"
    assert [d["name"] for d in described["dimensions"]] == ["day", "station"]
    assert [a["name"] for a in described["attributes"]] == ["temp_c", "rain_mm", "city"]
    frags = run("fragments", SAMPLE, "-f", "csv")
    assert frags.returncode == 0, frags.stderr
    assert len(frags.stdout.splitlines()) == 3


@pytest.mark.parametrize("args,message", [
    (("query", "SELECT nope FROM array", SAMPLE), "unknown column 'nope'"),
    (("query", "SELEC * FROM array", SAMPLE), "SQL syntax error"),
    (("query", "SELECT * FROM other", SAMPLE), "unknown table 'other'"),
    (("query", "SELECT histogram(temp_c, [0, 10]) OVER (ORDER BY day ROWS 1 PRECEDING) "
      "FROM array", SAMPLE), "histogram(x, bins) is not supported"),
    (("query", "SELECT * FROM array", "/no/such/array"), "no such array"),
    (("schema", os.path.dirname(__file__)), "not a TileDB array"),
    (("query", "SELECT * FROM array", SAMPLE, "--key-env", "TDBSQL_NO_SUCH_VAR"), "TDBSQL_NO_SUCH_VAR"),
])
def test_errors_are_one_line_and_exit_1(args, message):
    proc = run(*args)
    assert proc.returncode == 1
    assert proc.stderr.startswith("tdbsql: error: ")
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


def test_help_lists_commands_with_examples():
    proc = run("--help")
    assert proc.returncode == 0
    for command in ("query", "schema", "fragments"):
        assert command in proc.stdout
        sub = run(command, "--help")
        assert "example:" in sub.stdout


def test_help_does_not_import_numba():
    code = "import sys; from tdbsql.cli import build_parser; build_parser(); print('numba' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.stdout.strip() == "False"


def test_schema_shows_enumerations_and_current_domain(tmp_path):
    import numpy as np
    import tiledb

    uri = str(tmp_path / "enum")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 99), tile=10, dtype=np.int64))
    schema = tiledb.ArraySchema(
        domain=dom, sparse=True,
        enums=[tiledb.Enumeration("colors", False, ["red", "green", "blue"])],
        attrs=[tiledb.Attr("c", dtype=np.int8, enum_label="colors")])
    ndr = tiledb.NDRectangle(tiledb.default_ctx(), dom)
    ndr.set_range("d", 0, 49)
    current = tiledb.CurrentDomain(tiledb.default_ctx())
    current.set_ndrectangle(ndr)
    schema.set_current_domain(current)
    tiledb.Array.create(uri, schema)
    proc = run("schema", uri, "--json")
    assert proc.returncode == 0, proc.stderr
    described = json.loads(proc.stdout)
    assert described["enumerations"] == [{"name": "colors", "values": ["red", "green", "blue"]}]
    assert described["attributes"][0]["enumeration"] == "colors"
    assert described["current_domain"] == [[0, 49]]
    text = run("schema", uri).stdout
    assert "enumeration colors: ['red', 'green', 'blue']" in text
    assert "current domain: [[0, 49]]" in text


def test_version():
    proc = run("--version")
    assert proc.returncode == 0
    assert proc.stdout.startswith("tdbsql ")


def test_the_whole_output_is_written_before_the_process_ends():
    """The command ends with ``os._exit`` (no interpreter teardown): stdout is flushed first,
    so a long result piped out arrives whole."""
    proc = run("query", "SELECT range AS i FROM range(200000)", "--format", "csv")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "\"i\"" and len(lines) == 200001 and lines[-1] == "199999"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_disk_on_stdout_is_an_error_naming_it():
    for sql in ("SELECT 1 AS x", "SELECT range AS i FROM range(100000)"):
        with open("/dev/full", "w") as full:
            proc = subprocess.run([sys.executable, "-m", "tdbsql", "query", sql], stdout=full,
                                  stderr=subprocess.PIPE, text=True, timeout=120)
        assert proc.returncode == 1
        assert proc.stderr.strip() == ("tdbsql: error: cannot write the result to standard "
                                       "output: No space left on device")


def test_a_reader_that_leaves_early_ends_the_command_quietly():
    pipe = subprocess.Popen([sys.executable, "-m", "tdbsql", "query",
                             "SELECT range AS i FROM range(2000000)", "--format", "csv"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert pipe.stdout.readline() == b"\"i\"\n"
    pipe.stdout.close()
    assert pipe.wait(timeout=120) == 0
    assert pipe.stderr.read() == b""


def test_under_a_profiler_the_process_ends_as_usual(tmp_path):
    """A profiler's (or coverage's) exit handler still writes its file: the quick exit is
    skipped while a tracer or profiler is set."""
    out = tmp_path / "run.prof"
    proc = subprocess.run([sys.executable, "-m", "cProfile", "-o", str(out), "-m", "tdbsql",
                           "query", "SELECT count(*) AS n FROM array", SAMPLE],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "225" in proc.stdout and out.stat().st_size > 0


def test_nested_values_print_as_duckdbs_text_in_the_table():
    """A list of structs or MAPs, a list of text: DuckDB's VARCHAR text in the table, not
    Python's (``None``, tuples, quoted strings)."""
    import duckdb

    items = ["[{'a': 1, 'b': NULL}, NULL]", "[MAP {'k': NULL}]", "['x', NULL]", "(1, 'a')"]
    proc = run("query", "SELECT " + ", ".join(f"{item} AS c{i}" for i, item in
                                               enumerate(items)))
    cells = [cell.strip() for cell in proc.stdout.splitlines()[2].split("|")]
    want = duckdb.sql("SELECT " + ", ".join(f"CAST({item} AS VARCHAR)" for item in items))
    assert cells == list(want.fetchall()[0])
