"""What a table name in SQL refers to: a TileDB array (path, timestamp, key), an Arrow table or
Parquet files.

A ``Catalog`` maps names to sources; a quoted path in FROM (``FROM './data/lineitem'``) that
is an array directory opens it directly, and one ending in ``.parquet`` reads those files
(``parquet_source``).  Each source describes its columns as SQL types for the
planner and produces an ``Array`` (or a table) at a timestamp window for the runner.
"""

from __future__ import annotations

import difflib
import itertools
import os
from contextlib import contextmanager
from dataclasses import dataclass

import pyarrow as pa
from sqlglot import exp

from .errors import ArrayNotFoundError, SqlError
from .parquet_source import ParquetSource, is_parquet_path
from .planner.file_tables import is_parquet_call
from .planner.parse import span_of, timestamp_window
from .storage.array import Array
from .storage.by_identity import ByIdentity

_ARROW_SCHEMAS = ByIdentity(256)  # ArraySchema -> its Arrow schema
_SQL_COLUMNS = ByIdentity(256)  # an array's Arrow schema -> its SQL columns


@dataclass(frozen=True)
class ArraySource:
    path: str
    timestamp: object = None  # ms, (start, end), or None for now
    key: object = None

    def open(self, window=None) -> Array:
        """The array at ``window`` (from FOR SYSTEM_TIME) or else at the registered timestamp."""
        return Array(self.path, self.timestamp if window is None else window, self.key)

    def arrow_schema(self, array: Array | None = None) -> pa.Schema:
        """The array's columns as Arrow fields, worked out once per schema: a schema read
        again from unchanged files is the same object (``storage.parsed_files``), and its
        enumerations are write-once files it names."""
        from .engine.fields import field_arrow_type

        array = array or self.open()
        schema = array.schema
        names = [d.name for d in schema.dimensions] + [a.name for a in schema.attributes]
        return _ARROW_SCHEMAS.get(schema, lambda: pa.schema(
            [pa.field(n, field_arrow_type(array, n)) for n in names]))


@dataclass(frozen=True)
class ArrowSource:
    table: pa.Table
    owned: bool = False  # made by CREATE TABLE: INSERT, UPDATE and DELETE replace it

    def arrow_schema(self, array=None) -> pa.Schema:
        return self.table.schema


_LENT = itertools.count()  # suffixes of the names ``Catalog.lent`` registers


