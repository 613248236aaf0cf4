"""The rows a Join step has joined so far, kept as row numbers into each of its inputs.

Joining table after table by taking every column of the rows so far at each join copies the
widest rows again and again (TPC-H Q9 joins six tables: the lineitem columns were taken five
times).  ``JoinedRows`` keeps, per input, which of its rows each joined row holds (-1: none, a
NULL row of an outer join); a join composes those numbers with its matched pairs.  Columns
become Arrow rows twice only: the few a join key or ON condition reads, when it reads them, and
every column once at the end (``frame()``).
"""

from __future__ import annotations

import numpy as np
from sqlglot import exp

from .frame import Frame, null_padded, take_rows


class JoinedRows:
    def __init__(self, parts: list[tuple[Frame, np.ndarray | None]], length: int):
        self.parts = parts  # (input, its row for each joined row or None: all rows, in order)
        self.length = length

    @classmethod
    def of(cls, frame: Frame) -> "JoinedRows":
        return cls([(frame, None)], frame.length)

    @property
    def tables(self) -> set:
        """The aliases the joined rows hold."""
        return {alias for frame, _ in self.parts for alias in frame.tables}

    @property
    def inputs(self) -> list[Frame]:
        return [frame for frame, _ in self.parts]

    def joined(self, left_rows: np.ndarray, right: Frame, right_rows: np.ndarray
               ) -> "JoinedRows":
        """These rows joined with ``right``: pair ``i`` is joined row ``left_rows[i]`` with
        ``right`` row ``right_rows[i]`` (-1 on either side: a NULL row)."""
        missing = left_rows < 0
        if not missing.any():
            missing = None  # an inner join's pairs: every left row is there
        parts = [(frame, _compose(rows, left_rows, missing)) for frame, rows in self.parts]
        return JoinedRows(parts + [(right, right_rows)], len(left_rows))

    def taken(self, rows: np.ndarray) -> "JoinedRows":
        """The joined rows ``rows`` (ascending indices), in that order."""
        return JoinedRows([(frame, rows if picked is None else picked.take(rows))
                           for frame, picked in self.parts], len(rows))

    def frame(self, nodes: list[exp.Expression] | None = None) -> Frame:
        """The joined rows as a Frame: every column, or only the columns ``nodes`` read."""
        wanted = None if nodes is None else _columns_read(nodes)
        tables = {}
        for frame, rows in self.parts:
            done: dict = {}  # aliases sharing a table share its rows
            padded = None if rows is None else null_padded(rows)
            for alias, table in frame.tables.items():
                if wanted is not None:
                    if alias not in wanted:
                        continue
                    table = table.select([c for c in table.column_names if c in wanted[alias]])
                key = (id(frame.tables[alias]), tuple(table.column_names))
                if key not in done:
                    done[key] = table if padded is None else take_rows(table, padded)
                tables[alias] = done[key]
        return Frame(tables, self.length)


def _compose(rows: np.ndarray | None, picked: np.ndarray, missing: np.ndarray | None
             ) -> np.ndarray:
    """``rows[picked]`` with -1 wherever ``picked`` is -1 (``missing``: where, if anywhere)."""
    if rows is None:
        return picked
    if missing is None:
        return rows.take(picked)
    if not len(rows):  # nothing joined so far: a RIGHT / FULL join's rows pair with none
        return np.full(len(picked), -1, np.int64)
    out = rows.take(np.where(missing, 0, picked))
    out[missing] = -1
    return out


def _columns_read(nodes: list[exp.Expression]) -> dict:
    """{alias: column names} of the columns ``nodes`` read (an alias-less column under
    None, the alias of a frame's step-local values)."""
    wanted: dict = {}
    for node in nodes:
        for column in node.find_all(exp.Column):
            wanted.setdefault(column.table or None, set()).add(column.name)
    return wanted
