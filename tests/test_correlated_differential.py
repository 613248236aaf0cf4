"""Differential test: random correlated subqueries, tdbsql against DuckDB.

hypothesis builds subqueries over ``db(id, k?, y?, t?)`` correlated with the rows of
``da(id, a?, b?, x?, s?)`` (tests/sql_fixtures.py; ``?`` = nullable, small value ranges so
keys collide and NULLs meet NULLs) by one or two comparisons (``=``, ``<``, ``>=``, ``<>``,
``IS NOT DISTINCT FROM``) beside an uncorrelated filter, used as a scalar aggregate (the
count bug: COUNT over no rows is 0), a scalar with ORDER BY / LIMIT, EXISTS / NOT EXISTS,
IN / NOT IN with NULLs on both sides, ANY / ALL, in the select list, in WHERE and in HAVING.
Every query must give DuckDB's rows (or both must refuse it).  Examples are derandomized.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sqllogic
from sql_fixtures import sql_arrays  # noqa: F401 - the session fixture, used by name

SETTINGS = dict(deadline=None, derandomize=True, print_blob=True, max_examples=120,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# (inner column, outer column) pairs of one type
PAIRS = [("db.k", "da.a"), ("db.k", "da.b % 7"), ("db.y", "da.x"), ("db.t", "da.s"),
         ("db.id", "da.id"), ("db.k", "da.a + 1")]
OPS = ["=", "<", ">=", "<>", "IS NOT DISTINCT FROM", ">"]
FILTERS = ["", "db.y > 0", "db.k IS NOT NULL", "db.id % 2 = 0", "db.t <> 'a'"]
AGGREGATES = ["count(*)", "count(db.y)", "sum(db.k)", "min(db.y)", "max(db.t)", "avg(db.k)",
              "count(DISTINCT db.k)", "count(*) + 1", "coalesce(max(db.k), -1)"]


@pytest.fixture(scope="module")
def engines(sql_arrays):  # noqa: F811 - pytest fixture injection
    return sqllogic.differential_engines(sql_arrays, "da", "db")


@st.composite
def correlation(draw) -> str:
    """The WHERE of a subquery over db reading da's row."""
    terms = []
    for _ in range(draw(st.integers(1, 2))):
        inner, outer = draw(st.sampled_from(PAIRS))
        terms.append(f"{inner} {draw(st.sampled_from(OPS))} {outer}")
    extra = draw(st.sampled_from(FILTERS))
    if extra:
        terms.append(extra)
    return " AND ".join(terms)


@st.composite
def correlated_query(draw) -> tuple[str, bool]:
    """(SQL, whether its rows are ordered by every output column)."""
    where = draw(correlation())
    form = draw(st.integers(0, 7))
    if form == 0:
        agg = draw(st.sampled_from(AGGREGATES))
        return f"SELECT da.id, (SELECT {agg} FROM db WHERE {where}) AS v FROM da", False
    if form == 1:
        desc = draw(st.sampled_from(["", " DESC"]))
        offset = draw(st.sampled_from(["", " OFFSET 1"]))
        return (f"SELECT da.id, (SELECT db.y FROM db WHERE {where} ORDER BY db.id{desc} "
                f"LIMIT 1{offset}) AS v FROM da", False)
    if form == 2:
        negate = draw(st.sampled_from(["", "NOT "]))
        return f"SELECT da.id FROM da WHERE {negate}EXISTS (SELECT 1 FROM db WHERE {where})", \
            False
    if form == 3:
        return f"SELECT da.id, EXISTS (SELECT db.k FROM db WHERE {where}) AS v FROM da", False
    if form == 4:
        probe, column = draw(st.sampled_from([("da.a", "db.k"), ("da.s", "db.t"),
                                              ("da.x", "db.y")]))
        negate = draw(st.sampled_from(["", "NOT "]))
        return (f"SELECT da.id, {probe} {negate}IN (SELECT {column} FROM db WHERE {where}) "
                f"AS v FROM da", False)
    if form == 5:
        op = draw(st.sampled_from(["<", ">=", "=", "<>"]))
        quantifier = draw(st.sampled_from(["ANY", "ALL"]))
        return (f"SELECT da.id, da.a {op} {quantifier} (SELECT db.k FROM db WHERE {where}) "
                f"AS v FROM da", False)
    if form == 6:
        agg = draw(st.sampled_from(["count(*)", "max(db.k)", "sum(db.y)"]))
        where = where.replace("da.", "g.").replace("g.a + 1", "g.a").replace("g.b % 7", "g.a")
        where = where.replace("g.x", "g.a").replace("g.s", "CAST(g.a AS VARCHAR)") \
            .replace("g.id", "g.a")
        return (f"SELECT g.a, count(*) AS n FROM da AS g GROUP BY g.a HAVING count(*) >= "
                f"coalesce((SELECT {agg} FROM db WHERE {where}), 0) - 1", False)
    agg = draw(st.sampled_from(["count(*)", "max(db.y)"]))
    return (f"SELECT da.id FROM da WHERE da.x > (SELECT {agg} FROM db WHERE {where}) "
            f"- 10", False)


