"""Key columns -> int64 codes -> a hash table of groups (GROUP BY, DISTINCT, join build side).

In: key columns (pyarrow arrays of any type).  Out: ``HashTable`` (a group id per row, dense
``0..count-1`` in first-appearance order, each group's first row, and what ``probe_table``
needs to look rows of another key matrix up), plus the Arrow -> numpy helpers the aggregates
and joins share (``int64_values``, ``float64_values``, ``valid_mask``, ``null_mask``).

Every key column first becomes int64 *codes* (``key_codes``): integers, dates, times, timestamps
and booleans as their integer value; floats with -0.0 folded into 0.0 and all NaNs made one,
then bit-cast; strings and binary whose cells all fit 7 bytes as those bytes and the length
packed into one int64 (``kernels.hashing.pack_short_strings``); everything else (longer
strings, decimals) through ``dictionary_encode``.  A NULL is a group of its own: dictionary
codes use -1, value codes get an extra 0/1 NULL-flag column.  The code columns go to the
hashing kernels (``kernels/hashing.py``): a direct lookup when the codes span a small box (for
grouping, several columns then become one box-position code: ``group_rows``), else open
addressing over the columns stacked into a (columns, rows) matrix.

Values are read straight from the Arrow buffers (no ``fill_null`` / ``to_numpy`` passes): the
value in a NULL slot is whatever the buffer holds, so every consumer masks NULLs out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import UnsupportedSql
from ..kernels import hashing
from . import pooled
from .decimal_values import to_double
from .value_types import storage_integers

NO_ROWS = np.empty(0, np.uint8)  # "no mask" for the kernels' skip/valid arguments
# The largest direct-lookup box (slots, 8 bytes each; at most 8 slots per row): one
# random access a row beats hashing even far outside the caches (6M random keys in 1..6M:
# 0.33 s direct, 1.7 s hashed), so only the memory bounds it.
_DIRECT_MAX_SLOTS = 1 << 24
_DIRECT_SLOTS_PER_ROW = 16
_FIRST_TABLE_SLOTS = 1 << 12
_LARGEST_FIRST_TABLE = 1 << 21


@dataclass(frozen=True)
class HashTable:
    """Groups of a key matrix plus what it takes to look other rows up (join build side).

    ``table`` is either the open-addressing table (``mins`` empty; ``(capacity, 2)``: each
    slot's group and that group's code in the first key column) or, in direct mode, the flat
    slot -> group lookup over the box ``mins + [0, extents)``.
    """

    keys: np.ndarray
    ids: np.ndarray
    count: int
    first: np.ndarray
    table: np.ndarray
    mins: np.ndarray
    extents: np.ndarray

    @property
    def direct(self) -> bool:
        return self.mins.shape[0] > 0


# --- Arrow -> numpy ------------------------------------------------------------------------


def as_array(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    """One contiguous Array (dictionary values decoded first: chunks may carry different
    dictionaries)."""
    if pa.types.is_dictionary(values.type):
        values = pc.cast(values, values.type.value_type)
    if isinstance(values, pa.ChunkedArray):
        if values.num_chunks == 1:  # combine_chunks would copy even a single chunk
            return values.chunk(0)
        return values.combine_chunks() if values.num_chunks else pa.array([], values.type)
    return values


def _bits(buffer: pa.Buffer | None, offset: int, n: int) -> np.ndarray:
    """uint8 0/1 per bit ``offset .. offset+n`` of an Arrow bitmap (least significant first)."""
    if n == 0:
        return np.zeros(0, np.uint8)
    first = offset // 8
    packed = np.frombuffer(buffer, np.uint8, (offset + n + 7) // 8 - first, first)
    start = offset % 8
    return np.unpackbits(packed, bitorder="little")[start:start + n]


def valid_mask(array: pa.Array) -> np.ndarray | None:
    """uint8 per row, 1 = not NULL; None when the array has no NULLs."""
    if array.null_count == 0:
        return None
    if pa.types.is_null(array.type):
        return np.zeros(len(array), np.uint8)
    return _bits(array.buffers()[0], array.offset, len(array))


def null_mask(array: pa.Array) -> np.ndarray | None:
    """uint8 per row, 1 = NULL; None when the array has no NULLs."""
    valid = valid_mask(array)
    return None if valid is None else np.bitwise_xor(valid, 1, out=valid)


def _data(array: pa.Array) -> np.ndarray:
    """The values of a fixed-width numeric array as a numpy view of its data buffer (writable
    only when Arrow's buffer is mutable); NULL slots hold anything."""
    dtype = np.dtype(array.type.to_pandas_dtype())
    if len(array) == 0:
        return np.zeros(0, dtype)
    return np.frombuffer(array.buffers()[1], dtype, len(array), array.offset * dtype.itemsize)


def is_exact_integer(arrow_type: pa.DataType) -> bool:
    """Integers whose int64 value is the number itself (every integer type but uint64)."""
    return pa.types.is_integer(arrow_type) and arrow_type != pa.uint64()


def is_integer_like(arrow_type: pa.DataType) -> bool:
    """Types whose values are integers in an int64 (temporal types by their raw count)."""
    return (pa.types.is_integer(arrow_type) or pa.types.is_boolean(arrow_type)
            or pa.types.is_temporal(arrow_type)) and not pa.types.is_interval(arrow_type)


def int64_values(array: pa.Array, *, copy: bool = True) -> np.ndarray:
    """int64 values of an integer-like array (uint64 bit-cast), writable and C-contiguous.

    ``copy=False`` returns Arrow's own memory when it already is that: for kernels that only
    read their input (the aggregates), never for one that writes into it.
    """
    arrow_type = array.type
    if pa.types.is_boolean(arrow_type):
        return _bits(array.buffers()[1], array.offset, len(array)).astype(np.int64)
    if pa.types.is_temporal(arrow_type):
        array = array.view(storage_integers(arrow_type))
    values = _data(array)
    if values.dtype == np.uint64:
        values = values.view(np.int64)
    return values.astype(np.int64) if copy else np.require(values, np.int64, ["C", "W"])


def float64_values(array: pa.Array, *, copy: bool = True) -> np.ndarray:
    """float64 values of a numeric array (integers, floats, decimals, booleans), writable and
    C-contiguous; ``copy`` as for ``int64_values``.  A DECIMAL converts correctly rounded, as
    DuckDB converts it (``decimal_values.to_double``; Arrow's cast is one unit in the last
    place off for some wide values)."""
    if pa.types.is_decimal(array.type):
        array = to_double(array)
    elif pa.types.is_boolean(array.type):
        array = pc.cast(array, pa.float64())
    values = _data(array)
    return values.astype(np.float64) if copy else np.require(values, np.float64, ["C", "W"])


def float_codes(values: np.ndarray) -> np.ndarray:
    """Bit patterns of float64 values with -0.0 == 0.0 and all NaNs one code (in place)."""
    values[np.isnan(values)] = np.nan
    values += 0.0  # -0.0 + 0.0 is +0.0
    return values.view(np.int64)


# --- key codes -----------------------------------------------------------------------------


def key_codes(values: pa.Array | pa.ChunkedArray) -> list[np.ndarray]:
    """int64 code columns of one key column: equal keys <-> equal codes, NULL its own key."""
    array = as_array(values)
    arrow_type = array.type
    if pa.types.is_null(arrow_type):
        return [np.zeros(len(array), np.int64)]
    if is_integer_like(arrow_type):
        codes = int64_values(array)
    elif pa.types.is_floating(arrow_type):
        codes = float_codes(float64_values(array))
    elif pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return key_codes(list_code_bytes(array))
    elif pa.types.is_map(arrow_type):  # as its lists of keys and of values, as DuckDB
        from .map_values import field_lists  # groups MAPs: their (key, value) pairs in order

        return [code for field in (0, 1)
                for code in key_codes(field_lists(array, field, len(array)))]
    elif pa.types.is_struct(arrow_type):  # field by field, NULL fields equal (DuckDB)
        fields = [key_codes(pc.struct_field(array, [i])) for i in range(arrow_type.num_fields)]
        return [array.is_null().to_numpy(zero_copy_only=False).astype(np.int64),
                *(code for field in fields for code in field)]
    elif pa.types.is_interval(arrow_type):  # as INTERVALs compare: 1 day = 24 hours
        from .interval_compare import sort_parts  # it reads the evaluator's types

        return [code for part in sort_parts(array) for code in key_codes(part)]
    else:
        codes = short_string_codes(array)
        if codes is None:
            return [dictionary_codes(array)]
    nulls = null_mask(array)
    if nulls is None:
        return [codes]
    codes[nulls.view(np.bool_)] = 0  # whatever the NULL slots held: one code for all
    return [codes, nulls.astype(np.int64)]


def list_code_bytes(array: pa.Array) -> pa.Array:
    """A list column as one binary value per row: its elements' key codes, bytes after bytes
    (equal lists <-> equal bytes, as DuckDB groups lists: NULL elements equal); a NULL list
    stays NULL.  Nested lists recurse through ``key_codes``."""
    if pa.types.is_large_list(array.type):
        array = array.cast(pa.list_(array.type.value_type))
    lengths = np.asarray(pc.fill_null(pc.list_value_length(array), 0).to_numpy(), np.int64)
    elements = pc.list_flatten(array)
    columns = key_codes(elements) if len(elements) else [np.zeros(0, np.int64)]
    width = 8 * len(columns)
    data = np.ascontiguousarray(np.stack(columns, axis=1)).view(np.uint8).ravel()
    offsets = np.zeros(len(array) + 1, np.int64)
    np.cumsum(lengths * width, out=offsets[1:])
    validity = None if array.null_count == 0 else array.is_valid().buffers()[1]
    return pa.Array.from_buffers(pa.large_binary(), len(array),
                                 [validity, pa.py_buffer(offsets), pa.py_buffer(data)])


_STRING_TYPES = {pa.string(): np.int32, pa.binary(): np.int32, pa.large_string(): np.int64,
                 pa.large_binary(): np.int64}


def short_string_codes(array: pa.Array) -> np.ndarray | None:
    """Codes of a string / binary column whose cells are all at most 7 bytes (flags, codes,
    short names -- typical GROUP BY keys): the bytes themselves packed into an int64, no hash
    table needed.  None for other columns (``dictionary_codes`` then)."""
    offset_type = _STRING_TYPES.get(array.type)
    if offset_type is None or len(array) == 0:
        return None
    buffers = array.buffers()
    offsets = np.frombuffer(buffers[1], offset_type, len(array) + 1, array.offset *
                            np.dtype(offset_type).itemsize).astype(np.int64)
    if offsets[-1] - offsets[0] > 7 * len(array):
        return None  # some cell must be longer
    data = np.frombuffer(buffers[2], np.uint8) if buffers[2] is not None else \
        np.zeros(0, np.uint8)
    if not data.flags.writeable:
        data = data[offsets[0]:offsets[-1]].copy()
        offsets -= offsets[0]
    codes = pooled.empty(len(array), np.int64)
    if not hashing.pack_short_strings(offsets, data, codes):
        return None
    return codes


def dictionary_encode(array: pa.Array) -> pa.DictionaryArray:
    """``pc.dictionary_encode`` (NULLs stay NULL indices) with a clear error for types that
    cannot be hashed (lists, structs, ...)."""
    try:
        return pc.dictionary_encode(array)
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid) as err:
        raise UnsupportedSql(f"grouping or joining on a column of type {array.type} "
                             f"is not supported") from err


