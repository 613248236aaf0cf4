"""Timestamped names and the .con/.ign/.vac files, against arrays written by ``tiledb``."""

from __future__ import annotations

import os
import re
import shutil

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

tiledb = pytest.importorskip("tiledb")

from tdbsql.errors import CorruptArrayError  # noqa: E402
from tdbsql.format.commits import (  # noqa: E402
    ConsolidatedCommit,
    encode_consolidated_commits,
    encode_ignore_file,
    encode_vacuum_file,
    parse_consolidated_commits,
    parse_ignore_file,
    parse_vacuum_file,
    vacuum_entry_path,
)
from tdbsql.format.delete_condition import parse_delete_condition  # noqa: E402
from tdbsql.format.names import (  # noqa: E402
    KNOWN_EXTENSIONS,
    LAYOUT_NO_VERSION,
    LAYOUT_UUID_FIRST,
    LAYOUT_VERSIONED,
    TimestampedName,
    consolidated_name,
    new_name,
    now_ms,
    parse_name,
)

UUID = "5dc2cc9cce204a189f825fd4919d0c55"


def _files(uri: str) -> dict[str, bytes]:
    out = {}
    for root, _dirs, files in os.walk(uri):
        for f in files:
            p = os.path.join(root, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, uri)] = fh.read()
    return out


def _write(uri: str, t: int) -> None:
    with tiledb.open(uri, "w", timestamp=t) as A:
        A[np.arange(3) + 10 * t] = np.arange(3, dtype=np.int32) * t


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    """Snapshots of one array's files after each consolidation / vacuum step."""
    uri = str(tmp_path_factory.mktemp("names") / "arr")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 99), tile=10, dtype=np.int64))
    schema = tiledb.ArraySchema(domain=dom, sparse=True, attrs=[tiledb.Attr("a", dtype=np.int32)])
    tiledb.Array.create(uri, schema)
    for t in (1, 2, 3):
        _write(uri, t)
    with tiledb.open(uri, "d", timestamp=4) as A:
        A.query(cond="a < 3").submit()
    with tiledb.open(uri, "w", timestamp=5) as A:
        A.meta["k"] = 1
    snaps = {"written": _files(uri)}
    tiledb.consolidate(uri, config=tiledb.Config({"sm.consolidation.mode": "commits"}))
    snaps["commits_consolidated"] = _files(uri)
    _write(uri, 6)
    tiledb.consolidate(uri, config=tiledb.Config({"sm.consolidation.mode": "fragments"}))
    snaps["fragments_consolidated"] = _files(uri)
    tiledb.vacuum(uri, config=tiledb.Config({"sm.vacuum.mode": "fragments"}))
    snaps["fragments_vacuumed"] = _files(uri)
    with tiledb.open(uri, "w", timestamp=7) as A:
        A.meta["k"] = 2
    tiledb.consolidate(uri, config=tiledb.Config({"sm.consolidation.mode": "array_meta"}))
    snaps["meta_consolidated"] = _files(uri)
    return snaps


def _only(files: dict[str, bytes], suffix: str) -> tuple[str, bytes]:
    hits = [(k, v) for k, v in files.items() if k.endswith(suffix)]
    assert len(hits) == 1, hits
    return hits[0]


# --- names ----------------------------------------------------------------------------------


def test_every_name_of_a_real_array_parses(history):
    files = history["meta_consolidated"]
    seen_exts = set()
    for rel in files:
        parts = rel.split(os.sep)
        # the timestamped part is the file name, or the fragment folder for fragment files
        named = parts[1] if parts[0] == "__fragments" else parts[-1]
        n = parse_name(named, strict=True)
        seen_exts.add(n.ext)
        if parts[0] in ("__schema", "__meta"):
            assert n.version is None and n.layout == LAYOUT_NO_VERSION
        else:
            assert n.version == 22 and n.layout == LAYOUT_VERSIONED
        assert n.filename == named
        assert re.fullmatch(r"[0-9a-f]{32}", n.uuid)
    assert {".wrt", ".del", ".con", ".ign", ".vac", ""} <= seen_exts


def test_written_timestamps_come_back(history):
    names = [parse_name(k) for k in history["written"] if k.startswith("__commits")]
    assert sorted((n.t1, n.t2, n.ext) for n in names) == [
        (1, 1, ".wrt"), (2, 2, ".wrt"), (3, 3, ".wrt"), (4, 4, ".del")]
    meta = [parse_name(k) for k in history["written"] if k.startswith("__meta")]
    assert [(n.t1, n.t2, n.version) for n in meta] == [(5, 5, None)]


