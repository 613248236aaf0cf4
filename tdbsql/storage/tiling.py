"""Sparse cells into TileDB's global order; coordinate checks; per-tile MBRs.

In: ``Coords`` -- the stored schema and the dimension buffers of a write (``FieldBuffer`` per
dimension, in schema order), with the string ranks every step below shares.
Out: ``global_order`` -> the permutation that sorts cells the way TileDB's unordered writer
does (``GlobalCmpQB``: space tile indices in the tile order, then coordinates in the cell
order; ``HilbertCmpQB``: Hilbert value, then coordinates row-major); ``first_out_of_order``
checks cells said to be in that order without sorting them; ``duplicate_rows`` -> rows whose
coordinates repeat the previous cell's (bytewise, as TileDB's ``memcmp``); ``mbrs`` -> the
R-tree leaves and non-empty domain of cells in global order; ``check_in_domain`` raises naming
the first coordinate outside the domain.

The keys come from ``tdbsql.kernels.order``; strings are ranked by their bytes (unsigned,
shorter prefix first) so every key is numeric and one stable ``lexsort`` orders the cells.
A string dimension is ranked once per write: ``Coords`` keeps the ranks and carries them
through ``take`` (a permutation or selection keeps their order), so sorting, the duplicate
check and the MBRs of one write share them.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..datatypes import Layout
from ..errors import DataError
from ..format.array_schema import ArraySchema, Dimension
from ..kernels import order as kernels
from .write_buffers import FieldBuffer

HILBERT_WORD_BITS = 63  # TileDB: (sizeof(uint64_t) * 8 - 1) / dim_num bits per dimension


class Coords:
    """The coordinates of a sparse write: ``schema``, ``buffers`` (one ``FieldBuffer`` per
    dimension, schema order) and, computed on first use and kept, the rank of each string
    dimension's cells (``rank(i)``)."""

    def __init__(self, schema: ArraySchema, buffers, ranks=None):
        self.schema = schema
        self.buffers: tuple[FieldBuffer, ...] = tuple(buffers)
        self._ranks: list[np.ndarray | None] = (list(ranks) if ranks is not None
                                                 else [None] * len(self.buffers))

    @property
    def n(self) -> int:
        """The number of cells."""
        return self.buffers[0].cells()

    def rank(self, dim_idx: int) -> np.ndarray:
        """uint64 bytewise rank of each cell of string dimension ``dim_idx`` (equal strings,
        equal ranks), computed once."""
        if self._ranks[dim_idx] is None:
            self._ranks[dim_idx] = string_ranks(self.buffers[dim_idx])
        return self._ranks[dim_idx]

    def take(self, order: np.ndarray, buffers=None) -> "Coords":
        """The cells ``order`` picks (int64 cell indices), ranks computed so far included.
        ``buffers``: the dimension buffers already taken in ``order`` by the caller (else they
        are taken here)."""
        if buffers is None:
            buffers = [buf.take(order, 1) for buf in self.buffers]
        ranks = [None if r is None else np.ascontiguousarray(r[order]) for r in self._ranks]
        return Coords(self.schema, buffers, ranks)


def global_order(coords: Coords) -> np.ndarray:
    """int64 permutation putting the cells in TileDB's global order (stable)."""
    if coords.n == 0:
        return np.zeros(0, dtype=np.int64)
    keys = order_keys(coords)
    # lexsort: the LAST key is the primary one
    return np.lexsort(tuple(reversed(keys))).astype(np.int64)


def first_out_of_order(coords: Coords) -> int:
    """The first cell that sorts before its predecessor in the global order, or -1 when the
    cells are in global order (a check without sorting)."""
    if coords.n < 2:
        return -1
    decided = np.zeros(coords.n - 1, dtype=bool)
    bad = np.zeros_like(decided)
    for key in order_keys(coords):  # primary key first
        prev, cur = key[:-1], key[1:]
        bad |= ~decided & (cur < prev)
        decided |= cur != prev
    return int(np.argmax(bad)) + 1 if bad.any() else -1


