"""HAVING without GROUP BY and an aggregate-free select list, and GROUP BY over JOIN ... USING,
on the sources the sqllogic records (fixture arrays only) do not reach: Arrow tables
(``register_arrow``), an array with no cells, ``tdbsql.query`` over one array, and a third
USING join.  Every answer is DuckDB's over the same rows, every refusal one DuckDB makes too.

A HAVING there makes the SELECT one group: one row or none (it used to be dropped, giving a
row per input row).  A bare USING column is the column DuckDB binds: the left one for INNER /
LEFT, the right one for RIGHT, COALESCE of both for FULL.
"""

from __future__ import annotations

import duckdb
import numpy as np
import pyarrow as pa
import pytest
import tiledb

import tdbsql

S = pa.table({"a": pa.array([1, 2, 2, None], pa.int64()),
              "v": pa.array([5, -1, 3, None], pa.int64())})
U = pa.table({"a": pa.array([2, 3, None, 2], pa.int64()),
              "w": pa.array([10, 20, 30, 40], pa.int64())})
X = pa.table({"a": pa.array([2, 3, 4], pa.int64()), "z": pa.array([1, 2, 3], pa.int64())})
EMPTY = pa.table({"a": pa.array([], pa.int64()), "v": pa.array([], pa.int64())})
TABLES = {"s": S, "u": U, "x": X, "e": EMPTY}


def _rows(table: pa.Table) -> list[tuple]:
    columns = [c.to_pylist() for c in table.columns]
    return sorted(zip(*columns), key=repr) if columns else []


def _duck(sql: str, tables: dict[str, pa.Table]) -> list[tuple]:
    con = duckdb.connect()
    for name, table in tables.items():
        con.register(name, table)
    return _rows(con.sql(sql).to_arrow_table())


@pytest.fixture(scope="module")
def con():
    con = tdbsql.connect()
    for name, table in TABLES.items():
        con.register_arrow(name, table)
    return con


HAVING = [
    "SELECT NULL AS x FROM s HAVING count(*) IS NOT NULL",
    "SELECT 1 FROM s HAVING count(*) > 2",
    "SELECT 1 FROM s HAVING count(*) > 20",
    "SELECT 'x' FROM s HAVING sum(v) > 0",
    "SELECT max(v) FROM s HAVING min(v) < 0",
    "SELECT max(v) FROM s HAVING min(v) < -100",
    "SELECT 1 AS one, 2 AS two FROM s HAVING sum(v) = 7",
    "SELECT 1 FROM s WHERE a > 1 HAVING count(*) = 2",
    "SELECT 1 FROM s WHERE a > 1 HAVING count(*) = 3",
    "SELECT 1 FROM s HAVING count(*) FILTER (WHERE a > 1) = 2",
    "SELECT 1 FROM s HAVING 1 = 1",
    "SELECT 1 AS k FROM s HAVING k = 1",
    "SELECT 1 FROM s JOIN u USING (a) HAVING count(*) > 1",
    "SELECT 1 FROM s ORDER BY count(*)",
    "SELECT count(*) FROM (SELECT 1 AS x FROM s HAVING count(*) > 1) q",
    "SELECT 1 FROM e HAVING count(*) = 0",
    "SELECT 1 FROM e HAVING count(*) > 0",
    "SELECT 1 FROM e HAVING sum(v) IS NULL",
    "SELECT 2 FROM e HAVING 1 = 1",
]


@pytest.mark.parametrize("sql", HAVING)
def test_having_makes_one_group_over_arrow_tables(con, sql):
    assert _rows(con.sql(sql).arrow()) == _duck(sql, TABLES)


USING = [
    f"SELECT {column}, count(*) FROM s {join} u USING (a) GROUP BY {key}"
    for join in ("JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN")
    for column in ("a", "s.a", "u.a", "coalesce(s.a, u.a)")
    for key in ("a", "s.a", "u.a")
] + [
    f"SELECT {column}, count(*) FROM s {first} u USING (a) {second} x USING (a) GROUP BY a"
    for first in ("JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN")
    for second in ("JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN")
    for column in ("a", "s.a", "u.a", "x.a")
] + [
    f"SELECT a, s.a, u.a, x.a, v, w, z FROM s {first} u USING (a) {second} x USING (a)"
    for first in ("JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN")
    for second in ("JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN")
]


