"""The output of a Join step run inside the Aggregate that consumes it.

An aggregate fed its join's rows a block or a batch at a time (``engine.join_aggregate``,
``engine.streamed_join``) makes the join step's output for those rows only: the columns the
aggregate reads, the join step's residual condition, its projections.
"""

from __future__ import annotations

from sqlglot import exp

from .frame import Frame, rows_only
from .joined_rows import JoinedRows
from .project import filter_project


def join_output(runner, join, joined: JoinedRows, residual, read: list | None) -> Frame:
    """The Join step's output for ``joined`` rows: their columns ``read`` reads (every alias
    stays, the aggregate's output is seen by them all), its residual condition, its
    projections."""
    frame = joined.frame(read)
    unread = joined.tables - set(frame.tables)
    if unread:
        frame = Frame({**frame.tables, **{alias: rows_only(frame.length) for alias in unread}},
                      frame.length)
    if residual is not None:
        frame = frame.filter(runner.mask(frame, residual))
    return filter_project(runner, join, frame, filtered=True)


def columns_read_by(step, join, residual) -> list[exp.Expression] | None:
    """What reads the joined rows: the join's residual condition and projections, or --
    without projections -- the aggregate's operands, keys and aggregations.  None (every
    column) if one of them reads a column without its table other than an operand's name."""
    read = [] if residual is None else [residual]
    if join.projections:
        read += list(join.projections)
    else:
        read += [*step.operands, *step.group.values(), *step.aggregations]
    operands = {operand.alias_or_name for operand in step.operands}
    if any(not column.table and column.name not in operands
           for node in read for column in node.find_all(exp.Column)):
        return None
    return read
