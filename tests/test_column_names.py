"""Result column names: DuckDB's, for select items without an alias (planner/column_names.py).

Each expression runs in tdbsql and in DuckDB over the same Arrow table; the names must be the
same.  (``string_agg(x)`` came out as ``listagg(x, ',')``, ``x + 1`` as ``x + 1`` where DuckDB
says ``(x + 1)``, ``CAST(x AS VARCHAR)`` as ``CAST(x AS TEXT)``, ``count(*)`` as ``count(*)``
where DuckDB says ``count_star()``.)
"""

from __future__ import annotations

import datetime as dt

import duckdb
import pyarrow as pa
import pytest

import tdbsql
from tdbsql.planner.duckdb_keywords import KEYWORDS

TABLE = pa.table({
    "x": pa.array([1, 2, None], pa.int64()),
    "y": pa.array([1.5, None, 2.5], pa.float64()),
    "s": pa.array(["a", "b", None]),
    "d": pa.array([dt.date(2024, 1, 1), None, dt.date(2024, 3, 1)], pa.date32()),
    "b": pa.array([True, False, None]),
    "day": pa.array([1, 2, 3], pa.int64()),
    "Mixed": pa.array([1, 2, 3], pa.int64()),
})

AGGREGATES = [
    "count(*)", "COUNT(*)", "count()", "count(x)", "count(DISTINCT x)", "sum(x)", "Sum(x)",
    "avg(x)", "min(x)", "max(s)", "string_agg(s)", "STRING_AGG(s)", "string_agg(s, ';')",
    "string_agg(s, ',' ORDER BY s DESC)", "string_agg(DISTINCT s)", "listagg(s)",
    "listagg(s, '-')", "group_concat(s)", "array_agg(x ORDER BY x DESC)", "first(x)",
    "any_value(x)", "stddev(y)", "var_pop(y)", "bool_and(b)", "bool_or(x > 1)", "count_if(b)",
    "count(*) FILTER (WHERE x > 1)", "sum(x) FILTER (WHERE b)", "sum(x) + 1", "avg(x) * 2",
    "count(x) > 1",
]

