"""The cells of several sparse fragments in one global order, a batch at a time.

Fragment consolidation writes the cells of every merged fragment as one fragment in TileDB's
global order, the versions of one coordinate newest first.  Each sparse fragment holds its
cells in that order already, so the fragments merge like the sorted runs of an external sort,
and memory holds a few tiles of each, not the fragments:

- every fragment *lends* its next tiles (``Run.lend``: at least ``Run.want`` cells);
- the lent cells are ordered together: newest first (write timestamp, then the later
  fragment), then ``tiling.global_order``, which is stable;
- the *frontier* is the earliest of the last lent cells of the fragments with more to lend.
  A cell not lent yet sorts at or after its fragment's last lent cell, so every lent cell
  that sorts before the frontier's coordinate is final: those go out, in order;
- the others wait for the next round, and the fragments whose lent cells all went out lend
  again.  When nothing could go out (the frontier's coordinate opens the lent cells), the
  frontier's fragment lends more.

The cells of one coordinate sort next to each other and the frontier's coordinate waits whole,
so all versions of a coordinate go out in the same batch (purging deleted cells needs them
together).  A fragment whose lent cells all go out in one round lends twice as many the next
time, while all fragments together lend at most twice ``LENT_CELLS``: a fragment dense in a
narrow range of the order, beside many spread thinly, then does not make each round sort
every fragment's cells again for a tile of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np

from ..engine.column import Column, concat
from .tiling import Coords, order_keys
from .write_buffers import column_buffer

LENT_CELLS = 1 << 19  # the cells all fragments lend at once, shared out between them


@dataclass
class Cells:
    """Cells of merged fragments: their columns by field name (dimensions and attributes, as
    stored) and, per cell, the write timestamp, the delete timestamp and delete condition
    index (``UINT64_MAX``: none) and which merged fragment holds it (oldest first)."""

    columns: dict[str, Column]
    ts: np.ndarray
    dt: np.ndarray
    dci: np.ndarray
    frag_idx: np.ndarray

    def __len__(self) -> int:
        return len(self.ts)

    def take(self, idx: np.ndarray) -> "Cells":
        return Cells({k: c.take(idx) for k, c in self.columns.items()}, self.ts[idx],
                     self.dt[idx], self.dci[idx], self.frag_idx[idx])

    @staticmethod
    def concat(parts: list["Cells"]) -> "Cells":
        if len(parts) == 1:
            return parts[0]
        return Cells({k: concat([p.columns[k] for p in parts]) for k in parts[0].columns},
                     *(np.concatenate([getattr(p, a) for p in parts])
                       for a in ("ts", "dt", "dci", "frag_idx")))


class Run:
    """One fragment's cells, in global order, lent a few tiles at a time."""

    def __init__(self, batches: Iterator[Cells], want: int):
        self._batches = batches
        self.want = want
        self.done = False  # nothing more to lend
        self.lent: Cells | None = None  # lent, not gone out yet

    def lend(self) -> None:
        """Add the next ``want`` cells or more (whole batches) to ``lent``."""
        parts = [] if self.lent is None else [self.lent]
        got = 0
        while got < self.want:
            batch = next(self._batches, None)
            if batch is None:
                self.done = True
                break
            if len(batch):
                parts.append(batch)
                got += len(batch)
        self.lent = Cells.concat(parts) if parts else None

    @property
    def empty(self) -> bool:
        return self.lent is None or not len(self.lent)


def merged(schema, runs: list[Iterator[Cells]]) -> Iterator[Cells]:
    """The cells of every run (each: one fragment's cells in global order, batch after batch)
    in global order, the versions of a coordinate newest first, batch after batch."""
    share = max(1, LENT_CELLS // max(len(runs), 1))
    runs = [Run(batches, share) for batches in runs]
    while True:
        for run in runs:
            if run.empty and not run.done:
                run.lend()
        lending = [run for run in runs if not run.empty]
        if not lending:
            return
        lending = _reaching(schema, lending)
        cells, order, source, keys = _ordered(schema, lending)
        cut, frontier = _final(keys, source, lending)
        if cut == 0:  # the frontier's coordinate opens the lent cells: it needs more of them
            lending[frontier].lend()
            continue
        by_run = np.argsort(source[cut:], kind="stable")  # the waiting cells, run by run
        counts = np.bincount(source[cut:], minlength=len(lending))
        waiting = order[cut:][by_run]
        for run, rows in zip(lending, np.split(waiting, np.cumsum(counts)[:-1])):
            if not len(rows) and sum(r.want for r in runs) + run.want <= 2 * LENT_CELLS:
                run.want *= 2
            run.lent = cells.take(rows) if len(rows) else None
        yield cells.take(order[:cut])


def _reaching(schema, lending: list[Run]) -> list[Run]:
    """The runs whose first lent cell sorts at or before the frontier (the earliest last
    lent cell of the runs with more to lend): only their cells can go out this round.  The
    others wait without being sorted again: fragments that follow one another in the order
    (appends over time, an INSERT's parts) then merge in one pass, each round sorting one
    run's cells, not every run's."""
    if len(lending) < 2 or all(run.done for run in lending):
        return lending
    ends = Cells.concat([run.lent.take(np.array([0, len(run.lent) - 1])) for run in lending])
    keys = order_keys(_coords(schema, ends))
    order = np.lexsort(tuple(reversed(keys)))
    rank = np.empty(len(order), dtype=np.int64)  # equal keys, equal rank
    changed = np.zeros(len(order), dtype=bool)
    for key in keys:
        changed[1:] |= key[order][1:] != key[order][:-1]
    rank[order] = np.cumsum(changed)
    firsts, lasts = rank[0::2], rank[1::2]
    frontier = min(last for last, run in zip(lasts, lending) if not run.done)
    return [run for first, run in zip(firsts, lending) if first <= frontier]


def _coords(schema, cells: Cells) -> Coords:
    return Coords(schema, [column_buffer(dim, cells.columns[dim.name])
                           for dim in schema.dimensions])


def _ordered(schema, lending: list[Run]):
    """(the lent cells; the permutation putting them in global order, newest first among
    equal coordinates; and in that order, the index (into ``lending``) of the run each came
    from and their global-order keys, primary first).  The cells are not moved: each is
    taken once, when it goes out or back to its run."""
    cells = Cells.concat([run.lent for run in lending])
    source = np.repeat(np.arange(len(lending)), [len(run.lent) for run in lending])
    newest = np.lexsort((-cells.frag_idx, ~cells.ts))
    keys = [key[newest] for key in order_keys(_coords(schema, cells))]
    sort = np.lexsort(tuple(reversed(keys)))  # stable: newest first stays so
    order = newest[sort]
    return cells, order, source[order], [key[sort] for key in keys]


def _final(keys: list[np.ndarray], source: np.ndarray, lending: list[Run]) -> tuple[int, int]:
    """(how many of the ordered cells are final, the index of the run whose last lent cell
    is the frontier -- -1 when every run has lent all it has)."""
    last = np.full(len(lending), -1, dtype=np.int64)
    np.maximum.at(last, source, np.arange(len(source)))
    open_runs = [index for index, run in enumerate(lending) if not run.done]
    if not open_runs:
        return len(source), -1
    frontier = min(open_runs, key=lambda index: last[index])
    position = int(last[frontier])
    equal = np.ones(position + 1, dtype=bool)
    for key in keys:
        equal &= key[:position + 1] == key[position]
    return int(np.argmax(equal)), frontier  # equal keys sort together: the first is the cut
