"""Arrays of older format versions (from TileDB's own test inputs, copied to tests/data/legacy,
a few KB): read them as ``tiledb`` does, or fail with a tdbsql error where ``tiledb`` fails.

* ``non_split_coords_v1_4_0``: format 1-2 (``__uuid_t`` fragment in the root, no ``.ok``,
  zipped coordinates in ``__coords.tdb``, legacy ``__array_schema.tdb``), sparse 2-D;
* ``zero_var_chunks_v10``: format 10 (fragment in the root committed by ``.ok``), a var-sized
  string dimension whose tiles have zero-length chunks;
* ``sparse_array_v11``: format 11 schema, no fragments;
* ``dense_array_v1_3_0``: TileDB 1.3 -- unreadable by TileDB 2.30 as well;
* ``experimental_array_vUINT32_MAX``: a format version newer than any reader.
"""

from __future__ import annotations

import os
import shutil

import pytest

from history_helpers import assert_same, tdbsql, tiledb

DATA = os.path.join(os.path.dirname(__file__), "data", "legacy")


@pytest.fixture
def legacy(tmp_path):
    def copy(name: str) -> str:
        target = str(tmp_path / name)
        shutil.copytree(os.path.join(DATA, name), target)
        return target
    return copy


def test_v1_zipped_coordinates(legacy):
    uri = legacy("non_split_coords_v1_4_0")
    rows = assert_same(uri)
    assert rows == {"d1": [1, 2, 3, 4], "d2": [10, 10, 10, 10], "a": [1, 2, 3, 4]}
    array = tdbsql.open(uri)
    assert array.fragments[0].version == 1
    with tiledb.open(uri) as A:
        assert array.non_empty_domain() == A.nonempty_domain()


def test_v1_ranges_and_time_travel(legacy):
    uri = legacy("non_split_coords_v1_4_0")
    table = tdbsql.query("SELECT d1, a FROM array WHERE d1 >= 2 AND d2 = 10 ORDER BY d1", uri)
    assert table.to_pydict() == {"d1": [2, 3, 4], "a": [2, 3, 4]}
    stamp = 1541540586869  # the fragment's timestamp
    assert_same(uri, stamp)
    assert tdbsql.query("SELECT * FROM array", uri, timestamp=stamp - 1).num_rows == 0
    assert tdbsql.query(f"SELECT * FROM array FOR SYSTEM_TIME AS OF {stamp}", uri).num_rows == 4


def test_v10_fragment_committed_by_ok_file(legacy):
    uri = legacy("zero_var_chunks_v10")
    assert assert_same(uri) == {"d": [""], "a": [1]}
    name = next(n for n in os.listdir(uri) if n.endswith(".ok"))
    os.remove(os.path.join(uri, name))  # a v5+ fragment without its .ok is not committed
    assert tdbsql.query("SELECT * FROM array", uri).num_rows == 0
    assert_same(uri)


def test_v11_empty_array(legacy):
    uri = legacy("sparse_array_v11")
    table = tdbsql.query("SELECT * FROM array", uri)
    assert table.num_rows == 0 and table.column_names == ["d1", "d2", "a1", "a2", "a3"]
    assert tdbsql.open(uri).non_empty_domain() is None


def test_v1_3_array_fails_as_in_tiledb(legacy):
    uri = legacy("dense_array_v1_3_0")
    with pytest.raises(tiledb.TileDBError):
        tiledb.open(uri)
    with pytest.raises(tdbsql.Error):
        tdbsql.query("SELECT * FROM array", uri)


def test_newer_format_version_is_unsupported(legacy):
    uri = legacy("experimental_array_vUINT32_MAX")
    with pytest.raises(tiledb.TileDBError):
        tiledb.open(uri)
    with pytest.raises(tdbsql.UnsupportedFormatError):
        tdbsql.query("SELECT * FROM array", uri)
