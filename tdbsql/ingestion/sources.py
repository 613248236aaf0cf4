"""Data files as streams of Arrow RecordBatches with bounded memory.

In: a path (a Parquet file or a directory of them, a CSV file, an Arrow IPC file or stream).
Out: a ``Source`` whose ``batches(columns)`` can be iterated more than once (ingest reads the
dimension columns once to find domains, then everything once to write), never holding more
than one source batch (a Parquet row group slice, a CSV block, an IPC batch) at a time, plus
cheap facts when the file format records them (row counts, Parquet min/max/null statistics).

Parquet goes through ``pyarrow.dataset`` (column projection, no whole-file reads), CSV through
``pyarrow.csv.open_csv`` (block by block), IPC through a memory map.  CSV column types are
inferred once, on the first pass, and then pinned so that every later pass parses the same
types; a column whose first block looked integral and a later block has decimals becomes
float64 (not an error); any other disagreement is a ``DataError`` naming file, column and value.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

import pyarrow as pa

from ..errors import ArrayNotFoundError, DataError, NotSupportedError

PARQUET_EXTENSIONS = (".parquet", ".parq", ".pq")
CSV_EXTENSIONS = (".csv", ".tsv", ".txt", ".csv.gz", ".tsv.gz", ".csv.bz2", ".csv.zst")
IPC_EXTENSIONS = (".arrow", ".arrows", ".ipc", ".feather")

CSV_BLOCK_BYTES = 4 << 20  # bytes parsed per CSV block: also the window of first-pass type inference
PARQUET_READ_ROWS = 128 * 1024  # rows per batch pulled from a Parquet scan


class SourceError(DataError):
    """A source file that cannot be read as the data it claims to be."""


@dataclass(frozen=True)
class ColumnStats:
    """What the file format records about a column: min, max (Python values), null count."""

    min: object
    max: object
    null_count: int


@dataclass
class Source:
    """An opened data file.  ``schema`` is the Arrow schema every batch has."""

    path: str
    kind: str  # "parquet" | "csv" | "ipc"
    schema: pa.Schema
    num_rows: int | None = None  # known up front for Parquet and IPC files
    _csv_types: dict = field(default_factory=dict, repr=False)
    _csv_stats: dict = field(default_factory=dict, repr=False)
    _files: tuple = ()  # Parquet: the files, in order
    _footers: tuple = ()  # Parquet: each file's FileMetaData (read once, at open)
    _csv_delimiter: str = ","

    def batches(self, columns: list[str] | None = None) -> Iterator[pa.RecordBatch]:
        """The rows, in file order, as batches of the ``columns`` (all if None)."""
        reader = {"parquet": _parquet_batches, "csv": _csv_batches, "ipc": _ipc_batches}[self.kind]
        yield from reader(self, columns)

    def column_stats(self, columns: list[str]) -> dict[str, ColumnStats]:
        """Min/max/null count of those ``columns`` the file records (Parquet footers) or the
        CSV type-inference pass saw; columns missing from the answer need a pass."""
        if self.kind == "parquet":
            return _parquet_stats(self, columns)
        if self.kind == "csv":
            return {n: self._csv_stats[n] for n in columns if n in self._csv_stats}
        return {}


def open_source(path: str, kind: str | None = None, *, delimiter: str | None = None) -> Source:
    """Open ``path``; ``kind`` ("parquet", "csv", "ipc") overrides detection by name/magic."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise ArrayNotFoundError(f"source {path} does not exist")
    kind = kind or detect_kind(path)
    if kind == "parquet":
        return _open_parquet(path)
    if kind == "csv":
        return _open_csv(path, delimiter or ("\t" if ".tsv" in path.lower() else ","))
    if kind == "ipc":
        return _open_ipc(path)
    raise NotSupportedError(f"unknown source format {kind!r} (use parquet, csv or ipc)")


def detect_kind(path: str) -> str:
    """The source format from the file name, else from its first bytes."""
    if os.path.isdir(path):
        return "parquet"
    lower = path.lower()
    for kind, extensions in (("parquet", PARQUET_EXTENSIONS), ("csv", CSV_EXTENSIONS),
                             ("ipc", IPC_EXTENSIONS)):
        if lower.endswith(extensions):
            return kind
    with open(path, "rb") as f:
        head = f.read(8)
    if head.startswith(b"PAR1"):
        return "parquet"
    if head.startswith(b"ARROW1") or head.startswith(b"\xff\xff\xff\xff"):
        return "ipc"
    raise NotSupportedError(
        f"{path}: cannot tell the format from the name or contents; "
        "name it .parquet, .csv or .arrow (or pass format=)"
    )


# --- Parquet ------------------------------------------------------------------------------


