"""Two string arguments for a Numba kernel that reads one pair of strings per row: GLOB, LIKE
with a pattern per row, ``strpos`` / ``starts_with`` / ``ends_with`` / ``contains`` with a
search string per row, the string distances.

In: the two arguments, each a column or a constant.  Each side reaches the kernel as its bytes,
int64 offsets and a step (``kernels.offsets.row_bounds``): 1 for a column, 0 for a constant,
whose one string every row reads -- a constant pattern is not copied once per row.  Out: the
kernel's numbers per row and where both sides are valid (the kernel skips the others); NULL
there in the answer (``with_nulls``), as DuckDB.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from .frame import broadcast
from .list_values import scalar_if_constant
from .value_types import string_buffers, valid_rows


def pair_rows(kernel, s, other, dtype, *options) -> tuple[np.ndarray, np.ndarray]:
    """(``out``, ``valid``) of ``kernel(s bytes, s offsets, s step, other bytes, other
    offsets, other step, valid, *options, out)`` over the column's rows (one when both are
    constants), ``out`` of ``dtype`` and 0 where ``valid`` is False."""
    rows = next((len(v) for v in (s, other) if not isinstance(v, pa.Scalar)), 1)
    valid = np.ones(rows, np.bool_)
    sides = []
    for value in (s, other):
        constant = isinstance(value, pa.Scalar)
        strings = broadcast(value, 1 if constant else rows).cast(pa.string())
        valid &= valid_rows(strings)  # a constant's one row holds for all
        sides.extend((*string_buffers(strings), 0 if constant else 1))
    out = np.zeros(rows, dtype)
    kernel(*sides, valid, *options, out)
    return out, valid


def with_nulls(values: np.ndarray, valid: np.ndarray, *inputs):
    """``values`` as an Arrow array, NULL where ``valid`` is False; a scalar when every one
    of ``inputs`` (the two arguments, if given) is a constant: ``pair_rows`` read one row."""
    answer = pa.array(values, mask=None if valid.all() else ~valid)
    return scalar_if_constant(answer, *inputs) if inputs else answer
