"""DESCRIBE / SHOW of registered tables through the API and the CLI.

DESCRIBE of a query and SHOW TABLES are checked against DuckDB in tests/sql/describe/; what
DuckDB cannot say about an array -- its dimensions as the key, fill values as defaults -- is
pinned here.
"""

from __future__ import annotations

import duckdb
import numpy as np
import pyarrow as pa
import pytest
import tiledb

import tdbsql
from test_cli import SAMPLE, run

COLUMNS = ["column_name", "column_type", "null", "key", "default", "extra"]


@pytest.fixture(scope="module")
def dense(tmp_path_factory):
    uri = str(tmp_path_factory.mktemp("describe") / "dense")
    dom = tiledb.Domain(tiledb.Dim("r", domain=(1, 4), tile=2, dtype=np.int64),
                        tiledb.Dim("c", domain=(1, 3), tile=3, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=False, attrs=[
        tiledb.Attr("v", dtype=np.int64, fill=7),
        tiledb.Attr("s", dtype=str, var=True, fill="it's"),
        tiledb.Attr("f", dtype=np.float64, nullable=True),
        tiledb.Attr("d", dtype="datetime64[D]", fill=np.datetime64("2024-01-31", "D")),
    ]))
    with tiledb.open(uri, "w") as A:
        A[1:2, 1:2] = {"v": np.array([[1]]), "s": np.array([["a"]], dtype=object),
                       "f": np.array([[0.5]]), "d": np.array([["2024-02-01"]], "datetime64[D]")}
    with tiledb.open(uri, "w") as A:  # the non-empty domain now holds unwritten cells
        A[3:4, 3:4] = {"v": np.array([[2]]), "s": np.array([["b"]], dtype=object),
                       "f": np.array([[1.5]]), "d": np.array([["2024-02-02"]], "datetime64[D]")}
    return uri


@pytest.fixture(scope="module")
def sparse_dups(tmp_path_factory):
    uri = str(tmp_path_factory.mktemp("describe") / "dups")
    dom = tiledb.Domain(tiledb.Dim("k", domain=(0, 99), tile=10, dtype=np.uint16))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, allows_duplicates=True,
                                                attrs=[tiledb.Attr("x", dtype=np.float32)]))
    return uri


def rows(con, sql):
    result = con.sql(sql)
    assert result.columns == COLUMNS
    return result.fetchall()


def test_describe_dense_array_key_and_fill_values(dense):
    con = tdbsql.connect().register("t", dense)
    assert rows(con, "DESCRIBE t") == [
        ("r", "BIGINT", "NO", "PRI", None, "dimension 1 of 2, domain [1, 4], tile 2"),
        ("c", "BIGINT", "NO", "PRI", None, "dimension 2 of 2, domain [1, 3], tile 3"),
        ("v", "BIGINT", "NO", None, "7", None),
        ("s", "VARCHAR", "NO", None, "'it''s'", None),
        ("f", "DOUBLE", "YES", None, "NULL", None),
        ("d", "DATE", "NO", None, "CAST('2024-01-31' AS DATE)", None),
    ]
    # the defaults are what unwritten cells read as
    assert con.sql("SELECT v, s, f, d FROM t WHERE r = 3 AND c = 1").fetchall() == [
        (7, "it's", None, np.datetime64("2024-01-31").astype(object))]
    assert rows(con, "SHOW t") == rows(con, "DESC t") == rows(con, "DESCRIBE TABLE t")


def test_describe_sparse_array_with_duplicates_has_no_key(sparse_dups):
    con = tdbsql.connect().register("t", sparse_dups)
    assert rows(con, "DESCRIBE t") == [
        ("k", "USMALLINT", "NO", None, None,
         "dimension 1 of 1, domain [0, 99], tile 10, duplicates allowed"),
        ("x", "FLOAT", "NO", None, None, None),
    ]


def test_describe_arrow_table_matches_duckdb():
    table = pa.table({"a": pa.array([1], pa.int32()), "b": ["x"],
                      "t": pa.array([0], pa.timestamp("ns")), "l": [[1.5]],
                      "z": pa.array([0], pa.timestamp("us", tz="UTC")),
                      "m": pa.array([1], pa.decimal128(12, 3))})
    con = tdbsql.connect().register("t", table)
    duck = duckdb.connect()
    duck.register("t", table)
    assert rows(con, "DESCRIBE t") == duck.sql("DESCRIBE t").fetchall()
    # a query over it too (its source, holding the table, was looked up by hash: TypeError)
    sql = ("DESCRIBE SELECT a, m * 2 AS d, median(m) OVER () AS md, quantile_cont(a, [0.5]) "
           "OVER () AS q FROM t")
    assert rows(con, sql) == duck.sql(sql).fetchall()


def test_show_all_tables_matches_duckdb(dense):
    table = pa.table({"a": pa.array([1], pa.int16()), "b": ["x"]})
    con = tdbsql.connect().register("t", table).register("arr", dense)
    duck = duckdb.connect()
    duck.register("t", table)
    duck.register("arr", con.sql("SELECT * FROM arr").arrow())
    assert con.sql("SHOW ALL TABLES").fetchall() == duck.sql("SHOW ALL TABLES").fetchall()
    assert con.sql("SHOW TABLES").fetchall() == [("arr",), ("t",)]


def test_describe_query_reads_nothing(dense):
    con = tdbsql.connect().register("t", dense)
    # an error only the data could raise does not arise: the query runs over empty tables
    assert rows(con, "DESCRIBE SELECT 1 // (v - v) AS q FROM t") == [
        ("q", "BIGINT", "YES", None, None, None)]


def test_describe_through_query_and_the_cli(dense):
    assert tdbsql.query("DESCRIBE array", dense).column("column_name").to_pylist() == \
        ["r", "c", "v", "s", "f", "d"]
    proc = run("query", "DESCRIBE array", SAMPLE, "-f", "csv")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[:2] == [
        '"column_name","column_type","null","key","default","extra"',
        '"day","INTEGER","NO","PRI",,"dimension 1 of 2, domain [0, 3650], tile 30"']
    proc = run("query", "SHOW TABLES", SAMPLE, "-f", "csv")
    assert proc.stdout.splitlines() == ['"name"', '"array"', '"stations"']


@pytest.mark.parametrize("sql, error, message", [
    ("DESCRIBE nope", tdbsql.SqlError, "unknown table 'nope'"),
    ("SHOW nope", tdbsql.SqlError, "unknown table 'nope'"),
    ("DESCRIBE SELECT nope FROM t", tdbsql.SqlError, "unknown column 'nope'"),
    ("SUMMARIZE t", tdbsql.UnsupportedSql, "SUMMARIZE is not supported"),
    ("SHOW TABLES FROM x", tdbsql.UnsupportedSql, "SHOW TABLES is not supported"),
    ("DESCRIBE INSERT INTO t VALUES (1)", tdbsql.UnsupportedSql, "INSERT statements"),
])
def test_describe_errors(dense, sql, error, message):
    con = tdbsql.connect().register("t", dense)
    with pytest.raises(error, match=message):
        con.sql(sql)


def test_describe_error_underlines_the_whole_statement(dense):
    con = tdbsql.connect().register("t", dense)
    with pytest.raises(tdbsql.SqlError) as info:
        con.sql("DESCRIBE (SELECT nope FROM t)")
    assert info.value.sql[slice(*info.value.span)] == "nope"
    assert info.value.sql.startswith("DESCRIBE")
