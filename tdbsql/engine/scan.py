"""TileScan: read the cells of an array at its window, restricted to dimension ranges.

``sparse_scan`` and ``dense_scan`` hold the two read semantics; both return a ``ScanResult`` of
raw ``Column``s keyed by field name.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..planner.pruning import Ranges
from .column import Column


@dataclass(frozen=True)
class ScanResult:
    columns: dict[str, Column]
    length: int
    stats: dict


class TileScan:
    """What both scans start from: the array at its window, the fields wanted, the ranges, and
    counters of fragments and tiles (seen vs. read) for EXPLAIN and benchmarks."""

    def __init__(self, array, fields: list[str], ranges: Ranges):
        self.array = array
        self.schema = array.schema
        self.fields = fields
        self.ranges = ranges
        self.dim_names = [d.name for d in self.schema.dimensions]
        self.stats = {"fragments": len(array.fragments), "fragments_read": 0,
                      "tiles": 0, "tiles_read": 0}


def scan(array, fields: list[str], ranges: Ranges) -> ScanResult:
    if array.schema.sparse:
        from .sparse_scan import SparseScan

        return SparseScan(array, fields, ranges).run()
    from .dense_scan import DenseScan

    return DenseScan(array, fields, ranges).run()
