"""The documented `tdbsql` commands and options, with real outputs: `explain [--analyze]`,
`query` with `--array NAME=PATH`, `--as-of`/`--timestamp` and every `--format` to `--output`,
`consolidate --timestamp T1,T2`, `consolidate`/`vacuum --dry-run`, and the error paths (one line,
exit 1, no traceback).  Mostly in process through ``tdbsql.cli.main``; a few end to end as
``python -m tdbsql``.  The arrays are written by the ``tiledb`` package, which is also the oracle
for what a read at a timestamp returns."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest

import tdbsql
from tdbsql import cli
from tdbsql.storage.locking import LOCK_FILE

tiledb = pytest.importorskip("tiledb")

# readings: three fragments at known timestamps, the later ones overwriting cells of the earlier.
WRITES = ((1000, [0, 1, 2, 3], [10, 11, 12, 13], "a"),
          (2000, [2, 3, 4], [22, 23, 24], "b"),
          (3000, [5], [35], "c"))
LATEST = {"k": [0, 1, 2, 3, 4, 5], "v": [10, 11, 22, 23, 24, 35],
          "x": [10.5, 11.5, 22.5, 23.5, 24.5, 35.5], "s": ["a0", "a1", "b2", "b3", "b4", "c5"]}
SCHEMA = pa.schema([("k", pa.int64()), ("v", pa.int64()), ("x", pa.float64()), ("s", pa.string())])
SITES_TIMESTAMP = 5000  # after every readings write: an --as-of on PATH must not reach it


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    """``tdbsql ARGV`` in this process: (exit code, stdout, stderr)."""
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def run_process(*args: str) -> subprocess.CompletedProcess:
    """``python -m tdbsql ARGS``, as a user types it."""
    return subprocess.run([sys.executable, "-m", "tdbsql", *args], capture_output=True,
                          text=True, timeout=300)


def make_readings(uri: str, metadata: bool = False) -> str:
    dom = tiledb.Domain(tiledb.Dim("k", domain=(0, 99), tile=10, dtype=np.int64))
    schema = tiledb.ArraySchema(domain=dom, sparse=True, attrs=[
        tiledb.Attr("v", dtype=np.int64), tiledb.Attr("x", dtype=np.float64),
        tiledb.Attr("s", dtype=str)])
    tiledb.Array.create(uri, schema)
    for ts, ks, vs, prefix in WRITES:
        with tiledb.open(uri, "w", timestamp=ts) as array:
            array[np.array(ks, dtype=np.int64)] = {
                "v": np.array(vs, dtype=np.int64), "x": np.array(vs, dtype=np.float64) + 0.5,
                "s": np.array([f"{prefix}{k}" for k in ks], dtype=object)}
    if metadata:
        for ts, (name, value) in ((1100, ("unit", "mm")), (2100, ("source", "gauge"))):
            with tiledb.open(uri, "w", timestamp=ts) as array:
                array.meta[name] = value
    return uri


def make_sites(uri: str) -> str:
    dom = tiledb.Domain(tiledb.Dim("k", domain=(0, 99), tile=10, dtype=np.int64))
    schema = tiledb.ArraySchema(domain=dom, sparse=True, attrs=[
        tiledb.Attr("w", dtype=np.int64), tiledb.Attr("name", dtype=str)])
    tiledb.Array.create(uri, schema)
    with tiledb.open(uri, "w", timestamp=SITES_TIMESTAMP) as array:
        array[np.array([1, 2, 3, 4], dtype=np.int64)] = {
            "w": np.array([100, 200, 300, 400], dtype=np.int64),
            "name": np.array(["n1", "n2", "n3", "n4"], dtype=object)}
    return uri


@pytest.fixture(scope="module")
def arrays(tmp_path_factory):
    """Read-only arrays shared by the query and explain tests."""
    root = tmp_path_factory.mktemp("cli_arrays")
    return make_readings(str(root / "readings")), make_sites(str(root / "sites"))


def tiledb_read(uri: str, timestamp=None) -> dict:
    """The oracle: every cell ``tiledb`` returns (at ``timestamp``), ordered by k."""
    with tiledb.open(uri, timestamp=timestamp) as array:
        table = array.query(return_arrow=True).df[:]
    return table.sort_by("k").to_pydict()


def tdbsql_read(uri: str, timestamp=None) -> dict:
    asof = "" if timestamp is None else f" FOR SYSTEM_TIME AS OF {timestamp}"
    return tdbsql.query(f"SELECT k, v, x, s FROM array{asof} ORDER BY k", uri).to_pydict()


def csv_rows(text: str) -> list[list[str]]:
    return [line.split(",") for line in text.strip().splitlines()]


def tree(uri: str) -> dict:
    """Every path under ``uri`` with its kind, its bytes' hash (files) and its mtime: a dry run
    must leave all of it as it was."""
    out = {}
    for root, dirs, files in os.walk(uri):
        for name in dirs + files:
            full = os.path.join(root, name)
            st = os.stat(full)
            digest = None
            if name in files:
                with open(full, "rb") as f:
                    digest = hashlib.sha256(f.read()).hexdigest()
            out[os.path.relpath(full, uri)] = (name in dirs, digest, st.st_mtime_ns)
    out["."] = (True, None, os.stat(uri).st_mtime_ns)
    return out


def fragment_ranges(uri: str) -> list[tuple[int, int]]:
    return sorted(f.timestamp_range for f in tiledb.array_fragments(uri))


def strip_timings(text: str) -> list[str]:
    return [re.sub(r" time=[0-9.]+ ms", "", line).strip() for line in text.splitlines()]


# --- explain --------------------------------------------------------------------------------


def test_explain_shows_plan_operators_and_pushdown(arrays, capsys):
    readings, _ = arrays
    code, out, err = run(["explain", "SELECT count(*) FROM array WHERE k < 3", readings], capsys)
    assert code == 0, err
    lines = [line.strip() for line in out.splitlines()]
    assert lines[0] == "Logical plan:" and "Operators:" in lines
    assert '"array"."k" < 3' in lines  # the WHERE of the optimized plan
    operators = lines[lines.index("Operators:") + 1:]
    assert operators[0] == "Aggregate array"
    assert 'Pushed: "array"."k" < 3' in operators
    assert any(line.startswith("Scan array:") for line in operators)
    # without --analyze nothing runs: no row counts, no pruning funnel
    assert "rows=" not in out and "Fragments:" not in out and "Tiles:" not in out


def test_explain_analyze_end_to_end_names_the_pruning_funnel(arrays):
    readings, _ = arrays
    proc = run_process("explain", "SELECT count(*) FROM array WHERE k < 3", readings, "--analyze")
    assert proc.returncode == 0, proc.stderr
    lines = strip_timings(proc.stdout)
    assert "Aggregate array  [rows=1]" in lines
    assert any(re.fullmatch(r"Scan array: .*\[rows=3\b.*\]", line) for line in lines)
    # the fragment written at 3000 holds k=5 only: its non-empty domain prunes it
    assert "Fragments: 3 -> 3 (timestamps) -> 2 (non-empty domain)" in lines
    assert any(re.fullmatch(r"Tiles: \d+ -> \d+ \(MBRs / space tiles\) -> \d+ \(zone maps\), "
                            r"\d+ ALWAYS", line) for line in lines)
    assert any(re.fullmatch(r"Bytes: \d+ read, \d+ decoded; \d+ cells", line) for line in lines)


def test_explain_analyze_as_of_prunes_by_timestamp(arrays, capsys):
    readings, _ = arrays
    code, out, err = run(["explain", "SELECT count(*) FROM array WHERE k < 3", readings,
                          "--analyze", "--as-of", "1500"], capsys)
    assert code == 0, err
    assert "Fragments: 3 -> 1 (timestamps) -> 1 (non-empty domain)" in strip_timings(out)


def test_explain_analyze_over_two_arrays(arrays, capsys):
    readings, sites = arrays
    code, out, err = run(["explain", "SELECT r.k, s.w FROM r JOIN s USING (k) WHERE r.k >= 4",
                          "--array", f"r={readings}", "--array", f"s={sites}", "--analyze"],
                         capsys)
    assert code == 0, err
    lines = strip_timings(out)
    assert lines[lines.index("Operators:") + 1] == "Join r  [rows=1]"
    funnels = [line for line in lines if line.startswith("Fragments:")]
    assert funnels == ["Fragments: 3 -> 3 (timestamps) -> 2 (non-empty domain)",
                       "Fragments: 1 -> 1 (timestamps) -> 1 (non-empty domain)"]


# --- query: --array, --as-of ----------------------------------------------------------------


def test_query_joins_two_named_arrays(arrays, capsys):
    readings, sites = arrays
    code, out, err = run(["query", "SELECT r.k, r.v, s.w, s.name FROM r JOIN s USING (k) "
                          "ORDER BY k", "--array", f"r={readings}", "-a", f"s={sites}",
                          "-f", "csv"], capsys)
    assert code == 0, err
    assert csv_rows(out) == [['"k"', '"v"', '"w"', '"name"'], ["1", "11", "100", '"n1"'],
                             ["2", "22", "200", '"n2"'], ["3", "23", "300", '"n3"'],
                             ["4", "24", "400", '"n4"']]


def test_query_positional_array_with_array_option(arrays, capsys):
    readings, sites = arrays
    sql = "SELECT array.k, array.v, s.name FROM array JOIN s USING (k) ORDER BY k"
    code, out, err = run(["query", sql, readings, "--array", f"s={sites}", "-f", "json"], capsys)
    assert code == 0, err
    assert [json.loads(line) for line in out.splitlines()] == [
        {"k": 1, "v": 11, "name": "n1"}, {"k": 2, "v": 22, "name": "n2"},
        {"k": 3, "v": 23, "name": "n3"}, {"k": 4, "v": 24, "name": "n4"}]
    # the positional array is also its directory's name
    code, out, err = run(["query", "SELECT count(*) AS n FROM readings JOIN s USING (k)",
                          readings, "--array", f"s={sites}", "-f", "csv"], capsys)
    assert (code, out) == (0, '"n"\n4\n'), err


@pytest.mark.parametrize("option", ["--as-of", "--timestamp"])
@pytest.mark.parametrize("timestamp", [999, 1000, 1500, 2000, 2500, 3000])
def test_query_as_of_matches_tiledb(arrays, capsys, option, timestamp):
    readings, _ = arrays
    code, out, err = run(["query", "SELECT k, v, x, s FROM array ORDER BY k", readings,
                          option, str(timestamp), "-f", "json"], capsys)
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines() if line]
    expected = tiledb_read(readings, timestamp=timestamp)
    assert {name: [row[name] for row in rows] for name in expected} == expected
    assert len(rows) == {999: 0, 1000: 4, 1500: 4, 2000: 5, 2500: 5, 3000: 6}[timestamp]


def test_query_as_of_applies_to_the_positional_array_only(arrays, capsys):
    readings, sites = arrays
    sql = "SELECT array.k, array.v, s.w FROM array JOIN s USING (k) ORDER BY k"
    code, out, err = run(["query", sql, readings, "--array", f"s={sites}", "--as-of", "1500",
                          "-f", "csv"], capsys)
    assert code == 0, err
    # sites was written at 5000: it is read whole; readings as of 1500 has its first write only
    assert csv_rows(out)[1:] == [["1", "11", "100"], ["2", "12", "200"], ["3", "13", "300"]]


def test_query_latest_matches_tiledb(arrays):
    readings, _ = arrays
    assert tiledb_read(readings) == LATEST == tdbsql_read(readings)


# --- query: every --format to --output ------------------------------------------------------


def read_back(path: str, fmt: str) -> dict:
    if fmt == "parquet":
        table = pq.read_table(path)
        assert table.schema == SCHEMA
        return table.to_pydict()
    if fmt == "arrow":
        with pa.ipc.open_file(path) as reader:
            table = reader.read_all()
        assert table.schema == SCHEMA
        return table.to_pydict()
    text = open(path, encoding="utf-8").read()
    if fmt == "csv":
        return pcsv.read_csv(path).to_pydict()
    if fmt == "json":
        rows = [json.loads(line) for line in text.splitlines()]
        return {name: [row[name] for row in rows] for name in SCHEMA.names}
    lines = text.splitlines()
    if fmt == "line":  # a block of "name = value" lines a row, blank lines between
        blocks = [block.splitlines() for block in text.split("\n\n")]
        assert [line.partition(" = ")[0].strip() for line in blocks[0]] == SCHEMA.names
        cells = [[line.partition(" = ")[2] for line in block] for block in blocks]
    elif fmt == "markdown":  # | header |, |---:|, | rows |
        assert [c.strip() for c in lines[0].split("|")[1:-1]] == SCHEMA.names
        assert set(lines[1]) <= {"-", ":", "|"}
        cells = [[c.strip() for c in line.split("|")[1:-1]] for line in lines[2:]]
    else:  # table: header, rule, rows, "(N rows)"
        assert [c.strip() for c in lines[0].split("|")] == SCHEMA.names
        assert set(lines[1]) <= {"-", "+"}
        assert lines[-1] == "(6 rows)"
        cells = [[c.strip() for c in line.split("|")] for line in lines[2:-1]]
    convert = (int, int, float, str)
    return {name: [convert[i](row[i]) for row in cells] for i, name in enumerate(SCHEMA.names)}


@pytest.mark.parametrize("fmt", cli.FORMATS)
def test_query_format_to_output_file(arrays, tmp_path, capsys, fmt):
    readings, _ = arrays
    target = str(tmp_path / f"result.{fmt}")
    code, out, err = run(["query", "SELECT k, v, x, s FROM array ORDER BY k", readings,
                          "--format", fmt, "--output", target], capsys)
    assert (code, out, err) == (0, "", "")
    assert read_back(target, fmt) == LATEST


def test_query_output_honours_as_of(arrays, tmp_path, capsys):
    readings, _ = arrays
    target = str(tmp_path / "old.parquet")
    code, _, err = run(["query", "SELECT k, v, x, s FROM array ORDER BY k", readings,
                        "-f", "parquet", "-o", target, "--timestamp", "2000"], capsys)
    assert code == 0, err
    assert pq.read_table(target).to_pydict() == tiledb_read(readings, timestamp=2000)


# --- consolidate and vacuum -----------------------------------------------------------------


@pytest.mark.parametrize("window,merged,kept", [
    ("1000,2000", [(1000, 1000), (2000, 2000)], [(1000, 2000), (3000, 3000)]),
    ("1500,3000", [(2000, 2000), (3000, 3000)], [(1000, 1000), (2000, 3000)]),
])
def test_consolidate_window_then_vacuum(tmp_path, capsys, window, merged, kept):
    uri = make_readings(str(tmp_path / "readings"))
    before = {t: tiledb_read(uri, t) for t in (None, 1500, 2000, 2500)}
    code, out, err = run(["consolidate", uri, "--timestamp", window], capsys)
    assert code == 0, err
    lines = out.splitlines()
    lo, hi = merged[0][0], merged[-1][1]
    assert re.fullmatch(rf"merged 2 fragments file\(s\) into __fragments/__{lo}_{hi}_\w+, "
                        rf"__commits/__{lo}_{hi}_\w+\.wrt, __commits/__{lo}_{hi}_\w+\.vac",
                        lines[0]), lines[0]
    assert [tuple(map(int, line.split("__")[2].split("_")[:2])) for line in lines[1:]] == merged
    # only the fragments inside the window were merged; the old ones wait for vacuum
    assert fragment_ranges(uri) == kept
    for t, cells in before.items():
        assert tiledb_read(uri, t) == cells, t
        assert tdbsql_read(uri, t) == cells, t

    # vacuum --dry-run names what it would remove and removes nothing
    snapshot = tree(uri)
    code, dry, err = run(["vacuum", uri, "--dry-run"], capsys)
    assert code == 0, err
    assert dry.splitlines()[0] == "would remove 5 path(s)"
    assert tree(uri) == snapshot

    code, out, err = run(["vacuum", uri], capsys)
    assert code == 0, err
    assert out.splitlines()[0] == "removed 5 path(s)"
    assert out.splitlines()[1:] == dry.splitlines()[1:]
    for line in out.splitlines()[1:]:
        assert not os.path.exists(os.path.join(uri, line.strip()))
    assert len(os.listdir(os.path.join(uri, "__fragments"))) == 2
    assert fragment_ranges(uri) == kept
    for t, cells in before.items():
        assert tiledb_read(uri, t) == cells, t
        assert tdbsql_read(uri, t) == cells, t
    assert run(["vacuum", uri], capsys)[1] == "nothing to vacuum (fragments)\n"


def test_consolidate_window_with_nothing_inside(tmp_path, capsys):
    uri = make_readings(str(tmp_path / "readings"))
    snapshot = tree(uri)
    code, out, err = run(["consolidate", uri, "--timestamp", "2500,2600"], capsys)
    assert code == 0, err
    assert out.startswith("nothing to consolidate (fragments)")
    assert {k: v[:2] for k, v in tree(uri).items() if k != LOCK_FILE} == \
        {k: v[:2] for k, v in snapshot.items()}


@pytest.mark.parametrize("mode,inputs", [("fragments", 3), ("fragment_meta", 3), ("commits", 3),
                                         ("array_meta", 2)])
@pytest.mark.parametrize("window", [None, "1000,3000"])
def test_consolidate_dry_run_changes_nothing(tmp_path, capsys, mode, inputs, window):
    uri = make_readings(str(tmp_path / "readings"), metadata=True)
    snapshot = tree(uri)
    argv = ["consolidate", uri, "--mode", mode, "--dry-run"]
    if window:
        argv += ["--timestamp", window]
    code, out, err = run(argv, capsys)
    assert code == 0, err
    assert out.splitlines()[0].startswith(f"would merge {inputs} {mode} file(s) into ")
    assert len(out.splitlines()) == 1 + inputs
    assert tree(uri) == snapshot
    code, out, err = run(["vacuum", uri, "--mode", mode, "--dry-run"], capsys)
    assert (code, out) == (0, f"nothing to vacuum ({mode})\n"), err
    assert tree(uri) == snapshot


def test_vacuum_dry_run_after_consolidating_every_mode(tmp_path, capsys):
    uri = make_readings(str(tmp_path / "readings"), metadata=True)
    # vacuuming fragment_meta removes the consolidated metadata files that end before the newest
    assert run(["consolidate", uri, "--mode", "fragment_meta"], capsys)[0] == 0
    with tiledb.open(uri, "w", timestamp=4000) as array:
        array[np.array([6], dtype=np.int64)] = {"v": np.array([46]), "x": np.array([46.5]),
                                                "s": np.array(["d6"], dtype=object)}
    expected = tiledb_read(uri)
    for mode in ("fragment_meta", "commits", "array_meta", "fragments"):
        code, out, err = run(["consolidate", uri, "--mode", mode], capsys)
        assert code == 0 and out.startswith("merged "), (mode, out, err)
    snapshot = tree(uri)
    planned = {}
    for mode in ("fragments", "fragment_meta", "commits", "array_meta"):
        code, out, err = run(["vacuum", uri, "--mode", mode, "--dry-run"], capsys)
        assert code == 0, err
        assert out.startswith("would remove "), (mode, out)
        planned[mode] = out.splitlines()[1:]
        assert tree(uri) == snapshot
    assert [p.strip() for p in planned["fragment_meta"]] == [
        os.path.join("__fragment_meta", name) for name in os.listdir(
            os.path.join(uri, "__fragment_meta")) if name.startswith("__1000_3000_")]
    for mode in ("array_meta", "fragment_meta"):
        code, out, err = run(["vacuum", uri, "--mode", mode], capsys)
        assert code == 0, err
        assert out.splitlines()[1:] == planned[mode]
        assert not any(os.path.exists(os.path.join(uri, p.strip())) for p in planned[mode])
    with tiledb.open(uri) as array:
        assert dict(array.meta) == {"unit": "mm", "source": "gauge"}
    assert tiledb_read(uri) == expected == tdbsql_read(uri)
    assert expected["k"] == [0, 1, 2, 3, 4, 5, 6]


# --- errors: one line, exit 1, no traceback -------------------------------------------------


def error_cases(readings: str, sites: str, missing: str, tmp: str) -> list[tuple[list, str]]:
    return [
        (["query", "SELECT * FROM array", missing], "no such array"),
        (["explain", "SELECT * FROM array", missing, "--analyze"], "no such array"),
        (["query", "SELECT * FROM s", "--array", f"s={missing}"], "no such array"),
        (["consolidate", missing], "no such array"),
        (["vacuum", missing, "--dry-run"], "no such array"),
        (["fragments", missing], "no such array"),
        (["query", "SELECT * FROM array", readings, "--array", "sites"],
         "--array takes NAME=PATH, not 'sites'"),
        (["explain", "SELECT 1", readings, "--array", f"={sites}"], "--array takes NAME=PATH"),
        (["query", "SELECT 1", "--array", f"s={sites}", "--array", f"s={readings}"],
         "--array names the table 's' twice"),
        (["query", "SELECT * FROM array", readings, "--array", f"array={sites}"],
         "the table 'array' is already the positional array"),
        (["query", "SELECT * FROM array", readings, "--format", "xml"],
         "argument --format/-f: invalid choice: 'xml'"),
        (["fragments", readings, "-f", "yaml"], "invalid choice: 'yaml'"),
        (["query", "SELECT * FROM array", readings, "--timestamp", "yesterday"],
         "argument --timestamp/--as-of: 'yesterday' is not a timestamp"),
        (["explain", "SELECT * FROM array", readings, "--as-of", "1.5"],
         "'1.5' is not a timestamp"),
        (["fragments", readings, "--as-of", "x"], "'x' is not a timestamp"),
        (["query", "SELECT * FROM s", "--array", f"s={sites}", "--as-of", "1500"],
         "--timestamp/--as-of reads the positional array PATH"),
        (["consolidate", readings, "--timestamp", "1000"], "'1000' is not T1,T2"),
        (["consolidate", readings, "--timestamp", "a,b"], "'a,b' is not T1,T2"),
        (["consolidate", readings, "--timestamp", "3000,1000"], "starts after it ends"),
        (["consolidate", readings, "--mode", "everything"], "invalid choice: 'everything'"),
        (["query", "SELECT * FROM array", readings, "--bogus"],
         "unrecognized arguments: --bogus"),
        (["query", "SELECT * FROM array", readings, "-f", "csv", "-o",
          os.path.join(tmp, "no_such_dir", "out.csv")],
         "cannot write --output "),
        (["query", "SELECT * FROM array", readings, "-f", "parquet", "-o", tmp],
         "Is a directory"),
    ]


def test_error_cases_are_one_line_and_exit_1(arrays, tmp_path, capsys):
    readings, sites = arrays
    snapshot = tree(readings)
    for argv, message in error_cases(readings, sites, str(tmp_path / "missing"), str(tmp_path)):
        code, out, err = run(argv, capsys)
        assert code == 1, (argv, out, err)
        assert err.startswith("tdbsql: error: ") and err.count("\n") == 1, (argv, err)
        assert message in err, (argv, err)
        assert "Traceback" not in err and out == "", (argv, out, err)
    assert tree(readings) == snapshot
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("sql,message", [
    ("SELEC k FROM array", "SQL syntax error"),
    ("SELECT k FROM", "SQL syntax error"),
    ("SELECT nope FROM array", "unknown column 'nope'"),
])
def test_bad_sql_is_one_error_line_with_the_culprit_underlined(arrays, capsys, sql, message):
    readings, _ = arrays
    for command in ("query", "explain"):
        code, out, err = run([command, sql, readings], capsys)
        assert code == 1 and out == ""
        lines = err.splitlines()
        assert lines[0].startswith("tdbsql: error: ") and message in lines[0], err
        # the README's underline: the SQL, then carets; no second error, no traceback
        assert sum(line.startswith("tdbsql:") for line in lines) == 1
        assert all(set(line.strip()) <= {"^"} for line in lines[2:]), err
        assert "Traceback" not in err


@pytest.mark.parametrize("args,message", [
    (("query", "SELECT * FROM array", "{missing}"), "no such array"),
    (("query", "SELECT * FROM array", "{readings}", "--format", "xml"), "invalid choice: 'xml'"),
    (("query", "SELECT * FROM array", "{readings}", "--as-of", "noon"),
     "'noon' is not a timestamp"),
    (("consolidate", "{readings}", "--timestamp", "1,2,3"), "'1,2,3' is not T1,T2"),
    (("query", "SELECT * FROM array", "{readings}", "--array", "sites"),
     "--array takes NAME=PATH"),
])
def test_errors_end_to_end(arrays, tmp_path, args, message):
    readings, _ = arrays
    proc = run_process(*(a.format(readings=readings, missing=str(tmp_path / "missing"))
                         for a in args))
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == ""
    assert proc.stderr.startswith("tdbsql: error: ") and proc.stderr.count("\n") == 1
    assert message in proc.stderr and "Traceback" not in proc.stderr
