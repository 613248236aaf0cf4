"""INSERT / UPDATE / DELETE ... RETURNING: each statement run on an array (or a table in
memory) and on a DuckDB table holding the same rows; the returned rows compared as multisets,
then every row of the table."""

from __future__ import annotations

import os

import pyarrow as pa
import pytest

tiledb = pytest.importorskip("tiledb")
duckdb = pytest.importorskip("duckdb")
from hypothesis import given, settings, strategies as st  # noqa: E402

import tdbsql  # noqa: E402
from tdbsql.errors import SqlError, UnsupportedSql  # noqa: E402
from test_update import _Pair as _OrderedPair, _dense, _sparse  # noqa: E402


def _multiset(rows: list) -> list:
    return sorted(rows, key=repr)


class _Pair(_OrderedPair):
    def both(self, sql: str):
        ours = self.con.sql(sql).fetchall()
        assert _multiset(ours) == _multiset(self.duck.sql(sql).fetchall()), sql
        assert self.rows() == self.duck_rows(), sql
        return ours


SPARSE = [
    "INSERT INTO a VALUES (20, 's2', 2.5, 0.5, 'new', DATE '2024-05-01'), "
    "(21, 's0', 7, NULL, NULL, '2024-05-02') RETURNING *",  # 2.5 stored as 3: returned so
    "INSERT INTO a (k, s, v, d) VALUES (22, 's1', -1, '2023-01-01') RETURNING k, f, t AS text",
    "INSERT INTO a SELECT k + 100, s, v * 2, f, t, d FROM a WHERE k < 4 "
    "RETURNING k * 10 AS ten, upper(s), v, d + 1",
    "UPDATE a SET v = v + 1 WHERE k <= 3 RETURNING *",
    "UPDATE a AS x SET t = x.s || '!', f = NULL WHERE x.k > 100 RETURNING x.k, x.t, f, v * 2",
    "UPDATE a SET v = 2.5 WHERE k = 4 RETURNING v, a.v + 1 AS next",  # the stored value
    "UPDATE a SET d = d + 1 WHERE k = 999 RETURNING *",  # no row
    "UPDATE a SET v = -v RETURNING k, s, v",  # every row
    "DELETE FROM a WHERE k > 20 RETURNING *",
    "DELETE FROM a WHERE f < 0 AND k < 10 RETURNING k, t, coalesce(f, -1) AS f",
    "DELETE FROM a WHERE k = 999 RETURNING k",
    "INSERT INTO a VALUES (30, 's0', 1, 1, 'x', '2024-01-01') RETURNING 1 AS one, random() < 2",
    "DELETE FROM a WHERE v > 0 RETURNING a.*",
]


def test_sparse_returning_matches_duckdb(tmp_path):
    pair = _Pair(_sparse(str(tmp_path / "a")), ["v", "d"])
    returned = [pair.both(sql) for sql in SPARSE]
    assert returned[0][0][2] == 3  # as stored (a DECIMAL 2.5 rounds up), not as written
    assert [len(rows) for rows in returned] == [2, 1, 3, 3, 3, 1, 0, 18, 5, 6, 0, 1, 1]
    with tiledb.open(pair.path) as A:
        got = A.query(return_arrow=True).df[:]
    key = [("k", "ascending")]
    assert got.sort_by(key).to_pylist() == \
        pair.con.sql("SELECT * FROM a").arrow().sort_by(key).to_pylist()


def test_returning_star_excludes_and_columns(tmp_path):
    pair = _Pair(_sparse(str(tmp_path / "a")), ["v", "d"])
    pair.both("UPDATE a SET v = 0 WHERE k < 3 RETURNING * EXCLUDE (t, d)")
    pair.both("UPDATE a SET v = 1 WHERE k < 3 RETURNING a.* EXCLUDE (k)")
    sql = "DELETE FROM a WHERE k = 1 RETURNING k, k, k AS k_1"
    assert pair.con.sql(sql).arrow().column_names == pair.duck.sql(sql).columns == \
        ["k", "k_1", "k_1_1"]


