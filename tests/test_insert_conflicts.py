"""INSERT OR REPLACE / OR IGNORE / ON CONFLICT DO NOTHING | DO UPDATE, and INSERT ... BY NAME:
each statement run on a sparse array (its key: its dimensions) and on a DuckDB table holding
the same rows with a PRIMARY KEY on those columns; the answers compared (RETURNING as
multisets), then every row, and the cells ``tiledb`` reads back."""

from __future__ import annotations

import numpy as np
import pytest

tiledb = pytest.importorskip("tiledb")
duckdb = pytest.importorskip("duckdb")
from hypothesis import given, settings, strategies as st  # noqa: E402

import tdbsql  # noqa: E402
from tdbsql.errors import SqlError, UnsupportedSql  # noqa: E402
from test_update import _Pair, _dense, _sparse  # noqa: E402


class _KeyedPair(_Pair):
    """The array as table ``a`` in tdbsql and the same rows in DuckDB with PRIMARY KEY (k, s)."""

    def __init__(self, path: str):
        super().__init__(path, ["v", "d"])
        self.duck.sql("ALTER TABLE a ADD PRIMARY KEY (k, s)")

    def both(self, sql: str):
        ours = self.con.sql(sql).fetchall()
        assert sorted(ours, key=repr) == sorted(self.duck.sql(sql).fetchall(), key=repr), sql
        assert self.rows() == self.duck_rows() == self.tiledb_rows(), sql
        return ours

    def tiledb_rows(self):
        with tiledb.open(self.path) as A:
            cells = A.query(return_arrow=True).df[:]
        return sorted(tuple(row.values()) for row in cells.to_pylist())


def _fragments(path: str) -> int:
    return len(tiledb.array_fragments(path))


ROW = "(1, 's1', 100, 0.5, 'new', DATE '2025-01-01')"  # k 1 holds a cell (s is k % 3)
STATEMENTS = [
    f"INSERT OR REPLACE INTO a VALUES {ROW}, (40, 's1', 4, NULL, NULL, '2025-01-04')",
    "INSERT OR IGNORE INTO a VALUES (2, 's2', -1, -1, 'x', '2025-02-02'), "
    "(41, 's2', 41, NULL, 'y', '2025-02-03') RETURNING *",
    f"INSERT INTO a VALUES {ROW} ON CONFLICT DO NOTHING RETURNING k",
    "INSERT INTO a VALUES (3, 's0', 7, 1.5, 'upd', '2025-03-03'), "
    "(42, 's0', 7, 1.5, 'ins', '2025-03-03') "
    "ON CONFLICT (k, s) DO UPDATE SET v = excluded.v + a.v, t = t || excluded.t RETURNING *",
    "INSERT INTO a AS x VALUES (4, 's1', 2, 2, 'w', '2025-04-04'), (5, 's2', 2, 2, 'w', "
    "'2025-04-04') ON CONFLICT (S, K) DO UPDATE SET f = excluded.f * 10 WHERE x.v > 35 "
    "RETURNING x.k, f",
    "INSERT OR REPLACE INTO a (k, s, v, d) VALUES (6, 's0', 66, '2025-06-06'), "
    "(43, 's1', 43, '2025-06-07') RETURNING *",  # t and f of k 6 stay; k 43's are NULL
    "INSERT INTO a (d, s, k, v) VALUES ('2025-07-07', 's1', 7, 0) "
    "ON CONFLICT DO UPDATE SET t = excluded.t, v = 2.5 RETURNING *",  # excluded.t is NULL
    "INSERT INTO a VALUES (8, 's2', 1, 1, 'a', '2025-08-08'), (8, 's2', 2, 2, 'b', "
    "'2025-08-09'), (44, 's2', 1, 1, 'a', '2025-08-08'), (44, 's2', 2, 2, 'b', '2025-08-09') "
    "ON CONFLICT DO UPDATE SET v = excluded.v",  # the first row of a key, as DuckDB 2.0
    "INSERT OR IGNORE INTO a SELECT k + 1, s, v, f, t, d FROM a WHERE k < 12 RETURNING k, s",
    "INSERT INTO a SELECT k, s, -v, f, t, d FROM a WHERE k > 40 "
    "ON CONFLICT DO UPDATE SET v = excluded.v WHERE excluded.v < -42",
    "INSERT OR REPLACE INTO a BY NAME SELECT 'by name' AS T, 9 AS k, 's0' AS s, 9 AS v, "
    "DATE '2025-09-09' AS d RETURNING *",  # f of k 9 stays
    "INSERT INTO a BY NAME SELECT 45 AS k, 's0' AS s, 45 AS v, DATE '2025-09-10' AS d "
    "ON CONFLICT DO NOTHING",
    "INSERT OR IGNORE INTO a VALUES (999, 's0', 1, 1, 'x', '2025-01-01'), "
    "(10, 's1', 1, 1, 'x', '2025-01-01')",
    "INSERT OR REPLACE INTO a (k, s, v, d) SELECT k, s, v, d FROM a WHERE k = 999",
    "INSERT OR REPLACE INTO a (k, s, t) VALUES (1, 's1', 'only t') RETURNING *",  # v, d kept
]


