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
        if is_var or datatype in _CHARS:
            stats.mins, stats.maxes = _string_min_max(buf, cell_val_num, validity, tile_size,
                                                      n_tiles)
        else:
            stats.mins, stats.maxes = _numeric_min_max(
                datatype, buf.values.view(type_info(datatype).numpy), validity, tile_size,
                n_tiles)
    if has_sum(datatype, is_var, cell_val_num):
        stats.sums = _sums(sum_kind(datatype), _sum_input(datatype, buf.values), validity,
                           tile_size, n_tiles)
    if nullable and isinstance(stats.mins, np.ndarray):
        # a tile whose cells are all NULL keeps the zeroed buffer (TileDB skips setting it)
        all_null = stats.null_counts.astype(np.int64) == counts
        stats.mins[all_null] = 0
        stats.maxes[all_null] = 0
    return stats


def _numeric_min_max(datatype, values, validity, tile_size, n_out):
    """Min and max of ``values`` (a numeric array of the field's type) per ``tile_size``
    values, skipping those whose validity is 0: ``n_out`` of each."""
    dtype = type_info(datatype).numpy
    big = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
    mins = np.empty(n_out, dtype=dtype)
    maxes = np.empty(n_out, dtype=dtype)
    kernels.min_max_fixed(np.ascontiguousarray(values, dtype=dtype), validity, tile_size,
                          dtype.type(big.max), dtype.type(big.min), mins, maxes)
    return mins, maxes


def _string_min_max(buf, cell_val_num, validity, tile_size, n_tiles):
    """Per-tile min/max strings; a fixed-size cell compares as a string of ``cell_val_num``
    bytes (TileDB's strncmp over equal lengths is the var comparison), an all-NULL tile gets
    zero bytes of the cell size (no bytes when var-sized)."""
    data = np.ascontiguousarray(buf.values.view(np.uint8))
    if cell_val_num == VAR_NUM:
        offsets, empty = np.ascontiguousarray(buf.offsets, dtype=np.int64), b""
    else:
        offsets = np.arange(len(validity) + 1, dtype=np.int64) * cell_val_num
        empty = bytes(cell_val_num)
    lo = np.empty(n_tiles, dtype=np.int64)
    hi = np.empty(n_tiles, dtype=np.int64)
    kernels.min_max_strings(data, offsets, validity, tile_size, lo, hi)

    def cell(idx):
        return empty if idx < 0 else data[offsets[idx]:offsets[idx + 1]].tobytes()
    return [cell(i) for i in lo.tolist()], [cell(i) for i in hi.tolist()]


def sum_kind(datatype: int) -> str:
    info = type_info(datatype)
    if info.kind == "float":
        return "float"
    if datatype == Datatype.CHAR or info.kind in ("datetime", "time") or info.numpy.kind == "i":
        return "int"
    return "uint"


_SUM_TYPES = {"float": np.float64, "int": np.int64, "uint": np.uint64}
_SUM_KERNELS = {"float": kernels.sum_float64, "int": kernels.sum_int64,
                "uint": kernels.sum_uint64}


def _sum_input(datatype, values: np.ndarray) -> np.ndarray:
    if datatype == Datatype.CHAR:
        return values.view(np.int8)  # a C char is signed
    return values.view(type_info(datatype).numpy)


def _sums(kind: str, values, validity, tile_size, n_out) -> np.ndarray:
    """Saturating sums of ``values`` per ``tile_size`` values (those with validity 1), in
    the sum type of ``kind``: ``n_out`` of them."""
    out = np.empty(n_out, dtype=_SUM_TYPES[kind])
    _SUM_KERNELS[kind](np.ascontiguousarray(values, dtype=out.dtype), validity, tile_size, out)
    return out


# --- fragment level -----------------------------------------------------------------------------


def concat_stats(parts: list[TileStats]) -> TileStats:
    """The sections of tiles written in several appends, as one ``TileStats``."""
    if len(parts) == 1:
        return parts[0]

    def joined(name: str):
        values = [getattr(part, name) for part in parts]
        if not values or values[0] is None:
            return None
        if isinstance(values[0], list):
            return [value for part in values for value in part]
        return np.concatenate(values)

    return TileStats(*(joined(name) for name in ("mins", "maxes", "sums", "null_counts")),
                     cell_counts=np.concatenate([part.cell_counts for part in parts])
                     if parts else np.zeros(0, np.int64))


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
            n_tiles = max(len(counts), 1)
            mn = _numeric_min_max(datatype, stats.mins, _valid(all_null), n_tiles, 1)[0].tobytes()
            mx = _numeric_min_max(datatype, stats.maxes, _valid(all_null), n_tiles, 1)[1].tobytes()
    total = bytes(8)
    if has_sum(datatype, is_var, cell_val_num):
        # the tile sums summed as the tiles' cells were (saturating, all-NULL tiles skipped)
        total = _sums(sum_kind(datatype), stats.sums, _valid(all_null), max(len(counts), 1),
                      1).tobytes()
    return mn, mx, total, null_count


def _valid(all_null: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(~all_null, dtype=np.uint8)


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
        stats.sums = np.zeros(n_tiles, dtype=_SUM_TYPES[sum_kind(dt)])
    return stats, (frag_min, frag_max, bytes(8), 0)
