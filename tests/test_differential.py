"""Differential test: random SQL over two small fixture arrays, tdbsql against DuckDB.

hypothesis builds queries over ``da(id, a?, b?, x?, s?)`` and ``db(id, k?, y?, t?)`` (see
tests/sql_fixtures.py; ``?`` = nullable, small value ranges so groups and join keys collide):
projections with arithmetic, WHERE with random predicates and NULLs, GROUP BY with aggregates
and HAVING, joins of every kind, set operations (an array with itself, too).  DuckDB runs the
same SQL over the same cells read by ``tiledb``.  Results are compared as multisets, or in
order when the query orders by every output column; floats with relative tolerance 1e-9;
column types by kind (integer, float, string, boolean, temporal).  Arithmetic stays far from
overflow and never divides by zero, so an error on either side is a failure unless both
sides raise.  Examples are derandomized: every run checks the same queries.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sqllogic
from sqllogic import sql_string
from sql_fixtures import sql_arrays  # noqa: F401 - the session fixture, used by name

SETTINGS = dict(deadline=None, derandomize=True, print_blob=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

INT_COLS = {"da": ["id", "a", "b"], "db": ["id", "k"]}
FLOAT_COLS = {"da": ["x"], "db": ["y"]}
STR_COLS = {"da": ["s"], "db": ["t"]}
WORDS = ["a", "b", "ab", "Ä", "bä", "", "zz", "q"]


@pytest.fixture(scope="module")
def engines(sql_arrays):  # noqa: F811 - pytest fixture injection
    decls = (sqllogic.ArrayDecl("da", "da"), sqllogic.ArrayDecl("db", "db"))
    return sqllogic.Oracle(decls, sql_arrays), _connect(decls, sql_arrays)


def _connect(decls, paths):
    try:
        return sqllogic.tdbsql_connection(decls, paths)
    except Exception as err:  # noqa: BLE001 - reported by every example, as a failure
        return err


# -- expression strategies ------------------------------------------------------------------


def _col(table: str | None, name: str) -> str:
    return f"{table}.{name}" if table else name


@st.composite
def int_expr(draw, tables: tuple[str, ...], depth: int = 2):
    """An integer expression; magnitudes stay far below int32 overflow."""
    table = draw(st.sampled_from(tables))
    qual = table if len(tables) > 1 else None
    leaf = st.one_of(
        st.sampled_from([_col(qual, c) for c in INT_COLS[table]]),
        st.integers(-20, 20).map(lambda v: f"({v})" if v < 0 else str(v)),
    )
    if depth == 0:
        return draw(leaf)
    choice = draw(st.integers(0, 5))
    if choice <= 1:
        return draw(leaf)
    left = draw(int_expr(tables, depth - 1))
    if choice == 2:
        op = draw(st.sampled_from(["+", "-"]))
        return f"({left} {op} {draw(int_expr(tables, depth - 1))})"
    if choice == 3:
        return f"({left} * {draw(st.integers(-4, 4))})"
    if choice == 4:
        op = draw(st.sampled_from(["//", "%"]))
        return f"({left} {op} {draw(st.sampled_from([2, 3, 5, -3]))})"
    fn = draw(st.sampled_from(["abs({})", "coalesce({}, 0)", "-{}", "greatest({}, 1)",
                               "CASE WHEN {} > 0 THEN 1 ELSE 2 END"]))
    return fn.format(left)


@st.composite
def float_expr(draw, tables: tuple[str, ...]):
    table = draw(st.sampled_from(tables))
    qual = table if len(tables) > 1 else None
    col = _col(qual, FLOAT_COLS[table][0])
    form = draw(st.sampled_from([
        "{c}", "{c} * 2.5", "{c} + {i}", "{i} / 4", "{c} / 8", "abs({c})", "round({c}, 1)",
        "floor({c})", "coalesce({c}, -1.5)", "CAST({i} AS DOUBLE) - {c}",
    ]))
    return form.format(c=col, i=draw(int_expr(tables, 1)))


@st.composite
def str_expr(draw, tables: tuple[str, ...]):
    table = draw(st.sampled_from(tables))
    qual = table if len(tables) > 1 else None
    col = _col(qual, STR_COLS[table][0])
    form = draw(st.sampled_from(["{c}", "lower({c})", "upper({c})", "{c} || 'z'",
                                 "coalesce({c}, '-')", "substr({c}, 1, 1)"]))
    return form.format(c=col)


@st.composite
def predicate(draw, tables: tuple[str, ...], depth: int = 2):
    kind = draw(st.integers(0, 8 if depth > 0 else 6))
    cmp = draw(st.sampled_from(["=", "<>", "<", "<=", ">", ">="]))
    if kind == 0:
        return f"{draw(int_expr(tables))} {cmp} {draw(st.integers(-30, 30))}"
    if kind == 1:
        return f"{draw(float_expr(tables))} {cmp} {draw(st.integers(-40, 40)) / 4}"
    if kind == 2:
        lo = draw(st.integers(-10, 10))
        return f"{draw(int_expr(tables, 1))} BETWEEN {lo} AND {lo + draw(st.integers(0, 8))}"
    if kind == 3:
        table = draw(st.sampled_from(tables))
        col = _col(table if len(tables) > 1 else None,
                   draw(st.sampled_from(INT_COLS[table] + FLOAT_COLS[table] + STR_COLS[table])))
        return f"{col} IS {draw(st.sampled_from(['', 'NOT ']))}NULL"
    if kind == 4:
        values = draw(st.lists(st.one_of(st.integers(-5, 5).map(str), st.just("NULL")),
                               min_size=1, max_size=4))
        neg = draw(st.sampled_from(["", "NOT "]))
        return f"{draw(int_expr(tables, 1))} {neg}IN ({', '.join(values)})"
    if kind == 5:
        return f"{draw(str_expr(tables))} {cmp} {sql_string(draw(st.sampled_from(WORDS)))}"
    if kind == 6:
        pattern = draw(st.sampled_from(["a%", "%ä", "_", "%b%", "", "Ä%", "%"]))
        op = draw(st.sampled_from(["LIKE", "NOT LIKE", "ILIKE"]))
        return f"{draw(str_expr(tables))} {op} {sql_string(pattern)}"
    if kind == 7:
        return f"NOT ({draw(predicate(tables, depth - 1))})"
    op = draw(st.sampled_from(["AND", "OR"]))
    return f"({draw(predicate(tables, depth - 1))} {op} {draw(predicate(tables, depth - 1))})"


@st.composite
def projection(draw, tables: tuple[str, ...]):
    exprs = draw(st.lists(st.one_of(int_expr(tables), float_expr(tables), str_expr(tables),
                                    predicate(tables, 0)), min_size=1, max_size=4))
    return [f"{e} AS c{i}" for i, e in enumerate(exprs)]


def _order_limit(draw, n_cols: int) -> tuple[str, bool]:
    """ORDER BY every output column (random directions) + maybe LIMIT, or nothing."""
    if not draw(st.booleans()):
        return "", False
    keys = [f"{i + 1} {draw(st.sampled_from(['ASC', 'DESC']))}"
            f"{draw(st.sampled_from(['', ' NULLS FIRST', ' NULLS LAST']))}"
            for i in range(n_cols)]
    limit = draw(st.one_of(st.just(""), st.integers(0, 30).map(lambda n: f" LIMIT {n}")))
    offset = draw(st.one_of(st.just(""), st.integers(1, 5).map(lambda n: f" OFFSET {n}")))
    return f" ORDER BY {', '.join(keys)}{limit}{offset if limit else ''}", True


@st.composite
def select_query(draw):
    cols = draw(projection(("da",)))
    where = f" WHERE {draw(predicate(('da',)))}" if draw(st.booleans()) else ""
    distinct = "DISTINCT " if draw(st.integers(0, 4)) == 0 else ""
    tail, ordered = _order_limit(draw, len(cols))
    return f"SELECT {distinct}{', '.join(cols)} FROM da{where}{tail}", ordered


AGGREGATES = ["count(*)", "count({i})", "sum({i})", "min({i})", "max({i})", "avg({f})",
              "sum({f})", "count(DISTINCT {i})", "min({s})", "max({s})", "bool_or({p})",
              "bool_and({p})", "stddev_samp({f})", "var_pop({i})", "median({f})",
              "quantile_cont({i}, 0.3)", "quantile_disc({s}, 0.7)", "product({i})",
              "corr({f}, {i})", "covar_samp({i}, {f})", "regr_slope({f}, {i})",
              "regr_count({i}, {f})", "skewness({f})", "kurtosis_pop({i})",
              "arg_max({s}, {i})", "arg_min({i}, {f})", "bit_xor({i})", "fsum({f})",
              "favg({i})", "entropy({s})"]


@st.composite
def group_query(draw):
    tables = ("da",)
    keys = draw(st.lists(st.one_of(
        st.sampled_from(["a", "s", "b % 3", "x > 0", "a IS NULL", "lower(s)", "b // 100"]),
        int_expr(tables, 1)), min_size=0, max_size=2, unique=True))
    aggs = []
    for template in draw(st.lists(st.sampled_from(AGGREGATES), min_size=1, max_size=3)):
        aggs.append(template.format(i=draw(int_expr(tables, 1)), f=draw(float_expr(tables)),
                                    s=draw(str_expr(tables)), p=draw(predicate(tables, 0))))
    cols = [f"{k} AS k{i}" for i, k in enumerate(keys)] + \
           [f"{a} AS g{i}" for i, a in enumerate(aggs)]
    where = f" WHERE {draw(predicate(tables, 1))}" if draw(st.booleans()) else ""
    group = f" GROUP BY {', '.join(str(i + 1) for i in range(len(keys)))}" if keys else ""
    having = ""
    if keys and draw(st.booleans()):
        having = f" HAVING count(*) {draw(st.sampled_from(['>', '<=']))} {draw(st.integers(0, 6))}"
    tail, ordered = _order_limit(draw, len(cols))
    return f"SELECT {', '.join(cols)} FROM da{where}{group}{having}{tail}", ordered


@st.composite
def join_query(draw):
    tables = ("da", "db")
    how = draw(st.sampled_from(["JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "CROSS JOIN"]))
    on = ""
    if how != "CROSS JOIN":
        cond = draw(st.sampled_from(["da.a = db.k", "da.s = db.t", "da.a = db.k AND da.s = db.t",
                                     "da.a = db.k AND da.x < db.y", "da.b % 11 = db.k"]))
        on = f" ON {cond}"
    where = ""
    if how == "CROSS JOIN":
        where = " WHERE da.id < 60 AND db.id < 200"
    if draw(st.booleans()):
        where = (where + " AND " if where else " WHERE ") + draw(predicate(tables, 1))
    if draw(st.integers(0, 2)) == 0:
        key = draw(st.sampled_from(["db.k", "da.s", "db.t", "da.a"]))
        agg = draw(st.sampled_from(["count(*)", "count(da.id)", "sum(db.y)", "max(da.b)",
                                    "count(DISTINCT db.id)"]))
        return (f"SELECT {key} AS k0, {agg} AS g0 FROM da {how} db{on}{where} GROUP BY 1",
                False)
    cols = ["da.id AS c_a", "db.id AS c_b"] + draw(projection(tables))
    tail, ordered = _order_limit(draw, len(cols))
    return f"SELECT {', '.join(cols)} FROM da {how} db{on}{where}{tail}", ordered


@st.composite
def set_query(draw):
    """Two SELECTs (of da with itself, or da and db) combined by a set operation."""
    op = draw(st.sampled_from(["UNION", "UNION ALL", "INTERSECT", "EXCEPT", "INTERSECT ALL",
                               "EXCEPT ALL"]))
    sides = []
    for table in ("da", draw(st.sampled_from(["da", "db"]))):
        where = f" WHERE {draw(predicate((table,), 1))}" if draw(st.booleans()) else ""
        sides.append(f"SELECT {draw(int_expr((table,), 1))} AS c0, {draw(str_expr((table,)))} "
                     f"AS c1 FROM {table}{where}")
    tail, ordered = _order_limit(draw, 2)
    return f"{sides[0]} {op} {sides[1]}{tail}", ordered


# -- comparing -------------------------------------------------------------------------------


@settings(max_examples=50, **SETTINGS)
@given(query=select_query())
def test_select_where(engines, query):
    sqllogic.differential_check(engines, *query)


@settings(max_examples=40, **SETTINGS)
@given(query=group_query())
def test_group_by(engines, query):
    sqllogic.differential_check(engines, *query)


@settings(max_examples=40, **SETTINGS)
@given(query=join_query())
def test_joins(engines, query):
    sqllogic.differential_check(engines, *query)


@settings(max_examples=25, **SETTINGS)
@given(query=set_query())
def test_set_operations(engines, query):
    sqllogic.differential_check(engines, *query)


def test_float_tolerance_is_relative():
    assert sqllogic.same_value("1.0000000001", "1.0", "R")
    assert not sqllogic.same_value("1.001", "1.0", "R")
    assert not math.isnan(float(sqllogic.render(0.1, "R")))
