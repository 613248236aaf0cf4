"""Deletes read as ``tiledb`` reads them: delete conditions of many shapes, time travel around
them, writes after them, deletes inside consolidated commits, consolidation with and without
purging (delete metadata ``dt.tdb`` / ``dci.tdb``), arrays with duplicates, and deletes on
attributes that older fragments do not have."""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pytest

from history_helpers import (
    assert_same, consolidate, create, delete, int_dim, tdbsql, tiledb, vacuum, write_sparse,
)

WINDOWS = (15, 20, 25, 30, None, (21, 40), (26, 40), (15, 22))


def attrs():
    return [tiledb.Attr("a", dtype=np.int32),
            tiledb.Attr("f", dtype=np.float64, nullable=True),
            tiledb.Attr("s", dtype=str, nullable=True),
            tiledb.Attr("u", dtype=np.uint16)]


def write(uri: str, t: int, xs, dups: bool = False) -> None:
    xs = np.asarray(xs, dtype=np.int64)
    write_sparse(
        uri, t, xs,
        a=(xs * 10 + t).astype(np.int32),
        f=pa.array([None if x % 7 == 0 else x * 1.5 for x in xs], pa.float64()),
        s=np.array([None if x % 5 == 0 else f"v{x % 9}" for x in xs], dtype=object),
        u=(xs % 4).astype(np.uint16),
    )


def build(uri: str, dups: bool = False) -> str:
    """Writes at 10 and 20 (overlapping), a delete at 25 is added by each test, a write at 30."""
    create(uri, [int_dim(hi=199)], attrs(), allows_duplicates=dups)
    write(uri, 10, range(0, 40))
    write(uri, 20, range(20, 60, 2))
    return uri


CONDITIONS = [
    "a < 250",
    "a >= 300 and a <= 450",
    "a < 120 or a > 500",
    "a == 170",
    "a != 170",
    "u in [1, 3]",
    "u not in [0]",
    "f > 20.0",
    "f <= 9.0 or a > 400",
    "s == 'v3'",
    "s < 'v4'",
    "s in ['v1', 'v8']",
    "s != 'v2' and u == 2",
    "x > 30",
    "x < 5 or x >= 50",
    "x in [3, 21, 22]",
    "(a < 200 and s == 'v1') or (x > 40 and u != 0)",
    "a > 100000",
]


@pytest.mark.parametrize("cond", CONDITIONS)
def test_delete_condition_shapes(tmp_path, cond):
    uri = build(str(tmp_path / "a"))
    delete(uri, 25, cond)
    write(uri, 30, range(0, 60, 5))  # written after the delete: not deleted
    for window in WINDOWS:
        assert_same(uri, window)


def test_delete_removes_null_cells_of_tested_field(tmp_path):
    # The stored condition is the negation of the user's; a NULL fails every test, so a delete
    # on a nullable field also removes the rows where it is NULL.
    uri = build(str(tmp_path / "a"))
    delete(uri, 25, "f < 5.0")
    before = assert_same(uri, 24)
    assert None in before["f"]
    rows = assert_same(uri, None)
    assert all(f is not None for f in rows["f"])


@pytest.mark.parametrize("purge", [True, False])
@pytest.mark.parametrize("do_vacuum", [False, True])
def test_deletes_and_consolidation(tmp_path, purge, do_vacuum):
    uri = build(str(tmp_path / "a"))
    delete(uri, 25, "a < 250")
    write(uri, 30, range(0, 60, 5))
    delete(uri, 35, "s == 'v3' or x > 55")
    write(uri, 40, [1, 2, 3])
    consolidate(uri, {"sm.consolidation.purge_deleted_cells": str(purge).lower()})
    frag = next(n for n in os.listdir(os.path.join(uri, "__fragments")) if "_10_40_" in n)
    has_meta = os.path.exists(os.path.join(uri, "__fragments", frag, "dt.tdb"))
    assert has_meta == (not purge)
    if do_vacuum:
        vacuum(uri)
    for window in WINDOWS + (35, 40, (31, 45), (36, 45)):
        assert_same(uri, window)


def test_delete_after_consolidation_with_delete_metadata(tmp_path):
    uri = build(str(tmp_path / "a"))
    delete(uri, 25, "a < 250")
    consolidate(uri, {"sm.consolidation.purge_deleted_cells": "false"})
    vacuum(uri)
    delete(uri, 30, "u == 1")  # applies to the consolidated fragment's cells up to 30
    write(uri, 35, range(0, 60, 3))
    delete(uri, 40, "x < 10")
    for window in WINDOWS + (35, 40, (31, 45)):
        assert_same(uri, window)
    consolidate(uri, {"sm.consolidation.purge_deleted_cells": "false"})
    vacuum(uri)
    for window in WINDOWS + (35, 40, (31, 45)):
        assert_same(uri, window)


