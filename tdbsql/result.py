"""A query result: an Arrow table with the usual ways out (Arrow, pandas, Polars, tuples,
record batches, and the Arrow PyCapsule stream protocol).

Most results are a finished table.  A query that is one array scan with row-by-row steps
over it (``engine.streamed_result``) gives a *streamed* result instead: its first part is
computed when the query runs (so its errors come at once), the rest as they are read.
``fetch_record_batch``, ``__arrow_c_stream__``, ``fetchone`` and ``fetchmany`` hold a few
parts at a time, so an array far bigger than memory can be read out whole; ``arrow``,
``fetchall``, ``df``, ``pl``, ``num_rows`` and ``len`` build the whole table once (checked
against the memory budget, as any query's intermediate results are).  Reading a streamed
result a second way runs its scan again over the same fragments, so every way sees the
same rows.
"""

from __future__ import annotations

import datetime as dt
from typing import Callable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .engine.nested_types import holds
from .engine.struct_values import is_unnamed
from .errors import DataError, MissingExtraError


class Parts:
    """A streamed result's source: the first run's parts (its first part computed), another
    run's on request, and the memory check for holding them whole."""

    def __init__(self, parts: Iterator[pa.Table], again: Callable[[], Iterator[pa.Table]],
                 check: Callable[[int], None]):
        self.first = next(parts)
        self.schema = self.first.schema
        self._parts: Iterator[pa.Table] | None = parts
        self._again = again
        self._check = check

    def take(self, conform: bool = True) -> Iterator[pa.Table]:
        """Every part (each with the first part's schema, if ``conform``): the first run's
        parts the first time, a new run's after."""
        if self._parts is not None:
            parts, self._parts = _chain(self.first, self._parts), None
        else:
            parts = self._again()
        for part in parts:
            yield part if not conform or part.schema == self.schema else \
                _conformed(part, self.schema)

    def whole(self) -> pa.Table:
        """Every part as one table, held within the memory budget."""
        from .engine.frame import concat_tables

        tables, held = [], 0
        for part in self.take(conform=False):  # concat_tables unifies their types
            tables.append(part)
            held += part.nbytes
            self._check(held)
        return concat_tables(tables)