def dictionary_codes(array: pa.Array) -> np.ndarray:
    """Codes of any hashable Arrow type via ``dictionary_encode``; NULL -> -1."""
    return index_codes(dictionary_encode(array).indices)


def index_codes(indices: pa.Array) -> np.ndarray:
    """Writable int64 codes of integer positions (dictionary indices), NULL -> -1."""
    codes = int64_values(indices)
    nulls = null_mask(indices)
    if nulls is not None:
        codes[nulls.view(np.bool_)] = -1
    return codes


def key_matrix(columns: list[np.ndarray], nrows: int) -> np.ndarray:
    """Stack code columns into the kernels' (columns, rows) C-contiguous int64 matrix."""
    if not columns:
        return np.zeros((1, nrows), np.int64)
    if len(columns) == 1:
        return np.ascontiguousarray(columns[0]).reshape(1, nrows)
    return np.stack(columns)


# --- building and probing the table --------------------------------------------------------


def build_table(keys: np.ndarray, skip: np.ndarray | None = None,
                probes: int = 0) -> HashTable:
    """Group the rows of a key matrix (rows with ``skip`` set get id -1); ``probes``: how
    many rows will be looked up in it (a join's other side), which pays for a larger direct
    table -- a lookup there is one read, with no hashing (6M probes of 10K part keys spread
    over 200K: 80 -> 38 ms)."""
    skip = NO_ROWS if skip is None else skip
    selected = keys if skip.shape[0] == 0 else keys[:, skip == 0]
    box = _box(list(selected), keys.shape[1], probes)
    if box is not None:
        lows, extents, size = box
        return _build_direct(keys, skip, np.array(lows, np.int64), np.array(extents, np.int64),
                             size)
    return _build_hashed(keys, skip)


