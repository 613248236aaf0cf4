"""Parquet files in FROM (``'f.parquet'``, ``read_parquet``, ``parquet_scan``, glob patterns),
alone and joined with an array, against DuckDB reading the same files; and the errors: a
missing or unreadable file, reader options, time travel, a file past the memory budget."""

from __future__ import annotations

import datetime
import decimal
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import tdbsql
from sql_fixtures import assert_same_table, duckdb_over

SAMPLE = Path(__file__).resolve().parents[1] / "examples" / "stations"


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    """Two files of one schema (NULLs, NaN, -0.0, DECIMAL, dates, timestamps, lists, text)
    and a third of stations' rain; all three match ``*.parquet``."""
    root = tmp_path_factory.mktemp("parquet")
    rows = pa.table({
        "k": pa.array([1, 2, 3, None, 5, 2], pa.int32()),
        "s": ["a", "bb", None, "dd", "ñé", "bb"],
        "d": [datetime.date(2024, 1, 1), None, datetime.date(2024, 2, 29),
              datetime.date(1999, 12, 31), datetime.date(1970, 1, 1), None],
        "x": pa.array([decimal.Decimal(v) if v else None for v in
                       ("1.25", None, "-3.50", "0.01", "99.99", "1.25")], pa.decimal128(9, 2)),
        "ts": pa.array([datetime.datetime(2024, 1, 1, 1, 2, 3), None, None,
                        datetime.datetime(2020, 5, 5), datetime.datetime(2000, 1, 1, 0, 0, 1),
                        None], pa.timestamp("us")),
        "f": [1.5, float("nan"), None, -0.0, 2.25, 1e300],
        "b": [True, False, None, True, True, False],
        "l": [[1, 2], None, [], [None], [3], [1, 2]]})
    pq.write_table(rows.slice(0, 4), root / "a.parquet")
    pq.write_table(rows.slice(4), root / "b.parquet", row_group_size=1)
    pq.write_table(pa.table({"station": pa.array([1, 2, 3, 9], pa.int64()),
                             "owner": ["met", "uni", None, "met"]}), root / "owners.parquet")
    return root


@pytest.fixture(scope="module")
def engines(files):
    """(tdbsql with the sample array as ``st``, DuckDB with the cells ``tiledb`` reads as
    ``st``): both read the Parquet files by their paths."""
    con = tdbsql.connect()
    con.register("st", str(SAMPLE))
    return con, duckdb_over(str(SAMPLE), "st")


QUERIES = [
    "SELECT * FROM '{a}'",
    "SELECT * FROM read_parquet('{both}') WHERE k > 1",
    "SELECT k, s, d, x, ts, f, b FROM parquet_scan('{both}')",
    "SELECT count(*), count(k), sum(k), avg(f), min(d), max(x), max(ts), bool_and(b) "
    "FROM '{both}'",
    "SELECT s, count(*), sum(x), list(k ORDER BY k) FROM read_parquet('{both}') GROUP BY s",
    "SELECT count(*) FROM '{both}'",
    "SELECT p.k, q.s FROM '{a}' p JOIN read_parquet('{b}') q ON p.s = q.s",
    "SELECT st.day, st.city, o.owner FROM st JOIN '{owners}' o USING (station) "
    "WHERE st.day < 3",
    "SELECT o.owner, count(*), round(avg(st.temp_c), 6) FROM st LEFT JOIN "
    "read_parquet('{owners}') o ON o.station = st.station GROUP BY o.owner",
    "SELECT station FROM '{owners}' WHERE station NOT IN (SELECT station FROM st)",
]


@pytest.mark.parametrize("query", QUERIES)
def test_a_query_over_parquet_files_gives_duckdbs_rows(files, engines, query):
    ours, duck = engines
    sql = query.format(a=files / "a.parquet", b=files / "b.parquet", owners=files /
                       "owners.parquet", both=files / "[ab].parquet")
    assert_same_table(ours.sql(sql).arrow(), duck.sql(sql).arrow())


def test_only_the_columns_a_query_uses_are_read(files, monkeypatch):
    read = []
    original = pq.ParquetFile.read

    def spy(self, columns=None, **kwargs):
        read.append(tuple(columns))
        return original(self, columns=columns, **kwargs)

    monkeypatch.setattr(pq.ParquetFile, "read", spy)
    got = tdbsql.query(f"SELECT sum(k) FROM '{files / 'a.parquet'}' WHERE s <> 'a'")
    assert got.column(0).to_pylist() == [2]
    assert read == [("k", "s")]


