"""Seeded random sequences of writes, each statement run on an array and on a DuckDB table
holding the same rows: INSERT (VALUES; SELECT, also from an older version of the array),
UPDATE (SET from subqueries, FROM, WHERE with subqueries and typed date literals), DELETE and
consolidation (with vacuum) in between.  After each statement every row is compared with
DuckDB's, and the array read at each earlier statement's millisecond (``FOR SYSTEM_TIME AS
OF``) with DuckDB's rows then and with ``tiledb`` reading at that timestamp.

Arrays: sparse without and with duplicates (an integer and a string dimension), sparse with
DATE and TIMESTAMP dimensions, dense; attributes with NULLs, Unicode strings, an
enumeration and dates.  An INSERT into an array without duplicates overwrites the cells it
names (newest wins): DuckDB deletes those rows first.  A statement tdbsql refuses as not
supported is skipped on both sides; an error must be an error in DuckDB too."""

from __future__ import annotations

import datetime as dt
import random
import time

import numpy as np
import pytest

tiledb = pytest.importorskip("tiledb")
duckdb = pytest.importorskip("duckdb")

import tdbsql  # noqa: E402
from tdbsql import schema as S  # noqa: E402
from tdbsql.errors import Error, NotSupportedError  # noqa: E402
from tdbsql.storage.consolidate import consolidate  # noqa: E402
from tdbsql.storage.vacuum import vacuum  # noqa: E402
from tdbsql.storage.writer import create  # noqa: E402

WORDS = ["a", "Zoë", "日本", "ß", "", "x y", "😀"]
LABELS = ["red", "grün", "青"]
KEYS = {"sparse": ("k", "s"), "dups": ("k", "s"), "temporal": ("day", "ts"), "dense": ("r", "c")}
KEY_TYPES = {"sparse": "k INTEGER NOT NULL, s VARCHAR NOT NULL",
             "temporal": "day DATE NOT NULL, ts TIMESTAMP NOT NULL",
             "dense": "r BIGINT NOT NULL, c BIGINT NOT NULL"}
KEY_TYPES["dups"] = KEY_TYPES["sparse"]


def _create(kind: str, path: str, rnd: random.Random) -> None:
    if kind == "dense":
        dims = [S.Dim("r", "int64", (1, 12), 4), S.Dim("c", "int64", (1, 9), 3)]
    elif kind == "temporal":
        dims = [S.Dim("day", "datetime64[D]", (np.datetime64("2020-01-01"),
                                               np.datetime64("2030-12-31")), 30),
                S.Dim("ts", "datetime64[ms]", (np.datetime64("2020-01-01T00:00:00"),
                                               np.datetime64("2030-01-01T00:00:00")), 3600000)]
    else:
        dims = [S.Dim("k", "int32", (0, 999), 10), S.Dim("s", "ascii")]
    attrs = [S.Attr("v", "int64"), S.Attr("f", "float64", nullable=True),
             S.Attr("t", "str", nullable=True),
             S.Attr("e", "int8", nullable=True, enumeration="colour")]
    attrs += [] if kind == "dense" else [S.Attr("d", "datetime64[D]")]
    orders = ["row-major", "col-major"] + ([] if kind == "dense" else ["hilbert"])
    create(path, S.Schema(dims, attrs, sparse=kind != "dense", capacity=rnd.choice([4, 100]),
                          cell_order=rnd.choice(orders), allows_duplicates=kind == "dups",
                          enumerations=[S.Enumeration("colour", LABELS)]))


def _literal(v) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    if isinstance(v, dt.datetime):
        return f"TIMESTAMP '{v.isoformat(sep=' ')}'"
    if isinstance(v, dt.date):
        return f"DATE '{v.isoformat()}'"
    return repr(v)