class Result:
    def __init__(self, table: pa.Table | None = None, parts: Parts | None = None):
        self._whole = table
        self._parts = parts
        self._next = 0  # the row fetchone / fetchmany give next (of a finished table)
        self._cursor: Iterator[pa.Table] | None = None  # fetchone / fetchmany of a stream
        self._pending: pa.Table | None = None  # the cursor's part not all fetched yet
        self._failed: Exception | None = None  # the error a part of the cursor raised

    @property
    def _table(self) -> pa.Table:
        if self._whole is None:
            self._whole = self._parts.whole()
        return self._whole

    @property
    def streamed(self) -> bool:
        """Is the result read part by part (not yet held as one table)?"""
        return self._whole is None

    @property
    def schema(self) -> pa.Schema:
        return self._parts.schema if self._whole is None else self._whole.schema

    @property
    def columns(self) -> list[str]:
        return list(self.schema.names)

    @property
    def num_rows(self) -> int:
        return self._table.num_rows

    def arrow(self) -> pa.Table:
        return self._table

    def df(self):
        """A pandas DataFrame as DuckDB's df() gives it: INTERVALs as timedelta64[us] with a
        month counting 30 days (``_as_durations``), in lists and structs too; MAPs as dicts,
        TUPLEs as tuples; a TIME column holding 24:00:00 as objects, that one as its text; a
        repeated column name (any case) made unique with ``_1``, ``_2``, as DuckDB makes it, where pandas
        would drop all but one of the columns.  No interval reaches pyarrow's pandas conversion, which
        makes DateOffsets of them and crashes where pandas was imported after tdbsql
        (``pandas_deferral``)."""
        table = self._table.rename_columns(unique_names(self._table.column_names))
        for n, field in enumerate(table.schema):
            if holds(field.type, pa.types.is_interval):
                column = table.column(n)
                chunks = [_as_durations(chunk) for chunk in column.chunks] or \
                    [_as_durations(pa.array([], column.type))]
                table = table.set_column(n, field.name, pa.chunked_array(chunks))
        objects = {n for n, f in enumerate(table.schema) if holds(f.type, _as_objects)}
        try:
            frame = _pandas(table, objects)
        except ValueError:  # a TIME of 24:00:00 (DuckDB's end of the day) is no Python time
            timed = {n for n, f in enumerate(table.schema) if holds(f.type, pa.types.is_time)}
            if not timed:
                raise
            objects |= timed
            frame = _pandas(table, objects)
        if objects:
            import pandas as pd

            for n in sorted(objects):  # as objects: DuckDB's Python values
                frame.insert(n, table.schema[n].name,
                             pd.Series(_python_values(table.column(n)), dtype=object))
        return frame

    def pl(self):
        try:
            import polars
        except ImportError:
            raise MissingExtraError("Result.pl() needs polars: pip install polars") from None
        return polars.from_arrow(self._table)

    def fetchall(self) -> list[tuple]:
        """Every row (whatever fetchone / fetchmany have read)."""
        return _rows(self._table)

    def fetchone(self) -> tuple | None:
        """The next row, None past the last: ``while (row := r.fetchone()) is not None``."""
        rows = self.fetchmany(1)
        return rows[0] if rows else None

    def fetchmany(self, size: int = 1) -> list[tuple]:
        """The next ``size`` rows (fewer at the end, none past it)."""
        size = max(0, int(size))
        if self._whole is None or self._cursor is not None:
            return _rows(self._from_cursor(size))
        start = self._next
        self._next = min(self._whole.num_rows, start + size)
        return _rows(self._whole.slice(start, self._next - start))

    def _from_cursor(self, size: int) -> pa.Table:
        """The next ``size`` rows of the stream.  A part that raised raises again on every
        later fetch: the rows after it are unknown, not absent."""
        if self._failed is not None:
            raise self._failed
        if self._cursor is None:
            self._cursor = self._parts.take()
        tables, count = [], 0
        while count < size:
            if self._pending is None or not self._pending.num_rows:
                try:
                    self._pending = next(self._cursor, None)
                except Exception as err:
                    self._failed = err
                    raise
                if self._pending is None:
                    break
            taken = self._pending.slice(0, size - count)
            self._pending = self._pending.slice(taken.num_rows)
            tables.append(taken)
            count += taken.num_rows
        return pa.concat_tables(tables) if tables else self.schema.empty_table()

    def fetch_record_batch(self, rows_per_batch: int = 1_000_000) -> pa.RecordBatchReader:
        if self._whole is not None:
            batches = self._whole.to_batches(max_chunksize=rows_per_batch)
            return pa.RecordBatchReader.from_batches(self._whole.schema, batches)
        batches = (batch for part in self._parts.take()
                   for batch in part.to_batches(max_chunksize=rows_per_batch))
        return pa.RecordBatchReader.from_batches(self._parts.schema, batches)

    def __arrow_c_stream__(self, requested_schema=None):
        """A fresh stream on every call (the Arrow PyCapsule interface)."""
        if self._whole is not None:
            return self._whole.__arrow_c_stream__(requested_schema)
        return self.fetch_record_batch().__arrow_c_stream__(requested_schema)

    def __len__(self) -> int:
        return self._table.num_rows

    def __repr__(self) -> str:
        if self._whole is None:
            return f"<tdbsql.Result streamed, {len(self.schema)} columns>"
        return f"<tdbsql.Result {self._whole.num_rows} rows x {self._whole.num_columns} columns>"


def _chain(first: pa.Table, rest: Iterator[pa.Table]) -> Iterator[pa.Table]:
    try:
        yield first
        yield from rest
    finally:  # a run stopped early cancels its scan's tasks not started yet
        close = getattr(rest, "close", None)
        if close is not None:
            close()


def _conformed(part: pa.Table, schema: pa.Schema) -> pa.Table:
    """A later part in the first part's column types (a NULL-typed column, a narrower
    decimal), or a DataError naming the column that cannot be: a string column whose later
    tiles hold bytes that are not UTF-8 turned binary there."""
    try:
        return part.cast(schema)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        bad = next((f.name for f, g in zip(schema, part.schema) if f.type != g.type), "?")
        raise DataError(
            f"column {bad!r} changes type part way through a streamed result (from "
            f"{schema.field(bad).type} to {part.schema.field(bad).type}: bytes that are not "
            f"UTF-8 in a string column?); read it whole with .arrow(), which unifies the "
            f"types") from None


def _pandas(table: pa.Table, left_out: set[int]):
    return table.select([n for n in range(table.num_columns) if n not in left_out]).to_pandas()


