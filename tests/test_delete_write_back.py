"""DELETE whose condition is NULL, or compares a NaN, on some cells: tdbsql writes the delete
commit and writes back the cells SQL keeps but the commit removes.  What ``tiledb`` and tdbsql
read afterwards is compared with DuckDB running the same DELETE on the same rows, every column
(NULLs, NaNs, strings) included; time travel around the delete is compared with ``tiledb``."""

from __future__ import annotations

import math
import os

import duckdb
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from history_helpers import assert_same, sorted_rows, tiledb
import tdbsql
from tdbsql import schema as S
from tdbsql.errors import SqlError, UnsupportedSql
from tdbsql.storage.array import Array
from tdbsql.storage.delete_write_back import judge, write_back
from tdbsql.storage.delete_writer import parse_condition
from tdbsql.storage.writer import create, delete, write

COLUMNS = ["x", "n", "f", "s", "i"]


def _create(path: str, dups: bool = False, key=None) -> None:
    create(path, S.Schema([S.Dim("x", "int64", (0, 999), 10)],
                          [S.Attr("n", "float64", nullable=True), S.Attr("f", "float32"),
                           S.Attr("s", "utf8", nullable=True), S.Attr("i", "int32", nullable=True)],
                          allows_duplicates=dups), key=key)


def _rows(xs, n, f, s, i) -> pa.Table:
    return pa.table({"x": pa.array(xs, pa.int64()), "n": pa.array(n, pa.float64()),
                     "f": pa.array(f, pa.float32()), "s": pa.array(s, pa.string()),
                     "i": pa.array(i, pa.int32())})


def _sample() -> pa.Table:
    xs = list(range(12))
    return _rows(xs, [None if x % 3 == 0 else (math.nan if x == 4 else x * 1.5) for x in xs],
                 [math.nan if x % 4 == 1 else x / 2 for x in xs],
                 [None if x % 5 == 0 else f"v{x}" for x in xs],
                 [None if x % 2 else x for x in xs])


def _comparable(rows: dict[str, list]) -> list[tuple]:
    """Rows as tuples, NaN as a string so that it equals itself."""
    fix = [[("NaN" if isinstance(v, float) and math.isnan(v) else v) for v in rows[c]]
           for c in COLUMNS]
    return list(zip(*fix))


def _duckdb_after(source: pa.Table, where: str) -> list[tuple]:
    con = duckdb.connect()
    con.register("src", source)
    con.sql("CREATE TABLE t AS SELECT * FROM src")
    con.sql(f"DELETE FROM t WHERE {where}")
    return _comparable(sorted_rows(con.sql("SELECT * FROM t").to_arrow_table(), ["x"]))


def _tiledb_rows(path: str, timestamp=None) -> list[tuple]:
    with tiledb.open(path, timestamp=timestamp) as A:
        table = A.query(return_arrow=True).df[:]
    return _comparable(sorted_rows(table.select(COLUMNS), ["x"]))


def _tdbsql_rows(path: str, timestamp=None) -> list[tuple]:
    return _comparable(sorted_rows(tdbsql.query("SELECT * FROM array", path,
                                                 timestamp=timestamp), ["x"]))


def _check_delete(path: str, source: pa.Table, where: str, t: int) -> None:
    """DELETE at ``t``; tiledb and tdbsql read DuckDB's rows from ``t + 1`` on, the rows
    before it until ``t - 1``, and agree with each other at ``t`` itself."""
    before = _tdbsql_rows(path)
    commit = delete(path, where, timestamp=t)
    want = _duckdb_after(source, where)
    assert commit.deleted == len(before) - len(want), where  # DuckDB's Count
    assert _tiledb_rows(path) == want, where
    assert _tdbsql_rows(path) == want, where
    assert _tiledb_rows(path, t + 1) == _tdbsql_rows(path, t + 1) == want
    assert _tiledb_rows(path, t - 1) == _tdbsql_rows(path, t - 1) == before
    assert _tiledb_rows(path, t) == _tdbsql_rows(path, t)


WHERES = ["n > 4", "NOT (n = 3)", "n IN (1.5, 3) OR x = 99", "i < 2 OR n > 100", "f < 2",
          "f >= 2", "f <> 0.5", "NOT (f IN (0, 1))", "s < 'v5' AND i > 2", "s = 'v7' OR f > 3",
          "n BETWEEN 2 AND 9 AND NOT (i = 4)", "x < 3 OR (x IN (5, 7) AND n > 4)",
          "n IS NULL", "n IS NOT NULL", "s IS NULL OR f < 2", "NOT (i IS NULL) AND n > 4"]


