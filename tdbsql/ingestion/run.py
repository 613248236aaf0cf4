"""The ingest loop: a source file -> a new (or existing) TileDB array, one fragment per batch.

In: a source (a path, or in-memory data: an Arrow table, a DataFrame...), the array path and
the choices of ``tdbsql.ingest``.  Out: the array on disk and an ``IngestReport``.

Steps: open the source; learn dimension domains and NULL counts (file statistics, else one
streaming pass over the needed columns); build or check the schema; create the array; read the
source in groups of ``batch_rows`` rows (a background thread reads and converts the next group
while the current one is written: Parquet decoding and the writer's codecs release the GIL);
write every group as an uncommitted fragment; commit them all at the end.  Any error removes
what this ingest wrote (its fragments, and the array if it created it): bad input leaves
nothing behind.  Memory holds about three groups at a time whatever the source size.
"""

from __future__ import annotations

import os
import queue
import shutil
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from ..datatypes import arrow_type, type_info
from ..errors import ArrayNotFoundError, DataError, ProgrammingError
from ..format.fragment_metadata import WRITE_VERSION
from ..format.names import FRAGMENTS_DIR, SCHEMA_DIR, commit_marker
from ..storage.array import write_timestamp
from ..storage.fragment_writer import commit_fragment
from . import infer
from .infer import IngestError, Plan
from .unique_keys import UniqueKeys
from .sources import ColumnStats, Source, batch_stats, merge_stats, open_source

if TYPE_CHECKING:
    from ..storage.tiling import Coords

DEFAULT_BATCH_ROWS = 1_000_000
WRITE_THREADS = max(1, min(2, os.cpu_count() or 1))  # fragments encoded at once


@dataclass(frozen=True)
class IngestReport:
    """What an ingest did."""

    array: str
    rows: int
    fragments: tuple[str, ...]
    seconds: float
    created: bool  # False for --append
    timestamp: int

    def __str__(self) -> str:
        verb = "created" if self.created else "appended to"
        return (f"{verb} {self.array}: {self.rows:,} rows in {len(self.fragments)} fragment(s), "
                f"{self.seconds:.2f} s")


def ingest(source, array_path, *, dims=None, sparse: bool = True, tile=None, capacity=None,
           filters=None, timestamp=None, append: bool = False, key=None,
           batch_rows: int = DEFAULT_BATCH_ROWS, progress=None, format=None,  # noqa: A002
           allows_duplicates: bool = True, cell_order: str = "row-major") -> IngestReport:
    """Write ``source`` (Parquet, CSV or Arrow IPC file, or a pyarrow Table) into ``array_path``.

    ``dims``: column names (``["day", "station"]`` or ``"day,station"``), or ``{name: (lo, hi)}``
    to fix domains (None: from the data); without dims the array gets a row-index dimension.
    ``tile``: one extent, one per dim, or ``{name: extent}``.  ``filters``: a pipeline (``"zstd:5"``,
    a ``tdbsql.FilterList`` or list of filters) for every attribute, or ``{column: pipeline}``;
    default Zstd.  ``append``: add fragments to an existing array whose schema the source must
    match.  ``progress``: None = a progress line when stderr is a terminal; True/False; or a
    callable ``(rows_done, rows_total_or_None)``.
    """
    started = time.perf_counter()
    if batch_rows < 1:
        raise ProgrammingError(f"batch_rows must be positive (got {batch_rows})")
    src = _open(source, format)
    infer.warn_durations(src.schema)
    path = os.fspath(array_path)
    exists = _array_exists(path)
    if exists and not append:
        raise IngestError(f"{path} already exists; pass --append (append=True) to add to it")
    if append and not exists:
        raise ArrayNotFoundError(f"{path} is not an array to append to (drop --append to create it)")
    stamp = write_timestamp(timestamp)
    if append:
        plan, schema_fmt, row_start = _plan_append(src, path, key, dims)
        _check_layout(schema_fmt, path, tile, capacity)
    else:
        plan = _plan_new(src, dims, sparse, tile)
        schema = infer.to_schema(plan, capacity=capacity, filters=filters,
                                 allows_duplicates=allows_duplicates, cell_order=cell_order)
        schema_fmt, row_start = None, 0
    created = False
    fragments: list[str] = []
    folder_existed = os.path.isdir(path)  # an empty folder the user made stays on failure
    try:
        if not append:
            _create(path, schema, key)
            created = True
            schema_fmt = _stored_schema(path, key)
        rows = _write_all(src, path, plan, schema_fmt, stamp, key, batch_rows, row_start,
                          fragments, _progress(progress, src.num_rows))
        _commit(path, fragments)
    except BaseException:
        _undo(path, fragments, created, folder_existed)
        raise
    return IngestReport(path, rows, tuple(fragments), time.perf_counter() - started,
                        not append, stamp)


