"""Hash join: equi-join key columns -> matched row index pairs.

In: the left (probe) and right (build) key columns, pairwise comparable, and the join kind.
Out: ``(left_idx, right_idx)`` int64 arrays; -1 marks the missing side of an outer row; semi
and anti joins return ``(left_idx, None)``.

The right side is built into a hash table (``engine/hash_table.build_table``), so pass the smaller
input as right.  Each key pair is first turned into int64 codes that agree across both sides:
integer-like values directly, floats normalized (-0.0 = 0.0, NaN = NaN, as DuckDB compares
them) and bit-cast, mixed int/float pairs as floats, strings and other types through the build
side's dictionary (``pc.index_in`` maps probe values onto it).  A NULL key never matches.

Output order: pairs come in left row order, each left row followed by its matches in right row
order (a left/full join puts an unmatched left row where it stands, paired with -1); a right or
full join then appends the right rows that matched nothing, in right row order.  Semi and anti
joins return the qualifying left rows in order; an anti join keeps left rows with NULL keys.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InternalError, UnsupportedSql
from ..kernels import hashing
from ..kernels import join as join_kernels
from .hash_table import (
    HashTable, as_array, build_table, dictionary_encode, float64_values, float_codes, index_codes,
    int64_values, is_integer_like, key_matrix, null_mask, probe_table,
)

JOIN_KINDS = ("inner", "left", "right", "full", "semi", "anti")
_INT64_MAX = 2**63 - 1
_TIME_UNITS = ("s", "ms", "us", "ns")


def hash_join(left_keys: list[pa.Array | pa.ChunkedArray],
              right_keys: list[pa.Array | pa.ChunkedArray],
              how: str, check=None) -> tuple[np.ndarray, np.ndarray | None]:
    """Row index pairs of the equi-join ``left_keys[i] = right_keys[i]`` (all i);
    ``check(pairs)``, if given, sees their number before they are made (and may raise)."""
    if how not in JOIN_KINDS:
        raise InternalError(f"unknown join kind {how!r}; expected one of {JOIN_KINDS}")
    if not left_keys or len(left_keys) != len(right_keys):
        raise InternalError("hash_join needs the same number (>= 1) of left and right keys")
    built, left_groups = key_groups(left_keys, right_keys)
    if how == "semi":
        return np.flatnonzero(left_groups >= 0).astype(np.int64), None
    if how == "anti":
        return np.flatnonzero(left_groups < 0).astype(np.int64), None
    return pairs_of_groups(left_groups, built, how, check)


def key_groups(left_keys: list[pa.Array | pa.ChunkedArray],
               right_keys: list[pa.Array | pa.ChunkedArray]) -> tuple[HashTable, np.ndarray]:
    """The right rows grouped by their keys (the built table: ``ids``, -1 for a NULL key)
    and each left row's group among them (-1: none has its keys, or one is NULL)."""
    left_rows, right_rows = _length(left_keys, "left"), _length(right_keys, "right")
    left_keys, right_keys = _interval_parts(left_keys, right_keys)
    left_keys, right_keys = _struct_parts(left_keys, right_keys)
    left_codes, right_codes = [], []
    left_skip = np.zeros(left_rows, np.uint8)
    right_skip = np.zeros(right_rows, np.uint8)
    for left, right in zip(left_keys, right_keys):
        codes_l, codes_r, skip_l, skip_r = pair_codes(as_array(left), as_array(right))
        left_codes.append(codes_l)
        right_codes.append(codes_r)
        _mark(left_skip, skip_l)
        _mark(right_skip, skip_r)
    right_matrix = key_matrix(right_codes, right_rows)
    left_matrix = key_matrix(left_codes, left_rows)
    if len(right_codes) > 1:
        right_matrix, left_matrix = _packed(right_matrix, right_skip, left_matrix, left_skip)
    built = build_table(right_matrix, right_skip, probes=left_rows)
    return built, probe_table(built, left_matrix, left_skip)


