"""Parquet files as a query's table: ``FROM 'f.parquet'``, ``read_parquet('dir/*.parquet')``.

A path ending in ``.parquet`` (glob patterns allowed, as DuckDB allows them) names every
file it matches, read as one table with the first file's schema.  The schema comes from the
files' footers when the query is planned; the rows when a scan reads them, only the columns
the query uses, and only after the footers' sizes of those columns fit the query's memory
budget (a file is read whole: it has no tiles to stream).  A file changed since a query was
planned is seen by the next one: the source is named by the files' sizes and times.
"""

from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass

import pyarrow as pa

from .errors import DataError, OperationalError

_PARQUET = re.compile(r"\.parquet$", re.IGNORECASE)


def is_parquet_path(name: str) -> bool:
    """Whether a quoted table name is a Parquet path (or pattern), as DuckDB reads one."""
    return bool(_PARQUET.search(name))


@dataclass(frozen=True)
class ParquetSource:
    pattern: str
    files: tuple[str, ...]
    stamps: tuple[tuple[int, int], ...]  # (size, mtime_ns) a file

    @classmethod
    def of(cls, pattern: str) -> "ParquetSource":
        """The files ``pattern`` matches (sorted, as DuckDB orders them); none is an error."""
        files = sorted(glob.glob(pattern)) if glob.has_magic(pattern) else \
            [pattern] if os.path.isfile(pattern) else []
        if not files:
            raise OperationalError(f"no such Parquet file: {pattern!r} matches no file")
        stats = [os.stat(path) for path in files]
        return cls(pattern, tuple(files), tuple((s.st_size, s.st_mtime_ns) for s in stats))

    def arrow_schema(self, array=None) -> pa.Schema:
        """The first file's schema (its footer only), worked out once a version of it."""
        key = (self.files[0], self.stamps[0])
        if key not in _SCHEMAS:
            import pyarrow.parquet as pq

            _SCHEMAS[key] = self._reading(lambda: pq.read_schema(self.files[0]))
            while len(_SCHEMAS) > 64:
                del _SCHEMAS[next(iter(_SCHEMAS))]
        return _SCHEMAS[key]

    def read(self, columns: list[str], budget, what: str) -> pa.Table:
        """The files' rows of ``columns`` (at least one), checked against ``budget`` by the
        footers' uncompressed sizes before anything is read; a later file's columns cast to
        the first one's types."""
        import pyarrow.parquet as pq

        def table() -> pa.Table:
            files = [pq.ParquetFile(path) for path in self.files]
            for path, file in zip(self.files, files):
                missing = [name for name in columns if name not in file.schema_arrow.names]
                if missing:  # DuckDB's "schema mismatch in glob"
                    raise DataError(f"the Parquet file {path!r} has no column {missing[0]!r}, "
                                    f"which {self.files[0]!r} has: {self.pattern!r} matches "
                                    "files of different schemas")
            budget.check(sum(_column_bytes(f.metadata, columns) for f in files), what)
            chosen = pa.schema([self.arrow_schema().field(name) for name in columns])
            parts = [f.read(columns=columns) for f in files]
            return pa.concat_tables([part if part.schema.equals(chosen) else part.cast(chosen)
                                     for part in parts])
        return self._reading(table)

    def num_rows(self) -> int:
        """The files' rows, by their footers."""
        import pyarrow.parquet as pq

        return self._reading(lambda: sum(pq.ParquetFile(path).metadata.num_rows
                                         for path in self.files))

    def _reading(self, read):
        """``read()``, a file pyarrow cannot read being a DataError that names it."""
        try:
            return read()
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError,
                OSError) as err:
            raise DataError(f"cannot read the Parquet file(s) {self.pattern!r}: {err}") \
                from None


_SCHEMAS: dict = {}


def _column_bytes(metadata, columns: list[str]) -> int:
    """The uncompressed bytes of ``columns`` in a file, by its footer."""
    wanted = set(columns)
    total = 0
    for group in range(metadata.num_row_groups):
        row_group = metadata.row_group(group)
        for i in range(row_group.num_columns):
            chunk = row_group.column(i)
            if chunk.path_in_schema.split(".")[0] in wanted:
                total += chunk.total_uncompressed_size
    return total