def test_a_file_changed_between_queries_is_read_again(tmp_path):
    path = tmp_path / "t.parquet"
    con = tdbsql.connect()
    pq.write_table(pa.table({"v": [1, 2]}), path)
    assert con.sql(f"SELECT sum(v) FROM '{path}'").fetchall() == [(3,)]
    pq.write_table(pa.table({"v": [10, 20, 30], "w": ["a", "b", "c"]}), path)
    assert con.sql(f"SELECT sum(v) FROM '{path}'").fetchall() == [(60,)]
    assert con.sql(f"SELECT max(w) FROM '{path}'").fetchall() == [("c",)]


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(tdbsql.OperationalError, match="no such Parquet file.*matches no file"):
        tdbsql.query(f"SELECT * FROM '{tmp_path / 'nope.parquet'}'")
    with pytest.raises(tdbsql.OperationalError, match="matches no file"):
        tdbsql.query(f"SELECT * FROM read_parquet('{tmp_path / '*.parquet'}')")


def test_an_unreadable_file_is_a_data_error(tmp_path):
    path = tmp_path / "broken.parquet"
    path.write_bytes(b"PAR1 this is not a parquet file at all PAR1")
    with pytest.raises(tdbsql.DataError, match="cannot read the Parquet file"):
        tdbsql.query(f"SELECT * FROM '{path}'")


@pytest.mark.parametrize("call,message", [
    ("read_parquet('{a}', hive_partitioning = true)", r"options are not supported"),
    ("read_parquet(['{a}', '{a}'])", r"reads one path written as a string"),
    ("parquet_scan()", r"not no path"),
])
def test_reader_options_and_lists_are_unsupported(files, call, message):
    with pytest.raises(tdbsql.UnsupportedSql, match=message):
        tdbsql.query("SELECT * FROM " + call.format(a=files / "a.parquet"))


def test_time_travel_needs_an_array(files):
    with pytest.raises(tdbsql.SqlError, match="FOR SYSTEM_TIME reads an array's history"):
        tdbsql.query(f"SELECT * FROM '{files / 'a.parquet'}' FOR SYSTEM_TIME AS OF 5")
    con = tdbsql.connect().register("t", pa.table({"v": [1]}))
    with pytest.raises(tdbsql.SqlError, match="'t' is not an array"):
        con.sql("SELECT * FROM t FOR SYSTEM_TIME AS OF 5")


def test_a_file_past_the_memory_budget_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "big.parquet"
    pq.write_table(pa.table({"v": pa.array(range(400_000), pa.int64())}), path)
    con = tdbsql.connect(memory_mb=1)
    with pytest.raises(tdbsql.MemoryLimitError, match="reading .*big.parquet"):
        con.sql(f"SELECT sum(v) FROM '{path}'")
    assert tdbsql.connect().sql(f"SELECT count(*) FROM '{path}'").fetchall() == [(400_000,)]


def test_the_command_reads_a_parquet_file_without_an_array(files):
    proc = subprocess.run(
        [sys.executable, "-m", "tdbsql", "query", f"SELECT count(*) AS n, max(s) AS s FROM "
         f"'{files / 'a.parquet'}'", "--format", "csv"],
        capture_output=True, text=True, check=True)
    assert proc.stdout.splitlines() == ['"n","s"', '4,"dd"']


def test_files_of_one_pattern_read_as_the_first_ones_schema(tmp_path):
    """Columns found by name in any order and cast to the first file's types, as DuckDB does;
    a file without a column the query reads is DuckDB's schema mismatch, as an error."""
    pq.write_table(pa.table({"a": pa.array([1, 2], pa.int32()), "b": ["x", "y"]}),
                   tmp_path / "1.parquet")
    pq.write_table(pa.table({"b": ["w"], "a": pa.array([4], pa.int64())}),
                   tmp_path / "2.parquet")
    pq.write_table(pa.table({"c": [1.5]}), tmp_path / "3.parquet")
    got = tdbsql.query(f"SELECT a, b FROM '{tmp_path / '[12].parquet'}' ORDER BY a")
    assert got.schema.field("a").type == pa.int32()
    assert got.to_pylist() == [{"a": 1, "b": "x"}, {"a": 2, "b": "y"}, {"a": 4, "b": "w"}]
    with pytest.raises(tdbsql.DataError, match="has no column 'a'.*different schemas"):
        tdbsql.query(f"SELECT a FROM '{tmp_path / '*.parquet'}'")