def _interval_parts(left_keys: list, right_keys: list) -> tuple[list, list]:
    """The key pairs with each pair of INTERVALs as three pairs of their normalised months,
    days and microseconds: equal as INTERVALs compare (1 day = 24 hours), NULL where the
    value is."""
    if not any(pa.types.is_interval(key.type) for key in (*left_keys, *right_keys)):
        return left_keys, right_keys
    from .interval_compare import sort_parts  # it reads the evaluator's types

    lefts, rights = [], []
    for left, right in zip(left_keys, right_keys):
        if pa.types.is_interval(left.type) and pa.types.is_interval(right.type):
            lefts += sort_parts(as_array(left))
            rights += sort_parts(as_array(right))
        else:
            lefts.append(left)
            rights.append(right)
    return lefts, rights


def _struct_parts(left_keys: list, right_keys: list) -> tuple[list, list]:
    """The key pairs with each pair of STRUCTs as pairs of int64 codes, both sides coded
    together (``hash_table.key_codes`` of the two stacked): equal as DuckDB compares
    structs (NULL fields equal), NULL where the struct is -- a NULL struct never matches."""
    if not any(pa.types.is_struct(key.type) for key in (*left_keys, *right_keys)):
        return left_keys, right_keys
    from .hash_table import key_codes
    from .value_types import cast_value, common_type

    lefts, rights = [], []
    for left, right in zip(left_keys, right_keys):
        if not (pa.types.is_struct(left.type) and pa.types.is_struct(right.type)):
            lefts.append(left)
            rights.append(right)
            continue
        target = common_type([left.type, right.type])
        if target is None:
            raise UnsupportedSql(f"joining {left.type} with {right.type}")
        left, right = (as_array(cast_value(as_array(key), target)) for key in (left, right))
        rows = len(left)
        for code in key_codes(pa.concat_arrays([left, right])):
            lefts.append(pa.array(code[:rows], mask=null_mask_of(left)))
            rights.append(pa.array(code[rows:], mask=null_mask_of(right)))
    return lefts, rights


def null_mask_of(array: pa.Array) -> np.ndarray:
    return array.is_null().to_numpy(zero_copy_only=False)


