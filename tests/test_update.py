"""UPDATE statements: each one run on an array and on a DuckDB table holding the same rows,
then every row compared; the array also read back with ``tiledb``."""

from __future__ import annotations

import datetime
import os

import numpy as np
import pyarrow as pa
import pytest

tiledb = pytest.importorskip("tiledb")
duckdb = pytest.importorskip("duckdb")
from hypothesis import given, settings, strategies as st  # noqa: E402

import tdbsql  # noqa: E402
from tdbsql.errors import DataError, SqlError, UnsupportedSql  # noqa: E402


def _sparse(path: str, dups: bool = False) -> str:
    dom = tiledb.Domain(tiledb.Dim("k", domain=(0, 999), tile=10, dtype=np.int32),
                        tiledb.Dim("s", dtype="ascii"))
    tiledb.Array.create(path, tiledb.ArraySchema(
        domain=dom, sparse=True, allows_duplicates=dups, capacity=8, attrs=[
            tiledb.Attr("v", dtype=np.int64),
            tiledb.Attr("f", dtype=np.float64, nullable=True),
            tiledb.Attr("t", dtype=str, var=True, nullable=True),
            tiledb.Attr("d", dtype="datetime64[D]")]))
    k = np.array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12] * (2 if dups else 1), dtype=np.int32)
    n = len(k)
    with tiledb.open(path, "w", timestamp=1) as A:
        A[k, np.array([f"s{x % 3}" for x in k])] = {
            "v": np.arange(n, dtype=np.int64) * 10,
            "f": np.ma.masked_array(np.linspace(-1, 1, n), mask=[i % 4 == 0 for i in range(n)]),
            "t": np.array([None if i % 5 == 0 else f"text {i}" for i in range(n)], dtype=object),
            "d": np.datetime64("2024-02-27") + np.arange(n).astype("timedelta64[D]")}
    return path


def _dense(path: str) -> str:
    dom = tiledb.Domain(tiledb.Dim("r", domain=(1, 12), tile=4, dtype=np.int64),
                        tiledb.Dim("c", domain=(1, 9), tile=3, dtype=np.int64))
    tiledb.Array.create(path, tiledb.ArraySchema(domain=dom, sparse=False, attrs=[
        tiledb.Attr("v", dtype=np.int32),
        tiledb.Attr("t", dtype=str, var=True),
        tiledb.Attr("n", dtype=np.float32, nullable=True)]))
    with tiledb.open(path, "w", timestamp=1) as A:
        A[1:13, 1:10] = {"v": np.arange(108, dtype=np.int32).reshape(12, 9),
                         "t": np.array([f"c{i}" for i in range(108)], dtype=object).reshape(12, 9),
                         "n": np.ma.masked_array(np.arange(108, dtype=np.float32).reshape(12, 9),
                                                 mask=np.arange(108).reshape(12, 9) % 7 == 0)}
    with tiledb.open(path, "w", timestamp=2) as A:  # a second fragment over part of it
        A[3:5, 2:8] = {"v": np.full((2, 6), -1, dtype=np.int32),
                       "t": np.array(["new"] * 12, dtype=object).reshape(2, 6),
                       "n": np.ma.masked_array(np.ones((2, 6), dtype=np.float32))}
    return path


class _Pair:
    """The array as table ``a`` in tdbsql and the same rows as table ``a`` in DuckDB."""

    def __init__(self, path: str, not_null: list[str]):
        self.path = path
        self.con = tdbsql.connect().register("a", path)
        self.duck = duckdb.connect()
        rows = self.con.sql("SELECT * FROM a").arrow()
        self.duck.register("rows", rows)
        self.duck.sql("CREATE TABLE a AS SELECT * FROM rows")
        for name in not_null:
            self.duck.sql(f"ALTER TABLE a ALTER COLUMN {name} SET NOT NULL")

    def both(self, sql: str):
        ours = self.con.sql(sql).fetchall()
        assert ours == self.duck.sql(sql).fetchall(), sql
        assert self.rows() == self.duck_rows(), sql
        return ours

    def rows(self):
        return self.con.sql("SELECT * FROM a ORDER BY ALL").fetchall()

    def duck_rows(self):
        return self.duck.sql("SELECT * FROM a ORDER BY ALL").fetchall()