@pytest.mark.parametrize("where", WHERES)
def test_delete_keeps_what_sql_keeps(tmp_path, where):
    path = str(tmp_path / "a")
    _create(path)
    source = _sample()
    write(path, source, timestamp=10)
    _check_delete(path, source, where, 20)


def test_delete_through_sql_at_now(tmp_path):
    """The default timestamp: a read right after the DELETE already sees the cells written
    back (the commit waits for the clock to pass its millisecond)."""
    path = str(tmp_path / "a")
    _create(path)
    source = _sample()
    write(path, source, timestamp=10)
    con = tdbsql.connect().register("t", path)
    oracle = duckdb.connect()
    oracle.register("src", source)
    oracle.sql("CREATE TABLE t AS SELECT * FROM src")
    for where in ("n > 4", "f < 2", "s IS NULL"):
        got = con.sql(f"DELETE FROM t WHERE {where}").arrow()
        assert got.equals(oracle.sql(f"DELETE FROM t WHERE {where}").to_arrow_table()), where
        want = _comparable(sorted_rows(oracle.sql("SELECT * FROM t").to_arrow_table(), ["x"]))
        assert _tiledb_rows(path) == _tdbsql_rows(path) == want
    with tiledb.open(path) as A:  # n NULL on 0, 3, 6, 9 (0, 3 gone by f < 2); f NaN on 1, 9
        assert sorted(A.multi_index[0:999]["x"].tolist()) == [1, 6, 9]  # s NULL on 0, 5, 10


def test_the_write_back_alone_changes_nothing(tmp_path):
    """The copies come first: should the delete commit never be written, the array reads as
    before (a copy is a newer version of the same cell)."""
    path = str(tmp_path / "a")
    _create(path)
    write(path, _sample(), timestamp=10)
    before = _tiledb_rows(path)
    array = Array(path)
    fields = {f.name: f for f in array.schema.attributes + array.schema.dimensions}
    judged = judge(array, parse_condition("n < 4", fields), 20)
    assert judged.deleted == 2  # n < 4 on x = 1, 2
    cells = judged.kept_at_risk  # n NULL on 0, 3, 6, 9; NaN (not < 4 in SQL) on 4
    assert cells["x"].values.tolist() == [0, 3, 4, 6, 9]
    write_back(array, cells, 20)
    assert _tiledb_rows(path) == _tdbsql_rows(path) == before
    assert len(os.listdir(os.path.join(path, "__fragments"))) == 2


def test_cells_written_after_the_delete_are_not_touched(tmp_path):
    path = str(tmp_path / "a")
    _create(path)
    source = _sample()
    write(path, source, timestamp=10)
    delete(path, "n > 4", timestamp=20)
    later = _rows([100, 101], [None, 50.0], [1.0, 2.0], ["a", None], [None, 1])
    write(path, later, timestamp=30)
    want = _duckdb_after(source, "n > 4") + _comparable(sorted_rows(later, ["x"]))
    assert _tiledb_rows(path) == _tdbsql_rows(path) == want
    for window in (19, 20, 21, 30, (21, 30)):
        assert_same(path, window)


def test_encrypted_array(tmp_path):
    key = b"0123456789abcdef0123456789abcdef"
    path = str(tmp_path / "a")
    _create(path, key=key)
    write(path, _sample(), timestamp=10, key=key)
    delete(path, "n < 4", timestamp=20, key=key)
    cfg = tiledb.Config({"sm.encryption_type": "AES_256_GCM", "sm.encryption_key": key.decode()})
    with tiledb.open(path, ctx=tiledb.Ctx(cfg)) as A:
        got = _comparable(sorted_rows(A.query(return_arrow=True).df[:].select(COLUMNS), ["x"]))
    assert got == _duckdb_after(_sample(), "n < 4")
    assert len(got) == 10  # n < 4 is TRUE on x = 1, 2 only


