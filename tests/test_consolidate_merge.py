"""Fragment consolidation merges the fragments a tile at a time (``storage.cell_merge``), with
TileDB's own consolidation as oracle: over random histories of overlapping writes, deletes,
duplicates, string dimensions and Hilbert order, the merged fragment stores the cells TileDB's
stores, in the same order, and every time-travel window reads as before.  The fragments lend
one tile per round, so each merge runs through many rounds and frontiers."""

from __future__ import annotations

import shutil
from unittest import mock

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from history_helpers import (
    assert_same, consolidate as tiledb_consolidate, create, delete, tiledb, write_sparse,
)
from tdbsql.storage import cell_merge, fragment_consolidation
from tdbsql.storage.array import Array
from tdbsql.storage.consolidate import consolidate

_WRITE = st.lists(st.tuples(st.integers(0, 30), st.integers(-50, 50)), min_size=1, max_size=12)
_HISTORY = st.fixed_dictionaries({
    "dups": st.booleans(),
    "string_dim": st.booleans(),
    "hilbert": st.booleans(),
    "capacity": st.integers(1, 5),
    "writes": st.lists(_WRITE, min_size=2, max_size=5),
    "delete_after": st.one_of(st.none(), st.integers(0, 3)),
    "delete_below": st.integers(-40, 40),
    "purge": st.booleans(),
})


def _key(x: int, string_dim: bool):
    return f"k{x:02d}" if string_dim else x


def build(uri: str, h: dict) -> list[int]:
    """The history ``h`` written with ``tiledb``; returns the timestamps used."""
    dim = tiledb.Dim("x", dtype="ascii") if h["string_dim"] else \
        tiledb.Dim("x", domain=(0, 99), tile=4, dtype=np.int64)
    create(uri, [dim], [tiledb.Attr("a", dtype=np.int32)], allows_duplicates=h["dups"],
           capacity=h["capacity"], cell_order="hilbert" if h["hilbert"] else "row-major")
    stamps = []
    for i, write in enumerate(h["writes"]):
        t = 10 * (i + 1)
        cells = write if h["dups"] else list(dict(write).items())  # one value a coordinate
        xs = [_key(x, h["string_dim"]) for x, _ in cells]
        coords = np.array(xs, dtype=object if h["string_dim"] else np.int64)
        write_sparse(uri, t, coords, a=np.array([a for _, a in cells], dtype=np.int32))
        stamps.append(t)
        if h["delete_after"] == i:
            delete(uri, t + 5, f"a < {h['delete_below']}")
            stamps.append(t + 5)
    return stamps


def stored(uri: str) -> list[tuple]:
    """Every field of every cell of the array's one fragment, in stored order."""
    array = Array(uri)
    (frag,) = array.fragments
    unstored = {d.name for d in array.schema.dimensions} if array.schema.dense else set()
    out = []
    for tile_idx in range(frag.metadata.tile_count):
        columns = []
        for name in sorted(set(frag.fields) - unstored):
            column = frag.tiles.read(frag.fields[name], tile_idx)
            if column.offsets is not None:
                columns.append([column.values[a:b].tobytes()
                                for a, b in zip(column.offsets[:-1], column.offsets[1:])])
            else:
                columns.append(column.values.tolist())
        out += list(zip(*columns))
    return out


def _twin_and_reads(uri: str, stamps: list[int], rows=lambda read: read):
    """A copy of the array for tiledb to consolidate, the windows to read (now and at every
    write) and what each reads before consolidation (the same in tdbsql and tiledb),
    through ``rows``."""
    twin = uri + "_twin"
    shutil.copytree(uri, twin)
    windows = [None, *stamps]
    return twin, windows, {w: rows(assert_same(uri, w)) for w in windows}


def _cells(rows: dict) -> list[tuple]:
    """A read's cells as a sorted list: the versions of a duplicated coordinate read in
    stored order, which consolidation changes (newest first), in TileDB as here."""
    return sorted(zip(*rows.values()))


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(h=_HISTORY)
def test_merged_a_tile_at_a_time_as_tiledb_consolidates(tmp_path_factory, h):
    uri = str(tmp_path_factory.mktemp("merge") / "a")
    stamps = build(uri, h)
    twin, windows, before = _twin_and_reads(uri, stamps, _cells)
    with mock.patch.object(cell_merge, "LENT_CELLS", 1):
        report = consolidate(uri, purge_deleted_cells=h["purge"])
    if not report.consolidated:  # every cell purged: nothing written, as TileDB refuses
        assert h["purge"]
        return
    tiledb_consolidate(twin, {"sm.consolidation.purge_deleted_cells":
                              str(h["purge"]).lower()})
    for target in (uri, twin):
        tiledb.vacuum(target)
    assert stored(uri) == stored(twin)
    if not h["purge"]:
        assert {w: _cells(assert_same(uri, w)) for w in windows} == before


