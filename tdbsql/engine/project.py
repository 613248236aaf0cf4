"""Evaluate a step's projections (``expr AS name``) into an output table."""

from __future__ import annotations

import pyarrow as pa
from sqlglot import exp

from .frame import Frame, broadcast


def project(runner, frame: Frame, projections, flat: pa.Table | None = None) -> pa.Table:
    flat = frame.flat() if flat is None else flat
    names, arrays = [], []
    for node in projections:
        names.append(output_name(node))
        value = runner.evaluate(frame, node.unalias() if isinstance(node, exp.Alias) else node,
                                flat)
        arrays.append(broadcast(value, frame.length))
    return pa.Table.from_arrays(arrays, names=names)


def output_name(node: exp.Expression) -> str:
    return node.alias_or_name if isinstance(node, (exp.Alias, exp.Column)) else node.sql()
