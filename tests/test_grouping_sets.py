"""GROUP BY ROLLUP / CUBE / GROUPING SETS and GROUPING(): tdbsql against DuckDB.

hypothesis draws a small Arrow table (int, string and boolean keys with NULLs, float values that
are multiples of 0.25 so sums are exact) and a query grouping it by a random order of a random
subset of the keys inside ROLLUP, CUBE, GROUPING SETS or a mix with plain keys, with a few
aggregates (DISTINCT and FILTER among them), GROUPING(...) over the keys and sometimes a HAVING.
Both engines run the SQL over the same table; rows are compared as multisets, floats with
relative tolerance 1e-9.  Examples are derandomized: every run checks the same queries.
"""

from __future__ import annotations

import math
from decimal import Decimal

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tdbsql
from tdbsql.errors import SqlError

duckdb = pytest.importorskip("duckdb")

SETTINGS = dict(deadline=None, derandomize=True, print_blob=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

KEYS = ["k", "s", "b", "k % 3", "upper(s)"]  # expressions are keys too
AGGREGATES = ["count(*)", "sum(v)", "avg(v)", "min(w)", "max(s)", "count(DISTINCT k)",
              "sum(w) FILTER (WHERE v > 1)", "count(v)", "bool_or(b)"]


@st.composite
def tables(draw):
    n = draw(st.integers(0, 25))
    maybe = lambda values: st.one_of(st.none(), values)  # noqa: E731
    return pa.table({
        "k": pa.array(draw(st.lists(maybe(st.integers(-2, 3)), min_size=n, max_size=n)),
                      pa.int32()),
        "s": pa.array(draw(st.lists(maybe(st.sampled_from(["a", "b", "B", "ä", ""])),
                                    min_size=n, max_size=n)), pa.string()),
        "b": pa.array(draw(st.lists(maybe(st.booleans()), min_size=n, max_size=n)), pa.bool_()),
        "v": pa.array([None if x is None else x / 4 for x in draw(st.lists(
            maybe(st.integers(-8, 12)), min_size=n, max_size=n))], pa.float64()),
        "w": pa.array(draw(st.lists(st.integers(-100, 100), min_size=n, max_size=n)), pa.int64()),
    })


@st.composite
def key_lists(draw, min_size=1):
    return draw(st.lists(st.sampled_from(KEYS), min_size=min_size, max_size=3, unique=True))


@st.composite
def grouping_clause(draw):
    """A GROUP BY clause and the distinct keys it mentions."""
    kind = draw(st.sampled_from(["rollup", "cube", "sets", "mix", "mix2"]))
    if kind in ("rollup", "cube"):
        keys = draw(key_lists())
        return f"{kind.upper()} ({', '.join(keys)})", keys
    if kind == "sets":
        sets = draw(st.lists(key_lists(min_size=0), min_size=1, max_size=4))
        text = ", ".join("(" + ", ".join(s) + ")" for s in sets)
        return f"GROUPING SETS ({text})", list(dict.fromkeys(k for s in sets for k in s))
    keys = draw(key_lists(min_size=2))
    head, tail = keys[:1], keys[1:]
    if kind == "mix":
        return f"{head[0]}, ROLLUP ({', '.join(tail)})", keys
    return f"CUBE ({head[0]}), ROLLUP ({', '.join(tail)})", keys


@st.composite
def queries(draw):
    group, keys = draw(grouping_clause())
    shown = draw(st.lists(st.sampled_from(keys), min_size=0, max_size=len(keys), unique=True)) \
        if keys else []
    aggregates = draw(st.lists(st.sampled_from(AGGREGATES), min_size=1, max_size=3, unique=True))
    items = shown + aggregates
    if keys and draw(st.booleans()):
        args = draw(st.lists(st.sampled_from(keys), min_size=1, max_size=3))
        items.append(f"{draw(st.sampled_from(['grouping', 'grouping_id']))}({', '.join(args)})")
    sql = f"SELECT {', '.join(items)} FROM t"
    if draw(st.booleans()):
        sql += f" WHERE w > {draw(st.integers(-100, 50))}"
    sql += f" GROUP BY {group}"
    having = draw(st.sampled_from([None, "count(*) > 1", "sum(v) IS NOT NULL"] +
                                  ([f"grouping({keys[0]}) = 0", f"{keys[0]} IS NULL"]
                                   if keys else [])))
    if having:
        sql += f" HAVING {having}"
    return sql


def _value(x):
    if isinstance(x, Decimal):
        return float(x)
    return x


def _key(row):
    return tuple((0, "") if v is None else (1, round(v, 6)) if isinstance(v, float)
                 else (2, repr(v)) for v in row)


def _same(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        if a is None or b is None:
            return a is b
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return a == b


def _check(table: pa.Table, sql: str) -> None:
    ddb = duckdb.connect()
    ddb.register("t", table)
    try:
        expected = [tuple(map(_value, r)) for r in ddb.execute(sql).fetchall()]
    except duckdb.Error:
        with pytest.raises(SqlError):
            tdbsql.connect().register_arrow("t", table).sql(sql)
        return
    result = tdbsql.connect().register_arrow("t", table).sql(sql)  # UnsupportedSql fails too
    got = [tuple(map(_value, r)) for r in result.fetchall()]
    expected, got = sorted(expected, key=_key), sorted(got, key=_key)
    assert len(got) == len(expected), (sql, got, expected)
    for g, e in zip(got, expected):
        assert len(g) == len(e) and all(_same(x, y) for x, y in zip(g, e)), (sql, got, expected)


@settings(max_examples=80, **SETTINGS)
@given(table=tables(), sql=queries())
def test_grouping_sets_match_duckdb(table, sql):
    _check(table, sql)


def test_grouping_sets_over_an_empty_table():
    table = pa.table({"k": pa.array([], pa.int32()), "s": pa.array([], pa.string()),
                      "b": pa.array([], pa.bool_()), "v": pa.array([], pa.float64()),
                      "w": pa.array([], pa.int64())})
    _check(table, "SELECT k, s, count(*), sum(v), grouping(k, s) FROM t GROUP BY CUBE (k, s)")
    _check(table, "SELECT count(*) FROM t GROUP BY GROUPING SETS ((), (), (k))")


def test_output_names_follow_duckdb():
    table = pa.table({"k": pa.array([1, None], pa.int32()), "v": [1.0, 2.0]})
    con = tdbsql.connect().register_arrow("t", table)
    result = con.sql("SELECT k, grouping(k), grouping_id(k) + 1, grouping(k) AS g, sum(v) "
                     "FROM t GROUP BY ROLLUP (k)")
    assert result.columns == ["k", "GROUPING(k)", "(GROUPING(k) + 1)", "g", "sum(v)"]
    assert pa.types.is_int64(result.arrow().schema.field(1).type)
    assert pa.types.is_int32(result.arrow().schema.field(0).type)  # a NULL branch keeps the type
