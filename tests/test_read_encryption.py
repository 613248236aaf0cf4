"""Encrypted arrays (AES-256-GCM, 32-byte key) read with the right key equal ``tiledb``; a
missing, wrong or malformed key, or a key for an array that is not encrypted, raises
``tdbsql.EncryptionKeyError`` whose message never contains the key."""

from __future__ import annotations

import numpy as np
import pytest

from history_helpers import (
    assert_same, consolidate, create, delete, int_dim, tdbsql, tiledb, vacuum, write_sparse,
)

KEY = "0123456789abcdef0123456789abcdef"
WRONG = "fedcba9876543210fedcba9876543210"
WINDOWS = (5, 15, 25, None, (15, 35))


@pytest.fixture
def sparse_enc(tmp_path):
    uri = create(str(tmp_path / "s"), [int_dim()], [tiledb.Attr("a", dtype=np.int32),
                                                   tiledb.Attr("s", dtype=str, nullable=True)],
                 key=KEY)
    for t in (10, 20, 30):
        xs = np.arange(t // 10, 40, 3, dtype=np.int64)
        write_sparse(uri, t, xs, key=KEY, a=(xs * t).astype(np.int32),
                     s=np.array([None if x % 4 == 0 else f"s{x}" for x in xs], dtype=object))
    delete(uri, 25, "a > 300", key=KEY)
    with tiledb.open(uri, "w", timestamp=30, key=KEY) as A:
        A.meta["k"] = 5
        A.meta["name"] = "secret"
    return uri


@pytest.fixture
def dense_enc(tmp_path):
    uri = create(str(tmp_path / "d"), [int_dim(hi=29, tile=5)], [tiledb.Attr("a", dtype=np.float64)],
                 sparse=False, key=KEY)
    for i, t in enumerate((10, 20)):
        with tiledb.open(uri, "w", timestamp=t, key=KEY) as A:
            A[4 * i:4 * i + 9] = np.arange(9, dtype=np.float64) + t
    return uri


def test_read_with_key(sparse_enc, dense_enc):
    for window in WINDOWS:
        assert_same(sparse_enc, window, key=KEY)
        assert_same(dense_enc, window, key=KEY)


def test_key_as_bytes(sparse_enc):
    table = tdbsql.query("SELECT * FROM array", sparse_enc, key=KEY.encode())
    assert table.num_rows == tdbsql.query("SELECT * FROM array", sparse_enc, key=KEY).num_rows > 0


def test_metadata_with_key(sparse_enc):
    with tiledb.open(sparse_enc, key=KEY) as A:
        expected = dict(A.meta)
    assert tdbsql.metadata(sparse_enc, key=KEY) == expected == {"k": 5, "name": "secret"}


@pytest.mark.parametrize("mode", ["fragments", "fragment_meta", "commits", "array_meta"])
def test_consolidated_encrypted_array(sparse_enc, mode):
    consolidate(sparse_enc, {"sm.consolidation.mode": mode}, key=KEY)
    for window in WINDOWS:
        assert_same(sparse_enc, window, key=KEY)
    vacuum(sparse_enc, mode, key=KEY)
    for window in WINDOWS:
        assert_same(sparse_enc, window, key=KEY)
    assert tdbsql.metadata(sparse_enc, key=KEY)["name"] == "secret"


def _assert_key_error(call, *secrets):
    with pytest.raises(tdbsql.EncryptionKeyError) as info:
        call()
    for secret in secrets:
        assert secret not in str(info.value)
        assert secret not in repr(info.value)
    return info.value


@pytest.mark.parametrize("fixture", ["sparse_enc", "dense_enc"])
def test_missing_or_wrong_key(request, fixture):
    uri = request.getfixturevalue(fixture)
    _assert_key_error(lambda: tdbsql.query("SELECT * FROM array", uri), KEY)
    _assert_key_error(lambda: tdbsql.query("SELECT * FROM array", uri, key=WRONG), KEY, WRONG)
    _assert_key_error(lambda: tdbsql.query("SELECT a FROM array", uri, key=WRONG.encode()),
                      KEY, WRONG)
    _assert_key_error(lambda: tdbsql.query("SELECT a FROM array", uri, key="short"), "short")
    _assert_key_error(lambda: tdbsql.metadata(uri, key=WRONG), WRONG)
    _assert_key_error(lambda: tdbsql.open(uri).schema)
    with pytest.raises(tiledb.TileDBError):
        tiledb.open(uri, key=WRONG)


def test_key_for_unencrypted_array(tmp_path):
    uri = create(str(tmp_path / "plain"), [int_dim()], [tiledb.Attr("a", dtype=np.int32)])
    write_sparse(uri, 10, np.array([1, 2]), a=np.array([1, 2], dtype=np.int32))
    with pytest.raises(tiledb.TileDBError):
        tiledb.open(uri, key=KEY)
    _assert_key_error(lambda: tdbsql.query("SELECT * FROM array", uri, key=KEY), KEY)
    _assert_key_error(lambda: tdbsql.metadata(uri, key=KEY), KEY)
