"""LIST functions that take a lambda, as DuckDB has them: ``list_transform``
(``array_transform``, ``list_apply``, ``array_apply``), ``list_filter`` (``array_filter``),
``list_reduce`` (``array_reduce``), and sqlglot's ``ARRAY_ANY`` (how it decorrelates EXISTS).

A transform or filter lambda takes the element (``lambda x: ...``) and, given a second
variable, its 1-based position; list_reduce's takes the value so far, the next element and,
given a third, the element's position.  A NULL list gives NULL.

The body is evaluated once over all elements of all rows (list_reduce: once per position,
over the rows whose lists reach it) in a scope holding the variables and, repeated for each
element, only the columns of its row that the body reads (``column_refs.columns_read``);
those copies are counted against the query's memory budget before they are made.  sqlglot
reads ``list_transform`` / ``list_filter`` as typed nodes and the other names as plain calls:
``LAMBDA_CALLS`` maps those names.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from ..errors import UnsupportedSql
from . import list_values
from .column_refs import check_repeats, columns_read
from .frame import broadcast
from .list_ops import list_array
from .value_types import bare_null, cast_value, common_type, kind

_NUMBERS = ("int", "uint", "float", "decimal")


@dataclass(frozen=True)
class Bound:
    """A lambda ready to evaluate: its body reading each variable as a column of that name,
    and the columns of the evaluator's rows the body reads (None: all of them)."""

    name: str  # the function, for messages
    body: exp.Expression
    variables: tuple[str, ...]
    reads: tuple[str, ...] | None


def bind(evaluator, function, name: str, arities: tuple[int, ...], node) -> Bound:
    """``function`` (the call ``node``'s lambda argument) bound for evaluation."""
    if not isinstance(function, exp.Lambda):
        raise evaluator.error(f"{name}() needs a lambda, got {function.sql('duckdb')!r}", node)
    if len(function.expressions) not in arities:
        wanted = " or ".join(map(str, arities))
        raise evaluator.error(f"{name}() needs a lambda of {wanted} arguments, got "
                              f"{len(function.expressions)}", function)
    variables = tuple(v.name for v in function.expressions)
    reads = columns_read(evaluator.table, [function.this])
    return Bound(name, _bound_body(function.this, set(variables)), variables,
                 None if reads is None else tuple(reads))


def _bound_body(body: exp.Expression, variables: set[str]) -> exp.Expression:
    """A copy of ``body`` reading the lambda's variables as quoted columns (an inner lambda
    binding the same name keeps its own: ``lambda x: list_transform(x, lambda x: x)``)."""
    if isinstance(body, exp.Identifier):
        return exp.column(body.name, quoted=True) if body.name in variables else body.copy()
    body = body.copy()
    for ident in list(body.find_all(exp.Identifier)):
        if ident.name in variables and not isinstance(ident.parent, (exp.Column, exp.Lambda)) \
                and not _rebound(ident, body):
            ident.replace(exp.column(ident.name, quoted=True))
    return body


def _rebound(ident: exp.Identifier, root: exp.Expression) -> bool:
    """Does a lambda inside ``root`` (a detached copy) bind ``ident``'s name again?"""
    node = ident.parent
    while node is not None:
        if isinstance(node, exp.Lambda) and ident.name in {v.name for v in node.expressions}:
            return True
        node = node.parent
    return False


def apply(evaluator, bound: Bound, rows: np.ndarray, values: list[pa.Array]):
    """The body over ``len(rows)`` items: item i sees the variables bound to ``values[..][i]``
    and the columns of row ``rows[i]`` (a scalar when the body is a constant)."""
    table = evaluator.table
    names = [n for n in (table.column_names if bound.reads is None else bound.reads)
             if n not in bound.variables]  # a variable hides a column of its name
    repeated = []
    if names:
        kept = table.select(names)
        check_repeats(evaluator.budget, kept, len(rows), f"the lambda of {bound.name}()")
        repeated = kept.take(pa.array(rows)).columns
    scope = pa.Table.from_arrays([*repeated, *values[:len(bound.variables)]],
                                 names=[*names, *bound.variables])
    return type(evaluator)(scope, evaluator.sql, evaluator.budget)(bound.body)


