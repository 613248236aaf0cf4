"""Differential test for join ordering: random FROM lists of 3-5 tables joined by random
equality keys (some unique, some not, some tables keyless), random single-table filters and
disjunctions across tables, tdbsql against DuckDB over the same Arrow tables.

This drives ``planner.join_order`` (keyless joins wait for a key, LEFT joins kept by
``IS NOT NULL`` become inner), ``engine.join_step`` (small unique-key joins first) and
``planner.pushdown.implied_filters``: whatever order tdbsql picks, the rows must be DuckDB's.
"""

from __future__ import annotations

import duckdb
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tdbsql

TABLES = ("t0", "t1", "t2", "t3", "t4")


def _tables() -> dict[str, pa.Table]:
    rng = np.random.default_rng(11)
    out = {}
    for i, name in enumerate(TABLES):
        rows = [3, 40, 8, 200, 1][i]
        out[name] = pa.table({
            "u": np.arange(rows, dtype=np.int64),  # unique key
            "k": rng.integers(0, 6, rows),  # a repeating key
            "v": rng.integers(-5, 6, rows),
            "s": pa.array(rng.choice(["a", "b", None], rows).tolist(), pa.string()),
        })
    return out


def table_engines():
    """(tdbsql, DuckDB) connections holding the tables above."""
    con, oracle = tdbsql.connect(), duckdb.connect()
    for name, table in _tables().items():
        con.register_arrow(name, table)
        oracle.register(name, table)
    return con, oracle


@pytest.fixture(scope="module")
def engines():
    return table_engines()


@st.composite
def queries(draw):
    names = draw(st.lists(st.sampled_from(TABLES), min_size=3, max_size=5, unique=True))
    conditions = []
    for i, name in enumerate(names[1:], start=1):
        if draw(st.booleans()) or i == len(names) - 1:  # some tables meet a later one only
            other = draw(st.sampled_from(names[:i] if draw(st.booleans()) else names))
            if other != name:
                left, right = draw(st.sampled_from([("u", "u"), ("k", "k"), ("k", "u"),
                                                    ("u", "k"), ("v", "k")]))
                conditions.append(f"{name}.{left} = {other}.{right}")
    for name in draw(st.lists(st.sampled_from(names), max_size=2)):
        conditions.append(draw(st.sampled_from([f"{name}.v > 0", f"{name}.s = 'a'",
                                                f"{name}.s IS NOT NULL", f"{name}.k < 4"])))
    if draw(st.booleans()):
        a, b = draw(st.lists(st.sampled_from(names), min_size=2, max_size=2, unique=True))
        conditions.append(f"(({a}.v > 1 AND {b}.k = 2) OR ({a}.v < -1 AND {b}.s = 'b'))")
    where = " AND ".join(conditions) or "TRUE"
    select = draw(st.sampled_from([
        "count(*)", "count(*), sum({n}.v)", "{n}.k, count(*) GROUP BY {n}.k"]))
    select = select.replace("{n}", draw(st.sampled_from(names)))
    if "GROUP BY" in select:
        columns, group = select.split(" GROUP BY ")
        return f"SELECT {columns} FROM {', '.join(names)} WHERE {where} GROUP BY {group}"
    return f"SELECT {select} FROM {', '.join(names)} WHERE {where}"


def _rows(rows):
    return sorted(rows, key=lambda r: tuple((v is None, str(v)) for v in r))


def _same_as_duckdb(con, oracle, sql):
    """tdbsql gives DuckDB's rows, or refuses the query by name -- never another answer."""
    try:
        got = con.sql(sql).fetchall()
    except tdbsql.UnsupportedSql:
        return
    assert _rows(got) == _rows(oracle.sql(sql).fetchall()), sql


def test_a_cyclic_from_list_is_refused_by_name(engines):
    """sqlglot's join reordering fails on this FROM list ("Cycle error"): refused, named."""
    con, _ = engines
    sql = ("SELECT count(*) FROM t0, t1, t2, t3, t4 WHERE t3.u = t1.u AND t4.u = t1.u AND "
           "((t3.v > 1 AND t4.k = 2) OR (t3.v < -1 AND t4.s = 'b'))")
    with pytest.raises(tdbsql.UnsupportedSql, match="cycle"):
        con.sql(sql)


@st.composite
def explicit_joins(draw):
    """``a JOIN b ON .. [LEFT] JOIN c ON ..`` with a WHERE that may drop the LEFT join's NULL
    rows (then an inner join) or keep them."""
    names = draw(st.lists(st.sampled_from(TABLES), min_size=3, max_size=4, unique=True))
    sql = f"SELECT count(*), sum({names[0]}.v) FROM {names[0]}"
    kinds = []
    for i, name in enumerate(names[1:], start=1):
        kind = draw(st.sampled_from(["JOIN", "LEFT JOIN"]))
        other = draw(st.sampled_from(names[:i]))
        left, right = draw(st.sampled_from([("u", "u"), ("k", "k"), ("u", "k"), ("k", "u")]))
        sql += f" {kind} {name} ON {name}.{left} = {other}.{right}"
        kinds.append((kind, name))
    filters = []
    for kind, name in kinds:
        if kind == "LEFT JOIN":
            filters.append(draw(st.sampled_from([f"{name}.u IS NOT NULL", f"{name}.u IS NULL",
                                                 f"NOT {name}.k IS NULL", "TRUE"])))
    if filters:
        sql += " WHERE " + " AND ".join(filters)
    return sql


@settings(max_examples=270, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(queries(), explicit_joins()))
def test_join_orders_give_duckdbs_rows(engines, sql):
    """Comma FROM lists and explicit JOIN / LEFT JOIN chains alike."""
    con, oracle = engines
    _same_as_duckdb(con, oracle, sql)


def test_a_join_runs_early_on_an_equal_key_of_a_table_joined_later(engines):
    """TPC-H Q5's shape: t4 (one row) joins t3 through t3.k = t0.k (t1's join gives t0.k =
    t3.k) before t3 is there, so the other joins see one row per t0 match, not all."""
    con, oracle = engines
    sql = ("SELECT count(*), sum(t2.v) FROM t0 JOIN t1 ON t1.k = t0.k JOIN t2 ON t2.u = t1.u "
           "JOIN t3 ON t3.k = t0.k AND t3.u = t2.u JOIN t4 ON t4.u = t3.k")
    _same_as_duckdb(con, oracle, sql)
    assert _join_order(con, sql).startswith("t4 ("), _join_order(con, sql)


def test_a_small_unique_table_joins_into_the_input_its_keys_read_first(engines):
    """TPC-H Q11's shape: t4 (one row) reads only t1's columns, and t1 is smaller than the
    source t3: t4 joins into t1 first, then t3 joins those rows."""
    con, oracle = engines
    sql = ("SELECT count(*), sum(t3.v) FROM t3 JOIN t1 ON t1.u = t3.k "
           "JOIN t4 ON t4.u = t1.k")
    _same_as_duckdb(con, oracle, sql)
    assert _join_order(con, sql).startswith("t4 into t1 ("), _join_order(con, sql)


def _join_order(con, sql: str) -> str:
    """The join order EXPLAIN ANALYZE reports as run."""
    prefix = "Joined in this order: "
    line = next(line.strip() for line in con.explain(sql, analyze=True).splitlines()
                if prefix in line)
    return line[len(prefix):]
