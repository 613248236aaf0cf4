"""An uncorrelated subquery runs once per query, however many batches the scan under it has.

The arrays here are sparse with ``capacity=8`` and the scan chunk is cut to one tile
(``scan_step.CHUNK_CELLS = 8``), so every scan streams 40-odd batches.  What is counted:

* executions of a subquery -- ``Runner.run_plan`` runs the outer query's plan once and each
  subquery's plan once more (``SubqueryResolver`` caches results by the subquery's SQL);
* substitutions -- ``SubqueryResolver.resolve`` turns an expression holding a subquery into one
  over a constant / membership column.  sqlglot leaves a WHERE (and SELECT list) holding a
  subquery on the filter-only Join step above the scan, the pushdown never moves such a conjunct
  into the scan, and the streamed aggregate refuses a chain holding one: so the expression is
  substituted once, over the concatenated scan output, not per batch.

Correlated subqueries are decorrelated by sqlglot into joins (row-by-row semantics kept) and
never reach the resolver.  Every result equals DuckDB's over the same cells.
"""

from __future__ import annotations

import collections

import duckdb
import numpy as np
import pyarrow as pa
import pytest
import tiledb

import tdbsql
from tdbsql.engine import pipeline, scan_step, sparse_scan
from tdbsql.engine.runner import Runner
from tdbsql.engine.subqueries import SubqueryResolver
from tdbsql.planner.conjuncts import has_subquery