SCALARS = [
    "x + 1", "x - 1", "x * 2 - 1", "x + y * 2", "(x + 1) * 2", "x / 2", "x // 2", "x % 2",
    "mod(x, 2)", "power(y, 2)", "-x", "-(x + 1)", "- -x", "-1", "1 - -1", "x = 1", "x <> 1",
    "x != 1", "x >= 1", "NOT b", "NOT x > 1", "NOT NOT b", "b AND x > 1", "b AND b AND b",
    "b OR b AND x > 1", "x IS NULL", "x IS NOT NULL", "b IS TRUE", "b IS NOT TRUE",
    "x BETWEEN 1 AND 2", "x NOT BETWEEN 1 AND 2", "x IN (1, 2)", "x NOT IN (1, 2)",
    "s LIKE 'a%'", "s NOT LIKE 'a%'", "s ILIKE 'A%'", "s NOT ILIKE 'A%'", "s || 'x'",
    "s || 'x' || s", "x IS DISTINCT FROM 1", "x IS NOT DISTINCT FROM 1", "1", "1.5", "'x'",
    "'it''s'", "NULL", "true", "CAST(x AS VARCHAR)", "x::VARCHAR", "CAST(x AS DOUBLE)",
    "CAST(x AS INTEGER)", "CAST(x AS INT)", "CAST(x AS BIGINT)", "CAST(y AS DECIMAL(10, 2))",
    "CAST(d AS TIMESTAMP)", "TRY_CAST(s AS INTEGER)", "DATE '2024-01-02'",
    "TIMESTAMP '2024-01-02 03:04:05'", "CAST(d AS TIMESTAMPTZ)", "CASE WHEN x > 1 THEN 'big' ELSE 'small' END",
    "CASE WHEN b THEN 1 END", "CASE x WHEN 1 THEN 'one' WHEN 2 THEN 'two' END",
    "coalesce(x, 0)", "ifnull(x, 0)", "nullif(x, 1)", "if(b, 1, 2)", "greatest(x, 1)",
    "abs(x)", "ABS(x)", "round(y, 1)", "ceil(y)", "floor(y)", "sqrt(y)", "ln(y)", "upper(s)",
    "lower(s)", "length(s)", "trim(s)", "ltrim(s)", "left(s, 1)", "right(s, 1)",
    "substr(s, 1, 1)", "substring(s, 1, 1)", "replace(s, 'a', 'b')", "strpos(s, 'a')",
    "position('a' IN s)", "concat(s, 'x')", "starts_with(s, 'a')", "lpad(s, 3, '-')",
    "year(d)", "month(d)", "day(d)", "dayofweek(d)", "date_part('year', d)",
    "extract(month FROM d)", "date_trunc('month', d)", "d + 1", "d + INTERVAL 1 DAY",
    "d - INTERVAL 2 MONTH", "d + INTERVAL '3' DAY", "day + 1", "Mixed + 1", "\"Mixed\" + 1",
    "t.x + 1", "mixed", "MIXED", "t.mixed", "DAY", "row_number() OVER ()", "row_number() OVER (ORDER BY x)",
    "rank() OVER (PARTITION BY s ORDER BY x DESC)", "count(*) OVER ()",
    "sum(x) OVER (ORDER BY x ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)",
    "sum(x) OVER (ORDER BY x ROWS 2 PRECEDING)",
    "sum(x) OVER (ORDER BY x RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)",
    "lag(x, 1) OVER (ORDER BY x)", "first_value(x IGNORE NULLS) OVER (ORDER BY x)",
    "(SELECT 1)", "TIME '10:00:00'", "TRY_CAST(s AS TIME)", "localtime", "current_time",
    "get_current_time()", "current_localtime()", "hour(localtime)",
]


@pytest.fixture(scope="module")
def engines():
    con = tdbsql.connect()
    con.register("t", TABLE)
    oracle = duckdb.connect()
    oracle.register("t", TABLE)
    return con, oracle


def _same_names(engines, sql):
    con, oracle = engines
    assert con.sql(sql).arrow().column_names == oracle.sql(sql).columns, sql


@pytest.mark.parametrize("item", AGGREGATES)
def test_aggregate_names(engines, item):
    _same_names(engines, f"SELECT {item} FROM t")


@pytest.mark.parametrize("item", SCALARS)
def test_expression_names(engines, item):
    _same_names(engines, f"SELECT {item} FROM t")


def test_grouped_and_aliased_names(engines):
    _same_names(engines, "SELECT s, count(*), sum(x) AS total, x + 1 AS \"x + 1\", "
                         "grouping(s) FROM t GROUP BY ROLLUP (s, x)")
    _same_names(engines, "SELECT x, x + 1 FROM t UNION ALL SELECT 1, 2")


def test_keywords_are_duckdbs():
    words = {row[0] for row in duckdb.sql("SELECT keyword_name FROM duckdb_keywords()")
             .fetchall()}
    assert KEYWORDS == words


@pytest.mark.parametrize("sql", [
    "SELECT *, x + 1 FROM t", "SELECT t.*, x * 2 AS d, upper(s) FROM t",
    "SELECT x + 1, * FROM t", "SELECT * EXCLUDE (x), x + 1 FROM t", "SELECT *, * FROM t",
    "SELECT count(*), * FROM t GROUP BY ALL", "SELECT *, sum(x) FROM t GROUP BY ALL"])
def test_names_beside_a_star(engines, sql):
    """The expressions beside one ``*`` are named as DuckDB prints them (they were _col_N)."""
    _same_names(engines, sql)


