"""GROUP BY dimensions from tile metadata: inside a streamed aggregate, a tile over which every
group dimension is constant (its MBR is one value there) and whose metadata soundly answers
the query's count / sum / min / max (``planner.metadata_aggregates``) becomes one group row
without being read; the scan leaves it out and decodes the rest.

The rows are a ``Partial`` like a decoded batch's, typed the same way (each tile is its own
group), so ``partial_aggregate.combine`` folds them with the decoded batches.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from sqlglot import exp

from ..planner.conjuncts import unqualified
from ..planner.metadata_aggregates import tile_answers
from ..planner.ranges import scan_ranges
from ..planner.zonemap import field_kinds
from .aggregate_step import call_spec, star_operands
from .column import Column
from .fields import column_to_arrow, field_arrow_type
from .grouping import Groups, aggregate
from .partial_aggregate import Partial

_ANSWERABLE = ("count_star", "count", "sum", "min", "max")
_NUMERIC = ("int", "uint", "float", "datetime")


def metadata_groups(step, calls: dict, array, condition) -> tuple[Partial | None, dict]:
    """(the group rows answered from metadata, fragment position -> bool per tile: answered)
    or ``(None, {})`` when the query or the tiles do not allow it."""
    dims = {d.name for d in array.schema.dimensions}
    group_dims = {}
    for name, node in step.group.items():
        if not isinstance(node, exp.Column) or node.name not in dims:
            return None, {}
        group_dims[name] = node.name
    aggregates = metadata_calls(step, calls)
    kinds = field_kinds(array.schema)
    if aggregates is None or any(
            func in ("min", "max") and kinds[column].domain not in _NUMERIC
            for func, column in aggregates):  # string bounds stay with the decoded path
        return None, {}
    predicate = unqualified(condition)
    answers = tile_answers(array, scan_ranges(predicate, array.schema), predicate, aggregates,
                           tuple(dict.fromkeys(group_dims.values())))
    if not answers:
        return None, {}
    skip: dict[int, np.ndarray] = {}
    for answer in answers:
        count = array.fragments[answer.frag_idx].metadata.tile_count
        skip.setdefault(answer.frag_idx, np.zeros(count, dtype=bool))[answer.tiles] = True
    rows = sum(len(a.tiles) for a in answers)
    keys = {name: _typed(array, dim, np.concatenate([a.keys[dim] for a in answers]))
            for name, dim in group_dims.items()}
    each_tile = Groups(np.arange(rows, dtype=np.int64), rows, np.arange(rows, dtype=np.int64))
    states = {}
    for i, (text, (func, column)) in enumerate(zip(calls, aggregates)):
        values = np.concatenate([a.values[i] for a in answers])
        present = np.concatenate([a.non_null[i] for a in answers])
        if func in ("count_star", "count"):
            arrays = [pa.array(values, pa.int64())]
        elif func == "sum":  # through the aggregate itself: the types of a decoded batch's
            arrays = [aggregate("sum", pa.array(values, mask=present == 0), each_tile)]
        else:
            arrays = [_typed(array, column, values, present > 0)]
        states[text] = (func, None if column is None else field_arrow_type(array, column),
                        arrays)
    return Partial(keys, states, rows, grouped=False), skip


def metadata_calls(step, calls: dict) -> list[tuple[str, str | None]] | None:
    """``(func, column)`` per call of ``calls`` (``partial_aggregate.step_calls``), or None
    unless every one is count(*) or a count / sum / min / max of a plain column (not of an
    operand: an expression the planner computed)."""
    stars = star_operands(step)
    operands = {op.alias_or_name for op in step.operands}
    aggregates = []
    for call in calls.values():
        if isinstance(call, exp.Filter):
            return None  # FILTER (WHERE ...): the metadata counts every cell
        func, argument, distinct = call_spec(call, stars)
        if func == "count_star":
            aggregates.append((func, None))
        elif func in _ANSWERABLE and not distinct and isinstance(argument, exp.Column) \
                and argument.name not in operands:
            aggregates.append((func, argument.name))
        else:
            return None
    return aggregates


def _typed(array, name: str, raw: np.ndarray, valid: np.ndarray | None = None) -> pa.Array:
    """Raw storage values of field ``name`` as its Arrow column (NULL where not ``valid``)."""
    values = np.ascontiguousarray(raw, dtype=array.schema.fields_by_name()[name].info.numpy)
    validity = None if valid is None or valid.all() else valid.astype(np.uint8)
    return column_to_arrow(array, name, Column(values, None, validity))
