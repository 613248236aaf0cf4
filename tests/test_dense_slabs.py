"""A dense box past ``SLAB_CELLS`` cells is read in slabs of whole tile rows
(``engine.dense_scan``): the cells, their order and every overwrite equal what ``tiledb``
reads, each tile is decoded by one slab only (an aggregate streaming through a box larger than the
memory budget: ``test_memory_budget``)."""

from __future__ import annotations

import collections

import numpy as np
import pytest
import tiledb
from hypothesis import given, settings
from hypothesis import strategies as st

import tdbsql
from tdbsql.engine import dense_scan


@pytest.fixture(scope="module")
def layered(tmp_path_factory) -> str:
    """A 2-D dense array in three writes, the later ones overwriting parts of the first;
    one nullable and one var-sized attribute."""
    uri = str(tmp_path_factory.mktemp("slabs") / "layered")
    dom = tiledb.Domain(tiledb.Dim("r", domain=(3, 102), tile=7, dtype=np.int32),
                        tiledb.Dim("c", domain=(0, 29), tile=4, dtype=np.int32))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=False, attrs=[
        tiledb.Attr("v", dtype=np.float64, nullable=True),
        tiledb.Attr("s", dtype=str, var=True)], cell_order="col-major", tile_order="row-major"))
    rng = np.random.default_rng(3)
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[3:103, 0:30] = {"v": rng.random((100, 30)),
                          "s": np.array([f"a{i}" for i in range(3000)], dtype=object)
                          .reshape(100, 30)}
    with tiledb.open(uri, "w", timestamp=2) as A:
        A[10:40, 5:20] = {"v": np.full((30, 15), 7.5), "s": np.full((30, 15), "second", object)}
    with tiledb.open(uri, "w", timestamp=3) as A:
        v = np.ma.masked_array(rng.random((9, 30)), mask=rng.random((9, 30)) < 0.3)
        A[33:42, 0:30] = {"v": v, "s": np.full((9, 30), "third", object)}
    return uri


def _tiledb_rows(uri: str, r: tuple[int, int], c: tuple[int, int]) -> list[tuple]:
    with tiledb.open(uri) as A:  # Arrow keeps the NULLs (numpy results drop the validity)
        got = A.query(return_arrow=True, dims=["r", "c"]).df[r[0]:r[1], c[0]:c[1]]
    return [tuple(row[name] for name in ("r", "c", "v", "s")) for row in got.to_pylist()]


@settings(max_examples=25, deadline=None)
@given(slab=st.sampled_from([1, 30, 64, 200, 1000]), r0=st.integers(3, 70),
       rows=st.integers(0, 40), c0=st.integers(0, 25), cols=st.integers(0, 10))
def test_slabs_read_what_tiledb_reads_in_its_order(layered, slab, r0, rows, c0, cols):
    r1, c1 = min(102, r0 + rows), min(29, c0 + cols)
    old = dense_scan.SLAB_CELLS
    dense_scan.SLAB_CELLS = slab
    try:
        got = tdbsql.query(f"SELECT r, c, v, s FROM array WHERE r BETWEEN {r0} AND {r1} "
                           f"AND c BETWEEN {c0} AND {c1}", layered)
    finally:
        dense_scan.SLAB_CELLS = old
    assert [tuple(row.values()) for row in got.to_pylist()] == \
        _tiledb_rows(layered, (r0, r1), (c0, c1))


def test_each_tile_is_decoded_by_one_slab(layered, monkeypatch):
    monkeypatch.setattr(dense_scan, "SLAB_CELLS", 100)  # 7-row tiles of 30 cells a row: 1 row
    decoded = collections.Counter()
    tile = dense_scan.DenseScan._tile

    def counted(self, frag, name, tile_idx, cells):
        decoded[frag.name, name, tile_idx] += 1
        return tile(self, frag, name, tile_idx, cells)

    monkeypatch.setattr(dense_scan.DenseScan, "_tile", counted)
    text = tdbsql.explain("SELECT count(*), sum(v) FROM array WHERE v > 0.25", layered,
                          analyze=True)
    assert decoded and max(decoded.values()) == 1
    assert "Fragments: 3 -> 3 (timestamps) -> 3 (non-empty domain)" in text


def test_a_box_past_max_cells_is_refused_whole(tmp_path):
    """Two writes at far corners make a box of 2**60 cells: refused at once, naming it, not
    cut into billions of slabs."""
    uri = str(tmp_path / "corners")
    dom = tiledb.Domain(tiledb.Dim("a", domain=(0, 2**30 - 1), tile=1024, dtype=np.int64),
                        tiledb.Dim("b", domain=(0, 2**30 - 1), tile=1024, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=False,
                                                attrs=[tiledb.Attr("v", dtype=np.int8)]))
    for corner in (0, 2**30 - 1):
        with tiledb.open(uri, "w") as A:
            A[corner:corner + 1, corner:corner + 1] = np.ones((1, 1), np.int8)
    with pytest.raises(tdbsql.DataError, match="holds 1152921504606846976 cells"):
        tdbsql.query("SELECT sum(v) FROM array", uri)
    with tiledb.open(uri) as A:  # one cell written, 24 at the fill value (-128)
        want = int(A.multi_index[0:4, 0:4]["v"].astype(np.int64).sum())
    assert want == 1 - 24 * 128
    assert tdbsql.query("SELECT sum(v) AS s FROM array WHERE a < 5 AND b < 5", uri) \
        .column("s").to_pylist() == [want]
