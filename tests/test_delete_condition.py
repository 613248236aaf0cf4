"""Delete conditions (``.del``): parse, evaluate and re-encode, against deletes made by ``tiledb``."""

from __future__ import annotations

import glob
import os
import shutil

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

tiledb = pytest.importorskip("tiledb")

from tdbsql.errors import CorruptArrayError, UnsupportedFormatError  # noqa: E402
from tdbsql.format.delete_condition import (  # noqa: E402
    CombinationOp,
    ConditionOp,
    ExprNode,
    UpdateValue,
    ValueNode,
    deleted_cells,
    deserialize_condition,
    encode_delete_condition,
    encode_update,
    evaluate,
    negate,
    parse_delete_condition,
    parse_update,
    serialize_condition,
)
from tdbsql.format.generic_tile import decode_generic_tile  # noqa: E402

N = 48
_rng = np.random.default_rng(7)
_NULL_NI = np.arange(N) % 5 == 0
_NULL_NS = np.arange(N) % 7 == 3
_C3 = [b"abc", b"abd", b"bbc", b"\xffzz", b"aaa", b"zzz", b"a", b""]
_F64_SPECIAL = [np.nan, 0.0, -0.0, np.inf, -np.inf, 1.5]

DATA = {
    "i8": (np.arange(N) - 24).astype(np.int8),
    "u8": _rng.integers(0, 256, N).astype(np.uint8),
    "i16": _rng.integers(-2000, 2000, N).astype(np.int16),
    "u16": _rng.integers(0, 65536, N).astype(np.uint16),
    "i32": _rng.integers(-100, 100, N).astype(np.int32),
    "u32": _rng.integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32),
    "i64": _rng.integers(-5, 5, N).astype(np.int64),
    "u64": (np.arange(N, dtype=np.uint64) * np.uint64(2**58)),
    "f32": np.linspace(-1, 1, N).astype(np.float32),
    "f64": np.array([_F64_SPECIAL[i] if i < 6 else (i - 24) / 8 for i in range(N)]),
    "s": np.array([f"s{i:02d}" if i % 9 else "é{i}" for i in range(N)], dtype=object),
    "asc": np.array([bytes([97 + i % 26]) * (i % 3) if i % 11 else b"\xfe" for i in range(N)],
                    dtype=object),
    "c1": np.array([bytes([v]) for v in _rng.choice([65, 97, 98, 122, 255, 0], N)], dtype="S1"),
    "c3": np.array([_C3[i % len(_C3)] for i in range(N)], dtype="S3"),
    "b": np.arange(N) % 3 == 0,
    "dt": np.datetime64("2020-01-01") + np.arange(N).astype("timedelta64[D]"),
    "ni": np.where(_NULL_NI, 0, np.arange(N) % 10).astype(np.int32),
    "ns": np.array(["" if i % 7 == 6 else f"n{i % 10}" for i in range(N)], dtype=object),
}
VALIDITY = {"ni": ~_NULL_NI, "ns": ~_NULL_NS}


def _attrs():
    a = tiledb.Attr
    return [a("i8", dtype=np.int8), a("u8", dtype=np.uint8), a("i16", dtype=np.int16),
            a("u16", dtype=np.uint16), a("i32", dtype=np.int32), a("u32", dtype=np.uint32),
            a("i64", dtype=np.int64), a("u64", dtype=np.uint64), a("f32", dtype=np.float32),
            a("f64", dtype=np.float64), a("s", dtype=str, var=True),
            a("asc", dtype="ascii", var=True), a("c1", dtype="S1"), a("c3", dtype="S3"),
            a("b", dtype=np.bool_), a("dt", dtype="datetime64[D]"),
            a("ni", dtype=np.int32, nullable=True), a("ns", dtype=str, var=True, nullable=True)]


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    uri = str(tmp_path_factory.mktemp("del") / "template")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 999), tile=100, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, attrs=_attrs()))
    values = dict(DATA)
    values["ni"] = pa.array([None if n else int(v) for v, n in zip(DATA["ni"], _NULL_NI)], pa.int32())
    values["ns"] = pa.array([None if n else v for v, n in zip(DATA["ns"], _NULL_NS)], pa.string())
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[np.arange(N)] = values
    return uri


