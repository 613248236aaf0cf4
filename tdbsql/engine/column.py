"""Columns of cells as they come out of tiles: raw storage values, var offsets, validity.

A ``Column`` keeps the bytes exactly as TileDB stores them (values in the storage dtype; var
cells as a uint8 byte buffer plus ``n + 1`` int64 byte offsets; validity as uint8, 1 = valid).
Operators gather and concatenate columns; only ``engine.arrow_convert`` turns them into Arrow.

A tile read into the tile cache may also carry one-byte ``codes`` into a ``dictionary`` of its
distinct values (``storage.tile_codes``): a second, smaller view of the same cells that the
kernels reading many cells a row prefer.  Rows taken from a coded fixed-size column stay
coded, and their values come from the dictionary by their codes, a byte read a row instead of
eight; a concatenated column is plain again.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..kernels import gather as gather_kernels
from . import pooled


@dataclass(frozen=True)
class Column:
    values: np.ndarray  # fixed: flat storage values (n * cell_val_num); var: uint8 bytes
    offsets: np.ndarray | None = None  # var: int64, n + 1 byte offsets into values
    validity: np.ndarray | None = None  # uint8 per cell, 1 = valid; None = all valid
    cell_val_num: int = 1
    codes: np.ndarray | None = None  # uint8 per cell: the cell's entry in ``dictionary``
    dictionary: np.ndarray | None = None  # float64 values, or int64 packed short strings

    @property
    def is_var(self) -> bool:
        return self.offsets is not None

    @cached_property
    def nbytes(self) -> int:
        """Bytes of the cells as stored (values, offsets, validity); worked out once (a
        cached tile is counted by every scan that reads it)."""
        return self.values.nbytes + sum(0 if part is None else part.nbytes
                                        for part in (self.offsets, self.validity))

    @cached_property
    def ascending(self) -> bool:
        """Whether the cells, one fixed value each, never decrease (NaN: no): a sparse
        tile's first dimension usually, its cells being stored in the array's global order.
        Worked out once a column, so a cached tile's ranges are found by binary search."""
        values = self.values
        if self.offsets is not None or self.cell_val_num != 1 or values.ndim != 1:
            return False
        return len(values) < 2 or bool((values[1:] >= values[:-1]).all())

    @property
    def held_bytes(self) -> int:
        """``nbytes`` and the codes' bytes: what keeping the column costs."""
        return self.nbytes + sum(0 if part is None else part.nbytes
                                 for part in (self.codes, self.dictionary))

    def __len__(self) -> int:
        if self.offsets is not None:
            return len(self.offsets) - 1
        return len(self.values) // self.cell_val_num

    def take(self, indices: np.ndarray) -> "Column":
        """Cells at ``indices`` (int64), in that order."""
        indices = np.ascontiguousarray(indices, dtype=np.int64)
        validity = None if self.validity is None else pooled.take(self.validity, indices)
        if self.offsets is not None:
            values, offsets = gather_var(self.values, self.offsets, indices)
            return Column(values, offsets, validity, self.cell_val_num)
        if self.codes is not None:  # a float64 tile's rows: their codes, then their values
            codes = pooled.empty(len(indices), np.uint8)
            values = pooled.empty(len(indices), np.float64)
            gather_kernels.gather_coded(self.codes, self.dictionary, indices, codes, values)
            return Column(values.view(self.values.dtype), None, validity, 1, codes,
                          self.dictionary)
        if self.cell_val_num == 1:
            return Column(pooled.take(self.values, indices), None, validity, 1)
        cells = self.values.reshape(-1, self.cell_val_num)[indices]
        return Column(cells.reshape(-1), None, validity, self.cell_val_num)


def gather_var(values: np.ndarray, offsets: np.ndarray, indices: np.ndarray):
    """Gather var-sized cells: ``(values, offsets)`` of the cells at ``indices`` (the values
    a view of a buffer with ``kernels.gather.WIDE`` bytes of slack, for the fast copy)."""
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    out_offsets = pooled.empty(len(indices) + 1, np.int64)
    total = int(gather_kernels.gathered_offsets(offsets, indices, out_offsets))
    out = pooled.empty(total + gather_kernels.WIDE, np.uint8)
    src = np.ascontiguousarray(values).view(np.uint8)
    if not src.flags.writeable:
        src = src.copy()
    gather_kernels.gather_bytes(src, offsets, indices, out_offsets, out)
    return out[:total], out_offsets


def rows_of(column: Column, start: int, end: int) -> Column:
    """Cells ``start .. end - 1`` of ``column``: views of its buffers (codes too), but a var
    column's offsets rebased to start at 0, as every column's do."""
    validity = None if column.validity is None else column.validity[start:end]
    codes = None if column.codes is None else column.codes[start:end]
    if column.offsets is None:
        n = column.cell_val_num
        return Column(column.values[start * n:end * n], None, validity, n, codes,
                      column.dictionary)
    offsets = column.offsets[start:end + 1]
    base = int(offsets[0])
    values = column.values[base:int(offsets[-1])]
    return Column(values, offsets - base, validity, column.cell_val_num, codes,
                  column.dictionary)


def concat(columns: list[Column]) -> Column:
    """One column holding the cells of ``columns`` one after another."""
    if len(columns) == 1:
        return columns[0]
    cvn = columns[0].cell_val_num
    has_validity = any(c.validity is not None for c in columns)
    validity = None
    if has_validity:
        validity = pooled.concatenate(
            [c.validity if c.validity is not None else np.ones(len(c), np.uint8) for c in columns]
        )
    if columns[0].offsets is None:
        return Column(pooled.concatenate([c.values for c in columns]), None, validity, cvn)
    offsets = pooled.empty(sum(len(c) for c in columns) + 1, np.int64)
    offsets[0] = base = row = 0
    for c in columns:
        # a sliced column's offsets may start past 0: rebase
        np.add(c.offsets[1:], base - c.offsets[0], out=offsets[row + 1:row + 1 + len(c)])
        base += int(c.offsets[-1] - c.offsets[0])
        row += len(c)
    values = pooled.concatenate([c.values[int(c.offsets[0]) : int(c.offsets[-1])]
                                 for c in columns])
    return Column(values, offsets, validity, cvn)


def repeat_value(value: bytes, dtype: np.dtype, count: int, var: bool, cell_val_num: int,
                 valid: bool | None) -> Column:
    """``count`` cells all holding the raw ``value`` (used for fill values)."""
    validity = None if valid is None else np.full(count, 1 if valid else 0, np.uint8)
    if var:
        raw = np.frombuffer(value, dtype=np.uint8)
        values = np.tile(raw, count)
        offsets = np.arange(count + 1, dtype=np.int64) * len(raw)
        return Column(values, offsets, validity, cell_val_num)
    cell = np.frombuffer(value, dtype=dtype)
    if len(cell) != cell_val_num:
        cell = np.resize(cell, cell_val_num)
    return Column(np.tile(cell, count), None, validity, cell_val_num)