def group_rows(columns: list[np.ndarray], nrows: int) -> HashTable:
    """Group rows by their code columns (GROUP BY, DISTINCT).  Several columns spanning a small
    box become one code per row -- the row's position in the box, ``((c0 - lo0) * extent1 +
    c1 - lo1) * ...`` -- so no key matrix is stacked (GROUP BY flag, status); the table's
    ``keys`` are then those codes."""
    box = _box(columns, nrows) if len(columns) > 1 else None
    if box is None:
        return build_table(key_matrix(columns, nrows))
    lows, extents, size = box
    code = np.subtract(columns[0], lows[0], out=pooled.empty(nrows, np.int64))
    for column, low, extent in zip(columns[1:], lows[1:], extents[1:]):
        hashing.box_append(code, np.require(column, np.int64, ["C", "W"]), low, extent)
    return _build_direct(code.reshape(1, nrows), NO_ROWS, np.zeros(1, np.int64),
                         np.array([size], np.int64), size)


def _box(columns: list[np.ndarray], nrows: int, probes: int = 0
         ) -> tuple[list[int], list[int], int] | None:
    """(lows, extents, size) of the box the code columns span, when it is small enough for a
    direct lookup (a flat array of ``size`` slots for ``nrows`` rows, ``probes`` more looked
    up later); None otherwise."""
    if nrows == 0 or not columns or len(columns[0]) == 0:
        return None
    limit = min(_DIRECT_MAX_SLOTS, _DIRECT_SLOTS_PER_ROW * nrows + 1024 + probes)
    lows, extents, size = [], [], 1
    for column in columns:
        low, high = map(int, hashing.int_range(np.require(column, np.int64, ["C", "W"])))
        lows.append(low)
        extents.append(high - low + 1)
        size *= high - low + 1  # Python ints: no overflow for wide ranges
        if size > limit:
            return None
    return lows, extents, size