def _delete(template: str, tmp_path, cond: str) -> tuple[str, str]:
    uri = str(tmp_path / "arr")
    shutil.copytree(template, uri)
    with tiledb.open(uri, "d", timestamp=2) as A:
        A.query(cond=cond).submit()
    (del_file,) = glob.glob(os.path.join(uri, "__commits", "*.del"))
    return uri, del_file


def _columns() -> dict:
    cols = dict(DATA)
    cols["s"] = pa.array(list(DATA["s"]), pa.string())
    cols["d"] = np.arange(N, dtype=np.int64)
    return cols


CONDITIONS = [
    "i8 < 0", "i8 >= -3", "u8 > 200", f"u8 == {int(DATA['u8'][5])}", "i16 != 5", "u16 <= 1000",
    "i32 < 0 and i32 > -50", "u32 > 3000000000", "i64 == 2", "u64 >= 9223372036854775808",
    "f32 < 0.25", "f64 >= 0.0", "f64 == 0.0", "f64 != 0.0", "f64 in [0.0, 1.5]",
    "f64 not in [0.0]", "f64 < -1.0", "s == 's05'", "s < 's10'", "s >= 'é'", "asc > 'm'",
    "asc == ''", "asc < 'b'", "c1 < 'b'", "c1 >= 'a'", "c3 == 'abc'", "c3 < 'abd'",
    "c3 in ['abc', 'zzz']", "c3 not in ['abc', 'a\\x00\\x00']", "b == True", "b != 1", "dt < 18270",
    "ni < 5", "ni != 4", "ni in [1, 2, 3]", "ni not in [1, 2, 3]", "ns == None", "ns != None",
    "ns < 'n5'", "ns == ''", "s in ['s01', 's02', 'é9']", "i8 < -5 or i8 > 5", "not (i8 < 0)",
    "i8 < 0 and (u8 > 100 or s == 's03')", "not (ni < 5) and ns != 'n6'",
    "i8 in [1, 2, 3] or f32 > 0.5", "d < 10", "d >= 30 and i8 < 30", "i16 < 0 or i16 > 500 or u8 < 3",
]


@pytest.mark.parametrize("cond", CONDITIONS)
def test_delete_matches_tiledb(template, tmp_path, cond):
    uri, del_file = _delete(template, tmp_path, cond)
    with tiledb.open(uri) as A:
        survivors = set(A[:]["d"].tolist())
    expected_deleted = np.array([i not in survivors for i in range(N)])

    data = open(del_file, "rb").read()
    tree = parse_delete_condition(data, del_file)
    assert np.array_equal(deleted_cells(tree, _columns(), VALIDITY), expected_deleted)
    assert np.array_equal(evaluate(tree, _columns(), VALIDITY), ~expected_deleted)
    # re-encoding gives TileDB's bytes: the tile payload and the whole (gzipped) file
    assert serialize_condition(tree) == decode_generic_tile(data, del_file).tobytes()
    assert encode_delete_condition(tree) == data


def test_tiledb_stores_the_negation(template, tmp_path):
    _, del_file = _delete(template, tmp_path, "i8 < 0 and (u8 > 100 or s in ['a', 'bc'])")
    tree = parse_delete_condition(open(del_file, "rb").read(), del_file)
    user = ExprNode(CombinationOp.AND, (
        ValueNode("i8", ConditionOp.LT, b"\x00"),
        ExprNode(CombinationOp.OR, (
            ValueNode("u8", ConditionOp.GT, b"\x64"),
            ValueNode.member_set("s", [b"a", b"bc"]),
        )),
    ))
    assert tree == negate(user)
    assert tree.children[1].children[1].members == (b"a", b"bc")
    assert tree.children[1].children[1].op == ConditionOp.NOT_IN


def test_null_test_on_a_fixed_size_field_is_unreadable(template, tmp_path):
    # TileDB stores "ni == None" as "ni != <empty>" and then cannot read its own array.
    uri, del_file = _delete(template, tmp_path, "ni == None")
    with pytest.raises(tiledb.TileDBError, match="size mismatch"):
        with tiledb.open(uri) as A:
            A[:]
    tree = parse_delete_condition(open(del_file, "rb").read(), del_file)
    assert tree == ValueNode("ni", ConditionOp.NE, b"")
    with pytest.raises(CorruptArrayError, match="size mismatch"):
        evaluate(tree, _columns(), VALIDITY)


