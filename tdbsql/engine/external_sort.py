"""ORDER BY over more rows than memory holds: sorted runs spilled to disk, merged as they are
read back, the result given part by part.

A query whose last step is a Sort without LIMIT or OFFSET, right above one array scan and
row-by-row steps (``streamed_result.row_chain``), streams (``Runner.stream``).  The scan's
chunks go through the steps below the Sort and are held until they pass a quarter of the
memory budget.  If the scan ends first -- the common case -- the Sort step runs on them as it
always does (``sort_step.run_sort``).  Otherwise each such quarter is sorted by the Sort
step's own code (``sort_step.sorted_run``) and written, with its key columns, to a temporary
Arrow IPC file: a run.  The runs are then merged a batch of each at a time:
the rows of the current batches up to the smallest of their last keys sort before every row
not read yet, so they are sorted together (Arrow's stable sort) and given out, and each run
moves on by the rows it gave.  More than 16 runs are first merged 16 at a time into longer
runs on disk, so a merge holds at most 16 batches and each step gives out a good share of
them.  The files are memory-mapped, so a batch read back is a view
of the file, and the memory held is the merged rows given out; the files are removed when
the result is read to its end or dropped.

A key that is a list, struct or MAP (whose sort columns depend on the values) cannot be
merged run by run: past the budget such a sort stops with the MemoryLimitError it always had.
``TDBSQL_SPILL_DIR`` names the folder for the runs (default: the system's temporary folder).
"""

from __future__ import annotations

import math
import os
import shutil
from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import planner

from ..errors import OperationalError
from .frame import concat_frames
from .sort_step import run_sort, sorted_run
from .spill_files import spill_folder
from .streamed_result import row_chain, row_wise, through_chain

_SHARE = 4  # a run holds at most this part of the memory budget
_BATCHES = 16  # a run's batches: each about this part of a run's bytes
_MIN_BATCH = 1024  # rows of a batch, at the least
_FAN_IN = 16  # runs merged at once: past it, merged on disk into longer runs first


def sort_chain(runner, plan: planner.Plan) -> list | None:
    """The steps below the plan's root Sort, bottom-up from an array scan, when the sort can
    be run externally (see the module text); else None."""
    from ..catalog import ArraySource

    root = plan.root
    if not isinstance(root, planner.Sort) or root.limit != math.inf or root.offset or \
            len(root.dependencies) != 1:
        return None
    if not row_wise(*root.projections, *(ordered.this for ordered in root.key)):
        return None
    chain = runner.query.derived("sorted chain", lambda: row_chain(
        next(iter(root.dependencies))), root)
    if chain is None or len(chain[-1].dependents) != 1:
        return None
    source, _window = runner.catalog.resolve(chain[0].source, runner.sql)
    return chain if isinstance(source, ArraySource) else None


