"""ORDER BY a stored column LIMIT n reads only the tiles whose bounds can hold the first n
rows (``engine.top_scan``).  Its answers equal the whole read's, row for row (ties too), and
their keys DuckDB's, over overlapping fragments, a delete, time travel, NULLs, NaN and dates;
the EXPLAIN ANALYZE funnel shows the tiles left unread."""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pytest
import tiledb

import tdbsql
from sql_fixtures import oracle_table
from tdbsql.engine import top_scan

N = 3000


@pytest.fixture(scope="module")
def array(tmp_path_factory) -> str:
    uri = str(tmp_path_factory.mktemp("top") / "a")
    dom = tiledb.Domain(tiledb.Dim("id", domain=(0, 100_000), tile=1000, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=50, attrs=[
        tiledb.Attr("x", dtype=np.float64),
        tiledb.Attr("n", dtype=np.int32, nullable=True),
        tiledb.Attr("d", dtype="datetime64[D]"),
        tiledb.Attr("s", dtype=str, var=True),
        tiledb.Attr("g", dtype=np.int64)]))
    rng = np.random.default_rng(11)

    def write(ids, stamp):
        k = len(ids)
        x = np.round(rng.normal(size=k) * 100 + ids / 30, 2)  # trends with id: tiles differ
        x[rng.random(k) < 0.004] = np.nan
        n = rng.integers(-500, 500, k).astype(np.int32)
        with tiledb.open(uri, "w", timestamp=stamp) as A:
            A[ids] = {"x": x, "n": pa.array(n, pa.int32(), mask=rng.random(k) < 0.2),
                      "d": (np.datetime64("2020-01-01") + ids // 3).astype("datetime64[D]"),
                      "s": np.array([f"s{i}" for i in ids], dtype=object),
                      "g": ids // 400}  # ties spanning two tiles
    write(np.arange(N, dtype=np.int64) * 7, 1000)
    write(np.arange(0, N * 7, 13, dtype=np.int64), 2000)  # overlaps: newer cells win
    write(np.arange(N * 7, N * 9, 5, dtype=np.int64), 3000)
    with tiledb.open(uri, "d", timestamp=4000) as A:
        A.query(cond="n < -450").submit()
    return uri


QUERIES = [
    "SELECT id, x FROM t ORDER BY id DESC LIMIT 5",
    "SELECT * FROM t ORDER BY id LIMIT 7 OFFSET 40",
    "SELECT id, x FROM t ORDER BY x DESC LIMIT 10",  # NaN first, from the tiles holding one
    "SELECT id, x FROM t ORDER BY x LIMIT 10",
    "SELECT id, n FROM t ORDER BY n DESC LIMIT 12",  # NULLs last
    "SELECT id, n FROM t ORDER BY n ASC NULLS FIRST LIMIT 12",  # not pruned: NULLs first
    "SELECT id, d FROM t ORDER BY d DESC, id LIMIT 9",  # ties on d, broken by id
    "SELECT id, g FROM t ORDER BY g DESC, id LIMIT 30",  # a tie read from a second tile
    "SELECT id, g FROM t ORDER BY g, id DESC LIMIT 45",
    "SELECT id AS k, s FROM t WHERE x > 50 ORDER BY k DESC LIMIT 6",
    "SELECT id, upper(s) AS u FROM t WHERE n % 3 = 0 ORDER BY n LIMIT 8",
    "SELECT id, x FROM t ORDER BY x DESC LIMIT 0",
    "SELECT id, d FROM t ORDER BY d LIMIT 5000",  # more than there are rows
]


def _tdbsql(path: str, sql: str, timestamp=None) -> pa.Table:
    return tdbsql.connect().register("t", path, timestamp=timestamp).sql(sql).arrow()


@pytest.mark.parametrize("timestamp", [None, 2500])
@pytest.mark.parametrize("sql", QUERIES)
def test_answers_are_the_whole_reads(array, sql, timestamp, monkeypatch):
    key = re.search(r"ORDER BY (\w+)", sql).group(1)
    got = _tdbsql(array, sql, timestamp)
    with monkeypatch.context() as patched:
        patched.setattr(top_scan, "try_top_scan", lambda runner, step: None)
        whole = _tdbsql(array, sql, timestamp)
    assert got.schema == whole.schema and all(
        _same(got[c].to_pylist(), whole[c].to_pylist()) for c in got.column_names)
    if key not in got.column_names:
        return
    import duckdb

    duck = duckdb.connect()
    duck.register("t", oracle_table(array, timestamp=timestamp))
    want = duck.sql(sql).arrow()
    if not isinstance(want, pa.Table):
        want = want.read_all()
    assert _same(got[key].to_pylist(), want[key].to_pylist())


def _same(a: list, b: list) -> bool:
    """Equal lists, NaN equal to NaN."""
    return len(a) == len(b) and all(x == y or (x != x and y != y) for x, y in zip(a, b))


def test_few_tiles_are_read(array):
    con = tdbsql.connect().register("t", array)
    for sql in ("SELECT id FROM t ORDER BY id DESC LIMIT 3",
                "SELECT id, d FROM t ORDER BY d LIMIT 3"):
        plan = con.explain(sql, analyze=True)
        tiles = int(re.search(r"Tiles: (\d+)", plan).group(1))
        unread = int(re.search(r"([\d,]+) tiles left unread", plan).group(1).replace(",", ""))
        assert unread > tiles // 2, plan


@pytest.fixture(scope="module")
def ties(tmp_path_factory) -> str:
    """One fragment of 10-cell tiles, g = id // 15: groups of equal g span two tiles."""
    uri = str(tmp_path_factory.mktemp("top") / "ties")
    dom = tiledb.Domain(tiledb.Dim("id", domain=(0, 10_000), tile=100, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=10, attrs=[
        tiledb.Attr("g", dtype=np.int64)]))
    ids = np.arange(2000, dtype=np.int64)
    with tiledb.open(uri, "w") as A:
        A[ids] = {"g": ids // 15}
    return uri


@pytest.mark.parametrize("order", ["g DESC, id", "g, id DESC", "g DESC, id DESC"])
def test_a_tie_at_the_last_row_is_read_from_every_tile_holding_it(ties, order, monkeypatch):
    con = tdbsql.connect().register("t", ties)
    with monkeypatch.context() as patched:
        patched.setattr(top_scan, "try_top_scan", lambda runner, step: None)
        whole = tdbsql.connect().register("t", ties).sql(
            f"SELECT id, g FROM t ORDER BY {order}").arrow()
    for limit in range(1, 120, 7):
        got = con.sql(f"SELECT id, g FROM t ORDER BY {order} LIMIT {limit}").arrow()
        assert got.equals(whole.slice(0, limit)), limit


def test_a_name_registered_again_is_looked_at_again(array, ties, tmp_path):
    """The plan is cached per SQL text; what the array behind a name allows (a nullable key
    under NULLS FIRST, an array at all) is not: it is looked at on every run."""
    nullable = str(tmp_path / "nullable")
    dom = tiledb.Domain(tiledb.Dim("id", domain=(0, 10_000), tile=100, dtype=np.int64))
    tiledb.Array.create(nullable, tiledb.ArraySchema(domain=dom, sparse=True, capacity=10,
                                                     attrs=[tiledb.Attr("g", dtype=np.int64,
                                                                        nullable=True)]))
    ids = np.arange(200, dtype=np.int64)
    with tiledb.open(nullable, "w") as A:
        A[ids] = {"g": pa.array(ids, pa.int64(), mask=ids >= 190)}  # NULLs in the last tile
    con = tdbsql.connect().register("t", ties)
    sql = "SELECT id, g FROM t ORDER BY g NULLS FIRST LIMIT 3"
    assert con.sql(sql).fetchall() == [(0, 0), (1, 0), (2, 0)]
    con.register("t", nullable)
    assert con.sql(sql).fetchall() == [(190, None), (191, None), (192, None)]
    con.register("t", pa.table({"id": [5, 6], "g": [2, 1]}))
    assert con.sql(sql).fetchall() == [(6, 1), (5, 2)]


def test_a_limit_of_most_rows_sorts_one_whole_read(array, monkeypatch):
    """OFFSET + LIMIT past 1/8 of the cells: reading rounds of a few tasks would be slower
    than one scan, so the plan sorts the whole read (no tiles left unread).  Forced on, the
    top scan still gives the whole read's rows when the LIMIT passes every row."""
    from tdbsql.engine import top_scan

    sql = "SELECT id, d FROM t ORDER BY d LIMIT 5000"
    con = tdbsql.connect().register("t", array)
    assert "tiles left unread" not in con.explain(sql, analyze=True)
    whole = con.sql(sql).arrow()
    monkeypatch.setattr(top_scan, "TOP_SHARE_MAX", 0)
    forced = tdbsql.connect().register("t", array)
    assert "tiles left unread" in forced.explain(sql, analyze=True)
    assert forced.sql(sql).arrow().equals(whole)
