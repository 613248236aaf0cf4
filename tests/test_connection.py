"""The connection API, INSERT/DELETE through SQL, per-table time travel and EXPLAIN, checked
against DuckDB over the same rows (read back with tiledb) and against tiledb itself."""

from __future__ import annotations

import os

import subprocess
import sys

import duckdb
import numpy as np
import pyarrow as pa
import pytest
import tiledb

import tdbsql

SAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "stations")


def _sparse(path, rows: dict, ts: int):
    if not os.path.exists(path):
        dom = tiledb.Domain(tiledb.Dim(name="k", domain=(0, 10_000), tile=100, dtype=np.int64))
        schema = tiledb.ArraySchema(domain=dom, sparse=True, capacity=8, attrs=[
            tiledb.Attr(name="v", dtype=np.int64),
            tiledb.Attr(name="s", dtype=str, var=True, nullable=True)])
        tiledb.Array.create(path, schema)
    with tiledb.open(path, "w", timestamp=ts) as arr:
        arr[np.asarray(rows["k"], dtype=np.int64)] = {
            "v": np.asarray(rows["v"], dtype=np.int64),
            "s": pa.array(rows["s"], pa.large_string())}


@pytest.fixture(scope="module")
def versions(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("conn") / "a")
    _sparse(path, {"k": [1, 2, 3, 4], "v": [10, 20, 30, 40], "s": ["a", "b", None, "d"]}, 1000)
    _sparse(path, {"k": [2, 3, 5], "v": [21, 31, 50], "s": ["B", "C", "e"]}, 2000)
    return path


def test_result_interfaces(versions):
    con = tdbsql.connect().register("a", versions)
    res = con.sql("SELECT k, v FROM a ORDER BY k")
    assert res.columns == ["k", "v"]
    assert res.fetchall() == [(1, 10), (2, 21), (3, 31), (4, 40), (5, 50)]
    assert res.fetchone() == (1, 10)
    assert res.df()["v"].tolist() == [10, 21, 31, 40, 50]
    reader = res.fetch_record_batch(rows_per_batch=2)
    assert [b.num_rows for b in reader] == [2, 2, 1]
    # the PyCapsule stream is fresh on every call
    assert pa.table(res).num_rows == 5 and pa.table(res).num_rows == 5
    assert len(res) == 5


def test_dates_beyond_python_years():
    """A DATE / TIMESTAMP before year 1 or after 9999 (DuckDB's range is wider) is an Arrow
    value; as Python tuples it is DuckDB's text of it, as DuckDB's fetchall gives it (it was a
    DataError), the values in range beside it Python dates."""
    con = tdbsql.connect()
    days = duckdb.sql("SELECT DATE '0001-01-01' - 1 - DATE '1970-01-01' AS x, "
                      "epoch_us(DATE '9999-12-31' + INTERVAL 1 DAY) AS y").fetchall()[0]
    res = con.sql("SELECT DATE '0001-01-01' - 1 AS x, DATE '9999-12-31' + INTERVAL 1 DAY AS y")
    table = res.arrow()
    assert table.column("x").cast(pa.int32()).to_pylist() == [days[0]]
    assert table.column("y").cast(pa.int64()).to_pylist() == [days[1]]
    assert res.fetchall() == [("0001-12-31 (BC)", "10000-01-01 00:00:00")]
    sql = ("SELECT d, d::TIMESTAMP + INTERVAL 90 MINUTE AS t, "
           "TIMESTAMPTZ '10000-01-01 10:00:00+00' AS z FROM (VALUES (DATE '2024-05-01'), (DATE '12000-02-29'), (NULL), "
           "(DATE '-0044-03-15')) v(d)")
    assert con.sql(sql).fetchall() == duckdb.sql(sql).fetchall()