def _open_parquet(path: str) -> Source:
    import pyarrow.dataset as ds

    try:
        dataset = ds.dataset(path, format="parquet")
        schema = dataset.schema
        footers = []
        for fragment in dataset.get_fragments():
            fragment.ensure_complete_metadata()
            footers.append(fragment.metadata)
            _check_same_types(schema, fragment, dataset.files[0])
    except (pa.ArrowException, OSError) as exc:
        raise SourceError(f"{path}: not a readable Parquet source ({_first_line(exc)})") from None
    if not dataset.files:
        raise SourceError(f"{path}: the directory holds no Parquet files")
    return Source(path, "parquet", schema, sum(f.num_rows for f in footers),
                  _files=tuple(dataset.files), _footers=tuple(footers))


def _check_same_types(schema: pa.Schema, fragment, first: str) -> None:
    """Every file of a folder must give each column the first file's type."""
    physical = fragment.physical_schema
    for column in schema:
        index = physical.get_field_index(column.name)
        if index < 0:
            raise SourceError(f"{fragment.path}: column {column.name!r} is missing (it is in "
                              f"{first})")
        if physical.field(index).type != column.type:
            raise SourceError(
                f"{fragment.path}: column {column.name!r} is {physical.field(index).type} "
                f"here but {column.type} in {first} (mixed types)")


def _parquet_batches(source: Source, columns) -> Iterator[pa.RecordBatch]:
    import pyarrow.parquet as pq

    # File by file, row group by row group, synchronously: a dataset scanner reads ahead as
    # far as it can while the writer is busy, which can hold most of a file decoded in memory.
    for path in source._files:
        try:
            reader = pq.ParquetFile(path)
            yield from reader.iter_batches(batch_size=PARQUET_READ_ROWS, columns=columns)
        except (pa.ArrowException, OSError) as exc:
            raise SourceError(f"{path}: {_first_line(exc)}") from None


def _parquet_stats(source: Source, columns: list[str]) -> dict[str, ColumnStats]:
    """Footer statistics of every row group, per column; a column with any group lacking
    min/max or a null count is left out (the caller computes it)."""
    found: dict[str, list] = {name: [] for name in columns}
    for meta in source._footers:
        index = {meta.schema.column(i).path: i for i in range(meta.num_columns)}
        for rg in range(meta.num_row_groups):
            group = meta.row_group(rg)
            for name in list(found):
                stats = group.column(index[name]).statistics if name in index else None
                if group.num_rows == 0:
                    continue
                all_null = stats is not None and stats.has_null_count and (
                    stats.null_count == group.num_rows)
                if stats is None or not stats.has_null_count or not (stats.has_min_max or all_null):
                    del found[name]
                else:
                    found[name].append(stats)
    result = {}
    for name, stats_list in found.items():
        try:
            result[name] = ColumnStats(_extreme([s.min for s in stats_list if s.has_min_max], min),
                                       _extreme([s.max for s in stats_list if s.has_min_max], max),
                                       sum(s.null_count for s in stats_list))
        except TypeError:  # values Python cannot order: computed by a pass instead
            continue
    return result


def _extreme(values: list, choose):
    return choose(values) if values else None


# --- CSV ----------------------------------------------------------------------------------


def _open_csv(path: str, delimiter: str) -> Source:
    source = Source(path, "csv", pa.schema([]), None, _csv_delimiter=delimiter)
    # Inference needs the whole file: a later block may hold decimals in an integer-looking
    # column.  Pass over it once (bounded memory) and pin the result.
    source.schema, source._csv_stats = _infer_csv_schema(source)
    source._csv_types = {f.name: f.type for f in source.schema}
    source.num_rows = source._csv_stats.pop(None, None)
    return source


def _infer_csv_schema(source: Source) -> tuple[pa.Schema, dict]:
    """The pinned column types, and every column's statistics (key None: the row count)."""
    pinned: dict[str, pa.DataType] = {}
    while True:  # each retry widens one column (null -> int -> float), so the loop ends
        reader = _csv_reader(source.path, source._csv_delimiter, pinned, None)
        schema = reader.schema
        stats: dict = {}
        minmax = {f.name for f in schema if _has_order(f.type)}
        rows = 0
        try:
            for batch in reader:
                rows += batch.num_rows
                for name, found in batch_stats(batch, schema.names, minmax).items():
                    stats[name] = merge_stats(stats.get(name), found)
            stats[None] = rows
            return schema, stats
        except pa.ArrowInvalid as exc:
            column, value = _csv_conversion_failure(exc, schema)
            if column is None:
                raise SourceError(f"{source.path}: {_first_line(exc)}") from None
            current = schema.field(column).type
            widened = _widen(current, value)
            if widened is None:
                raise SourceError(
                    f"{source.path}: column {column!r} has mixed types: it reads as {current} "
                    f"in the first rows, then holds {value!r}"
                ) from None
            pinned[column] = widened


