"""An equi-join's build side made once, then probed by batch after batch of probe rows.

A join fed its streamed input batch by batch (``engine.streamed_join``) matches every batch
against the same right rows: their key codes, hash table and rows per key
(``hash_join.key_groups``, ``hash_join.group_rows_of``) are made for the first batch and
kept.  A key pair's codes depend on the two types alone (``hash_join.side_codes``) or, for
text, bytes and DECIMALs, on the build side's dictionary, which is kept too; each batch's
keys are coded against it.  Keys of INTERVALs or STRUCTs (coded with both sides together),
and a batch whose key types are not the first's, are matched the ordinary way
(``hash_join``).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .hash_join import (
    as_shared, box_positions, dictionary_type, group_rows_of, hash_join, key_box,
    pairs_of_groups, side_codes,
)
from .hash_table import as_array, build_table, dictionary_encode, index_codes, key_matrix, \
    null_mask, probe_table


class BuildSide:
    """The right keys of one join entry; ``pairs(left_keys, check)`` matches a batch.
    ``probes``: about how many probe rows will come (sizes a direct lookup table)."""

    def __init__(self, right_keys: list, probes: int):
        self.right_keys = [as_array(key) for key in right_keys]
        self.probes = probes
        self.types: list | None = None  # the probe key types it is coded for
        self.sides: list = []  # per key pair: (shared dictionary type, dictionary) or
        #                         (None, the right key's type)
        self.built = None
        self.box = None
        self.grouped = None
        self.rehashed = False  # a batch was matched the ordinary way (its keys hashed anew)

    def pairs(self, left_keys: list, check) -> tuple[np.ndarray, np.ndarray]:
        """(left rows, right rows) of the batch's key matches, in left row order;
        ``check(pairs)`` sees their number before they are made."""
        left_keys = [as_array(key) for key in left_keys]
        types = [key.type for key in left_keys]
        if self.types is None and _codable(types + [k.type for k in self.right_keys]):
            self._build(types)
        if types != self.types:
            self.rehashed = True
            return hash_join(left_keys, self.right_keys, "inner", check)
        groups = probe_table(self.built, *self._probe_matrix(left_keys))
        return pairs_of_groups(groups, self.built, "inner", check, self.grouped)

    def _build(self, types: list) -> None:
        rows = len(self.right_keys[0])
        skip = np.zeros(rows, np.uint8)
        codes = []
        for right, left_type in zip(self.right_keys, types):
            shared = dictionary_type(left_type, right.type)
            if shared is None:
                coded, skipped = side_codes(right, left_type)
                self.sides.append((None, right.type))
            else:
                encoded = dictionary_encode(as_shared(right, shared))
                coded, skipped = index_codes(encoded.indices), null_mask(right)
                self.sides.append((shared, encoded.dictionary))
            codes.append(coded)
            if skipped is not None:
                skip |= skipped
        matrix = key_matrix(codes, rows)
        if len(codes) > 1:
            self.box = key_box(matrix, skip)
            if self.box is not None:
                matrix = box_positions(matrix, skip, self.box)
        self.built = build_table(matrix, skip, probes=self.probes)
        self.grouped = group_rows_of(self.built)
        self.types = types

    def _probe_matrix(self, left_keys: list) -> tuple[np.ndarray, np.ndarray]:
        """(key matrix, can't-match mask) of a batch's keys, coded as the build side's."""
        rows = len(left_keys[0])
        skip = np.zeros(rows, np.uint8)
        codes = []
        for key, (shared, other) in zip(left_keys, self.sides):
            if shared is None:
                coded, skipped = side_codes(key, other)
            else:
                positions = pc.index_in(as_shared(key, shared), value_set=other)
                coded, skipped = index_codes(positions), null_mask(positions)
            codes.append(coded)
            if skipped is not None:
                skip |= skipped
        matrix = key_matrix(codes, rows)
        if self.box is not None:
            matrix = box_positions(matrix, skip, self.box)
        return matrix, skip


def _codable(types: list) -> bool:
    """Can keys of these types be coded one side at a time (not INTERVALs, STRUCTs)?"""
    return not any(pa.types.is_interval(t) or pa.types.is_struct(t) for t in types)