def test_dates_far_beyond_python_years():
    """Dates and timestamps some 190000 years out: Arrow's year of them is wrong (it used to
    class them convertible, and Python raised OverflowError); by their raw numbers they are
    text, as DuckDB's fetchall gives them, the bounds 0001-01-01 and 9999-12-31 still Python
    values."""
    con = tdbsql.connect()
    for sql in ["SELECT DATE '2000-01-01' - 70000000, DATE '2000-01-01' + 70000000",
                "SELECT TIMESTAMP '2000-01-01' - INTERVAL '200000 years' AS a, "
                "TIMESTAMPTZ '2000-01-01' + INTERVAL '200000 years' AS b",
                "SELECT DATE '0001-01-01', DATE '9999-12-31', DATE '0001-01-01' - 1, "
                "TIMESTAMP '9999-12-31 23:59:59.999999' AS a, "
                "TIMESTAMP '9999-12-31 23:59:59.999999' + INTERVAL 1 MICROSECOND AS b, "
                "TIMESTAMP '0001-01-01' - INTERVAL 1 MICROSECOND AS c"]:
        assert con.sql(sql).fetchall() == duckdb.sql(sql).fetchall(), sql


def test_lists_of_dates_beyond_python_years():
    """A list (of lists) holding a date out of Python's years gives that date as text and the
    rest as Python values, as DuckDB; also row by row (fetchone / fetchmany slice the lists)."""
    con = tdbsql.connect()
    sql = ("SELECT i, [DATE '9999-12-31' + i::INTEGER, NULL, DATE '2000-01-01'] AS d, "
           "[[TIMESTAMP '9999-12-31 23:00:00' + INTERVAL (i) HOUR], NULL] AS t, "
           "[TIMESTAMPTZ '0001-01-01 00:00:00+00' - INTERVAL (i) SECOND] AS z "
           "FROM range(3) r(i) ORDER BY i")
    expected = duckdb.sql(sql).fetchall()
    assert con.sql(sql).fetchall() == expected
    res = con.sql(sql)
    assert [res.fetchone(), *res.fetchmany(2)] == expected
    for sql in ["SELECT [DATE '9999-12-31' + 1]",
                "SELECT [TIMESTAMP '9999-12-31 23:00:00' + INTERVAL 2 HOUR]",
                "SELECT [DATE '2000-01-01' - 70000000, NULL], CAST(NULL AS DATE[])"]:
        assert con.sql(sql).fetchall() == duckdb.sql(sql).fetchall(), sql


def test_intervals_as_timedeltas():
    """INTERVALs come out of fetchall / fetchone as DuckDB's do: timedeltas, a month counting
    30 days (they were Arrow's MonthDayNano tuples), also in lists and beside NULLs; one past
    a timedelta's range, which DuckDB's fetchall cannot give, is its text."""
    con = tdbsql.connect()
    for sql in ["SELECT INTERVAL '1 year 2 months 3 days 04:05:06.007' AS a, "
                "-INTERVAL '1 month 1 microsecond' AS b, NULL::INTERVAL AS c",
                "SELECT i, INTERVAL (i - 1) MONTH + INTERVAL (i) HOUR AS a, "
                "[INTERVAL 1 DAY * i, NULL] AS l, (TIMESTAMP '2024-01-01' - "
                "TIMESTAMP '2024-03-03 05:00:00.25') * i AS d FROM range(3) r(i) ORDER BY i",
                "SELECT to_days(999999999), to_days(-999999999), age(TIMESTAMP '2024-03-05', "
                "TIMESTAMP '2023-01-01')"]:
        expected = duckdb.sql(sql).fetchall()
        assert con.sql(sql).fetchall() == expected, sql
        assert con.sql(sql).fetchone() == expected[0], sql
    assert con.sql("SELECT to_days(1000000000), to_months(-33333334)").fetchall() == \
        [("1000000000 days", "-2777777 years -10 months")]


def test_intervals_in_maps_as_timedeltas():
    """INTERVALs inside a MAP (of a registered Arrow table) are timedeltas too, as DuckDB's
    fetchall gives them: they were Arrow's MonthDayNano tuples, the map not looked into.  A
    map is a dict, in a slice of the rows as in all of them."""
    entries = [[("a", (1, 2, 3000)), ("b", None)], None, [], [("c", (0, 0, -1000))]]
    table = pa.table({"i": [1, 2, 3, 4], "m": pa.array(
        entries, pa.map_(pa.string(), pa.month_day_nano_interval()))})
    con, oracle = tdbsql.connect(), duckdb.connect()
    con.register_arrow("t", table)
    oracle.register("t", table)
    for sql in ["SELECT i, m FROM t ORDER BY i", "SELECT i, m FROM t ORDER BY i LIMIT 2 OFFSET 2",
                "SELECT i, [m, NULL] FROM t ORDER BY i"]:
        assert con.sql(sql).fetchall() == oracle.sql(sql).fetchall(), sql


