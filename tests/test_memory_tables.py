"""CREATE TABLE ... AS query keeps a result in the connection's memory, DROP TABLE forgets it;
results and column names compared with DuckDB's in-memory database."""

from __future__ import annotations

import os

import pyarrow as pa
import pytest

duckdb = pytest.importorskip("duckdb")

import tdbsql  # noqa: E402
from tdbsql.errors import SqlError, UnsupportedSql  # noqa: E402

SAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "stations")

SCRIPT = [
    "CREATE TABLE p AS (SELECT 7 AS x)",
    "CREATE TABLE q AS VALUES (1, 'a'), (2, 'b')",
    "SELECT * FROM q JOIN p ON q.col0 < p.x ORDER BY ALL",
    "SELECT * FROM (VALUES (1, 2)), (VALUES (3))",
    "CREATE TABLE c AS SELECT city, count(*) AS n, 1 AS n, max(temp_c) AS hot FROM a "
    "GROUP BY city",
    "SELECT * FROM c ORDER BY city",
    "CREATE TABLE IF NOT EXISTS c AS SELECT 1",
    "CREATE OR REPLACE TEMP TABLE C(city2) AS SELECT city, n + 1 FROM c WHERE n > 3",
    "SELECT * FROM c ORDER BY ALL",
    "SELECT a.day, c.city2 FROM a JOIN c ON a.city = c.city2 WHERE a.day < 2 ORDER BY ALL",
    "DROP TABLE c",
    "DROP TABLE IF EXISTS c",
    # a table in memory is written as DuckDB writes a table; rows keep their order
    "CREATE TABLE t AS SELECT city, day, temp_c FROM a WHERE station = 1 AND day < 6",
    "INSERT INTO t VALUES ('Rome', 100, 20.5), ('Oslo', 101, NULL)",
    "INSERT INTO t (day, city) VALUES (102, 'Nice')",
    "INSERT INTO t SELECT city, day + 1000, temp_c * 2 FROM a WHERE station = 2 AND day < 3",
    "INSERT INTO t (DAY, temp_c) SELECT 7, 1.5",
    "UPDATE t SET temp_c = temp_c + 1, city = upper(city) WHERE day > 100",
    "UPDATE t SET day = day * 2, temp_c = day",
    "UPDATE t SET temp_c = 2.5 WHERE city IS NULL",
    "SELECT * FROM t",
    "DELETE FROM t WHERE temp_c > 40 OR city = 'NICE'",
    "DELETE FROM t WHERE temp_c IS NULL",
    "SELECT * FROM t",
    "DELETE FROM t",
    "SELECT count(*) FROM t",
    "INSERT INTO t VALUES ('Rome', 1, 2.5), ('Oslo', 2, NULL)",
    "TRUNCATE t",  # DELETE FROM t
    "INSERT INTO t VALUES ('Rome', 1, 2.5)",
    "TRUNCATE TABLE t",
    "SELECT count(*) FROM t",
]


def test_tables_in_memory_as_duckdb():
    con = tdbsql.connect().register("a", SAMPLE)
    duck = duckdb.connect()
    duck.register("rows", con.sql("SELECT * FROM a").arrow())
    duck.sql("CREATE TABLE a AS SELECT * FROM rows")
    for sql in SCRIPT:
        ours, theirs = con.sql(sql), duck.execute(sql)
        assert ours.fetchall() == theirs.fetchall(), sql
        if sql.startswith("SELECT"):
            assert ours.arrow().column_names == [d[0] for d in theirs.description], sql
    assert "c" not in con.tables()


def test_memory_table_errors():
    con = tdbsql.connect().register("a", SAMPLE).register("r", pa.table({"x": [1]}))
    con.sql("CREATE TABLE t AS SELECT 1 AS x; CREATE VIEW v AS SELECT 2 AS y")
    cases = [("CREATE TABLE t AS SELECT 2", SqlError, "a table named 't' already exists"),
             ("CREATE TABLE a AS SELECT 2", SqlError, "'a' names an array"),
             ("CREATE OR REPLACE TABLE a AS SELECT 2", SqlError, "'a' names an array"),
             ("CREATE TABLE \"\" AS SELECT 2", SqlError, "cannot be empty"),
             ("CREATE TABLE u(p, P) AS SELECT 1, 2", SqlError, "names column 'p' twice"),
             ("CREATE OR REPLACE TABLE IF NOT EXISTS u AS SELECT 1", SqlError,
              "cannot also be IF NOT EXISTS"),
             ("DROP TABLE IF EXISTS v", SqlError, "'v' is a view"),
             ("CREATE TABLE u (x INTEGER)", UnsupportedSql, "column definitions"),
             ("CREATE TABLE u(p, q) AS SELECT 1", SqlError, "names 2 columns, but its query "
                                                            "gives 1"),
             ("DROP TABLE a", UnsupportedSql, "never deletes"),
             ("DROP TABLE nope", SqlError, "no table named 'nope'"),
             ("INSERT INTO r VALUES (2)", UnsupportedSql, "only arrays \\(and tables made"),
             ("UPDATE t SET x = 1 FROM t AS u", UnsupportedSql, "FROM of a table in memory"),
             ("UPDATE t SET y = 1", SqlError, "'y' is not a column of the table"),
             ("INSERT INTO t VALUES ('abc')", SqlError, "cannot be stored as int32"),
             ("INSERT INTO t (x, x) VALUES (1, 2)", SqlError, "listed twice"),
             ("TRUNCATE a", UnsupportedSql, "DELETE without WHERE"),
             ("TRUNCATE r", UnsupportedSql, "only arrays \\(and tables made"),
             ("TRUNCATE t, a", UnsupportedSql, "TRUNCATE of one table")]
    for sql, error, message in cases:
        with pytest.raises(error, match=message):
            con.sql(sql)
    assert con.sql("SELECT * FROM t").fetchall() == [(1,)]
    assert con.sql("SELECT count(*) FROM a").fetchall() == [(225,)]  # the array stays


def test_a_volatile_where_is_tested_once_a_row():
    con = tdbsql.connect()
    con.sql("CREATE TABLE t AS SELECT range AS i, 0 AS v FROM range(2000)")
    updated = con.sql("UPDATE t SET v = i + 1 WHERE random() < 0.5").fetchall()[0][0]
    assert 0 < updated < 2000
    assert con.sql("SELECT count(*) FILTER (WHERE v = i + 1), count(*) FILTER (WHERE v = 0) "
                   "FROM t").fetchall() == [(updated, 2000 - updated)]


def test_executemany_copy_from_and_null_columns():
    import pyarrow.parquet as pq

    con = tdbsql.connect()
    con.sql("CREATE TABLE t AS SELECT 1 AS i, 2 AS v; CREATE TABLE n AS SELECT NULL AS a")
    con.executemany("INSERT INTO t VALUES (?, ?)", [(3, 4), (5, 6)])
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "in.parquet")
        pq.write_table(pa.table({"i": [7], "v": [8]}), path)
        assert con.sql(f"COPY t FROM '{path}'").fetchall() == [(1,)]
    assert con.sql("SELECT * FROM t").fetchall() == [(1, 2), (3, 4), (5, 6), (7, 8)]
    with pytest.raises(SqlError, match="INSERT into 'n': the values cannot be stored"):
        con.sql("INSERT INTO n VALUES (5)")