def test_timestamps_limit_a_delete():
    tree = ValueNode("x", ConditionOp.GE, np.int32(5).tobytes())  # DELETE WHERE x < 5
    x = np.array([1, 7, 2, 3], np.int32)
    ts = np.array([1, 1, 9, 4], np.uint64)
    assert deleted_cells(tree, {"x": x}).tolist() == [True, False, True, True]
    assert deleted_cells(tree, {"x": x}, cell_timestamps=ts, delete_timestamp=4).tolist() == \
        [True, False, False, True]


def test_missing_field_and_constant_ops():
    cols = {"x": np.array([1, 2, 3], np.int64)}
    assert evaluate(ValueNode("gone", ConditionOp.EQ, b"\0" * 8), cols).tolist() == [False] * 3
    always = ExprNode(CombinationOp.OR, (ValueNode("x", ConditionOp.ALWAYS_TRUE),
                                         ValueNode("x", ConditionOp.ALWAYS_FALSE)))
    assert evaluate(always, cols).tolist() == [True] * 3
    assert evaluate(ValueNode("x", ConditionOp.ALWAYS_TRUE), cols,
                    {"x": np.array([1, 0, 1], np.uint8)}).tolist() == [True, False, True]
    assert evaluate(ExprNode(CombinationOp.AND, ()), cols).tolist() == [True] * 3
    assert evaluate(ExprNode(CombinationOp.OR, ()), cols).tolist() == [False] * 3
    with pytest.raises(UnsupportedFormatError):
        evaluate(ExprNode(CombinationOp.NOT, (ValueNode("x", ConditionOp.ALWAYS_TRUE),)), cols)


def test_column_forms_agree():
    """Strings as pyarrow, numpy object/U arrays, masked arrays and Arrow nulls give one answer."""
    words = ["b", "", "ab", None, "é"]
    node = ValueNode("w", ConditionOp.LT, b"b")
    expected = [False, True, True, False, False]
    valid = {"w": np.array([w is not None for w in words])}
    filled = ["" if w is None else w for w in words]
    assert evaluate(node, {"w": pa.array(words)}).tolist() == expected
    chunked = pa.chunked_array([pa.array(words[:2]), pa.array(words[2:])])
    assert evaluate(node, {"w": chunked}).tolist() == expected
    assert evaluate(node, {"w": pa.array(words, pa.large_string())}).tolist() == expected
    assert evaluate(node, {"w": np.array(filled, dtype=object)}, valid).tolist() == expected
    assert evaluate(node, {"w": np.array(filled)}, valid).tolist() == expected
    masked = np.ma.masked_array(np.array([5, 1, 2, 0, 9], np.int16), mask=[0, 0, 0, 1, 0])
    lt3 = ValueNode("m", ConditionOp.LT, np.int16(3).tobytes())
    assert evaluate(lt3, {"m": masked}).tolist() == [False, True, True, False, False]
    # fixed-size ASCII cells compare whole cells when the type says so
    fixed = np.array([b"ab", b"b", b"\xff"], dtype="S2")
    assert evaluate(node, {"f": fixed}, datatypes={"f": 11}, num_cells=3).tolist() == [False] * 3
    node_f = ValueNode("f", ConditionOp.LT, b"b")
    assert evaluate(node_f, {"f": fixed}, datatypes={"f": 11}).tolist() == [True, False, False]
    assert evaluate(node_f, {"f": fixed}).tolist() == [True, False, True]  # CHAR: first signed byte


def test_update_file_round_trip():
    cond = ValueNode("x", ConditionOp.LT, b"\x05\x00\x00\x00")
    values = (UpdateValue("y", b"\x01\x02"), UpdateValue("zz", b""))
    got_cond, got_values = parse_update(encode_update(cond, values))
    assert got_cond == cond and got_values == values


def _corrupt(payload: bytes, match: str | None = None):
    with pytest.raises(CorruptArrayError, match=match):
        deserialize_condition(payload, "__commits/x.del")


