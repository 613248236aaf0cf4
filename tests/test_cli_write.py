"""The write-side commands: ingest, consolidate, vacuum, demo (through the CLI's main)."""

from __future__ import annotations

import os
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import tdbsql
from tdbsql import cli

tiledb = pytest.importorskip("tiledb")

EXAMPLE = os.path.join(os.path.dirname(__file__), os.pardir, "examples", "stations")


def run(argv: list[str]) -> int:
    """``tdbsql ARGV`` in this process."""
    return cli.main(argv)


@pytest.fixture
def source(tmp_path):
    table = pa.table({"k": pa.array(range(100), pa.int64()), "g": [i % 7 for i in range(100)],
                      "v": [i * 0.5 for i in range(100)],
                      "s": [None if i % 9 == 0 else f"s{i}" for i in range(100)]})
    pq.write_table(table, tmp_path / "t.parquet")
    return tmp_path / "t.parquet", table


def test_ingest_command(tmp_path, source, capsys):
    path, table = source
    assert run(["ingest", str(path), str(tmp_path / "a"), "--dims", "g,k", "--tile", "3,50",
                "--capacity", "20", "--filters", "lz4", "--filters", "v=zstd:9",
                "--timestamp", "77", "--batch-rows", "40"]) == 0
    assert "created" in capsys.readouterr().out
    with tiledb.open(str(tmp_path / "a")) as array:
        schema = array.schema
        assert [schema.domain.dim(i).name for i in range(2)] == ["g", "k"]
        assert schema.domain.dim("g").tile == 3 and schema.capacity == 20
        assert type(schema.attr("s").filters[0]).__name__ == "LZ4Filter"
        assert schema.attr("v").filters[0].level == 9
    fragments = tiledb.array_fragments(str(tmp_path / "a"))
    assert len(fragments) == 3 and {f.timestamp_range for f in fragments} == {(77, 77)}
    got = tdbsql.query("SELECT k, g, v, s FROM array ORDER BY k", str(tmp_path / "a"))
    assert got.equals(table.select(["k", "g", "v", "s"]))