class Catalog:
    def __init__(self):
        self.sources: dict[str, ArraySource | ArrowSource] = {}

    def register(self, name: str, source) -> None:
        self.sources[name] = source

    def unregister(self, name: str) -> None:
        del self.sources[name]

    @contextmanager
    def lent(self, prefix: str, table: pa.Table):
        """``table`` registered for the moment under a fresh name starting with ``prefix``
        (rows a statement works on: UPDATE's hits, RETURNING's rows), yielded."""
        name = f"{prefix}_{next(_LENT)}"
        self.register(name, ArrowSource(table))
        try:
            yield name
        finally:
            self.unregister(name)

    def registered_name(self, name: str) -> str | None:
        """The registered name ``name`` means: itself, or the one name matching it in any
        case (names are case-insensitive, as DuckDB's); None if none or several."""
        if name in self.sources:
            return name
        folded = [key for key in self.sources if key.lower() == name.lower()]
        return folded[0] if len(folded) == 1 else None

    def snapshot(self) -> "Catalog":
        """The names as registered now: a streamed result read again resolves them as they
        were when its query ran, whatever was registered or closed since."""
        frozen = Catalog()
        frozen.sources = dict(self.sources)
        return frozen

    def resolve(self, table: exp.Table, sql: str):
        """The source a FROM item names, and its FOR SYSTEM_TIME window (or None)."""
        from .planner.table_refs import table_key

        window = timestamp_window(table.args.get("version"), sql)
        if window is not None and window[0] is None:
            window = window[1]
        source = self._source(table, sql)
        if window is not None and not isinstance(source, ArraySource):
            raise SqlError(f"FOR SYSTEM_TIME reads an array's history; {table_key(table)!r} "
                           "is not an array", sql, span_of(table))
        return source, window

    def _source(self, table: exp.Table, sql: str):
        from .planner.table_refs import table_key

        name = table_key(table)
        registered = self.registered_name(name)
        if registered is not None:
            source = self.sources[registered]
            # registered Parquet files: matched again, so a file written since is read
            return ParquetSource.of(source.pattern) if isinstance(source, ParquetSource) \
                else source
        for source in self.sources.values():  # a quoted path naming a registered array
            if isinstance(source, ArraySource) and _same_path(source.path, name):
                return source
        # a path: quoted (FROM './data/a'), never a bare word that happens to name a folder
        if table.this.args.get("quoted") and (os.path.isdir(name) or "://" in name):
            return ArraySource(name)
        if table.this.args.get("quoted") and (is_parquet_path(name) or is_parquet_call(table)):
            return ParquetSource.of(name)
        if table.this.args.get("quoted") and os.sep in name and name not in self.sources:
            raise ArrayNotFoundError(f"no such array: {name!r} does not exist")
        known = sorted(self.sources)
        close = difflib.get_close_matches(name, known, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else \
            (f"; tables are {', '.join(map(repr, known))}" if known else "; no tables registered")
        raise SqlError(f"unknown table {name!r}{hint}", sql, span_of(table))


class ShapeCatalog(Catalog):
    """The tables of ``catalog``, every one empty: a query run over it yields its result's
    column names and types without reading a tile (DESCRIBE of a query)."""

    def __init__(self, catalog: Catalog, arrays: dict):
        super().__init__()
        self.catalog = catalog
        self.arrays = arrays  # (source, window) -> the Array the planner opened
        self.empty: dict = {}

    def resolve(self, table: exp.Table, sql: str):
        source, window = self.catalog.resolve(table, sql)
        # a registered Arrow table (its source holds the table) is not hashable: by identity
        key = (source if isinstance(source, ArraySource) else id(source), window)
        if key not in self.empty:
            array = self.arrays.get((source, window)) if isinstance(source, ArraySource) else None
            self.empty[key] = ArrowSource(source.arrow_schema(array).empty_table())
        return self.empty[key], window


def _same_path(a: str, b: str) -> bool:
    return os.path.normpath(os.path.abspath(a)) == os.path.normpath(os.path.abspath(b))


def sql_columns(source, array) -> dict[str, str]:
    """The source's columns as SQL types, by name, for the planner; an array's worked out once
    per Arrow schema (the same object while the array's schema is, ``arrow_schema``)."""
    schema = source.arrow_schema(array)

    def columns() -> dict[str, str]:
        names = [f.name for f in schema]
        if len(set(names)) != len(names):
            raise SqlError(f"table has duplicate column names: {names}")
        return {f.name: sql_type(f.type) for f in schema}

    if not isinstance(source, ArraySource):  # an Arrow table's schema: a new object each time
        return columns()
    return _SQL_COLUMNS.get(schema, columns)


def sql_type(arrow_type: pa.DataType) -> str:
    """The SQL type name the planner sees for an Arrow column type."""
    if pa.types.is_dictionary(arrow_type):
        return sql_type(arrow_type.value_type)
    for check, name in _SQL_TYPES:
        if check(arrow_type):
            return name(arrow_type) if callable(name) else name
    return "UNKNOWN"


_SQL_TYPES = (
    (pa.types.is_boolean, "BOOLEAN"), (pa.types.is_int8, "TINYINT"), (pa.types.is_int16, "SMALLINT"),
    (pa.types.is_int32, "INT"), (pa.types.is_int64, "BIGINT"), (pa.types.is_uint8, "UTINYINT"),
    (pa.types.is_uint16, "USMALLINT"), (pa.types.is_uint32, "UINTEGER"),
    (pa.types.is_uint64, "UBIGINT"), (pa.types.is_float32, "FLOAT"), (pa.types.is_float64, "DOUBLE"),
    (pa.types.is_string, "VARCHAR"), (pa.types.is_large_string, "VARCHAR"),
    (pa.types.is_binary, "BLOB"), (pa.types.is_large_binary, "BLOB"),
    (pa.types.is_date32, "DATE"), (pa.types.is_date64, "DATE"),
    (lambda t: pa.types.is_timestamp(t) and t.tz is not None, "TIMESTAMPTZ"),
    (pa.types.is_timestamp, "TIMESTAMP"),
    (lambda t: pa.types.is_time64(t) and t.unit == "ns", "TIME_NS"), (pa.types.is_time, "TIME"),
    (pa.types.is_duration, "INTERVAL"),
    (pa.types.is_fixed_size_binary, "BLOB"),
    (lambda t: pa.types.is_list(t) or pa.types.is_fixed_size_list(t) or pa.types.is_large_list(t),
     lambda t: f"{sql_type(t.value_type)}[]"),
)