def test_consolidated_names_cover_their_inputs(history):
    con = parse_name(_only(history["commits_consolidated"], ".con")[0])
    assert (con.t1, con.t2) == (1, 4)  # first .wrt to the .del
    frag_vac = parse_name(_only(history["fragments_consolidated"], ".vac")[0])
    assert (frag_vac.t1, frag_vac.t2) == (1, 6)


@pytest.mark.parametrize(
    "name, expected",
    [
        # TileDB 1.4 (format 1-2): __uuid_t
        (f"__{UUID}_1541540586869", TimestampedName(1541540586869, 1541540586869, UUID, None, "",
                                                    LAYOUT_UUID_FIRST)),
        (f"__{UUID}_5_9", TimestampedName(5, 9, UUID, None, "", LAYOUT_UUID_FIRST)),
        # format 3-4 fragments, and schemas / metadata of every version
        (f"__1_2_{UUID}", TimestampedName(1, 2, UUID, None, "", LAYOUT_NO_VERSION)),
        # legacy root-level commit file of a format-10 fragment
        (f"__1693562063524_1693562063524_{UUID}_10.ok",
         TimestampedName(1693562063524, 1693562063524, UUID, 10, ".ok")),
        (f"file:///tmp/a/__commits/__3_4_{UUID}_22.vac/", TimestampedName(3, 4, UUID, 22, ".vac")),
        (f"__0_18446744073709551615_{UUID}_4294967295",
         TimestampedName(0, 2**64 - 1, UUID, 4294967295, "")),
    ],
)
def test_historic_layouts(name, expected):
    parsed = parse_name(name, strict=True)
    assert parsed == expected
    assert parse_name(parsed.filename) == parsed


def test_format_version_inferred_like_tiledb():
    assert parse_name(f"__{UUID}_7").format_version == 2
    assert parse_name(f"__1_2_{UUID}").format_version == 4
    assert parse_name(f"__1_2_{UUID}_11").format_version == 11


@pytest.mark.parametrize(
    "junk",
    ["__array_schema.tdb", "__lock.tdb", "__meta", "__commits", "foo", "", "__1_1_x_22",
     f"__2_1_{UUID}_22", f"__1_1_{UUID}_22.tmp", f"__1_1_{UUID}_22.wrt.tmp", f"__a_1_{UUID}",
     f"__1_1_{UUID}_", f"_1_1_{UUID}_22", f"__1_1_{UUID}_22_3", f"__1_1_{UUID[:-1]}g_22",
     f"__1_18446744073709551616_{UUID}_22", f"__1_1_{UUID}_4294967296"],
)
def test_junk_is_skipped_or_rejected(junk):
    assert parse_name(junk) is None
    with pytest.raises(CorruptArrayError):
        parse_name(junk, strict=True)


def test_new_name_looks_like_tiledbs():
    n = parse_name(new_name(5, 7), strict=True)
    assert (n.t1, n.t2, n.version, n.ext) == (5, 7, 22, "")
    assert re.fullmatch(r"[0-9a-f]{32}", n.uuid)
    assert new_name(5, 7) != new_name(5, 7)
    assert parse_name(new_name(3, 3, None)).version is None
    assert parse_name(new_name(3, 3, 22, ".wrt")).ext == ".wrt"
    before = now_ms()
    now = parse_name(new_name(0, 0))
    assert before <= now.t1 == now.t2 <= now_ms()
    with pytest.raises(ValueError):
        new_name(2, 1)
    first, last = parse_name(f"__1_2_{UUID}_22"), parse_name(f"__5_9_{UUID}_22")
    assert parse_name(consolidated_name(first, last, ext=".con")).timestamp_range == (1, 9)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    t1=st.integers(0, 2**64 - 1), dt=st.integers(0, 2**20),
    version=st.one_of(st.none(), st.integers(0, 2**32 - 1)),
    ext=st.sampled_from(sorted(KNOWN_EXTENSIONS)),
    uid=st.text("0123456789abcdef", min_size=32, max_size=32),
)
def test_name_round_trip(t1, dt, version, ext, uid):
    t2 = min(t1 + dt, 2**64 - 1)
    n = TimestampedName(t1, t2, uid, version, ext,
                        LAYOUT_VERSIONED if version is not None else LAYOUT_NO_VERSION)
    assert parse_name(n.filename, strict=True) == n