def order_keys(coords: Coords) -> list[np.ndarray]:
    """The sort keys of the global order, the primary one first (equal coordinates have
    equal keys; string ranks are those of these cells)."""
    schema = coords.schema
    cell_keys = [coords.rank(i) if dim.is_var else buf.values
                 for i, (dim, buf) in enumerate(zip(schema.dimensions, coords.buffers))]
    if schema.cell_order == Layout.COL_MAJOR:
        cell_keys = cell_keys[::-1]
    if schema.cell_order == Layout.HILBERT:
        return [hilbert_values(schema, list(coords.buffers))] + cell_keys
    return _tile_keys(schema, list(coords.buffers)) + cell_keys


def string_ranks(buf: FieldBuffer) -> np.ndarray:
    """Dense rank of each string in bytewise (unsigned) order."""
    return pc.rank(_binary(buf), sort_keys="ascending",
                   tiebreaker="dense").to_numpy().astype(np.uint64)


def _binary(buf: FieldBuffer) -> pa.LargeBinaryArray:
    """A var-sized buffer's cells as an Arrow array of bytes (no copy)."""
    return pa.LargeBinaryArray.from_buffers(
        pa.large_binary(), len(buf.offsets) - 1,
        [None, pa.py_buffer(buf.offsets.astype(np.int64)), pa.py_buffer(buf.values)])


def _tile_keys(schema: ArraySchema, dims: list[FieldBuffer]) -> list[np.ndarray]:
    keys = []
    for dim, buf in zip(schema.dimensions, dims):
        if dim.is_var or dim.tile_extent is None:
            continue  # TileDB skips var dims and absent extents in the tile order
        keys.append(tile_indices(dim, buf.values))
    if schema.tile_order == Layout.COL_MAJOR:
        keys = keys[::-1]
    return keys


def tile_indices(dim: Dimension, values: np.ndarray) -> np.ndarray:
    """Space tile index of each coordinate (``Dimension::tile_idx``)."""
    info = dim.info
    out = np.empty(len(values), dtype=np.uint64)
    lo, _ = dim.domain
    if info.kind == "float":
        typ = info.numpy.type
        if typ(dim.tile_extent) == 0:  # a one-point domain [v, v]: TileDB's null extent is 0
            out[:] = 0
            return out
        kernels.tile_index_float(np.ascontiguousarray(values, dtype=info.numpy), typ(lo),
                                 typ(dim.tile_extent), out)
        return out
    kernels.tile_index_uint(_as_uint64_bits(values, info.numpy), _uint64_bits(lo),
                            np.uint64(int(dim.tile_extent)), out)
    return out