SPARSE_UPDATES = [
    "UPDATE a SET v = v + 1 WHERE k <= 3",
    "UPDATE a SET f = NULL, t = upper(t) WHERE s = 's1'",
    "UPDATE a AS x SET v = x.k * 1000, d = d + INTERVAL 1 MONTH WHERE x.t LIKE '%1%'",
    "UPDATE a SET f = v / 7, v = 0 WHERE f IS NULL",  # both from the old values
    "UPDATE a SET t = 'none' WHERE t IS NULL AND k > (SELECT avg(k) FROM a)",
    "UPDATE a SET v = 2.5 WHERE k = 4",  # cast to BIGINT as DuckDB casts it: 2
    "UPDATE a SET d = DATE '2000-01-01' WHERE k = 99",  # no cell
    "UPDATE a SET v = -v",  # every cell
]


def test_sparse_updates_match_duckdb_and_tiledb(tmp_path):
    pair = _Pair(_sparse(str(tmp_path / "a")), ["v", "d"])
    counts = [pair.both(sql) for sql in SPARSE_UPDATES]
    assert counts == [[(3,)], [(4,)], [(2,)], [(4,)], [(1,)], [(1,)], [(0,)], [(12,)]]
    with tiledb.open(pair.path) as A:
        got = A.query(return_arrow=True).df[:]
    ours = pair.con.sql("SELECT * FROM a").arrow()
    assert got.sort_by([("k", "ascending")]).to_pylist() == \
        ours.sort_by([("k", "ascending")]).to_pylist()


def test_update_from_another_table_matches_duckdb(tmp_path):
    pair = _Pair(_sparse(str(tmp_path / "a")), ["v", "d"])
    changes = pa.table({"key": pa.array([2, 3, 3, 50], pa.int32()),
                        "amount": pa.array([5, 7, 7, 9], pa.int64())})
    pair.con.register("c", changes)
    pair.duck.register("c", changes)
    # key 3 matches twice with one value (DuckDB takes either row; both give the same cell)
    assert pair.both("UPDATE a SET v = v + c.amount FROM c WHERE a.k = c.key") == [(2,)]
    assert pair.both("UPDATE a SET t = c2.t FROM a AS c2 JOIN c ON c2.k = c.key "
                     "WHERE a.k = c2.k + 1") == [(2,)]


def test_dense_update_rewrites_the_box_around_the_cells(tmp_path):
    pair = _Pair(_dense(str(tmp_path / "d")), ["v", "t"])
    assert pair.both("UPDATE a SET v = v * 2, t = t || '!' WHERE (r = 2 AND c = 3) OR "
                     "(r = 6 AND c = 8)") == [(2,)]
    assert pair.both("UPDATE a SET n = NULL WHERE v = -1 AND c > 5") == [(4,)]
    assert pair.both("UPDATE a SET n = r + c WHERE r = 12") == [(9,)]
    assert pair.both("UPDATE a SET v = 7 WHERE r = 100") == [(0,)]
    with tiledb.open(pair.path) as A:
        got = A.query(return_arrow=True, coords=True).df[1:12, 1:9]
    ours = pair.con.sql("SELECT * FROM a").arrow()
    key = [("r", "ascending"), ("c", "ascending")]
    assert got.sort_by(key).to_pylist() == ours.sort_by(key).to_pylist()
    # a box a band of row tiles (extent 4): the first UPDATE's cells (2, 3) and (6, 8) lie in
    # two bands, so two one-cell fragments; the next two one each; the last none
    domains = sorted(tiledb.array_fragments(pair.path).nonempty_domain)
    assert len(domains) == 6
    assert (((2, 2), (3, 3))) in domains and (((6, 6), (8, 8))) in domains


