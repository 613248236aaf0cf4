"""Paths may be ``file://`` URIs, as TileDB writes and takes them; remote schemes are refused
by name, not mistaken for a folder under the working directory."""

from __future__ import annotations

import numpy as np
import pytest
import tiledb

import tdbsql


@pytest.fixture()
def array(tmp_path) -> str:
    uri = str(tmp_path / "a")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 9), tile=5, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, attrs=[
        tiledb.Attr("v", dtype=np.float64)]))
    with tiledb.open(uri, "w") as A:
        A[np.arange(3, dtype=np.int64)] = {"v": np.array([1.0, 2.0, 4.0])}
    return uri


def test_file_uris_name_local_arrays(array, tmp_path):
    uri = "file://" + array
    assert tdbsql.query("SELECT sum(v) AS s FROM array", uri).to_pylist() == [{"s": 7.0}]
    assert tdbsql.query(f"SELECT count(*) AS n FROM '{uri}'").to_pylist() == [{"n": 3}]
    tdbsql.write(uri, {"d": [5], "v": [8.0]})
    tdbsql.put_metadata(uri, "k", "v")
    with tiledb.open(array) as A:
        assert sorted(A[:]["v"].tolist()) == [1.0, 2.0, 4.0, 8.0]
        assert A.meta["k"] == "v"
    group = str(tmp_path / "g")
    tdbsql.create_group("file://" + group)
    tdbsql.add_member("file://" + group, uri, name="a")
    assert tdbsql.query("SELECT count(*) AS n FROM a", "file://" + group).to_pylist() == \
        [{"n": 4}]


@pytest.mark.parametrize("uri", ["s3://bucket/array", "gcs://bucket/array", "tiledb://ns/a"])
def test_remote_uris_are_refused_by_name(uri):
    with pytest.raises(tdbsql.UnsupportedFormatError, match=r"storage is not supported"):
        tdbsql.query("SELECT 1 FROM array", uri)
    with pytest.raises(tdbsql.UnsupportedFormatError, match=uri.split(":")[0] + "://"):
        tdbsql.query(f"SELECT 1 FROM '{uri}'")
    with pytest.raises(tdbsql.UnsupportedFormatError):
        tdbsql.connect().register("t", uri)


def test_file_uris_are_taken_as_written(tmp_path):
    """TileDB neither decodes %xx in a file:// URI nor takes a host for a folder."""
    uri = str(tmp_path / "a%41")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 9), tile=5, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, attrs=[
        tiledb.Attr("v", dtype=np.float64)]))
    with tiledb.open(uri, "w") as A:
        A[np.array([1], dtype=np.int64)] = {"v": np.array([2.0])}
    assert tdbsql.query("SELECT v FROM array", "file://" + uri).to_pylist() == [{"v": 2.0}]
    with pytest.raises(tdbsql.ArrayNotFoundError, match="names the host 'data'"):
        tdbsql.query("SELECT 1 FROM array", "file://data/arr")
