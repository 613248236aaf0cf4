"""Ingest: Parquet, CSV and Arrow IPC files -> TileDB arrays, streaming in bounded memory.

    tdbsql.ingest("lineitem.parquet", "lineitem_array", dims=["l_shipdate", "l_orderkey"])

Modules: ``sources`` opens a file as re-iterable Arrow RecordBatches (plus footer statistics);
``infer`` turns the Arrow schema and statistics into a TileDB schema and casts batches to it;
``run`` is the loop: domains -> create (or check for --append) -> uncommitted fragments, one per
``batch_rows`` rows -> commit all, undoing everything on error.
"""

from .infer import IngestError, IngestWarning, parse_filters
from .run import DEFAULT_BATCH_ROWS, IngestReport, ingest

__all__ = ["ingest", "IngestReport", "IngestError", "IngestWarning", "parse_filters",
           "DEFAULT_BATCH_ROWS"]