# --- consolidated commits ------------------------------------------------------------------


def test_con_lists_every_commit_and_embeds_the_delete(history):
    before = history["written"]
    rel, data = _only(history["commits_consolidated"], ".con")
    entries = parse_consolidated_commits(data, rel)
    commits = sorted(k for k in before if k.startswith("__commits"))
    assert [e.uri for e in entries] == commits
    assert [e.ext for e in entries] == [".wrt", ".wrt", ".wrt", ".del"]
    delete = entries[-1]
    assert delete.tile == before[delete.uri]  # the whole .del file, byte for byte
    assert data[delete.tile_offset:delete.tile_offset + len(delete.tile)] == delete.tile
    assert parse_delete_condition(data, rel, offset=delete.tile_offset) == \
        parse_delete_condition(before[delete.uri], delete.uri)
    assert all(e.tile is None for e in entries[:-1])
    assert entries[0].name.t1 == 1
    assert encode_consolidated_commits(entries) == data


def test_vac_lists_consolidated_fragments(history):
    before = history["commits_consolidated"]
    frags = sorted({k.split(os.sep)[1] for k in history["fragments_consolidated"]
                    if k.startswith("__fragments")})
    new = [f for f in frags if parse_name(f).timestamp_range == (1, 6)]
    rel, data = _only(history["fragments_consolidated"], ".vac")
    paths = parse_vacuum_file(data, rel)
    old = sorted(set(frags) - set(new))
    assert sorted(paths) == [f"__fragments/{f}" for f in old]
    assert parse_name(rel).stem == new[0]  # the .vac is named after the new fragment
    assert encode_vacuum_file(paths) == data
    assert data.startswith(b"/__fragments/")  # format 19+: relative with a leading slash
    assert {k for k in before if k.startswith("__commits")} <= set(history["fragments_consolidated"])


def test_ign_hides_vacuumed_commits_of_a_con(history):
    files = history["fragments_vacuumed"]
    con = parse_consolidated_commits(_only(files, ".con")[1])
    rel, data = _only(files, ".ign")
    ignored = parse_ignore_file(data, rel)
    wrts = [e.uri for e in con if e.ext == ".wrt"]
    assert list(ignored) == wrts  # all three were vacuumed with their fragments
    assert not any(w in files for w in wrts)
    assert encode_ignore_file(ignored) == data
    ign = parse_name(rel)
    assert (ign.t1, ign.t2) == (1, 3)


def test_meta_vac_lists_meta_files(history):
    files = history["meta_consolidated"]
    rel, data = _only(files, ".vac")
    assert rel.startswith("__meta") and parse_name(rel).timestamp_range == (5, 7)
    singles = sorted(k.replace(os.sep, "/") for k in files
                     if k.startswith("__meta") and parse_name(k).t1 == parse_name(k).t2)
    assert len(singles) == 2
    assert sorted(parse_vacuum_file(data, rel)) == singles


@pytest.mark.parametrize(
    "line, path",
    [
        ("/__fragments/__1_1_x_22", "__fragments/__1_1_x_22"),
        ("file:///home/u/arr/__fragments/__1_1_x_16", "__fragments/__1_1_x_16"),
        ("s3://b/arr/__meta/__1_2_x", "__meta/__1_2_x"),
        ("/home/u/arr/__1_2_x_5", "__1_2_x_5"),  # root-level legacy fragment
    ],
)
def test_vacuum_entries_of_every_version(line, path):
    assert vacuum_entry_path(line) == path


def test_con_without_final_newline_and_blank_lines():
    data = b"__commits/a.wrt\n\n__commits/b.wrt"
    assert [e.uri for e in parse_consolidated_commits(data)] == ["__commits/a.wrt", "__commits/b.wrt"]


def test_truncated_files_are_corrupt(history):
    rel, data = _only(history["commits_consolidated"], ".con")
    cut_in_size = data.index(b".del\n") + 5 + 3
    for cut in (cut_in_size, len(data) - 1):
        with pytest.raises(CorruptArrayError) as err:
            parse_consolidated_commits(data[:cut], rel)
        assert rel in str(err.value)
    with pytest.raises(CorruptArrayError):
        parse_ignore_file(b"__commits/\xff.wrt\n", "x.ign")
    with pytest.raises(CorruptArrayError):
        parse_vacuum_file(b"no-slash-here\n", "x.vac")