WINDOWS = [
    "sum(x) OVER (ORDER BY x NULLS LAST)", "sum(x) OVER (ORDER BY x ASC NULLS LAST)",
    "rank() OVER (PARTITION BY s ORDER BY x DESC NULLS LAST, y NULLS FIRST)",
    "string_agg(s ORDER BY s NULLS LAST)", "array_agg(x ORDER BY x DESC NULLS LAST)",
    "list(x) OVER (ORDER BY x ROWS 1 PRECEDING)", "listagg(s) OVER ()",
    "group_concat(s, '|') OVER (PARTITION BY b)", "list(x) FILTER (WHERE x > 1) OVER ()",
    "first(x) OVER ()", "LAST(x IGNORE NULLS) OVER (ORDER BY x)",
    "last_value(x RESPECT NULLS) OVER (ORDER BY x)", "any_value(x) OVER ()",
    "count(*) FILTER (WHERE x > 1) OVER (ORDER BY x NULLS LAST)",
]
NAMED_WINDOWS = [
    "SELECT sum(x) OVER w, rank() OVER (w) FROM t WINDOW w AS (PARTITION BY s ORDER BY x)",
    "SELECT sum(x) OVER (w ORDER BY y NULLS LAST ROWS 1 PRECEDING) FROM t "
    "WINDOW w AS (PARTITION BY s)",
    "SELECT sum(x) OVER w FROM t WINDOW w AS (ORDER BY x RANGE BETWEEN UNBOUNDED PRECEDING "
    "AND CURRENT ROW)",
    "SELECT count(*) OVER W3, count(*) FILTER (WHERE b) OVER w2 FROM t WINDOW w AS "
    "(PARTITION BY b), w2 AS (w ORDER BY x DESC), w3 AS (w2 GROUPS 1 PRECEDING)",
    "SELECT first_value(x IGNORE NULLS) OVER w FROM t WINDOW w AS (ORDER BY day)",
]


@pytest.mark.parametrize("item", WINDOWS)
def test_window_names(engines, item):
    """Window calls: NULLS LAST as written, the function as called (``list``, ``listagg``;
    ``first`` / ``last`` are first_value / last_value there), RESPECT NULLS not printed."""
    _same_names(engines, f"SELECT {item} FROM t")


@pytest.mark.parametrize("sql", NAMED_WINDOWS)
def test_named_window_names(engines, sql):
    """A call over a named window is named by the window it stands for (``OVER w`` was
    ``sum(x) OVER w``)."""
    _same_names(engines, sql)