def _per_element(evaluator, bound: Bound, parts: list_values.ListParts) -> pa.Array:
    """The body over every element of ``parts`` (and its 1-based position, a BIGINT, when
    the lambda takes one)."""
    values = [parts.elements]
    if len(bound.variables) > 1:
        values.append(pa.array(list_values.ordinals(parts.lengths) + 1))
    result = apply(evaluator, bound, parts.parents, values)
    return broadcast(result, len(parts.elements))


# --- list_transform / list_filter / ARRAY_ANY ----------------------------------------------


def transform(evaluator, node: exp.Transform):
    return _transformed(evaluator, node.this, node.expression, node, "list_transform")


def _transformed(evaluator, target, function, node, name: str):
    """``f`` over every element, the lists keeping their shape."""
    value = evaluator.value(target)
    if bare_null(value):
        return pa.scalar(None)
    lists = list_array(evaluator, target, value)
    bound = bind(evaluator, function, name, (1, 2), node)
    parts = list_values.list_parts(lists)
    return list_values.rebuild(parts.valid, parts.lengths, _per_element(evaluator, bound, parts))


def array_filter(evaluator, node: exp.ArrayFilter):
    value = evaluator.value(node.this)
    if bare_null(value):
        return pa.scalar(None)
    return filtered(evaluator, list_array(evaluator, node.this, value), node.expression, node)


def filtered(evaluator, lists: pa.ListArray, function: exp.Expression, node):
    """``lists`` keeping the elements the lambda holds for (``node``, the call, for messages;
    the plan's nodes are never rewrapped)."""
    bound = bind(evaluator, function, "list_filter", (1, 2), node)
    parts = list_values.list_parts(lists)
    keep = _per_element(evaluator, bound, parts)
    if pa.types.is_null(keep.type):  # x -> NULL keeps nothing
        keep = keep.cast(pa.bool_())
    keep = np.asarray(pc.fill_null(keep, False).to_numpy(zero_copy_only=False), dtype=bool)
    counts = np.bincount(parts.parents, weights=keep, minlength=len(lists)).astype(np.int64)
    return list_values.rebuild(parts.valid, counts, parts.elements.filter(pa.array(keep)))


def array_any(evaluator, node: exp.ArrayAny):
    """sqlglot's ARRAY_ANY(list, f): TRUE for an empty list or when f holds for an element
    (what its DuckDB spelling ``len(l) = 0 OR len(list_filter(l, f)) <> 0`` computes)."""
    lists = list_array(evaluator, node.this)
    matched = pc.list_value_length(filtered(evaluator, lists, node.expression, node))
    empty = pc.equal(pc.list_value_length(lists), 0)
    return pc.or_kleene(empty, pc.not_equal(matched, 0))


# --- list_reduce -----------------------------------------------------------------------------


def _reduce_call(evaluator, node: exp.Anonymous):
    """``list_reduce(l, lambda acc, x[, i]: ...[, initial])``: the elements folded left to
    right (from ``initial`` when given, else from the first element); NULL for a NULL list,
    an error for an empty one without ``initial``."""
    name = node.name.lower()
    target, function, *initial = _arguments(evaluator, node, name, 2, 3)
    value = evaluator.value(target)
    if bare_null(value):
        return pa.scalar(None)
    lists = list_array(evaluator, target, value)
    bound = bind(evaluator, function, name, (2, 3), node)
    start = evaluator.value(initial[0]) if initial else None
    return _reduced(evaluator, bound, list_values.list_parts(lists), start, node)


MAX_REDUCE_POSITIONS = 10_000  # the lambda runs once per position (~0.25 ms each)