def sorted_parts(runner, chain: list, parts: Iterator, names, query) -> Iterator[pa.Table]:
    """The query's result in order, from the scan's ``parts`` through ``chain`` and the Sort
    step above it (``plan.root``)."""
    from .runner import output_table  # the runner imports this module

    sort = query.plan.root
    spill_at = max(1, runner.budget.limit // _SHARE)
    batch = spill_at // _BATCHES
    held, held_bytes, runs, folder = [], 0, [], None
    try:
        for frame in parts:
            frame = through_chain(runner, chain, frame)
            held.append(frame)
            held_bytes += runner.budget.bytes_of(frame)
            if held_bytes > spill_at:
                folder = folder or _folder()
                for piece in _pieces(concat_frames(held), held_bytes, spill_at):
                    runs.append(_spill(runner, sort, piece, names, folder, len(runs), batch))
                held, held_bytes = [], 0
        if not runs:
            if not held:  # no chunk at all (every tile pruned): the plan run as it is
                yield runner.run(query)
                return
            yield output_table(run_sort(sort, concat_frames(held), runner), sort, names)
            return
        if held:
            runs.append(_spill(runner, sort, concat_frames(held), names, folder, len(runs),
                               batch))
        made = len(runs)
        while len(runs) > _FAN_IN:  # merged on disk, _FAN_IN runs at a time, into longer ones
            groups = [runs[i:i + _FAN_IN] for i in range(0, len(runs), _FAN_IN)]
            runs = []
            for group in groups:
                runs.append(_write(_merged(group, whole=True), group[0].like(
                    os.path.join(folder, f"run{made}.arrows")), batch))
                made += 1
                for run in group:
                    run.remove()
        yield from _merged(runs, whole=False)
    finally:
        parts.close()
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


def _folder() -> str:
    """A new folder for the runs (``spill_files``)."""
    return spill_folder("tdbsql-sort-", "an ORDER BY past the memory budget sorts on disk, "
                                        "and no folder for its runs")


class _Run:
    """A sorted run on disk: the result's columns (the first ``width``, named ``names``),
    then the key columns (``key_names``) with their sort keys; stored under positional
    names (a result may repeat a name, or name a column like a key) and read back batch by
    batch from the memory-mapped file."""

    def __init__(self, path: str, names: list[str], key_names: list[str], sort_keys: list):
        self.path, self.names, self.key_names, self.sort_keys = path, names, key_names, sort_keys
        self.width = len(names)
        self.reader = None
        self.current: pa.Table | None = None

    def like(self, path: str) -> "_Run":
        """A run at ``path`` with this one's columns."""
        return _Run(path, self.names, self.key_names, self.sort_keys)

    def advance(self) -> None:
        """The next batch (the first: open the file), or None past the last."""
        if self.reader is None:
            self.reader = pa.ipc.open_stream(pa.memory_map(self.path))
        try:
            self.current = pa.Table.from_batches([self.reader.read_next_batch()])
        except StopIteration:
            self.current = None

    def keys(self, table: pa.Table) -> pa.Table:
        return pa.table(table.columns[self.width:], names=self.key_names)

    def remove(self) -> None:
        self.reader = self.current = None
        os.remove(self.path)


def _pieces(frame, nbytes: int, most: int):
    """``frame`` (of ``nbytes``) cut into pieces of at most about ``most`` bytes."""
    count = -(-nbytes // most)
    rows = -(-frame.length // count)
    for start in range(0, frame.length, rows):
        yield frame.take(np.arange(start, min(start + rows, frame.length), dtype=np.int64))


def _spill(runner, sort, frame, names, folder: str, number: int, room: int) -> _Run:
    """Sort ``frame`` (the rows below the Sort step) and write it as run ``number``."""
    from .runner import output_table

    frame, keys, sort_keys = sorted_run(sort, frame, runner)
    out = output_table(frame, sort, names)
    run = _Run(os.path.join(folder, f"run{number}.arrows"), out.column_names,
               keys.column_names, sort_keys)
    columns = [*out.columns, *keys.columns]
    return _write(iter([pa.table(columns, names=[f"c{i}" for i in range(len(columns))])]),
                  run, room)


def _write(tables: Iterator[pa.Table], run: _Run, room: int) -> _Run:
    """Write ``tables`` (a run's columns, positionally named) as ``run``, in batches of about
    ``room`` bytes (uncompressed: read back, a batch is a view of the mapped file)."""
    writer = None
    try:
        with pa.OSFile(run.path, "wb") as sink:
            for table in tables:
                if writer is None:
                    writer = pa.ipc.new_stream(sink, table.schema)
                per_row = max(table.nbytes / max(table.num_rows, 1), 1)
                for batch in table.to_batches(max_chunksize=max(_MIN_BATCH,
                                                                int(room / per_row))):
                    writer.write_batch(batch)
            if writer is not None:
                writer.close()
    except OSError as err:  # a full disk
        raise OperationalError(f"an ORDER BY past the memory budget sorts on disk, and its "
                               f"run {run.path!r} cannot be written: {err.strerror or err} "
                               "(set TDBSQL_SPILL_DIR to a folder with room)") from None
    return run


def _merged(runs: list[_Run], whole: bool) -> Iterator[pa.Table]:
    """The runs' rows in order: the result's columns, or (``whole``) the runs' columns.

    Each round the *boundary* is the smallest of the current batches' last rows: no row
    not read yet sorts before it.  Each run gives the rows that sort before it (at it too,
    for runs before the boundary's, as a stable sort of the runs in order places ties), found
    by binary search in the run's sorted batch; only those are sorted together and given
    out, so every row is sorted once here."""
    sort_keys = runs[0].sort_keys
    for run in runs:
        run.advance()
    while True:
        for run in runs:
            while run.current is not None and not run.current.num_rows:
                run.advance()
        live = [run for run in runs if run.current is not None]
        if not live:
            return
        lasts = pa.concat_tables([run.keys(run.current.slice(run.current.num_rows - 1))
                                  for run in live], promote_options="permissive")
        first = int(pc.sort_indices(lasts, sort_keys=sort_keys)[0].as_py())
        bound = lasts.slice(first, 1)
        counts = [run.current.num_rows if index == first else
                  _rows_before(run.keys(run.current), bound, sort_keys, index < first)
                  for index, run in enumerate(live)]
        union = pa.concat_tables([run.current.slice(0, count) for run, count in
                                  zip(live, counts) if count], promote_options="permissive")
        order = pc.sort_indices(live[0].keys(union), sort_keys=sort_keys)
        if whole:
            yield union.take(order)
        else:  # the key columns are not taken: only a run on disk keeps them
            yield pa.table(union.columns[:live[0].width], names=live[0].names).take(order)
        for run, count in zip(live, counts):
            run.current = run.current.slice(count)


def _rows_before(keys: pa.Table, bound: pa.Table, sort_keys, ties: bool) -> int:
    """How many leading rows of ``keys`` (sorted by ``sort_keys``) sort before the one row
    ``bound`` -- or equal to it, with ``ties``.  Each probe sorts the row and the bound
    (stable), so it orders them exactly as the sorts around it do, NULLs and NaNs too."""
    if _sorts_before(keys.slice(keys.num_rows - 1), bound, sort_keys, ties):
        return keys.num_rows  # the whole batch (the common case for a run ahead)
    low, high = 0, keys.num_rows - 1
    while low < high:
        middle = (low + high) // 2
        if _sorts_before(keys.slice(middle, 1), bound, sort_keys, ties):
            low = middle + 1
        else:
            high = middle
    return low


def _sorts_before(row: pa.Table, bound: pa.Table, sort_keys, ties: bool) -> bool:
    pair = pa.concat_tables([row, bound] if ties else [bound, row],
                            promote_options="permissive")
    return pc.sort_indices(pair, sort_keys=sort_keys)[0].as_py() == (0 if ties else 1)