def _packed(right: np.ndarray, right_skip: np.ndarray, left: np.ndarray,
            left_skip: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Key matrices of several columns as one column each -- a row's position in the box
    the build side's keys span -- when that box has fewer than 2**62 positions; as they are
    otherwise.  A one-column table compares keys in its slots; with several, rows sharing
    the first column (TPC-H's (partkey, suppkey)) are told apart at the build rows, a cache
    miss each.  Probe rows outside the box cannot match: they are skipped (``left_skip`` set
    in place)."""
    box = key_box(right, right_skip)
    if box is None:
        return right, left
    return box_positions(right, right_skip, box), box_positions(left, left_skip, box)


def key_box(right: np.ndarray, right_skip: np.ndarray) -> tuple | None:
    """(lows, extents) of the box a build side's key matrix spans (its rows not skipped),
    when it has fewer than 2**62 positions; else None (``_packed``)."""
    kept = right if not right_skip.any() else right[:, right_skip == 0]
    if kept.shape[1] == 0:
        return None
    lows, extents, size = [], [], 1
    for column in kept:
        low, high = map(int, hashing.int_range(np.ascontiguousarray(column)))
        lows.append(low)
        extents.append(high - low + 1)
        size *= high - low + 1
    if size >= 1 << 62:
        return None
    return np.array(lows, np.int64), np.array(extents, np.int64)


def box_positions(keys: np.ndarray, skip: np.ndarray, box: tuple) -> np.ndarray:
    """Each row's position in ``box`` as a one-column key matrix; a row outside it is
    skipped (``skip`` set in place)."""
    packed = np.empty((1, keys.shape[1]), np.int64)
    hashing.box_slots(keys, *box, skip, packed[0])
    skip |= (packed[0] < 0).view(np.uint8)
    return packed


def _length(keys, side: str) -> int:
    lengths = {len(key) for key in keys}
    if len(lengths) != 1:
        raise InternalError(f"{side} join key columns differ in length: {sorted(lengths)}")
    return lengths.pop()


def _mark(skip: np.ndarray, more: np.ndarray | None) -> None:
    if more is not None:
        skip |= more


def group_rows_of(built: HashTable) -> tuple[np.ndarray, np.ndarray] | None:
    """(offsets, rows): the build rows of each group, in row order (CSR), or None when every
    build row is a group of its own."""
    right_ids, ngroups = built.ids, built.count
    if ngroups == right_ids.shape[0]:
        return None
    offsets = np.zeros(ngroups + 1, np.int64)
    rows = np.empty(right_ids.shape[0], np.int64)
    join_kernels.csr_build(right_ids, ngroups, offsets, rows)
    return offsets, rows


def pairs_of_groups(left_groups, built: HashTable, how, check=None,
                    grouped: tuple | None = None):
    """The index pairs of the probe rows' groups (``key_groups``) in ``built``;
    ``grouped``: its ``group_rows_of``, if already made (and not None)."""
    right_ids, ngroups = built.ids, built.count
    keep_left = how in ("left", "full")
    if grouped is None:
        grouped = group_rows_of(built)
    unique = grouped is None  # every build row a group of its own
    if unique:
        total = join_kernels.unique_join_count(left_groups, keep_left)
    else:
        offsets, rows = grouped
        total = join_kernels.join_count(left_groups, offsets, keep_left)
    if check is not None:
        check(int(total))
    left_idx = np.empty(total, np.int64)
    right_idx = np.empty(total, np.int64)
    matched = np.zeros(max(ngroups, 1), np.uint8)
    if unique:
        join_kernels.unique_join_fill(left_groups, built.first, keep_left, matched, left_idx,
                                      right_idx)
    else:
        join_kernels.join_fill(left_groups, offsets, rows, keep_left, matched, left_idx,
                               right_idx)
    if how in ("left", "inner"):
        return left_idx, right_idx
    lonely = np.empty(right_ids.shape[0], np.int64)
    count = join_kernels.unmatched_rows(right_ids, matched, lonely)
    return (np.concatenate([left_idx, np.full(count, -1, np.int64)]),
            np.concatenate([right_idx, lonely[:count]]))


# --- codes shared by both sides ------------------------------------------------------------


def pair_codes(left: pa.Array, right: pa.Array):
    """(left codes, right codes, left can't-match mask, right can't-match mask) for one key
    pair; masks are uint8 (1 = NULL or a value the other side cannot hold) or None."""
    shared = dictionary_type(left.type, right.type)
    if shared is not None:
        return _dictionary_pair(as_shared(left, shared), as_shared(right, shared))
    (left_codes, left_skip), (right_codes, right_skip) = \
        side_codes(left, right.type), side_codes(right, left.type)
    return left_codes, right_codes, left_skip, right_skip


def as_shared(key: pa.Array, shared: pa.DataType) -> pa.Array:
    """A key of a dictionary-coded pair in the type both sides are compared in."""
    if key.type == shared:
        return key
    return as_array(_cast(key, shared) if pa.types.is_decimal(shared) else pc.cast(key, shared))


def dictionary_type(lt, rt) -> pa.DataType | None:
    """The type keys of types ``lt`` and ``rt`` are compared in when they are coded through
    the build side's dictionary (text, bytes, DECIMALs: ``_dictionary_pair``); None when
    each side is coded on its own (``side_codes``)."""
    if pa.types.is_null(lt) or pa.types.is_null(rt) or \
            is_integer_like(lt) and is_integer_like(rt):
        return None
    if _is_number(lt) and _is_number(rt) and (pa.types.is_floating(lt)
                                              or pa.types.is_floating(rt) or lt != rt):
        target = _number_pair_type(lt, rt)
        return target if target is not None and pa.types.is_decimal(target) else None
    if lt == rt:
        return lt
    for family, target in ((_is_text, pa.large_string()), (_is_bytes, pa.large_binary())):
        if family(lt) and family(rt):
            return target
    # DuckDB would cast a string to a number and fail on bad text; we refuse up front
    raise UnsupportedSql(f"cannot join keys of types {lt} and {rt}")


def side_codes(key: pa.Array, other) -> tuple[np.ndarray, np.ndarray | None]:
    """(codes, can't-match mask) of one side's ``key`` joined with keys of type ``other``,
    when no dictionary is shared (``dictionary_type`` None): they depend on the types
    alone, so a build side is coded once for any number of probe batches."""
    kt = key.type
    if pa.types.is_null(kt) or pa.types.is_null(other):
        return np.zeros(len(key), np.int64), np.ones(len(key), np.uint8)
    if is_integer_like(kt) and is_integer_like(other):
        return _integer_codes(_common_integer_like(key, other), other)
    target = _number_pair_type(kt, other)
    if target is not None and pa.types.is_float32(target):
        key = as_array(_cast(key, target))
    return float_codes(float64_values(key)), null_mask(key)


def _number_pair_type(lt, rt):
    """The type DuckDB compares two number keys of different types in (``common_type``): a
    FLOAT beside an integer or DECIMAL is a FLOAT (16777217 = 16777216::FLOAT), an integer
    beside a DECIMAL a DECIMAL, exact (a BIGINT 2**53 + 1 is no DECIMAL 2**53, which the
    DOUBLEs both become are); None for a BOOLEAN or types without one."""
    from .value_types import common_type

    if pa.types.is_boolean(lt) or pa.types.is_boolean(rt):
        return None
    return common_type([lt, rt])


def _cast(key: pa.Array, target: pa.DataType):
    from .value_types import cast_value

    return key if key.type == target else cast_value(key, target)


def _is_number(arrow_type) -> bool:
    return (pa.types.is_integer(arrow_type) or pa.types.is_floating(arrow_type)
            or pa.types.is_decimal(arrow_type) or pa.types.is_boolean(arrow_type))


def _common_integer_like(key: pa.Array, other) -> pa.Array:
    """An integer-like key as comparable raw values beside keys of type ``other`` (temporal:
    one type and unit)."""
    kt = key.type
    if kt == other or not (pa.types.is_temporal(kt) or pa.types.is_temporal(other)):
        return key
    target = _finer_temporal(kt, other)
    if target is None:
        raise UnsupportedSql(f"cannot join keys of types {kt} and {other}")
    return pc.cast(key, target)


def _finer_temporal(lt, rt):
    """The type both temporal keys are compared in: dates widen to timestamps, coarser units
    to finer ones; None when they are not comparable (e.g. a date and a time)."""
    kinds = {pa.types.is_timestamp(t) or pa.types.is_date(t) for t in (lt, rt)}
    if kinds != {True}:
        return None
    stamps = [t for t in (lt, rt) if pa.types.is_timestamp(t)]
    if not stamps:
        return pa.date64() if pa.types.is_date64(lt) or pa.types.is_date64(rt) else lt
    if len({t.tz for t in stamps}) > 1:
        return None
    unit = max((t.unit for t in stamps), key=_TIME_UNITS.index)
    return pa.timestamp(unit, stamps[0].tz)


def _integer_codes(key: pa.Array, other) -> tuple[np.ndarray, np.ndarray | None]:
    skip = null_mask(key)
    if pa.types.is_uint64(key.type) and not pa.types.is_uint64(other):
        # a uint64 value past 2**63 bit-casts to a negative code that could meet a real
        # negative value on the other side; it can never be equal to a signed one
        skip = _big_unsigned(key, skip)
    return int64_values(key), skip


def _big_unsigned(array: pa.Array, skip: np.ndarray | None) -> np.ndarray:
    big = pc.fill_null(pc.greater(array, pa.scalar(_INT64_MAX, pa.uint64())), False)
    mask = big.to_numpy(zero_copy_only=False).view(np.uint8).copy()
    if skip is not None:
        mask |= skip
    return mask


def _is_text(arrow_type) -> bool:
    return (pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type)
            or pa.types.is_string_view(arrow_type))


def _is_bytes(arrow_type) -> bool:
    return (_is_text(arrow_type) or pa.types.is_binary(arrow_type)
            or pa.types.is_large_binary(arrow_type) or pa.types.is_binary_view(arrow_type)
            or pa.types.is_fixed_size_binary(arrow_type))


def _dictionary_pair(left: pa.Array, right: pa.Array):
    """Codes from the build side's dictionary; probe values it lacks can't match."""
    encoded = dictionary_encode(right)
    positions = pc.index_in(left, value_set=encoded.dictionary)
    left_skip = null_mask(positions)
    return index_codes(positions), index_codes(encoded.indices), left_skip, null_mask(right)