# --- planning ------------------------------------------------------------------------------


def _open(source, kind) -> Source:
    if isinstance(source, str | os.PathLike):
        return open_source(source, kind)
    return _table_source(source)


def _table_source(data) -> Source:
    """In-memory data as a Source: whatever ``tdbsql.write`` takes (an Arrow table, batch or
    reader, a pandas DataFrame, a dict of arrays), read the way ``write`` reads it (a named
    DataFrame index is a column; float NaN is a value, not a NULL).  Batches are slices."""
    from ..storage.write_buffers import to_arrow
    from ..storage.writer import columns_of

    if not isinstance(data, pa.Table):
        data = pa.table({name: to_arrow(column, name)
                         for name, column in columns_of(data).items()})
    return _TableSource("<table>", "table", data.schema, data.num_rows, table=data)


@dataclass
class _TableSource(Source):
    table: pa.Table | None = None

    def batches(self, columns=None) -> Iterator[pa.RecordBatch]:
        table = self.table.select(columns) if columns is not None else self.table
        yield from table.to_batches(max_chunksize=1 << 20)

    def column_stats(self, columns):
        return {}


def _array_exists(path: str) -> bool:
    return os.path.isdir(os.path.join(path, SCHEMA_DIR)) or os.path.isfile(
        os.path.join(path, "__array_schema.tdb"))


def _plan_new(src: Source, dims, sparse: bool, tile) -> Plan:
    names, _, _ = infer.normalize_dims(dims)
    for name in names:
        if name not in src.schema.names:
            raise IngestError(f"dimension column {name!r} is not in the source {src.path} "
                              f"(columns: {', '.join(src.schema.names)})")
    stats = gather_stats(src, names)
    return infer.build_plan(src.schema, dims, sparse=sparse, tile=tile, stats=stats)


def gather_stats(src: Source, dim_names: list[str]) -> dict[str, ColumnStats]:
    """Min/max of the dims and NULL counts of every column: file statistics where they exist,
    one streaming pass over the dims (and, for IPC, every column: null counts are free there)
    for the rest.  Values of the pass are in the dims' converted (TileDB) types."""
    stats = src.column_stats(src.schema.names)
    need = [n for n in dim_names if n not in stats]
    if src.kind in ("ipc", "table"):
        need += [n for n in src.schema.names if n not in stats and n not in need]
    if not need:
        return stats
    plans = {n: infer.column_plan(src.schema.field(n), as_dim=n in dim_names) for n in need}
    minmax = {n for n in need if n in dim_names}
    found: dict[str, ColumnStats] = {}
    for batch in src.batches(need):
        converted = pa.table([infer.convert_array(batch.column(n), plans[n]) for n in need],
                             names=need)
        for name, value in batch_stats(converted, need, minmax).items():
            found[name] = merge_stats(found.get(name), value)
    return {**stats, **found}


