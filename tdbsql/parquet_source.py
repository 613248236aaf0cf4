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
import threading
from dataclasses import dataclass

import pyarrow as pa

from .errors import DataError, OperationalError, UnsupportedSql

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
        files = sorted(glob.glob(pattern, recursive=True)) if glob.has_magic(pattern) else \
            [pattern] if os.path.isfile(pattern) else []
        if not files:
            raise OperationalError(f"no such Parquet file: {pattern!r} matches no file")
        partitioned = [path for path in files if _HIVE.search(os.path.dirname(path))]
        if partitioned:  # DuckDB adds their key=value folders as columns; not read here
            raise UnsupportedSql(f"hive-partitioned Parquet files ({partitioned[0]!r}): the "
                                 "key=value folders as columns are not supported")
        stats = [os.stat(path) for path in files]
        return cls(pattern, tuple(files), tuple((s.st_size, s.st_mtime_ns) for s in stats))

    def arrow_schema(self, array=None) -> pa.Schema:
        """The first file's schema (its footer only), worked out once a version of it."""
        key = (self.files[0], self.stamps[0])
        schema = _SCHEMAS.get(key)
        if schema is None:
            import pyarrow.parquet as pq

            stored = self._reading(lambda: pq.read_schema(self.files[0]))
            schema = pa.schema([field.with_type(_duckdb_type(field.type)) for field in stored])
            with _SCHEMAS_LOCK:
                _SCHEMAS[key] = schema
                while len(_SCHEMAS) > 64:
                    del _SCHEMAS[next(iter(_SCHEMAS))]
        return schema

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
            budget.check(sum(_column_bytes(f.metadata, f.schema_arrow, columns)
                             for f in files), what)
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


_SCHEMAS: dict = {}  # (first file, its stamp) -> its schema in DuckDB's types
_SCHEMAS_LOCK = threading.Lock()
_HIVE = re.compile(r"(^|[\\/])[^\\/=]+=[^\\/]*($|[\\/])")  # a key=value folder


def _duckdb_type(data_type: pa.DataType) -> pa.DataType:
    """The type DuckDB reads a Parquet column as, where pyarrow's stored Arrow schema says
    otherwise: timestamps of seconds or milliseconds as microseconds (TIMESTAMP), float16 as
    float32 (FLOAT), a duration as its int64 (BIGINT)."""
    if pa.types.is_timestamp(data_type) and data_type.unit in ("s", "ms"):
        return pa.timestamp("us", data_type.tz)
    if pa.types.is_float16(data_type):
        return pa.float32()
    if pa.types.is_duration(data_type):
        return pa.int64()
    return data_type


def _column_bytes(metadata, schema: pa.Schema, columns: list[str]) -> int:
    """The uncompressed bytes of ``columns`` in a file, by its footer: each top-level column
    is the run of leaf columns its type has (a name may hold dots)."""
    leaves, first = {}, 0
    for field in schema:
        leaves[field.name] = range(first, first + _leaf_count(field.type))
        first += _leaf_count(field.type)
    wanted = [i for name in columns for i in leaves.get(name, ())]
    return sum(metadata.row_group(group).column(i).total_uncompressed_size
               for group in range(metadata.num_row_groups) for i in wanted)


def _leaf_count(data_type: pa.DataType) -> int:
    """The Parquet leaf columns an Arrow type is stored as."""
    if pa.types.is_struct(data_type):
        return sum(_leaf_count(field.type) for field in data_type)
    if pa.types.is_map(data_type):
        return _leaf_count(data_type.key_type) + _leaf_count(data_type.item_type)
    if pa.types.is_list(data_type) or pa.types.is_large_list(data_type) or \
            pa.types.is_fixed_size_list(data_type):
        return _leaf_count(data_type.value_type)
    return 1