def test_update_with_duplicates_deletes_and_writes_again(tmp_path):
    pair = _Pair(_sparse(str(tmp_path / "a"), dups=True), ["v", "d"])
    assert pair.both("UPDATE a SET v = v + 1000 WHERE k = 3 OR f < 0") == [(13,)]
    assert pair.both("UPDATE a SET t = 'x' WHERE t IS NULL") == [(5,)]
    assert pair.both("UPDATE a SET f = 0") == [(24,)]
    with tiledb.open(pair.path) as A:
        got = A.query(return_arrow=True).df[:]
    ours = pair.con.sql("SELECT * FROM a").arrow()
    key = [(n, "ascending") for n in ("k", "s", "v")]
    assert got.sort_by(key).to_pylist() == ours.sort_by(key).to_pylist()
    with pytest.raises(UnsupportedSql, match="FROM on an array that allows duplicates"):
        pair.con.sql("UPDATE a SET v = 1 FROM a AS b WHERE a.k = b.k")
    before = pair.rows()
    with pytest.raises(UnsupportedSql):  # no delete commit holds a function: nothing written
        pair.con.sql("UPDATE a SET v = 1 WHERE lower(t) = 'x'")
    assert pair.rows() == before


def test_time_travel_sees_the_array_before_the_update(tmp_path):
    path = _sparse(str(tmp_path / "a"))
    con = tdbsql.connect().register("a", path)
    before = con.sql("SELECT k, v FROM a ORDER BY k").fetchall()
    con.sql("UPDATE a SET v = 0")
    assert con.sql("SELECT k, v FROM a FOR SYSTEM_TIME AS OF 1 ORDER BY k").fetchall() == before
    assert con.sql("SELECT DISTINCT v FROM a").fetchall() == [(0,)]


def test_quick_updates_each_see_the_last(tmp_path):
    """Each UPDATE is written after the one before, even within one millisecond."""
    path = _sparse(str(tmp_path / "a"))
    con = tdbsql.connect().register("a", path)
    for _ in range(15):
        con.sql("UPDATE a SET v = v + 1 WHERE k = 1")
    assert con.sql("SELECT v FROM a WHERE k = 1").fetchall() == [(15,)]


def test_update_errors(tmp_path):
    path = _sparse(str(tmp_path / "a"))
    con = tdbsql.connect().register("a", path).register("old", path, timestamp=1)
    con.register("arrow", pa.table({"x": [1]}))
    cases = [
        ("UPDATE a SET k = 3", UnsupportedSql, "cannot SET dimension 'k'"),
        ("UPDATE a SET nope = 3", SqlError, r"'nope' is not a column of the table \(k, s, v"),
        ("UPDATE a SET v = 1, v = 2", SqlError, "sets column 'v' twice"),
        ("UPDATE a SET a.v = 1", SqlError, "qualified column names"),
        ("UPDATE a SET v = 1 RETURNING max(v)", SqlError, "aggregate functions are not supp"),
        ("EXPLAIN UPDATE a SET v = 1", UnsupportedSql, "statements run, with no query plan"),
        ("UPDATE a SET v = 'abc'", SqlError, "UPDATE: column 'v' cannot be stored as int64"),
        ("UPDATE a SET v = NULL", DataError, "NULL in a non-nullable field"),
        ("UPDATE a SET v = nope", SqlError, "nope"),
        ("UPDATE old SET v = 1", UnsupportedSql, "registered at timestamp 1"),
        ("UPDATE arrow SET x = 1", UnsupportedSql, "only arrays \\(and tables made by"),
        ("UPDATE a FOR SYSTEM_TIME AS OF 1 SET v = 1", SqlError, "FOR SYSTEM_TIME cannot"),
        ("UPDATE a SET v = 1 FROM a AS b FULL JOIN a AS c ON b.k = c.k", UnsupportedSql,
         "FULL JOIN"),
    ]
    before = con.sql("SELECT * FROM a ORDER BY ALL").fetchall()
    for sql, error, message in cases:
        with pytest.raises(error, match=message):
            con.sql(sql)
    assert con.sql("SELECT * FROM a ORDER BY ALL").fetchall() == before
    assert len(tiledb.array_fragments(path)) == 1


def test_update_of_an_encrypted_array(tmp_path):
    key = "0123456789abcdeF0123456789abcdeF"
    path = str(tmp_path / "e")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 99), tile=10, dtype=np.int64))
    tiledb.Array.create(path, tiledb.ArraySchema(domain=dom, sparse=True, attrs=[
        tiledb.Attr("v", dtype=np.float64)]), key=key)
    with tiledb.open(path, "w", key=key) as A:
        A[np.arange(5)] = {"v": np.arange(5, dtype=np.float64)}
    con = tdbsql.connect().register("e", path, key=key)
    assert con.sql("UPDATE e SET v = v * 10 WHERE x >= 3").fetchall() == [(2,)]
    with tiledb.open(path, key=key) as A:
        assert A[:]["v"].tolist() == [0.0, 1.0, 2.0, 30.0, 40.0]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["v", "f", "t", "d"]), st.integers(0, 13),
                          st.sampled_from(["<", "<=", "=", ">", "<>"])), min_size=1, max_size=4))