def _plan_append(src: Source, path: str, key, dims):
    """The plan of the existing array, after checking the source fits it."""
    import tdbsql

    array = tdbsql.open(path, key=key)
    fmt = array.schema
    dim_names = [d.name for d in fmt.dimensions]
    row_dim = dim_names == [infer.ROW_DIM] and infer.ROW_DIM not in src.schema.names
    if dims is not None:
        names, _, _ = infer.normalize_dims(dims)
        if names != dim_names:
            raise IngestError(f"{path} has dimensions {dim_names}, not {names}")
    expected = [n for n in dim_names if not row_dim] + [a.name for a in fmt.attributes]
    missing = [n for n in expected if n not in src.schema.names]
    extra = [n for n in src.schema.names if n not in expected]
    if missing or extra:
        parts = ([f"missing column(s) {missing}"] if missing else []) + (
            [f"column(s) {extra} not in the array"] if extra else [])
        raise IngestError(f"the source does not match the schema of {path}: {'; '.join(parts)}")
    stats = gather_stats(src, [] if row_dim else dim_names)
    dims_plan = tuple(_append_dim(src, d, stats.get(d.name), row_dim) for d in fmt.dimensions)
    attrs_plan = tuple(_append_attr(src, a, stats.get(a.name)) for a in fmt.attributes)
    plan = Plan(dims_plan, attrs_plan, fmt.sparse, row_dim)
    row_start = 0
    if row_dim:
        domain = array.non_empty_domain()
        row_start = 0 if not domain else int(domain[0][1]) + 1
    return plan, fmt, row_start


def _check_layout(fmt, path: str, tile, capacity) -> None:
    """On append the array's schema rules: a different capacity or tile extent is an error."""
    if capacity is not None and fmt.sparse and capacity != fmt.capacity:
        raise IngestError(f"{path} has capacity {fmt.capacity}, not {capacity}")
    names = [d.name for d in fmt.dimensions]
    for name, extent in infer.normalize_tiles(tile, names).items():
        dim = fmt.dimension(name)
        if dim.tile_extent != extent:
            raise IngestError(f"{path}: dimension {name!r} has tile extent {dim.tile_extent}, "
                              f"not {extent}")


def _append_column(src: Source, name: str, datatype, cell_val_num, nullable: bool, as_dim: bool):
    field = src.schema.field(name)
    found = infer.column_plan(field, as_dim=as_dim)
    wanted = arrow_type(datatype, cell_val_num)
    if not _castable(found.target_type, wanted):
        raise IngestError(f"column {name!r} is {field.type} in the source but "
                          f"{type_info(datatype).datatype.name} ({wanted}) in the array")
    return infer.ColumnPlan(name, field.type, datatype, cell_val_num, nullable)


def _castable(have: pa.DataType, want: pa.DataType) -> bool:
    """Same type, or a widening that loses nothing for the values it meets (checked per value
    by a safe cast while writing)."""
    if have == want:
        return True
    numeric = (pa.types.is_integer, pa.types.is_floating)
    if pa.types.is_integer(have) and any(f(want) for f in numeric):
        return True
    if pa.types.is_floating(have) and pa.types.is_floating(want):
        return have.bit_width <= want.bit_width
    if pa.types.is_temporal(have) and pa.types.is_temporal(want):
        return type(have) is type(want)  # e.g. timestamp[us] -> timestamp[ns]
    return False


def _append_dim(src: Source, dim, stats: ColumnStats | None, row_dim: bool) -> infer.DimPlan:
    if row_dim:
        return infer.DimPlan(infer.ColumnPlan(dim.name, pa.uint64(), dim.datatype, 1),
                             dim.domain, dim.tile_extent)
    column = _append_column(src, dim.name, dim.datatype, 1 if not dim.is_var else dim.cell_val_num,
                            False, True)
    if stats is not None and stats.null_count:
        raise IngestError(f"dimension column {dim.name!r} holds {stats.null_count} NULL value(s)")
    if stats is not None and stats.min is not None and dim.domain is not None:
        lo, hi = (_raw(infer.stats_value(v, column)) for v in (stats.min, stats.max))
        if lo < dim.domain[0] or hi > dim.domain[1]:
            raise IngestError(f"dimension {dim.name!r}: the source holds values from {lo} to {hi},"
                              f" outside the array's domain [{dim.domain[0]}, {dim.domain[1]}]")
    return infer.DimPlan(column, dim.domain, dim.tile_extent)


def _raw(value):
    """A dim value as the stored schema holds domains (datetimes as their integer count)."""
    if isinstance(value, np.datetime64):
        return int(value.astype(np.int64))
    return value.item() if hasattr(value, "item") else value


def _append_attr(src: Source, attr, stats: ColumnStats | None) -> infer.ColumnPlan:
    column = _append_column(src, attr.name, attr.datatype, attr.cell_val_num, attr.nullable,
                            False)
    if not attr.nullable and stats is not None and stats.null_count:
        raise IngestError(f"column {attr.name!r} holds {stats.null_count} NULL value(s) but "
                          "the array's attribute is not nullable")
    return column