def _reduced(evaluator, bound: Bound, parts: list_values.ListParts, initial, node):
    """Position by position over the rows whose lists reach it: ``acc = f(acc, element)``;
    a row's value is its ``acc`` once its list is used up.  Lists longer than
    ``MAX_REDUCE_POSITIONS`` are refused rather than folded slowly."""
    rows = len(parts.lengths)
    active = np.flatnonzero(parts.valid)
    longest = int(parts.lengths[active].max()) if len(active) else 0
    if longest > MAX_REDUCE_POSITIONS:
        raise UnsupportedSql(f"{bound.name}() over a list of {longest:,} elements: tdbsql "
                             f"evaluates the lambda once per position, for lists of up to "
                             f"{MAX_REDUCE_POSITIONS:,} (list_sum / list_aggregate fold "
                             "longer lists)")
    if initial is None:
        if (parts.lengths[active] == 0).any():
            raise evaluator.error(f"{bound.name}(): cannot reduce an empty list without an "
                                  "initial value", node)
        acc, position = parts.elements.take(pa.array(parts.starts[active])), 1
    else:
        acc = broadcast(initial, rows).take(pa.array(active))
        acc = _accumulator(evaluator, bound, parts.elements.type, acc, node)
        position = 0
    done_rows, done_values = [], []
    while len(active):
        finished = parts.lengths[active] <= position
        if finished.any():
            done_rows.append(active[finished])
            done_values.append(acc.filter(pa.array(finished)))
            active, acc = active[~finished], acc.filter(pa.array(~finished))
            if not len(active):
                break
        values = [acc, parts.elements.take(pa.array(parts.starts[active] + position))]
        if len(bound.variables) == 3:  # the element's position
            values.append(pa.array(np.full(len(active), position + 1, dtype=np.int64)))
        result = broadcast(apply(evaluator, bound, active, values), len(active))
        acc = _accumulator(evaluator, bound, acc.type, result, node)
        position += 1
    return _in_row_order(rows, np.concatenate(done_rows or [np.zeros(0, np.int64)]),
                         done_values, parts.elements.type)


def _accumulator(evaluator, bound: Bound, current: pa.DataType, result: pa.Array, node):
    """``result`` as the next value of an accumulator of type ``current``: of their common
    type, as DuckDB types list_reduce (a BOOLEAN result counts as the number it is; text
    and a value that is not text have none)."""
    if result.type == current or pa.types.is_null(result.type):
        return cast_value(result, current)
    if kind(result.type) == "bool" and kind(current) in _NUMBERS:
        return result.cast(current)
    target = common_type([current, result.type], literal_strings=False)
    if target is None:
        raise evaluator.error(f"{bound.name}(): the lambda's result ({result.type}) and the "
                              f"list's elements ({current}) have no common type", node)
    return cast_value(result, target)


def _in_row_order(rows: int, done_rows: np.ndarray, done_values: list[pa.Array],
                  element_type: pa.DataType) -> pa.Array:
    """The values of the rows in ``done_rows`` (one after another in ``done_values``) at
    their rows, unified to one type; NULL for the rows not there (NULL lists)."""
    if not done_values:  # every list NULL
        return pa.nulls(rows, element_type)
    target = common_type([v.type for v in done_values])
    values = pa.concat_arrays([cast_value(v, target) for v in done_values])
    where = np.full(rows, -1, dtype=np.int64)
    where[done_rows] = np.arange(len(done_rows))
    return values.take(pa.array(where, mask=where < 0))


# --- the names sqlglot leaves as plain calls -------------------------------------------------


def _arguments(evaluator, node: exp.Anonymous, name: str, fewest: int, most: int) -> list:
    args = list(node.expressions)
    if not fewest <= len(args) <= most:
        wanted = str(fewest) if fewest == most else f"{fewest} to {most}"
        raise evaluator.error(f"{name}(): takes {wanted} argument(s), got {len(args)}", node)
    return args


def _transform_call(evaluator, node: exp.Anonymous):
    name = node.name.lower()
    target, function = _arguments(evaluator, node, name, 2, 2)
    return _transformed(evaluator, target, function, node, name)


LAMBDA_CALLS = {"array_transform": _transform_call, "list_apply": _transform_call,
                "array_apply": _transform_call, "list_reduce": _reduce_call,
                "array_reduce": _reduce_call}
