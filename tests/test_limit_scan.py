"""A LIMIT without ORDER BY over an array scan stops reading once it has its rows
(``engine.row_caps``, ``pipeline.scan_frames``): the rows are the first ones of the whole scan
(``tiledb``'s global order for one fragment; tdbsql's own full read when fragments overlap),
and far fewer tiles are read.  Steps that filter, aggregate, order or change the row count
between the scan and the LIMIT keep the whole read."""

from __future__ import annotations

import re

import numpy as np
import pytest
import tiledb

import tdbsql

N = 600
CAPACITY = 10  # 60 tiles


def _write(uri: str, ids: np.ndarray, tag: str, stamp: int) -> None:
    with tiledb.open(uri, "w", timestamp=stamp) as A:
        A[ids] = {"v": ids * 2, "s": np.array([f"{tag}{i}" for i in ids], dtype=object)}


@pytest.fixture(scope="module")
def arrays(tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("limit_scan")
    out = {}
    for name, fragments in (("one", 1), ("two", 2)):
        uri = str(root / name)
        dom = tiledb.Domain(tiledb.Dim("id", domain=(0, 10_000), tile=100, dtype=np.int64))
        tiledb.Array.create(uri, tiledb.ArraySchema(
            domain=dom, sparse=True, capacity=CAPACITY,
            attrs=[tiledb.Attr("v", dtype=np.int64), tiledb.Attr("s", dtype=str, var=True)]))
        _write(uri, np.arange(N, dtype=np.int64) * 3, "a", 1000)
        if fragments == 2:  # overlapping: newer cells win, merged in global order
            _write(uri, np.arange(0, N * 3, 7, dtype=np.int64), "b", 2000)
        out[name] = uri
    return out


def _con(arrays) -> tdbsql.Connection:
    con = tdbsql.connect()
    for name, uri in arrays.items():
        con.register(name, uri)
    return con


def _tiledb_first(uri: str, count: int) -> list[tuple]:
    with tiledb.open(uri) as A:
        data = A.query(order="G")[:]
    return list(zip(data["id"].tolist(), data["v"].tolist(), data["s"].tolist()))[:count]


@pytest.mark.parametrize("limit, offset", [(1, 0), (7, 0), (25, 3), (0, 0), (5, 590), (50, 10_000)])
def test_first_rows_in_global_order(arrays, limit, offset):
    got = _con(arrays).sql(f"SELECT id, v, s FROM one LIMIT {limit} OFFSET {offset}").fetchall()
    assert got == _tiledb_first(arrays["one"], N)[offset:offset + limit]


QUERIES = [  # (the query without its LIMIT, capped: reads few tiles)
    ("SELECT * FROM two", True),
    ("SELECT id, v * 2 AS w, upper(s) AS u FROM two", True),
    ("SELECT * FROM two WHERE v > 900", True),  # pushed into the scan: still capped
    ("WITH x AS (SELECT id + 1 AS k, s FROM two) SELECT k, s FROM x", True),
    ("SELECT * FROM (SELECT id, s FROM two) AS q", True),
    ("SELECT * FROM two WHERE length(s) + id % 5 = 4", True),
    ("SELECT DISTINCT v % 7 AS m FROM two", False),
    ("SELECT id, row_number() OVER () AS r FROM two", False),
    ("SELECT id, v FROM two ORDER BY v % 7 DESC, id", False),  # (by a column: top_scan)
    ("SELECT id FROM two UNION ALL SELECT id FROM one", False),
]


@pytest.mark.parametrize("sql, capped", QUERIES)
def test_rows_are_the_first_of_the_whole_read(arrays, sql, capped):
    con = _con(arrays)
    whole = con.sql(sql).arrow()
    for limit, offset in ((3, 0), (11, 20)):
        got = con.sql(f"{sql} LIMIT {limit} OFFSET {offset}").arrow()
        assert got.equals(whole.slice(offset, limit)), (limit, offset)
    plan = con.explain(f"{sql} LIMIT 3", analyze=True)
    read = [int(n.replace(",", "")) for n in re.findall(r"Scan two: .*\[rows=([\d,]+)", plan)]
    assert read and (read[0] < N // 3 if capped else read[0] >= N), plan


def test_a_filter_left_above_the_scan_reads_everything(arrays):
    """A condition the scan cannot run (here: a scalar subquery) stays above it, so the
    scan cannot know how many rows the LIMIT needs; the answer is still the first rows."""
    con = _con(arrays)
    sql = "SELECT id FROM two WHERE v > (SELECT min(v) FROM one)"
    assert con.sql(f"{sql} LIMIT 4").arrow().equals(con.sql(sql).arrow().slice(0, 4))


def test_a_percent_limit_counts_every_row(arrays):
    """``LIMIT p%`` keeps a share of all the rows: the scan under it reads them all."""
    con = _con(arrays)
    whole = con.sql("SELECT id, s FROM two").arrow()
    for sql, count in (("SELECT id, s FROM two LIMIT 10%", whole.num_rows // 10),
                       ("SELECT * FROM (SELECT id, s FROM two LIMIT 50%) LIMIT 5", 5),
                       ("SELECT * FROM (SELECT id, s FROM two LIMIT 7) LIMIT 50%", 3)):
        assert con.sql(sql).arrow().equals(whole.slice(0, count)), sql


def test_an_offset_below_the_limit_adds_its_rows(tmp_path):
    """``SELECT * FROM (SELECT d FROM t OFFSET 5) LIMIT 3`` needs 8 rows of the scan, not 3:
    one cell per fragment makes each task one row, so a cap of 3 would answer nothing."""
    uri = str(tmp_path / "cells")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 99), tile=100, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=4,
                                                attrs=[tiledb.Attr("v", dtype=np.int64)]))
    for i in range(20):
        with tiledb.open(uri, "w", timestamp=i + 1) as A:
            A[np.array([i])] = {"v": np.array([i])}
    con = tdbsql.connect().register("t", uri)
    assert con.sql("SELECT * FROM (SELECT d FROM t OFFSET 5) s LIMIT 3").fetchall() == \
        [(5,), (6,), (7,)]
    assert con.sql("SELECT * FROM (SELECT * FROM (SELECT d FROM t OFFSET 5) a OFFSET 2) b "
                   "LIMIT 2 OFFSET 1").fetchall() == [(8,), (9,)]
    assert con.sql("SELECT count(*) FROM (SELECT * FROM (SELECT d FROM t OFFSET 5) s "
                   "LIMIT 3)").fetchall() == [(3,)]