# --- writing ------------------------------------------------------------------------------


def _create(path: str, schema, key) -> None:
    from ..storage.writer import create

    create(path, schema, key=key)


def _stored_schema(path: str, key):
    import tdbsql

    return tdbsql.open(path, key=key).schema


def groups(batches, batch_rows: int) -> Iterator[pa.Table]:
    """Source batches regrouped into tables of ``batch_rows`` rows (the last one shorter)."""
    pending: list[pa.RecordBatch] = []
    count = 0
    for batch in batches:
        while batch.num_rows:
            take = min(batch_rows - count, batch.num_rows)
            pending.append(batch.slice(0, take))
            count += take
            batch = batch.slice(take)
            if count == batch_rows:
                yield pa.Table.from_batches(pending)
                pending, count = [], 0
    if count:
        yield pa.Table.from_batches(pending)


@dataclass(frozen=True)
class _Group:
    """One fragment's cells, converted: ``table`` holds every column of a dense group; for a
    sparse group the attributes in global order, with the dimensions converted once and
    sorted with them in ``coords`` (``tiling.Coords``).  ``rows``: the cell count."""

    rows: int
    table: pa.Table
    coords: Coords | None = None
    keys: pa.Table | None = None  # the dimension columns, where they must be unique


def _prepared(src: Source, plan: Plan, schema_fmt, batch_rows: int,
              row_start: int) -> Iterator[_Group]:
    """Fragment groups (converted; sparse ones sorted into global order), produced one ahead
    by a reader thread through a bounded queue."""
    out: queue.Queue = queue.Queue(maxsize=1)
    stop = threading.Event()
    done = object()

    def put(item) -> bool:
        """Hand ``item`` over unless the consumer has gone (then False)."""
        while not stop.is_set():
            try:
                out.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce():
        try:
            start = row_start
            for table in groups(src.batches(plan.source_columns), batch_rows):
                converted = infer.convert_table(table, plan, start)
                start += table.num_rows
                group = (_global_sorted(converted, schema_fmt) if plan.sparse
                         else _Group(converted.num_rows, converted))
                del converted
                if not put(group):
                    return
            put(done)
        except BaseException as exc:  # handed to the writing thread, which raises it
            put(exc)

    thread = threading.Thread(target=produce, name="tdbsql-ingest-reader", daemon=True)
    thread.start()
    try:
        while True:
            item = out.get()
            if item is done:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        thread.join()


def _global_sorted(table: pa.Table, schema_fmt) -> _Group:
    """A sparse group in TileDB's global order.

    The dimension columns are converted here, once: the writer takes them as they are
    (``write_fragment(coords=...)``) with the string ranks the sort computed.  The attributes
    are permuted by Arrow's multi-threaded ``take`` and converted by the writer.  The
    permutation is the writer's own (``tiling.global_order``), so ``ordered=True`` holds by
    construction; the writer then only verifies it instead of permuting every buffer.
    """
    from ..storage import tiling
    from ..storage.write_buffers import field_buffer

    dim_names = [d.name for d in schema_fmt.dimensions]
    infer.check_no_nan(table, None, dim_names)
    coords = tiling.Coords(schema_fmt, [
        field_buffer(table.column(d.name), d.name, d.datatype, d.cell_val_num, False)
        for d in schema_fmt.dimensions])
    tiling.check_in_domain(coords)
    order = tiling.global_order(coords)
    attrs = table.drop_columns(dim_names)
    keys = None if schema_fmt.allows_duplicates else table.select(dim_names)
    if np.array_equal(order, np.arange(len(order))):
        return _Group(table.num_rows, attrs, coords, keys)
    return _Group(table.num_rows, attrs.take(pa.array(order)), coords.take(order), keys)


