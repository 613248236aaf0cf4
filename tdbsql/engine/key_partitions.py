"""Grouping many rows partition by partition of their key range, on the thread pool.

Combining the partial states of a streamed aggregate (``engine.partial_aggregate``) groups all
partial rows again by key: with very many groups (TPC-H Q18's 1.5M orders, 2M partial rows)
one lookup table over the whole key range, far larger than the caches, and one thread.
``key_partitions`` splits the rows by the range of their first key code -- ``PARTITIONS``
neighbouring stretches of it, a stable counting sort -- so that each partition is grouped
(``hash_table.group_rows``) over a range a small lookup table covers, and the partitions are
grouped and folded on the pool, both cores at once.

A key lies in exactly one partition, so the partitions' groups together are the groups:
partition after partition, each in first-appearance order.  Rows keep their order inside a
partition, so order-sensitive states (first, string_agg) fold as they would in one piece.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pyarrow as pa

from ..kernels import hashing
from .grouping import Groups, rows_by_group
from .hash_table import group_rows, key_codes
from .parallel import map_ordered

PARTITION_ROWS = 1 << 16  # rows a partition holds at least (else one piece: no gain)
PARTITIONS = 64  # at most


@dataclass(frozen=True)
class KeyPartitions:
    """Per partition its rows (ascending) and their groups (ids local to the partition)."""

    rows: list[np.ndarray]
    groups: list[Groups]

    @property
    def count(self) -> int:
        return sum(groups.count for groups in self.groups)

    @property
    def first(self) -> np.ndarray:
        """Each group's first row, partition after partition."""
        return np.concatenate([rows[groups.first]
                               for rows, groups in zip(self.rows, self.groups)])

    def fold(self, fn: Callable[[list[pa.Array], Groups], pa.Array],
             columns: list[pa.Array]) -> list[pa.Array]:
        """``fn(the columns' rows of a partition, its groups)`` of every partition, on the
        pool: one array per partition, a value per group."""
        def part(index: int) -> pa.Array:
            taken = pa.array(self.rows[index])
            return fn([column.take(taken) for column in columns], self.groups[index])

        return list(map_ordered(part, range(len(self.rows))))


def key_partitions(keys: list[pa.Array], nrows: int) -> KeyPartitions | None:
    """The rows of the key columns split by their first key code's range, each partition
    grouped; None when the rows are too few to gain from it (or their codes too alike)."""
    wanted = min(PARTITIONS, nrows // PARTITION_ROWS)
    if not keys or wanted < 2:
        return None
    codes = [np.require(code, np.int64, ["C", "W"]) for key in keys for code in key_codes(key)]
    low, high = map(int, hashing.int_range(codes[0]))
    span = high - low  # a Python int: no overflow
    shift = max(0, span.bit_length() - (wanted.bit_length() - 1))  # span >> shift < wanted
    count = (span >> shift) + 1
    if count < 2:
        return None
    # unsigned: ``code - low`` of codes spanning more than int64 wraps to the right offset
    offsets = codes[0].view(np.uint64) - np.uint64(low % 2**64)
    parts = (offsets >> np.uint64(shift)).view(np.int64)
    order, starts = rows_by_group(parts, count)
    rows = [order[start:end] for start, end in zip(starts[:-1], starts[1:]) if end > start]

    def grouped(part_rows: np.ndarray) -> Groups:
        built = group_rows([code[part_rows] for code in codes], len(part_rows))
        return Groups(built.ids, built.count, built.first)

    return KeyPartitions(rows, list(map_ordered(grouped, rows)))