_BOX = st.tuples(st.integers(1, 12), st.integers(0, 5), st.integers(1, 12), st.integers(0, 5))
_DENSE = st.fixed_dictionaries({
    "tile_order": st.sampled_from(["row-major", "col-major"]),
    "cell_order": st.sampled_from(["row-major", "col-major"]),
    "extents": st.tuples(st.integers(1, 4), st.integers(1, 4)),
    "boxes": st.lists(_BOX, min_size=2, max_size=4),
})


def build_dense(uri: str, h: dict) -> list[int]:
    """2-D dense writes of the boxes ``(lo0, len0, lo1, len1)``; returns their timestamps."""
    dims = [tiledb.Dim(name, domain=(1, 20), tile=extent, dtype=np.int64)
            for name, extent in zip(("r", "c"), h["extents"])]
    create(uri, dims, [tiledb.Attr("a", dtype=np.int32), tiledb.Attr("s", dtype=str)],
           sparse=False, tile_order=h["tile_order"], cell_order=h["cell_order"])
    stamps = []
    for i, (r0, rn, c0, cn) in enumerate(h["boxes"]):
        t = 10 * (i + 1)
        r1, c1 = min(20, r0 + rn), min(20, c0 + cn)
        values = np.arange((r1 - r0 + 1) * (c1 - c0 + 1), dtype=np.int32).reshape(
            r1 - r0 + 1, c1 - c0 + 1) + 100 * t
        with tiledb.open(uri, "w", timestamp=t) as A:
            A[r0:r1 + 1, c0:c1 + 1] = {"a": values,
                                       "s": np.array([f"v{v}" for v in values.ravel()],
                                                     dtype=object).reshape(values.shape)}
        stamps.append(t)
    return stamps


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(h=_DENSE)
def test_dense_consolidated_a_row_of_tiles_at_a_time_as_tiledb_does(tmp_path_factory, h):
    uri = str(tmp_path_factory.mktemp("dense") / "d")
    stamps = build_dense(uri, h)
    twin, windows, before = _twin_and_reads(uri, stamps)
    with mock.patch.object(fragment_consolidation, "BAND_CELLS", 1):
        report = consolidate(uri)
    tiledb_consolidate(twin)
    for target in (uri, twin):
        tiledb.vacuum(target)
    assert len(Array(uri).fragments) == len(Array(twin).fragments)
    if report.consolidated:
        assert stored(uri) == stored(twin)
    after = {w: assert_same(uri, w) for w in windows}  # as tiledb reads it, every window
    # a dense fragment keeps no cell timestamps: inside the merged range history is gone
    # (in TileDB too); at or after its end the reads are as before
    assert after[None] == before[None] and after[stamps[-1]] == before[stamps[-1]]


def test_fragments_that_follow_one_another_merge_in_one_pass(tmp_path):
    """Appends over time: each fragment's cells follow the previous one's.  Each round sorts
    only the fragments reaching the frontier, so the cells sorted stay proportional to the
    cells merged (sorting every fragment's lent tiles each round made it quadratic)."""
    uri = str(tmp_path / "appends")
    create(uri, [tiledb.Dim("x", domain=(0, 9999), tile=100, dtype=np.int64)],
           [tiledb.Attr("a", dtype=np.int32)], capacity=4)
    for i in range(12):
        xs = np.arange(i * 40, i * 40 + 40, dtype=np.int64)
        write_sparse(uri, 10 * (i + 1), xs, a=(xs * 2).astype(np.int32))
    twin = uri + "_twin"
    shutil.copytree(uri, twin)
    sorted_cells = []
    ordered = cell_merge._ordered

    def counting(schema, lending):
        found = ordered(schema, lending)
        sorted_cells.append(len(found[1]))
        return found

    with mock.patch.object(cell_merge, "LENT_CELLS", 1), \
            mock.patch.object(cell_merge, "_ordered", counting):
        consolidate(uri)
    tiledb_consolidate(twin)
    for target in (uri, twin):
        tiledb.vacuum(target)
    assert stored(uri) == stored(twin)
    assert sum(sorted_cells) <= 2 * 12 * 40  # each cell sorted about once
