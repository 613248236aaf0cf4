"""The tail every step shares: its condition (WHERE / HAVING), then its projections
(``expr AS name``) into the step's output table."""

from __future__ import annotations

import pyarrow as pa
from sqlglot import exp

from .frame import Frame
from .unnest import expand, unnest_calls


def filter_project(runner, step, frame: Frame, *, filtered: bool = False) -> Frame:
    """``frame`` filtered by ``step.condition`` (unless ``filtered``: the caller applied it)
    and projected to the step's output table; without projections the frame stays as is."""
    if step.condition is not None and not filtered:
        frame = frame.filter(runner.mask(frame, step.condition))
    if step.projections:
        return Frame.single(step.name, project(runner, frame, step.projections))
    return frame


def project(runner, frame: Frame, projections, flat: pa.Table | None = None) -> pa.Table:
    return project_rows(runner, frame, projections, flat)[0]


def project_rows(runner, frame: Frame, projections, flat: pa.Table | None = None):
    """(the projected table, the input row of each output row -- None when they are the
    input's rows one for one; ``unnest(l)`` repeats rows, ``engine.unnest``)."""
    flat = frame.flat() if flat is None else flat
    names = [output_name(node) for node in projections]
    calls = runner.query.derived("unnest calls", lambda: unnest_calls(projections), *projections)
    parents = None
    if calls:
        frame, flat, projections, parents = expand(runner, frame, flat, projections, calls)
    arrays = [runner.column(frame, node.unalias() if isinstance(node, exp.Alias) else node, flat)
              for node in projections]
    return pa.Table.from_arrays(arrays, names=names), parents


def output_name(node: exp.Expression) -> str:
    return node.alias_or_name if isinstance(node, (exp.Alias, exp.Column)) else node.sql()