def _write_all(src, path, plan, schema_fmt, stamp, key, batch_rows, row_start, fragments,
               progress) -> int:
    """Write every group; up to WRITE_THREADS fragments are encoded at once (the codecs and
    kernels release the GIL).  ``fragments`` receives each name as soon as it exists, in
    source order, so a failure can remove them."""
    from concurrent.futures import ThreadPoolExecutor

    rows = 0
    pending: list = []  # (rows, future) in source order
    ledger = UniqueKeys([d.name for d in schema_fmt.dimensions]) \
        if plan.sparse and not schema_fmt.allows_duplicates else None
    with ThreadPoolExecutor(max_workers=WRITE_THREADS, thread_name_prefix="tdbsql-ingest") as pool:
        try:
            for group in _prepared(src, plan, schema_fmt, batch_rows, row_start):
                if ledger is not None:
                    ledger.add(group.keys)
                pending.append((group.rows, pool.submit(
                    _write_group, path, plan, schema_fmt, group, stamp, key)))
                del group
                while len(pending) >= WRITE_THREADS:
                    rows += _finish(pending.pop(0), fragments)
                    progress(rows)
            while pending:
                rows += _finish(pending.pop(0), fragments)
                progress(rows)
            if ledger is not None:
                ledger.check()
        except BaseException:
            for _, future in pending:  # let in-flight writes end, and record their names
                try:
                    fragments.append(future.result())
                except BaseException:
                    pass
            raise
        finally:
            progress(None)
    return rows


def _finish(item, fragments: list[str]) -> int:
    n_rows, future = item
    fragments.append(future.result())
    return n_rows


def _write_group(path, plan: Plan, schema_fmt, group: _Group, stamp: int, key) -> str:
    from ..storage.writer import write_fragment

    if plan.sparse:
        return write_fragment(path, schema_fmt, group.table, timestamp_range=(stamp, stamp),
                              key=key, ordered=True, commit=False, coords=group.coords)
    return _write_dense(path, plan, schema_fmt, group.table, stamp, key)


def _write_dense(path, plan: Plan, schema_fmt, table: pa.Table, stamp: int, key) -> str:
    """A group of a dense ingest: the writer places the cells in the rectangle they fill."""
    from ..storage.writer import write

    names = [d.column.name for d in plan.dims] + [a.name for a in plan.attrs]
    try:
        # committed with the others at the end, like sparse groups
        return write(path, table.select(names), timestamp=stamp, key=key, commit=False)
    except DataError as err:
        raise IngestError(f"dense ingest: {err}; use --sparse, or a source with every cell "
                          "of each batch's rectangle") from None


def _commit(path: str, fragments: list[str]) -> None:
    """Make the fragments visible, in write order, after all their data is on disk."""
    for name in fragments:
        commit_fragment(path, name)


def _undo(path: str, fragments: list[str], created: bool, folder_existed: bool) -> None:
    """Remove what a failed ingest wrote (never anything it did not write)."""
    if created:
        if not folder_existed:
            shutil.rmtree(path, ignore_errors=True)
            return
        for name in os.listdir(path):  # the folder was empty before create
            full = os.path.join(path, name)
            shutil.rmtree(full, ignore_errors=True) if os.path.isdir(full) else os.remove(full)
        return
    for name in fragments:
        marker = os.path.join(path, commit_marker(name, WRITE_VERSION))
        if os.path.exists(marker):
            os.remove(marker)
        shutil.rmtree(os.path.join(path, FRAGMENTS_DIR, name), ignore_errors=True)


# --- progress -----------------------------------------------------------------------------


def _progress(progress, total: int | None):
    """A callable ``(rows_done | None at the end)``."""
    if callable(progress):
        return lambda rows: progress(rows, total) if rows is not None else None
    if progress is None:
        progress = sys.stderr.isatty()
    if not progress:
        return lambda rows: None
    return _Bar(total)


class _Bar:
    """One self-rewriting line on stderr: rows, percent, rows per second."""

    def __init__(self, total: int | None):
        self.total = total
        self.start = time.perf_counter()

    def __call__(self, rows: int | None) -> None:
        if rows is None:
            sys.stderr.write("\n")
            sys.stderr.flush()
            return
        elapsed = max(time.perf_counter() - self.start, 1e-9)
        share = f" / {self.total:,} ({100 * rows / self.total:.0f}%)" if self.total else ""
        sys.stderr.write(f"\ringest: {rows:,}{share} rows, {rows / elapsed:,.0f} rows/s")
        sys.stderr.flush()


__all__ = ["ingest", "IngestReport", "gather_stats", "groups"]
