"""The Sort step: ORDER BY keys over the input rows and the step's projections, then
OFFSET/LIMIT.  Sort keys may name input columns or output aliases; NULL placement follows each
key's NULLS FIRST/LAST (DuckDB's default is NULLS LAST both ways, which sqlglot spells out)."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .frame import Frame
from .memory import frame_bytes, step_label
from .project import project


def run_sort(step, inputs: Frame, runner) -> Frame:
    flat = inputs.flat()
    projected = project(runner, inputs, step.projections, flat) if step.projections else None
    keyed = flat
    if projected is not None:
        for name, column in zip(projected.column_names, projected.columns):
            if name not in keyed.column_names:
                keyed = keyed.append_column(name, column)
    order = sort_indices(runner, inputs, keyed, step.key)
    stop = len(order) if step.limit is math.inf else step.offset + int(step.limit)
    order = order[step.offset:stop]
    source = projected.nbytes if projected is not None else frame_bytes(inputs)
    # the sorted copy and the sort's row order, next to the input
    runner.budget.check(int(source * len(order) / max(inputs.length, 1)) + order.nbytes,
                        step_label(step))
    if projected is not None:
        return Frame.single(step.name, projected.take(order))
    return inputs.take(order)


def sort_indices(runner, frame: Frame, flat: pa.Table, keys) -> np.ndarray:
    arrays, sort_keys = {}, []
    for i, ordered in enumerate(keys):
        value = runner.column(frame, ordered.this, flat)
        if pa.types.is_dictionary(value.type):
            value = value.dictionary_decode()
        arrays[f"k{i}"] = value
        desc = bool(ordered.args.get("desc"))
        nulls_first = bool(ordered.args.get("nulls_first"))
        sort_keys.append((f"k{i}", "descending" if desc else "ascending",
                          "at_start" if nulls_first else "at_end"))
    if not arrays:
        return np.arange(frame.length, dtype=np.int64)
    indices = pc.sort_indices(pa.table(arrays), sort_keys=sort_keys)
    return indices.to_numpy().astype(np.int64, copy=False)
