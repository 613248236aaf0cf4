"""Lists compared as DuckDB compares them: ``=`` / ``<>`` element by element with NULL
elements equal to each other (``[1, NULL] = [1, NULL]`` is TRUE), ``<`` / ``>`` ... by the
first differing element (a NULL element above every value), a list that is a prefix of the
other being the smaller.  A NULL list makes the comparison NULL.

In: two list values (arrays or scalars) of element types with a common type, the row count,
and ``compare`` (the evaluator's element comparison, with its coercions).  Out: a boolean
array (a scalar when both inputs are).  All rows at once: the elements of each row are lined
up by position and the first difference found with one ``np.minimum.at``.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..errors import UnsupportedSql
from .list_values import as_lists, list_parts, ordinals, repeated_rows, scalar_if_constant
from .value_types import null_rows

_FLIPPED = {"less": "greater", "greater": "less", "less_equal": "greater_equal",
            "greater_equal": "less_equal"}


def compare_lists(op: str, left, right, rows: int, compare):
    """``left <op> right`` for lists; ``compare(op, a, b)`` compares element arrays."""
    rows = max((len(v) for v in (left, right) if not isinstance(v, pa.Scalar)), default=rows)
    left_parts = list_parts(as_lists(left, rows))
    right_parts = list_parts(as_lists(right, rows))
    shared = np.minimum(left_parts.lengths, right_parts.lengths)
    row_of, ordinal = repeated_rows(shared), ordinals(shared)
    a = left_parts.elements.take(pa.array(left_parts.starts[row_of] + ordinal))
    b = right_parts.elements.take(pa.array(right_parts.starts[row_of] + ordinal))
    a_null, b_null = null_rows(a), null_rows(b)
    equal = true_mask(compare("equal", a, b)) & ~a_null & ~b_null | (a_null & b_null)
    first = np.full(rows, np.iinfo(np.int64).max, dtype=np.int64)
    differs = np.flatnonzero(~equal)
    np.minimum.at(first, row_of[differs], differs)
    found = first < np.iinfo(np.int64).max
    if op in ("equal", "not_equal"):
        same = ~found & (left_parts.lengths == right_parts.lengths)
        result = same if op == "equal" else ~same
    else:
        at = np.where(found, first, 0)
        below = np.zeros(rows, dtype=bool)  # left's differing element below right's
        if found.any():
            pick = pa.array(at[found])
            a_at, b_at = a.take(pick), b.take(pick)
            # a NULL element is above every value
            below[found] = (true_mask(compare("less", a_at, b_at)) & ~null_rows(a_at)) | \
                (~null_rows(a_at) & null_rows(b_at))
        shorter = left_parts.lengths < right_parts.lengths
        same = ~found & (left_parts.lengths == right_parts.lengths)
        less = np.where(found, below, shorter)
        result = {"less": less, "less_equal": less | same,
                  "greater": ~less & ~same, "greater_equal": ~less}[op]
    valid = left_parts.valid & right_parts.valid
    return scalar_if_constant(pa.array(result, pa.bool_(), mask=~valid), left, right)



def true_mask(values) -> np.ndarray:
    if isinstance(values, pa.Scalar):
        return np.full(1, bool(values.as_py()))
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    return np.asarray(values.fill_null(False).to_numpy(zero_copy_only=False), dtype=bool)


MAX_SORTED_LENGTH = 256  # a sort key of longer lists is refused (one key per position)


def list_sort_columns(name: str, values, desc: bool, nulls_first: bool, element_columns):
    """The columns and sort keys that order lists as ``compare_lists`` does: per position an
    is-present flag (a missing element sorts first: the prefix is smaller) and the element
    (a NULL element last), after the list's own NULL flag.  ``element_columns`` is
    ``sort_step.sort_columns`` for the elements."""
    parts = list_parts(as_lists(values, len(values)))
    longest = int(parts.lengths.max()) if len(parts.lengths) else 0
    if longest > MAX_SORTED_LENGTH:
        raise UnsupportedSql(f"ORDER BY a list longer than {MAX_SORTED_LENGTH} elements")
    direction = "descending" if desc else "ascending"
    columns = {f"{name}_null": pa.array(~parts.valid)}
    keys = [(f"{name}_null", "descending" if nulls_first else "ascending", "at_end")]
    for position in range(longest):
        present = parts.lengths > position
        columns[f"{name}_{position}_has"] = pa.array(present)
        keys.append((f"{name}_{position}_has", direction, "at_end"))
        take = np.where(present, parts.starts + position, 0)
        element = parts.elements.take(pa.array(take, mask=~present))
        more, more_keys = element_columns(f"{name}_{position}", element, desc, desc)
        columns.update(more)
        keys += more_keys
    return columns, keys
