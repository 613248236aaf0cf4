"""TIME_NS attributes (TileDB's TIME_NS, time64[ns] to tdbsql, DuckDB's TIME_NS) compared with
strings, TIME_NS and TIME constants and a TIME_MS column, cast, extracted and ordered: tdbsql
on the array answers what DuckDB answers on the cells written (which ``tiledb`` reads back as
timedelta64[ns], the same counts).  Before: a string or TIME beside a TIME_NS column was an
SqlError, typeof said TIME, CAST to TIME cut the nanoseconds where DuckDB rounds, and
epoch() of one raised a raw AttributeError."""

from __future__ import annotations

import duckdb
import numpy as np
import pyarrow as pa
import pytest

from history_helpers import tiledb
import tdbsql
from tdbsql import schema as S
from tdbsql.errors import SqlError
from tdbsql.storage.writer import create, write

_NS = [36_000_000_000_123, 36_000_000_000_000, 0, 86_399_999_999_999, None, 86_399_999_999_400,
       45_296_789_012_345]
SOURCE = pa.table({
    "x": pa.array(range(len(_NS)), pa.int64()),
    "tn": pa.array(_NS, pa.time64("ns")),
    "tm": pa.array([36_000_000, 36_000_001, 0, 86_399_999, 5, 86_399_999, 45_296_789],
                   pa.time32("ms")),
})

QUERIES = [
    "SELECT x FROM t WHERE tn = '10:00:00' ORDER BY x",
    "SELECT x FROM t WHERE tn = '10:00:00.000000123' ORDER BY x",
    "SELECT x FROM t WHERE tn > '10:00:00' ORDER BY x",
    "SELECT x FROM t WHERE tn <= '12:34:56.789012345' ORDER BY x",
    "SELECT x FROM t WHERE tn BETWEEN '09:00' AND '10:00:00.0000001' ORDER BY x",
    "SELECT x FROM t WHERE tn IN ('10:00:00', '00:00:00') ORDER BY x",
    "SELECT x FROM t WHERE tn = TIME '10:00:00' ORDER BY x",
    "SELECT x FROM t WHERE tn <> TIME '10:00:00' ORDER BY x",
    "SELECT x FROM t WHERE tn = TIME_NS '10:00:00.000000123' ORDER BY x",
    "SELECT x FROM t WHERE tn < TIME_NS '10:00:00.000000001' ORDER BY x",
    "SELECT x FROM t WHERE tn = tm ORDER BY x",
    "SELECT x, typeof(tn), CAST(tn AS VARCHAR) FROM t ORDER BY x",
    "SELECT x, CAST(CAST(tn AS TIME) AS VARCHAR) FROM t ORDER BY x",
    "SELECT x, hour(tn), minute(tn), second(tn), microsecond(tn), epoch(tn) FROM t ORDER BY x",
    "SELECT CAST(max(tn) AS VARCHAR), CAST(min(tn) AS VARCHAR), count(DISTINCT tn) FROM t",
    "SELECT CAST(tn AS VARCHAR) FROM t ORDER BY tn DESC NULLS LAST",
]


@pytest.fixture(scope="module")
def path(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("time_ns") / "a")
    create(path, S.Schema([S.Dim("x", "int64", (0, 99), 10)],
                          [S.Attr("tn", "TIME_NS", nullable=True), S.Attr("tm", "TIME_MS")]))
    write(path, SOURCE, timestamp=10)
    return path


def test_tiledb_reads_the_counts_written(path):
    with tiledb.open(path) as A:
        cells = A[:]
    counts = np.ma.masked_array(cells["tn"]).astype(np.int64)
    assert [None if m else int(v) for v, m in zip(counts.data, np.ma.getmaskarray(counts))] == _NS


@pytest.mark.parametrize("sql", QUERIES)
def test_as_duckdb(path, sql):
    oracle = duckdb.connect()
    oracle.register("t", SOURCE)
    want = oracle.sql(sql).fetchall()
    assert tdbsql.connect().register("t", path).sql(sql).fetchall() == want


@pytest.mark.parametrize("sql", ["SELECT x FROM t WHERE tn < TIME '10:00'",
                                 "SELECT tn + INTERVAL 1 HOUR FROM t",
                                 "SELECT coalesce(tn, TIME '01:00') FROM t"])
def test_what_duckdb_refuses_is_an_error(path, sql):
    oracle = duckdb.connect()
    oracle.register("t", SOURCE)
    with pytest.raises(duckdb.Error):
        oracle.sql(sql).fetchall()
    with pytest.raises(SqlError):
        tdbsql.connect().register("t", path).sql(sql).fetchall()
