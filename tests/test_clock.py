"""now() / current_date: one reading of the clock per query, a new one per run
(planner/clock.py)."""

from __future__ import annotations

import datetime as dt
import time

import duckdb
import pyarrow as pa

import tdbsql
from tdbsql.planner.clock import read_clock
from tdbsql.planner.parse import parse

ROWS = pa.table({"k": pa.array(range(2000), pa.int64())})


def _connection():
    con = tdbsql.connect()
    con.register("t", ROWS)
    return con


def test_every_call_in_a_query_reads_the_same_instant():
    table = _connection().sql(
        "WITH c AS (SELECT now() AS a FROM t) "
        "SELECT count(DISTINCT a) AS n, min(a) = (SELECT current_timestamp) AS same, "
        "max(a) = now() AS too FROM c").arrow()
    assert table.to_pylist() == [{"n": 1, "same": True, "too": True}]


def test_each_run_reads_the_clock_again():
    con = _connection()
    sql = "SELECT now() AS t, current_date AS d"
    first = con.sql(sql).arrow().to_pylist()[0]
    time.sleep(0.002)
    second = con.sql(sql).arrow().to_pylist()[0]
    assert second["t"] > first["t"]  # not a plan cached with the first run's time
    assert first["t"].tzinfo is not None and first["t"].utcoffset() == dt.timedelta(0)
    assert second["d"] == second["t"].date()


def test_types():
    table = _connection().sql("SELECT current_date, now(), localtimestamp, today()").arrow()
    assert table.schema.types == [pa.date32(), pa.timestamp("us", tz="UTC"),
                                  pa.timestamp("us"), pa.date32()]
    assert table.column_names == ["current_date", "now()", "localtimestamp", "today()"]


def test_times_are_duckdbs_arrow_types_and_names():
    """localtime, current_time & co. come back as DuckDB returns them to Arrow (time64[us];
    DuckDB's TIME WITH TIME ZONE has no Arrow type either), named as written."""
    sql = ("SELECT current_time, LOCALTIME, get_current_time(), current_localtime(), "
           "CURRENT_TIME")
    table = _connection().sql(sql).arrow()
    oracle = duckdb.sql(sql).arrow()
    oracle = oracle.read_all() if hasattr(oracle, "read_all") else oracle
    assert table.schema.types == oracle.schema.types == [pa.time64("us")] * 5
    assert table.column_names == oracle.column_names == [
        "current_time", "LOCALTIME", "get_current_time()", "current_localtime()",
        "CURRENT_TIME"]


def test_read_clock_at_a_given_time():
    when = dt.datetime(2024, 2, 29, 23, 59, 58, 5, tzinfo=dt.timezone.utc)
    tree, read = read_clock(parse("SELECT current_date, now(), localtime FROM t WHERE k = 1"),
                            "", when)
    assert read
    assert tree.sql(dialect="duckdb") == (
        "SELECT CAST('2024-02-29' AS DATE), CAST('2024-02-29 23:59:58.000005' AS TIMESTAMPTZ), "
        "CAST('23:59:58.000005' AS TIME) FROM t WHERE k = 1")
    untouched = parse("SELECT k FROM t")
    assert read_clock(untouched, "") == (untouched, False)