def unique_names(names: list[str]) -> list[str]:
    """Column names as DuckDB's df() makes them unique: a name already taken, in any case,
    gets the first of ``_1``, ``_2`` ... not taken."""
    taken, out = set(), []
    for name in names:
        if name.lower() in taken:
            number = 1
            while f"{name}_{number}".lower() in taken:
                number += 1
            name = f"{name}_{number}"
        taken.add(name.lower())
        out.append(name)
    return out


def _rows(table: pa.Table) -> list[tuple]:
    return list(zip(*(_python_values(c) for c in table.columns)))


def _python_values(column: pa.ChunkedArray) -> list:
    """A column's Python values as DuckDB's fetchall gives them, also inside a list, a struct
    or a map: a DATE or TIMESTAMP outside the years 1-9999 (DuckDB's run from 290308 BC,
    Python's from year 1 to 9999) as its text, ``'10000-01-01'``, ``'0001-12-31 (BC)
    10:00:00'``; an INTERVAL as a timedelta (``_timedeltas``); a TIME of 24:00:00 (DuckDB's
    end of the day, no Python time) as its text, ``'24:00:00'``; a MAP as a dict; an unnamed
    struct (TUPLE) as a tuple."""
    if holds(column.type, _not_as_arrow):
        return _values(column.combine_chunks())
    try:
        return column.to_pylist()
    except (OverflowError, ValueError):
        if not holds(column.type, _is_calendar):
            raise
    return _values(column.combine_chunks())


def _not_as_arrow(type_: pa.DataType) -> bool:
    """A type whose values DuckDB gives otherwise than Arrow's ``to_pylist`` always does."""
    return pa.types.is_interval(type_) or pa.types.is_time(type_) or pa.types.is_map(type_) \
        or _is_nanos(type_) or _as_objects(type_)


def _as_objects(type_: pa.DataType) -> bool:
    """A type ``df()`` gives as DuckDB's Python values: a MAP (dicts), a TUPLE (tuples)."""
    return pa.types.is_map(type_) or (pa.types.is_struct(type_) and is_unnamed(type_))


def _is_nanos(type_: pa.DataType) -> bool:
    """A TIMESTAMP_NS or TIME_NS type, whose values Python's datetime cannot hold whole."""
    return (pa.types.is_timestamp(type_) or pa.types.is_time(type_)) and type_.unit == "ns"


def _as_micros(array: pa.Array) -> pa.Array:
    """Nanosecond TIMESTAMPs or TIMEs cut to microseconds toward zero, as DuckDB's fetchall
    gives them."""
    target = pa.timestamp("us", array.type.tz) if pa.types.is_timestamp(array.type) else \
        pa.time64("us")
    return pc.cast(array, target, safe=False)


def _is_calendar(type_: pa.DataType) -> bool:
    return pa.types.is_date(type_) or pa.types.is_timestamp(type_)


def _needs_care(type_: pa.DataType) -> bool:
    """A type whose Arrow Python values may not be DuckDB's: dates, intervals, times, maps."""
    return _is_calendar(type_) or _not_as_arrow(type_)


def _is_list(type_: pa.DataType) -> bool:
    return pa.types.is_list(type_) or pa.types.is_large_list(type_) or \
        pa.types.is_fixed_size_list(type_)


def _values(array: pa.Array) -> list:
    """``array``'s Python values, its out-of-range dates and timestamps as their text, its
    intervals as timedeltas."""
    if pa.types.is_dictionary(array.type):
        return _values(array.dictionary_decode())
    if _is_nanos(array.type):
        array = _as_micros(array)
    if _is_calendar(array.type):
        from .engine.functions_text import text_of

        python = _in_python_range(array)
        values = pc.if_else(python, array, None).to_pylist()
        texts = text_of(pc.if_else(python, None, array)).to_pylist()
        return [value if text is None else text for value, text in zip(values, texts)]
    if pa.types.is_interval(array.type):
        return _timedeltas(array)
    if pa.types.is_time(array.type):
        from .engine.datetime_ops import end_of_day

        ends = end_of_day(array).to_pylist()
        if any(ends):
            return ["24:00:00" if end else value for value, end in zip(array.to_pylist(), ends)]
    if _is_list(array.type) and holds(array.type, _needs_care):
        items = iter(_values(array.flatten()))
        lengths = pc.list_value_length(array).to_pylist()
        return [None if length is None else [next(items) for _ in range(length)]
                for length in lengths]
    if pa.types.is_struct(array.type) and holds(array.type, _needs_care):
        names = [field.name for field in array.type]
        fields = zip(*(_values(child) for child in array.flatten()))
        if is_unnamed(array.type):
            return [row if valid else None
                    for row, valid in zip(fields, array.is_valid().to_pylist())]
        return [dict(zip(names, row)) if valid else None
                for row, valid in zip(fields, array.is_valid().to_pylist())]
    if pa.types.is_map(array.type):
        entries = _values(array.cast(pa.list_(array.type.field(0))))  # a list of structs
        return [None if row is None else _as_dict([tuple(entry.values()) for entry in row])
                for row in entries]
    return array.to_pylist()


