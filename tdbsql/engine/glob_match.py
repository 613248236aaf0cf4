"""``s GLOB pattern`` and ``s SIMILAR TO regex``, as DuckDB evaluates them.

GLOB matches bytes (``kernels.glob``: ``*``, ``?``, ``[...]`` classes, ``\\`` escapes), the
pattern a constant or a column.  SIMILAR TO is a regular expression (RE2, as DuckDB's) that
must match the whole string; a pattern per row runs once per distinct pattern.  NULL string
or pattern: NULL.  ``NOT GLOB`` / ``NOT SIMILAR TO`` are ``NOT`` of these.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..kernels.glob import glob_rows
from .functions import per_distinct
from .string_pairs import pair_rows, with_nulls
from .value_types import null_like


def glob(values, patterns) -> pa.Array:
    return with_nulls(*pair_rows(glob_rows, values, patterns, np.bool_), values, patterns)


def similar_to(values, patterns, error) -> pa.Array:
    """``error(message)``: the SQL's error for a pattern RE2 cannot compile."""
    if not isinstance(patterns, pa.Scalar):
        return per_distinct(lambda v, p: similar_to(v, p, error), [values], [patterns])
    return _full_match(values, patterns.as_py(), error) if patterns.is_valid else \
        null_like(values, pa.bool_())


def _full_match(values, pattern: str, error):
    try:
        return pc.match_substring_regex(values, f"^(?:{pattern})$")
    except pa.ArrowInvalid as err:
        reason = str(err).split(": ", 1)[-1].rsplit(": ", 1)[0]  # without Arrow's anchors
        raise error(f"invalid regular expression {pattern!r}: {reason}") from None
