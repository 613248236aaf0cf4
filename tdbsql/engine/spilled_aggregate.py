"""A streamed GROUP BY past its memory budget: partial groups partitioned on disk.

A streamed aggregate (``engine.streamed_aggregate``, and one over a join streamed batch by
batch, ``engine.streamed_join``) holds every batch's partial groups
(``engine.partial_aggregate``) until the scan ends and combines them.  With very many groups
(TPC-H Q18's subquery: 1.5M orders) those pass the memory budget.  Rather than stop there,
``PartialGroups`` then writes them to disk, hash-partitioned on their group key
(``engine.hash_partitions``): round after round of held partial groups, each round one
temporary Arrow IPC file with a batch per partition.  The number of partitions comes from the
bytes of partial groups the whole scan is expected to make, so that one partition's share is
a small part of the budget.  When the scan is done, each partition's batches of every round
(memory-mapped, read in place) are combined alone -- a key lies in one partition only, so
its groups are complete there -- with HAVING and the step's projections, and the
partitions' results are concatenated (partition after partition; SQL promises no order
without ORDER BY).  A partition that still does not fit (the scan made more groups than its
first chunks promised) is split again, by further digits of its keys' hash, into finer
partitions on disk.  An aggregate that fits never comes here: it runs as it always did.

Rows keep their order within a partition, round after round, so order-sensitive states
(first, string_agg) fold as in memory; DISTINCT states are lists of values, which partition
like any state.  What does not stream (holistic and ordered aggregates, array_agg:
``partial_aggregate.streamable``) and group keys that are not hashed by value (lists,
structs, maps, intervals: ``hash_partitions.partitionable``) stop with MemoryLimitError as
before.  The files go to ``TDBSQL_SPILL_DIR`` (``engine.spill_files``) and are removed when the
step is done or fails.
"""

from __future__ import annotations

import math
import os
import shutil

import pyarrow as pa

from ..errors import OperationalError
from .frame import Frame, concat_frames
from .grouping import rows_by_group
from .hash_partitions import partitionable, partitions
from .memory import step_label
from .partial_aggregate import Partial, combine, concat_arrays, merged
from .spill_files import spill_folder

SHARE = 8  # a partition's partial groups: about this part of the memory budget's room
MAX_PARTITIONS = 256
REGROUP_SHARE = 4  # the held states are regrouped past this part of the room (``merged``)
ROUND = 8  # once spilling, partial groups are written when they pass this part of the room
MAX_DIVISOR = 1 << 48  # partitions split again while the hash has digits left
UNKNOWN_GROWTH = 4  # the partial groups of a scan of unknown size: this many times those held


class PartialGroups:
    """The partial groups of a streamed Aggregate ``step``, batch after batch: held until
    they pass the budget, then on disk (``spilled``, a ``SpilledPartials``).  ``total``: how
    much the scan reads, in tasks or rows (the partition count is estimated from the share
    done)."""

    def __init__(self, runner, step, total: int, regroup: bool = False):
        self.runner, self.step, self.total = runner, step, total
        self.partials: list[Partial] = []
        self.held = 0  # bytes of ``partials`` added (``add``)
        # past this, the states held are first regrouped into one set (``merged``), if they fold
        # (``regroup``: a streamed join's batches, which meet the same groups again and again)
        self.regroup_at = runner.budget.room() // REGROUP_SHARE if regroup else None
        self.spilled: SpilledPartials | None = None

    def __enter__(self) -> PartialGroups:
        return self

    def __exit__(self, *exc) -> None:
        if self.spilled is not None:
            self.spilled.remove()

    def keep(self, state: Partial | None) -> None:
        """Hold ``state`` (None: nothing) uncounted: a few rows, or bytes counted already."""
        if state is not None:
            self.partials.append(state)

    def add(self, state: Partial | None, beside: int, done: int) -> None:
        """Hold a batch's ``state`` (None: nothing) after ``done`` of the scan's ``total``;
        ``beside``: other bytes the step holds.  Past the budget the partial groups held are
        written to disk; those that cannot be partitioned stop the query
        (``MemoryLimitError``)."""
        if state is not None:
            self.partials.append(state)
            self.held += state.nbytes
        if self.regroup_at is not None and self.held > self.regroup_at and \
                len(self.partials) > 1:
            one = merged(self.partials)  # batches meeting the same groups: one set of them
            if one is not None:
                self.partials, self.held = [one], one.nbytes
                self.regroup_at = max(self.regroup_at, 2 * self.held)
        room = self.runner.budget.room()
        if self.spilled is None:
            # x2: the states are concatenated to be combined
            if 2 * self.held + beside <= room or not _spillable(self.step, self.partials):
                self.runner.budget.check(2 * self.held + beside, step_label(self.step))
                return
            # bytes the whole scan makes, estimated from the share done (a guess without one)
            expected = self.held * self.total / done if done and self.total > 1 else \
                UNKNOWN_GROWTH * self.held
            count = min(MAX_PARTITIONS, max(2, math.ceil(SHARE * expected / max(room, 1))))
            self.spilled = SpilledPartials(count)
        elif self.held <= max(room - beside, 0) // ROUND:
            return
        self.spilled.write(self.partials)
        self.partials, self.held = [], 0

    def result(self, input_names) -> Frame | None:
        """The step's output from every batch's partial groups (None: there were none): held,
        combined (``combine``); spilled, the last held written too, then each partition
        combined alone, within the budget."""
        if self.spilled is None:
            return combine(self.step, self.partials, self.runner, input_names) \
                if self.partials else None
        if self.partials:
            self.spilled.write(self.partials)
        kept = [0]
        frames = list(self._frames(self.spilled, input_names, kept))
        self.runner.notes[id(self.step)] = self.spilled.summary()
        return concat_frames(frames)

    def _frames(self, spilled: SpilledPartials, input_names, kept: list[int]):
        """Each partition of ``spilled`` combined; one that does not fit beside the results
        so far (``kept``: their bytes) split again into finer partitions."""
        for index in range(spilled.count):
            parts = spilled.partition(index)
            if not parts:
                continue
            own = 2 * sum(p.nbytes for p in parts)  # x2 as above
            room = self.runner.budget.room()
            free = room - kept[0]
            # (results so far filling the room: finer partitions cannot help)
            if own > free > 0 and spilled.divisor < MAX_DIVISOR and \
                    sum(p.count for p in parts) > 1:
                finer = spilled.finer(math.ceil(SHARE * own / 2 / free))
                try:
                    for part in parts:
                        finer.write([part])
                    yield from self._frames(finer, input_names, kept)
                finally:
                    finer.remove()
                continue
            self.runner.budget.check(own + kept[0], step_label(self.step))
            frame = combine(self.step, parts, self.runner, input_names)
            kept[0] += self.runner.budget.bytes_of(frame)
            yield frame