@pytest.mark.parametrize("sql", USING)
def test_using_columns_as_duckdb_binds_them(con, sql):
    """Each spelling runs and gives DuckDB's rows exactly when DuckDB accepts it."""
    try:
        want = _duck(sql, TABLES)
    except duckdb.Error:
        with pytest.raises(tdbsql.SqlError, match="must appear in the GROUP BY clause"):
            con.sql(sql)
        return
    assert _rows(con.sql(sql).arrow()) == want


@pytest.fixture(scope="module")
def empty_array(tmp_path_factory):
    """A sparse array that was created and never written, and its (no) rows."""
    uri = str(tmp_path_factory.mktemp("having") / "empty")
    _create(uri)
    return uri, pa.table({"k": pa.array([], pa.int64()), "v": pa.array([], pa.int64())})


@pytest.fixture(scope="module")
def small_array(tmp_path_factory):
    """30 cells in two fragments (metadata answers some aggregates, WHERE streams the tiles),
    and its rows."""
    uri = str(tmp_path_factory.mktemp("having") / "small")
    _create(uri)
    keys = np.concatenate([np.arange(1, 16), np.arange(40, 55)]).astype(np.int64)
    values = pa.array(keys * 7 % 11 - 3, pa.int64(), mask=keys % 5 == 0)
    for stamp, part in ((1, slice(0, 15)), (2, slice(15, 30))):
        with tiledb.open(uri, "w", timestamp=stamp) as A:
            A[keys[part]] = {"v": values[part]}
    return uri, pa.table({"k": keys, "v": values})


def _create(uri: str) -> None:
    dom = tiledb.Domain(tiledb.Dim("k", domain=(1, 100), tile=10, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=4, attrs=[
        tiledb.Attr("v", dtype=np.int64, nullable=True)]))


ARRAY_HAVING = [
    "SELECT 1 FROM array HAVING count(*) > 5",
    "SELECT 1 FROM array HAVING count(*) > 500",
    "SELECT 'x' FROM array HAVING sum(v) > 0",
    "SELECT 'x' FROM array HAVING min(v) < -100",
    "SELECT NULL AS x FROM array HAVING count(*) IS NOT NULL",
    "SELECT 1 FROM array WHERE v % 2 = 0 HAVING count(*) > 3",
    "SELECT 1 FROM array WHERE v % 2 = 0 HAVING count(*) > 300",
    "SELECT 1 FROM array WHERE k > 1000 HAVING count(*) = 0",
    "SELECT 1 FROM array HAVING max(k) IS NULL",
    "SELECT 1 FROM array ORDER BY count(*)",
]


@pytest.mark.parametrize("sql", ARRAY_HAVING)
@pytest.mark.parametrize("which", ["small_array", "empty_array"])
def test_having_makes_one_group_over_an_array(sql, which, request):
    """``tdbsql.query`` over one array (with cells and without any) against DuckDB."""
    uri, table = request.getfixturevalue(which)
    want = _duck(sql.replace("FROM array", "FROM cells"), {"cells": table})
    assert _rows(tdbsql.query(sql, uri)) == want


@pytest.mark.parametrize("sql", [
    "SELECT v FROM s HAVING count(*) > 1",
    "SELECT 1 FROM s HAVING a > 1",
    "SELECT 1 FROM s HAVING count(*) OVER () > 1",
    "SELECT 1 FROM s WHERE row_number() OVER () > 1",
])
def test_what_duckdb_refuses_is_refused(con, sql):
    with pytest.raises(duckdb.Error):
        _duck(sql, TABLES)
    with pytest.raises(tdbsql.SqlError):
        con.sql(sql)
