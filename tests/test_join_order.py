"""planner.join_order: keyless inner joins wait for a key; everything else keeps its order."""

from __future__ import annotations

from sqlglot import exp, parse_one

from sql_fixtures import sql_arrays  # noqa: F401 - the session fixture
from tdbsql.planner.join_order import _ordered


def _col(text: str) -> exp.Column:
    return parse_one(text)


def _join(side="", keys=(), condition=None):
    return {"side": side, "source_key": [_col(a) for a, _ in keys],
            "join_key": [_col(b) for _, b in keys],
            "condition": parse_one(condition) if condition else exp.true()}


def _plan(joins):
    return {name: ([k.sql() for k in j["source_key"]], [k.sql() for k in j["join_key"]])
            for name, j in joins.items()}


def test_a_keyless_join_waits_and_takes_its_key():
    """TPC-H Q2's FROM part, supplier, partsupp: partsupp first, then supplier by ps_suppkey."""
    joins = {"supplier": _join(),
             "partsupp": _join(keys=[("part.pk", "partsupp.pk"), ("supplier.sk", "partsupp.sk")]),
             "nation": _join(keys=[("supplier.nk", "nation.nk")]),
             "_u_0": _join("LEFT", keys=[("part.pk", "_u_0.k")])}
    got = _ordered("part", joins)
    assert list(got) == ["partsupp", "supplier", "nation", "_u_0"]
    assert _plan(got) == {"partsupp": (["part.pk"], ["partsupp.pk"]),
                          "supplier": (["partsupp.sk"], ["supplier.sk"]),
                          "nation": (["supplier.nk"], ["nation.nk"]),
                          "_u_0": (["part.pk"], ["_u_0.k"])}


def test_orders_that_need_no_change_or_cannot_change_stay():
    keyed = {"b": _join(keys=[("a.x", "b.x")]), "c": _join(keys=[("b.y", "c.y")])}
    assert _ordered("a", keyed) is keyed
    cross = {"b": _join(), "c": _join()}  # no key anywhere
    assert _ordered("a", cross) is cross
    with_on = {"b": _join(condition="b.v > a.v"), "c": _join(keys=[("a.x", "c.x")])}
    assert _ordered("a", with_on) is with_on  # an ON condition: left as planned
    outside = {"b": _join(), "c": _join(keys=[("z.q", "c.q")])}  # a key from outside the step
    assert _ordered("a", outside) is outside


def test_a_small_unique_key_join_runs_first(monkeypatch):
    """At run time a join on a unique key of a table no larger than the rows so far moves
    ahead (it can only drop rows); results equal DuckDB's."""
    import duckdb
    import numpy as np
    import pyarrow as pa

    import tdbsql
    from tdbsql.engine import join_step

    rng = np.random.default_rng(3)
    s = pa.table({"sk": np.arange(200), "nk": rng.integers(0, 25, 200)})
    lines = pa.table({"lk": rng.integers(0, 200, 5000), "v": rng.random(5000)})
    n = pa.table({"nk": [7], "name": ["SAUDI ARABIA"]})
    sql = ("SELECT count(*), sum(l.v) FROM s JOIN lines l ON s.sk = l.lk "
           "JOIN n ON s.nk = n.nk WHERE n.name = 'SAUDI ARABIA'")
    order = []
    real = join_step._join_one

    def spy(left, right, join, runner, name, built=None):
        order.append(name)
        return real(left, right, join, runner, name, built)

    monkeypatch.setattr(join_step, "_join_one", spy)
    con, oracle = tdbsql.connect(), duckdb.connect()
    for name, table in (("s", s), ("lines", lines), ("n", n)):
        con.register_arrow(name, table)
        oracle.register(name, table)
    got = con.sql(sql).fetchall()
    want = oracle.sql(sql).fetchall()
    assert got[0][0] == want[0][0] and abs(got[0][1] - want[0][1]) < 1e-9
    assert order == ["n", "l"]