def test_random_updates_match_duckdb(tmp_path_factory, steps):
    pair = _Pair(_sparse(str(tmp_path_factory.mktemp("u") / "a")), ["v", "d"])
    values = {"v": "v * 3 - k", "f": "CASE WHEN f > 0 THEN NULL ELSE f + k END",
              "t": "coalesce(t, s) || k", "d": "d + k"}
    for column, bound, op in steps:
        pair.both(f"UPDATE a SET {column} = {values[column]} WHERE k {op} {bound}")
    assert pair.rows() == pair.duck_rows()


@settings(max_examples=20, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["v", "t", "n"]), st.integers(1, 12),
                          st.integers(1, 9), st.sampled_from(["<", "=", ">", "<>"])),
                min_size=1, max_size=4))
def test_random_dense_updates_match_duckdb(tmp_path_factory, steps):
    pair = _Pair(_dense(str(tmp_path_factory.mktemp("d") / "a")), ["v", "t"])
    values = {"v": "v * 2 - c", "t": "t || r", "n": "CASE WHEN n > 20 THEN NULL ELSE r * c END"}
    for column, row, col, op in steps:
        pair.both(f"UPDATE a SET {column} = {values[column]} WHERE r {op} {row} AND c <= {col}")
    with tiledb.open(pair.path) as A:
        got = A.query(return_arrow=True, coords=True).df[1:12, 1:9]
    key = [("r", "ascending"), ("c", "ascending")]
    assert got.sort_by(key).to_pylist() == pair.con.sql("SELECT * FROM a").arrow() \
        .sort_by(key).to_pylist()


@settings(max_examples=20, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["v", "f", "d"]), st.integers(0, 13),
                          st.sampled_from(["<", "=", ">", "<>"])), min_size=1, max_size=4))
def test_random_updates_with_duplicates_match_duckdb(tmp_path_factory, steps):
    pair = _Pair(_sparse(str(tmp_path_factory.mktemp("u") / "a"), dups=True), ["v", "d"])
    values = {"v": "v * 3 - k", "f": "f + k", "d": "d + k"}
    for column, bound, op in steps:
        pair.both(f"UPDATE a SET {column} = {values[column]} WHERE k {op} {bound}")
    with tiledb.open(pair.path) as A:
        got = A.query(return_arrow=True).df[:]
    key = [(n, "ascending") for n in ("k", "s", "v", "d")]
    assert got.sort_by(key).to_pylist() == pair.con.sql("SELECT * FROM a").arrow() \
        .sort_by(key).to_pylist()