def _cells(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    k = np.sort(rng.choice(2000, n, replace=False)).astype(np.int64)
    v = rng.integers(0, 100, n).astype(np.int64)
    null = rng.random(n) < 0.1
    s = np.array([f"s{x % 7}" for x in k], dtype=object)
    return pa.table({"k": k, "v": pa.array(v, mask=null), "s": s})


def _write(uri: str, cells: pa.Table) -> None:
    dom = tiledb.Domain(tiledb.Dim("k", domain=(0, 9999), tile=16, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=8, attrs=[
        tiledb.Attr("v", dtype=np.int64, nullable=True),
        tiledb.Attr("s", dtype=str, var=True)]))
    with tiledb.open(uri, "w") as A:
        A[cells["k"].to_numpy()] = {"v": cells["v"], "s": cells["s"].to_numpy(zero_copy_only=False)}


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    root = tmp_path_factory.mktemp("subquery_batches")
    out = {}
    for name, n, seed in (("a", 360, 1), ("b", 300, 2)):
        cells = _cells(n, seed)
        _write(str(root / name), cells)
        out[name] = (str(root / name), cells)
    return out


@pytest.fixture
def counted(tables, monkeypatch):
    """(connection, duckdb connection, counts): counts['batches'] scan batches,
    counts['plans'] plans run, counts[id(node)] resolves of each node holding a subquery."""
    monkeypatch.setattr(scan_step, "CHUNK_CELLS", 8)  # one tile per batch
    monkeypatch.setattr(sparse_scan, "RUN_CELLS", 0)  # and no runs of tiles
    counts: collections.Counter = collections.Counter()

    scan_batch = pipeline.scan_batch

    def counting_batch(*args, **kwargs):
        counts["batches"] += 1
        return scan_batch(*args, **kwargs)

    run_plan = Runner.run_plan

    def counting_run_plan(self, plan):
        counts["plans"] += 1
        return run_plan(self, plan)

    resolve = SubqueryResolver.resolve

    def counting_resolve(self, node, flat, frame):
        if has_subquery(node):
            counts[id(node)] += 1
            counts["rows resolved"] += flat.num_rows
        return resolve(self, node, flat, frame)

    monkeypatch.setattr(pipeline, "scan_batch", counting_batch)
    monkeypatch.setattr(Runner, "run_plan", counting_run_plan)
    monkeypatch.setattr(SubqueryResolver, "resolve", counting_resolve)
    con = tdbsql.connect()
    oracle = duckdb.connect()
    for name, (path, cells) in tables.items():
        con.register(name, path)
        oracle.register(name, cells)
    return con, oracle, counts


def _rows(table) -> list[tuple]:
    if isinstance(table, pa.RecordBatchReader):  # what DuckDB's .arrow() gives
        table = table.read_all()
    return sorted((tuple(r.values()) for r in table.to_pylist()), key=repr)


# (SQL, how many subqueries it executes through the resolver)
UNCORRELATED = [
    ("SELECT k, CASE WHEN EXISTS (SELECT 1 FROM b WHERE v > 95) THEN 1 ELSE 0 END AS e FROM a", 1),
    ("SELECT k, s FROM a WHERE NOT EXISTS (SELECT 1 FROM b WHERE v > 1000) AND v > 50", 1),
    ("SELECT k, v FROM a WHERE v > ALL (SELECT v FROM b WHERE v < 40)", 1),
    ("SELECT k FROM a WHERE v <> ALL (SELECT v FROM b WHERE k < 300)", 1),
    ("SELECT k FROM a WHERE v < ANY (SELECT v FROM b WHERE s = 's3') OR k < 20", 1),
    # the scalar in an arithmetic expression becomes a cross join: only max(v) is resolved
    ("SELECT k, (SELECT max(v) FROM b) AS m, v - (SELECT min(v) FROM b) AS d FROM a", 1),
    ("SELECT k FROM a WHERE k NOT IN (SELECT k FROM b)", 1),
    ("SELECT k FROM a WHERE v NOT IN (SELECT v FROM b WHERE k < 500)", 1),
    ("SELECT k, s FROM a WHERE (k, s) IN (SELECT k, s FROM b)", 1),
    ("SELECT s, count(*) FROM a WHERE v > ALL (SELECT v FROM b WHERE v < 30) GROUP BY s", 1),
]


@pytest.mark.parametrize("sql,subqueries", UNCORRELATED, ids=[q for q, _ in UNCORRELATED])
def test_uncorrelated_subquery_runs_once_per_query(counted, sql, subqueries):
    con, oracle, counts = counted
    got = con.sql(sql).arrow()
    assert counts["batches"] >= 40, counts  # the scans really were many batches
    assert counts["plans"] == 1 + subqueries  # the query, then each subquery once
    resolved = [n for key, n in counts.items() if isinstance(key, int)]
    assert resolved and all(n == 1 for n in resolved), counts  # substituted once, not per batch
    assert _rows(got) == _rows(oracle.sql(sql).arrow())


def test_a_subquery_used_twice_runs_once(counted, monkeypatch):
    con, oracle, counts = counted
    run = SubqueryResolver._run

    def asking(self, query):
        counts["asked"] += 1
        return run(self, query)

    monkeypatch.setattr(SubqueryResolver, "_run", asking)
    sql = "SELECT k, (SELECT max(v) FROM b) AS m FROM a WHERE v < ALL (SELECT max(v) FROM b)"
    got = con.sql(sql).arrow()
    assert counts["asked"] == 2  # the SELECT list and the ALL both need max(v) ...
    assert counts["plans"] == 1 + 1  # ... which runs once
    assert _rows(got) == _rows(oracle.sql(sql).arrow())


def test_each_query_runs_its_subqueries_afresh(counted):
    """Results are cached for one run only: a second run (a reused plan) executes again."""
    con, oracle, counts = counted
    sql = "SELECT k FROM a WHERE k NOT IN (SELECT k FROM b WHERE v > 50)"
    first = con.sql(sql).arrow()
    second = con.sql(sql).arrow()
    assert counts["plans"] == 2 * 2
    assert _rows(first) == _rows(second) == _rows(oracle.sql(sql).arrow())


CORRELATED = [
    "SELECT k, v FROM a WHERE v > (SELECT avg(v) FROM b WHERE b.s = a.s)",
    "SELECT k FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.k = a.k)",
    "SELECT k FROM a WHERE NOT EXISTS (SELECT 1 FROM b WHERE b.s = a.s AND b.v > a.v)",
    "SELECT k, (SELECT count(*) FROM b WHERE b.s = a.s) AS n FROM a",
]


@pytest.mark.parametrize("sql", CORRELATED)
def test_correlated_subqueries_keep_per_row_semantics(counted, sql):
    con, oracle, counts = counted
    got = con.sql(sql).arrow()
    assert counts["batches"] >= 40
    assert _rows(got) == _rows(oracle.sql(sql).arrow())