@pytest.mark.parametrize("do_vacuum", [False, True])
def test_deletes_in_consolidated_commits(tmp_path, do_vacuum):
    uri = build(str(tmp_path / "a"))
    delete(uri, 25, "a < 250")
    write(uri, 30, range(0, 60, 5))
    delete(uri, 35, "s in ['v1', 'v2']")
    consolidate(uri, {"sm.consolidation.mode": "commits"})
    if do_vacuum:
        vacuum(uri, "commits")
        # The .del files now live only inside the .con file.
        assert not any(n.endswith(".del") for n in os.listdir(os.path.join(uri, "__commits")))
    for window in WINDOWS + (35, (31, 45)):
        assert_same(uri, window)
    consolidate(uri)
    vacuum(uri)
    for window in WINDOWS + (35, (31, 45)):
        assert_same(uri, window)


def test_deleted_newest_version_hides_older_ones(tmp_path):
    uri = create(str(tmp_path / "a"), [int_dim()], [tiledb.Attr("a", dtype=np.int32)])
    write_sparse(uri, 10, np.array([1, 2, 3]), a=np.array([1, 2, 3], dtype=np.int32))
    write_sparse(uri, 20, np.array([1, 2]), a=np.array([100, 200], dtype=np.int32))
    delete(uri, 30, "a > 150")  # deletes (2, 200); (2, 2) must not come back
    rows = assert_same(uri, None)
    assert rows["x"] == [1, 3]
    for window in (20, 30, (15, 35)):
        assert_same(uri, window)
    consolidate(uri, {"sm.consolidation.purge_deleted_cells": "false"})
    for window in (20, 30, None, (15, 35)):
        assert_same(uri, window)


@pytest.mark.parametrize("cond", ["a < 250", "s == 'v3'", "x >= 30", "f > 20.0 or u == 0"])
def test_deletes_with_duplicates(tmp_path, cond):
    uri = build(str(tmp_path / "a"), dups=True)
    write(uri, 22, range(20, 40, 4))  # the same coordinates again
    delete(uri, 25, cond)
    write(uri, 30, range(0, 60, 5))
    for window in WINDOWS:
        assert_same(uri, window)
    consolidate(uri, {"sm.consolidation.purge_deleted_cells": "false"})
    for window in WINDOWS:
        assert_same(uri, window)


def test_delete_on_string_dimension(tmp_path):
    uri = create(str(tmp_path / "a"),
                 [tiledb.Dim("k", domain=(None, None), tile=None, dtype="ascii")],
                 [tiledb.Attr("a", dtype=np.int64)])
    keys = np.array([f"key{i:02d}" for i in range(30)], dtype=object)
    write_sparse(uri, 10, keys, a=np.arange(30, dtype=np.int64))
    write_sparse(uri, 20, keys[::3], a=np.arange(10, dtype=np.int64) + 100)
    delete(uri, 25, "k < 'key10' or a == 105")
    write_sparse(uri, 30, keys[:4], a=np.full(4, -1, dtype=np.int64))
    for window in (20, 25, None, (21, 40)):
        assert_same(uri, window)


def test_several_deletes_time_travel(tmp_path):
    uri = build(str(tmp_path / "a"))
    for i, cond in enumerate(["x < 5", "a > 500", "u == 2", "s == 'v4'"]):
        delete(uri, 21 + 2 * i, cond)
    for window in range(19, 30):
        assert_same(uri, window)
    assert_same(uri, (22, 25))


def evolve(uri: str, t: int, step) -> None:
    se = tiledb.ArraySchemaEvolution()
    step(se)
    se.timestamp(t)
    se.array_evolve(uri)


# Evolutions here are stamped 22: TileDB orders schemas by name, and "__22_..." sorts after the
# wall-clock create schema "__17..." until 2039, so writes and deletes see the evolved schema.
@pytest.mark.parametrize("cond", [
    "b < 4", "a == 2 and b < 4", "b < 4 and a == 2", "(a == 2 and b < 4) or a == 4",
    "a == 1 or (b < 4 and a < 3)", "b < 4 or a == 3",
])
def test_delete_on_attribute_added_by_evolution(tmp_path, cond):
    # The fragment written before ``b`` existed: a test on ``b`` clears the bitmap it is given,
    # so the outcome depends on where the test sits in the stored (negated) condition.
    uri = create(str(tmp_path / "a"), [int_dim()], [tiledb.Attr("a", dtype=np.int32)])
    write_sparse(uri, 10, np.arange(5), a=np.arange(5, dtype=np.int32))
    evolve(uri, 22, lambda se: se.add_attribute(tiledb.Attr("b", dtype=np.int32, fill=5)))
    write_sparse(uri, 23, np.array([7, 8, 9]), a=np.array([2, 7, 3], dtype=np.int32),
                 b=np.array([1, 9, 2], dtype=np.int32))
    delete(uri, 25, cond)
    for window in (23, 25, None):
        assert_same(uri, window)
    consolidate(uri, {"sm.consolidation.purge_deleted_cells": "false"})
    for window in (23, 25, None):
        assert_same(uri, window)