_CONVERSION = re.compile(r"In CSV column #(\d+): (?:Row #\d+: )?CSV conversion error to ([^:]+): "
                         r"invalid value '(.*)'$", re.S)


def _csv_conversion_failure(exc: Exception, schema: pa.Schema | None):
    match = _CONVERSION.search(str(exc).strip())
    if not match or schema is None:
        return None, None
    column = schema.names[int(match.group(1))]
    return column, match.group(3)


def _widen(current: pa.DataType, value: str) -> pa.DataType | None:
    """The type that also holds ``value``: int -> float for a decimal number, an all-empty
    first block (null) -> the value's type; None when that would mix numbers and text."""
    if pa.types.is_null(current):
        for kind, parse in ((pa.int64(), int), (pa.float64(), float)):
            try:
                parse(value)
                return kind
            except ValueError:
                continue
        return pa.string()
    if pa.types.is_integer(current):
        try:
            float(value)
        except ValueError:
            return None
        return pa.float64()
    return None


def _csv_reader(path: str, delimiter: str, column_types: dict, columns):
    import pyarrow.csv as pacsv

    try:
        return pacsv.open_csv(
            path,
            read_options=pacsv.ReadOptions(block_size=CSV_BLOCK_BYTES),
            parse_options=pacsv.ParseOptions(delimiter=delimiter),
            convert_options=pacsv.ConvertOptions(column_types=column_types,
                                                 include_columns=columns),
        )
    except pa.ArrowInvalid as exc:
        if "Empty CSV file" in str(exc):
            raise SourceError(f"{path}: the CSV file is empty (no header row)") from None
        raise SourceError(f"{path}: {_first_line(exc)}") from None  # a row of the first block


def _csv_batches(source: Source, columns) -> Iterator[pa.RecordBatch]:
    try:
        reader = _csv_reader(source.path, source._csv_delimiter, source._csv_types, columns)
        yield from reader
    except pa.ArrowInvalid as exc:  # the file changed since it was opened
        raise SourceError(f"{source.path}: {_first_line(exc)}") from None


# --- statistics ---------------------------------------------------------------------------


def _has_order(t: pa.DataType) -> bool:
    return (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_temporal(t)
            or pa.types.is_decimal(t))


def batch_stats(batch, columns, minmax) -> dict[str, ColumnStats]:
    """Min/max (Arrow scalars, for the ``minmax`` columns) and null counts of one batch."""
    import pyarrow.compute as pc

    out = {}
    for name in columns:
        array = batch.column(name)
        lo = hi = None
        if name in minmax and len(array) > array.null_count:
            result = pc.min_max(array)
            lo, hi = result["min"], result["max"]
        out[name] = ColumnStats(lo, hi, array.null_count)
    return out


def merge_stats(a: ColumnStats | None, b: ColumnStats) -> ColumnStats:
    if a is None:
        return b
    return ColumnStats(_pick(a.min, b.min, min), _pick(a.max, b.max, max),
                       a.null_count + b.null_count)


def _pick(x, y, choose):
    if x is None or y is None:
        return y if x is None else x
    if isinstance(x, pa.Scalar):
        return x if choose(x.as_py(), y.as_py()) == x.as_py() else y
    return choose(x, y)


# --- Arrow IPC ----------------------------------------------------------------------------


def _open_ipc(path: str) -> Source:
    import pyarrow.ipc as ipc

    try:
        with pa.memory_map(path) as mm:
            reader = ipc.open_file(mm)
            rows = sum(reader.get_batch(i).num_rows for i in range(reader.num_record_batches))
            return Source(path, "ipc", reader.schema, rows)
    except pa.ArrowInvalid:
        pass
    try:
        with pa.memory_map(path) as mm:
            return Source(path, "ipc", ipc.open_stream(mm).schema, None)
    except pa.ArrowInvalid as exc:
        raise SourceError(f"{path}: not an Arrow IPC file or stream ({_first_line(exc)})") from None


def _ipc_batches(source: Source, columns) -> Iterator[pa.RecordBatch]:
    import pyarrow.ipc as ipc

    with pa.memory_map(source.path) as mm:
        if source.num_rows is not None:
            reader = ipc.open_file(mm)
            batches = (reader.get_batch(i) for i in range(reader.num_record_batches))
        else:
            batches = iter(ipc.open_stream(mm))
        for batch in batches:
            yield batch.select(columns) if columns is not None else batch


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
