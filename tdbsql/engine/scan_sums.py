"""Streamed aggregates summed straight from the scan's tiles, without building Arrow rows.

The usual streamed aggregate (``engine.pipeline``) turns each chunk of tiles into an Arrow
frame -- every column copied into one chunk-sized array, arithmetic evaluated into temporary
arrays -- and then groups and sums it.  For the most common analytical shape, TPC-H Q1's::

    SELECT k1, k2, sum(x), sum(x * (1 - y)), avg(z), count(*) ... GROUP BY k1, k2

``ScanSums`` does the same work on the tiles as the scan decoded them: the group keys' codes
(``engine.hash_table``'s: short strings packed into an int64, integers as they are) are
grouped once per chunk, and one kernel (``kernels.expression_sums``) evaluates every summed
expression block by block and adds it to its group's compensated sum.  The result is the same
``Partial`` the usual path gives (``engine.partial_aggregate``), so combining, HAVING and
the output are shared.

It applies (``ScanSums.of``) when every aggregate call is ``count(*)``, ``count`` of a
non-nullable column, or ``sum``, ``avg`` or ``count`` without DISTINCT, FILTER or ORDER BY
over ``+ - *`` and unary minus of non-nullable float64 columns and numeric literals, or
``min`` / ``max`` of a non-nullable int64, float64, date, timestamp or time column (TPC-H
Q21's per-order bounds; temporal values as their int64 counts, a chunk holding NaT -- read as
NULL -- going the usual way), and every group key is a non-nullable stored column:
a var-sized string (at most 7 bytes a cell, checked as the tiles come) or an integer, date,
time or boolean.  A chunk it cannot take (a longer string, a condition left to evaluate)
goes the usual way; its partial combines with the others all the same.

Grouped by one integer key whose range the caches hold, chunks are added straight into
accumulators over that range (``engine.dense_groups``: ``layout``, ``dense_partial``; a record
a key, ``kernels.expression_sums.fold_slot_sums``) instead of being grouped one by one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
from sqlglot import exp

from ..datatypes import VAR_NUM, Datatype, type_info
from ..kernels import expression_sums as program
from ..kernels import aggregate, hashing, short_string_groups
from . import pooled
from .aggregate_step import call_spec, filter_of, star_operands
from .column import Column, concat
from .dense_groups import Accumulator, DenseGroups, Layout
from .fields import column_to_arrow
from .hash_table import group_rows
from .partial_aggregate import Partial

_FUNCTIONS = ("count_star", "count", "sum", "avg")
_KEY_KINDS = ("int", "datetime", "time", "bool")
_TEMPORAL_KINDS = ("datetime", "time")
_NAT = np.iinfo(np.int64).min
_NO_COLUMN = np.empty(0, np.float64)
_NO_CODES = np.empty(0, np.uint8)
_NO_VALIDITY = np.empty(0, np.uint8)
_NO_COLUMNS = (_NO_COLUMN,) * program.COLUMNS
_NO_CODE_COLUMNS = (_NO_CODES,) * program.COLUMNS
# accumulators per group and expression while the groups are few (TPC-H Q1's flags alternate
# row by row: with one accumulator each row would wait for the previous one's add)
_LANES = 8
_LANED_GROUPS = 4096
_STRING_SLOTS = 1024  # string-key groups looked up in a table that stays in L1: 512 at most
_OPERATORS = {exp.Add: program.ADD, exp.Sub: program.SUBTRACT, exp.Mul: program.MULTIPLY}


@dataclass(frozen=True)
class Summed:
    """A chunk summed from its tiles: the partial, the tiles that had rows, and how many of
    them were read (in part) by their dictionary codes (``storage.tile_codes``)."""

    partial: Partial
    tiles: int
    coded: int


@dataclass(frozen=True)
class ScanSums:
    """How to fold one Aggregate step's calls from tiles (``of``), and the folding
    (``partial``)."""

    keys: dict[str, tuple[str, bool]]  # group name -> (stored field, packed string codes)
    columns: tuple[str, ...]  # the stored float64 fields the code reads: registers 0, 1 ...
    code: np.ndarray  # int64 (instructions, 4): kernels.expression_sums code
    constants: np.ndarray  # float64
    results: np.ndarray  # int64: each summed expression's register
    calls: dict[str, tuple[str, int]]  # call SQL text -> (function, expression index or -1)
    extremes: dict[str, tuple[str, str]]  # min / max call SQL text -> (function, stored field)
    dtypes: dict[str, np.dtype]  # of the key and min / max fields
    temporal: frozenset[str]  # the min / max fields whose smallest int64 is NaT, a NULL

    @classmethod
    def of(cls, step, calls: dict, scan_name: str, schema) -> "ScanSums | None":
        """The folding of ``step``'s ``calls`` (``partial_aggregate.step_calls``) over the
        scan ``scan_name`` of an array with ``schema``, or None when it does not apply."""
        fields = schema.fields_by_name()
        operands = {op.alias_or_name: op.unalias() for op in step.operands}
        keys = {}
        for name, node in step.group.items():
            field = _stored(node, scan_name, fields, operands)
            if field is None or not _key_field(fields[field]):
                return None
            keys[name] = (field, fields[field].cell_val_num == VAR_NUM)
        compiler = _Compiler(scan_name, fields, operands)
        stars = star_operands(step)
        folded, extremes = {}, {}
        for text, call in calls.items():
            agg, condition = filter_of(call)
            if condition is not None:
                return None
            func, argument, distinct = call_spec(agg, stars)
            if func in ("min", "max") and not distinct:
                field = _stored(_operand(argument, operands) or argument, scan_name, fields,
                                operands)
                if field is None or not _extreme_field(fields[field]):
                    return None
                extremes[text] = (func, field)
                continue
            if func not in _FUNCTIONS or distinct:
                return None
            index = -1
            # count of a column that holds no NULL is the group size, whatever its type
            if func != "count_star" and not (
                    func == "count" and _never_null(argument, scan_name, fields, operands)):
                index = compiler.expression(argument)
                if index is None:
                    return None
            folded[text] = (func, index)
        dtypes = {field: type_info(fields[field].datatype).numpy for field in
                  [key for key, _ in keys.values()] + [f for _, f in extremes.values()]}
        temporal = frozenset(field for _, field in extremes.values()
                             if type_info(fields[field].datatype).kind in _TEMPORAL_KINDS)
        return cls(keys, tuple(compiler.columns), compiler.matrix(),
                   np.array(compiler.constants, np.float64),
                   np.array(compiler.results, np.int64), folded, extremes, dtypes, temporal)

    def layout(self) -> Layout | None:
        """The accumulators of ``dense_groups`` this folding takes: when it groups by one
        integer key (None otherwise), the rows per key, the expressions' sums, and each min /
        max call's value."""
        if len(self.keys) != 1 or next(iter(self.keys.values()))[1]:
            return None
        layout = {"sums": Accumulator("sums", len(self.results))}
        for text, (func, field) in self.extremes.items():
            layout[text] = Accumulator(func, 1, self.dtypes[field])
        return layout

    @property
    def selects(self) -> bool:
        """Whether chunks may come ungathered: with no group key and no min / max, a tile's
        kept cells are summed through their indices (``kernels.expression_sums``'s
        ``fold_selected_sums``) instead of being copied out of the tile first."""
        return not self.keys and not self.extremes

    def partial(self, array, selected_pieces: list[tuple[dict[str, Column], int, Any]],
                tiles: list[int], dense: DenseGroups | None = None) -> Summed | None:
        """The ``Summed`` partial of one chunk's tasks (``pieces``: each task's columns, the
        number of its cells kept, and the indices of those cells -- None when the columns
        hold only them, which they must unless ``selects``; ``tiles``: how many tiles each
        task read, a run several), or None when the chunk must go the usual way (no rows, a
        string key longer than 7 bytes, a NULL where none was expected, a NaT).  With
        ``dense`` (over ``layout()``) the chunk is folded into its accumulators when its
        keys fit them: the partial is then None."""
        tiles = [count for (_, length, _), count in zip(selected_pieces, tiles) if length]
        selected_pieces = [piece for piece in selected_pieces if piece[1]]
        pieces = [(columns, length) for columns, length, _ in selected_pieces]
        total = sum(length for _, length in pieces)
        if total == 0 or any(columns[name].validity is not None for columns, _ in pieces
                             for name in self._read()) or self._has_nat(pieces):
            return None
        coded = sum(count for (columns, _), count in zip(pieces, tiles)
                    if any(columns[name].codes is not None for name in self._read()))
        codes = None
        if dense is not None:  # one integer key: its codes are its values
            codes = self._codes(pieces, total)
            if self._fold(pieces, codes[0], dense):
                return Summed(None, sum(tiles), coded)
        grouped = self._groups(pieces, total, codes)
        if grouped is None:
            return None
        ids, count, first, sizes, values = grouped
        if sizes is None:
            sizes = np.bincount(ids, minlength=count).astype(np.int64)
        extremes = {text: _extreme(array, pieces, field, ids, count, func == "max")
                    for text, (func, field) in self.extremes.items()}
        if values is None:  # first rows ascending: each key's cells taken from its tiles
            keys = {name: _values_at(array, field, pieces, first)
                    for name, (field, _) in self.keys.items()}
        else:  # integer keys: their values are the codes (no gather from the tiles)
            keys = {name: self._key_values(array, field, code[first])
                    for (name, (field, _)), code in zip(self.keys.items(), values)}
        states = self._states(sizes, self._sums(selected_pieces, ids, count), extremes)
        return Summed(Partial(keys, states, count), sum(tiles), coded)

    def _states(self, sizes: np.ndarray, sums: np.ndarray, extremes: dict) -> dict:
        """The ``Partial`` states of every call from the groups' row counts, the expressions'
        sums (one row each) and the min / max calls' (type, [values])."""
        states = {}
        for text, (func, index) in self.calls.items():
            if func == "count_star":
                states[text] = (func, None, [pa.array(sizes)])
            elif func == "count":
                states[text] = (func, pa.float64(), [pa.array(sizes)])
            elif func == "sum":
                states[text] = (func, pa.float64(), [pa.array(sums[index])])
            else:
                states[text] = (func, pa.float64(), [pa.array(sums[index]), pa.array(sizes)])
        for text, (func, _) in self.extremes.items():
            states[text] = (func, *extremes[text])
        return states

    def _key_values(self, array, field: str, codes: np.ndarray) -> pa.Array:
        """An integer key's values from its int64 codes (its stored values), as Arrow."""
        return column_to_arrow(array, field, Column(codes.astype(self.dtypes[field])))

    def _fold(self, pieces, codes: np.ndarray, dense: DenseGroups) -> bool:
        """Add the chunk into ``dense``'s accumulators (``codes``: the one integer key's, used
        up); False when its keys do not fit them."""
        low, high = map(int, hashing.int_range(codes))
        with dense.slots(low, high) as slots:
            if slots is None:
                return False
            ids = slots.ids(codes)
            registers = np.empty((program.COLUMNS + len(self.code), program.BLOCK))
            for inputs, rows in self._program_inputs(pieces, ids):
                program.fold_slot_sums(self.code, self.constants, self.results, *inputs, rows,
                                       slots.arrays["sums"], registers)
            for text, (func, field) in self.extremes.items():
                at = 0
                for columns, length in pieces:
                    aggregate.extremes_into(
                        _writable(columns[field].values, self.dtypes[field]),
                        ids[at:at + length], func == "max", slots.arrays[text])
                    at += length
        return True

    def dense_partial(self, array, dense: DenseGroups) -> Partial | None:
        """The groups ``dense``'s accumulators hold, as one ``Partial`` in key order (None when
        no chunk was folded into them)."""
        merged = dense.merged()
        if merged is None:
            return None
        records = merged.arrays["sums"]
        present = np.flatnonzero(records[:, 0])
        records = np.take(records, present, axis=0)
        sums = np.empty((len(self.results), len(present)))
        program.finish_sums(np.ascontiguousarray(records[:, 1::2].T),
                            np.ascontiguousarray(records[:, 2::2].T), 1, sums)
        extremes = {text: _arrow_extreme(array, field, merged.arrays[text][present])
                    for text, (_, field) in self.extremes.items()}
        (name, (field, _)), = self.keys.items()
        keys = {name: self._key_values(array, field, present + merged.low)}
        states = self._states(records[:, 0].astype(np.int64), sums, extremes)
        return Partial(keys, states, len(present))

    def _has_nat(self, pieces) -> bool:
        """Does a temporal min / max field hold NaT (its smallest int64, read as NULL, which
        the integer kernels would take for a value) in the chunk?"""
        return any(int(columns[field].values[:length].min()) == _NAT
                   for field in self.temporal for columns, length in pieces)

    def _read(self) -> list[str]:
        return [field for field, _ in self.keys.values()] + list(self.columns) + \
            [field for _, field in self.extremes.values()]

    def _groups(self, pieces, total: int, codes: list[np.ndarray] | None):
        """(group id per row, group count, each group's first row, each group's row count or
        None, each key's codes when they are its values -- integer keys -- else None) over the
        chunk (``codes``: ``_codes``), or None when a string key is too long to pack."""
        if not self.keys:
            return np.zeros(total, np.int64), 1, np.zeros(1, np.int64), \
                np.array([total], np.int64), None
        if len(self.keys) <= 2 and all(packed for _, packed in self.keys.values()):
            found = self._string_groups(pieces, total)
            if found != short_string_groups.MANY_GROUPS:
                return found  # the groups, or None for a long string: no packing takes it
        codes = codes or self._codes(pieces, total)
        if codes is None:
            return None
        values = not any(packed for _, packed in self.keys.values())
        built = group_rows(codes, total)
        return built.ids, built.count, built.first, None, codes if values else None

    def _codes(self, pieces, total: int) -> list[np.ndarray] | None:
        """Each key's int64 codes over the chunk (``hash_table``'s: integers as they are,
        short strings packed), None when a string is too long to pack."""
        codes = []
        for field, packed in self.keys.values():
            out = pooled.empty(total, np.int64)
            at = 0
            for columns, length in pieces:
                column = columns[field]
                if packed:
                    if not hashing.pack_short_strings(_writable(column.offsets, np.int64),
                                                      _writable(column.values, np.uint8),
                                                      out[at:at + length]):
                        return None
                else:
                    out[at:at + length] = column.values[:length]
                at += length
            codes.append(out)
        return codes

    def _string_groups(self, pieces, total: int):
        """``_groups`` for one or two string keys with few groups (at most half of
        ``_STRING_SLOTS``), read and looked up row by row (by their tiles' codes when both
        have them): the groups, None for a string over 7 bytes, ``MANY_GROUPS`` past that
        many groups."""
        fields = [field for field, _ in self.keys.values()]
        slots = np.full((_STRING_SLOTS, 3), -1, np.int64)
        ids = pooled.empty(total, np.int64)
        first = np.empty(_STRING_SLOTS // 2, np.int64)
        sizes = np.zeros(_STRING_SLOTS // 2, np.int64)
        count = at = 0
        for columns, length in pieces:
            keys = [columns[field] for field in fields]
            one, two = keys[0], keys[-1]
            if one.codes is not None and two.codes is not None:
                count = short_string_groups.group_coded_strings(
                    one.codes, one.dictionary, two.codes, two.dictionary, len(keys) == 2, at,
                    slots, ids[at:at + length], first, sizes, count)
            else:
                count = short_string_groups.group_short_strings(
                    _writable(one.offsets, np.int64), _writable(one.values, np.uint8),
                    _writable(two.offsets, np.int64), _writable(two.values, np.uint8),
                    len(keys) == 2, at, slots, ids[at:at + length], first, sizes, count)
            if count == short_string_groups.LONG_STRING:
                return None
            if count == short_string_groups.MANY_GROUPS:
                return count
            at += length
        return ids, count, first[:count].copy(), sizes[:count].copy(), None

    def _sums(self, pieces, ids: np.ndarray, count: int) -> np.ndarray:
        """(expressions, groups) compensated sums of every expression over the chunk
        (``pieces``: as ``partial`` takes them)."""
        if not len(self.results):  # only counts, or only the keys (a semi join's input)
            return np.empty((0, count))
        lanes = _LANES if count <= _LANED_GROUPS else 1
        sums = np.zeros((len(self.results), lanes * count))
        errors = np.zeros_like(sums)
        registers = np.empty((program.COLUMNS + len(self.code), program.BLOCK))
        for (inputs, rows), (_, _, selected) in zip(self._program_inputs(pieces, ids), pieces):
            if selected is None:
                program.fold_expression_sums(self.code, self.constants, self.results, *inputs,
                                             rows, lanes, sums, errors, registers)
            else:
                program.fold_selected_sums(self.code, self.constants, self.results, *inputs,
                                           selected, _NO_COLUMNS, _NO_CODE_COLUMNS, sums,
                                           errors, registers)
        out = np.empty((len(self.results), count))
        program.finish_sums(sums, errors, lanes, out)
        return out

    def _program_inputs(self, pieces, ids: np.ndarray):
        """Per piece (its columns and length first): its columns' values, codes and
        dictionaries, as the kernels of ``kernels.expression_sums`` take them, and its rows'
        part of ``ids``."""
        unused = program.COLUMNS - len(self.columns)
        at = 0
        for columns, length, *_ in pieces:
            values, codes, dictionaries = [], [], []
            for name in self.columns:
                column = columns[name]
                coded = column.codes is not None
                values.append(_NO_COLUMN if coded else _writable(column.values, np.float64))
                codes.append(column.codes if coded else _NO_CODES)
                dictionaries.append(column.dictionary if coded else _NO_COLUMN)
            yield (tuple(values + [_NO_COLUMN] * unused), tuple(codes + [_NO_CODES] * unused),
                   tuple(dictionaries + [_NO_COLUMN] * unused)), ids[at:at + length]
            at += length


class _Compiler:
    """Arithmetic expressions -> one ``kernels.expression_sums`` code for them all: a register
    per stored column read and per distinct operation (the same opcode on the same registers
    or number: by structure, not by SQL text, which drops parentheses), so a subexpression
    two sums share is computed once, and two sums of the same value share one."""

    def __init__(self, scan_name: str, fields: dict, operands: dict):
        self.scan_name, self.fields, self.operands = scan_name, fields, operands
        self.columns: list[str] = []
        self.constants: list[float] = []
        self.code: list[tuple[int, int, int, int]] = []
        self.results: list[int] = []  # per expression, its register
        self._emitted: dict[tuple, int] = {}  # (opcode, register, register or number) -> register

    def expression(self, node: exp.Expression) -> int | None:
        """The index of ``node``'s sum, or None when it cannot be compiled (then nothing of
        it is kept)."""
        kept = (len(self.columns), len(self.constants), len(self.code), dict(self._emitted))
        register = self._register(_operand(node, self.operands) or node)
        if register is None:
            del self.columns[kept[0]:], self.constants[kept[1]:], self.code[kept[2]:]
            self._emitted = kept[3]
            return None
        if register not in self.results:
            self.results.append(register)
        return self.results.index(register)

    def matrix(self) -> np.ndarray:
        return np.array(self.code, np.int64).reshape(-1, 4)

    def _register(self, node) -> int | None:
        """The register holding ``node``, emitting what computes it; None when it is not
        arithmetic over non-nullable float64 columns and numbers with a column in it (numbers
        alone are exact integer or decimal arithmetic, with overflow errors: the
        evaluator's, ``9007199254740993 - 1``), or needs more than ``REGISTERS``."""
        node = _bare(node, self.operands)
        if isinstance(node, exp.Neg):
            inner = self._register(node.this) if node.find(exp.Column) else None
            return None if inner is None else self._emit(program.NEGATE, inner)
        if type(node) in _OPERATORS:
            return self._binary(node) if node.find(exp.Column) else None
        return self._column(node)

    def _binary(self, node) -> int | None:
        op = type(node)
        left, right = _constant(node.left, self.operands), _constant(node.right, self.operands)
        if left is not None or right is not None:
            value = left if left is not None else right
            register = self._register(node.right if left is not None else node.left)
            if register is None or value is None:
                return None
            if op is exp.Sub:
                code = program.CONSTANT_SUBTRACT if left is not None else \
                    program.SUBTRACT_CONSTANT
            else:
                code = program.ADD_CONSTANT if op is exp.Add else program.MULTIPLY_CONSTANT
            return self._emit(code, register, number=value)
        a = self._register(node.left)
        b = self._register(node.right) if a is not None else None
        return None if b is None else self._emit(_OPERATORS[op], a, b)

    def _column(self, node) -> int | None:
        field = _stored(node, self.scan_name, self.fields, self.operands)
        if field is None or not _float_field(self.fields[field]):
            return None
        if field not in self.columns:
            if len(self.columns) == program.COLUMNS:
                return None
            self.columns.append(field)
        return self.columns.index(field)

    def _emit(self, op: int, a: int, b: int = 0, number: float | None = None) -> int | None:
        """The register of ``op`` over register ``a`` and register ``b`` or ``number``: an
        instruction emitted once (a number by its bits: -0.0 is not 0.0)."""
        key = (op, a, b) if number is None else (op, a, "number", _number_bits(number))
        if key in self._emitted:
            return self._emitted[key]
        target = program.COLUMNS + len(self.code)
        if target >= program.REGISTERS:
            return None
        if number is not None:
            self.constants.append(number)
            b = len(self.constants) - 1
        self.code.append((op, target, a, b))
        self._emitted[key] = target
        return target


def _number_bits(number: float) -> int:
    """A float's bits, to tell numbers apart exactly (-0.0 from 0.0, every NaN the same)."""
    return int(np.float64(number).view(np.int64))


def _bare(node, operands: dict):
    """``node`` without parentheses and operand names (sqlglot names a shared subexpression
    once: ``_a_1 = _a_0 * ...``)."""
    while True:
        if isinstance(node, exp.Paren):
            node = node.this
            continue
        operand = _operand(node, operands)
        if operand is None:
            return node
        node = operand


def _constant(node, operands: dict) -> float | None:
    """A number literal, negated or not, as a float64 (``_exact_float``); else None."""
    node = _bare(node, operands)
    if isinstance(node, exp.Neg):
        value = _constant(node.this, operands)
        return None if value is None else -value
    return _exact_float(node) if isinstance(node, exp.Literal) else None


def _exact_float(node: exp.Literal) -> float | None:
    """A number literal as the float64 DuckDB turns it into beside a DOUBLE column; None for
    an integer float64 cannot hold exactly (past 2**53), which DuckDB keeps exact."""
    if not node.is_number:
        return None
    try:
        return float(int(node.this)) if abs(int(node.this)) <= 2**53 else None
    except ValueError:  # a decimal or exponent literal
        return float(node.this)


def _stored(node, scan_name: str, fields: dict, operands: dict) -> str | None:
    """The stored field a Column node of the scan's rows names, else None."""
    if not isinstance(node, exp.Column):
        return None
    if node.table:
        return node.name if node.table == scan_name and node.name in fields else None
    return node.name if node.name in fields and node.name not in operands else None


def _operand(node, operands: dict) -> exp.Expression | None:
    """The expression an operand column (``_a_0``) stands for, else None."""
    if isinstance(node, exp.Column) and not node.table and node.name in operands:
        found = operands[node.name]
        return None if found is node else found
    return None


def _never_null(node, scan_name: str, fields: dict, operands: dict) -> bool:
    """Is ``node`` a stored column that holds no NULL (not nullable, nor enumerated: an index
    with no label reads as NULL)?"""
    field = _stored(_operand(node, operands) or node, scan_name, fields, operands)
    return field is not None and _plain(fields[field])


def _plain(field) -> bool:
    return not getattr(field, "nullable", False) and not getattr(field, "enumeration_name", None)


def _key_field(field) -> bool:
    info = type_info(field.datatype)
    if not _plain(field):
        return False
    if field.cell_val_num == VAR_NUM:
        return info.kind == "string" and info.size == 1
    return field.cell_val_num == 1 and info.kind in _KEY_KINDS


def _extreme_field(field) -> bool:
    """A column ``min`` / ``max`` take as they are: int64 or float64 values (the kernels'
    types), or dates, timestamps and times -- int64 counts, whose order is their values' --
    taken as int64 and turned back into the column's Arrow type at the end."""
    return _plain(field) and field.cell_val_num == 1 and (
        field.datatype in (Datatype.INT64, Datatype.FLOAT64) or
        type_info(field.datatype).kind in _TEMPORAL_KINDS)


def _extreme(array, pieces, field: str, ids: np.ndarray, count: int, want_max: bool):
    """(the column's Arrow type, [per-group min or max]) of ``field`` over the chunk (every
    group has a row, none of them NULL)."""
    dtype = pieces[0][0][field].values.dtype
    out = np.zeros(count, dtype)
    counts = np.zeros(count, np.int64)
    at = 0
    for columns, length in pieces:
        aggregate.min_max(_writable(columns[field].values, dtype), _NO_VALIDITY,
                          ids[at:at + length], want_max, out, counts)
        at += length
    return _arrow_extreme(array, field, out)


def _arrow_extreme(array, field: str, values: np.ndarray):
    """(Arrow type, [values]): a min / max state of ``field`` from its int64 or float64
    values, in the column's Arrow type (a date's int64 days as date32 ...)."""
    state = column_to_arrow(array, field, Column(values))
    return state.type, [state]


def _float_field(field) -> bool:
    return _plain(field) and field.datatype == Datatype.FLOAT64 and field.cell_val_num == 1


def _writable(values: np.ndarray, dtype) -> np.ndarray:
    """What a kernel takes: writable and C-contiguous (one specialisation), copied if not."""
    return np.require(values, dtype, ["C", "W"])


def _values_at(array, field: str, pieces, rows: np.ndarray) -> pa.Array:
    """The values of ``field`` at chunk rows ``rows`` (ascending), as Arrow."""
    starts = np.cumsum([0] + [length for _, length in pieces])
    bounds = np.searchsorted(rows, starts)  # each piece's rows: a slice of ``rows``
    parts = []
    for i, (columns, _) in enumerate(pieces):
        if bounds[i + 1] > bounds[i]:
            parts.append(columns[field].take(rows[bounds[i]:bounds[i + 1]] - starts[i]))
    return column_to_arrow(array, field, concat(parts))