def test_update_through_the_command_line(tmp_path, capsys):
    from tdbsql.cli import main

    path = _sparse(str(tmp_path / "a"))
    assert main(["query", "UPDATE array SET v = 5 WHERE k = 2", path, "--format", "csv"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == "1"
    assert tdbsql.query("SELECT v FROM array WHERE k = 2", path).column("v").to_pylist() == [5]


def test_update_dates_as_duckdb(tmp_path):
    pair = _Pair(_sparse(str(tmp_path / "a")), ["v", "d"])
    pair.both("UPDATE a SET d = last_day(d) WHERE month(d) = 2")
    assert pair.con.sql("SELECT max(d) FROM a WHERE k < 3").fetchall() == [
        (datetime.date(2024, 2, 29),)]


def test_update_enumerations_parameters_and_quoted_paths(tmp_path):
    from tdbsql import schema as S
    from tdbsql.storage.writer import create

    path = str(tmp_path / "en")
    create(path, S.Schema([S.Dim("x", "int64", (0, 99), 10)],
                          [S.Attr("c", "int8", enumeration="colour"),
                           S.Attr("n", "float64", nullable=True)],
                          enumerations=[S.Enumeration("colour", ["red", "green", "blue"])]))
    con = tdbsql.connect().register("t", path)
    con.sql("INSERT INTO t VALUES (1, 'blue', 0.25), (2, 'red', NULL), (3, 'green', NULL)")
    assert con.sql("UPDATE t SET c = 'red' WHERE c = 'blue'").fetchall() == [(1,)]
    assert con.sql("UPDATE t SET n = ? WHERE x = ?", [5.5, 2]).fetchall() == [(1,)]
    assert con.sql(f"UPDATE '{path}' AS q SET n = q.x * 2 WHERE q.x = 3").fetchall() == [(1,)]
    with pytest.raises(DataError, match="'pink' is not a label"):
        con.sql("UPDATE t SET c = 'pink'")
    with tiledb.open(path) as A:
        got = A.query(return_arrow=True).df[:].sort_by("x").to_pylist()
    assert [(r["x"], r["c"], r["n"]) for r in got] == [(1, "red", 0.25), (2, "red", 5.5),
                                                       (3, "green", 6.0)]


def test_update_after_writes_stamped_ahead_of_the_clock_is_refused(tmp_path):
    """A fragment whose range ends an hour ahead: the UPDATE would have to wait an hour."""
    from tdbsql.errors import OperationalError
    from tdbsql.format.names import now_ms
    from tdbsql.storage.writer import write_fragment

    path = str(tmp_path / "f")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 99), tile=10, dtype=np.int64))
    tiledb.Array.create(path, tiledb.ArraySchema(domain=dom, sparse=True, attrs=[
        tiledb.Attr("v", dtype=np.int64)]))
    write_fragment(path, tdbsql.open(path).schema, pa.table({"x": [1, 2], "v": [10, 20]}),
                   timestamp_range=(1, now_ms() + 3_600_000))
    con = tdbsql.connect().register("f", path)
    with pytest.raises(OperationalError, match="s ahead of the clock"):
        con.sql("UPDATE f SET v = 0")
    assert len(os.listdir(os.path.join(path, "__fragments"))) == 1


def test_a_failed_update_with_duplicates_loses_nothing(tmp_path):
    """The cells are written (not yet committed) before the delete commit: a value the
    writer refuses stops the UPDATE with every cell in place and no fragment left."""
    path = str(tmp_path / "d")
    dom = tiledb.Domain(tiledb.Dim("k", domain=(0, 9), tile=5, dtype=np.int64))
    tiledb.Array.create(path, tiledb.ArraySchema(domain=dom, sparse=True, allows_duplicates=True,
                                                 attrs=[tiledb.Attr("v", dtype=np.int64)]))
    with tiledb.open(path, "w", timestamp=1) as A:
        A[np.array([1, 1, 2])] = {"v": np.array([10, 11, 20])}
    con = tdbsql.connect().register("a", path)
    with pytest.raises(DataError, match="NULL in a non-nullable field"):
        con.sql("UPDATE a SET v = NULL WHERE k = 1")
    with pytest.raises(UnsupportedSql):  # the delete commit refuses the WHERE
        con.sql("UPDATE a SET v = 0 WHERE v % 2 = 0")
    assert con.sql("SELECT * FROM a ORDER BY ALL").fetchall() == [(1, 10), (1, 11), (2, 20)]
    assert len(os.listdir(os.path.join(path, "__fragments"))) == 1
    assert not any(n.endswith(".del") for n in os.listdir(os.path.join(path, "__commits")))


def test_update_no_where_with_duplicates_and_a_date_dimension(tmp_path):
    path = str(tmp_path / "t")
    dom = tiledb.Domain(tiledb.Dim("t", domain=(np.datetime64("2020-01-01"),
                                                np.datetime64("2030-01-01")),
                                   tile=np.timedelta64(10, "D"), dtype="datetime64[D]"))
    tiledb.Array.create(path, tiledb.ArraySchema(domain=dom, sparse=True, allows_duplicates=True,
                                                 attrs=[tiledb.Attr("v", dtype=np.int64)]))
    with tiledb.open(path, "w", timestamp=1) as A:
        A[np.array(["2021-01-01", "2021-01-01", "2022-05-05"], dtype="datetime64[D]")] = {
            "v": np.array([1, 2, 3])}
    con = tdbsql.connect().register("a", path)
    assert con.sql("UPDATE a SET V = v + 10").fetchall() == [(3,)]  # names in any case
    assert [v for _, v in con.sql("SELECT * FROM a ORDER BY ALL").fetchall()] == [11, 12, 13]
    assert con.sql("UPDATE a SET v = 0 WHERE T > '2021-06-01'").fetchall() == [(1,)]
    assert [v for _, v in con.sql("SELECT * FROM a ORDER BY ALL").fetchall()] == [11, 12, 0]