THROUGH_SUBQUERIES = [
    "SELECT * FROM (SELECT s, count(*) FROM t GROUP BY ALL) q",
    "SELECT * FROM (SELECT x + 1, upper(s), CAST(x AS VARCHAR), 1, 'k', NULL, true FROM t) q",
    "WITH c AS (SELECT x * 2, sum(y) FROM t GROUP BY 1) SELECT * FROM c",
    "SELECT * FROM (SELECT * FROM (SELECT year(d), extract(month FROM d) FROM t) a) b",
    "SELECT * FROM (SELECT row_number() OVER (ORDER BY x), sum(x) OVER () FROM t) q",
    "SELECT * FROM (SELECT x + 1 FROM t UNION SELECT day FROM t) q",
    "SELECT * FROM (SELECT day FROM t UNION ALL SELECT x + 1 FROM t) q",
    "SELECT * FROM (SELECT x, x, x FROM t) q", "SELECT * FROM (SELECT x, day AS x_1, x FROM t) q",
    "SELECT * FROM (SELECT count(*), count(*) FROM t) q",
    "SELECT * FROM (SELECT x AS \"K\", day AS k FROM t) q",
    "SELECT * FROM (SELECT x, x FROM t) q(k)",
    "WITH c(k) AS (SELECT x, x FROM t) SELECT * FROM c",
    "SELECT * FROM (SELECT t.x, u.x FROM t, t AS u) q",
    "SELECT q.* FROM (SELECT t.x + 1, 2 FROM t) q",
    "SELECT * FROM t, (SELECT count(*) FROM t) q",
    "SELECT \"(x + 1)\", x_1 FROM (SELECT x + 1, x, x FROM t) q",
    "SELECT * FROM (SELECT s, count(*) FROM t GROUP BY ALL) q ORDER BY \"count_star()\"",
    "SELECT * FROM (SELECT (SELECT max(x) FROM t), day FROM t) q",
    "SELECT * FROM (SELECT sum(x) FILTER (WHERE x > 1), count(DISTINCT s) FROM t) q",
    # a LATERAL's quoted names keep their case (sqlglot's DuckDB strategy lowered them)
    "SELECT l.* FROM t, LATERAL (SELECT max(t.x) OVER (), t.x + 1 AS \"Big\") l",
    # an unquoted alias keeps its spelling too, read in any case (it was lower-cased)
    "SELECT q.Big FROM (SELECT x AS Big FROM t) q", "SELECT big FROM (SELECT x AS Big FROM t) q",
    "WITH c AS (SELECT x AS Big, s AS Name FROM t) SELECT BIG, name FROM c ORDER BY big",
    "SELECT col, count(*) FROM (SELECT x FROM t) q(Col) GROUP BY COL",
    "SELECT * FROM (SELECT x AS Big, day AS Big2 FROM t) q WHERE big > 1",
    # an alias spelled as a table alias in another case names the column, not the table
    "SELECT q.x AS Q FROM t q", "SELECT s.x AS S, count(*) FROM t s GROUP BY s.x",
    "WITH c AS (SELECT x FROM t) SELECT c.x AS C FROM c",
]


@pytest.mark.parametrize("sql", THROUGH_SUBQUERIES)
def test_names_through_subqueries(engines, sql):
    """A derived table's or CTE's unaliased items are named as DuckDB names them -- a repeated
    name gets ``_1``, ``_2`` -- and the outer query reads them by those names (they were
    ``_col_N``; a repeated name was an error)."""
    con, oracle = engines
    got, want = con.sql(sql).arrow(), oracle.sql(sql)
    assert got.column_names == want.columns, sql
    assert sorted(map(repr, zip(*(c.to_pylist() for c in got.columns)))) == \
        sorted(map(repr, want.fetchall())), sql


SUBQUERY_EXPRESSIONS = [
    "(SELECT max(x) FROM t)", "(SELECT max(x) FROM t WHERE x > 1 AND s = 'a')",
    "(SELECT count(*) FROM t AS u WHERE u.x = t.x)", "EXISTS (SELECT 1 FROM t WHERE x > 1)",
    "x IN (SELECT day FROM t)", "(SELECT DISTINCT x FROM t WHERE x > 1)",
    "(SELECT sum(x) FROM t HAVING sum(x) > 1)", "(SELECT day FROM t ORDER BY day LIMIT 1 OFFSET 1)",
    "(SELECT max(u.x) FROM t u JOIN t v ON u.x = v.day)",
    "(SELECT max(u.x) FROM t u LEFT JOIN t v USING (x))",
    "(SELECT max(k) FROM (SELECT x AS k FROM t) q)", "(SELECT max(w.x) FROM t, t AS w)",
    "(SELECT max(w.x) FROM t CROSS JOIN t AS w)",
    # clauses the hand-printed SELECT once dropped from the name
    "(SELECT x FROM t QUALIFY row_number() OVER (ORDER BY x) = 1)",
    "(SELECT DISTINCT ON (day) x FROM t ORDER BY day, x LIMIT 1)",
    "(WITH c AS (SELECT 1 AS a) SELECT a FROM c)",
    "(SELECT max(x) FROM t WHERE x > 1 GROUP BY day HAVING count(*) > 0 LIMIT 1)",
]