def test_refused_on_an_array_with_duplicates(tmp_path):
    path = str(tmp_path / "a")
    _create(path, dups=True)
    write(path, _sample(), timestamp=10)
    listing = sorted(os.listdir(os.path.join(path, "__commits")))
    with pytest.raises(UnsupportedSql, match=r"NULL .* on 4 cell\(s\).*allows duplicates"):
        delete(path, "n > 4", timestamp=20)
    assert sorted(os.listdir(os.path.join(path, "__commits"))) == listing
    delete(path, "x < 2", timestamp=20)  # nothing compared can be NULL or NaN: fine
    assert _tiledb_rows(path) == _tdbsql_rows(path) == _duckdb_after(_sample(), "x < 2")


def test_refused_next_to_a_fragment_of_the_next_millisecond(tmp_path):
    """A fragment already at t + 1 would tie with the cells written back."""
    path = str(tmp_path / "a")
    _create(path)
    write(path, _sample(), timestamp=10)
    write(path, _rows([500], [1.0], [1.0], ["z"], [1]), timestamp=21)
    with pytest.raises(UnsupportedSql, match=r"fragment __21_21_.*milliseconds 20 and 21"):
        delete(path, "n > 4", timestamp=20)
    delete(path, "n > 4", timestamp=21)  # the fragment at 21 is then older: fine
    source = pa.concat_tables([_sample(), _rows([500], [1.0], [1.0], ["z"], [1])])
    assert _tiledb_rows(path) == _tdbsql_rows(path) == _duckdb_after(source, "n > 4")


_values = st.one_of(st.none(), st.just(math.nan), st.integers(-3, 3).map(float))
_ops = st.sampled_from(["<", "<=", ">", ">=", "=", "<>"])
_leaf = st.one_of(
    st.builds(lambda c, op, v: f"{c} {op} {v}", st.sampled_from(["n", "f", "i"]), _ops,
              st.integers(-3, 3)),
    st.builds(lambda c, test: f"{c} {test}", st.sampled_from(["n", "i", "s"]),
              st.sampled_from(["IS NULL", "IS NOT NULL"])),
    st.builds(lambda c, vs: f"{c} IN ({', '.join(map(str, vs))})", st.sampled_from(["n", "i"]),
              st.lists(st.integers(-3, 3), min_size=1, max_size=3)))
_condition = st.recursive(_leaf, lambda inner: st.one_of(
    st.builds(lambda a, b: f"({a} AND {b})", inner, inner),
    st.builds(lambda a, b: f"({a} OR {b})", inner, inner),
    st.builds(lambda a: f"NOT ({a})", inner)), max_leaves=4)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(cells=st.lists(st.tuples(_values, _values.filter(lambda v: v is not None),
                                st.one_of(st.none(), st.integers(-3, 3))),
                      min_size=1, max_size=12),
       where=_condition)
def test_random_null_and_nan_patterns(tmp_path_factory, cells, where):
    path = str(tmp_path_factory.mktemp("h") / "a")
    _create(path)
    xs = list(range(len(cells)))
    source = _rows(xs, [c[0] for c in cells], [c[1] for c in cells],
                   [None if x % 3 == 0 else f"v{x}" for x in xs], [c[2] for c in cells])
    write(path, source, timestamp=10)
    _check_delete(path, source, where, 20)


@pytest.mark.parametrize("where", ["s <= '1970-01-01 00:00:01.5' OR n > 4",
                                   "NOT (s > '1970-01-01 00:00:01.5') AND NOT (n < 0)",
                                   "s = '1970-01-01 00:00:02.4' OR n IN (1.5, 3)"])
def test_what_sql_keeps_is_judged_as_duckdb_casts_constants(tmp_path, where):
    """The cells written back are those on which the condition is not TRUE as DuckDB sees it
    (here: the string rounded to the TIMESTAMP_S it is compared with), not as a re-parsed
    SQL text would be evaluated."""
    path = str(tmp_path / "a")
    create(path, S.Schema([S.Dim("x", "int64", (0, 99), 10)],
                          [S.Attr("s", "datetime64[s]"), S.Attr("n", "float64", nullable=True)]))
    source = pa.table({"x": pa.array(range(6), pa.int64()),
                       "s": pa.array([0, 1, 2, 3, 2, 1], pa.timestamp("s")),
                       "n": pa.array([None, None, None, 1.5, math.nan, 7.0])})
    write(path, source, timestamp=10)
    delete(path, where, timestamp=20)
    oracle = duckdb.connect()
    oracle.register("src", source)
    want = [r[0] for r in oracle.sql(f"SELECT x FROM src WHERE ({where}) IS NOT TRUE ORDER BY x")
            .fetchall()]
    with tiledb.open(path) as A:
        assert sorted(A[:]["x"].tolist()) == want
    assert tdbsql.query("SELECT x FROM array ORDER BY x", path).column("x").to_pylist() == want