def test_left_join_whose_nulls_are_filtered_out_becomes_inner(sql_arrays):
    """sqlglot decorrelates ``x IN (SELECT ...)`` into a LEFT join kept by ``NOT _u.k IS NULL``:
    that is an inner join (it may then run early); a LEFT join without such a filter stays."""
    import duckdb

    import tdbsql
    from sql_fixtures import oracle_table

    con, oracle = tdbsql.connect(), duckdb.connect()
    for name in ("emp", "dept"):
        con.register(name, sql_arrays[name])
        oracle.register(name, oracle_table(sql_arrays[name]))
    semi = ("SELECT e.ename FROM emp e, dept d WHERE e.dept_id = d.dept_id AND e.emp_id IN "
            "(SELECT manager_id FROM emp WHERE manager_id IS NOT NULL GROUP BY manager_id) "
            "ORDER BY 1")
    outer = "SELECT e.ename, d.dname FROM emp e LEFT JOIN dept d ON e.dept_id = d.dept_id ORDER BY 1"
    for sql, side in ((semi, "INNER JOIN _u_0"), (outer, "LEFT JOIN d")):
        assert con.sql(sql).fetchall() == oracle.sql(sql).fetchall()
        assert side in con.explain(sql)


def test_an_on_condition_across_tables_waits_for_them(monkeypatch):
    """An inner join's ON condition beyond its keys (TPC-H Q7's nation pair) no longer pins
    the join: its key part moves ahead like any small unique-key join, and the condition
    filters the rows once every table it reads is joined; one reading only its join's two
    sides stays in the join.  Outer joins after it keep theirs in place.  Results equal
    DuckDB's."""
    import duckdb
    import numpy as np
    import pyarrow as pa

    import tdbsql
    from tdbsql.engine import join_step

    rng = np.random.default_rng(5)
    s = pa.table({"sk": np.arange(300), "nk": rng.integers(0, 5, 300)})
    lines = pa.table({"lk": rng.integers(0, 300, 4000), "ck": rng.integers(0, 50, 4000),
                      "v": rng.random(4000)})
    c = pa.table({"ck": np.arange(50), "nk": rng.integers(0, 5, 50)})
    n = pa.table({"nk": np.arange(5), "name": ["A", "B", "C", "D", None]})
    tail = pa.table({"ck": [1, 2, 3], "w": [10, 20, 30]})
    sql = ("SELECT n1.name, n2.name, count(*), sum(l.v), sum(t.w) FROM s "
           "JOIN lines l ON s.sk = l.lk JOIN n AS n1 ON s.nk = n1.nk "
           "JOIN c ON l.ck = c.ck AND c.nk <> l.lk % 5 "
           "JOIN n AS n2 ON c.nk = n2.nk AND (n1.name = 'A' AND n2.name = 'B' "
           "OR n1.name = 'B' AND n2.name = 'A') "
           "LEFT JOIN tail t ON t.ck = c.ck AND n2.name = 'A' "
           "GROUP BY 1, 2 ORDER BY 1, 2")
    order = []
    real = join_step._join_one

    def spy(left, right, join, runner, name, built=None):
        order.append((name, left.length))
        return real(left, right, join, runner, name, built)

    monkeypatch.setattr(join_step, "_join_one", spy)
    tested = []  # conditions reading only a join's two sides stay in it, tested on its pairs
    real_tested = join_step.tested_pairs
    monkeypatch.setattr(join_step, "tested_pairs", lambda left, right, li, ri, condition,
                        runner: tested.append(condition.sql()) or
                        real_tested(left, right, li, ri, condition, runner))
    con, oracle = tdbsql.connect(), duckdb.connect()
    for name, table in (("s", s), ("lines", lines), ("c", c), ("n", n), ("tail", tail)):
        con.register_arrow(name, table)
        oracle.register(name, table)
    def rounded(rows):
        return [(*row[:3], round(row[3], 9), row[4]) for row in rows]

    got = con.sql(sql).fetchall()
    assert rounded(got) == rounded(oracle.sql(sql).fetchall()) and len(got) == 2
    names = [name for name, _ in order]
    # n2 (5 rows, unique keys) joins before l's 4,000 rows; the LEFT join stays last
    assert names.index("n2") < names.index("l") and names[-1] == "t"
    assert order[-1][1] < 4000  # the pair condition filtered before the LEFT join
    plan = con.explain(sql, analyze=True)
    ran = plan.split("Joined in this order: ")[1].splitlines()[0]
    assert ran.index("the ON condition of n2") < ran.index("t (")
    assert '"c"."nk" <> "l"."lk" % 5' in tested and not any('"n1"' in t for t in tested)