@settings(**SETTINGS)
@given(correlated_query())
def test_correlated_subqueries_match_duckdb(engines, query):
    sql, ordered = query
    sqllogic.differential_check(engines, sql, ordered)


# The outer rows as a derived table or CTE whose source is named like the subquery's own
# (merged, it lent ``db.k`` where the subquery meant the outer row's ``o.k``), and
# subqueries nested two deep reading the outermost row (``o.id`` inside a subquery of a
# subquery sqlglot unnests by its own equality).
OUTER_SOURCES = [
    "db AS o",
    "(SELECT * FROM db WHERE db.id % 3 <> 0) AS o",
    "(SELECT db.id, db.k, db.y, db.t FROM db JOIN da ON db.id % 50 = da.id % 50) AS o",
    "w AS o",
]
INNER_SOURCES = ["db", "(SELECT * FROM db WHERE db.y IS NOT NULL) AS db", "v AS db"]
CTES = ("WITH w AS (SELECT * FROM db WHERE db.k IS NOT NULL), "
        "v AS (SELECT * FROM w WHERE w.y > -100) ")
SHADOW_TERMS = ["db.k = o.k", "db.id < o.id", "db.y >= o.y", "db.t <> o.t",
                "db.k IS NOT DISTINCT FROM o.k"]
NESTED_TERMS = ["d2.a = db.k", "d2.id < o.id", "d2.a < o.k", "d2.x > db.y", "d2.s = o.t"]


@st.composite
def shadowed_query(draw) -> str:
    outer = draw(st.sampled_from(OUTER_SOURCES))
    inner = draw(st.sampled_from(INNER_SOURCES))
    terms = draw(st.lists(st.sampled_from(SHADOW_TERMS), min_size=1, max_size=2, unique=True))
    where = " AND ".join(terms)
    if draw(st.booleans()):  # a subquery nested in it reading the outermost row
        nested = " AND ".join(draw(st.lists(st.sampled_from(NESTED_TERMS), min_size=1,
                                            max_size=2, unique=True)))
        kind = draw(st.sampled_from(["EXISTS", "scalar"]))
        where += (f" AND EXISTS (SELECT 1 FROM da AS d2 WHERE {nested})" if kind == "EXISTS"
                  else f" AND db.k <= (SELECT max(d2.a) FROM da AS d2 WHERE {nested})")
    use = draw(st.integers(0, 2))
    if use == 0:
        agg = draw(st.sampled_from(["count(*)", "max(db.y)", "sum(db.k)"]))
        sql = f"SELECT o.id, (SELECT {agg} FROM {inner} WHERE {where}) AS v FROM {outer}"
    elif use == 1:
        sql = f"SELECT o.id FROM {outer} WHERE EXISTS (SELECT 1 FROM {inner} WHERE {where})"
    else:
        sql = f"SELECT o.id, o.k IN (SELECT db.k FROM {inner} WHERE {where}) AS v FROM {outer}"
    return CTES + sql


@settings(**{**SETTINGS, "max_examples": 60})
@given(shadowed_query())
def test_correlated_subqueries_over_derived_tables_and_nested(engines, sql):
    sqllogic.differential_check(engines, sql, False)
