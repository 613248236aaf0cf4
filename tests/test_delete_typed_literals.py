"""DELETE comparing a datetime or time column with a typed literal (``DATE '...'``,
``TIMESTAMP[_S|_MS|_NS] '...'``, ``TIME '...'``, a string CAST to one): the literal keeps its own
type and compares exactly, as DuckDB compares the two types (was UnsupportedSql, so UPDATE on
an array with duplicates refused such a WHERE too); ``tiledb`` and tdbsql read what DuckDB's
DELETE leaves."""

from __future__ import annotations

import numpy as np
import pytest

from history_helpers import delete_as_duckdb
import tdbsql
from tdbsql import schema as S
from tdbsql.errors import SqlError, UnsupportedSql
from tdbsql.storage.writer import create, delete, write

UNITS = {"d": "D", "s": "s", "ms": "ms", "us": "us", "ns": "ns", "h": "h", "w": "W"}
# instants around 1970-01-02 00:00:01.5 in nanoseconds
NANOS = [0, 86_400 * 10**9, 86_401 * 10**9, 86_401_500_000_000, 86_401_500_000_001,
         86_402 * 10**9, 3 * 86_400 * 10**9 + 1]


def _array(path: str) -> None:
    create(path, S.Schema([S.Dim("x", "int64", (0, 99), 10)],
                          [S.Attr(name, f"datetime64[{unit}]") for name, unit in UNITS.items()]
                          + [S.Attr("t", "timedelta64[us]")]))
    instants = np.array(NANOS, dtype="datetime64[ns]")
    write(path, {"x": np.arange(len(NANOS)),
                 **{name: instants.astype(f"datetime64[{unit}]") for name, unit in UNITS.items()},
                 "t": (np.array(NANOS) % (86_400 * 10**9) // 1000).astype("m8[us]")},
          timestamp=10)


WHERES = [
    "d = DATE '1970-01-02'", "d < TIMESTAMP '1970-01-02 12:00:00'",  # a DATE is never 12:00
    "d = TIMESTAMP '1970-01-02 00:00:00'", "d >= TIMESTAMP '1970-01-01 00:00:00.000001'",
    "s <= TIMESTAMP '1970-01-02 00:00:01.5'",  # exact: second 1, not 2 (a string rounds)
    "s = TIMESTAMP '1970-01-02 00:00:01.5'", "s > TIMESTAMP_S '1970-01-02 00:00:01.5'",
    "ms < TIMESTAMP_NS '1970-01-02 00:00:01.5000000001'", "ms = DATE '1970-01-02'",
    "us > TIMESTAMP_MS '1970-01-02 00:00:01.0004'", "ns = TIMESTAMP '1970-01-02 00:00:01.5'",
    "ns > TIMESTAMP '1970-01-02 00:00:01.5'", "ns < TIMESTAMP_NS '1970-01-02 00:00:01.500000001'",
    "h >= TIMESTAMP '1970-01-01 23:30:00'", "w < DATE '1970-01-03'",
    "ns IN (DATE '1970-01-02', TIMESTAMP '1970-01-02 00:00:02', '1970-01-02 00:00:01.5')",
    "s BETWEEN DATE '1970-01-02' AND TIMESTAMP '1970-01-02 00:00:01.999'",
    "NOT (d IN (DATE '1970-01-01', CAST('1970-01-04' AS DATE)))", "ms > '1970-01-02'::TIMESTAMP",
    "DATE '1970-01-02' < d", "(d = DATE '1970-01-02') OR x = 0",
    "t < TIME '00:00:01.5'", "t = TIME '00:00:01.5'", "t >= TIME '00:00:00.000001'",
]


@pytest.mark.parametrize("where", WHERES)
def test_delete_matches_duckdb(tmp_path, where):
    path = str(tmp_path / "a")
    _array(path)
    delete_as_duckdb(path, where)


@pytest.mark.parametrize("where, error, message", [
    ("d = TIME '10:00'", SqlError, "cannot be compared with a TIME"),
    ("t < DATE '1970-01-01'", SqlError, "cannot be compared with a DATE"),
    ("d < DATE 'soon'", SqlError, "cannot read 'soon' as a DATE"),
    ("s < TIMESTAMPTZ '1970-01-01 00:00:00+00'", UnsupportedSql, "time zone"),
    ("d < DATE 'infinity'", UnsupportedSql, "infinite DATE"),
    ("x < DATE '1970-01-01'", UnsupportedSql, "typed date/time literal"),
    ("d < -DATE '1970-01-01'", UnsupportedSql, "cannot negate"),
])
def test_typed_literals_that_cannot_compare(tmp_path, where, error, message):
    path = str(tmp_path / "a")
    _array(path)
    with pytest.raises(error, match=message):
        delete(path, where, timestamp=20)
    assert tdbsql.query("SELECT count(*) AS n FROM array", path).column("n").to_pylist() == [
        len(NANOS)]


def test_update_with_duplicates_takes_a_date_literal(tmp_path):
    """An UPDATE of an array with duplicates writes its WHERE as a delete commit."""
    path = str(tmp_path / "dups")
    create(path, S.Schema([S.Dim("x", "int64", (0, 99), 10)],
                          [S.Attr("d", "datetime64[D]"), S.Attr("v", "int64")],
                          allows_duplicates=True))
    con = tdbsql.connect().register("a", path)
    con.sql("INSERT INTO a VALUES (1, DATE '2024-01-01', 1), (1, DATE '2024-02-01', 2), "
            "(2, DATE '2024-03-01', 3)")
    assert con.sql("UPDATE a SET v = v * 10 WHERE d >= DATE '2024-02-01'").fetchall() == [(2,)]
    assert con.sql("DELETE FROM a WHERE d < TIMESTAMP '2024-01-01 00:00:01'").fetchall() == [(1,)]
    assert con.sql("SELECT x, v FROM a ORDER BY ALL").fetchall() == [(1, 20), (2, 30)]