def test_delete_on_attribute_dropped_later_fails_as_in_tiledb(tmp_path):
    uri = create(str(tmp_path / "a"), [int_dim()], [tiledb.Attr("a", dtype=np.int32),
                                                   tiledb.Attr("b", dtype=np.int32)])
    write_sparse(uri, 10, np.arange(5), a=np.arange(5, dtype=np.int32),
                 b=np.arange(5, dtype=np.int32))
    delete(uri, 12, "b == 2")
    evolve(uri, 22, lambda se: se.drop_attribute("b"))
    assert_same(uri, 15)  # the schema of that time still has b
    with pytest.raises(tiledb.TileDBError, match="Field doesn't exist"):
        with tiledb.open(uri, timestamp=30) as A:
            A.query(return_arrow=True).df[:]
    with pytest.raises(tdbsql.CorruptArrayError, match="'b'"):
        tdbsql.query("SELECT * FROM array", uri, timestamp=30)
    assert_same(uri, (13, 30))  # a window without the delete reads fine


def test_delete_is_not_visible_to_reads_before_it(tmp_path):
    uri = build(str(tmp_path / "a"))
    delete(uri, 25, "x >= 0")  # everything
    assert tdbsql.query("SELECT * FROM array", uri).num_rows == 0
    assert tdbsql.query("SELECT * FROM array", uri, timestamp=24).num_rows > 0
    write(uri, 30, [7, 8])
    assert assert_same(uri, None)["x"] == [7, 8]


OTHER_TYPES = {
    "char": ([tiledb.Attr("c", dtype="S1")],
             lambda xs: {"c": np.array([chr(97 + x % 5).encode() for x in xs], dtype="S1")},
             ["c == 'b'", "c < 'c'", "c in ['a', 'e']", "c != 'a'"]),
    "float32_bool": ([tiledb.Attr("f", dtype=np.float32), tiledb.Attr("b", dtype=np.bool_)],
                     lambda xs: {"f": (xs / 3).astype(np.float32), "b": xs % 2 == 0},
                     ["f > 2.5", "f == 1.0", "b == True"]),
    "datetime": ([tiledb.Attr("d", dtype="datetime64[D]")],
                 lambda xs: {"d": np.datetime64("2020-01-01") + xs},
                 ["d > 18270", "d == 18262"]),  # raw days since the epoch
    "uint8_int64": ([tiledb.Attr("u", dtype=np.uint8), tiledb.Attr("i", dtype=np.int64)],
                    lambda xs: {"u": (xs * 13 % 256).astype(np.uint8), "i": -xs.astype(np.int64)},
                    ["u > 100", "i >= -5"]),
    "strings": ([tiledb.Attr("s", dtype=str, nullable=True), tiledb.Attr("bb", dtype=bytes)],
                lambda xs: {"s": np.array(["é" if x % 3 == 0 else ("" if x % 3 == 1 else None)
                                           for x in xs], dtype=object),
                            "bb": np.array([bytes([x]) for x in xs], dtype=object)},
                ["s == 'é'", "s == ''", "s > ''", "s != 'é'"]),
}


@pytest.mark.parametrize("kind", sorted(OTHER_TYPES))
def test_delete_conditions_on_other_types(tmp_path, kind):
    attrs_, values, conditions = OTHER_TYPES[kind]
    xs = np.arange(20, dtype=np.int64)
    for i, cond in enumerate(conditions):
        uri = create(str(tmp_path / f"a{i}"), [int_dim()], attrs_)
        write_sparse(uri, 10, xs, **values(xs))
        delete(uri, 20, cond)
        assert_same(uri, None)
        assert_same(uri, 15)


def test_delete_on_float_dimension(tmp_path):
    uri = create(str(tmp_path / "a"),
                 [tiledb.Dim("x", domain=(-100.0, 100.0), tile=10.0, dtype=np.float64)],
                 [tiledb.Attr("v", dtype=np.int32)])
    xs = np.linspace(-20, 20, 41)
    write_sparse(uri, 10, xs, v=np.arange(41, dtype=np.int32))
    delete(uri, 20, "x > 5.5 or x == -3.0")
    for window in (15, None):
        assert_same(uri, window)


def test_delete_at_the_timestamp_of_a_write(tmp_path):
    uri = build(str(tmp_path / "a"))
    delete(uri, 20, "a < 300")  # same timestamp as the second write: applies to it
    for window in (19, 20, None, (20, 20)):
        assert_same(uri, window)
