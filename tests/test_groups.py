"""TileDB groups: tdbsql reads the members and metadata ``tiledb`` wrote, ``tiledb`` reads the
groups tdbsql wrote, and a group's arrays are tables in SQL."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import time

import numpy as np
import pytest
import tiledb
from hypothesis import given, settings
from hypothesis import strategies as st

import tdbsql
from tdbsql.format.generic_tile import encode_generic_tile
from tdbsql.format.metadata import GENERIC_TILE_PIPELINE
from tdbsql.format.names import new_name, now_ms


def _array(uri: str, values: list[float]) -> str:
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 99), tile=10, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, attrs=[
        tiledb.Attr("v", dtype=np.float64)]))
    with tiledb.open(uri, "w") as A:
        A[np.arange(len(values), dtype=np.int64)] = {"v": np.array(values)}
    return uri


def _members_by_tiledb(path: str) -> set[tuple[str, str | None, str]]:
    with tiledb.Group(path) as g:
        return {(os.path.normpath(m.uri.removeprefix("file://")), m.name,
                 "array" if m.type is tiledb.Array else "group") for m in g}


def _members_by_tdbsql(path: str, timestamp=None) -> set[tuple[str, str | None, str]]:
    return {(p, m.name, "array" if m.kind == 2 else "group")
            for m, p in tdbsql.open_group(path, timestamp=timestamp).members}


def _wait_a_millisecond():
    start = now_ms()
    while now_ms() <= start:
        time.sleep(0.0005)


@pytest.fixture(scope="module")
def made_by_tiledb(tmp_path_factory) -> str:
    """Named, nameless, outside (absolute) and nested members; one removed; metadata."""
    root = tmp_path_factory.mktemp("groups")
    group = str(root / "shop")
    tiledb.group_create(group)
    _array(f"{group}/orders", [1.0, 2.5, 4.0])
    _array(f"{group}/items", [10.0, 20.0])
    _array(f"{group}/old", [7.0])
    outside = _array(str(root / "prices"), [0.5, 1.5, 2.5, 3.5])
    tiledb.group_create(f"{group}/archive")
    _array(f"{group}/archive/y2020", [9.0])
    with tiledb.Group(f"{group}/archive", "w") as g:
        g.add("y2020", relative=True)
    with tiledb.Group(group, "w") as g:
        g.add("orders", name="orders", relative=True)
        g.add("items", relative=True)
        g.add("old", name="legacy", relative=True)
        g.add(outside, name="prices")
        g.meta["owner"] = "sales"
        g.meta["version"] = 3
    _wait_a_millisecond()
    with tiledb.Group(group, "w") as g:
        g.remove("legacy")
        g.add("archive", name="archive", relative=True)
    return group


def test_members_equal_tiledbs(made_by_tiledb):
    ours = _members_by_tdbsql(made_by_tiledb)
    assert ours == _members_by_tiledb(made_by_tiledb)
    assert {name for _, name, _ in ours} == {"orders", None, "prices", "archive"}


def test_metadata_equals_tiledbs(made_by_tiledb):
    with tiledb.Group(made_by_tiledb) as g:
        expected = dict(g.meta)
    assert tdbsql.metadata(made_by_tiledb) == expected == {"owner": "sales", "version": 3}


def test_a_removed_member_is_back_before_its_removal(made_by_tiledb):
    first = min(int(name.split("_")[2]) for name in os.listdir(f"{made_by_tiledb}/__group"))
    names = {name for _, name, _ in _members_by_tdbsql(made_by_tiledb, timestamp=first)}
    assert names == {"orders", None, "legacy", "prices"}
    with tiledb.Group(made_by_tiledb, config=tiledb.Config(
            {"sm.group.timestamp_end": str(first)})) as g:
        assert {m.name for m in g} == names


def test_member_arrays_are_tables(made_by_tiledb):
    con = tdbsql.connect().register("shop", made_by_tiledb)
    assert con.tables() == ["shop.archive.y2020", "shop.items", "shop.orders", "shop.prices"]
    got = con.sql("""SELECT o.d, o.v, p.v AS price, shop.items.v AS item
                     FROM shop.orders AS o JOIN shop.prices AS p USING (d)
                     LEFT JOIN shop.items ON items.d = o.d ORDER BY o.d""").fetchall()
    assert got == [(0, 1.0, 0.5, 10.0), (1, 2.5, 1.5, 20.0), (2, 4.0, 2.5, None)]
    assert con.sql("SELECT v FROM shop.archive.y2020").fetchall() == [(9.0,)]
    assert con.sql("SHOW TABLES").fetchall() == [(t,) for t in con.tables()]
    with pytest.raises(tdbsql.SqlError, match="unknown table 'shop.legacy'"):
        con.sql("SELECT * FROM shop.legacy")


def test_a_group_path_names_its_members(made_by_tiledb):
    sql = "SELECT count(*), sum(orders.v) FROM orders JOIN shop.prices USING (d)"
    assert tdbsql.query(sql, made_by_tiledb).to_pylist() == [
        {"count_star()": 3, "sum(orders.v)": 7.5}]
    out = subprocess.run([sys.executable, "-m", "tdbsql", "query", "SELECT sum(v) AS s FROM items",
                          made_by_tiledb, "--format", "csv"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ['"s"', "30"]


def test_writes_reach_a_member_array(made_by_tiledb, tmp_path):
    import shutil

    copy = str(tmp_path / "shop")
    shutil.copytree(made_by_tiledb, copy)
    con = tdbsql.connect().register("shop", copy)
    con.sql("INSERT INTO shop.items VALUES (5, 50.0)")
    con.sql("UPDATE shop.items SET v = v + 1 WHERE d = 1")
    con.sql("DELETE FROM shop.items WHERE d = 0")
    con.sql("CREATE VIEW big AS SELECT d FROM shop.items WHERE v > 20")
    assert con.sql("SELECT * FROM big ORDER BY d").fetchall() == [(1,), (5,)]
    with tiledb.open(f"{copy}/items") as A:
        assert sorted(A[:]["v"].tolist()) == [21.0, 50.0]


def test_groups_written_by_tdbsql_read_in_tiledb(tmp_path):
    group = str(tmp_path / "g")
    tdbsql.create_group(group)
    inner = _array(f"{group}/a", [1.0])
    outer = _array(str(tmp_path / "b"), [2.0, 3.0])
    tdbsql.create_group(f"{group}/sub")
    tdbsql.add_member(group, inner)  # inside the folder: stored relative
    tdbsql.add_member(group, outer, name="bee")
    tdbsql.add_member(group, f"{group}/sub", name="sub")
    tdbsql.put_metadata(group, "title", "made by tdbsql")
    assert _members_by_tiledb(group) == _members_by_tdbsql(group) == {
        (inner, None, "array"), (outer, "bee", "array"), (f"{group}/sub", "sub", "group")}
    with tiledb.Group(group) as g:
        assert dict(g.meta) == {"title": "made by tdbsql"}
        assert g["bee"].uri.endswith("/b")
    tdbsql.remove_member(group, "bee")
    tdbsql.remove_member(group, inner)
    assert _members_by_tiledb(group) == _members_by_tdbsql(group) == {
        (f"{group}/sub", "sub", "group")}
    with tiledb.Group(group, "w") as g:  # tiledb adds to the group tdbsql wrote
        g.add("a", name="again", relative=True)
    assert _members_by_tdbsql(group) == _members_by_tiledb(group)


def test_a_moved_group_keeps_its_relative_members(tmp_path):
    group = str(tmp_path / "g")
    tdbsql.create_group(group)
    tdbsql.add_member(group, _array(f"{group}/a", [1.0, 2.0]), name="a")
    os.rename(group, str(tmp_path / "moved"))
    assert tdbsql.query("SELECT sum(v) AS s FROM a", str(tmp_path / "moved")).to_pylist() == \
        [{"s": 3.0}]


def test_a_version_1_group_file_is_read_whole(tmp_path):
    """Before TileDB 2.19 a details file was the whole list (member version 1, no deleted
    flag) named ``__t1_t2_uuid``: the newest one alone counts."""
    group = str(tmp_path / "g")
    tiledb.group_create(group)
    _array(f"{group}/a", [1.0])
    _array(f"{group}/b", [2.0])

    def member(uri: str, name: str | None) -> bytes:
        raw = struct.pack("<IBBQ", 1, 2, 1, len(uri)) + uri.encode()
        return raw + (struct.pack("<BQ", 1, len(name)) + name.encode() if name else b"\0")

    for members in ([("a", "first"), ("b", None)], [("b", "only")]):
        payload = struct.pack("<IQ", 1, len(members)) + b"".join(member(*m) for m in members)
        data = encode_generic_tile(payload, 22, pipeline=GENERIC_TILE_PIPELINE)
        t = now_ms()
        with open(f"{group}/__group/{new_name(t, t, None)}", "wb") as f:
            f.write(data)
        _wait_a_millisecond()
    assert _members_by_tdbsql(group) == _members_by_tiledb(group) == {
        (f"{group}/b", "only", "array")}


def test_bad_groups_and_members_are_named(tmp_path):
    group = str(tmp_path / "g")
    tdbsql.create_group(group)
    with pytest.raises(tdbsql.InterfaceError, match="exists and is not an empty folder"):
        tdbsql.create_group(group)
    with pytest.raises(tdbsql.ArrayNotFoundError, match="neither a TileDB array nor a group"):
        tdbsql.add_member(group, str(tmp_path / "nothing"))
    a = _array(str(tmp_path / "a"), [1.0])
    tdbsql.add_member(group, a, name="a")
    with pytest.raises(tdbsql.InterfaceError, match="already has a member 'a'"):
        tdbsql.add_member(group, _array(str(tmp_path / "a2"), [1.0]), name="a")
    with pytest.raises(tdbsql.InterfaceError, match="has no member 'zzz'"):
        tdbsql.remove_member(group, "zzz")
    with pytest.raises(tdbsql.ArrayNotFoundError, match="is not a TileDB group"):
        tdbsql.open_group(a)
    with pytest.raises(tdbsql.InterfaceError, match="not encrypted"):
        tdbsql.metadata(group, key=b"k" * 32)
    (details,) = os.listdir(f"{group}/__group")
    with open(f"{group}/__group/{details}", "r+b") as f:
        f.seek(-3, os.SEEK_END)
        f.write(b"\xff\xff\xff")
    with pytest.raises(tdbsql.CorruptArrayError):
        tdbsql.connect().register("g", group)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["tdbsql", "tiledb"]), st.booleans(),
                          st.integers(0, 3), st.booleans()), min_size=1, max_size=8))
def test_changes_by_either_side_read_alike(tmp_path_factory, changes):
    """Adds and removes made by tdbsql and tiledb in turn: both list the same members."""
    root = tmp_path_factory.mktemp("mixed")
    group = str(root / "g")
    tdbsql.create_group(group)
    arrays = [_array(f"{group}/a{i}" if i % 2 else str(root / f"a{i}"), [float(i)])
              for i in range(4)]
    for side, add, which, named in changes:
        current = _members_by_tdbsql(group)
        uri = arrays[which]
        name = f"n{which}" if named else None
        present = [m for m in current if m[0] == uri]
        if add and not present:
            if side == "tdbsql":
                tdbsql.add_member(group, uri, name=name)
            else:
                relative = which % 2 == 1
                with tiledb.Group(group, "w") as g:
                    g.add(os.path.basename(uri) if relative else uri, name=name,
                          relative=relative)
        elif not add and present:
            key = present[0][1] or uri
            if side == "tdbsql":
                tdbsql.remove_member(group, key)
            else:
                with tiledb.Group(group, "w") as g:
                    g.remove(key if present[0][1] else
                             (os.path.basename(uri) if which % 2 else uri))
        else:
            continue
        _wait_a_millisecond()
        assert _members_by_tdbsql(group) == _members_by_tiledb(group)


def test_the_group_command(tmp_path):
    def run(*words):
        return subprocess.run([sys.executable, "-m", "tdbsql", *words], capture_output=True,
                              text=True)

    group = str(tmp_path / "g")
    assert run("group", group, "--create").returncode == 0
    a = _array(f"{group}/a", [1.0, 2.0])
    assert run("group", group, "--add", a, "--name", "first").returncode == 0
    shown = run("group", group)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[1].split() == ["first", "array", a]
    assert "tables: first" in shown.stdout
    missing = run("group", group, "--remove", "second")
    assert missing.returncode == 1
    assert missing.stderr.strip() == "tdbsql: error: the group has no member 'second'"
    assert run("group", group, "--remove", "first").returncode == 0
    assert _members_by_tiledb(group) == set()


def test_a_group_opened_as_an_array_is_named(made_by_tiledb):
    with pytest.raises(tdbsql.ArrayNotFoundError, match="is a TileDB group, not an array"):
        tdbsql.open(made_by_tiledb).schema
