"""Rows split into partitions by a hash of their key values, the same in every batch.

An aggregate spilled to disk (``engine.spilled_aggregate``) writes batch after batch of
partial groups to partitions and later groups each partition alone: a key must land in the
same partition in every batch, whatever Arrow type the batch gave it (a dictionary or plain
strings, string or large_string, int32 or int64).  So the codes hashed here come from the
values alone: an integer-like, floating or NULL key's ``hash_table.key_codes`` (NULL -> 0), a
decimal's 128 bits, a string's or binary's bytes (``kernels.partition_hash``).  Two different
keys may share a partition; equal keys always do.  Keys of other types (lists, structs, maps,
intervals) are not partitioned (``partitionable``).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..kernels import partition_hash
from .hash_table import as_array, float_codes, float64_values, int64_values, is_integer_like, \
    key_matrix, null_mask

_TEXT = (pa.types.is_string, pa.types.is_large_string, pa.types.is_binary,
         pa.types.is_large_binary)


def partitionable(arrow_type: pa.DataType) -> bool:
    """Can keys of ``arrow_type`` be hashed by value (``partitions``)?"""
    if pa.types.is_dictionary(arrow_type):
        arrow_type = arrow_type.value_type
    return (is_integer_like(arrow_type) or pa.types.is_floating(arrow_type)
            or pa.types.is_null(arrow_type) or pa.types.is_decimal128(arrow_type)
            or any(test(arrow_type) for test in _TEXT))


def partitions(keys: list[pa.Array], count: int, divisor: int = 1) -> np.ndarray:
    """Each row's partition, ``0 .. count - 1``, from its key values (``partitionable``
    types): equal keys, equal partitions.  ``divisor``: the product of the partition counts
    the rows were split by already (a split of one partition of those)."""
    rows = len(keys[0])
    out = np.empty(rows, np.int64)
    columns = [code for key in keys for code in _value_codes(as_array(key))]
    partition_hash.row_partitions(key_matrix(columns, rows), count, divisor, out)
    return out


def _value_codes(array: pa.Array) -> list[np.ndarray]:
    """int64 code columns of one key column that depend on its values alone (NULL -> 0)."""
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    arrow_type = array.type
    if pa.types.is_null(arrow_type):
        return [np.zeros(len(array), np.int64)]
    if is_integer_like(arrow_type):
        codes = [int64_values(array)]
    elif pa.types.is_floating(arrow_type):
        codes = [float_codes(float64_values(array))]
    elif pa.types.is_decimal128(arrow_type):  # two int64 halves of each 16-byte value
        halves = np.frombuffer(array.buffers()[1], np.int64, 2 * len(array), 16 * array.offset)
        codes = [halves[0::2].copy(), halves[1::2].copy()]
    else:
        codes = [_byte_codes(array)]
    nulls = null_mask(array)
    if nulls is not None:
        for code in codes:
            code[nulls.view(np.bool_)] = 0  # whatever the NULL slots held
    return codes


def _byte_codes(array: pa.Array) -> np.ndarray:
    """A string or binary column's cells hashed from their bytes."""
    if pa.types.is_string(array.type) or pa.types.is_binary(array.type):
        array = array.cast(pa.large_binary())
    out = np.empty(len(array), np.int64)
    if len(array) == 0:
        return out
    buffers = array.buffers()
    offsets = np.frombuffer(buffers[1], np.int64, len(array) + 1, 8 * array.offset)
    data = np.zeros(0, np.uint8) if buffers[2] is None else np.frombuffer(buffers[2], np.uint8)
    partition_hash.byte_hashes(offsets, data, out)
    return out
