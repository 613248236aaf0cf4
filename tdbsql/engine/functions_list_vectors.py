"""Lists as vectors, registered into ``functions.REGISTRY``, as DuckDB: ``list_dot_product``
/ ``list_inner_product`` (sum of the products), ``list_negative_dot_product`` /
``list_negative_inner_product``, ``list_distance`` (Euclidean), ``list_cosine_similarity``
and ``list_cosine_distance`` (1 - the similarity; NULL for empty lists, NaN for a zero
vector).

A FLOAT when both lists hold FLOATs, else a DOUBLE; a NULL list gives NULL; a NULL element or
lists of different lengths are DuckDB's errors.  (The ``array_*`` forms take DuckDB's
fixed-size ARRAYs, which tdbsql does not build: not offered.)
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from .functions import register
from .functions_lists import lists_argument, row_count
from .list_values import list_parts, scalar_if_constant
from .value_types import kind, plain


def _vectors(ctx, left, right):
    """(rows, the two lists' elements as float64 numpy arrays over the rows where both are
    valid, those elements' rows, where both are valid, the result type)."""
    rows = row_count((left, right))
    parts = []
    for index, value in enumerate((left, right)):
        value = plain(value)
        part = list_parts(lists_argument(ctx, value, index, rows))
        element_kind = kind(part.elements.type)
        if element_kind not in ("int", "uint", "float", "decimal", "null"):
            raise ctx.error(f"expects a list of numbers, got {value.type}", index)
        parts.append(part)
    valid = parts[0].valid & parts[1].valid
    side = ("left", "right")
    for index, part in enumerate(parts):
        if part.elements.null_count and not part.elements.is_valid().to_numpy(
                zero_copy_only=False)[valid[part.parents]].all():
            raise ctx.error(f"{ctx.written_name}: {side[index]} argument can not contain "
                            "NULL values", index)
    unequal = valid & (parts[0].lengths != parts[1].lengths)
    if unequal.any():
        row = int(np.argmax(unequal))
        raise ctx.error(f"{ctx.written_name}: list dimensions must be equal, got left length "
                        f"'{parts[0].lengths[row]}' and right length '{parts[1].lengths[row]}'")
    numbers = []
    for part in parts:
        keep = valid[part.parents]
        elements = part.elements.cast(pa.float64(), safe=False) if len(part.elements) else \
            pa.array([], pa.float64())
        numbers.append(elements.fill_null(0).to_numpy(zero_copy_only=False)[keep])
    parents = parts[0].parents[valid[parts[0].parents]]
    single = all(pa.types.is_float32(p.elements.type) for p in parts)
    return rows, numbers, parents, valid, pa.float32() if single else pa.float64()


def _per_row(parents, values, rows: int) -> np.ndarray:
    return np.bincount(parents, weights=values, minlength=rows)


def _measure(compute):
    def impl(ctx, left, right):
        rows, (a, b), parents, valid, out_type = _vectors(ctx, left, right)
        with np.errstate(all="ignore"):
            answer, defined = compute(a, b, parents, rows)
        answer = pa.array(answer, pa.float64(), mask=~(valid & defined)).cast(out_type)
        return scalar_if_constant(answer, left, right)
    return impl


def _dot(a, b, parents, rows):
    return _per_row(parents, a * b, rows), np.ones(rows, bool)


def _negative_dot(a, b, parents, rows):
    return -_per_row(parents, a * b, rows), np.ones(rows, bool)


def _distance(a, b, parents, rows):
    return np.sqrt(_per_row(parents, (a - b) ** 2, rows)), np.ones(rows, bool)


def _cosine_similarity(a, b, parents, rows):
    dot = _per_row(parents, a * b, rows)
    norms = np.sqrt(_per_row(parents, a * a, rows) * _per_row(parents, b * b, rows))
    return dot / norms, np.bincount(parents, minlength=rows) > 0  # empty lists: NULL


def _cosine_distance(a, b, parents, rows):
    similarity, defined = _cosine_similarity(a, b, parents, rows)
    return 1.0 - similarity, defined


register("list_dot_product", 2, aliases=("list_inner_product",))(_measure(_dot))
register("list_negative_dot_product", 2,
         aliases=("list_negative_inner_product",))(_measure(_negative_dot))
register("list_distance", 2)(_measure(_distance))
register("list_cosine_similarity", 2)(_measure(_cosine_similarity))
register("list_cosine_distance", 2)(_measure(_cosine_distance))
