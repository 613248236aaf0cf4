"""R-trees and MBRs of fragment metadata (spec: fragment.md "R-Tree", "MBR").

In: the decoded bytes of a fragment's R-tree generic tile and the array's dimensions.
Out: ``RTree`` -- the fanout and every level of the tree, root level first and leaf level last
(one leaf MBR per sparse tile, in tile order).

A level holds one entry per dimension: for a fixed-sized dimension a ``(n, 2)`` numpy array of
the dimension's storage dtype (column 0 the lows, column 1 the highs); for a var-sized (string)
dimension a tuple of ``(low, high)`` byte strings.

Serialized R-tree (version >= 5): ``fanout u32, level_num u32`` then per level ``mbr_num u64``
and the MBRs; before version 5 the tree starts with ``dim_num u32`` and has a ``datatype u8``
after the fanout.  An MBR is one 1-D range per dimension: fixed ``low, high``; var
``range_size u64, low_size u64, low bytes, high bytes``.  The same range encoding is used for the
non-empty domain in the fragment footer (``read_ranges`` / ``write_ranges``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..errors import CorruptArrayError
from .array_schema import Dimension
from .binary import Reader, Writer

DEFAULT_FANOUT = 10  # TileDB's constants::rtree_fanout

VarRanges = tuple[tuple[bytes, bytes], ...]
DimRanges = np.ndarray | VarRanges
Level = tuple[DimRanges, ...]


@dataclass(frozen=True, eq=False)
class RTree:
    fanout: int
    levels: tuple[Level, ...]  # root level first, leaf level last

    @property
    def leaf_num(self) -> int:
        return _level_len(self.levels[-1]) if self.levels else 0

    @property
    def leaves(self) -> Level:
        """The leaf level: one MBR per sparse tile (empty tuple for dense fragments)."""
        return self.levels[-1] if self.levels else ()

    def leaf(self, i: int) -> tuple[tuple[Any, Any], ...]:
        """MBR of tile ``i`` as ``(low, high)`` per dimension (Python values / bytes)."""
        return tuple(_python_range(ranges, i) for ranges in self.leaves)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RTree):
            return NotImplemented
        return (
            self.fanout == other.fanout
            and len(self.levels) == len(other.levels)
            and all(_levels_equal(a, b) for a, b in zip(self.levels, other.levels))
        )

    __hash__ = None  # type: ignore[assignment]

    @classmethod
    def from_leaves(cls, leaves: Level, dims: Sequence[Dimension], fanout: int = DEFAULT_FANOUT) -> "RTree":
        """Build the upper levels bottom-up as TileDB does (groups of ``fanout`` MBRs)."""
        leaves = tuple(_normalize(r, d) for r, d in zip(leaves, dims))
        leaf_num = _level_len(leaves) if leaves else 0
        if leaf_num == 0:
            return cls(fanout, ())
        levels = [leaves]
        if leaf_num > 1:
            # TileDB computes the height with floating-point logs; mirror it exactly.
            height = math.ceil(math.log(leaf_num) / math.log(fanout)) + 1
            for _ in range(height - 1):
                levels.append(_parent_level(levels[-1], fanout))
        return cls(fanout, tuple(reversed(levels)))

    def to_bytes(self, dims: Sequence[Dimension], version: int = 22) -> bytes:
        """The contents of the R-tree generic tile (formats < 5 add dim count and datatype)."""
        w = Writer()
        if version < 5:
            w.u32(len(dims)).u32(self.fanout).u8(dims[0].datatype).u32(len(self.levels))
        else:
            w.u32(self.fanout).u32(len(self.levels))
        for level in self.levels:
            n = _level_len(level)
            w.u64(n)
            if n:
                w.raw(_encode_mbrs(level, dims, n))
        return w.getvalue()


def read_rtree(data, dims: Sequence[Dimension], version: int, where: str) -> RTree:
    """Parse the decoded R-tree tile of a fragment of format ``version``."""
    r = Reader(data, where)
    if version < 5:
        r.u32("R-tree dimension count")
    fanout = r.u32("R-tree fanout")
    if version < 5:
        r.u8("R-tree datatype")
    level_num = r.u32("R-tree level count")
    if level_num > 64:
        raise r.error("R-tree level count", f"implausible value {level_num}")
    levels = tuple(read_mbrs(r, dims, r.u64(f"R-tree level {lvl} MBR count"), f"R-tree level {lvl}")
                   for lvl in range(level_num))
    if not r.at_end():
        raise r.error("R-tree", f"{r.remaining} unexpected bytes after the last level")
    return RTree(fanout, levels)


def read_mbrs(r: Reader, dims: Sequence[Dimension], n: int, field: str) -> Level:
    """``n`` consecutive MBRs at ``r.pos`` as one level."""
    if all(not d.is_var for d in dims):
        rec = _record_dtype(dims)
        if n > r.remaining // max(rec.itemsize, 1):
            raise r.error(f"{field} MBR count", f"{n} MBRs cannot fit in {r.remaining} bytes")
        arr = r.array(rec, n, f"{field} MBRs")
        return tuple(np.ascontiguousarray(arr[f"d{i}"]) for i in range(len(dims)))
    cols: list[list] = [[] for _ in dims]
    for m in range(n):
        for i, rng in enumerate(read_ranges(r, dims, f"{field} MBR {m}")):
            cols[i].append(rng)
    return tuple(_column(c, d) for c, d in zip(cols, dims))


def read_ranges(r: Reader, dims: Sequence[Dimension], field: str) -> tuple[tuple[Any, Any], ...]:
    """One ND range (an MBR or a non-empty domain) as Python values; bytes for var dims."""
    out = []
    for d in dims:
        if d.is_var:
            size = r.u64(f"{field} range size of '{d.name}'")
            start_size = r.u64(f"{field} range start size of '{d.name}'")
            if start_size > size:
                raise r.error(f"{field} range of '{d.name}'", f"start size {start_size} > range size {size}")
            raw = r.bytes(size, f"{field} range of '{d.name}'")
            out.append((raw[:start_size], raw[start_size:]))
        else:
            pair = r.array(d.info.numpy, 2, f"{field} range of '{d.name}'")
            out.append((pair[0].item(), pair[1].item()))
    return tuple(out)


def write_ranges(w: Writer, dims: Sequence[Dimension], ranges: Sequence[tuple[Any, Any]]) -> None:
    for d, (lo, hi) in zip(dims, ranges):
        if d.is_var:
            lo, hi = bytes(lo), bytes(hi)
            w.u64(len(lo) + len(hi)).u64(len(lo)).raw(lo + hi)
        else:
            w.raw(np.array([lo, hi], dtype=d.info.numpy))


# --- helpers ----------------------------------------------------------------------------------


def _record_dtype(dims: Sequence[Dimension]) -> np.dtype:
    return np.dtype([(f"d{i}", d.info.numpy, (2,)) for i, d in enumerate(dims)])


def _level_len(level: Level) -> int:
    return len(level[0]) if level else 0


def _column(values: list, dim: Dimension) -> DimRanges:
    if dim.is_var:
        return tuple(values)
    return np.array(values, dtype=dim.info.numpy).reshape(-1, 2)


def _normalize(ranges, dim: Dimension) -> DimRanges:
    if dim.is_var:
        return tuple((bytes(lo), bytes(hi)) for lo, hi in ranges)
    return np.ascontiguousarray(np.asarray(ranges, dtype=dim.info.numpy).reshape(-1, 2))


def _parent_level(level: Level, fanout: int) -> Level:
    n = _level_len(level)
    starts = np.arange(0, n, fanout)
    out = []
    for ranges in level:
        if isinstance(ranges, np.ndarray):
            lo = np.minimum.reduceat(ranges[:, 0], starts)
            hi = np.maximum.reduceat(ranges[:, 1], starts)
            out.append(np.ascontiguousarray(np.stack([lo, hi], axis=1)))
        else:
            out.append(tuple(
                (min(r[0] for r in ranges[s : s + fanout]), max(r[1] for r in ranges[s : s + fanout]))
                for s in starts
            ))
    return tuple(out)


def _encode_mbrs(level: Level, dims: Sequence[Dimension], n: int) -> bytes:
    if all(not d.is_var for d in dims):
        rec = np.empty(n, dtype=_record_dtype(dims))
        for i, ranges in enumerate(level):
            rec[f"d{i}"] = ranges
        return rec.tobytes()
    w = Writer()
    for m in range(n):
        write_ranges(w, dims, [_python_range(ranges, m) for ranges in level])
    return w.getvalue()


def _python_range(ranges: DimRanges, i: int) -> tuple[Any, Any]:
    if isinstance(ranges, np.ndarray):
        return ranges[i, 0].item(), ranges[i, 1].item()
    return ranges[i]


def _levels_equal(a: Level, b: Level) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if isinstance(x, np.ndarray) != isinstance(y, np.ndarray):
            return False
        if isinstance(x, np.ndarray):
            # Compare the bytes: exact for floats (NaN, -0.0) and dtype-sensitive.
            if x.dtype != y.dtype or x.shape != y.shape or x.tobytes() != y.tobytes():
                return False
        elif tuple(x) != tuple(y):
            return False
    return True


def check_leaf_count(tree: RTree, expected: int, where: str) -> None:
    """A sparse fragment has one leaf MBR per tile; anything else is corruption."""
    if tree.leaf_num != expected:
        raise CorruptArrayError(
            f"{tree.leaf_num} leaf MBRs but the footer counts {expected} sparse tiles", where
        )


def check_leaves_inside(tree: RTree, dims: Sequence[Dimension], non_empty_domain, where: str) -> None:
    """Each leaf MBR of a fixed-sized dimension is a range inside the fragment's non-empty
    domain (TileDB's union of them): a corrupt MBR would otherwise prune its tile away from a
    query, or keep it, without a word."""
    if non_empty_domain is None:
        return
    for dim, ranges, (lo, hi) in zip(dims, tree.leaves, non_empty_domain):
        if dim.is_var or not len(ranges):
            continue
        low, high = ranges[:, 0], ranges[:, 1]
        bad = ~((lo <= low) & (low <= high) & (high <= hi))
        if bad.any():
            tile = int(np.argmax(bad))
            raise CorruptArrayError(
                f"the MBR of tile {tile} on '{dim.name}', [{low[tile]}, {high[tile]}], "
                f"is not a range inside the non-empty domain [{lo}, {hi}]", where)