def _plain(column: pa.Array) -> pa.Array:
    """``column`` as an IPC file can hold it batch after batch (one dictionary per column
    there): a dictionary column decoded."""
    return column.dictionary_decode() if pa.types.is_dictionary(column.type) else column


def _spillable(step, partials: list[Partial]) -> bool:
    """Can ``step``'s partial groups be partitioned: grouped, by keys hashed by value?"""
    return bool(step.group) and bool(partials) and all(
        partitionable(key.type) for key in partials[0].keys.values())


class SpilledPartials:
    """Partial groups on disk in ``count`` partitions: one Arrow IPC file per round written,
    a batch per partition, the key columns then the states' arrays (positionally named)."""

    def __init__(self, count: int, divisor: int = 1, splits: list | None = None):
        self.count, self.divisor = count, divisor  # ``hash_partitions.partitions``'
        self.splits = [] if splits is None else splits  # the counts partitions were split to
        self.folder = spill_folder("tdbsql-aggregate-", "a GROUP BY past the memory budget "
                                   "partitions its groups on disk, and no folder for them")
        self.readers: list[pa.ipc.RecordBatchFileReader] = []
        self.keys: list[str] = []
        self.states: dict[str, tuple[str, pa.DataType | None, int]] = {}
        self.rows = self.bytes = 0

    def write(self, partials: list[Partial]) -> None:
        """One round: the rows of ``partials``, partition after partition."""
        if not self.readers:
            self.keys = list(partials[0].keys)
            self.states = {text: (func, arg_type, len(arrays))
                           for text, (func, arg_type, arrays) in partials[0].states.items()}
        keys = [_plain(concat_arrays([p.keys[name] for p in partials])) for name in self.keys]
        order, starts = rows_by_group(partitions(keys, self.count, self.divisor), self.count)
        taken = pa.array(order)
        # column by column: one concatenated column held beside the partials and those done
        columns = [key.take(taken) for key in keys]
        del keys
        columns += [_plain(concat_arrays([p.states[text][2][i] for p in partials])).take(taken)
                    for text, (_, _, width) in self.states.items() for i in range(width)]
        names = [f"c{i}" for i in range(len(columns))]
        path = os.path.join(self.folder, f"round{len(self.readers)}.arrow")
        try:
            with pa.OSFile(path, "wb") as sink:
                with pa.ipc.new_file(sink, pa.schema([pa.field(n, c.type)
                                                      for n, c in zip(names, columns)])) as out:
                    for start, end in zip(starts[:-1].tolist(), starts[1:].tolist()):
                        out.write_batch(pa.record_batch(
                            [c.slice(start, end - start) for c in columns], names=names))
        except OSError as err:  # a full disk
            raise OperationalError(f"a GROUP BY past the memory budget partitions its groups "
                                   f"on disk, and {path!r} cannot be written: "
                                   f"{err.strerror or err} (set TDBSQL_SPILL_DIR to a folder "
                                   "with room)") from None
        self.rows += len(order)
        self.bytes += os.path.getsize(path)
        self.readers.append(pa.ipc.open_file(pa.memory_map(path)))

    def partition(self, index: int) -> list[Partial]:
        """Partition ``index``'s partial groups, round after round (views of the files)."""
        width = len(self.keys)
        parts = []
        for reader in self.readers:
            batch = reader.get_batch(index)
            if not batch.num_rows:
                continue
            columns, states, at = batch.columns, {}, width
            for text, (func, arg_type, count) in self.states.items():
                states[text] = (func, arg_type, columns[at:at + count])
                at += count
            parts.append(Partial(dict(zip(self.keys, columns[:width])), states,
                                 batch.num_rows, grouped=False))
        return parts

    def finer(self, count: int) -> SpilledPartials:
        """Empty partitions to split one of these into ``count`` (at least 2)."""
        count = min(MAX_PARTITIONS, max(2, count))
        self.splits.append(count)
        return SpilledPartials(count, self.divisor * self.count, self.splits)

    def summary(self) -> str:
        """How the step ran, for EXPLAIN ANALYZE."""
        split = "" if not self.splits else f" ({len(self.splits)} split again, into " + \
            ", ".join(map(str, self.splits)) + ")"
        rounds = _counted(len(self.readers), "round")
        return (f"Spilled past the memory budget: {self.rows:,} partial groups "
                f"({self.bytes / (1 << 20):,.1f} MB) written in {rounds} to "
                f"{self.count} partitions on disk{split}, each aggregated alone")

    def remove(self) -> None:
        self.readers = []
        shutil.rmtree(self.folder, ignore_errors=True)


def _counted(count: int, noun: str) -> str:
    return f"{count:,} {noun}" + ("" if count == 1 else "s")
