"""`tdbsql.open`: schema, fragments and non-empty domain equal what `tiledb` reports."""

from __future__ import annotations

import numpy as np
import pytest
import tiledb

import tdbsql

SAMPLE = "examples/stations"


@pytest.fixture(scope="module")
def dense(tmp_path_factory):
    uri = str(tmp_path_factory.mktemp("open") / "dense")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(-10, 89), tile=10, dtype=np.int32),
                        tiledb.Dim("y", domain=(1, 40), tile=8, dtype=np.int32))
    schema = tiledb.ArraySchema(domain=dom, attrs=[tiledb.Attr("v", dtype=np.float32)],
                                cell_order="col-major", tile_order="row-major")
    tiledb.Array.create(uri, schema)
    with tiledb.open(uri, "w", timestamp=5) as A:
        A[0:20, 3:17] = np.ones((20, 14), dtype=np.float32)
    with tiledb.open(uri, "w", timestamp=9) as A:
        A[30:41, 1:3] = np.full((11, 2), 2, dtype=np.float32)
    return uri


@pytest.mark.parametrize("which", ["dense", "sample"])
def test_fragments_match_fragment_info(dense, which):
    uri = dense if which == "dense" else SAMPLE
    ours = tdbsql.open(uri)
    info = tiledb.array_fragments(uri)
    assert [f.name for f in ours.fragments] == [f.uri.rsplit("/", 1)[-1] for f in info]
    for frag, theirs in zip(ours.fragments, info):
        assert frag.timestamp_range == tuple(theirs.timestamp_range)
        meta = frag.metadata
        assert meta.version == theirs.version
        assert meta.cell_count == theirs.cell_num
        assert tuple(tuple(int(v) for v in r) for r in meta.non_empty_domain) == \
            tuple(tuple(int(v) for v in r) for r in theirs.nonempty_domain)


@pytest.mark.parametrize("which", ["dense", "sample"])
def test_non_empty_domain_and_schema(dense, which):
    uri = dense if which == "dense" else SAMPLE
    ours = tdbsql.open(uri)
    with tiledb.open(uri) as A:
        assert ours.non_empty_domain() == tuple(tuple(int(v) for v in r) for r in A.nonempty_domain())
        schema = A.schema
        assert [d.name for d in ours.schema.dimensions] == [schema.domain.dim(i).name
                                                            for i in range(schema.domain.ndim)]
        assert [a.name for a in ours.schema.attributes] == [schema.attr(i).name
                                                            for i in range(schema.nattr)]
        assert ours.schema.sparse == schema.sparse


def test_open_at_timestamp(dense):
    assert len(tdbsql.open(dense, timestamp=6).fragments) == 1
    assert len(tdbsql.open(dense, timestamp=(6, 10)).fragments) == 1
    assert len(tdbsql.open(dense).fragments) == 2
    assert tdbsql.open(dense, timestamp=4).non_empty_domain() is None


def test_fragment_metadata_parsed_once_until_the_file_changes(tmp_path):
    """Opening an array again reuses each fragment's parsed metadata (with the sections it
    loaded); a metadata file rewritten in place is parsed again -- here, found damaged."""
    uri = str(tmp_path / "a")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(1, 100), tile=10, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True,
                                                attrs=[tiledb.Attr("v", dtype=np.int32)]))
    with tiledb.open(uri, "w") as A:
        A[np.arange(1, 31)] = np.arange(30, dtype=np.int32)
    first = tdbsql.open(uri).fragments[0].metadata
    first.rtree  # a section loaded on demand
    again = tdbsql.open(uri).fragments[0].metadata
    assert again is first
    assert tdbsql.query("SELECT sum(v) FROM array WHERE d > 20", uri).to_pylist() == \
        [{"sum(v)": sum(range(20, 30))}]

    path = tdbsql.open(uri).fragments[0].entry.path + "/__fragment_metadata.tdb"
    with open(path, "r+b") as f:  # same size, other bytes: the footer no longer parses
        size = f.seek(0, 2)
        f.seek(size - 8)
        f.write(b"\xff" * 8)
    with pytest.raises(tdbsql.CorruptArrayError):
        tdbsql.open(uri).fragments[0].metadata