def test_cells_written_back_keep_lists_and_fixed_size_cells(tmp_path):
    path = str(tmp_path / "a")
    create(path, S.Schema([S.Dim("x", "int64", (0, 99), 10)],
                          [S.Attr("n", "float64", nullable=True), S.Attr("v", "int32", var=True),
                           S.Attr("p", "float32", cell_val_num=2),
                           S.Attr("c", "ascii", cell_val_num=3)]))
    source = pa.table({"x": pa.array([0, 1, 2, 3], pa.int64()),
                       "n": pa.array([None, 1.0, None, 5.0]),
                       "v": pa.array([[1, 2], [3], [], [4, 5, 6]], pa.list_(pa.int32())),
                       "p": pa.array([[1, 2], [3, 4], [5, 6], [7, 8]], pa.list_(pa.float32(), 2)),
                       "c": pa.array([b"abc", b"de\x00", b"x\xffz", b"qrs"], pa.binary(3))})
    write(path, source, timestamp=10)
    before = tdbsql.query("SELECT * FROM array WHERE x <> 3 ORDER BY x", path)
    delete(path, "n > 2", timestamp=20)
    assert tdbsql.query("SELECT * FROM array ORDER BY x", path).equals(before)
    with tiledb.open(path) as A:  # tiledb cannot read p or c into numpy
        got = A.query(attrs=["v"]).multi_index[0:99]
    assert got["x"].tolist() == [0, 1, 2]
    assert [list(v) for v in got["v"]] == [[1, 2], [3], []]


@pytest.mark.parametrize("where", ["v > 1.5", "p = 1", "v IN (5)", "p BETWEEN 0 AND 9",
                                   "x = 1 OR v <> 2"])
def test_list_cells_cannot_be_compared(tmp_path, where):
    """A number-list cell compared with a number: DuckDB refuses it (``DOUBLE[] > 1.5``), and a
    delete commit comparing a var-sized number makes the array unreadable to ``tiledb``."""
    path = str(tmp_path / "a")
    create(path, S.Schema([S.Dim("x", "int64", (0, 99), 10)],
                          [S.Attr("v", "float64", var=True, nullable=True),
                           S.Attr("p", "float32", cell_val_num=2)]))
    source = pa.table({"x": pa.array([0, 1, 2], pa.int64()),
                       "v": pa.array([[1.0, 2.0], [5.0], None], pa.list_(pa.float64())),
                       "p": pa.array([[1, 2], [3, 4], [5, 6]], pa.list_(pa.float32(), 2))})
    write(path, source, timestamp=10)
    oracle = duckdb.connect()
    oracle.register("t", source)
    with pytest.raises((duckdb.BinderException, duckdb.ConversionException)):
        oracle.sql(f"SELECT * FROM t WHERE {where}").fetchall()
    with pytest.raises(SqlError, match="list of FLOAT.. values per cell"):
        tdbsql.connect().register("t", path).sql(f"DELETE FROM t WHERE {where}")
    assert not [n for n in os.listdir(os.path.join(path, "__commits")) if n.endswith(".del")]
    with tiledb.open(path) as A:
        assert sorted(A.query(attrs=["v"]).multi_index[0:99]["x"].tolist()) == [0, 1, 2]


@pytest.mark.parametrize("where", ["b = 1", "b <> 7 OR x = 1", "x = 2 AND b = 7", "b IS NULL",
                                   "b > 0"])
