"""Row-by-row differential test of date functions over random values, tdbsql against
DuckDB: ``date_sub`` in every unit between 1,000 random pairs of TIMESTAMPs and DATEs
(month ends, leap days, times of day either side, before 1970), and ``make_timestamp`` /
``make_time`` from random valid parts (fractional seconds), and DATEs / TIMESTAMPs plus or
minus INTERVALs whose amounts differ from row to row (month ends clamp)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import tdbsql
from sql_fixtures import arrow_engines

duckdb = pytest.importorskip("duckdb")

ROWS = 1000
UNITS = ["microsecond", "millisecond", "second", "minute", "hour", "day", "week", "month",
         "quarter", "year", "decade", "century", "millennium"]


def _stamps(rng) -> np.ndarray:
    """Random microsecond timestamps, a third of them at a month's last day or first."""
    micros = rng.integers(-2 * 10**15, 4 * 10**15, ROWS)
    stamps = micros.astype("datetime64[us]")
    months = stamps.astype("datetime64[M]")
    month_end = (months + 1).astype("datetime64[D]") - np.timedelta64(1, "D")
    time_of_day = stamps - stamps.astype("datetime64[D]")
    pick = rng.integers(0, 3, ROWS)
    return np.where(pick == 0, month_end + time_of_day,
                    np.where(pick == 1, months.astype("datetime64[D]") + time_of_day, stamps))


@pytest.fixture(scope="module")
def engines():
    rng = np.random.default_rng(77)
    a, b = _stamps(rng), _stamps(rng)
    near = a + rng.integers(-40 * 86400, 40 * 86400, ROWS).astype("timedelta64[s]")
    table = pa.table({
        "id": pa.array(range(ROWS), pa.int64()),
        "a": pa.array(a, pa.timestamp("us"), mask=rng.random(ROWS) < 0.05),
        "b": pa.array(b, pa.timestamp("us")),
        "near": pa.array(near, pa.timestamp("us")),
        "y": pa.array(rng.integers(1, 9999, ROWS), pa.int64()),
        "mo": pa.array(rng.integers(1, 13, ROWS), pa.int64()),
        "dd": pa.array(rng.integers(1, 29, ROWS), pa.int64()),
        "h": pa.array(rng.integers(0, 24, ROWS), pa.int64()),
        "mi": pa.array(rng.integers(0, 60, ROWS), pa.int64(), mask=rng.random(ROWS) < 0.05),
        "n": pa.array(rng.integers(-40, 40, ROWS), pa.int32(), mask=rng.random(ROWS) < 0.05),
        "s": pa.array([round(v, int(k)) for v, k in zip(rng.random(ROWS) * 60,
                                                         rng.integers(0, 8, ROWS))]),
    })
    return arrow_engines(table)


@pytest.mark.parametrize("unit", UNITS)
def test_date_sub_same_as_duckdb(engines, unit):
    ours, oracle = engines
    sql = (f"SELECT id, date_sub('{unit}', a, b), date_sub('{unit}', a, near), "
           f"datesub('{unit}', near::DATE, a::DATE) FROM t ORDER BY id")
    assert ours.execute(sql).fetchall() == oracle.execute(sql).fetchall()


@pytest.mark.parametrize("expression", [
    "make_timestamp(y, mo, dd, h, mi, s)", "make_time(h, mi, s)",
    "make_timestamp(epoch_us(a))", "make_timestamp(2024, 2, 29, h, 59, s)",
])
def test_from_parts_same_as_duckdb(engines, expression):
    ours, oracle = engines
    sql = f"SELECT id, {expression} FROM t ORDER BY id"
    assert ours.execute(sql).fetchall() == oracle.execute(sql).fetchall()


@pytest.mark.parametrize("expression", [
    "a + INTERVAL (n) MONTH", "b - INTERVAL (n) DAY", "a::DATE + to_months(n)",
    "b + n * INTERVAL '1 month 2 days 3 hours'", "a + to_hours(n) + to_minutes(n)",
    "b - (INTERVAL (n) YEAR + INTERVAL (mi) SECOND)", "to_weeks(n) + near",
    "a + INTERVAL (n) QUARTER - to_days(dd)",
    "CASE WHEN n > 0 THEN INTERVAL (n) DAY ELSE to_months(n) END + b",
])
def test_intervals_per_row_same_as_duckdb(engines, expression):
    ours, oracle = engines
    sql = f"SELECT id, {expression} FROM t ORDER BY id"
    assert ours.execute(sql).fetchall() == oracle.execute(sql).fetchall()


_STAMPS = ["2024-01-01 10:00:00", "2024-01-01", "2024-01-01 10:00:00+01", "2024-01-01 10:00",
           "2024-01-01T10:00:00.5", "2024-01-01 10:00:00 Europe/Berlin", "10:00:00"]


@pytest.mark.parametrize("type_", ["TIMESTAMP", "DATE", "TIMESTAMPTZ", "TIMESTAMP_MS", "TIME"])
def test_white_space_around_a_date_or_time_as_duckdb_reads_it(type_):
    """Only ASCII white space is skipped around a value; after a clock without a zone
    DuckDB reads on only when a space comes first ('10:00:00\\t' is no TIMESTAMP,
    '10:00:00 \\t' is)."""
    con = tdbsql.connect()
    for text in _STAMPS:
        for before, after in [("", ""), (" ", " "), ("\t", "\t"), ("", "\n"), ("", " \t"),
                              ("", "\t "), ("", "\v"), ("", "\u00a0"), ("\u2003", "")]:
            value = before + text + after
            try:
                want = duckdb.execute(f"SELECT CAST(? AS {type_})", [value]).fetchall()
            except duckdb.Error:
                want = None
            try:
                got = con.sql(f"SELECT CAST(? AS {type_}) AS v", [value]).fetchall()
            except tdbsql.Error:
                got = None
            assert (got is None) == (want is None), (type_, value, got, want)
