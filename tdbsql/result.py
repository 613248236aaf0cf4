"""A query result: an Arrow table with the usual ways out (Arrow, pandas, Polars, tuples,
record batches, and the Arrow PyCapsule stream protocol)."""

from __future__ import annotations

import pyarrow as pa

from .errors import DataError, MissingExtraError


class Result:
    def __init__(self, table: pa.Table):
        self._table = table
        self._next = 0  # the row fetchone / fetchmany give next

    @property
    def columns(self) -> list[str]:
        return list(self._table.column_names)

    @property
    def num_rows(self) -> int:
        return self._table.num_rows

    def arrow(self) -> pa.Table:
        return self._table

    def df(self):
        return self._table.to_pandas()

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
        start = self._next
        self._next = min(self._table.num_rows, start + max(0, int(size)))
        return _rows(self._table.slice(start, self._next - start))

    def fetch_record_batch(self, rows_per_batch: int = 1_000_000) -> pa.RecordBatchReader:
        batches = self._table.to_batches(max_chunksize=rows_per_batch)
        return pa.RecordBatchReader.from_batches(self._table.schema, batches)

    def __arrow_c_stream__(self, requested_schema=None):
        """A fresh stream on every call (the Arrow PyCapsule interface)."""
        return self._table.__arrow_c_stream__(requested_schema)

    def __len__(self) -> int:
        return self._table.num_rows

    def __repr__(self) -> str:
        return f"<tdbsql.Result {self._table.num_rows} rows x {self._table.num_columns} columns>"


def _rows(table: pa.Table) -> list[tuple]:
    try:
        return list(zip(*(c.to_pylist() for c in table.columns)))
    except OverflowError as err:  # DuckDB's dates run from 290308 BC, Python's from year 1
        raise DataError(f"{err}: a DATE or TIMESTAMP outside the years 1-9999 has no Python "
                        f"value; read the result with .arrow()") from None