def test_writers_refuse_bad_input():
    with pytest.raises(ValueError):
        encode_consolidated_commits([ConsolidatedCommit("__commits/__1_1_x_22.del")])
    with pytest.raises(ValueError):
        encode_ignore_file(["a\nb"])


def test_parsed_con_drives_a_copy_of_the_array(history, tmp_path):
    """The .con alone commits the fragments: tiledb reads a copy whose .wrt files are gone."""
    src = history["commits_consolidated"]
    uri = tmp_path / "copy"
    for rel, data in src.items():
        if rel.endswith(".wrt"):
            continue
        p = uri / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    entries = parse_consolidated_commits(_only(src, ".con")[1])
    (uri / "__commits").mkdir(exist_ok=True)
    with tiledb.open(str(uri)) as A:
        got = sorted(A[:]["d"].tolist())
    # fragments 1..3 at d=10t..10t+2 with a = i*t; the delete removed a < 3
    committed = [parse_name(e.uri).t1 for e in entries if e.ext == ".wrt"]
    expected = sorted(10 * t + i for t in committed for i in range(3) if i * t >= 3)
    assert got == expected
    shutil.rmtree(uri)


# --- one home for the commit-file rules: names helpers and commit_files ------------------------


@pytest.mark.parametrize("name", [
    "__1_1_" + UUID + "_22.wrt", "__commits/__1_1_" + UUID + "_22.del", "x.ok", "a.b.upd",
    "__commits/x.del/", "a.b/c", "noext", ".con", "__meta/__1_2_" + UUID + ".vac", "f.meta",
])
def test_extension_is_endswith_and_marked_fragment_strips_markers(name):
    from tdbsql.format.names import KNOWN_EXTENSIONS, MARKER_EXTS, extension, marked_fragment

    for ext in KNOWN_EXTENSIONS - {""}:
        assert (extension(name) == ext) == name.endswith(ext)
    last = name.rsplit("/", 1)[-1]
    expected = last[: -len(extension(name))] if name.endswith(MARKER_EXTS) else None
    assert marked_fragment(name) == expected


def test_commit_files_are_read_once_for_reads_and_maintenance(tmp_path):
    """The .con / .ign rules (``commit_files``) that the directory listing, commits
    consolidation and vacuum all use: a .ign hides its lines from every .con, embedded
    conditions come from the first .con holding them, files count by extension."""
    from tdbsql.format.names import COMMITS_DIR
    from tdbsql.storage.commit_files import read_commit_files
    from tdbsql.storage.consolidate import commits_plan
    from tdbsql.storage.directory import list_array

    uri = str(tmp_path / "a")
    tiledb.Array.create(uri, tiledb.ArraySchema(
        domain=tiledb.Domain(tiledb.Dim("d", domain=(0, 9), tile=10, dtype=np.int64)),
        sparse=True, attrs=[tiledb.Attr("a", dtype=np.int32)]))
    commits = os.path.join(uri, COMMITS_DIR)
    wrt = [f"{COMMITS_DIR}/__{t}_{t}_{UUID}_22.wrt" for t in (1, 2, 3)]
    delete = f"{COMMITS_DIR}/__4_4_{UUID}_22.del"

    def put(name, data):
        with open(os.path.join(commits, name), "wb") as f:
            f.write(data)

    put(f"__1_4_{UUID}_22.con", encode_consolidated_commits(
        [ConsolidatedCommit(wrt[0]), ConsolidatedCommit(wrt[1]), ConsolidatedCommit(delete, b"T1")]))
    put("notes.con", encode_consolidated_commits(  # no timestamped name: still a .con
        [ConsolidatedCommit(wrt[2]), ConsolidatedCommit(delete, b"T2")]))
    put(f"__5_5_{UUID}_22.ign", encode_ignore_file([wrt[1]]))
    files = read_commit_files(uri)
    assert files.con_files == (f"{COMMITS_DIR}/__1_4_{UUID}_22.con", f"{COMMITS_DIR}/notes.con")
    assert files.ign_files == (f"{COMMITS_DIR}/__5_5_{UUID}_22.ign",)
    assert files.consolidated == {wrt[0], wrt[2], delete}
    assert files.embedded == {delete: b"T1"}
    assert [e.uri for e in files.con_entries[files.con_files[1]]] == [wrt[2], delete]
    assert list_array(uri).consolidated == files.consolidated
    assert commits_plan(uri).files.consolidated == files.consolidated
    assert read_commit_files(uri, os.listdir(commits)[:0]).consolidated == frozenset()