def _build_direct(keys, skip, mins, extents, size) -> HashTable:
    nrows = keys.shape[1]
    slot_groups = pooled.empty(size, np.int32)  # half the cache lines of int64
    slot_groups.fill(-1)
    ids = pooled.empty(nrows, np.int64)
    first = np.empty(min(size, nrows), np.int64)
    count = hashing.group_direct(keys, mins, extents, skip, slot_groups, ids, first)
    return HashTable(keys, ids, count, first[:count].copy(), slot_groups, mins, extents)


def _build_hashed(keys, skip) -> HashTable:
    nrows = keys.shape[1]
    # keys that missed the direct box are usually many: start at one slot per row (up to
    # _LARGEST_FIRST_TABLE), so a table of distinct keys is rebuilt once, not ~8 times
    capacity = max(_FIRST_TABLE_SLOTS, min(_LARGEST_FIRST_TABLE,
                                           1 << max(nrows - 1, 1).bit_length()))
    table = np.full((capacity, 2), -1, np.int64)  # per slot: group, its first key code
    first = np.empty(capacity // 2, np.int64)
    ids = pooled.empty(nrows, np.int64)
    row, count = 0, 0
    while True:
        row, count = hashing.group_insert(keys, skip, row, count, table, first, ids)
        if row >= nrows:
            break
        # half full: double the table, re-insert the groups so far, carry on from `row`
        capacity *= 2
        table = np.full((capacity, 2), -1, np.int64)
        hashing.table_rehash(keys, first, count, table)
        first = np.concatenate([first, np.empty(capacity // 2 - first.shape[0], np.int64)])
    empty = np.empty(0, np.int64)
    return HashTable(keys, ids, count, first[:count].copy(), table, empty, empty)


def probe_table(built: HashTable, keys: np.ndarray, skip: np.ndarray | None = None):
    """Group id (in ``built``) of every row of another key matrix with the same columns;
    -1 where the key is absent or the row is skipped."""
    skip = NO_ROWS if skip is None else skip
    out = pooled.empty(keys.shape[1], np.int64)
    if built.count == 0:
        out.fill(-1)
        return out
    if built.direct:
        slots = pooled.empty(keys.shape[1], np.int64)
        hashing.box_slots(keys, built.mins, built.extents, skip, slots)
        hashing.direct_probe(slots, built.table, out)
    else:
        hashing.table_probe(built.table, built.keys, built.first, keys, skip, out)
    return out