@pytest.mark.parametrize("sql", [
    "SELECT histogram(x) AS h, 1 AS h FROM (VALUES (1), (1), (2), (NULL)) t(x)",
    "SELECT [TIME '24:00:00', TIME '10:00:00'] AS l, TIME '24:00:00' AS t, TIME '10:00:00' AS u",
    "SELECT 1 AS t, 2 AS T, 3 AS t, 4 AS t_1",
    # nanoseconds below the microsecond: cut toward zero (pyarrow raised 'not safely
    # convertible'), in a list too
    "SELECT make_timestamp_ns(-1001) AS b, TIME_NS '12:00:00.123456789' AS d, "
    "[TIMESTAMP_NS '2021-01-01 00:00:00.123456789'] AS e",
])
def test_maps_end_of_day_and_repeated_names_as_duckdb_gives_them(sql):
    """fetchall and df(): a MAP is a dict (it was (key, value) pairs); TIME '24:00:00' is
    its text, in a list too (df() raised 'hour must be in 0..23'); df()'s repeated names get
    DuckDB's _1 (pandas kept one of the columns)."""
    got, want = tdbsql.connect().sql(sql), duckdb.sql(sql)
    assert got.fetchall() == want.fetchall()
    frame, oracle = got.df(), want.df()
    assert list(frame.columns) == list(oracle.columns)
    assert [[list(v) if hasattr(v, "tolist") and not isinstance(v, str) else v for v in row]
            for row in frame.itertuples(index=False)] == \
        [[list(v) if hasattr(v, "tolist") and not isinstance(v, str) else v for v in row]
         for row in oracle.itertuples(index=False)]


def test_intervals_in_data_frames():
    """df() gives INTERVAL columns as DuckDB's does, timedelta64[us] with 30-day months (it
    gave pandas DateOffset objects); NULL is NaT."""
    sql = ("SELECT i, TIMESTAMP '2024-01-02' - TIMESTAMP '2024-01-01 05:00' AS d FROM (VALUES "
           "(INTERVAL '1 month 2 days 3 hours'), (NULL), (INTERVAL '-1 year 1 microsecond')) t(i)")
    got, want = tdbsql.connect().sql(sql).df(), duckdb.sql(sql).df()
    assert got.dtypes.to_dict() == want.dtypes.to_dict()
    assert got.equals(want)


_NESTED_INTERVALS = """
import tdbsql
got = tdbsql.connect().sql("SELECT [INTERVAL '1 month', NULL] AS x, [[INTERVAL 1 HOUR]] AS y").df()
print(got["x"][0].tolist(), got["y"][0][0].tolist())
"""


