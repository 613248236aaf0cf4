"""DELETE comparing a datetime column with a date/time string: the string is cast to the
column's SQL type as DuckDB casts it (rounded half away from zero to a TIMESTAMP's unit, the
day of a DATE), then compared exactly with the stored counts (hours, minutes and weeks too);
``tiledb`` and tdbsql read what DuckDB's DELETE leaves."""

from __future__ import annotations

import numpy as np
import pytest

from history_helpers import delete_as_duckdb
import tdbsql
from tdbsql import schema as S
from tdbsql.errors import SqlError, UnsupportedSql
from tdbsql.storage.writer import create, delete, write

UNITS = {"h": "h", "m": "m", "s": "s", "ms": "ms", "ns": "ns", "d": "D", "w": "W"}
COUNTS = [-3, -1, 0, 1, 2, 5]


def _array(path: str) -> None:
    create(path, S.Schema([S.Dim("x", "int64", (0, 99), 10)],
                          [S.Attr(name, f"datetime64[{unit}]") for name, unit in UNITS.items()]))
    write(path, {"x": np.arange(len(COUNTS)),
                 **{name: np.array(COUNTS, dtype=f"datetime64[{unit}]")
                    for name, unit in UNITS.items()}}, timestamp=10)


WHERES = ["s < '1970-01-01 00:00:01.5'", "s <= '1970-01-01 00:00:01.5'",
          "s = '1970-01-01 00:00:01.5'", "s > '1969-12-31 23:59:58.5'",
          "s >= '1969-12-31 23:59:58.4'", "ms < '1970-01-01 00:00:00.0005'",
          "ms IN ('1970-01-01 00:00:00.0015', '1970-01-01 00:00:00.0049')",
          "ns > '1970-01-01 00:00:00.000000001'", "h < '1970-01-01 00:30:00'",
          "h <= '1970-01-01 01:59:59.5'", "h = '1970-01-01 01:00:00.4'", "h > '1969-12-31 22:30'",
          "m >= '1970-01-01 00:00:30'", "m IN ('1970-01-01 00:01:00', '1970-01-01 00:02:00.5')",
          "d < '1970-01-02 12:00:00'", "d > '1969-12-31 23:00'", "w < '1970-01-03'",
          "w >= '1970-01-08'", "w = '1970-01-08'", "w IN ('1970-01-15', '1970-01-01')",
          "NOT (s BETWEEN '1969-12-31 23:59:59.5' AND '1970-01-01 00:00:04.5')",
          # spellings DuckDB reads; a TIMESTAMP ignores a UTC offset
          "s <= '1970-01-01 00:00:01+05:30'", "ms < '1970-01-01 00:00:00.002-01'",
          "s < '1970-1-1 00:00:02'", "d < '1970-1-2'", "s < '1969-12-31 24:00:00'",
          "d = '1969-12-31 24:00:00'", "d > '0044-03-15 (BC)'", "s = 'epoch'", "d >= 'epoch'",
          "ns < 'epoch'", "s < 'infinity'", "s > '-infinity'", "ms = 'infinity'",
          "d < 'infinity'", "w > '-infinity'", "h < 'infinity'", "m IN ('epoch', 'infinity')",
          "s < ' INF'", "d > '-inf'", "ms >= ' Epoch '"]


@pytest.mark.parametrize("where", WHERES)
def test_delete_matches_duckdb(tmp_path, where):
    path = str(tmp_path / "a")
    _array(path)
    delete_as_duckdb(path, where)


def test_a_string_that_is_no_date_is_an_error(tmp_path):
    path = str(tmp_path / "a")
    _array(path)
    with pytest.raises(SqlError, match="cannot read 'soon' as a DATETIME_HR value") as caught:
        delete(path, "h IN ('1970-01-01', 'soon')")
    assert "h IN ('1970-01-01', 'soon')"[slice(*caught.value.span)] == "'soon'"


def test_strings_are_not_compared_with_raw_counts(tmp_path):
    """SQL reads years (and TIME_PS) as a raw count (DuckDB: "Could not convert string
    '2020-01-01' to INT64")."""
    path = str(tmp_path / "a")
    create(path, S.Schema([S.Dim("x", "int64", (0, 99), 10)],
                          [S.Attr("y", "datetime64[Y]"), S.Attr("p", "timedelta64[ps]")]))
    with pytest.raises(UnsupportedSql, match="raw count"):
        delete(path, "y = '2020-01-01'")
    with pytest.raises(UnsupportedSql, match="raw count"):
        delete(path, "p IN ('01:00:00', '02:00:00')")


