"""``unnest(l)`` in a SELECT list: one output row per list element, the other columns
repeated, as DuckDB does.

In: the rows a step projects (a ``Frame`` and its flat table) and its projections.  Out: the
rows repeated per element, with each ``unnest(l)`` replaced by a column of the elements.  A
NULL or empty list gives no row; several unnests in one SELECT run side by side, as long as
the longest list of the row, the shorter ones padded with NULL (DuckDB's zip).  All rows at
once: the row of each output comes from ``np.repeat``, each element from one ``take``.
Only the columns the projections read are repeated (``repeat_rows``: not the list itself,
nor what only the unnest's argument reads), after their size is checked against the
query's memory budget (``MemoryLimitError``) as well as the row cap.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from sqlglot import exp

from ..errors import SqlError, UnsupportedSql
from .column_refs import check_repeats, columns_read
from .frame import Frame, broadcast, take_rows
from .functions import node_span
from .list_values import as_lists, is_list, list_parts, ordinals, repeated_rows

_SOURCE = "__unnest"  # the frame alias holding the elements (columns e0, e1, ...)


def unnest_calls(projections) -> list[exp.Explode]:
    """The ``unnest(...)`` calls of ``projections``, outside subqueries."""
    calls = []
    for projection in projections:
        for node in projection.find_all(exp.Explode):
            if node.find_ancestor(exp.Query) is projection.find_ancestor(exp.Query):
                calls.append(node)
    return calls


def expand(runner, frame: Frame, flat: pa.Table, projections, calls):
    """(frame, flat, projections, parents): the rows repeated per element, the projections
    reading the element columns, and the input row of each output row."""
    parts = []
    for call in calls:
        if call.expressions:
            raise UnsupportedSql(f"unnest with options: {call.sql(dialect='duckdb')!r}")
        value = broadcast(runner.evaluate(frame, call.this, flat), frame.length)
        if pa.types.is_struct(value.type):
            raise UnsupportedSql(f"unnest() of a STRUCT (its fields as columns): "
                                 f"{call.sql(dialect='duckdb')!r}")
        if not is_list(value) and not pa.types.is_null(value.type):
            raise SqlError(f"unnest() needs a list, got {value.type}", runner.sql,
                           node_span(call))
        parts.append(list_parts(as_lists(value, frame.length)))
    counts = np.max(np.stack([p.lengths for p in parts]), axis=0) if parts else \
        np.zeros(frame.length, dtype=np.int64)
    total = int(counts.sum())
    runner.check_rows(total, "unnest")
    names = {id(call): f"e{index}" for index, call in enumerate(calls)}
    rewritten = [_replaced(projection, names) for projection in projections]
    element_bytes = sum(p.elements.nbytes / max(len(p.elements), 1) for p in parts)
    parents, ordinal = repeated_rows(counts), ordinals(counts)
    repeated, _ = repeat_rows(runner, frame, flat, parents, rewritten, "unnest",
                              known={f"{_SOURCE}.{name}" for name in names.values()},
                              more_per_row=element_bytes)
    columns = {}
    for index, part in enumerate(parts):
        present = ordinal < part.lengths[parents]
        position = np.where(present, part.starts[parents] + ordinal, 0)
        columns[f"e{index}"] = part.elements.take(pa.array(position, mask=~present)) \
            if len(part.elements) else pa.nulls(total, part.elements.type)
    expanded = Frame({**repeated.tables, _SOURCE: pa.table(columns)}, total)
    return expanded, expanded.flat(), rewritten, parents


def repeat_rows(runner, frame: Frame, flat: pa.Table, parents: np.ndarray, nodes, what: str,
                known=frozenset(), more_per_row: float = 0.0) -> tuple[Frame, pa.Table]:
    """(frame, flat) of the rows ``parents`` with only the columns the expressions ``nodes``
    read (``known``: references resolved elsewhere; ``nodes`` None, or a subquery among them:
    every column), after checking the copies (and ``more_per_row`` bytes a row the caller
    adds) against the memory budget."""
    reads = None if nodes is None else columns_read(flat, nodes, known)
    kept = flat if reads is None else flat.select(reads)
    check_repeats(runner.budget, kept, len(parents), what, more_per_row)
    if reads is None:
        taken = frame.take(parents)
        return taken, taken.flat()
    repeated = Frame({None: take_rows(kept, parents)}, len(parents))
    return repeated, repeated.flat()


def _replaced(projection: exp.Expression, names: dict) -> exp.Expression:
    """A copy of ``projection`` reading the element columns where it called unnest (the
    plan's nodes are never changed: steps run on several threads)."""
    calls = [node for node in projection.find_all(exp.Explode) if id(node) in names]
    if not calls:
        return projection
    if projection in calls:
        return exp.column(names[id(projection)], table=_SOURCE)
    copy = projection.copy()
    originals = list(projection.walk())
    copies = list(copy.walk())
    mapping = {id(c): names[id(o)] for o, c in zip(originals, copies) if id(o) in names}
    return copy.transform(lambda node: exp.column(mapping[id(node)], table=_SOURCE)
                          if id(node) in mapping else node, copy=False)