def test_conflicts_match_duckdb_with_a_primary_key(tmp_path):
    pair = _KeyedPair(_sparse(str(tmp_path / "a")))
    fragments = _fragments(pair.path)
    answers = [pair.both(sql) for sql in STATEMENTS]
    assert answers[0] == [(2,)] and answers[2] == [] and answers[7] == [(2,)]
    updated, inserted = sorted(answers[3])  # the cell's own f and d stay
    assert updated[:3] + updated[4:5] == (3, "s0", 27, "text 2upd")
    assert inserted == (42, "s0", 7, 1.5, "ins", np.datetime64("2025-03-03").item())
    assert answers[6][0][2] == 3  # SET v = 2.5: 3, as DuckDB casts a DECIMAL
    written = 1 + sum(1 for answer in answers if answer not in ([(0,)], []))
    assert _fragments(pair.path) == fragments + written - 1  # one fragment a statement


def test_a_deleted_cell_does_not_conflict_and_time_travel_sees_each_version(tmp_path):
    path = _sparse(str(tmp_path / "a"))
    pair = _KeyedPair(path)
    pair.both("DELETE FROM a WHERE k = 2")
    assert pair.both("INSERT INTO a VALUES (2, 's2', 5, NULL, NULL, '2025-01-01') "
                     "ON CONFLICT DO UPDATE SET v = 0 RETURNING v") == [(5,)]
    pair.both("INSERT OR REPLACE INTO a VALUES (2, 's2', 6, NULL, NULL, '2025-01-01')")
    stamps = sorted(f.timestamp_range[1] for f in tiledb.array_fragments(path))
    con = tdbsql.connect()
    versions = [con.register(f"at{i}", path, timestamp=stamp).sql(
        f"SELECT v FROM at{i} WHERE k = 2").fetchall() for i, stamp in enumerate(stamps)]
    assert versions == [[(10,)], [(5,)], [(6,)]]
    old = tdbsql.connect().register("old", path, timestamp=1)  # sees k 2 as written first
    assert old.sql("INSERT INTO old VALUES (2, 's2', 7, NULL, NULL, '2025-01-01') "
                   "ON CONFLICT DO NOTHING").fetchall() == [(0,)]


def test_the_existing_cells_are_read_pruned_to_the_inserted_keys(tmp_path, monkeypatch):
    pair = _KeyedPair(_sparse(str(tmp_path / "a")))
    import tdbsql.insert_conflicts as conflicts

    reads = []
    original = conflicts._values_test
    monkeypatch.setattr(conflicts, "_values_test", lambda *args: reads.append(
        original(*args).sql("duckdb")) or original(*args))
    pair.both("INSERT OR IGNORE INTO a VALUES (1, 's1', 1, 1, 'x', '2025-01-01'), "
              "(30, 's0', 1, 1, 'x', '2025-01-01')")
    assert reads == ['"a"."k" IN (1, 30)', '"a"."s" IN (\'s1\', \'s0\')']
    monkeypatch.setattr(conflicts, "IN_LIST_MAX", 1)
    reads.clear()
    pair.both("INSERT OR IGNORE INTO a SELECT k + 100, s, v, f, t, d FROM a WHERE k < 5")
    assert reads[0] == '"a"."k" BETWEEN 101 AND 104'