def _as_uint64_bits(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Integers as the uint64 bit pattern of their 64-bit (sign-extended) value."""
    wide = values.astype(np.int64 if dtype.kind == "i" else np.uint64)
    return np.ascontiguousarray(wide.view(np.uint64))


def _uint64_bits(value: int) -> np.uint64:
    return np.uint64(int(value) & 0xFFFFFFFFFFFFFFFF)


def hilbert_values(schema: ArraySchema, dims: list[FieldBuffer]) -> np.ndarray:
    """The Hilbert value of each cell (``WriterBase::calculate_hilbert_values``)."""
    n_dims = len(schema.dimensions)
    bits = HILBERT_WORD_BITS // n_dims
    max_bucket = float((1 << bits) - 1)
    n = dims[0].cells()
    buckets = np.empty((n, n_dims), dtype=np.uint64)
    column = np.empty(n, dtype=np.uint64)
    for dim_idx, (dim, buf) in enumerate(zip(schema.dimensions, dims)):
        if dim.is_var:
            kernels.hilbert_bucket_string(buf.values, buf.offsets, bits, column)
        else:
            lo, hi = dim.domain
            span = float(hi) - float(lo)
            if span == 0.0:
                column[:] = 0
            else:
                kernels.hilbert_bucket_float(np.ascontiguousarray(buf.values, dtype=np.float64),
                                             float(lo), span, max_bucket, column)
        buckets[:, dim_idx] = column
    out = np.empty(n, dtype=np.uint64)
    kernels.hilbert_values(buckets, bits, out)
    return out


def duplicate_rows(coords: Coords) -> np.ndarray:
    """Indices (in the given, already sorted order) of cells equal to the previous cell."""
    n = coords.n
    if n < 2:
        return np.zeros(0, dtype=np.int64)
    cols = []
    for dim_idx, (dim, buf) in enumerate(zip(coords.schema.dimensions, coords.buffers)):
        if dim.is_var:
            cols.append(coords.rank(dim_idx))
        else:
            cols.append(coordinate_bits(buf.values))
    keys = np.ascontiguousarray(np.stack(cols, axis=1))
    flags = np.empty(n, dtype=np.uint8)
    kernels.adjacent_equal_rows(keys, flags)
    return np.flatnonzero(flags)


def coordinate_bits(values: np.ndarray) -> np.ndarray:
    """Fixed-size coordinates as TileDB compares them, bytewise (its memcmp): their bit
    patterns, as uint64 -- 0.0 and -0.0 are different coordinates."""
    size = values.dtype.itemsize
    unsigned = values.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[size])
    return unsigned.astype(np.uint64)


def mbrs(coords: Coords, tile_size: int):
    """Per-tile MBRs (the R-tree leaves: per dimension, a (tiles, 2) array of (min, max), or
    for strings a tuple of (min bytes, max bytes)) and the non-empty domain ((min, max) per
    dimension) of cells in global order, ``tile_size`` cells a tile; (None, None) when there
    are no cells."""
    n = coords.n
    if n == 0:
        return None, None
    starts = np.arange(0, n, tile_size)
    leaves, ned = [], []
    for dim_idx, (dim, buf) in enumerate(zip(coords.schema.dimensions, coords.buffers)):
        if dim.is_var:
            # equal ranks are equal strings: any cell of a tile's min / max rank gives its bytes
            ranks = coords.rank(dim_idx)
            cell_of_rank = np.empty(int(ranks.max()) + 1, dtype=np.int64)
            cell_of_rank[ranks] = np.arange(n)
            lo = cell_of_rank[np.minimum.reduceat(ranks, starts)].tolist()
            hi = cell_of_rank[np.maximum.reduceat(ranks, starts)].tolist()
            leaves.append(tuple((buf.cell_bytes(a), buf.cell_bytes(b)) for a, b in zip(lo, hi)))
            ned.append((buf.cell_bytes(int(cell_of_rank[ranks.min()])),
                        buf.cell_bytes(int(cell_of_rank[ranks.max()]))))
        else:
            lo = np.minimum.reduceat(buf.values, starts)
            hi = np.maximum.reduceat(buf.values, starts)
            leaves.append(np.stack([lo, hi], axis=1))
            ned.append((lo.min().item(), hi.max().item()))
    return tuple(leaves), tuple(ned)


def check_in_domain(coords: Coords) -> None:
    """Refuse coordinates outside the domain (or NaN) or outside the current domain, as
    TileDB's writers do ("cells are written outside of the defined current domain"), naming
    dimension, row and value.  Strings are tested by their smallest and largest first; only
    then, to name the row, one by one."""
    current = coords.schema.current_bounds()
    for dim, buf, bounds in zip(coords.schema.dimensions, coords.buffers, current):
        if not dim.is_var:
            _refuse_outside(dim, buf.values, dim.domain, "domain")
            if bounds is not None:
                _refuse_outside(dim, buf.values, bounds, "current domain")
        elif bounds is not None and buf.cells():
            extremes = pc.min_max(_binary(buf))
            if extremes["min"].as_py() < bounds[0] or extremes["max"].as_py() > bounds[1]:
                _refuse_outside(dim, np.array([buf.cell_bytes(i) for i in range(buf.cells())],
                                              dtype=object), bounds, "current domain")


def _refuse_outside(dim: Dimension, values: np.ndarray, bounds, what: str) -> None:
    lo, hi = bounds
    if not dim.is_var:
        typ = dim.info.numpy.type
        lo, hi = typ(lo), typ(hi)
    bad = ~((values >= lo) & (values <= hi))
    if np.any(bad):
        row = int(np.argmax(bad))
        value = values[row]
        value = value.item() if isinstance(value, np.generic) else value  # 200, not np.int64(200)
        raise DataError(f"dimension {dim.name!r}, row {row}: coordinate {value!r} is outside "
                        f"the {what} [{bounds[0]!r}, {bounds[1]!r}]")


__all__ = ["Coords", "check_in_domain", "coordinate_bits", "duplicate_rows",
           "first_out_of_order", "global_order", "hilbert_values", "mbrs", "string_ranks",
           "tile_indices"]