def test_update_from_returning_matches_duckdb(tmp_path):
    pair = _Pair(_sparse(str(tmp_path / "a")), ["v", "d"])
    changes = pa.table({"key": pa.array([2, 3, 50], pa.int32()),
                        "amount": pa.array([5, 7, 9], pa.int64())})
    pair.con.register("c", changes)
    pair.duck.register("c", changes)
    assert len(pair.both("UPDATE a SET v = v + c.amount FROM c WHERE a.k = c.key "
                         "RETURNING *")) == 2


def test_dense_returning_matches_duckdb(tmp_path):
    pair = _Pair(_dense(str(tmp_path / "d")), ["v", "t"])
    assert len(pair.both("UPDATE a SET v = v * 2, t = t || '!' WHERE (r = 2 AND c = 3) OR "
                         "(r = 6 AND c = 8) RETURNING *")) == 2
    assert len(pair.both("UPDATE a SET n = r + c WHERE r = 12 RETURNING r, c, n")) == 9


def test_duplicates_returning_matches_duckdb(tmp_path):
    pair = _Pair(_sparse(str(tmp_path / "a"), dups=True), ["v", "d"])
    assert len(pair.both("UPDATE a SET v = v + 1000 WHERE k = 3 RETURNING k, v")) == 2
    assert len(pair.both("DELETE FROM a WHERE k > 10 RETURNING *")) == 4
    assert len(pair.both("INSERT INTO a SELECT * FROM a WHERE k = 1 RETURNING *")) == 2


def test_refused_returning_writes_nothing(tmp_path):
    pair = _Pair(_sparse(str(tmp_path / "a")), ["v", "d"])
    before = pair.rows()
    fragments = len(tiledb.array_fragments(pair.path))
    for sql, message in [
            ("INSERT INTO a VALUES (50, 's', 1, 1, 'x', '2024-01-01') RETURNING sum(k)",
             "aggregate functions are not supported in RETURNING"),
            ("UPDATE a SET v = 1 RETURNING row_number() OVER ()", "window functions"),
            ("DELETE FROM a WHERE k = 1 RETURNING (SELECT max(k) FROM a)", "subqueries"),
            ("UPDATE a SET v = 1 WHERE k = 1 RETURNING k IN (SELECT 1)", "subqueries"),
            ("UPDATE a SET v = 1 RETURNING nope", "nope"),
            ("INSERT INTO a VALUES (50, 's', 1, 1, 'x', '2024-01-01') RETURNING a.nope",
             "nope")]:
        with pytest.raises(SqlError, match=message):
            pair.con.sql(sql)
        with pytest.raises(duckdb.Error):
            pair.duck.sql(sql)
    assert pair.rows() == before == pair.duck_rows()
    assert len(tiledb.array_fragments(pair.path)) == fragments


def test_delete_returning_of_an_array_at_a_timestamp_is_refused(tmp_path):
    path = _sparse(str(tmp_path / "a"))
    con = tdbsql.connect().register("old", path, timestamp=1)
    with pytest.raises(UnsupportedSql, match="registered at timestamp 1"):
        con.sql("DELETE FROM old WHERE k = 1 RETURNING *")
    assert con.sql("SELECT count(*) FROM old").fetchall() == [(12,)]


def test_time_travel_and_write_order_with_returning(tmp_path):
    path = _sparse(str(tmp_path / "a"))
    con = tdbsql.connect().register("a", path)
    before = con.sql("SELECT k, v FROM a ORDER BY k").fetchall()
    for step in range(1, 11):  # each sees the one before, even within one millisecond
        assert con.sql("UPDATE a SET v = v + 1 WHERE k = 1 RETURNING v").fetchall() == [(step,)]
    assert con.sql("DELETE FROM a WHERE k = 1 RETURNING v").fetchall() == [(10,)]
    assert con.sql("INSERT INTO a SELECT 1, 's1', 99, NULL, NULL, '2024-01-01' RETURNING v") \
        .fetchall() == [(99,)]
    assert con.sql("SELECT v FROM a WHERE k = 1").fetchall() == [(99,)]
    assert con.sql("SELECT k, v FROM a FOR SYSTEM_TIME AS OF 1 ORDER BY k").fetchall() == before