class _Sequence:
    """The array as ``a`` in tdbsql, the same rows as ``a`` in DuckDB, and the history: the
    millisecond after each statement with DuckDB's rows then (also DuckDB table ``h<i>``)."""

    def __init__(self, kind: str, path: str, seed: int):
        self.kind, self.path, self.rnd = kind, path, random.Random(seed)
        _create(kind, path, self.rnd)
        self.con = tdbsql.connect().register("a", path)
        self.duck = duckdb.connect()
        self.duck.sql(f"CREATE TABLE a ({KEY_TYPES[kind]}, v BIGINT NOT NULL, f DOUBLE, "
                      "t VARCHAR, e VARCHAR CHECK (e IN ('red', 'grün', '青'))"
                      + ("" if kind == "dense" else ", d DATE NOT NULL") + ")")
        self.history: list[tuple[int, list]] = []
        self.rewritten = False  # vacuumed or purged: older versions are gone

    # -- values -----------------------------------------------------------------------------

    def _row(self, key) -> list:
        rnd = self.rnd
        row = list(key) + [rnd.randint(-50, 50), rnd.choice([None, 1.5, -2.25, 3.0]),
                           rnd.choice([None] + WORDS), rnd.choice([None] + LABELS)]
        if self.kind != "dense":
            row.append(dt.date(2024, 1, 1) + dt.timedelta(days=rnd.randint(-40, 40)))
        return row

    def _key(self):
        rnd = self.rnd
        if self.kind == "temporal":
            return (dt.date(2024, 1, 1) + dt.timedelta(days=rnd.randint(0, 10)),
                    dt.datetime(2024, 1, 1) + dt.timedelta(seconds=rnd.randint(0, 5) * 7,
                                                           milliseconds=rnd.choice([0, 250])))
        return (rnd.randint(0, 30), rnd.choice(["s0", "s1", "s2"]))

    def _rows(self, n: int) -> list:
        if self.kind == "dense":  # a rectangle of cells
            r0, c0 = self.rnd.randint(1, 12), self.rnd.randint(1, 9)
            r1, c1 = self.rnd.randint(r0, min(12, r0 + 2)), self.rnd.randint(c0, min(9, c0 + 3))
            return [self._row((r, c)) for r in range(r0, r1 + 1) for c in range(c0, c1 + 1)]
        keys = [self._key() for _ in range(n)]
        if self.kind != "dups":
            keys = list(dict.fromkeys(keys))
        return [self._row(key) for key in keys]

    def _condition(self) -> str:
        rnd = self.rnd
        tests = [f"v {rnd.choice(['<', '>', '=', '<>'])} {rnd.randint(-40, 40)}",
                 f"f {rnd.choice(['<', '>=', '='])} {rnd.choice([0, 1.5, -2])}",
                 f"f IS {rnd.choice(['', 'NOT '])}NULL", "t IS NULL",
                 f"t {rnd.choice(['=', '<', '>='])} {_literal(rnd.choice(WORDS))}",
                 f"e = {_literal(rnd.choice(LABELS))}",
                 f"e IN ('red', {_literal(rnd.choice(LABELS))})"]
        first, second = KEYS[self.kind]
        if self.kind == "dense":
            tests += [f"r {rnd.choice(['<', '>', '='])} {rnd.randint(1, 12)}",
                      f"c IN ({rnd.randint(1, 9)}, {rnd.randint(1, 9)})"]
        elif self.kind == "temporal":
            tests += [f"day >= DATE '2024-01-0{rnd.randint(1, 9)}'",
                      f"ts < TIMESTAMP '2024-01-01 00:00:{rnd.randint(0, 35):02d}'"]
        else:
            tests += [f"k {rnd.choice(['<', '>', '='])} {rnd.randint(0, 30)}",
                      f"s = 's{rnd.randint(0, 2)}'", f"k BETWEEN {rnd.randint(0, 15)} AND 20"]
        if self.kind != "dense":
            tests.append(f"d {rnd.choice(['<', '>='])} DATE '2024-01-{rnd.randint(1, 28):02d}'")
        condition = rnd.choice(tests)
        if rnd.random() < 0.3:
            condition = f"({condition} {rnd.choice(['AND', 'OR'])} {rnd.choice(tests)})"
        return condition

    # -- statements: (tdbsql's, DuckDB's) ---------------------------------------------------

    def _insert(self, body_ours: str, body_duck: str) -> tuple[str, list[str]]:
        if self.kind == "dups":
            return f"INSERT INTO a {body_ours}", [f"INSERT INTO a {body_duck}"]
        same = " AND ".join(f"x.{c} = a.{c}" for c in KEYS[self.kind])
        return f"INSERT INTO a {body_ours}", [
            "CREATE OR REPLACE TEMP TABLE x AS SELECT * FROM a LIMIT 0",
            f"INSERT INTO x {body_duck}",
            f"DELETE FROM a WHERE EXISTS (SELECT 1 FROM x WHERE {same})",
            "INSERT INTO a SELECT * FROM x"]

    def _statement(self) -> tuple[str, list[str]]:
        rnd, kind = self.rnd, self.kind
        r = rnd.random()
        if r < 0.12 and len(self.history) > 1 and not self.rewritten:
            return self._from_the_past()
        if r < 0.3:
            values = _values(self._rows(rnd.randint(1, 5)))
            return self._insert(values, values)
        if r < 0.4:
            if kind == "dense":
                body = f"SELECT r, c, v + 1, f, t, e FROM a WHERE r >= {rnd.randint(1, 12)}"
            elif kind == "temporal":
                body = (f"SELECT day + {rnd.randint(0, 3)}, "
                        f"ts + INTERVAL {rnd.randint(0, 9)} SECOND, -v, f, t, e, d "
                        f"FROM a WHERE {self._condition()}")
            else:  # 7k mod 40 is one to one over the keys 0..39
                body = (f"SELECT (k * 7 + {rnd.randint(0, 20)}) % 40, s, v * 2, f, upper(t), e, "
                        f"d + 3 FROM a WHERE {self._condition()}")
            return self._insert(body, body)
        if r < 0.75 or kind == "dense":
            return (sql := self._update()), [sql]
        return (sql := f"DELETE FROM a WHERE {self._condition()}"), [sql]

    def _update(self) -> str:
        rnd = self.rnd
        choices = {"v": ["v + 1", "-v", "(SELECT max(v) FROM a)", "coalesce(CAST(f AS BIGINT), 7)"],
                   "f": ["NULL", "v / 4", "(SELECT avg(f) FROM a)"],
                   "t": ["upper(t)", "t || 'é'", _literal(rnd.choice(WORDS)),
                         "CAST(v AS VARCHAR)"],
                   "e": ["NULL", "'grün'", "CASE WHEN v > 0 THEN 'red' ELSE '青' END"],
                   "d": ["d + 1", "d + INTERVAL 1 MONTH", "last_day(d)"]}
        if self.kind == "dense":
            del choices["d"]
        columns = rnd.sample(sorted(choices), rnd.randint(1, 2))
        sets = ", ".join(f"{c} = {rnd.choice(choices[c])}" for c in columns)
        first = KEYS[self.kind][0]
        if self.kind != "dups" and rnd.random() < 0.15:
            c = columns[0]
            return (f"UPDATE a SET {c} = u.nv FROM (SELECT {first} AS kk, max({c}) AS nv "
                    f"FROM a GROUP BY {first}) AS u WHERE a.{first} = u.kk + 1")
        where = rnd.choice(["", f" WHERE {self._condition()}", f" WHERE {self._condition()}"])
        if self.kind != "dups" and rnd.random() < 0.2:
            where = f" WHERE {first} IN (SELECT {first} FROM a WHERE {self._condition()})"
        return f"UPDATE a SET {sets}{where}"

    def _from_the_past(self) -> tuple[str, list[str]]:
        """A statement reading the array at an earlier statement's millisecond."""
        rnd = self.rnd
        i = rnd.randrange(len(self.history))
        ours, duck = f"a FOR SYSTEM_TIME AS OF {self.history[i][0]}", f"h{i}"
        if rnd.random() < 0.5:
            where = (f"r BETWEEN {rnd.randint(1, 6)} AND 12" if self.kind == "dense"
                     else self._condition())
            return self._insert(f"SELECT * FROM {ours} WHERE {where}",
                                f"SELECT * FROM {duck} WHERE {where}")
        if self.kind == "dups":  # UPDATE ... FROM is refused with duplicates
            sql = f"UPDATE a SET v = (SELECT count(*) FROM {{}}) WHERE {self._condition()}"
            return sql.format(ours), [sql.format(duck)]
        col = rnd.choice(["v", "f", "t", "e"])
        same = " AND ".join(f"a.{c} = o.{c}" for c in KEYS[self.kind])
        sql = f"UPDATE a SET {col} = o.{col} FROM {{}} AS o WHERE {same}"
        return sql.format(ours), [sql.format(duck)]

    # -- running and checking ---------------------------------------------------------------

    def run(self, steps: int) -> int:
        """Run ``steps`` statements (or consolidations); the number compared."""
        first = self._rows(12) if self.kind != "dense" else [
            self._row((r, c)) for r in range(1, 13) for c in range(1, 10)]
        sql = "INSERT INTO a " + _values(first)
        self.con.sql(sql)
        self.duck.sql(sql)
        self._remember()
        compared = 0
        for _ in range(steps):
            if self.rnd.random() < 0.1:
                self._consolidate()
            else:
                compared += self._both(*self._statement())
            self._check()
            self._remember()
        return compared

    def _both(self, ours_sql: str, duck_sqls: list[str]) -> bool:
        try:
            ours = self.con.sql(ours_sql).fetchall()
        except NotSupportedError:
            return False
        except Error as error:
            with pytest.raises(duckdb.Error):
                for sql in duck_sqls:
                    self.duck.sql(sql)
            return bool(error)
        theirs = None
        for sql in duck_sqls:
            theirs = self.duck.sql(sql)
        if len(duck_sqls) == 1:  # the Count of an UPDATE or DELETE
            assert ours == theirs.fetchall(), ours_sql
        return True

    def _consolidate(self) -> None:
        purge = self.rnd.random() < 0.2
        consolidate(self.path, purge_deleted_cells=purge)
        if purge or self.rnd.random() < 0.4:
            vacuum(self.path)
            self.rewritten = True

    def _check(self) -> None:
        now = self._ours("SELECT * FROM a")
        assert now == _sorted(self.duck.sql("SELECT * FROM a").fetchall())
        assert now == _tiledb_rows(self.path, None, self.kind)
        for ms, rows in self.history:
            then = self._ours(f"SELECT * FROM a FOR SYSTEM_TIME AS OF {ms}")
            assert then == _tiledb_rows(self.path, ms, self.kind), ms
            if not self.rewritten:
                assert then == rows, ms

    def _ours(self, sql: str) -> list:
        return _sorted(self.con.sql(sql).fetchall())

    def _remember(self) -> None:
        time.sleep(0.002)  # the statement's millisecond has passed
        self.duck.sql(f"CREATE TABLE h{len(self.history)} AS SELECT * FROM a")
        self.history.append((time.time_ns() // 1_000_000,
                             _sorted(self.duck.sql("SELECT * FROM a").fetchall())))
        time.sleep(0.002)  # and the next statement comes in a later one