def test_ingest_append_and_errors(tmp_path, source, capsys):
    path, _ = source
    target = str(tmp_path / "a")
    assert run(["ingest", str(path), target, "--dims", "k", "--domain", "k=0:1000", "-q"]) == 0
    assert capsys.readouterr().out == ""
    assert run(["ingest", str(path), target, "--dims", "k"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("tdbsql: error: ") and "--append" in err and err.count("\n") == 1
    assert run(["ingest", str(path), target, "--append", "-q"]) == 0
    with tiledb.open(target) as array:
        assert len(array.query(return_arrow=True).df[:]) == 200
    assert run(["ingest", str(tmp_path / "missing.csv"), str(tmp_path / "b")]) == 1
    assert "does not exist" in capsys.readouterr().err
    assert run(["ingest", str(path), str(tmp_path / "b"), "--dims", "nope"]) == 1
    assert "'nope' is not in the source" in capsys.readouterr().err
    assert run(["ingest", str(path), str(tmp_path / "b"), "--filters", "snappy"]) == 1
    assert "unknown filter 'snappy'" in capsys.readouterr().err
    assert run(["ingest", str(path), str(tmp_path / "b"), "--dims", "k",
                "--domain", "g=0:5"]) == 1
    assert "not in --dims" in capsys.readouterr().err
    assert run(["ingest", str(path), str(tmp_path / "b"), "--batch-rows", "0"]) == 1
    assert "batch_rows must be positive" in capsys.readouterr().err
    assert not os.path.exists(tmp_path / "b")


def test_ingest_key_env(tmp_path, source, monkeypatch):
    path, table = source
    monkeypatch.setenv("INGEST_KEY", "0123456789abcdeF0123456789abcdeF")
    assert run(["ingest", str(path), str(tmp_path / "a"), "--dims", "k", "--key-env",
                "INGEST_KEY", "-q"]) == 0
    got = tdbsql.query("SELECT k FROM array ORDER BY k", str(tmp_path / "a"),
                       key="0123456789abcdeF0123456789abcdeF")
    assert got.column("k").to_pylist() == list(range(100))


def test_consolidate_and_vacuum_commands(tmp_path, source, capsys):
    path, table = source
    target = str(tmp_path / "a")
    assert run(["ingest", str(path), target, "--dims", "k", "--batch-rows", "30", "-q"]) == 0
    assert len(tiledb.array_fragments(target)) == 4
    assert run(["consolidate", target, "--dry-run"]) == 0
    assert "would merge 4" in capsys.readouterr().out
    assert len(tiledb.array_fragments(target)) == 4
    assert run(["consolidate", target]) == 0
    assert "merged 4" in capsys.readouterr().out
    assert run(["vacuum", target]) == 0
    assert "removed" in capsys.readouterr().out
    assert len(tiledb.array_fragments(target)) == 1
    got = tdbsql.query("SELECT k, g, v, s FROM array ORDER BY k", target)
    assert got.equals(table.select(["k", "g", "v", "s"]))
    assert run(["vacuum", str(tmp_path / "nothing")]) == 1


def test_demo_equals_the_example(tmp_path):
    """`tdbsql demo` builds examples/stations through ingest: same schema, same query results."""
    target = str(tmp_path / "stations")
    assert run(["demo", target]) == 0
    sql = "SELECT * FROM array ORDER BY day, station"
    assert tdbsql.query(sql, target).equals(tdbsql.query(sql, EXAMPLE))
    window = "SELECT * FROM array FOR SYSTEM_TIME AS OF 1500 ORDER BY day, station"
    assert tdbsql.query(window, target).equals(tdbsql.query(window, EXAMPLE))
    with tiledb.open(target) as mine, tiledb.open(EXAMPLE) as theirs:
        for i in range(2):
            a, b = mine.schema.domain.dim(i), theirs.schema.domain.dim(i)
            assert (a.name, a.domain, a.tile, a.dtype) == (b.name, b.domain, b.tile, b.dtype)
        assert [mine.schema.attr(i).dtype for i in range(3)] == [
            theirs.schema.attr(i).dtype for i in range(3)]
        assert mine.schema.attr("rain_mm").isnullable
    assert [f.timestamp_range for f in tiledb.array_fragments(target)] == [(1000, 1000),
                                                                           (2000, 2000)]
    assert run(["demo", target]) == 1  # refuses to overwrite


def test_demo_then_query_subprocess(tmp_path):
    """The README flow as a user types it (the CLI in a fresh process)."""
    target = str(tmp_path / "stations")
    env = dict(os.environ)
    subprocess.run([sys.executable, "-m", "tdbsql", "demo", target], check=True,
                   capture_output=True, env=env)
    sql = "SELECT day, station, temp_c, rain_mm, city FROM array WHERE day BETWEEN 24 AND 26"
    outputs = [subprocess.run([sys.executable, "-m", "tdbsql", "query", sql, p, "-f", "csv"],
                              check=True, capture_output=True, text=True, env=env).stdout
               for p in (target, EXAMPLE)]
    assert outputs[0] == outputs[1] and outputs[0].count("\n") > 5


def test_consolidate_purge_deleted_cells_flag(tmp_path, source, capsys):
    path, _ = source
    target = str(tmp_path / "a")
    assert run(["ingest", str(path), target, "--dims", "k", "--batch-rows", "50", "-q",
                "--timestamp", "1000"]) == 0
    tdbsql.delete(target, "k < 10", timestamp=1500)
    assert run(["consolidate", target, "--purge-deleted-cells"]) == 0
    assert run(["vacuum", target]) == 0
    capsys.readouterr()
    assert tdbsql.query("SELECT min(k), count(*) FROM array", target).to_pylist() == \
        [{"min(k)": 10, "count_star()": 90}]
    fragments = tiledb.array_fragments(target)
    assert len(fragments) == 1
    assert fragments[0].cell_num == 90  # the deleted cells are gone from the files, not hidden
