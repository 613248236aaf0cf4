"""Coordinates unique across the batches of a sparse ingest into an array without duplicates.

Each batch is a fragment and one write refuses a coordinate twice; but the fragments of one
ingest share their timestamp, so a coordinate in two batches has no newest write: TileDB
orders fragments of equal timestamps as its (unstable) sort leaves them and tdbsql by name,
and the two would read different cells.  So such an ingest is refused, as a single write is.
The ledger holds the dimension columns of every batch (not the attributes) until the end.
Coordinates are compared as TileDB compares them (``tiling.coordinate_bits``: -0.0 is its
own coordinate) and named by their values.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import DataError
from ..storage.tiling import coordinate_bits


class UniqueKeys:
    def __init__(self, dim_names: list[str]):
        self.dim_names = dim_names
        self.batches: list[pa.Table] = []

    def add(self, keys: pa.Table) -> None:
        self.batches.append(keys.select(self.dim_names))

    def check(self) -> None:
        """``DataError`` naming a coordinate that two batches hold."""
        if len(self.batches) < 2:
            return  # a single write checks its own cells
        cells = pa.concat_tables(self.batches)
        coordinates = pa.table({**{n: _exact(cells.column(n)) for n in self.dim_names},
                                "row": np.arange(cells.num_rows)})
        counts = coordinates.group_by(self.dim_names).aggregate(
            [([], "count_all"), ("row", "min")])
        repeated = counts.filter(pc.greater(counts.column("count_all"), 1))
        if repeated.num_rows:
            row = repeated.column("row_min")[0].as_py()
            coordinate = ", ".join(str(cells.column(n)[row].as_py()) for n in self.dim_names)
            raise DataError(f"duplicate coordinates ({coordinate}) in two batches of the "
                            "source: the array does not allow duplicates")


def _exact(column: pa.ChunkedArray) -> pa.Array:
    """Values compared as TileDB compares coordinates: floats by their bits."""
    column = column.combine_chunks()
    if pa.types.is_floating(column.type):
        return pa.array(coordinate_bits(column.to_numpy()))
    return column
