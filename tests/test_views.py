"""CREATE VIEW / DROP VIEW as DuckDB has them: views over arrays, Arrow tables, Parquet files
and other views, read like the subquery they are (filters pushed into the array's scan),
column names, DESCRIBE / SHOW, replacing and dropping, and DuckDB's errors."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import tdbsql
from sql_fixtures import assert_same_table, duckdb_over

SAMPLE = Path(__file__).resolve().parents[1] / "examples" / "stations"

SETUP = [
    "CREATE VIEW wet AS SELECT day, station, city, rain_mm FROM st WHERE rain_mm > 5",
    "CREATE VIEW per_city(place, days) AS SELECT city, count(*), avg(temp_c) AS t FROM st "
    "GROUP BY city",
    "CREATE TEMP VIEW wet_cities AS SELECT w.city, p.days FROM wet w JOIN per_city p "
    "ON w.city = p.place",
    "CREATE OR REPLACE VIEW wet AS SELECT day, station, city, rain_mm FROM st "
    "WHERE rain_mm > 8",
]

QUERIES = [
    "SELECT * FROM wet",
    "SELECT * FROM per_city",
    "SELECT city, count(*) FROM wet_cities GROUP BY city",
    "SELECT x.day, x.city FROM wet AS x WHERE x.day BETWEEN 10 AND 20",
    "SELECT a, b FROM per_city AS pc(a, b)",
    "SELECT * FROM wet WHERE station IN (SELECT station FROM wet WHERE day < 5)",
    "WITH wet AS (SELECT 1 AS shadowed) SELECT * FROM wet",
    "SELECT place, days FROM per_city UNION ALL SELECT city, day FROM wet",
    "DESCRIBE per_city",
    "DESCRIBE wet_cities",
    "SHOW TABLES",
    "SHOW ALL TABLES",
]


@pytest.fixture(scope="module")
def engines():
    ours = tdbsql.connect().register("st", str(SAMPLE))
    duck = duckdb_over(str(SAMPLE), "st")
    for statement in SETUP:
        assert ours.sql(statement).fetchall() == duck.execute(statement).fetchall() == []
    return ours, duck


@pytest.mark.parametrize("query", QUERIES)
def test_a_query_over_views_gives_duckdbs_rows(engines, query):
    ours, duck = engines
    assert_same_table(ours.sql(query).arrow(), duck.sql(query).arrow())


def test_a_filter_on_a_view_prunes_the_arrays_tiles():
    con = tdbsql.connect().register("st", str(SAMPLE))
    con.sql("CREATE VIEW early AS SELECT * FROM st WHERE day < 3")
    plain = con.sql("EXPLAIN ANALYZE SELECT count(*) FROM st WHERE day < 3 AND station = 2")
    viewed = con.sql("EXPLAIN ANALYZE SELECT count(*) FROM early WHERE station = 2")
    assert con.sql("SELECT count(*) FROM early WHERE station = 2").fetchall() == \
        con.sql("SELECT count(*) FROM st WHERE day < 3 AND station = 2").fetchall()
    assert "Pushed" in viewed.fetchall()[0][0]
    assert _tiles_read(viewed) == _tiles_read(plain)


def _tiles_read(result) -> list[str]:
    return [line.strip() for line in result.fetchall()[0][0].splitlines()
            if "tiles" in line.lower()]


def test_a_view_reads_its_tables_as_they_are_now():
    con = tdbsql.connect().register("t", pa.table({"v": [1, 2]}))
    con.sql("CREATE VIEW doubled AS SELECT v * 2 AS w FROM t")
    assert con.sql("SELECT sum(w) FROM doubled").fetchall() == [(6,)]
    con.register("t", pa.table({"v": [10]}))
    assert con.sql("SELECT sum(w) FROM doubled").fetchall() == [(20,)]
    con.sql("CREATE OR REPLACE VIEW doubled AS SELECT v * 3 AS w FROM t")
    assert con.sql("SELECT sum(w) FROM doubled").fetchall() == [(30,)]  # not the cached plan
    con.register("doubled", pa.table({"w": [7]}))  # a table in its place
    assert con.sql("SELECT sum(w) FROM doubled").fetchall() == [(7,)]


def test_drop_view():
    con = tdbsql.connect()
    con.sql("CREATE VIEW v AS SELECT 1 AS one")
    assert con.sql("DROP VIEW v").arrow().column_names == ["Success"]
    with pytest.raises(tdbsql.SqlError, match="unknown table 'v'"):
        con.sql("SELECT * FROM v")
    assert con.sql("DROP VIEW IF EXISTS v").fetchall() == []
    with pytest.raises(tdbsql.SqlError, match="no view named 'v'"):
        con.sql("DROP VIEW v")


@pytest.mark.parametrize("statement,error,message", [
    ("CREATE VIEW v AS SELECT 1", tdbsql.SqlError, "a view named 'v' already exists"),
    ("CREATE VIEW t AS SELECT 1", tdbsql.SqlError, "a table named 't' already exists"),
    ("CREATE VIEW bad AS SELECT * FROM nope", tdbsql.SqlError, "unknown table 'nope'"),
    ("CREATE VIEW bad AS SELECT nope FROM t", tdbsql.SqlError, "nope"),
    ("CREATE VIEW bad(a, b, c) AS SELECT 1, 2", tdbsql.SqlError, "names 3 columns, but its "
     "query gives 2"),
    ("CREATE MATERIALIZED VIEW m AS SELECT 1", tdbsql.UnsupportedSql, "CREATE VIEW"),
    ("SELECT * FROM v FOR SYSTEM_TIME AS OF 5", tdbsql.SqlError, "'v' is a view"),
])
def test_view_errors(statement, error, message):
    con = tdbsql.connect().register("t", pa.table({"x": [1]}))
    con.sql("CREATE VIEW v AS SELECT x FROM t")
    with pytest.raises(error, match=message):
        con.sql(statement)


def test_a_view_reading_itself_is_an_error_when_read():
    con = tdbsql.connect().register("t", pa.table({"x": [1]}))
    con.sql("CREATE VIEW v AS SELECT x FROM t")
    con.sql("CREATE OR REPLACE VIEW v AS SELECT * FROM v")  # v was the old view: accepted
    with pytest.raises(tdbsql.SqlError, match="the view 'v' reads itself"):
        con.sql("SELECT * FROM v")


def test_a_view_reading_itself_twice_is_an_error_at_once():
    """Each reference is read through depth first, so a view that reads itself twice is
    found at its first repeat (reading through every copy doubled the query each level)."""
    con = tdbsql.connect().register("t", pa.table({"x": [1]}))
    con.sql("CREATE VIEW v AS SELECT x FROM t")
    con.sql("CREATE OR REPLACE VIEW v AS SELECT * FROM v UNION ALL SELECT * FROM v")
    with pytest.raises(tdbsql.SqlError, match="reads itself"):
        con.sql("SELECT count(*) FROM v")


def test_a_cte_named_as_a_table_a_view_reads_is_refused():
    """DuckDB reads the view's own table; the view's query pasted under the CTE would read
    the CTE: refused rather than answered wrong.  A CTE of another name is fine."""
    con = tdbsql.connect().register("t", pa.table({"i": [1, 2, 3]}))
    con.sql("CREATE VIEW v AS SELECT i FROM t WHERE i > 1")
    with pytest.raises(tdbsql.UnsupportedSql, match="the CTE 't' hides the table 't'"):
        con.sql("WITH t AS (SELECT 42 AS i) SELECT * FROM v")
    with pytest.raises(tdbsql.UnsupportedSql, match="the CTE 't' hides"):  # also in a view
        con.sql("CREATE VIEW b AS WITH t AS (SELECT 99 AS i) SELECT * FROM v")
    assert con.sql("WITH u AS (SELECT 2 AS i) SELECT * FROM u WHERE i IN (SELECT i FROM v)"
                   ).fetchall() == [(2,)]


def test_a_select_item_reading_a_view_is_named_as_written(engines):
    ours, duck = engines
    query = ("SELECT (SELECT max(days) FROM per_city), 1 + (SELECT count(*) FROM wet) "
             "FROM st LIMIT 1")
    assert ours.sql(query).columns == [d[0] for d in duck.execute(query).description]
    assert ours.sql(query).fetchall() == duck.execute(query).fetchall()


def test_more_column_names_than_a_view_has_is_an_error():
    con = tdbsql.connect().register("t", pa.table({"i": [1], "s": ["a"]}))
    con.sql("CREATE VIEW v AS SELECT i, s FROM t")
    with pytest.raises(tdbsql.SqlError, match='table "z" has 2 columns available but 3'):
        con.sql("SELECT * FROM v AS z(a, b, c)")
    with pytest.raises(tdbsql.SqlError, match='table "z" has 2 columns available but 3'):
        con.sql("SELECT * FROM (SELECT i, s FROM t) AS z(a, b, c)")


def test_show_all_tables_lists_a_view_whose_file_is_gone(tmp_path):
    """A view keeps the columns it had when made, as DuckDB lists them."""
    import pyarrow.parquet as pq

    path = tmp_path / "f.parquet"
    pq.write_table(pa.table({"a": [1]}), path)
    con = tdbsql.connect()
    con.sql(f"CREATE VIEW v(x) AS SELECT a FROM '{path}'")
    path.unlink()
    rows = con.sql("SHOW ALL TABLES").fetchall()
    assert rows == [("memory", "main", "v", ["x"], ["BIGINT"], False)]
    with pytest.raises(tdbsql.OperationalError, match="no such Parquet file"):
        con.sql("SELECT * FROM v")


@pytest.mark.parametrize("view", ["vd(a, a) AS SELECT 1, 2",
                                  "ve AS SELECT 1 AS a, 2 AS a, 3 AS A",
                                  "vf(x) AS SELECT 1 AS a, 2 AS x"])
def test_a_views_repeated_column_names_are_made_unique_as_duckdb(view):
    import duckdb

    ours, duck = tdbsql.connect(), duckdb.connect()
    ours.sql(f"CREATE VIEW {view}")
    duck.execute(f"CREATE VIEW {view}")
    name = view.split(" ")[0].split("(")[0]
    want = duck.execute(f"SELECT * FROM {name}")
    got = ours.sql(f"SELECT * FROM {name}")
    assert got.columns == [d[0] for d in want.description]
    assert got.fetchall() == want.fetchall()
