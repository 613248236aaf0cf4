"""Tile and fragment min / max / sum / null count, as TileDB 2.30 writes them.

In: one field's cells in stored order (``FieldBuffer``), the field's type, whether it is a
dimension, and the cells per tile.  Out: ``TileStats`` -- the per-tile sections of the fragment
metadata (only those TileDB keeps for the field) -- and ``fragment_stats`` -- the
fragment-level values computed from them (``FragmentMetadata::
compute_fragment_min_max_sum_null_count``).

Which fields get what (``TileMetadataGenerator::has_min_max_metadata / has_sum_metadata``):
no min/max for dimensions, for var-sized or multi-value cells other than CHAR/STRING_ASCII,
nor for blobs and non-ASCII strings; sums only for fixed single-value numeric fields (CHAR
included, STRING_ASCII not); null counts for nullable attributes.  A tile whose cells are all
NULL keeps zero min/max bytes.  The ``__coords`` slot gets zero mins/maxes/sums of its size.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np

from ..datatypes import VAR_NUM, Datatype, type_info
from ..kernels import tile_stats as kernels
from .write_buffers import FieldBuffer

_NO_STATS = frozenset({Datatype.ANY, Datatype.BLOB, Datatype.GEOM_WKB, Datatype.GEOM_WKT,
                       Datatype.STRING_UTF8, Datatype.STRING_UTF16, Datatype.STRING_UTF32,
                       Datatype.STRING_UCS2, Datatype.STRING_UCS4})
_CHARS = (Datatype.CHAR, Datatype.STRING_ASCII)


def has_min_max(datatype: int, is_dim: bool, is_var: bool, cell_val_num: int) -> bool:
    if is_dim:
        return False
    if is_var and datatype not in _CHARS:
        return False
    if cell_val_num != 1 and not is_var and datatype not in _CHARS:
        return False
    return datatype not in _NO_STATS


def has_sum(datatype: int, is_var: bool, cell_val_num: int) -> bool:
    if is_var or cell_val_num != 1:
        return False
    return datatype not in _NO_STATS and datatype != Datatype.STRING_ASCII


@dataclass
class TileStats:
    """Per-tile sections for one field (absent ones stay None)."""

    mins: object = None  # numpy array (numeric) or list of bytes
    maxes: object = None
    sums: np.ndarray | None = None
    null_counts: np.ndarray | None = None
    cell_counts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))


def tile_stats(datatype: int, cell_val_num: int, is_dim: bool, nullable: bool,
               buf: FieldBuffer, tile_size: int, n_cells: int,
               written: np.ndarray | None = None) -> TileStats:
    """``written`` (dense tiles): uint8 per cell, 0 for the padding cells outside the written
    subarray, which TileDB leaves out of every statistic."""
    n_tiles = -(-n_cells // tile_size) if n_cells else 0
    counts = np.full(n_tiles, tile_size, dtype=np.int64)
    if n_tiles:
        counts[-1] = n_cells - tile_size * (n_tiles - 1)
    validity = buf.validity if buf.validity is not None else np.ones(n_cells, dtype=np.uint8)
    validity = np.ascontiguousarray(validity, dtype=np.uint8)
    is_var = cell_val_num == VAR_NUM
    stats = TileStats(cell_counts=counts)
    if nullable:
        stats.null_counts = np.empty(n_tiles, dtype=np.uint64)
        nulls = validity if written is None else np.ascontiguousarray(1 - (written & (1 - validity)))
        kernels.null_counts(nulls, tile_size, stats.null_counts)
    if written is not None:
        validity = np.ascontiguousarray(validity & written)
    if has_min_max(datatype, is_dim, is_var, cell_val_num):
        if is_var:
            stats.mins, stats.maxes = _var_min_max(buf, validity, tile_size, n_tiles)
        elif datatype in _CHARS:
            stats.mins, stats.maxes = _char_min_max(buf, cell_val_num, validity, tile_size, n_tiles)
        else:
            stats.mins, stats.maxes = _numeric_min_max(datatype, buf, validity, tile_size, n_tiles)
    if has_sum(datatype, is_var, cell_val_num):
        stats.sums = _sums(datatype, buf, validity, tile_size, n_tiles)
    if nullable and isinstance(stats.mins, np.ndarray):
        # a tile whose cells are all NULL keeps the zeroed buffer (TileDB skips setting it)
        all_null = stats.null_counts.astype(np.int64) == counts
        stats.mins[all_null] = 0
        stats.maxes[all_null] = 0
    return stats


def _numeric_min_max(datatype, buf, validity, tile_size, n_tiles):
    info = type_info(datatype)
    values = np.ascontiguousarray(buf.values.view(info.numpy))
    dtype = info.numpy
    if info.kind == "float":
        init_min, init_max = np.finfo(dtype).max, np.finfo(dtype).min
    else:
        init_min, init_max = np.iinfo(dtype).max, np.iinfo(dtype).min
    mins = np.empty(n_tiles, dtype=dtype)
    maxes = np.empty(n_tiles, dtype=dtype)
    valid = np.empty(n_tiles, dtype=np.int64)
    kernels.min_max_fixed(values, validity, tile_size, dtype.type(init_min), dtype.type(init_max),
                          mins, maxes, valid)
    return mins, maxes


def _char_min_max(buf, cell_val_num, validity, tile_size, n_tiles):
    data = np.ascontiguousarray(buf.values.view(np.uint8))
    lo = np.empty(n_tiles, dtype=np.int64)
    hi = np.empty(n_tiles, dtype=np.int64)
    kernels.min_max_fixed_chars(data, cell_val_num, validity, tile_size, lo, hi)
    zero = bytes(cell_val_num)

    def cell(idx):
        return zero if idx < 0 else data[idx * cell_val_num:(idx + 1) * cell_val_num].tobytes()
    return [cell(i) for i in lo.tolist()], [cell(i) for i in hi.tolist()]


def _var_min_max(buf, validity, tile_size, n_tiles):
    data = np.ascontiguousarray(buf.values.view(np.uint8))
    offsets = np.ascontiguousarray(buf.offsets, dtype=np.int64)
    lo = np.empty(n_tiles, dtype=np.int64)
    hi = np.empty(n_tiles, dtype=np.int64)
    kernels.min_max_var(data, offsets, validity, tile_size, lo, hi)

    def cell(idx):
        return b"" if idx < 0 else data[offsets[idx]:offsets[idx + 1]].tobytes()
    return [cell(i) for i in lo.tolist()], [cell(i) for i in hi.tolist()]


def sum_kind(datatype: int) -> str:
    info = type_info(datatype)
    if info.kind == "float":
        return "float"
    if datatype == Datatype.CHAR or info.kind in ("datetime", "time") or info.numpy.kind == "i":
        return "int"
    return "uint"


def _sums(datatype, buf, validity, tile_size, n_tiles) -> np.ndarray:
    info = type_info(datatype)
    values = buf.values.view(info.numpy)
    kind = sum_kind(datatype)
    if datatype == Datatype.CHAR:
        values = values.view(np.int8)  # a C char is signed
    if kind == "float":
        out = np.empty(n_tiles, dtype=np.float64)
        kernels.sum_float64(np.ascontiguousarray(values, dtype=np.float64), validity, tile_size, out)
    elif kind == "int":
        out = np.empty(n_tiles, dtype=np.int64)
        kernels.sum_int64(np.ascontiguousarray(values, dtype=np.int64), validity, tile_size, out)
    else:
        out = np.empty(n_tiles, dtype=np.uint64)
        kernels.sum_uint64(np.ascontiguousarray(values, dtype=np.uint64), validity, tile_size, out)
    return out


# --- fragment level -----------------------------------------------------------------------------


def fragment_stat(datatype: int, cell_val_num: int, is_dim: bool, nullable: bool,
                  stats: TileStats) -> tuple[bytes, bytes, bytes, int]:
    """(min bytes, max bytes, 8 sum bytes, null count) of the whole fragment."""
    counts = stats.cell_counts
    nulls = stats.null_counts if stats.null_counts is not None else np.zeros(len(counts), np.uint64)
    all_null = (nulls.astype(np.int64) == counts) if nullable else np.zeros(len(counts), bool)
    null_count = int(nulls.sum()) if nullable else 0
    is_var = cell_val_num == VAR_NUM
    mn = mx = b""
    if has_min_max(datatype, is_dim, is_var, cell_val_num):
        if is_var:
            mn, mx = _fragment_var(stats, all_null)
        elif datatype in _CHARS:
            mn, mx = _fragment_chars(stats, all_null, cell_val_num)
        else:
            mn, mx = _fragment_numeric(datatype, stats, all_null)
    total = bytes(8)
    if has_sum(datatype, is_var, cell_val_num):
        total = _fragment_sum(datatype, stats.sums, all_null)
    return mn, mx, total, null_count


def _fragment_numeric(datatype, stats, all_null):
    info = type_info(datatype)
    dtype = info.numpy
    if info.kind == "float":
        lo, hi = dtype.type(np.finfo(dtype).max), dtype.type(np.finfo(dtype).min)
    else:
        lo, hi = dtype.type(np.iinfo(dtype).max), dtype.type(np.iinfo(dtype).min)
    for tile_idx in range(len(stats.mins)):
        if all_null[tile_idx]:
            continue
        value = stats.mins[tile_idx]
        lo = lo if lo < value else value
        value = stats.maxes[tile_idx]
        hi = hi if hi > value else value
    return np.array([lo], dtype=dtype).tobytes(), np.array([hi], dtype=dtype).tobytes()


def _strncmp(a: bytes, b: bytes, n: int) -> int:
    for x, y in zip(a[:n], b[:n]):
        if x != y:
            return -1 if x < y else 1
        if x == 0:
            return 0
    return 0


def _fragment_chars(stats, all_null, cell_val_num):
    # TileDB walks the tile min/max buffers with a pointer that only advances on tiles that
    # are not all NULL: a tile after an all-NULL one is compared with its predecessor's bytes.
    mins, maxes = stats.mins, stats.maxes
    lo = hi = None
    pos = 0
    for tile_idx in range(len(mins)):
        if all_null[tile_idx]:
            continue
        cand_lo, cand_hi = mins[pos], maxes[pos]
        if lo is None or _strncmp(lo, cand_lo, cell_val_num) > 0:
            lo = cand_lo
        if hi is None or _strncmp(hi, cand_hi, cell_val_num) < 0:
            hi = cand_hi
        pos += 1
    return (lo or b""), (hi or b"")


def _var_cmp(a: bytes, b: bytes) -> int:
    cmp = _strncmp(a, b, min(len(a), len(b)))
    if cmp:
        return cmp
    return (len(a) > len(b)) - (len(a) < len(b))


def _fragment_var(stats, all_null):
    lo = hi = None
    for tile_idx in range(len(stats.mins)):
        if all_null[tile_idx]:
            continue
        cand_lo, cand_hi = stats.mins[tile_idx], stats.maxes[tile_idx]
        if lo is None:
            lo, hi = cand_lo, cand_hi
            continue
        if _var_cmp(lo, cand_lo) > 0:
            lo = cand_lo
        if _var_cmp(hi, cand_hi) < 0:
            hi = cand_hi
    return (lo or b""), (hi or b"")


def _fragment_sum(datatype, sums, all_null) -> bytes:
    kind = sum_kind(datatype)
    if kind == "float":
        total, big = 0.0, 1.7976931348623157e308
        for tile_idx, value in enumerate(sums.tolist()):
            if all_null[tile_idx]:
                continue
            if (total < 0.0) == (value < 0.0) and abs(total) > big - abs(value):
                total = -big if total < 0.0 else big
                break
            total += value
        return struct.pack("<d", total)
    if kind == "int":
        total, big, small = 0, 2**63 - 1, -(2**63)
        for tile_idx, value in enumerate(sums.tolist()):
            if all_null[tile_idx]:
                continue
            if total > 0 and value > 0 and total > big - value:
                total = big
                break
            if total < 0 and value < 0 and total < small - value:
                total = small
                break
            total += value
        return struct.pack("<q", total)
    total, big = 0, 2**64 - 1
    for tile_idx, value in enumerate(sums.tolist()):
        if all_null[tile_idx]:
            continue
        if total > big - value:
            total = big
            break
        total += value
    return struct.pack("<Q", total)


def coords_slot(schema, n_tiles: int) -> tuple[TileStats, tuple[bytes, bytes, bytes, int]]:
    """The empty ``__coords`` slot: zeroed per-tile mins/maxes/sums and their fragment values."""
    dim0 = schema.dimensions[0]
    dt = dim0.datatype
    info = type_info(dt)
    cell_size = len(schema.dimensions) * info.size  # TileDB: dim_num x dim 0's value size
    stats = TileStats(cell_counts=np.zeros(n_tiles, np.int64))
    frag_min = frag_max = b""
    if has_min_max(dt, False, False, 1):
        if len(schema.dimensions) == 1 and dt not in _CHARS:
            stats.mins = np.zeros(n_tiles, dtype=info.numpy)
            stats.maxes = np.zeros(n_tiles, dtype=info.numpy)
        else:
            stats.mins = [bytes(cell_size)] * n_tiles
            stats.maxes = [bytes(cell_size)] * n_tiles
        if n_tiles:
            width = 1 if dt in _CHARS else info.size
            frag_min = frag_max = bytes(width)
        elif dt not in _CHARS:
            dtype = info.numpy
            big = np.finfo(dtype) if info.kind == "float" else np.iinfo(dtype)
            frag_min = np.array([big.max], dtype=dtype).tobytes()
            frag_max = np.array([big.min], dtype=dtype).tobytes()
    if has_sum(dt, False, 1):
        stats.sums = np.zeros(n_tiles, dtype={"float": np.float64, "int": np.int64,
                                              "uint": np.uint64}[sum_kind(dt)])
    return stats, (frag_min, frag_max, bytes(8), 0)