@pytest.mark.parametrize("item", SUBQUERY_EXPRESSIONS)
def test_subquery_expression_names(engines, item):
    """A subquery in the select list prints as DuckDB prints it: functions as called,
    operators in parentheses, joins as ``(t AS u INNER JOIN t AS v ON ((...)))`` (was
    sqlglot's ``(SELECT MAX(x) FROM t WHERE x > 1)``)."""
    _same_names(engines, f"SELECT {item} FROM t")


PARTS = [
    "year", "YEARS", "y", "yr", "month", "mons", "day", "d", "dayofmonth", "quarter", "dow",
    "Dow", "dayofweek", "isodow", "doy", "week", "w", "weekofyear", "isoyear", "yearweek",
    "hour", "h", "minute", "min", "m", "second", "sec", "s", "millisecond", "MILLISECONDS",
    "ms", "msec", "microsecond", "us", "usec", "epoch", "EPOCH", "julian", "decade", "dec",
    "century", "centuries", "c", "millennium", "millennia", "era",
]
STAMPS = pa.table({
    "ts": pa.array([dt.datetime(2024, 3, 5, 10, 11, 12, 345678), dt.datetime(2000, 12, 31),
                    None], pa.timestamp("us")),
    "d": pa.array([dt.date(2024, 12, 30), dt.date(2021, 1, 1), None], pa.date32()),
    "tm": pa.array([dt.time(10, 11, 12, 345678), dt.time(0, 0), None], pa.time64("us")),
})


@pytest.mark.parametrize("part", PARTS)
def test_extract_names_and_values(part):
    """``extract(part FROM x)`` is named ``date_part('YEAR', x)`` for the parts that are SQL
    keywords (``millisecond`` -> ``MILLISECONDS``), else with the part as written
    (``date_part('dow', x)``; was upper-cased), and DuckDB's aliases of every part read
    (``yr``, ``mons``, ``ms`` were unknown)."""
    con = tdbsql.connect()
    con.register("t", STAMPS)
    oracle = duckdb.connect()
    oracle.register("t", STAMPS)
    columns = ["ts", "d"] if part not in ("hour", "minute", "epoch", "us", "ms") else \
        ["ts", "d", "tm"]
    sql = ", ".join(f"extract({part} FROM {c}), date_part('{part}', {c})" for c in columns)
    sql = f"SELECT {sql} FROM t"
    got, want = con.sql(sql).arrow(), oracle.sql(sql)
    assert got.column_names == want.columns
    assert [c.to_pylist() for c in got.columns] == [list(c) for c in zip(*want.fetchall())]


@pytest.mark.parametrize("call", [
    "millisecond(ts)", "microsecond(tm)", "weekday(d)", "yearweek(d)", "julian(ts)",
    "decade(d)", "century(ts)", "millennium(d)", "era(ts)"])
def test_date_part_functions(call):
    """DuckDB's one-part functions beside year() ... epoch() (they were unknown)."""
    con = tdbsql.connect()
    con.register("t", STAMPS)
    oracle = duckdb.connect()
    oracle.register("t", STAMPS)
    sql = f"SELECT {call} FROM t"
    got, want = con.sql(sql).arrow(), oracle.sql(sql)
    assert got.column_names == want.columns
    assert got.column(0).to_pylist() == [row[0] for row in want.fetchall()]


@pytest.mark.parametrize("sql", [
    "SELECT row(x, s), (x, 1), (x,), count(DISTINCT (x, s)) FROM t GROUP BY x, s",
    "SELECT r.* FROM (SELECT {'a': x, 'Q r': s} AS r FROM t)",
    "SELECT unnest({'a': x, 'B': s}), unnest(row(x, d)), unnest([x]) FROM t",
    "SELECT unnest({'a': x, 'B': s}) AS ignored, r.* EXCLUDE (a) "
    "FROM (SELECT {'a': x, 'c': b} AS r, x, s FROM t)",
])
def test_struct_field_names(engines, sql):
    """Unnamed structs print as "row"(...); s.* and unnest(s) give the fields' names."""
    _same_names(engines, sql)
