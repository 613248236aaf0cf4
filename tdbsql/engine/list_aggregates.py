"""DuckDB's aggregates over each list's elements: ``list_aggregate(l, 'median')`` and the
shortcuts ``list_median(l)``, ``list_mode``, ``list_stddev_pop`` ... registered into
``functions.REGISTRY``.

Each list is one group of the grouped-aggregate machinery (``aggregate_step.group_value``),
so a list aggregate answers what the SQL aggregate answers over the same values: an empty
list is a group without rows (NULL; 0 for ``entropy`` and ``approx_count_distinct``), a NULL
list is NULL.  ``functions_lists.aggregated`` (sum, min, max, avg, count, product,
string_agg) hands every other name here.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .functions import register
from .grouping import Groups, first_rows
from .list_values import as_lists, is_list, list_parts, scalar_if_constant
from .value_types import bare_null, plain

# the name list_aggregate takes -> the engine's aggregate (``aggregate_step.group_value``)
ENGINE_NAMES = {
    "median": "median", "mode": "mode", "entropy": "entropy",
    "approx_count_distinct": "approx_count_distinct",
    "stddev": "stddev_samp", "stddev_samp": "stddev_samp", "stddev_pop": "stddev_pop",
    "variance": "var_samp", "var_samp": "var_samp", "var_pop": "var_pop",
    "skewness": "skewness", "kurtosis": "kurtosis", "kurtosis_pop": "kurtosis_pop",
    "bool_and": "bool_and", "bool_or": "bool_or",
    "bit_and": "bit_and", "bit_or": "bit_or", "bit_xor": "bit_xor",
    "first": "first", "arbitrary": "first", "last": "last", "any_value": "any_value",
    "mad": "mad", "sem": "sem", "histogram": "histogram",
}
# list_<name> shortcuts (also array_<name>): the engine's names above
_SHORTCUTS = tuple(dict.fromkeys(ENGINE_NAMES.values()))
_NUMERIC = ("stddev_samp", "stddev_pop", "var_samp", "var_pop", "skewness", "kurtosis",
            "kurtosis_pop", "median", "mad", "sem")


def over_elements(ctx, lists, name: str):
    """``name`` (a key of ``ENGINE_NAMES``) over each list's elements."""
    from .aggregate_step import group_value  # it reaches the evaluator, which reaches this

    func = ENGINE_NAMES[name]
    rows = 1 if isinstance(lists, pa.Scalar) else len(lists)
    if not is_list(lists) and not pa.types.is_null(plain(lists).type):
        raise ctx.error(f"expects a list, got {lists.type}", 0)
    parts = list_parts(as_lists(lists, rows))
    elements = parts.elements
    if func == "histogram" and pa.types.is_null(elements.type):  # [] or NULLs: no MAP type
        return scalar_if_constant(pa.nulls(rows), lists)
    _check_elements(ctx, func, elements)
    ids = np.ascontiguousarray(parts.parents, dtype=np.int64)
    answer = group_value(func, elements, Groups(ids, rows, first_rows(ids, rows)),
                         budget=ctx.budget)
    if not parts.valid.all():
        answer = pc.if_else(pa.array(parts.valid), answer, pa.scalar(None, answer.type))
    return scalar_if_constant(answer, lists)


def _check_elements(ctx, func: str, elements: pa.Array) -> None:
    """DuckDB's binder error for elements the aggregate takes no overload of."""
    element_kind = elements.type
    if pa.types.is_null(element_kind):
        return
    numeric = pa.types.is_integer(element_kind) or pa.types.is_floating(element_kind) \
        or pa.types.is_decimal(element_kind)
    wrong = (func in _NUMERIC and not numeric and not (func == "median" and _ordered(elements))
             or func in ("bool_and", "bool_or") and not pa.types.is_boolean(element_kind)
             or func.startswith("bit_") and not pa.types.is_integer(element_kind))
    if wrong:
        raise ctx.error(f"No matching aggregate function: {func} of a list of "
                        f"{elements.type}", 0)


def _ordered(elements: pa.Array) -> bool:
    """Elements median takes beside numbers (it picks the middle one)."""
    return pa.types.is_temporal(elements.type) or pa.types.is_string(elements.type)


def _shortcut(name: str):
    def impl(ctx, lists):
        if bare_null(lists):
            return pa.scalar(None)
        return over_elements(ctx, lists, name)
    return impl


for _name in _SHORTCUTS:
    register(f"list_{_name}", 1, aliases=(f"array_{_name}",))(_shortcut(_name))
