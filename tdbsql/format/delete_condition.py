"""Delete (``.del``) and update (``.upd``) commit files (spec: delete_commit_file.md,
update_commit_file.md; TileDB ``deletes_and_updates/serialization.cc``, ``query_condition.cc``).

In: the bytes of a ``.del`` file (one generic tile; also embedded in ``.con`` files).  The tile
holds a condition tree: expression nodes ``0 u8, combination op u8, child count u64, children``
and value nodes ``1 u8, op u8, name_len u32, name, value_len u64, value`` followed, for IN and
NOT IN, by ``offsets_len u64`` and that many bytes of ``u64`` member start offsets.

IMPORTANT: the stored tree is the NEGATION of the user's delete condition (``DELETE WHERE a < 5``
stores ``a >= 5``): it says which cells SURVIVE.  ``evaluate`` computes the stored tree the way
TileDB's sparse readers do (True = the cell is kept); ``deleted_cells`` is its complement,
restricted to cells not newer than the delete.

TileDB semantics reproduced here (checked against TileDB 2.30):

* a value node on a NULL cell is False, whatever the op: every delete removes the NULL cells of
  the fields it tests (``DELETE WHERE x < 5`` also deletes the rows where ``x`` is NULL);
* numbers compare as their type (NaN fails every op but ``!=``); IN / NOT IN compare raw bytes
  (so ``0.0 IN [-0.0]`` is False);
* var-sized strings compare bytewise unsigned, shorter prefix first; fixed-size CHAR cells
  compare ONLY their first byte, as a signed char (``'\\xff' < 'a'``), except for IN / NOT IN;
* a field missing from the evaluated cells (added by schema evolution) makes the node False;
* a NOT expression node cannot be evaluated (TileDB refuses); TileDB never writes one;
* a null test (``x == None``) is stored as an empty value and comes back as a comparison with
  an empty value: on strings that compares with ``""``, on fixed-size fields TileDB refuses to
  read the array ("value size mismatch"), and so does ``evaluate``.  So the delete writer
  states SQL's ``IS [NOT] NULL`` as a ``NullTest`` and writes it as value nodes instead
  (``storage.delete_writer``).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Iterable, Mapping, Sequence, Union

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..datatypes import Datatype, type_info
from ..errors import CorruptArrayError, UnsupportedFormatError
from .binary import Reader, Writer
from .generic_tile import decode_generic_tile, encode_generic_tile
from .metadata import GENERIC_TILE_PIPELINE

_MAX_DEPTH = 256  # deeper trees are corrupt files, not real conditions


class ConditionOp(IntEnum):
    LT = 0
    LE = 1
    GT = 2
    GE = 3
    EQ = 4
    NE = 5
    IN = 6
    NOT_IN = 7
    ALWAYS_TRUE = 253
    ALWAYS_FALSE = 254


class CombinationOp(IntEnum):
    AND = 0
    OR = 1
    NOT = 2


_SET_OPS = (ConditionOp.IN, ConditionOp.NOT_IN)
_NEGATED = {
    ConditionOp.LT: ConditionOp.GE, ConditionOp.GE: ConditionOp.LT,
    ConditionOp.GT: ConditionOp.LE, ConditionOp.LE: ConditionOp.GT,
    ConditionOp.EQ: ConditionOp.NE, ConditionOp.NE: ConditionOp.EQ,
    ConditionOp.IN: ConditionOp.NOT_IN, ConditionOp.NOT_IN: ConditionOp.IN,
}


@dataclass(frozen=True)
class ValueNode:
    """``field op value``; for IN / NOT IN ``value`` is the members back to back and
    ``offsets`` where each starts."""

    field: str
    op: ConditionOp
    value: bytes = b""
    offsets: tuple[int, ...] = ()

    @property
    def members(self) -> tuple[bytes, ...]:
        ends = self.offsets[1:] + (len(self.value),)
        return tuple(self.value[s:e] for s, e in zip(self.offsets, ends))

    @classmethod
    def member_set(cls, field: str, members: Sequence[bytes], negated: bool = False) -> "ValueNode":
        """``field [NOT] IN (members)``; only empty members (``s IN ('')``) are the comparison
        with an empty value, as TileDB refuses to read a set without data (the array would
        be unreadable)."""
        if members and not any(members):
            return cls(field, ConditionOp.NE if negated else ConditionOp.EQ, b"")
        offsets, pos = [], 0
        for m in members:
            offsets.append(pos)
            pos += len(m)
        op = ConditionOp.NOT_IN if negated else ConditionOp.IN
        return cls(field, op, b"".join(members), tuple(offsets))


@dataclass(frozen=True)
class ExprNode:
    op: CombinationOp
    children: tuple["Node", ...]


@dataclass(frozen=True)
class NullTest:
    """SQL's ``field IS NULL`` (``is_null``) or ``field IS NOT NULL`` in a condition the delete
    writer builds.  Not a node of the file format (see the module docstring): the writer turns
    it into value nodes before the tree is written."""

    field: str
    is_null: bool


Node = Union[ValueNode, ExprNode, NullTest]


@dataclass(frozen=True)
class UpdateValue:
    """One ``field = value`` of an update commit."""

    field: str
    value: bytes


# --- reading --------------------------------------------------------------------------------


def deserialize_condition(payload: bytes, where: str = "") -> Node:
    """The condition tree of a decoded delete tile (bytes after the tree are ignored, as TileDB
    does)."""
    r = Reader(bytes(payload), where)
    if r.at_end():
        raise r.error("delete condition", "the tile is empty")
    return _read_node(r, 0)


def parse_delete_condition(data: bytes, where: str = "", key: bytes | None = None,
                           offset: int = 0) -> Node:
    """The condition stored in a ``.del`` file (or at ``offset`` in a ``.con`` file)."""
    return deserialize_condition(decode_generic_tile(data, where, key, offset).tobytes(), where)


def parse_update(data: bytes, where: str = "", key: bytes | None = None,
                 offset: int = 0) -> tuple[Node, tuple[UpdateValue, ...]]:
    """The condition and new values of a ``.upd`` file."""
    r = Reader(decode_generic_tile(data, where, key, offset).tobytes(), where)
    cond = _read_node(r, 0)
    count = r.u64("update value count")
    if count > r.remaining // 16:
        raise r.error("update value count", f"{count} values do not fit")
    values = []
    for _ in range(count):
        name = r.string(r.u64("update field name length"), "update field name")
        values.append(UpdateValue(name, r.bytes(r.u64("update value length"), "update value")))
    return cond, tuple(values)


def _read_node(r: Reader, depth: int) -> Node:
    if depth > _MAX_DEPTH:
        raise r.error("delete condition", f"nested deeper than {_MAX_DEPTH} levels")
    node_type = r.u8("condition node type")
    if node_type == 1:
        return _read_value_node(r)
    if node_type != 0:
        raise r.error("condition node type", f"unknown node type {node_type}")
    combo = r.u8("condition combination op")
    if combo > 2:
        raise r.error("condition combination op", f"unknown combination op {combo}")
    count = r.u64("condition child count")
    if count > r.remaining:  # every child takes at least one byte
        raise r.error("condition child count", f"{count} children do not fit")
    return ExprNode(CombinationOp(combo), tuple(_read_node(r, depth + 1) for _ in range(count)))


def _read_value_node(r: Reader) -> ValueNode:
    op_id = r.u8("condition op")
    if op_id not in ConditionOp._value2member_map_:
        raise r.error("condition op", f"unknown op {op_id}")
    op = ConditionOp(op_id)
    name = r.string(r.u32("condition field name length"), "condition field name")
    value = r.bytes(r.u64(f"condition value length of {name!r}"), f"condition value of {name!r}")
    if op not in _SET_OPS:
        return ValueNode(name, op, value)
    size = r.u64(f"condition set offsets length of {name!r}")
    offsets = None
    if size % 8 == 0:
        offsets = r.array("<u8", size // 8, f"condition set offsets of {name!r}")
    _check_set(r, name, value, offsets)
    return ValueNode(name, op, value, tuple(int(o) for o in offsets))


def _check_set(r: Reader, name: str, value: bytes, offsets) -> None:
    # The same checks TileDB makes when it rebuilds a set (it refuses such files).
    field = f"condition set of {name!r}"
    if offsets is None:
        raise r.error(field, "offsets are not a whole number of uint64 values")
    if not value or len(offsets) == 0:
        raise r.error(field, "a set needs data and offsets")
    if np.any(np.diff(offsets.astype(np.int64)) < 0) or int(offsets[-1]) > len(value):
        raise r.error(field, "offsets decrease or point past the data")


# --- writing ------------------------------------------------------------------------------


def serialize_condition(node: Node) -> bytes:
    """The delete tile payload for ``node`` (TileDB's byte layout)."""
    w = Writer()
    _write_node(w, node)
    return w.getvalue()


def _write_node(w: Writer, node: Node) -> None:
    if isinstance(node, NullTest):
        raise ValueError(f"a NullTest on {node.field!r} has no file form: write value nodes")
    if isinstance(node, ExprNode):
        w.u8(0).u8(int(node.op)).u64(len(node.children))
        for child in node.children:
            _write_node(w, child)
        return
    name = node.field.encode("utf-8")
    w.u8(1).u8(int(node.op)).u32(len(name)).raw(name).u64(len(node.value)).raw(node.value)
    if node.op in _SET_OPS:
        w.u64(8 * len(node.offsets)).raw(np.asarray(node.offsets, dtype="<u8"))


def encode_delete_condition(node: Node, version: int = 22, key: bytes | None = None) -> bytes:
    """A whole ``.del`` file for the stored (already negated) condition ``node``."""
    return encode_generic_tile(serialize_condition(node), version,
                               pipeline=GENERIC_TILE_PIPELINE, key=key)


def encode_update(node: Node, values: Iterable[UpdateValue], version: int = 22,
                  key: bytes | None = None) -> bytes:
    """A whole ``.upd`` file."""
    values = tuple(values)
    w = Writer().raw(serialize_condition(node)).u64(len(values))
    for v in values:
        name = v.field.encode("utf-8")
        w.u64(len(name)).raw(name).u64(len(v.value)).raw(v.value)
    return encode_generic_tile(w.getvalue(), version, pipeline=GENERIC_TILE_PIPELINE, key=key)


def negate(node: Node) -> Node:
    """TileDB's negation (what a delete stores): flip ops, swap AND/OR, push into leaves."""
    if isinstance(node, NullTest):
        return NullTest(node.field, not node.is_null)
    if isinstance(node, ValueNode):
        if node.op not in _NEGATED:
            raise ValueError(f"{node.op.name} cannot be negated")
        return ValueNode(node.field, _NEGATED[node.op], node.value, node.offsets)
    if node.op == CombinationOp.NOT:
        raise ValueError("a NOT node cannot be negated")
    flipped = CombinationOp.OR if node.op == CombinationOp.AND else CombinationOp.AND
    return ExprNode(flipped, tuple(negate(c) for c in node.children))


# --- evaluation ---------------------------------------------------------------------------


def evaluate(cond: Node, columns: Mapping[str, Any], validity: Mapping[str, Any] | None = None,
             datatypes: Mapping[str, int] | None = None, num_cells: int | None = None) -> np.ndarray:
    """The stored condition over cells (True = kept), as TileDB's sparse readers compute it.

    ``columns[field]``: a 1-D numpy array (fixed-size values), a numpy ``S<n>`` array or 2-D
    ``uint8`` array (fixed-size strings), or var-sized strings as a pyarrow string/binary array
    or numpy object/``U`` array.  ``validity[field]`` (non-zero = valid) marks NULL cells of
    nullable fields; pyarrow nulls and numpy masked arrays count as NULL too.  ``datatypes``
    gives a field's TileDB type where the column's dtype does not tell it (``S<n>`` columns are
    taken as CHAR; pass STRING_ASCII/UTF8 for fixed-size string types that compare whole cells).
    """
    n = num_cells if num_cells is not None else _infer_count(columns)
    ctx = _EvalContext(columns, validity or {}, datatypes or {}, n)
    return ctx.node(cond)


def deleted_cells(cond: Node, columns: Mapping[str, Any], validity: Mapping[str, Any] | None = None,
                  datatypes: Mapping[str, int] | None = None, *, num_cells: int | None = None,
                  cell_timestamps: np.ndarray | None = None,
                  delete_timestamp: int | None = None) -> np.ndarray:
    """True for cells a delete removes.  With per-cell timestamps (consolidated fragments),
    only cells written at or before ``delete_timestamp`` can be deleted."""
    gone = ~evaluate(cond, columns, validity, datatypes, num_cells)
    if cell_timestamps is not None:
        gone &= np.asarray(cell_timestamps, dtype=np.uint64) <= np.uint64(delete_timestamp)
    return gone


def sql_truth(cond: Node, columns: Mapping[str, Any], validity: Mapping[str, Any] | None = None,
              datatypes: Mapping[str, int] | None = None,
              num_cells: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Where a condition the delete writer built (the user's, not negated) is TRUE and where
    FALSE in SQL's three-valued logic (neither: NULL), over cells given as to ``evaluate``.
    Value nodes compare as the stored condition does -- the writer's values already say what
    DuckDB means (``storage.integer_comparisons``, ``storage.temporal_comparisons``) -- except
    that a NULL is unknown and a NaN is above every number, as in SQL; a ``NullTest`` is SQL's
    ``IS [NOT] NULL``."""
    n = num_cells if num_cells is not None else _infer_count(columns)
    return _EvalContext(columns, validity or {}, datatypes or {}, n).truth(cond)


# SQL (DuckDB) orders NaN above every number: the ops that hold for it against a number
_NAN_TRUE = (ConditionOp.GT, ConditionOp.GE, ConditionOp.NE, ConditionOp.NOT_IN)


def _infer_count(columns: Mapping[str, Any]) -> int:
    for col in columns.values():
        return len(col)
    raise ValueError("no columns: pass num_cells")


class _EvalContext:
    def __init__(self, columns, validity, datatypes, n):
        self.columns, self.validity, self.datatypes, self.n = columns, validity, datatypes, n

    def node(self, node: Node) -> np.ndarray:
        if isinstance(node, ValueNode):
            return self.leaf(node)
        if node.op == CombinationOp.NOT:
            raise UnsupportedFormatError("a delete condition with a NOT node cannot be evaluated "
                                         "(TileDB refuses it too)")
        result = np.full(self.n, node.op == CombinationOp.AND)
        combine = np.logical_and if node.op == CombinationOp.AND else np.logical_or
        for child in node.children:
            combine(result, self.node(child), out=result)
        return result

    def leaf(self, node: ValueNode) -> np.ndarray:
        if node.field not in self.columns:
            return np.zeros(self.n, dtype=bool)  # TileDB: field absent from this fragment
        valid = self.valid(node.field)
        if node.op in (ConditionOp.ALWAYS_TRUE, ConditionOp.ALWAYS_FALSE):
            result = np.full(self.n, node.op == ConditionOp.ALWAYS_TRUE)
        else:
            result = _compare(node, *self.normalised(node.field))
        return result if valid is None else result & valid

    def valid(self, field: str) -> np.ndarray | None:
        return _validity(self.columns[field], self.validity.get(field), self.n)

    def normalised(self, field: str) -> tuple[str, Any]:
        return _normalise(self.columns[field], self.datatypes.get(field), field)

    def truth(self, node: Node) -> tuple[np.ndarray, np.ndarray]:
        """(TRUE, FALSE) of ``sql_truth``."""
        if isinstance(node, ExprNode):
            if node.op == CombinationOp.NOT:
                raise ValueError("a condition the delete writer built has no NOT node")
            trues, falses = zip(*(self.truth(child) for child in node.children))
            if node.op == CombinationOp.AND:
                return np.logical_and.reduce(trues), np.logical_or.reduce(falses)
            return np.logical_or.reduce(trues), np.logical_and.reduce(falses)
        valid = self.valid(node.field)
        valid = np.ones(self.n, dtype=bool) if valid is None else valid
        if isinstance(node, NullTest):
            return (~valid, valid) if node.is_null else (valid, ~valid)
        kind, values = self.normalised(node.field)
        result = _compare(node, kind, values)
        if kind == "fixed" and values.dtype.kind == "f":
            result = np.where(np.isnan(values), node.op in _NAN_TRUE, result)
        return valid & result, valid & ~result


def _validity(column, explicit, n: int) -> np.ndarray | None:
    valid = None if explicit is None else np.asarray(explicit).astype(bool, copy=False)
    if isinstance(column, (pa.Array, pa.ChunkedArray)) and column.null_count:
        arrow_valid = np.asarray(column.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
        valid = arrow_valid if valid is None else valid & arrow_valid
    if isinstance(column, np.ma.MaskedArray) and column.mask is not np.ma.nomask:
        mask_valid = ~np.ma.getmaskarray(column)
        valid = mask_valid if valid is None else valid & mask_valid
    if valid is not None and len(valid) != n:
        raise ValueError(f"validity has {len(valid)} cells, expected {n}")
    return valid


def _compare(node: ValueNode, kind: str, values) -> np.ndarray:
    """The stored comparison over a column as ``_normalise`` gives it."""
    if kind == "fixed":
        return _compare_fixed(node, values)
    if kind == "char":
        return _compare_first_char(node, values)
    return _compare_strings(node, values)


def _normalise(column, datatype: int | None, field: str) -> tuple[str, Any]:
    """("fixed", 1-D numpy) | ("char", 2-D uint8 cells) | ("string", pyarrow binary)."""
    if isinstance(column, (pa.Array, pa.ChunkedArray)):
        return "string", _arrow_binary(column, field)
    arr = np.ma.getdata(column) if isinstance(column, np.ma.MaskedArray) else np.asarray(column)
    if arr.dtype.kind == "S" or (arr.ndim == 2 and arr.dtype == np.uint8):
        cells = arr.view(np.uint8).reshape(len(arr), -1) if arr.dtype.kind == "S" else arr
        if datatype is None or datatype == Datatype.CHAR:
            return "char", cells
        return "string", _fixed_cells_as_binary(cells)
    if arr.dtype.kind in "OU":
        return "string", _arrow_binary(pa.array([_as_bytes(v) for v in arr], pa.binary()), field)
    if datatype is not None:
        arr = arr.view(type_info(datatype).numpy)
    return "fixed", arr.view(np.uint8) if arr.dtype == np.bool_ else arr


def _as_bytes(v) -> bytes | None:
    if v is None:
        return None
    return v.encode("utf-8") if isinstance(v, str) else bytes(v)


def _arrow_binary(column, field: str) -> pa.Array:
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    t = column.type
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_large_binary(t):
        return column.cast(pa.binary() if not pa.types.is_large_string(t) else pa.large_binary())
    if pa.types.is_binary(t) or pa.types.is_fixed_size_binary(t):
        return column
    raise UnsupportedFormatError(f"a delete condition on {field!r} needs string cells, "
                                 f"got Arrow type {t}")


def _fixed_cells_as_binary(cells: np.ndarray) -> pa.Array:
    width = cells.shape[1]
    raw = pa.py_buffer(np.ascontiguousarray(cells).tobytes())
    return pa.FixedSizeBinaryArray.from_buffers(pa.binary(width), len(cells), [None, raw])


def _size_mismatch(node: ValueNode, cell_size: int, got: int) -> CorruptArrayError:
    return CorruptArrayError(f"delete condition on {node.field!r}: value size mismatch "
                             f"({cell_size} != {got}); TileDB cannot read this array either")


def _compare_fixed(node: ValueNode, values: np.ndarray) -> np.ndarray:
    size = values.dtype.itemsize
    if node.op in _SET_OPS:
        # Membership compares raw bytes: view both sides as unsigned ints of the cell width.
        as_uint = np.dtype(f"<u{size}")
        for m in node.members:
            if len(m) != size:
                raise _size_mismatch(node, size, len(m))
        members = np.frombuffer(b"".join(node.members), dtype=as_uint)
        hit = np.isin(np.ascontiguousarray(values).view(as_uint), members)
        return hit if node.op == ConditionOp.IN else ~hit
    if len(node.value) != size:
        raise _size_mismatch(node, size, len(node.value))
    scalar = np.frombuffer(node.value, dtype=values.dtype)[0]
    return _numpy_op(node.op, values, scalar)


def _numpy_op(op: ConditionOp, values, scalar) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        if op == ConditionOp.LT:
            return values < scalar
        if op == ConditionOp.LE:
            return values <= scalar
        if op == ConditionOp.GT:
            return values > scalar
        if op == ConditionOp.GE:
            return values >= scalar
        if op == ConditionOp.EQ:
            return values == scalar
        return values != scalar


def _compare_first_char(node: ValueNode, cells: np.ndarray) -> np.ndarray:
    if node.op in _SET_OPS:
        # Set membership looks at the whole cell, unlike the comparisons.
        for m in node.members:
            if len(m) != cells.shape[1]:
                raise _size_mismatch(node, cells.shape[1], len(m))
        return _compare_strings(node, _fixed_cells_as_binary(cells))
    # TileDB reads one (signed) char from each side; an empty value reads its terminating NUL.
    first = np.ascontiguousarray(cells[:, 0]).view(np.int8)
    scalar = np.frombuffer(node.value[:1] or b"\0", dtype=np.int8)[0]
    return _numpy_op(node.op, first, scalar)


def _compare_strings(node: ValueNode, values: pa.Array) -> np.ndarray:
    if node.op in _SET_OPS:
        subject = _variable_width(values)
        hit = _to_bool(pc.is_in(subject, value_set=pa.array(list(node.members), subject.type)))
        return hit if node.op == ConditionOp.IN else ~hit
    values = _variable_width(values)
    scalar = pa.scalar(node.value, type=values.type)
    fn = {ConditionOp.LT: pc.less, ConditionOp.LE: pc.less_equal, ConditionOp.GT: pc.greater,
          ConditionOp.GE: pc.greater_equal, ConditionOp.EQ: pc.equal,
          ConditionOp.NE: pc.not_equal}[node.op]
    return _to_bool(fn(values, scalar))


def _variable_width(values: pa.Array) -> pa.Array:
    return values.cast(pa.binary()) if pa.types.is_fixed_size_binary(values.type) else values


def _to_bool(result) -> np.ndarray:
    # NULL cells are masked by the caller; their comparison result does not matter.
    return np.asarray(result.fill_null(False).to_numpy(zero_copy_only=False), dtype=bool)