TIME_UNITS = {"th": "h", "tm": "m", "ts": "s", "tms": "ms", "tus": "us", "tns": "ns"}
TIME_COUNTS = [0, 1, 2, 23, 5, 7]
TIME_WHERES = [
    "tms IN ('00:00:00.001', '00:00:00.0065')", "tms < '00:00:00.0015'", "tms = '00:00:00'",
    "tus > '00:00:00.000001'", "tus <= '00:00:00.000005'", "ts < '00:00:01.5'",
    "ts >= '00:00:02.0000001'", "ts = '00:00:23'", "tm < '00:01:30'", "tm > '00:00:59.999'",
    "th <= '02:00'", "th = '01:00:00.5'", "th < '24:00:00'", "tns = '00:00:00.000000005'",
    "tns < '00:00:00.0000000015'", "tns BETWEEN '00:00:00.000000001' AND '00:00:00.000000007'",
    "tns > '00:00:00'", "NOT (ts IN ('00:00:01', '00:00:05'))", "ts < '1970-01-01 00:00:02'",
    "tms <> '00:00:00.007'", "ts = 'epoch'",
]


@pytest.mark.parametrize("where", TIME_WHERES)
def test_a_time_column_compares_with_strings_as_duckdb(tmp_path, where):
    """A time field's string is DuckDB's CAST to TIME (microseconds; TIME_NS: nanoseconds),
    compared exactly with the stored counts (was UnsupportedSql)."""
    path = str(tmp_path / "a")
    create(path, S.Schema([S.Dim("x", "int64", (0, 99), 10)],
                          [S.Attr(name, f"timedelta64[{unit}]")
                           for name, unit in TIME_UNITS.items()]))
    write(path, {"x": np.arange(len(TIME_COUNTS)),
                 **{name: np.array(TIME_COUNTS, dtype=f"m8[{unit}]")
                    for name, unit in TIME_UNITS.items()}}, timestamp=10)
    delete_as_duckdb(path, where)


def test_a_time_string_that_does_not_read_is_an_error(tmp_path):
    path = str(tmp_path / "a")
    create(path, S.Schema([S.Dim("x", "int64", (0, 99), 10)], [S.Attr("t", "timedelta64[ms]")]))
    with pytest.raises(SqlError, match="cannot read '25:00' as a TIME_MS value"):
        delete(path, "t < '25:00'")


NUMBERS = ["d < 5", "5 > d", "s = 3", "ms <> 0", "ns > -1", "h <= 2.5", "m >= 1e0", "w = TRUE",
           "d IN (1, 2)", "s NOT IN (3)", "d IN ('1970-01-01', 5)", "s BETWEEN 1 AND 5",
           "ns BETWEEN '1970-01-01' AND 5", "t < 5", "t IN (1000)", "x < 3 OR d = 0"]


@pytest.mark.parametrize("where", NUMBERS)
def test_a_number_is_no_date(tmp_path, where):
    """A number compared with a column SQL reads as a DATE, TIMESTAMP or TIME is refused, as
    DuckDB refuses it (a Binder or Conversion error: an explicit cast is required), before
    anything is written; the error underlines the number."""
    import duckdb
    import os

    path = str(tmp_path / "a")
    _array(path)
    create(str(tmp_path / "t"), S.Schema([S.Dim("x", "int64", (0, 99), 10)],
                                         [S.Attr("t", "timedelta64[ms]")]))
    source = tdbsql.query("SELECT * FROM array", path)
    target = path
    if "t " in where:
        target = str(tmp_path / "t")
        write(target, {"x": np.arange(3), "t": np.array([0, 1000, 5], "m8[ms]")}, timestamp=10)
        source = tdbsql.query("SELECT * FROM array", target)
    oracle = duckdb.connect()
    oracle.register("src", source)
    oracle.sql("CREATE TABLE t AS SELECT * FROM src")
    with pytest.raises((duckdb.BinderException, duckdb.ConversionException)):
        oracle.sql(f"DELETE FROM t WHERE {where}")
    commits = os.listdir(os.path.join(target, "__commits"))
    with pytest.raises(SqlError, match="without an explicit cast") as caught:
        tdbsql.connect().register("t", target).sql(f"DELETE FROM t WHERE {where}")
    if "TRUE" not in where:  # sqlglot records no place for TRUE
        culprit = f"DELETE FROM t WHERE {where}"[slice(*caught.value.span)]
        assert culprit[0].isdigit()
    assert os.listdir(os.path.join(target, "__commits")) == commits


def test_raw_counts_and_strings_still_compare(tmp_path):
    """Years read as a raw count (BIGINT) and compare with numbers; dates with strings."""
    path = str(tmp_path / "a")
    create(path, S.Schema([S.Dim("x", "int64", (0, 99), 10)],
                          [S.Attr("y", "datetime64[Y]"), S.Attr("d", "datetime64[D]")]))
    write(path, {"x": np.arange(4), "y": np.array([0, 1, 2, 3], "M8[Y]"),
                 "d": np.array([0, 1, 2, 3], "M8[D]")}, timestamp=10)
    delete_as_duckdb(path, "y < 2.5 AND d > '1970-01-01'")
