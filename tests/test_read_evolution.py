"""Schema evolution and enumerations read as ``tiledb`` reads them: each fragment with its own
schema, added attributes as fill values / NULL in older fragments, dropped ones gone, time
travel to before an evolution using the schema of that time, enumerated attributes as Arrow
dictionaries of their labels (also after ``extend_enumeration``).

Timestamps here lie in the future (``B + k``): the schema written by ``Array.create`` carries
the wall clock, and TileDB picks schemas in name order, so explicit timestamps with fewer digits
would sort before it (``test_schema_choice_follows_name_order`` covers that case).
"""

from __future__ import annotations

import os
import time

import numpy as np
import pyarrow as pa
import pytest

from history_helpers import (
    assert_same, consolidate, create, int_dim, tdbsql, tiledb, vacuum, write_sparse,
)

B = (time.time_ns() // 1_000_000 // 10**9 + 1) * 10**9


def evolve(uri: str, t: int, *steps) -> None:
    se = tiledb.ArraySchemaEvolution()
    for step in steps:
        step(se)
    se.timestamp(t)
    se.array_evolve(uri)


def add(attr):
    return lambda se: se.add_attribute(attr)


def drop(name):
    return lambda se: se.drop_attribute(name)


def columns_at(uri, t) -> list[str]:
    with tiledb.open(uri, timestamp=t) as A:
        return [A.schema.domain.dim(0).name] + [A.schema.attr(i).name for i in range(A.schema.nattr)]


@pytest.fixture
def evolved(tmp_path):
    uri = create(str(tmp_path / "a"), [int_dim()], [tiledb.Attr("a", dtype=np.int32),
                                                   tiledb.Attr("b", dtype=np.float64)])
    write_sparse(uri, B + 10, np.array([1, 2, 3]), a=np.array([1, 2, 3], dtype=np.int32),
                 b=np.array([0.1, 0.2, 0.3]))
    evolve(uri, B + 15, add(tiledb.Attr("c", dtype=np.int64, fill=-7)),
           add(tiledb.Attr("n", dtype=str, nullable=True)), add(tiledb.Attr("s", dtype=str)))
    write_sparse(uri, B + 20, np.array([3, 4]), a=np.array([30, 40], dtype=np.int32),
                 b=np.array([3.0, 4.0]), c=np.array([300, 400]),
                 n=np.array(["x", None], dtype=object), s=np.array(["p", ""], dtype=object))
    evolve(uri, B + 25, drop("b"))
    write_sparse(uri, B + 30, np.array([5, 1]), a=np.array([50, 10], dtype=np.int32),
                 c=np.array([500, 100]), n=np.array(["y", "z"], dtype=object),
                 s=np.array(["q", "r"], dtype=object))
    return uri


TIMES = (10, 12, 15, 20, 22, 25, 30, 100)


def test_each_fragment_reads_with_its_schema(evolved):
    for t in TIMES:
        rows = assert_same(evolved, B + t)
        assert list(rows) == columns_at(evolved, B + t)
    for window in ((B + 12, B + 22), (B + 21, B + 40), (B + 15, B + 15)):
        assert_same(evolved, window)


def test_added_attributes_fill_older_fragments(evolved):
    rows = assert_same(evolved, B + 100)
    assert rows["x"] == [1, 2, 3, 4, 5]
    assert rows["c"][1] == -7 and rows["n"][1] is None and rows["s"][1] == "\x00"


def test_time_travel_before_evolution_uses_old_schema(evolved):
    table = tdbsql.query("SELECT * FROM array", evolved, timestamp=B + 12)
    assert table.column_names == ["x", "a", "b"]
    dropped = tdbsql.query("SELECT * FROM array", evolved, timestamp=B + 30)
    assert "b" not in dropped.column_names
    sql = f"SELECT b FROM array FOR SYSTEM_TIME AS OF {B + 22} WHERE x = 3"
    assert tdbsql.query(sql, evolved).column("b").to_pylist() == [3.0]


def test_evolution_then_consolidation(evolved):
    consolidate(evolved)
    for t in TIMES:
        assert_same(evolved, B + t)
    vacuum(evolved)
    for t in (12, 22, 100):
        assert_same(evolved, B + t)


def test_dense_evolution(tmp_path):
    uri = create(str(tmp_path / "d"), [int_dim(hi=19, tile=4)], [tiledb.Attr("a", dtype=np.int32)],
                 sparse=False)
    with tiledb.open(uri, "w", timestamp=B + 10) as A:
        A[0:6] = np.arange(6, dtype=np.int32)
    evolve(uri, B + 15, add(tiledb.Attr("s", dtype=str)),
           add(tiledb.Attr("g", dtype=np.float32, fill=1.5)),
           add(tiledb.Attr("n", dtype=np.int16, nullable=True)))
    with tiledb.open(uri, "w", timestamp=B + 20) as A:
        A[4:9] = {"a": np.arange(5, dtype=np.int32) + 10,
                  "s": np.array(["p", "q", "", "r", "s"], dtype=object),
                  "g": np.arange(5, dtype=np.float32),
                  "n": pa.array([0, None, 2, None, 4], pa.int16())}
    for t in (10, 15, 20, 100):
        assert_same(uri, B + t)


def test_tdbsql_consolidates_dense_fragments_older_than_an_evolution(tmp_path):
    """Every fragment merged predates the attribute added later: tdbsql's consolidation
    reads them with the schema it writes (was a raw KeyError), as TileDB's does -- the
    new attribute is its fill value in the merged fragment.  (Small timestamps: the
    evolution's schema file sorts after the creation's, so it is in force now.)"""
    uri = create(str(tmp_path / "d"), [int_dim(hi=19, tile=4)], [tiledb.Attr("a", dtype=np.int32)],
                 sparse=False)
    for t, lo in ((10, 0), (20, 5)):
        with tiledb.open(uri, "w", timestamp=t) as A:
            A[lo:lo + 7] = np.arange(7, dtype=np.int32) + t
    evolve(uri, 30, add(tiledb.Attr("g", dtype=np.float32, fill=1.5)),
           add(tiledb.Attr("s", dtype=str)))
    before = {t: assert_same(uri, t) for t in (10, 20, None)}
    tdbsql.consolidate(uri)
    assert [f.timestamp_range for f in tdbsql.open(uri).fragments] == [(10, 20)]
    for t, rows in before.items():
        assert assert_same(uri, t) == rows
    assert set(before[None]["g"]) == {1.5} and before[None]["a"][5] == 20


def test_attribute_dropped_and_added_again_with_another_type(tmp_path):
    uri = create(str(tmp_path / "a"), [int_dim()], [tiledb.Attr("a", dtype=np.int32),
                                                   tiledb.Attr("b", dtype=np.int32)])
    write_sparse(uri, B + 10, np.array([1, 2]), a=np.array([1, 2], dtype=np.int32),
                 b=np.array([7, 8], dtype=np.int32))
    evolve(uri, B + 15, drop("b"))
    evolve(uri, B + 25, add(tiledb.Attr("b", dtype=np.float64)))
    write_sparse(uri, B + 30, np.array([5]), a=np.array([50], dtype=np.int32), b=np.array([0.5]))
    assert_same(uri, B + 10)
    assert_same(uri, B + 20)
    # tiledb reinterprets the old int32 bytes as float64 (garbage); tdbsql reads the new
    # attribute's fill value in the fragment written before it existed.
    table = tdbsql.query("SELECT x, b FROM array ORDER BY x", uri, timestamp=B + 40)
    b = table.column("b").to_pylist()
    assert table.column("x").to_pylist() == [1, 2, 5]
    assert np.isnan(b[0]) and np.isnan(b[1]) and b[2] == 0.5


def test_schema_choice_follows_name_order(tmp_path):
    # An evolution stamped 15 ms sorts (by name) BEFORE the create schema stamped with the wall
    # clock ("__15_..." < "__17..."): TileDB then takes the create schema as the newest one at
    # "now", and no schema at all qualifies at 20 (so it falls back to the first by name).
    uri = create(str(tmp_path / "a"), [int_dim()], [tiledb.Attr("a", dtype=np.int32)])
    write_sparse(uri, 10, np.array([1]), a=np.array([1], dtype=np.int32))
    evolve(uri, 15, add(tiledb.Attr("c", dtype=np.int64, fill=-7)))
    for t in (10, 20, None):
        rows = assert_same(uri, t)
        assert list(rows) == columns_at(uri, t)


def current_domain(dim, hi):
    box = tiledb.NDRectangle(tiledb.default_ctx(), tiledb.Domain(dim))
    box.set_range(0, 1, hi)
    domain = tiledb.CurrentDomain(tiledb.default_ctx())
    domain.set_ndrectangle(box)
    return domain


@pytest.mark.parametrize("sparse", [True, False])
def test_current_domain_in_force_bounds_the_cells(tmp_path, sparse):
    # Made with the current domain 1..10, expanded to 1..100 at B + 20; x 70, 71 written
    # (after the expansion) stamped B + 5, before it.  tiledb reads no cell outside the
    # current domain of the schema in force: at B + 7 and B + 10 they are not there.
    dim = int_dim(lo=1, hi=1000)
    schema = tiledb.ArraySchema(domain=tiledb.Domain(dim), sparse=sparse,
                                attrs=[tiledb.Attr("a", dtype=np.int64)])
    schema.set_current_domain(current_domain(dim, 10))
    uri = str(tmp_path / "a")
    tiledb.Array.create(uri, schema)

    def write(t, lo, hi):
        with tiledb.open(uri, "w", timestamp=B + t) as A:
            coords = np.arange(lo, hi + 1, dtype=np.int64)
            if sparse:
                A[coords] = {"a": coords * 10}
            else:
                A[lo:hi + 1] = {"a": coords * 10}

    write(10, 1, 10)
    evolve(uri, B + 20, lambda se: se.expand_current_domain(current_domain(dim, 100)))
    write(30, 50, 52)
    write(5, 70, 71)
    for t, cells in ((7, []), (10, range(1, 11)), (25, [*range(1, 11), 70, 71])):
        got = tdbsql.query("SELECT x, a FROM array ORDER BY x", uri, timestamp=B + t)
        with tiledb.open(uri, timestamp=B + t) as A:
            assert A.schema.current_domain.ndrectangle.range(0) == ((1, 10) if t < 20 else (1, 100))
            ned = A.nonempty_domain()[0]
            lo, hi = max(ned[0], 1), min(ned[1], A.schema.current_domain.ndrectangle.range(0)[1])
            want = A.query(coords=True).multi_index[lo:hi] if lo <= hi else {"x": np.array([]), "a": np.array([])}
        assert got.column("x").to_pylist() == want["x"].tolist()
        assert got.column("a").to_pylist() == want["a"].tolist()
        if sparse:  # dense: the box between them holds fill values
            assert got.column("x").to_pylist() == list(cells)
    if sparse:
        assert_same(uri, B + 10)
        assert_same(uri, B + 40)


# -- enumerations -------------------------------------------------------------------------------


def enum_array(uri, values, dtype=np.int8, nullable=False, sparse=True, ordered=False):
    enm = tiledb.Enumeration("e", ordered=ordered, values=values)
    schema = tiledb.ArraySchema(
        domain=tiledb.Domain(int_dim()), sparse=sparse,
        attrs=[tiledb.Attr("c", dtype=dtype, enum_label="e", nullable=nullable),
               tiledb.Attr("v", dtype=np.int32)], enums=[enm])
    tiledb.Array.create(uri, schema)
    return uri


def test_enumeration_as_dictionary(tmp_path):
    uri = enum_array(str(tmp_path / "a"), ["red", "green", "blue", ""])
    write_sparse(uri, 10, np.array([1, 2, 3, 4]), c=np.array([0, 2, 1, 3], dtype=np.int8),
                 v=np.arange(4, dtype=np.int32))
    table = tdbsql.query("SELECT * FROM array", uri)
    assert pa.types.is_dictionary(table.schema.field("c").type)
    with tiledb.open(uri) as A:
        expected = A.query(return_arrow=True).df[:]
    assert table.column("c").combine_chunks().dictionary.to_pylist() == \
        expected.column("c").combine_chunks().dictionary.to_pylist()
    assert assert_same(uri, None)["c"] == ["red", "blue", "green", ""]


@pytest.mark.parametrize("values,dtype", [
    ([10, 20, 30], np.int16), ([0.5, 1.5], np.uint8), (["ä", "ß", "z"], np.uint32),
])
def test_enumeration_value_types(tmp_path, values, dtype):
    uri = enum_array(str(tmp_path / "a"), values, dtype=dtype)
    idx = np.arange(len(values), dtype=dtype)[::-1].copy()
    write_sparse(uri, 10, np.arange(len(values)), c=idx, v=np.arange(len(values), dtype=np.int32))
    assert_same(uri, None)


def test_nullable_enumerated_attribute(tmp_path):
    uri = enum_array(str(tmp_path / "a"), ["a", "b"], nullable=True)
    write_sparse(uri, 10, np.array([1, 2, 3]),
                 c=pa.array([0, None, 1], pa.int8()),
                 v=np.arange(3, dtype=np.int32))
    assert assert_same(uri, None)["c"] == ["a", None, "b"]


def test_dense_enumerated_attribute(tmp_path):
    uri = enum_array(str(tmp_path / "a"), ["lo", "mid", "hi"], sparse=False)
    with tiledb.open(uri, "w", timestamp=10) as A:
        A[3:7] = {"c": np.array([2, 0, 1, 2], dtype=np.int8), "v": np.arange(4, dtype=np.int32)}
    assert_same(uri, None)


def test_extended_enumeration_and_time_travel(tmp_path):
    uri = enum_array(str(tmp_path / "a"), ["red", "green", "blue"])
    write_sparse(uri, B + 10, np.array([1, 2, 3]), c=np.array([0, 2, 1], dtype=np.int8),
                 v=np.arange(3, dtype=np.int32))
    with tiledb.open(uri) as A:
        extended = A.enum("e").extend(["purple", "teal"])
    evolve(uri, B + 20, lambda se: se.extend_enumeration(extended))
    write_sparse(uri, B + 30, np.array([4, 5]), c=np.array([3, 4], dtype=np.int8),
                 v=np.array([4, 5], dtype=np.int32))
    for t in (10, 15, 20, 30, 100):
        assert_same(uri, B + t)
    labels = tdbsql.query("SELECT c FROM array", uri, timestamp=B + 15).column("c")
    assert labels.combine_chunks().dictionary.to_pylist() == ["red", "green", "blue"]
    rows = assert_same(uri, B + 100)
    assert rows["c"] == ["red", "blue", "green", "purple", "teal"]


def test_enumerated_attribute_added_by_evolution(tmp_path):
    uri = create(str(tmp_path / "a"), [int_dim()], [tiledb.Attr("v", dtype=np.int32)])
    write_sparse(uri, B + 10, np.arange(3), v=np.arange(3, dtype=np.int32))
    evolve(uri, B + 15,
           lambda se: se.add_enumeration(tiledb.Enumeration("e", ordered=True, values=["a", "b"])),
           add(tiledb.Attr("c", dtype=np.int8, enum_label="e")))
    write_sparse(uri, B + 20, np.array([5]), v=np.array([5], dtype=np.int32),
                 c=np.array([1], dtype=np.int8))
    assert_same(uri, B + 12)
    # Older fragments hold the fill value -128, which names no label: tiledb-py fails to
    # convert it ("Index -128 out of bounds"); tdbsql returns NULL.
    with pytest.raises(IndexError):
        with tiledb.open(uri, timestamp=B + 30) as A:
            A.query(return_arrow=True).df[:]
    column = tdbsql.query("SELECT c FROM array ORDER BY x", uri, timestamp=B + 30).column("c")
    assert column.to_pylist() == [None, None, None, "b"]
    assert column.type.ordered


def test_dense_attribute_dropped_and_added_again_with_another_type(tmp_path):
    uri = create(str(tmp_path / "d"), [int_dim(hi=9, tile=5)],
                 [tiledb.Attr("a", dtype=np.int32), tiledb.Attr("b", dtype=np.int32)],
                 sparse=False)
    with tiledb.open(uri, "w", timestamp=B + 10) as A:
        A[0:4] = {"a": np.arange(4, dtype=np.int32), "b": np.arange(4, dtype=np.int32) + 7}
    evolve(uri, B + 15, drop("b"))
    evolve(uri, B + 25, add(tiledb.Attr("b", dtype=np.float64)))
    with tiledb.open(uri, "w", timestamp=B + 30) as A:
        A[2:6] = {"a": np.arange(4, dtype=np.int32), "b": np.arange(4.0)}
    b = tdbsql.query("SELECT b FROM array ORDER BY x", uri, timestamp=B + 40).column("b")
    assert np.isnan(b[0].as_py()) and np.isnan(b[1].as_py())
    assert b.to_pylist()[2:] == [0.0, 1.0, 2.0, 3.0]


def test_schema_needs_only_the_schema_folder(evolved, monkeypatch):
    """Opening an array and taking its schema lists ``__schema`` only (the root, ``__commits``
    and ``__fragment_meta`` are listed when fragments are first needed), and picks the same
    schema the full listing does, at every window."""
    from tdbsql.storage import vfs
    from tdbsql.storage.array import Array

    listed = []
    real_list_dir = vfs.list_dir

    def list_dir(path):
        listed.append(os.path.relpath(path, evolved))
        return real_list_dir(path)

    monkeypatch.setattr(vfs, "list_dir", list_dir)
    for t in (10, 15, 22, 30, 100):
        listed.clear()
        array = Array(evolved, B + t)
        names = [a.name for a in array.schema.attributes]
        assert listed == ["__schema"]
        assert names == columns_at(evolved, B + t)[1:]
        assert array.schema is array.schemas[array.directory.latest_schema.name]
        assert {"__commits", "."} <= set(listed)  # the full listing, now that it is used
    with pytest.raises(tdbsql.ArrayNotFoundError):  # still refused at open, not later
        Array(os.path.join(evolved, "__commits"))


def test_unlabelled_indices_are_null_in_every_aggregate(tmp_path):
    """Unwritten dense cells of an enumerated attribute hold the fill index -128, which names no
    label: tdbsql reads NULL there, so count(c) counts the labelled cells only -- the streamed
    count of a non-nullable column must not count rows."""
    uri = enum_array(str(tmp_path / "a"), ["lo", "hi"], sparse=False)
    with tiledb.open(uri, "w", timestamp=10) as A:
        A[3:7] = {"c": np.array([1, 0, 1, 1], dtype=np.int8), "v": np.arange(4, dtype=np.int32)}
    with tiledb.open(uri, "w", timestamp=20) as A:
        A[9:11] = {"c": np.array([0, 1], dtype=np.int8), "v": np.arange(2, dtype=np.int32)}
    run = lambda sql: tdbsql.query(sql, uri).to_pylist()  # noqa: E731
    assert run("SELECT count(*) AS n, count(c) AS c, count(v) AS v FROM array") == \
        [{"n": 8, "c": 6, "v": 8}]
    assert run("SELECT count(c) AS c FROM array WHERE x >= 7") == [{"c": 2}]
    assert run("SELECT count(*) AS n FROM array WHERE c IS NULL") == [{"n": 2}]
