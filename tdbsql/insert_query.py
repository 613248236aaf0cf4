"""``INSERT INTO sparse_array SELECT ...``: the query's rows written a batch at a time.

The query streams (``Result.fetch_record_batch``: part by part where its plan allows, e.g. a
scan with filters and projections, or an ORDER BY sorted on disk), so the rows never need to
fit in memory together.  The rows that fill a ``CHUNK_SHARE``-th of the memory budget (the
writer makes a few copies of them) are cast as INSERT casts them (``dml.typed_rows``) and
written as a fragment at the statement's timestamp, not committed.

An INSERT is still one fragment: when the rows took several, they are merged into one
(``fragment_consolidation.merge_sparse``: a few tiles of each at a time, a coordinate held
twice refused where the array allows no duplicates, as one write refuses it), ``FAN_IN``
parts at a time -- the first ``FAN_IN`` merged into a new part at the end of the list, until
one is left, so memory holds a tile or so of ``FAN_IN`` parts however many there are -- and
the parts merged are removed.  Only then is the fragment committed, so an error anywhere (a
value that does not fit a column, a duplicate) leaves the array as it was.
"""

from __future__ import annotations

import os
from typing import Iterator

import pyarrow as pa
from sqlglot import exp

from .errors import DataError

CHUNK_SHARE = 16  # a part holds at most this share of the memory budget (the writer copies it)
CHUNK_ROWS = 1 << 24  # ... and at most this many rows
FAN_IN = 16  # parts merged at once (each lends a tile or more): more take several passes


def insert_query(connection, source, array, tree: exp.Insert, names: list[str], conflicts,
                 sql: str) -> int:
    """Run the query of the INSERT ``tree`` and write its rows into the sparse ``array``
    (``source``: its catalog entry) under the column ``names`` (by position, or those it
    names: ``insert_columns``), each part's rows resolved against the array's cells under
    ``conflicts`` (``insert_conflicts``; None: written as they are); the rows written."""
    from .dml import resolver, typed_rows, with_omitted
    from .insert_columns import query_columns
    from .storage.fragment_writer import commit_fragment, discard_fragment
    from .storage.write_order import wait_past, write_after
    from .storage.writer import write

    reader = connection.sql(tree.expression.sql(dialect="duckdb")).fetch_record_batch()
    names = query_columns(tree, reader.schema.names, names, "the array", sql)
    resolve = None if conflicts is None else resolver(connection, tree, array, conflicts,
                                                      names, sql)
    when = write_after(array)  # after the statements before it, even in one millisecond
    parts, rows = [], 0
    try:
        for chunk in _chunks(reader, CHUNK_ROWS, _chunk_bytes(connection)):
            try:
                data = with_omitted(typed_rows(chunk.rename_columns(names), array, sql),
                                    array, sql, resolve is not None)
                if resolve is not None:
                    data = resolve(data)
                name = write(source.path, data, timestamp=when, key=source.key, commit=False)
            except DataError as err:
                if rows and "row " in str(err):  # the message counts from the chunk's first
                    raise DataError(f"{err} (rows counted from row {rows:,} of the query's "
                                    "result)") from None
                raise
            if name is not None:
                parts.append(name)
            rows += data.num_rows
        while len(parts) > 1:  # FAN_IN parts at a time: a tile or so of each in memory
            group = parts[:FAN_IN]
            parts.append(_merged(array, group, when))
            del parts[:len(group)]
        for name in parts:
            commit_fragment(source.path, name)
    except BaseException:
        for name in parts:
            discard_fragment(source.path, name)
        raise
    if parts:
        wait_past(when)
    return rows


def _chunk_bytes(connection) -> int:
    from .engine.memory import budget_mb

    return max(1 << 20, int(budget_mb(connection.memory_mb) * (1 << 20)) // CHUNK_SHARE)


def _chunks(reader: pa.RecordBatchReader, rows: int, nbytes: int) -> Iterator[pa.Table]:
    """The reader's rows in tables of ``rows`` rows or ``nbytes`` bytes, whichever comes
    first (the last one fewer, and one empty table when there are none: its columns are
    still cast)."""
    pending = pa.Table.from_batches([], reader.schema)
    chunks = 0
    for batch in reader:
        pending = pa.concat_tables([pending, pa.Table.from_batches([batch])])
        while pending.num_rows >= rows or (pending.num_rows > 1 and pending.nbytes >= nbytes):
            take = min(rows, max(1, pending.num_rows * nbytes // max(pending.nbytes, 1)))
            yield pending.slice(0, take)
            pending, chunks = pending.slice(take), chunks + 1
    if pending.num_rows or not chunks:
        yield pending


def _merged(array, parts: list[str], when: int) -> str:
    """The uncommitted fragments ``parts`` (written at ``when``) as one, also uncommitted;
    the parts are removed."""
    from .format.fragment_metadata import WRITE_VERSION
    from .format.names import FRAGMENTS_DIR, new_name
    from .storage.array import Fragment
    from .storage.directory import FragmentEntry
    from .storage.fragment_consolidation import merge_sparse
    from .storage.fragment_writer import discard_fragment

    fragments = [Fragment(FragmentEntry(name, os.path.join(array.path, FRAGMENTS_DIR, name),
                                        (when, when), WRITE_VERSION), array) for name in parts]
    writer = merge_sparse(array, fragments, new_name(when, when, WRITE_VERSION), (when, when),
                          cell_timestamps=False, unique=not array.schema.allows_duplicates)
    for name in parts:
        discard_fragment(array.path, name)
    return writer.name  # (removed by the caller with the other parts on a later error)