def _as_dict(pairs: list[tuple]):
    """A MAP's entries as DuckDB's fetchall gives them, a dict; as the (key, value) pairs
    when a key cannot be a dict's (a list)."""
    try:
        return dict(pairs)
    except TypeError:
        return pairs


def _timedeltas(array: pa.Array) -> list:
    """INTERVALs as DuckDB's fetchall gives them: timedeltas, a month counting 30 days.  One
    past a timedelta's 999,999,999 days, which DuckDB cannot give (its OverflowError), as its
    text."""
    from .engine.datetime_ops import interval_micros
    from .engine.interval_rows import parts
    from .engine.interval_text import interval_text

    months, days, micros, valid = parts(array)
    out: list = []
    for n, ok in enumerate(valid.tolist()):
        try:
            out.append(dt.timedelta(microseconds=interval_micros(
                int(months[n]), int(days[n]), int(micros[n]))) if ok else None)
        except OverflowError:
            out.append(interval_text(array[n]).as_py())
    return out


def _as_durations(array: pa.Array) -> pa.Array:
    """An array's INTERVALs, at any depth of lists and structs, as microsecond durations, a
    month 30 days (DuckDB's df()); one past 2**63 microseconds as its text."""
    kind = array.type
    if pa.types.is_interval(kind):
        return _interval_durations(array)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        values = _as_durations(array.values)
        make = pa.LargeListArray if pa.types.is_large_list(kind) else pa.ListArray
        return make.from_arrays(array.offsets, values, mask=array.is_null())
    if pa.types.is_fixed_size_list(kind):
        return pa.FixedSizeListArray.from_arrays(_as_durations(array.values), kind.list_size,
                                                 mask=array.is_null())
    if pa.types.is_struct(kind):
        fields = [array.field(i) for i in range(kind.num_fields)]
        return pa.StructArray.from_arrays([_as_durations(f) for f in fields],
                                          [kind.field(i).name for i in range(kind.num_fields)],
                                          mask=array.is_null())
    if pa.types.is_map(kind):
        return pa.MapArray.from_arrays(array.offsets, _as_durations(array.keys),
                                       _as_durations(array.items), mask=array.is_null())
    return array


def _interval_durations(array: pa.Array) -> pa.Array:
    from .engine.datetime_ops import interval_micros
    from .engine.interval_rows import parts
    from .engine.interval_text import interval_text

    months, days, micros, valid = parts(array)
    total = interval_micros(months.astype(np.float64), days, micros)
    if (np.abs(total[valid]) >= 2.0**63).any():
        return interval_text(array)
    exact = interval_micros(months, days, micros)
    return pa.array(np.where(valid, exact, 0), pa.int64(), mask=~valid).cast(pa.duration("us"))


def _in_python_range(array: pa.Array) -> pa.Array:
    """Which of the dates / timestamps lie in the years 1-9999: by their raw numbers (the
    years Arrow computes for ones far out are wrong)."""
    from .engine.arrow_calendar import PYTHON_FIRST_DAY, PYTHON_LAST_DAY, TICKS_PER_DAY

    unit = "ms" if pa.types.is_date64(array.type) else getattr(array.type, "unit", None)
    per_day = TICKS_PER_DAY.get(unit, 1)
    numbers = pc.cast(array, pa.int64() if unit else pa.int32()).cast(pa.int64())
    first = max(PYTHON_FIRST_DAY * per_day, -2**63)
    last = min((PYTHON_LAST_DAY + 1) * per_day - 1, 2**63 - 1)
    return pc.and_(pc.greater_equal(numbers, first), pc.less_equal(numbers, last))
