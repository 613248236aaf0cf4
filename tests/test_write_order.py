"""A statement's write comes after everything it read, even within one millisecond: under a
clock slowed a hundredfold, consecutive statements share their milliseconds, and fragments of
one millisecond would tie (their order being their names', random)."""

from __future__ import annotations

import time

import numpy as np
import pytest

tiledb = pytest.importorskip("tiledb")

import tdbsql  # noqa: E402
import tdbsql.storage.array  # noqa: E402
import tdbsql.storage.write_order  # noqa: E402


@pytest.fixture()
def slow_clock(monkeypatch):
    start = time.time_ns() // 1_000_000

    def now_ms():
        return start + (time.time_ns() // 1_000_000 - start) // 100

    for module in (tdbsql.storage.array, tdbsql.storage.write_order):
        monkeypatch.setattr(module, "now_ms", now_ms)
    return now_ms


def test_statements_in_one_millisecond_apply_in_order(tmp_path, slow_clock):
    path = str(tmp_path / "a")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 99), tile=10, dtype=np.int64))
    tiledb.Array.create(path, tiledb.ArraySchema(domain=dom, sparse=True, attrs=[
        tiledb.Attr("v", dtype=np.int64)]))
    con = tdbsql.connect().register("a", path)
    for v in range(6):
        con.sql(f"INSERT INTO a VALUES (1, {v}), (2, {v})")
    con.sql("UPDATE a SET v = v * 10 WHERE x = 1; DELETE FROM a WHERE x = 2; "
            "INSERT INTO a VALUES (2, 7); UPDATE a SET v = v + 1")
    assert con.sql("SELECT * FROM a ORDER BY x").fetchall() == [(1, 51), (2, 8)]
    with tiledb.open(path) as A:
        assert A[:]["v"].tolist() == [51, 8]
    stamps = [f[0] for f in tiledb.array_fragments(path).timestamp_range]
    assert len(set(stamps)) == len(stamps) == 9  # each its own millisecond, in order