def test_corrupt_payloads(template, tmp_path):
    _, del_file = _delete(template, tmp_path, "i8 < 0 and s in ['a', 'b']")
    data = open(del_file, "rb").read()
    payload = decode_generic_tile(data, del_file).tobytes()
    for cut in range(0, len(payload), 3):
        with pytest.raises(CorruptArrayError) as err:
            deserialize_condition(payload[:cut], "__commits/x.del")
        assert "x.del" in str(err.value)
    with pytest.raises(CorruptArrayError):
        parse_delete_condition(data[:-4], del_file)
    _corrupt(b"\x07", "node type")
    _corrupt(b"\x01\x09\x01\x00\x00\x00a\x00" + bytes(7), "unknown op")
    _corrupt(b"\x00\x03" + bytes(8), "combination op")
    _corrupt(b"\x00\x00" + (2**63).to_bytes(8, "little"), "child count")
    _corrupt(b"\x01\x00\x01\x00\x00\x00a" + (2**40).to_bytes(8, "little"))
    in_node = b"\x01\x06\x01\x00\x00\x00a\x02" + bytes(7) + b"xy"
    _corrupt(in_node + (3).to_bytes(8, "little") + b"abc", "whole number")
    _corrupt(in_node + (8).to_bytes(8, "little") + (5).to_bytes(8, "little"), "past the data")
    _corrupt(in_node + (0).to_bytes(8, "little"), "needs data")
    _corrupt(b"\x00\x00\x01" + bytes(7) + b"\x00\x00\x01" + bytes(7) + b"\x00\x00\x01" + bytes(7))
    deep = b"".join(b"\x00\x01\x01" + bytes(7) for _ in range(300))
    _corrupt(deep + b"\x01\xfd" + bytes(4) + bytes(8), "nested deeper")


_FIELDS = st.sampled_from(["a", "bb", "é"])
_LEAF_OPS = st.sampled_from([o for o in ConditionOp if o not in (ConditionOp.IN, ConditionOp.NOT_IN)])


def _leaves():
    plain = st.builds(ValueNode, _FIELDS, _LEAF_OPS, st.binary(max_size=9))
    sets = st.builds(lambda f, ms, neg: ValueNode.member_set(f, ms, neg), _FIELDS,
                     st.lists(st.binary(min_size=1, max_size=4), min_size=1, max_size=4), st.booleans())
    return plain | sets


_TREES = st.recursive(_leaves(), lambda kids: st.builds(
    lambda op, cs: ExprNode(op, tuple(cs)), st.sampled_from(list(CombinationOp)),
    st.lists(kids, max_size=3)), max_leaves=12)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_TREES)
def test_serialize_round_trip(tree):
    assert deserialize_condition(serialize_condition(tree)) == tree
    assert parse_delete_condition(encode_delete_condition(tree)) == tree


_INT_LEAVES = st.builds(
    lambda f, op, v: ValueNode(f, op, np.int16(v).tobytes()), st.sampled_from(["p", "q"]),
    st.sampled_from([ConditionOp.LT, ConditionOp.LE, ConditionOp.GT, ConditionOp.GE,
                     ConditionOp.EQ, ConditionOp.NE]), st.integers(-4, 4),
) | st.builds(lambda f, vs, neg: ValueNode.member_set(f, [np.int16(v).tobytes() for v in vs], neg),
              st.sampled_from(["p", "q"]), st.lists(st.integers(-4, 4), min_size=1, max_size=3),
              st.booleans())
_INT_TREES = st.recursive(_INT_LEAVES, lambda kids: st.builds(
    lambda op, cs: ExprNode(op, tuple(cs)), st.sampled_from([CombinationOp.AND, CombinationOp.OR]),
    st.lists(kids, min_size=1, max_size=3)), max_leaves=8)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_INT_TREES)
def test_negation_complements_on_valid_cells(tree):
    cols = {"p": np.arange(-5, 5, dtype=np.int16), "q": np.arange(5, -5, -1, dtype=np.int16)}
    assert negate(negate(tree)) == tree
    assert np.array_equal(evaluate(negate(tree), cols), ~evaluate(tree, cols))
    # with NULLs both a condition and its negation are False on the NULL cells
    valid = {"p": np.arange(10) % 4 != 0}
    both = evaluate(negate(tree), cols, valid) | evaluate(tree, cols, valid)
    assert both[valid["p"]].all()
