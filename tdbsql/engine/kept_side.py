"""The kept side of a join fed batch by batch: its rows no batch matched, added at the end.

A RIGHT or FULL join keeps every row of its right input.  Fed its source batch by batch
(``engine.streamed_join``), each batch is joined as INNER (FULL: LEFT, the batch's own
unmatched rows padded in it) and the right rows it matched are marked; once every batch is
joined, the right rows never marked are added, padded with NULLs on the source's side.  Each
right row then appears as often as the whole join would have it: once per match, or once
alone.
"""

from __future__ import annotations

import numpy as np

from .frame import Frame
from .joined_rows import JoinedRows
from .turned_join import JoinView, side_of


class KeptSide:
    def __init__(self, name: str, rows: Frame, joins: dict):
        self.name = name  # the kept input
        self.rows = rows
        self.joins = joins  # the join's entries as each batch runs them
        self.matched = np.zeros(rows.length, dtype=bool)

    @classmethod
    def of(cls, view: JoinView, inputs: dict) -> KeptSide | None:
        """The kept side of a join of two inputs whose entry is RIGHT or FULL, else None."""
        if len(view.joins) != 1:
            return None
        (name, entry), = view.joins.items()
        side = side_of(entry)
        if side not in ("RIGHT", "FULL"):
            return None
        return cls(name, inputs[name], {name: {**entry, "side": "LEFT" if side == "FULL"
                                               else ""}})

    def saw(self, joined: JoinedRows) -> None:
        """Mark the kept rows a batch's ``joined`` rows hold (the last input's rows)."""
        rows = joined.parts[-1][1]
        self.matched[rows[rows >= 0]] = True

    def unmatched(self, empty: Frame) -> JoinedRows:
        """The kept rows no batch matched, each with a NULL row of the source (``empty``:
        none of its rows, typed)."""
        rows = np.flatnonzero(~self.matched).astype(np.int64)
        return JoinedRows.of(empty).joined(np.full(len(rows), -1, np.int64), self.rows, rows)