def test_recursive_patterns_other_names_and_the_functions_table_name(tmp_path):
    import duckdb

    (tmp_path / "sub").mkdir()
    pq.write_table(pa.table({"a": [1, 2, 3]}), tmp_path / "f1.parquet")
    pq.write_table(pa.table({"a": [4]}), tmp_path / "sub" / "f3.parquet")
    pq.write_table(pa.table({"a": [5, 6]}), tmp_path / "g.pq")  # Parquet, named otherwise
    for query in [f"SELECT count(*), sum(a) FROM '{tmp_path}/**/*.parquet'",
                  f"SELECT sum(a) FROM read_parquet('{tmp_path / 'g.pq'}')",
                  f"SELECT read_parquet.a FROM read_parquet('{tmp_path / 'f1.parquet'}')"]:
        assert sorted(tdbsql.connect().sql(query).fetchall()) == \
            sorted(duckdb.sql(query).fetchall())


def test_column_types_as_duckdb_reads_parquet(tmp_path):
    """pyarrow's stored schema says timestamp[ms], float16, duration; DuckDB reads the
    Parquet columns as TIMESTAMP, FLOAT and BIGINT, and so does tdbsql."""
    import duckdb

    pq.write_table(pa.table({"ms": pa.array([1500], pa.timestamp("ms")),
                             "h": pa.array([1.5], pa.float16()),
                             "du": pa.array([5], pa.duration("s"))}), tmp_path / "t.parquet")
    query = (f"SELECT typeof(ms), ms, typeof(h), h, typeof(du), du * 2 "
             f"FROM '{tmp_path / 't.parquet'}'")
    assert tdbsql.connect().sql(query).fetchall() == duckdb.sql(query).fetchall()


def test_hive_partitioned_files_are_refused(tmp_path):
    (tmp_path / "year=2020").mkdir()
    pq.write_table(pa.table({"v": [1]}), tmp_path / "year=2020" / "f.parquet")
    with pytest.raises(tdbsql.UnsupportedSql, match="hive-partitioned"):
        tdbsql.query(f"SELECT * FROM '{tmp_path}/*/*.parquet'")


def test_the_budget_counts_a_column_whose_name_holds_a_dot(tmp_path):
    path = tmp_path / "dots.parquet"
    pq.write_table(pa.table({"big.col": pa.array(range(400_000), pa.int64()),
                             "small": pa.array([1] * 400_000, pa.int8())}), path)
    with pytest.raises(tdbsql.MemoryLimitError, match="reading"):
        tdbsql.connect(memory_mb=1).sql(f'SELECT max("big.col") FROM \'{path}\'')


def test_a_parameter_names_the_file(files):
    """``read_parquet(?)``: the path is a parameter, read once bound (DuckDB's way too)."""
    import duckdb

    query = "SELECT count(*), sum(k) FROM read_parquet(?)"
    path = str(files / "a.parquet")
    assert tdbsql.connect().sql(query, [path]).fetchall() == \
        duckdb.execute(query, [path]).fetchall()
    assert tdbsql.connect().sql("SELECT count(*) FROM read_parquet($p)", {"p": path}
                                ).fetchall() == [(4,)]


def test_a_registered_parquet_path_is_a_table(tmp_path):
    """``register(name, 'f.parquet')`` -- and so ``tdbsql.query(sql, path)`` and the command's
    PATH -- names Parquet files, matched again at each query."""
    pq.write_table(pa.table({"v": [1, 2]}), tmp_path / "a.parquet")
    con = tdbsql.connect().register("t", str(tmp_path / "*.parquet"))
    assert con.sql("SELECT sum(v) FROM T").fetchall() == [(3,)]
    pq.write_table(pa.table({"v": [10]}), tmp_path / "b.parquet")  # a file written since
    assert con.sql("SELECT sum(v) FROM t").fetchall() == [(13,)]
    assert tdbsql.query("SELECT count(*) AS n FROM array", str(tmp_path / "a.parquet")
                        ).to_pylist() == [{"n": 2}]
    proc = subprocess.run([sys.executable, "-m", "tdbsql", "query", "SELECT max(v) AS m FROM "
                           "array", str(tmp_path / "b.parquet"), "--format", "csv"],
                          capture_output=True, text=True, check=True)
    assert proc.stdout.splitlines() == ['"m"', "10"]
    with pytest.raises(TypeError, match="apply to arrays"):
        con.register("u", str(tmp_path / "a.parquet"), timestamp=5)