def test_subqueries_as_set_values_match_duckdb(tmp_path):
    pair = _Pair(_sparse(str(tmp_path / "a")), ["v", "d"])
    pair.both("UPDATE a SET v = (SELECT max(v) FROM a) WHERE k < 3")
    pair.both("UPDATE a SET v = (SELECT max(b.v) FROM a AS b WHERE b.k < a.k) WHERE k >= 11")
    dense = _Pair(_dense(str(tmp_path / "d")), ["v", "t"])
    dense.both("UPDATE a SET v = (SELECT min(v) FROM a) WHERE r = 1 AND c = 1")


def test_update_refusals_as_duckdb(tmp_path):
    path = _sparse(str(tmp_path / "a"))
    con = tdbsql.connect().register("a", path)
    for sql, error, message in [
            ("UPDATE a SET v = sum(v)", SqlError, "aggregate functions are not allowed"),
            ("UPDATE a SET v = row_number() OVER ()", SqlError, "window functions are not"),
            ("UPDATE a SET v = DEFAULT", UnsupportedSql, "DEFAULT is not supported")]:
        with pytest.raises(error, match=message):
            con.sql(sql)
    duck = duckdb.connect()
    duck.sql("CREATE TABLE a (k INTEGER, v BIGINT)")
    for sql in ("UPDATE a SET v = sum(v)", "UPDATE a SET v = row_number() OVER ()"):
        with pytest.raises(duckdb.Error):
            duck.sql(sql)


def test_dense_box_with_cells_no_label_can_hold_is_refused(tmp_path):
    from tdbsql import schema as S
    from tdbsql.storage.writer import create, write

    path = str(tmp_path / "e")
    create(path, S.Schema([S.Dim("x", "int64", (0, 9), 10)],
                          [S.Attr("v", "int32"), S.Attr("c", "int8", enumeration="colour")],
                          enumerations=[S.Enumeration("colour", ["red", "green", "blue"])],
                          sparse=False))
    write(path, {"v": np.array([1, 2], np.int32), "c": pa.array(["red", "blue"])},
          subarray=[(0, 1)])
    write(path, {"v": np.array([5, 6], np.int32), "c": pa.array(["green", "red"])},
          subarray=[(5, 6)])
    con = tdbsql.connect().register("a", path)
    before = con.sql("SELECT * FROM a ORDER BY x").fetchall()
    with pytest.raises(UnsupportedSql, match="attribute 'c' hold no value"):
        con.sql("UPDATE a SET v = v + 100 WHERE x IN (0, 5)")
    assert con.sql("UPDATE a SET v = v + 100 WHERE x IN (0, 1)").fetchall() == [(2,)]
    after = con.sql("SELECT * FROM a ORDER BY x").fetchall()
    assert after[2:] == before[2:] and [r[1] for r in after[:2]] == [101, 102]


def test_cells_not_utf8_are_written_back_as_they_are(tmp_path):
    path = str(tmp_path / "u")
    dom = tiledb.Domain(tiledb.Dim("k", domain=(0, 9), tile=5, dtype=np.int64))
    tiledb.Array.create(path, tiledb.ArraySchema(domain=dom, sparse=True, attrs=[
        tiledb.Attr("v", dtype=np.int64), tiledb.Attr("s", dtype="ascii", var=True)]))
    with tiledb.open(path, "w", timestamp=1) as A:
        A[np.array([1, 2])] = {"v": np.array([10, 20]),
                               "s": np.array([b"caf\xe9", b"ok"], dtype=object)}
    con = tdbsql.connect().register("a", path)
    assert con.sql("UPDATE a SET v = 0 WHERE k = 1").fetchall() == [(1,)]
    with tiledb.open(path) as A:
        got = A[:]
    assert got["v"].tolist() == [0, 20] and got["s"].tolist() == [b"caf\xe9", b"ok"]
