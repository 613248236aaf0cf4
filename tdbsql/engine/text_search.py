"""``strpos`` (any arguments) and the string functions whose search string differs from row
to row (``starts_with(s, col)``, ...): each row's pair of strings searched in one Numba pass
(``kernels.text_search``).  NULL where either string is NULL, as DuckDB."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..kernels import text_search as kernels
from .string_pairs import pair_rows, with_nulls


def positions(s, needle) -> pa.Array:
    """strpos: the 1-based character position of ``needle`` in ``s``, 0 if it is not there
    (a scalar when both are constants)."""
    out, valid = pair_rows(kernels.character_positions, s, needle, np.int64)
    return with_nulls(out, valid, s, needle)


def found(s, needle) -> pa.Array:
    """contains: whether ``needle`` occurs in ``s``."""
    return pc.greater(positions(s, needle), 0)


def affixed(s, needle, at_end: bool) -> pa.Array:
    """starts_with (``at_end``: ends_with): whether ``s`` starts (ends) with ``needle``."""
    out, valid = pair_rows(kernels.affixes, s, needle, np.bool_, at_end)
    return with_nulls(out, valid, s, needle)