def test_nested_intervals_in_data_frames_as_timedeltas():
    """Lists of INTERVALs come to pandas as timedeltas, a month 30 days, as DuckDB gives them
    (values equal).  pandas is imported after tdbsql's first query in that process, so
    pyarrow could not convert intervals itself (it crashed making DateOffsets)."""
    out = subprocess.run([sys.executable, "-c", _NESTED_INTERVALS], capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == ("[datetime.timedelta(days=30), None] "
                           "[datetime.timedelta(seconds=3600)]")


def test_time_travel_per_table_self_join(versions):
    con = tdbsql.connect().register("a", versions)
    got = con.sql("""
        SELECT old.k, old.v AS before, new.v AS after
        FROM a FOR SYSTEM_TIME AS OF 1000 AS old
        JOIN a FOR SYSTEM_TIME AS OF 2000 AS new ON old.k = new.k
        WHERE old.v <> new.v ORDER BY old.k""").fetchall()
    assert got == [(2, 20, 21), (3, 30, 31)]


def test_registered_timestamp_and_quoted_path(versions):
    con = tdbsql.connect().register("a", versions, timestamp=1000)
    assert con.sql("SELECT sum(v) FROM a").fetchall() == [(100,)]
    quoted = tdbsql.connect().sql(f"SELECT count(*) FROM '{versions}'").fetchall()
    assert quoted == [(5,)]


def test_join_against_duckdb(versions):
    con = tdbsql.connect().register("a", versions).register("st", SAMPLE)
    with tiledb.open(versions) as arr:
        a = arr.query(return_arrow=True).df[:]
    with tiledb.open(SAMPLE) as arr:
        st = arr.query(return_arrow=True).df[:]
    sql = """SELECT a.k, a.s, count(st.day) AS n, max(st.temp_c) AS hi
             FROM a LEFT JOIN st ON a.k = st.station AND st.day < 10
             GROUP BY a.k, a.s ORDER BY a.k"""
    duck = duckdb.connect()
    duck.register("a", a)
    duck.register("st", st)
    expected = duck.sql(sql).fetchall()
    got = con.sql(sql).fetchall()
    assert [r[:3] for r in got] == [r[:3] for r in expected]
    assert [r[3] for r in got] == pytest.approx([r[3] for r in expected])


def test_insert_and_delete_read_back_by_tiledb(tmp_path):
    path = str(tmp_path / "w")
    _sparse(path, {"k": [1], "v": [1], "s": ["x"]}, 1000)
    con = tdbsql.connect().register("w", path)
    assert con.sql("INSERT INTO w VALUES (2, 20, 'y'), (3, 30, NULL)").fetchall() == [(2,)]
    assert con.sql("INSERT INTO w (k, v, s) SELECT k + 100, v * 2, s FROM w").fetchall() == [(3,)]
    con.sql("DELETE FROM w WHERE v = 20")
    with tiledb.open(path) as arr:
        got = arr.query(return_arrow=True).df[:].sort_by("k")
    assert got.column("k").to_pylist() == [1, 3, 101, 102, 103]
    assert got.column("s").to_pylist() == ["x", None, "x", "y", None]
    assert con.sql("SELECT k FROM w ORDER BY k").fetchall() == [(1,), (3,), (101,), (102,), (103,)]


def test_insert_errors_name_the_problem(versions):
    con = tdbsql.connect().register("a", versions)
    with pytest.raises(tdbsql.SqlError, match="nope"):
        con.sql("INSERT INTO a (k, nope) VALUES (1, 2)")
    with pytest.raises(tdbsql.SqlError, match="values"):
        con.sql("INSERT INTO a VALUES (1, 2)")


def test_explain_shows_plan_and_funnel(versions):
    text = tdbsql.explain("SELECT count(*) FROM array WHERE k BETWEEN 2 AND 3", versions,
                          analyze=True)
    assert "Logical plan:" in text and "Operators:" in text
    assert "Fragments: 2 -> 2 (timestamps)" in text
    assert "rows=" in text
    via_sql = tdbsql.connect().register("a", versions).sql("EXPLAIN SELECT k FROM a").fetchall()
    assert "Scan a" in via_sql[0][0]


def test_errors_are_sql_errors(versions):
    con = tdbsql.connect().register("a", versions)
    with pytest.raises(tdbsql.SqlError, match="unknown table 'b'"):
        con.sql("SELECT * FROM b")
    with pytest.raises(tdbsql.SqlError, match="did you mean 'v'"):
        con.sql("SELECT vv FROM a")
    with pytest.raises(tdbsql.UnsupportedSql, match="not a window function"):
        con.sql("SELECT k, fill(v) OVER (ORDER BY k ROWS BETWEEN 1 PRECEDING AND "
                "CURRENT ROW) FROM a")
    with pytest.raises(tdbsql.ArrayNotFoundError):
        con.register("x", "/no/such/array")


def test_aggregates_answered_from_tile_metadata(tmp_path):
    path = str(tmp_path / "m")
    tdbsql.create(path, tdbsql.Schema(
        [tdbsql.Dim("x", "int64", (0, 99_999), 1000)],
        [tdbsql.Attr("v", "int64"), tdbsql.Attr("f", "float64", nullable=True)], capacity=1000))
    rng = np.random.default_rng(1)
    n = 20_000
    tdbsql.write(path, pa.table({"x": rng.permutation(100_000)[:n],
                                 "v": rng.integers(-10**6, 10**6, n),
                                 "f": pa.array(rng.normal(size=n), mask=rng.random(n) < 0.1)}))
    sql = "SELECT count(*), count(f), sum(v), min(v), max(f) FROM array WHERE x BETWEEN 1000 AND 80500"
    oracle = duckdb.connect()
    with tiledb.open(path) as arr:
        oracle.register("rows", arr.query(return_arrow=True).df[:])
    expected = oracle.sql(sql.replace("array", "rows")).fetchall()
    assert tdbsql.query(sql, path).to_pylist()[0] == dict(zip(
        ["count_star()", "count(f)", "sum(v)", "min(v)", "max(f)"], expected[0]))
    text = tdbsql.explain(sql, path, analyze=True)
    answered = int(text.split(" answered from metadata")[0].rsplit(", ", 1)[1])
    assert answered > 10  # most tiles never decoded


def test_plan_reused_until_a_table_changes(versions):
    con = tdbsql.connect()
    con.register("t", versions)
    sql = "SELECT k, v FROM t WHERE v > 20 ORDER BY k"
    first = con.sql(sql).fetchall()
    planned = con._plans[sql].query
    assert con.sql(sql).fetchall() == first and con._plans[sql].query is planned
    # the same name now holds other columns' types: planned again, not reused
    con.register_arrow("t", pa.table({"k": [1, 2], "v": ["x", "y"]}))
    with pytest.raises(tdbsql.SqlError):
        con.sql(sql)  # VARCHAR > INTEGER
    con.register_arrow("t", pa.table({"k": [1, 2], "v": [25.5, 3.0]}))
    assert con.sql(sql).fetchall() == [(1, 25.5)]
    con.register_arrow("t", pa.table({"k": [1]}))
    with pytest.raises(tdbsql.SqlError, match="v"):
        con.sql(sql)


def test_a_reused_plan_sees_new_fragments(tmp_path):
    """A cached plan keeps what follows from the SQL alone (pushed filters, scan conditions),
    never data: a write between two runs of one plan shows in the second."""
    path = str(tmp_path / "a")
    _sparse(path, {"k": [1, 2, 3], "v": [10, 20, 30], "s": ["a", "b", "c"]}, 1000)
    con = tdbsql.connect()
    con.register("t", path)
    sql = "SELECT k, v, s FROM t WHERE v > 15 AND k < 100 ORDER BY k"
    assert con.sql(sql).fetchall() == [(2, 20, "b"), (3, 30, "c")]
    planned = con._plans[sql].query
    _sparse(path, {"k": [2, 7], "v": [5, 70], "s": ["x", "y"]}, 2000)
    assert con.sql(sql).fetchall() == [(3, 30, "c"), (7, 70, "y")]
    assert con._plans[sql].query is planned


def test_an_evolved_schema_between_two_runs_is_read_anew(tmp_path):
    """Columns are worked out once per schema object (``catalog.arrow_schema``); a schema
    evolved by ``tiledb`` between two runs is a new file, so a new object: its added column
    is seen, and the cached plan is not reused."""
    path = str(tmp_path / "a")
    _sparse(path, {"k": [1, 2, 3], "v": [10, 20, 30], "s": ["a", "b", "c"]}, 1000)
    con = tdbsql.connect()
    con.register("t", path)
    assert con.sql("SELECT * FROM t ORDER BY k").arrow().column_names == ["k", "v", "s"]
    evolution = tiledb.ArraySchemaEvolution()
    evolution.add_attribute(tiledb.Attr("w", dtype=np.float64, nullable=True))
    evolution.array_evolve(path)
    got = con.sql("SELECT * FROM t ORDER BY k").arrow()
    assert got.column_names == ["k", "v", "s", "w"]
    assert got.column("w").to_pylist() == [None, None, None]
    with tiledb.open(path) as arr:
        assert arr.schema.has_attr("w")


def test_arrow_table_joins_an_array(versions):
    con = tdbsql.connect()
    con.register("a", versions)
    con.register_arrow("names", pa.table({"k": [1, 2, 5], "name": ["one", "two", "five"]}))
    got = con.sql("SELECT n.name, a.v FROM a JOIN names n ON a.k = n.k ORDER BY n.name")
    assert got.fetchall() == [("five", 50), ("one", 10), ("two", 21)]


def test_register_takes_arrow_tables_and_path_objects(versions):
    import pathlib

    con = tdbsql.connect()
    con.register("names", pa.table({"k": [1, 2]}))  # as register_arrow
    con.register("b", pathlib.Path(versions))
    assert con.sql("SELECT sum(k) FROM names").fetchall() == [(3,)]
    assert con.sql("SELECT count(*) FROM b").fetchall() == \
        tdbsql.connect().register("b", versions).sql("SELECT count(*) FROM b").fetchall()
    with pytest.raises(TypeError, match="array path or an Arrow table, not int"):
        con.register("x", 42)
    with pytest.raises(TypeError, match="timestamp and key apply to arrays"):
        con.register("x", pa.table({"k": [1]}), timestamp=5)


def test_fetchone_walks_the_rows(versions):
    res = tdbsql.connect().register("a", versions).sql("SELECT k FROM a ORDER BY k")
    seen = []
    while (row := res.fetchone()) is not None:
        seen.append(row)
    assert seen == [(1,), (2,), (3,), (4,), (5,)]
    res = tdbsql.connect().register("a", versions).sql("SELECT k FROM a ORDER BY k")
    assert res.fetchmany(2) == [(1,), (2,)] and res.fetchmany(5) == [(3,), (4,), (5,)]
    assert res.fetchmany(2) == [] and res.fetchone() is None
    assert res.fetchall() == seen  # every row, whatever was fetched before
    empty = tdbsql.connect().register("a", versions).sql("SELECT k FROM a WHERE k > 99")
    assert empty.fetchone() is None and empty.fetchall() == [] and empty.arrow().num_rows == 0


def test_bad_settings_name_the_variable(versions, monkeypatch):
    from tdbsql.storage.tile_cache import budget_bytes

    for name in ("TDBSQL_THREADS", "TDBSQL_MAX_ROWS"):
        monkeypatch.setenv(name, "abc")
        with pytest.raises(tdbsql.InterfaceError, match=name):
            tdbsql.connect().register("a", versions).sql("SELECT count(*) FROM a").fetchall()
        monkeypatch.delenv(name)
    monkeypatch.setenv("TDBSQL_TILE_CACHE_MB", "lots")
    with pytest.raises(tdbsql.InterfaceError, match="TDBSQL_TILE_CACHE_MB"):
        budget_bytes()
    monkeypatch.setenv("TDBSQL_TILE_CACHE_MB", "0.5")
    assert budget_bytes() == 512 * 1024


def test_bad_timestamp_windows_are_refused(versions):
    for bad in [(2500, 1500), -5, "abc", 1.5, (True, 2000)]:
        with pytest.raises(tdbsql.InterfaceError, match="timestamp"):
            tdbsql.query("SELECT count(*) FROM array", versions, timestamp=bad)
    assert tdbsql.query("SELECT count(*) AS n FROM array", versions,
                        timestamp=(None, 1500)).column("n").to_pylist() == [4]


def test_only_quoted_names_are_paths(versions, tmp_path, monkeypatch):
    """FROM 'a/path' opens an array; a bare word is a table name even where a folder of that
    name exists (a typo must not open some directory)."""
    monkeypatch.chdir(os.path.dirname(versions))
    name = os.path.basename(versions)
    con = tdbsql.connect()
    assert con.sql(f"SELECT count(*) FROM '{name}'").fetchall() == [(5,)]
    with pytest.raises(tdbsql.SqlError, match="unknown table"):
        con.sql(f"SELECT count(*) FROM {name}")
    # a quoted path that names nothing says so, not "unknown table"
    with pytest.raises(tdbsql.ArrayNotFoundError, match="no such array: './nope/x'"):
        con.sql("SELECT count(*) FROM './nope/x'")
