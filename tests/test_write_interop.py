"""Arrays tdbsql writes, maintained by tiledb; arrays tiledb writes, maintained by tdbsql: both
readers agree after every step, including time travel across consolidation."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import tiledb

import tdbsql

CFG = tiledb.Config({"sm.consolidation.buffer_size": "65536"})


def _tdbsql_array(path: str) -> None:
    tdbsql.create(path, tdbsql.Schema(
        [tdbsql.Dim("k", "int64", (0, 999), 50)],
        [tdbsql.Attr("v", "int64", filters=[tdbsql.Zstd(3)]),
         tdbsql.Attr("s", "ascii", nullable=True)], capacity=16))
    rng = np.random.default_rng(7)
    for ts in (1000, 2000, 3000):
        keys = rng.choice(1000, 120, replace=False)
        tdbsql.write(path, pa.table({
            "k": keys, "v": rng.integers(0, 100, 120) + ts,
            "s": pa.array([f"s{k}" if k % 5 else None for k in keys])}), timestamp=ts)
    tdbsql.delete(path, "v < 1050", timestamp=3500)


def _tiledb_cells(path: str, ts=None) -> dict:
    with tiledb.open(path, timestamp=ts, ctx=tiledb.Ctx(CFG)) as arr:
        table = arr.query(return_arrow=True).df[:]
    return _sorted(table)


def _tdbsql_cells(path: str, ts=None) -> dict:
    return _sorted(tdbsql.query("SELECT k, v, s FROM array", path, timestamp=ts))


def _sorted(table: pa.Table) -> dict:
    table = table.sort_by("k")
    return {name: table.column(name).to_pylist() for name in ("k", "v", "s")}


def test_tiledb_consolidates_and_vacuums_what_tdbsql_wrote(tmp_path):
    path = str(tmp_path / "a")
    _tdbsql_array(path)
    before = {ts: _tiledb_cells(path, ts) for ts in (1500, 2500, None)}
    for ts, cells in before.items():
        assert _tdbsql_cells(path, ts) == cells
    tiledb.consolidate(path, ctx=tiledb.Ctx(CFG))
    tiledb.vacuum(path, ctx=tiledb.Ctx(CFG))
    assert _tiledb_cells(path) == before[None]
    assert _tdbsql_cells(path) == before[None]
    assert len(tdbsql.open(path).fragments) == 1


def test_tdbsql_consolidates_what_tdbsql_wrote_and_tiledb_reads_it(tmp_path):
    path = str(tmp_path / "a")
    _tdbsql_array(path)
    before = {ts: _tdbsql_cells(path, ts) for ts in (1500, 2500, None)}
    tdbsql.consolidate(path, purge_deleted_cells=True)
    tdbsql.vacuum(path)
    assert _tdbsql_cells(path) == before[None]
    assert _tiledb_cells(path) == before[None]
    assert len(tdbsql.open(path).fragments) == 1
