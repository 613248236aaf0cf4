"""A result given part by part: the plans that are one array scan with row-by-row steps over it.

``SELECT * FROM a``, ``SELECT x, y * 2 FROM a WHERE ...``, with or without a LIMIT: nothing
above the scan needs all its rows at once, so the result need not be held whole either.  Each
chunk of the scan (``pipeline.scan_frames``: a few tiles, filtered and projected on the thread
pool) goes through the steps above it and out as one Arrow table, the query's OFFSET and
LIMIT counted across the parts.  A ``Result`` over such parts (``tdbsql.result``) streams them
to ``fetch_record_batch``, the Arrow stream protocol and the command line's file formats, so
exporting an array far bigger than memory holds a few chunks at a time.

A step qualifies when it reads one input row by row: a scan of a step or a Join step without
joins (how sqlglot plans a projection or filter), with no aggregate, window, unnest or
subquery in it and no LIMIT of its own (only the last step's LIMIT is counted across parts).
"""

from __future__ import annotations

import math
from typing import Iterator

import pyarrow as pa
from sqlglot import exp, planner

from ..catalog import ArraySource
from ..planner.conjuncts import has_subquery
from ..planner.limit_percent import PercentLimit

_ROW_CHANGING = (exp.AggFunc, exp.Window, exp.Explode, exp.Unnest)


def scan_chain(runner, plan: planner.Plan) -> list | None:
    """The plan's steps bottom-up, from an array's scan to the root, when the result can be
    given part by part; else None."""
    chain = runner.query.derived("row chain", lambda: row_chain(plan.root), plan.root)
    if chain is None or isinstance(plan.root.limit, PercentLimit):
        return None
    source, _window = runner.catalog.resolve(chain[0].source, runner.sql)
    return chain if isinstance(source, ArraySource) else None


def row_chain(top) -> list | None:
    """``top`` and the steps below it, bottom-up from a table's scan, when each reads the one
    below row by row and is its only reader, and none below ``top`` has a LIMIT or OFFSET;
    else None."""
    chain = chain_to_table(top, exclusive=True)
    if chain is None or not all(row_by_row(step) for step in chain) or \
            any(s.limit != math.inf or s.offset for s in chain[:-1]):
        return None
    return chain


def chain_to_table(top, exclusive: bool) -> list | None:
    """``top`` and the steps below it, bottom-up from a table's scan, when each is a scan of
    a step or a Join step without joins (how sqlglot plans a projection or filter) reading
    one step -- that step's only reader, when ``exclusive`` -- else None.  What the steps
    compute is the caller's to check."""
    chain = [top]
    while chain[-1].dependencies:
        step = chain[-1]
        if len(step.dependencies) != 1 or not _one_input(step):
            return None
        below = next(iter(step.dependencies))
        if exclusive and len(below.dependents) != 1:
            return None
        chain.append(below)
    scan = chain[-1]
    if not isinstance(scan, planner.Scan) or not isinstance(scan.source, exp.Table):
        return None
    return list(reversed(chain))


def _one_input(step) -> bool:
    return isinstance(step, planner.Scan) or isinstance(step, planner.Join) and not step.joins


def row_by_row(step) -> bool:
    """Does ``step`` map each row of its one input to one row or none: a scan of a step, or
    a Join step without joins, with no aggregate, window, unnest or subquery?"""
    return _one_input(step) and row_wise(step.condition, *step.projections)


def row_wise(*nodes) -> bool:
    """Do the expressions (None: absent) map a row to a value, with no aggregate, window,
    unnest or subquery?"""
    nodes = [n for n in nodes if n is not None]
    return not has_subquery(*nodes) and not any(n.find(*_ROW_CHANGING) for n in nodes)


def through_chain(runner, chain: list, frame, lengths: list | None = None):
    """A frame of the chain's scan through the steps above it (``lengths``, if given, gets
    the rows out of each step, the scan's first)."""
    if lengths is not None:
        lengths.append(frame.length)
    for step, below in zip(chain[1:], chain):
        frame = runner.step_frame(step, {below: frame})
        if lengths is not None:
            lengths.append(frame.length)
    return frame


def result_parts(runner, chain: list, parts: Iterator, names) -> Iterator[pa.Table]:
    """The result tables of the scan's ``parts`` (its frames) through the steps above it,
    the last step's OFFSET and LIMIT applied across them."""
    from .runner import output_table  # the runner imports this module

    root = chain[-1]
    skip = root.offset
    left = math.inf if root.limit == math.inf else int(root.limit)
    try:
        for frame in parts:
            table = output_table(through_chain(runner, chain, frame), root, names)
            if skip:
                dropped = min(skip, table.num_rows)
                table, skip = table.slice(dropped), skip - dropped
            if table.num_rows > left:
                table = table.slice(0, left)
            left -= table.num_rows
            yield table
            if left <= 0:
                return
    finally:
        parts.close()
