"""The cells a TileDB delete commit removes although SQL keeps them, written back after it.

SQL deletes the cells on which the condition is TRUE.  A TileDB delete commit also removes
those on which it is NULL (a value node on a NULL cell is false, negated or not) and compares a
NaN as IEEE floats do (every op but ``!=`` false) where SQL orders NaN above every number.  So
``DELETE ... WHERE n > 4`` on a cell whose ``n`` is NULL (or ``WHERE f < 1`` on a NaN ``f``)
would lose a cell SQL keeps; so would ``DELETE ... WHERE x IS NOT NULL``, whose commit
removes every cell (``storage.delete_writer``: a NULL test as value nodes).  The converse never happens: TileDB's stored tree is the negated
condition, AND/OR of value nodes only, and a NULL or NaN makes each of its nodes false where SQL
might say true, never the other way, so the commit keeps no cell SQL deletes.

The cells at risk are those visible at the delete's timestamp ``t`` on which a compared
nullable attribute (NULL-tested too) is NULL or a compared float NaN (read with SQL) and the
condition is not TRUE in SQL's three-valued logic (worked out on the condition tree itself, so exactly as the
commit compares, NULL unknown and NaN above every number): a superset of the ones the commit
removes; the others are harmless to write again, below.
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

import time

import numpy as np
import pyarrow as pa
from sqlglot import exp

from ..datatypes import type_info
from ..errors import UnsupportedSql
from ..format.delete_condition import (
    CombinationOp, ConditionOp, Node, NullTest, ValueNode, evaluate,
)
from ..format.names import now_ms
from .array import Array
from .directory import UINT64_MAX



def cells_sql_keeps_at_risk(array: Array, condition: Node, t: int) -> pa.Table | None:
    """Every field of the cells visible at ``t`` on which ``condition`` (the user's, not
    negated) is not TRUE in SQL and a tested nullable attribute is NULL or a tested float NaN;
    None when no tested attribute can be either (nothing read)."""
    names = _fields_of(condition)
    attrs = [a for a in array.schema.attributes if a.name in names]
    risks = [f"{_quoted(a.name)} IS NULL" for a in attrs if a.nullable]
    risks += [f"isnan({_quoted(a.name)})" for a in attrs
              if type_info(a.datatype).kind == "float" and a.cell_val_num == 1]
    if not risks:
        return None
    from ..api import query

    cells = query(f"SELECT * FROM array WHERE {' OR '.join(risks)}", array.path,
                  key=array.key, timestamp=t)
    fields = {f.name: f for f in list(array.schema.dimensions) + list(array.schema.attributes)}
    true, _ = sql_truth(condition, cells, fields)
    return cells.filter(pa.array(~true))


def sql_truth(node: Node, cells: pa.Table, fields: dict) -> tuple[np.ndarray, np.ndarray]:
    """Where the condition is TRUE and where FALSE in SQL's three-valued logic (neither:
    NULL).  Leaves compare as the delete commit does -- its values already say what DuckDB
    means (``storage.integer_comparisons``, ``storage.temporal_comparisons``) -- except that a
    NULL is unknown and a NaN is above every number, as in SQL."""
    if isinstance(node, NullTest):
        column = cells.column(node.field)
        valid = np.asarray(column.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
        return (~valid, valid) if node.is_null else (valid, ~valid)
    if isinstance(node, ValueNode):
        field = fields[node.field]
        column = cells.column(node.field).combine_chunks()
        known = np.asarray(column.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
        values = _stored(column, field)
        result = evaluate(node, {node.field: values}, None, {node.field: int(field.datatype)},
                          num_cells=len(column))
        if isinstance(values, np.ndarray) and values.dtype.kind == "f":
            nan = np.isnan(values)
            result = np.where(nan, node.op in _NAN_TRUE, result)
        return known & result, known & ~result
    parts = [sql_truth(child, cells, fields) for child in node.children]
    if node.op == CombinationOp.AND:
        return (np.logical_and.reduce([p[0] for p in parts]),
                np.logical_or.reduce([p[1] for p in parts]))
    return (np.logical_or.reduce([p[0] for p in parts]),
            np.logical_and.reduce([p[1] for p in parts]))


# SQL (DuckDB) orders NaN above every number: the ops that hold for it against a number
_NAN_TRUE = (ConditionOp.GT, ConditionOp.GE, ConditionOp.NE, ConditionOp.NOT_IN)


def _stored(column: pa.Array, field):
    """A read column as the delete condition compares it: strings as they are, enumerated
    attributes as their indices, anything else as the stored numbers (NULLs as zeros)."""
    if pa.types.is_dictionary(column.type):
        column = column.indices
    if type_info(field.datatype).kind in ("string", "binary"):
        return column
    from .write_buffers import field_buffer

    return field_buffer(column, field.name, field.datatype, field.cell_val_num, True).values


def _fields_of(node: Node) -> set[str]:
    if isinstance(node, (ValueNode, NullTest)):
        return {node.field}
    return set().union(*(_fields_of(c) for c in node.children))


def write_back(array: Array, cells: pa.Table, t: int, where: str) -> None:
    """Write ``cells`` as one fragment at ``t + 1`` (refused as the module docstring says)."""
    from .writer import write

    _refuse_unsound(array, cells.num_rows, t, where)
    write(array.path, cells, timestamp=t + 1, key=array.key)


def wait_past(t: int) -> None:
    """Return once the clock reads after ``t`` (at most about a millisecond from ``t``)."""
    while now_ms() <= t:
        time.sleep(0.0002)


def _refuse_unsound(array: Array, n: int, t: int, where: str) -> None:
    why = None
    if array.schema.allows_duplicates:
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


def _quoted(name: str) -> str:
    return exp.column(name, quoted=True).sql(dialect="duckdb")