def test_refusals_write_nothing(tmp_path):
    pair = _KeyedPair(_sparse(str(tmp_path / "a")))
    fragments, before = _fragments(pair.path), pair.rows()
    for sql, error, message in [
            (f"INSERT INTO a VALUES {ROW} ON CONFLICT (k) DO NOTHING", SqlError,
             "not referenced by a UNIQUE/PRIMARY KEY"),
            (f"INSERT INTO a VALUES {ROW} ON CONFLICT (k, s, v) DO NOTHING", SqlError,
             "not referenced by a UNIQUE/PRIMARY KEY"),
            (f"INSERT INTO a VALUES {ROW} ON CONFLICT DO UPDATE SET v = excluded.nope",
             SqlError, 'does not have a column named "nope"'),
            (f"INSERT INTO a VALUES {ROW} ON CONFLICT DO UPDATE SET v = (SELECT 1)", SqlError,
             "cannot contain a subquery"),
            (f"INSERT INTO a VALUES {ROW} ON CONFLICT DO UPDATE SET v = 1 WHERE sum(v) > 1",
             SqlError, "aggregate"),
            (f"INSERT INTO a VALUES {ROW} ON CONFLICT DO UPDATE SET v = 1, V = 2", SqlError,
             "twice"),
            (f"INSERT INTO a VALUES {ROW} ON CONFLICT DO UPDATE SET v = 'abc'", SqlError,
             "cannot be stored"),
            (f"INSERT INTO a VALUES {ROW} ON CONFLICT (k, s) WHERE v > 1 DO NOTHING", SqlError,
             "only supported in DO UPDATE"),
            (f"INSERT OR REPLACE INTO a VALUES {ROW} ON CONFLICT DO NOTHING", SqlError,
             "both OR REPLACE|IGNORE and an ON CONFLICT"),
            (f"INSERT INTO a VALUES {ROW} ON CONFLICT DO UPDATE SET a.v = 1", SqlError,
             "qualified"),
            ("INSERT INTO a BY NAME SELECT 1 AS k, 's1' AS s, 1 AS nope", SqlError,
             'does not have a column with name "nope"'),
            ("INSERT INTO a BY NAME SELECT 1 AS k, 's1' AS s, 1 AS v, 2 AS V", SqlError,
             'duplicate column name "V"'),
            (f"INSERT INTO a BY NAME VALUES {ROW}", SqlError, "only be used when inserting "
             "from a SELECT"),
            ("INSERT INTO a (k, s) BY NAME SELECT 1 AS k, 's1' AS s", SqlError, "column list"),
            ("INSERT INTO a BY NAME SELECT 1 AS k, 's1' AS s, 1 AS v, 1 + 1", SqlError,
             r'name "\(1 \+ 1\)"')]:
        with pytest.raises(error, match=message):
            pair.con.sql(sql)
        with pytest.raises(duckdb.Error):
            pair.duck.sql(sql)
    with pytest.raises(SqlError, match="must give a value for attribute 'v'"):  # inserted
        pair.con.sql("INSERT OR REPLACE INTO a (k, s, t) VALUES (1, 's1', 'x'), (50, 's2', 'x')")
    with pytest.raises(UnsupportedSql, match="cannot SET dimension"):
        pair.con.sql(f"INSERT INTO a VALUES {ROW} ON CONFLICT DO UPDATE SET k = 2")
    assert pair.rows() == before == pair.duck_rows()
    assert _fragments(pair.path) == fragments


def test_targets_without_a_key_are_refused_by_name(tmp_path):
    con = tdbsql.connect().register("g", _dense(str(tmp_path / "g"))) \
        .register("u", _sparse(str(tmp_path / "u"), dups=True))
    con.sql("CREATE TABLE m AS SELECT 1 AS k, 2 AS v")
    duck = duckdb.connect()
    duck.sql("CREATE TABLE m AS SELECT 1 AS k, 2 AS v")
    row = "(1, 's1', 1, NULL, NULL, DATE '2025-01-01')"
    for sql in [f"INSERT OR IGNORE INTO u VALUES {row}", f"INSERT OR REPLACE INTO u VALUES {row}",
                f"INSERT INTO u VALUES {row} ON CONFLICT DO NOTHING",
                f"INSERT INTO u VALUES {row} ON CONFLICT DO UPDATE SET v = 1"]:
        with pytest.raises(SqlError, match="no UNIQUE/PRIMARY KEY constraints.*duplicates"):
            con.sql(sql)
    with pytest.raises(SqlError, match="not referenced by a UNIQUE/PRIMARY KEY"):
        con.sql(f"INSERT INTO u VALUES {row} ON CONFLICT (k, s) DO NOTHING")
    for sql, message in [("INSERT OR IGNORE INTO m VALUES (1, 3)", "no UNIQUE/PRIMARY KEY"),
                         ("INSERT INTO m VALUES (1, 3) ON CONFLICT (k) DO UPDATE SET v = 3",
                          "not referenced by a UNIQUE/PRIMARY KEY")]:
        with pytest.raises(SqlError, match=message):
            con.sql(sql)
        with pytest.raises(duckdb.BinderException, match=message):
            duck.sql(sql)
    with pytest.raises(UnsupportedSql, match="dense array: every cell of its domain exists"):
        con.sql("INSERT OR REPLACE INTO g VALUES (1, 1, 5, 'x', NULL)")
    assert con.sql("SELECT count(*) FROM u").fetchall() == [(24,)]
    assert con.sql("SELECT * FROM m").fetchall() == [(1, 2)]


