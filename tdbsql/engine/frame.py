"""A ``Frame``: the rows flowing between two plan steps, as named Arrow tables of equal length.

After a join several table aliases share the rows (``lineitem``, ``orders``...); after an
aggregate the step's name and the names it consumed all see the aggregate's output.  Expressions
are evaluated over ``flat()``: one Arrow table whose columns are ``"<alias>.<column>"`` for named
tables and plain names for step-local values (see ``engine.column_refs.resolve_column``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

ROW_PLACEHOLDER = "__row"  # the one column of a frame with rows but no columns


@dataclass
class Frame:
    tables: dict[str | None, pa.Table]
    length: int

    @classmethod
    def single(cls, name: str | None, table: pa.Table) -> "Frame":
        return cls({name: table}, table.num_rows)

    def flat(self) -> pa.Table:
        names, arrays, seen = [], [], set()
        for alias, table in self.tables.items():
            for column_name, column in zip(table.column_names, table.columns):
                name = column_name if alias is None else f"{alias}.{column_name}"
                if name not in seen and column_name != ROW_PLACEHOLDER:
                    seen.add(name)
                    names.append(name)
                    arrays.append(column)
        if not arrays:
            return rows_only(self.length)
        return pa.Table.from_arrays(arrays, names=names)

    def take(self, indices) -> "Frame":
        """Rows at ``indices`` (a numpy int64 array or an Arrow array with nulls for NULL rows)."""
        done: dict[int, pa.Table] = {}  # aliases often share one table: take it once
        taken = {}
        for alias, table in self.tables.items():
            if id(table) not in done:
                done[id(table)] = take_rows(table, indices)
            taken[alias] = done[id(table)]
        return Frame(taken, len(indices))

    def filter(self, mask) -> "Frame":
        mask = np.asarray(mask, dtype=bool)
        if mask.all():
            return self
        return self.take(mask.nonzero()[0])


def concat_frames(frames: list[Frame]) -> Frame:
    """The rows of ``frames`` (same aliases and columns, e.g. the batches of one scan) one
    after another; aliases sharing a table keep sharing it."""
    if len(frames) == 1:
        return frames[0]
    done: dict[int, pa.Table] = {}
    tables = {}
    for alias, table in frames[0].tables.items():
        if id(table) not in done:
            done[id(table)] = concat_tables([f.tables[alias] for f in frames])
        tables[alias] = done[id(table)]
    return Frame(tables, sum(f.length for f in frames))


def concat_tables(tables: list[pa.Table]) -> pa.Table:
    """Tables of the same columns one after another.  A string column that some batch had to
    keep as binary (bytes that are not UTF-8) is binary in all of them."""
    schemas = {t.schema for t in tables}
    if len(schemas) > 1:
        names = tables[0].column_names
        types = [unified_type([t.schema.field(i).type for t in tables]) for i in range(len(names))]
        tables = [t.cast(pa.schema([pa.field(n, ty) for n, ty in zip(names, types)]))
                  if t.schema.types != types else t for t in tables]
    return pa.concat_tables(tables)


def unified_type(types: list[pa.DataType]) -> pa.DataType:
    """One type for the batches of a column: binary over string, the widest decimal (an
    integer sum that overflowed int64 in one batch), else the first type that is not null."""
    kinds = set(types)
    if len(kinds) == 1:
        return types[0]
    if any(pa.types.is_large_binary(t) for t in kinds):
        return pa.large_binary()
    if any(pa.types.is_binary(t) for t in kinds):
        return pa.binary()
    decimals = [t for t in kinds if pa.types.is_decimal(t)]
    if decimals:
        return pa.decimal128(38, max(t.scale for t in decimals))
    return next((t for t in types if not pa.types.is_null(t)), types[0])


def rows_only(length: int) -> pa.Table:
    """A table of ``length`` rows and no real columns."""
    return pa.table({ROW_PLACEHOLDER: pa.nulls(length)})


def take_rows(table: pa.Table, indices) -> pa.Table:
    if table.num_columns == 0:
        return rows_only(len(indices))
    return table.take(indices)


def broadcast(value, length: int) -> pa.Array:
    """An expression result as a column: scalars (constants) repeated ``length`` times."""
    if isinstance(value, pa.Scalar):  # not through Python: a date past year 9999 has no as_py
        # (Arrow repeats a list or struct scalar zero times only as an error)
        return pa.repeat(value, length) if length else pa.array([], value.type)
    if isinstance(value, pa.ChunkedArray):
        return value.combine_chunks() if value.num_chunks != 1 else value.chunk(0)
    return value


def null_padded(indices: np.ndarray) -> pa.Array:
    """int64 take indices where -1 means 'no row' (outer joins): an Arrow array with nulls."""
    missing = indices < 0
    if not missing.any():
        return pa.array(indices)
    return pa.array(np.where(missing, 0, indices), mask=missing)
