"""The cells a TileDB delete commit removes although SQL keeps them, written back after it.

SQL deletes the cells on which the condition is TRUE.  A TileDB delete commit also removes
those on which it is NULL (a value node on a NULL cell is false, negated or not) and compares a
NaN as IEEE floats do (every op but ``!=`` false) where SQL orders NaN above every number.  So
``DELETE ... WHERE n > 4`` on a cell whose ``n`` is NULL (or ``WHERE f < 1`` on a NaN ``f``)
would lose a cell SQL keeps; so would ``DELETE ... WHERE x IS NOT NULL``, whose commit
removes every cell (``storage.delete_writer``: a NULL test as value nodes); and so would any
DELETE testing an attribute added (schema evolution) after a fragment was written: TileDB's
test of a field a fragment lacks removes every cell of it, where SQL reads the fill value --
then every cell SQL keeps is at risk.  The converse never
happens: TileDB's stored tree is the negated condition, AND/OR of value nodes only, and a NULL
or NaN makes each of its nodes false where SQL might say true, never the other way, so the
commit keeps no cell SQL deletes.

``judge`` reads the cells visible at the delete's timestamp ``t`` (newest version of each
coordinate, earlier deletes applied) as the engine's scan stores them, first the tested fields
only: the cells on which the condition is TRUE in SQL's three-valued logic
(``format.delete_condition.sql_truth``, on the condition tree itself, so exactly as the commit
compares, NULL unknown and NaN above every number) are the rows the DELETE deletes, DuckDB's
count.  The cells at risk are the others on which a tested nullable attribute is NULL or a
tested float NaN: a superset of the ones the commit removes (the others are harmless to write
again, below).  Only when there are some are their tiles read again, every field.
They are written back, every field with its exact value and validity, as one fragment at
``t + 1``: TileDB applies a delete at ``t`` to the fragments whose FIRST timestamp is <= ``t``
(``sparse_index_reader_base.cc``: ``delete_timestamp >= frag_meta->timestamp_range().first``),
so the copies outlive it, and as the newest version of their coordinates they hide the
originals.  The copies are written BEFORE the delete commit: until the commit lands (or if it
never does) a copy and its original are the same cell at the same coordinates and the array
reads as before.

Time travel afterwards: an AS OF read before ``t`` sees the array before the DELETE; one at
``t`` exactly sees the delete commit without the copies (TileDB's own meaning of the commit:
the cells above are missing too) -- no fragment can be visible at ``t`` and escape a delete at
``t``; from ``t + 1`` on, the SQL result.  A window that starts after the originals were
written and ends after ``t`` sees the copies, which it did not see before.  With the default
timestamp (now) the delete commit waits until the clock has passed ``t``, so a read that
starts after the DELETE sees the copies.

Later writes and deletes at explicit timestamps: the copies are cells written at ``t + 1``,
and TileDB orders cells by their fragments' timestamps, so a write or delete given an explicit
timestamp at or below ``t + 1`` after such a DELETE does not come after them.  A write of the
same coordinates at ``t + 1`` ties with a copy (which of the two a reader shows follows the
fragments' names, at random); one below ``t + 1`` is hidden by it; a delete at ``t`` or
earlier misses the copies (they start after it), so a copy SQL would delete survives.  With
default timestamps (now) this cannot happen: every later write or delete is stamped after
``t + 1``.  After such a DELETE, give explicit timestamps above ``t + 1``.

Refused (nothing written) when the copies could not stand for the originals:

* the array allows duplicates: a copy is then a second cell, not a newer version, visible
  twice between the two writes (or for good if the delete commit is never written);
* a fragment ends after ``t`` and starts at or before ``t + 1`` (written at ``t + 1`` already,
  or spanning ``t``): the copies would tie with it, or its cells the delete removes would not
  be among those read back at ``t``;
* ``t`` is the last millisecond a name can hold.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sqlglot import exp

from ..datatypes import type_info
from ..engine.column import Column
from ..engine.fill import fill_column
from ..engine.parallel import map_ordered
from ..engine.scan import open_scan, scan
from ..engine.sparse_scan import condition_input
from ..errors import SqlError, UnsupportedSql
from ..format.delete_condition import ExprNode, Node, sql_truth
from .array import Array
from .directory import UINT64_MAX


@dataclass(frozen=True)
class Judged:
    """What SQL makes of a DELETE on the cells visible at its timestamp: how many rows it
    deletes, and the cells it keeps that the commit may remove (every field, as stored), None
    when there are none."""

    deleted: int
    kept_at_risk: dict[str, Column] | None


def judge(array: Array, condition: Node, t: int, where: str = "") -> Judged:
    """``condition`` (the user's, not negated) over the cells visible at ``t``: the tested
    fields are read once, a few tiles at a time (the rows deleted and at risk are counted, so
    memory does not grow with the array); the cells at risk, when there are any, with every
    field in a second read of the tiles that can hold them."""
    at_t = Array(array.path, t, array.key)
    tested = _fields_of(condition)
    missing = sorted(set(tested) - at_t.schema.fields_by_name().keys())
    if missing:  # DuckDB: the column does not exist
        raise SqlError(f"DELETE at timestamp {t}: column {missing[0]!r} was added to the array "
                       "later (the schema in force at that time has no such field)")
    risk = _Risk(at_t, tested)
    deleted = at_risk = 0
    scanned = open_scan(at_t, tested, {})
    for part in map_ordered(scanned.read, scanned.tasks()):  # a few tiles' cells at a time
        true, _ = _truth(at_t.schema, condition, part.columns, part.length)
        deleted += int(true.sum())
        if risk:
            at_risk += int(risk.among(part.columns, true).sum())
    if not at_risk:
        return Judged(deleted, None)
    _refuse_unsound(array, at_t, at_risk, t, where)  # before every field is read
    names = list(at_t.schema.fields_by_name())
    every = scan(at_t, names, {}, risk.predicate())
    kept, _ = _truth(at_t.schema, condition, every.columns, every.length)
    rows = np.flatnonzero(risk.among(every.columns, kept))
    return Judged(deleted, {name: column.take(rows) for name, column in every.columns.items()})


def _truth(schema, condition: Node, columns: dict[str, Column], n: int):
    fields = schema.fields_by_name()
    values = {name: condition_input(columns[name], fields[name]) for name in columns}
    validity = {name: c.validity for name, c in columns.items() if c.validity is not None}
    datatypes = {name: int(fields[name].datatype) for name in columns}
    return sql_truth(condition, values, validity, datatypes, num_cells=n)


class _Risk:
    """Which of the cells SQL keeps the commit may remove: those on which a tested nullable
    attribute is NULL or a tested float NaN -- or every one when a fragment visible at the
    delete lacks a tested attribute (added after it was written): TileDB's test of a field a
    fragment lacks removes the fragment's every cell (``engine.sparse_scan.survivors``), where
    SQL reads its fill value."""

    def __init__(self, at_t: Array, tested: list[str]):
        self.attributes = [a for a in at_t.schema.attributes if a.name in tested and
                           (a.nullable or _is_float(a))]
        self.everything = any(not set(tested) <= f.schema.fields_by_name().keys()
                              for f in at_t.fragments)

    def __bool__(self) -> bool:
        return self.everything or bool(self.attributes)

    def among(self, columns: dict[str, Column], true: np.ndarray) -> np.ndarray:
        """The cells at risk among ``columns``, on which the condition is ``true``."""
        if self.everything:
            return ~true
        found = np.zeros(len(true), dtype=bool)
        for attr in self.attributes:
            column = columns[attr.name]
            if column.validity is not None:
                found |= column.validity == 0
            if _is_float(attr):
                found |= np.isnan(column.values.view(type_info(attr.datatype).numpy))
        return ~true & found

    def predicate(self) -> exp.Expression | None:
        """``a IS NULL OR isnan(f) ...``: the scan's zone maps drop the tiles that cannot
        hold a cell at risk where they can tell."""
        if self.everything:
            return None
        tests = []
        for attr in self.attributes:
            column = exp.column(attr.name, quoted=True)
            if attr.nullable:
                tests.append(exp.Is(this=column, expression=exp.Null()))
            if _is_float(attr):
                tests.append(exp.Anonymous(this="isnan", expressions=[column.copy()]))
        return exp.or_(*tests)


def _is_float(attr) -> bool:
    return type_info(attr.datatype).kind == "float" and attr.cell_val_num == 1


def _fields_of(node: Node) -> list[str]:
    if isinstance(node, ExprNode):
        return list(dict.fromkeys(f for child in node.children for f in _fields_of(child)))
    return [node.field]


def write_back(array: Array, cells: dict[str, Column], t: int) -> None:
    """Write ``cells`` (every field of the schema at ``t``, as ``judge`` found them: it
    refuses what cannot be written back) as one fragment at ``t + 1``, in the current schema:
    an attribute added after ``t`` holds its fill value, as those cells read before the
    delete."""
    from .writer import write_cells

    n = len(next(iter(cells.values())))
    added = {a.name: fill_column(a, n) for a in array.schema.attributes if a.name not in cells}
    write_cells(array, {**cells, **added}, t + 1)


def _refuse_unsound(array: Array, at_t: Array, n: int, t: int, where: str) -> None:
    """Refuse a delete whose ``n`` cells at risk cannot be written back soundly (the module
    docstring), or past a field dropped since ``t``: the copies, written in the current
    schema, could not keep its values for reads between ``t`` and the drop."""
    why = None
    dropped = sorted(at_t.schema.fields_by_name().keys() - array.schema.fields_by_name().keys())
    if dropped:
        why = (f"field {dropped[0]!r} of the schema at timestamp {t} was dropped since, so "
               "the copies could not keep its values")
    elif array.schema.allows_duplicates:
        why = ("the array allows duplicates, so they cannot be written back as newer versions "
               "of themselves")
    elif t >= UINT64_MAX:  # the last millisecond: no t + 1 to write the copies at
        why = f"the delete timestamp {t} leaves no later millisecond to write them back at"
    else:
        late = [e.name for e in array.directory.committed
                if e.timestamp_range[1] > t and e.timestamp_range[0] <= t + 1]
        if late:
            why = (f"fragment {late[0]} was written at or spans the milliseconds {t} and "
                   f"{t + 1}, where they would be written back")
    if why:
        raise UnsupportedSql(
            f"DELETE ... WHERE {where}: the condition is NULL (a compared attribute is NULL) or "
            f"compares a NaN on {n:,} cell(s) SQL keeps but a TileDB delete commit removes; "
            f"{why}, so the delete is refused")