def test_an_attribute_added_after_a_fragment(tmp_path, where):
    """TileDB's delete commit removes every cell of a fragment lacking a tested attribute
    (added by schema evolution), where SQL compares its fill value: those cells SQL keeps are
    written back."""
    import numpy as np
    from history_helpers import assert_deleted_as_duckdb

    path = str(tmp_path / "a")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 99), tile=10, dtype=np.int64))
    tiledb.Array.create(path, tiledb.ArraySchema(domain=dom, sparse=True, attrs=[
        tiledb.Attr("a", dtype=np.int32)]))
    with tiledb.open(path, "w") as A:
        A[np.array([1, 2])] = {"a": np.array([1, 2], dtype=np.int32)}
    evolution = tiledb.ArraySchemaEvolution()
    evolution.add_attribute(tiledb.Attr("b", dtype=np.int32, fill=7))
    evolution.array_evolve(path)
    with tiledb.open(path, "w") as A:
        A[np.array([3, 4])] = {"a": np.array([3, 4], dtype=np.int32),
                               "b": np.array([1, 7], dtype=np.int32)}
    source = tdbsql.query("SELECT * FROM array", path)
    commit = delete(path, where)
    assert_deleted_as_duckdb(path, source, where)
    assert commit.deleted == source.num_rows - tdbsql.query("SELECT * FROM array", path).num_rows
    with pytest.raises(SqlError, match="column 'b' was added to the array later"):
        delete(path, where, timestamp=1)  # before b existed: SQL knows no column b


@pytest.mark.parametrize("where,kept", [("s IN ('')", [2, 3]), ("s NOT IN ('')", [1, 3]),
                                        ("s IN ('', 'a')", [3])])
def test_a_set_of_only_the_empty_string_stays_readable(tmp_path, where, kept):
    """TileDB refuses to read a set member list without data: ``IN ('')`` is written as the
    comparison with ''; the array reads in ``tiledb`` and tdbsql as DuckDB keeps it."""
    path = str(tmp_path / "a")
    create(path, S.Schema([S.Dim("x", "int64", (0, 99), 10)],
                          [S.Attr("s", "utf8", nullable=True)]))
    rows = pa.table({"x": pa.array([1, 2, 3], pa.int64()), "s": pa.array(["", "a", None])})
    write(path, rows, timestamp=10)
    con = duckdb.connect()
    con.register("src", rows)
    con.sql("CREATE TABLE t AS SELECT * FROM src")
    count = con.execute(f"DELETE FROM t WHERE {where}").fetchone()[0]
    assert tdbsql.connect().register("t", path).sql(
        f"DELETE FROM t WHERE {where}").fetchall() == [(count,)]
    with tiledb.open(path) as A:
        assert sorted(A[:]["x"].tolist()) == kept
    assert sorted(tdbsql.query("SELECT x FROM array", path).column("x").to_pylist()) == kept


def _evolved(tmp_path, change):
    path = str(tmp_path / "a")
    create(path, S.Schema([S.Dim("x", "int64", (0, 99), 10)],
                          [S.Attr("n", "float64", nullable=True), S.Attr("z", "int32")]))
    write(path, pa.table({"x": pa.array([1, 2, 3], pa.int64()),
                          "n": pa.array([1.0, None, float("nan")]),
                          "z": pa.array([7, 8, 9], pa.int32())}), timestamp=10)
    evolution = tiledb.ArraySchemaEvolution(tiledb.default_ctx())
    change(evolution)
    evolution.array_evolve(path)
    return path


def test_cells_written_back_before_an_added_attribute_hold_its_fill(tmp_path):
    """A delete at a time before an attribute was added writes the kept cells back in the
    current schema, the new attribute at its fill value, as they read before."""
    import numpy as np

    path = _evolved(tmp_path, lambda e: e.add_attribute(
        tiledb.Attr("m", dtype=np.int32, nullable=True)))
    assert delete(path, "n < 3", timestamp=15).deleted == 1
    for read in (lambda: tdbsql.query("SELECT * FROM array", path).to_pydict(),
                 lambda: tiledb.open(path).query(return_arrow=True).df[:].to_pydict()):
        got = read()
        assert got["x"] == [2, 3] and got["m"] == [None, None] and got["z"] == [8, 9]


def test_a_write_back_past_a_dropped_attribute_is_refused_before_writing(tmp_path):
    path = _evolved(tmp_path, lambda e: e.drop_attribute("z"))
    before = sorted(os.listdir(os.path.join(path, "__commits")))
    with pytest.raises(UnsupportedSql, match="'z' of the schema at timestamp 15 was dropped"):
        delete(path, "n < 3", timestamp=15)
    assert sorted(os.listdir(os.path.join(path, "__commits"))) == before
    assert tdbsql.query("SELECT x FROM array", path).column("x").to_pylist() == [1, 2, 3]
