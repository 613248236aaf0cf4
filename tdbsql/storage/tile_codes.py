"""Dictionary codes for tiles going into the tile cache (``kernels.tile_codes``).

A tile is read once and then served from the cache to every later query, so the cache is where
a second, compact view of its cells pays: one pass the first time the cache serves the tile
(a tile read only once, as by a one-off query in a fresh process, is never encoded), and every
later scan that sums, groups or filters it (``engine.scan_sums``, ``engine.stored_filter``)
reads a byte a cell instead of eight or more.  Only columns those scans read get codes:
float64 and short (at most 7 bytes) strings, one value a cell, never NULL, holding at most
``kernels.tile_codes.MOST`` distinct values.
A float64 dictionary is sorted in SQL order (NaN last), so a filter's interval over the
values is a run of codes (``engine.stored_filter``).
"""

from __future__ import annotations

import numpy as np

from ..datatypes import VAR_NUM, Datatype, type_info
from ..engine.column import Column
from ..kernels import tile_codes

SMALLEST = 256  # cells a tile needs for its codes to be worth a pass


def with_codes(column: Column, spec) -> Column:
    """``column`` (a decoded tile of field ``spec``) with ``codes`` and ``dictionary`` when its
    cells fit them, else ``column`` itself."""
    if spec.nullable or len(column) < SMALLEST or not _codable(spec):
        return column
    codes = np.empty(len(column), np.uint8)
    if spec.cell_val_num == VAR_NUM:
        dictionary = np.empty(tile_codes.MOST, np.int64)
        count = tile_codes.string_codes(_writable(column.offsets, np.int64),
                                        _writable(column.values, np.uint8), codes, dictionary)
    else:
        dictionary = np.empty(tile_codes.MOST, np.float64)
        count = tile_codes.float_codes(_writable(column.values, np.float64), codes, dictionary)
    if count < 0:
        return column
    dictionary = dictionary[:count].copy()  # not a view: the cache counts these bytes only
    if spec.cell_val_num != VAR_NUM:  # in SQL order (NaN last): an interval is a run of codes
        order = np.argsort(dictionary, kind="stable")
        renumbered = np.empty(count, np.uint8)
        renumbered[order] = np.arange(count, dtype=np.uint8)
        codes = renumbered[codes]
        dictionary = dictionary[order]
    return Column(column.values, column.offsets, column.validity, column.cell_val_num, codes,
                  dictionary)


def string_dictionary(dictionary: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A short-string tile's dictionary (each cell packed in an int64 as
    ``kernels.hashing.packed_cell`` packs it: byte j at bits 8j, the length at bits 56..63)
    as its strings' bytes (uint8; one zero byte when all are empty) and offsets (int64)."""
    packed = dictionary.view(np.uint64)
    lengths = (packed >> np.uint64(56)).astype(np.int64)
    offsets = np.zeros(len(packed) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    cells = (packed[:, None] >> (np.uint64(8) * np.arange(7, dtype=np.uint64))) & np.uint64(255)
    data = cells.astype(np.uint8)[np.arange(7) < lengths[:, None]]  # cell by cell
    return (data if len(data) else np.zeros(1, np.uint8)), offsets


def _codable(spec) -> bool:
    if spec.cell_val_num == VAR_NUM:
        info = type_info(spec.datatype)
        return info.kind == "string" and info.size == 1
    return spec.cell_val_num == 1 and spec.datatype == Datatype.FLOAT64


def _writable(values: np.ndarray, dtype) -> np.ndarray:
    return np.require(values, dtype, ["C", "W"])