def _values(rows: list) -> str:
    return "VALUES " + ", ".join("(" + ", ".join(_literal(x) for x in row) + ")" for row in rows)


def _sorted(rows) -> list:
    return sorted((tuple(row) for row in rows), key=repr)


def _tiledb_rows(path: str, timestamp, kind: str) -> list:
    """What ``tiledb`` reads, as rows in DuckDB's column order (labels for the enumeration)."""
    with tiledb.open(path, timestamp=timestamp) as A:
        if kind == "dense":
            domain = A.nonempty_domain()
            if domain is None:
                return []
            table = A.query(return_arrow=True, coords=True).df[
                domain[0][0]:domain[0][1], domain[1][0]:domain[1][1]]
        else:
            table = A.query(return_arrow=True).df[:]
    labels = table.column("e").to_pylist()  # a dictionary column reads as its labels
    rows = []
    for row, label in zip(table.to_pylist(), labels):
        row["e"] = label
        rows.append(tuple(v.replace(tzinfo=None) if isinstance(v, dt.datetime) else v
                          for v in row.values()))
    return _sorted(rows)


@pytest.mark.parametrize("kind", sorted(KEYS))
@pytest.mark.parametrize("seed", [1, 2])
def test_statement_sequences_match_duckdb_and_tiledb(tmp_path, kind, seed):
    sequence = _Sequence(kind, str(tmp_path / "a"), seed * 31 + len(kind))
    assert sequence.run(10) >= 5
