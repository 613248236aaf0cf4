"""String functions whose search string differs from row to row (``strpos(s, col)``,
``starts_with(s, col)``, ...): each row's pair of strings searched in one Numba pass
(``kernels.text_search``).  NULL where either string is NULL, as DuckDB."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..kernels import text_search as kernels
from .frame import broadcast
from .value_types import string_buffers, valid_rows


def string_pairs(s, needle):
    """Both as string arrays of one length (the longer's), and where both are valid."""
    rows = next((len(v) for v in (s, needle) if not isinstance(v, pa.Scalar)), 1)
    s, needle = (broadcast(v, rows).cast(pa.string()) for v in (s, needle))
    return s, needle, valid_rows(s) & valid_rows(needle)


def _answer(out: np.ndarray, valid: np.ndarray, out_type: pa.DataType) -> pa.Array:
    return pa.array(out, mask=None if valid.all() else ~valid).cast(out_type)


def positions(s, needle) -> pa.Array:
    """strpos: the 1-based character position of ``needle`` in ``s``, 0 if it is not there."""
    s, needle, valid = string_pairs(s, needle)
    out = np.zeros(len(s), np.int64)
    kernels.character_positions(*string_buffers(s), *string_buffers(needle), out)
    return _answer(out, valid, pa.int64())


def found(s, needle) -> pa.Array:
    """contains: whether ``needle`` occurs in ``s``."""
    return pc.greater(positions(s, needle), 0)


def affixed(s, needle, at_end: bool) -> pa.Array:
    """starts_with (``at_end``: ends_with): whether ``s`` starts (ends) with ``needle``."""
    s, needle, valid = string_pairs(s, needle)
    out = np.zeros(len(s), np.int64)
    kernels.affixes(*string_buffers(s), *string_buffers(needle), at_end, out)
    return _answer(out.astype(bool), valid, pa.bool_())