def test_enumerated_attribute_returns_its_labels(tmp_path):
    from tdbsql import schema as S
    from tdbsql.storage.writer import create

    path = str(tmp_path / "en")
    create(path, S.Schema([S.Dim("x", "int64", (0, 99), 10)],
                          [S.Attr("c", "int8", enumeration="colour")],
                          enumerations=[S.Enumeration("colour", ["red", "green", "blue"])]))
    con = tdbsql.connect().register("t", path)
    assert con.sql("INSERT INTO t VALUES (1, 'blue'), (2, 'red') RETURNING c, x") \
        .fetchall() == [("blue", 1), ("red", 2)]
    assert con.sql("UPDATE t SET c = 'green' WHERE x = 1 RETURNING *").fetchall() == \
        [(1, "green")]


MEMORY_SCRIPT = [
    "CREATE TABLE m AS SELECT k, s, v, t FROM a WHERE k < 6",
    "INSERT INTO m VALUES (40, 'x', 2.5, NULL), (41, 'y', 3, 'z') RETURNING *",
    "INSERT INTO m (k, v) VALUES (42, 1) RETURNING k, s, v + 1 AS w",
    "UPDATE m SET v = v * 10, t = upper(t) WHERE k > 3 RETURNING *",
    "UPDATE m AS q SET s = 'none' WHERE q.s IS NULL RETURNING q.k, s",
    "DELETE FROM m WHERE v > 100 RETURNING k, v",
    "DELETE FROM m WHERE k = 999 RETURNING *",
    "DELETE FROM m RETURNING *",
]


def test_tables_in_memory_return_as_duckdb(tmp_path):
    pair = _Pair(_sparse(str(tmp_path / "a")), ["v", "d"])
    for sql in MEMORY_SCRIPT:
        ours, theirs = pair.con.sql(sql).fetchall(), pair.duck.sql(sql).fetchall()
        assert _multiset(ours) == _multiset(theirs), sql
        assert pair.con.sql("SELECT * FROM m").fetchall() == \
            pair.duck.sql("SELECT * FROM m").fetchall(), sql
    with pytest.raises(SqlError, match="aggregate functions"):
        pair.con.sql("INSERT INTO m VALUES (1, 'a', 1, 'b') RETURNING count(*)")
    assert pair.con.sql("SELECT count(*) FROM m").fetchall() == [(0,)]


def test_returning_through_the_command_line_and_scripts(tmp_path, capsys):
    from tdbsql.cli import main

    path = _sparse(str(tmp_path / "a"))
    assert main(["query", "UPDATE array SET v = 5 WHERE k <= 2 RETURNING k, v", path,
                 "--format", "csv"]) == 0
    assert capsys.readouterr().out.strip().splitlines() == ['"k","v"', "1,5", "2,5"]
    script = "UPDATE array SET v = 6 WHERE k = 1;\nDELETE FROM array WHERE k = 1 RETURNING v;"
    assert main(["query", script, path, "--format", "csv"]) == 0
    assert capsys.readouterr().out.strip().splitlines() == ['"v"', "6"]
    con = tdbsql.connect().register("a", path)
    assert con.sql("INSERT INTO a SELECT 1, 's1', 7, NULL, NULL, '2024-01-01' RETURNING v; "
                   "UPDATE a SET v = v + 1 WHERE k = 1 RETURNING v").fetchall() == [(8,)]
    assert os.path.isdir(path)


@settings(max_examples=20, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["INSERT", "UPDATE", "DELETE"]), st.integers(0, 13),
                          st.sampled_from(["<", "=", ">", "<>"])), min_size=1, max_size=4))
def test_random_writes_returning_match_duckdb(tmp_path_factory, steps):
    pair = _Pair(_sparse(str(tmp_path_factory.mktemp("r") / "a")), ["v", "d"])
    for number, (kind, bound, op) in enumerate(steps):  # keys stay distinct (no duplicates)
        if kind == "INSERT":
            sql = (f"INSERT INTO a SELECT k + {50 * 2 ** number}, s, v - k, f, t, d FROM a "
                   f"WHERE k {op} {bound} RETURNING *")
        elif kind == "UPDATE":
            sql = f"UPDATE a SET v = v * 3 - k, t = coalesce(t, s) WHERE k {op} {bound} " \
                  "RETURNING k, v, t || '.' AS dotted"
        else:
            sql = f"DELETE FROM a WHERE k {op} {bound} RETURNING *, v + k"
        pair.both(sql)
