"""STRUCT columns of a registered Arrow table, checked against DuckDB over the same table:
field access, functions, comparisons and ORDER BY, typeof, the VARCHAR text; fetchall's
dicts and the CLI's printed text (tests/sql/structs/ has the literal cases)."""

from __future__ import annotations

import os
import subprocess
import sys

import pyarrow as pa
import pytest

from sql_fixtures import arrow_engines, assert_same_rows

POINT = pa.struct([("x", pa.int64()), ("Label", pa.string()),
                   ("inner", pa.struct([("d", pa.float64())]))])


def _table() -> pa.Table:
    points = [{"x": 3, "Label": "b", "inner": {"d": 1.5}}, None,
              {"x": None, "Label": "a b", "inner": None},
              {"x": 3, "Label": "a", "inner": {"d": None}},
              {"x": -1, "Label": None, "inner": {"d": 2.0}}]
    lists = [[{"k": 1}], None, [], [{"k": None}, None], [{"k": 2}, {"k": 3}]]
    return pa.table({"id": pa.array(range(1, 6), pa.int64()), "p": pa.array(points, POINT),
                     "l": pa.array(lists, pa.list_(pa.struct([("k", pa.int32())])))})


QUERIES = [
    "SELECT id, p FROM t ORDER BY id",
    "SELECT id, p.x, p.label, p['Label'], p.inner.d, struct_extract(p, 'inner') FROM t "
    "ORDER BY id",
    "SELECT id, struct_extract_at(p, 2), struct_keys(p), typeof(p), p::VARCHAR, l::VARCHAR "
    "FROM t ORDER BY id",
    "SELECT id, struct_insert(p, y := id * 2), struct_update(p, x := 'z'), "
    "struct_concat(p, {'n': id}) FROM t ORDER BY id",
    "SELECT id, p FROM t ORDER BY p, id",
    "SELECT id, p FROM t ORDER BY p DESC NULLS FIRST, id",
    "SELECT id FROM t WHERE p.x = 3 AND p >= {'x': 3, 'Label': 'a', 'inner': {'d': 1.0}} "
    "ORDER BY id",
    "SELECT a.id, b.id, a.p < b.p, a.p = b.p FROM t a, t b ORDER BY a.id, b.id",
    "SELECT id, l[1], l[1].k, list_extract(l, 2) FROM t ORDER BY id",
    "SELECT p.x, count(*) FROM t GROUP BY p.x ORDER BY p.x",
    "WITH c AS (SELECT id, {'p': p, 'id': id} AS w FROM t) SELECT w.p.x, w.id FROM c "
    "ORDER BY w.id",
    "SELECT CAST(p AS STRUCT(label VARCHAR, x DOUBLE)) FROM t ORDER BY id",
    "SELECT list(p ORDER BY id) FROM t",
    "SELECT p, count(*), min(id) FROM t GROUP BY p ORDER BY p",
    "SELECT DISTINCT p.inner, l FROM t ORDER BY ALL",
    "SELECT count(DISTINCT p) FROM t",
    "SELECT p.* FROM t ORDER BY id",
    "SELECT id, unnest(p), unnest(l) FROM t ORDER BY id, 4",
    "SELECT p.* EXCLUDE (\"Label\"), l FROM t WHERE id > 2 ORDER BY id",
    "SELECT a.id, b.id FROM t a JOIN t b ON a.p = b.p ORDER BY 1, 2",
    "SELECT id FROM t WHERE p.inner IN (SELECT p.inner FROM t WHERE id > 3) ORDER BY id",
]


@pytest.mark.parametrize("sql", QUERIES)
def test_struct_columns_as_duckdb(sql):
    ours, oracle = arrow_engines(_table())
    assert_same_rows(ours.sql(sql).fetchall(), oracle.sql(sql).fetchall())


def test_typeof_names_the_fields_as_duckdb():
    ours, oracle = arrow_engines(_table())
    sql = "SELECT typeof(p), typeof(l) FROM t LIMIT 1"
    assert ours.sql(sql).fetchall() == oracle.sql(sql).fetchall() == \
        [("STRUCT(x BIGINT, \"Label\" VARCHAR, \"inner\" STRUCT(d DOUBLE))", "STRUCT(k INTEGER)[]")]


def test_the_cli_prints_a_struct_as_duckdb():
    sql = "SELECT {'a': 1, 'b': 'x y', 'c': [1, 2], 'd': NULL} AS s"
    for fmt, want in (("table", "{'a': 1, 'b': x y, 'c': [1, 2], 'd': NULL}"),
                      ("csv", "\"{'a': 1, 'b': x y, 'c': [1, 2], 'd': NULL}\""),
                      ("json", '{"s": {"a": 1, "b": "x y", "c": [1, 2], "d": null}}')):
        proc = subprocess.run([sys.executable, "-m", "tdbsql", "query", sql, "--format", fmt],
                              capture_output=True, text=True, env=dict(os.environ), timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert want in proc.stdout.splitlines(), proc.stdout


@pytest.mark.parametrize("sql", [
    "SELECT {'a': 1, 'B': 'x', 'key': [1]}, struct_pack(a := 1)",
    "SELECT s.a, s['b'], struct_extract(s, 'a'), t.s.b, struct_insert(s, \"Y y\" := 2) FROM t",
    "SELECT CAST(s AS STRUCT(a INT)), struct_update({'x': 1}, x := [2]) FROM t",
])
def test_result_columns_are_named_as_duckdb(sql):
    table = pa.table({"s": pa.array([{"a": 1, "b": "x"}])})
    ours, oracle = arrow_engines(table)
    assert ours.sql(sql).arrow().column_names == oracle.sql(sql).columns


def test_unnamed_structs_come_out_as_duckdb_tuples():
    """fetchall() and df() give a TUPLE (row(...)) as tuples, also nested, as DuckDB does."""
    ours, oracle = arrow_engines(_table())
    sql = "SELECT row(id, 'a'), [row(1, row(2, NULL))], {'a': (id, 2)} FROM t ORDER BY id"
    assert ours.sql(sql).fetchall() == oracle.sql(sql).fetchall()
    sql = "SELECT (id, 'x') AS r FROM t ORDER BY id"
    assert list(ours.sql(sql).df()["r"]) == list(oracle.sql(sql).df()["r"])