def test_insert_by_name_into_arrays_and_tables_in_memory(tmp_path):
    pair = _KeyedPair(_sparse(str(tmp_path / "a")))
    for sql in ["INSERT INTO a BY NAME SELECT DATE '2025-01-01' AS D, 50 AS v, 's2' AS s, "
                "50 AS k",  # streamed, a part at a time
                "INSERT INTO a BY NAME SELECT d, k + 100 AS k, s, v FROM a WHERE k < 4 "
                "RETURNING *",
                "INSERT INTO a BY NAME (SELECT 60 AS k, 's0' AS s, 1 AS v, 'w' AS t, "
                "DATE '2025-01-01' AS d)"]:
        pair.both(sql)
    con = tdbsql.connect()
    con.sql("CREATE TABLE m AS SELECT 1 AS k, 'x' AS t, 2.5 AS f")
    duck = duckdb.connect()
    duck.sql("CREATE TABLE m AS SELECT 1 AS k, 'x' AS t, 2.5 AS f")
    for sql in ["INSERT INTO m BY NAME SELECT 3.5 AS F, 2 AS k",
                "INSERT INTO m BY NAME SELECT 'y' AS t RETURNING *"]:
        assert con.sql(sql).fetchall() == duck.sql(sql).fetchall(), sql
    assert con.sql("SELECT * FROM m").fetchall() == duck.sql("SELECT * FROM m").fetchall()


_KEYS = st.tuples(st.integers(0, 14), st.sampled_from(["s0", "s1", "s2"]))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["REPLACE", "IGNORE", "NOTHING", "UPDATE",
                                           "UPDATE WHERE"]),
                          st.lists(st.tuples(_KEYS, st.integers(-50, 50)), min_size=1,
                                   max_size=5)),
                min_size=1, max_size=4))
def test_random_conflict_statements_match_duckdb(tmp_path_factory, steps):
    pair = _KeyedPair(_sparse(str(tmp_path_factory.mktemp("c") / "a")))
    for kind, rows in steps:
        values = ", ".join(f"({k}, '{s}', {v}, {v / 4}, 't{v}', DATE '2025-01-01' + {k})"
                           for (k, s), v in rows)
        if kind in ("REPLACE", "IGNORE"):
            sql = f"INSERT OR {kind} INTO a VALUES {values} RETURNING *"
        elif kind == "NOTHING":  # by name, from a query
            sql = (f"INSERT INTO a BY NAME SELECT col0 AS k, col1 AS S, col2 AS v, col4 AS t, "
                   f"col5 AS d FROM (VALUES {values}) ON CONFLICT DO NOTHING RETURNING *")
        else:
            where = " WHERE a.v < excluded.v" if kind == "UPDATE WHERE" else ""
            sql = (f"INSERT INTO a VALUES {values} ON CONFLICT (s, k) DO UPDATE SET "
                   f"v = a.v + excluded.v, t = coalesce(t, '') || excluded.t{where} "
                   "RETURNING k, s, v, t")
        pair.both(sql)


def test_a_streamed_insert_resolves_each_part_and_drops_keys_repeated_across_parts(
        tmp_path, monkeypatch):
    import tdbsql.insert_query as insert_query

    monkeypatch.setattr(insert_query, "CHUNK_ROWS", 3)  # parts of 3 rows, merged into one
    pair = _KeyedPair(_sparse(str(tmp_path / "a")))
    fragments = _fragments(pair.path)
    pair.both("INSERT INTO a SELECT k % 7 + 1, s, v * 100 + k, f, t, d FROM a ORDER BY k DESC "
              "ON CONFLICT DO UPDATE SET v = excluded.v WHERE k > 5")
    pair.both("INSERT OR REPLACE INTO a BY NAME SELECT k % 7 + 4 AS k, s, v + 1 AS v, d FROM a "
              "ORDER BY v DESC, k, s")
    pair.both("INSERT OR IGNORE INTO a SELECT k % 5 + 30, s, v, f, t, d FROM a ORDER BY k")
    for sql in ["INSERT INTO a SELECT k % 4 + 1, 's1', v, f, t, d FROM a WHERE k < 13 ORDER BY "
                "k, s ON CONFLICT DO UPDATE SET v = excluded.v + a.v",  # (2, 's1') in parts 1, 2
                "INSERT OR IGNORE INTO a SELECT k % 4 + 40, 's0', v, f, t, d FROM a WHERE k < 13 "
                "ORDER BY k, s"]:
        assert pair.both(sql) == [(4,)]
    assert _fragments(pair.path) == fragments + 5
