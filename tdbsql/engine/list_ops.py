"""List values: ``array_length`` / ``len`` and ``list_filter(list, x -> predicate)``.

sqlglot decorrelates ``EXISTS`` subqueries that compare with ``<>`` (TPC-H Q21) into
``ARRAY_AGG`` per key plus ``ARRAY_LENGTH(LIST_FILTER(agg, x -> outer <> x))``; these are the
list operations that plan needs.  A lambda body is evaluated once over all list elements, with
the row's own columns repeated for each of its elements.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from ..errors import UnsupportedSql
from .frame import broadcast


def array_size(evaluator, node: exp.ArraySize):
    values = _list_array(evaluator, node.this)
    return pc.cast(pc.list_value_length(values), pa.int64())


def array_filter(evaluator, node: exp.ArrayFilter):
    return _filtered(evaluator, node.this, node.expression, node)


def _filtered(evaluator, source: exp.Expression, function: exp.Expression, node):
    """The lists of ``source`` keeping the elements the one-argument lambda ``function``
    holds for (``node``, the call, for messages; the plan's nodes are never rewrapped)."""
    lists = _list_array(evaluator, source)
    if not isinstance(function, exp.Lambda) or len(function.expressions) != 1:
        raise UnsupportedSql(f"list_filter needs a one-argument lambda: {node.sql()!r}")
    variable = function.expressions[0].name
    parents = pc.list_parent_indices(lists)
    elements = pc.list_flatten(lists)
    table = evaluator.table
    scope = table.take(parents) if table.num_columns else table
    scope = scope.append_column(variable, elements)
    body = function.this.transform(
        lambda n: exp.column(variable, quoted=True) if isinstance(n, exp.Identifier)
        and n.name == variable and not isinstance(n.parent, exp.Column) else n)
    keep = type(evaluator)(scope, evaluator.sql)(body)
    if isinstance(keep, pa.Scalar):
        keep = pa.array(np.full(len(elements), bool(keep.as_py()), dtype=bool))
    if isinstance(keep, pa.ChunkedArray):
        keep = keep.combine_chunks()
    keep = pc.fill_null(keep, False).to_numpy(zero_copy_only=False)
    counts = np.bincount(np.asarray(parents, dtype=np.int64), weights=keep,
                         minlength=len(lists)).astype(np.int32)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    kept = elements.filter(pa.array(keep))
    return pa.ListArray.from_arrays(pa.array(offsets), kept, mask=lists.is_null())


def _list_array(evaluator, node) -> pa.Array:
    values = broadcast(evaluator.value(node), evaluator.table.num_rows)
    if pa.types.is_large_list(values.type):
        values = values.cast(pa.list_(values.type.value_type))
    if not pa.types.is_list(values.type):
        raise UnsupportedSql(f"{node.sql()!r} is not a list")
    return values


def array_any(evaluator, node: exp.ArrayAny):
    """sqlglot's ARRAY_ANY(list, f): TRUE for an empty list or when f holds for an element
    (what its DuckDB spelling ``len(l) = 0 OR len(list_filter(l, f)) <> 0`` computes)."""
    lists = _list_array(evaluator, node.this)
    matched = pc.list_value_length(_filtered(evaluator, node.this, node.expression, node))
    empty = pc.equal(pc.list_value_length(lists), 0)
    return pc.or_kleene(empty, pc.not_equal(matched, 0))
