"""String distances and similarities, registered into ``functions.REGISTRY``: DuckDB's
``levenshtein`` (``editdist3``), ``damerau_levenshtein``, ``hamming`` (``mismatches``),
``jaccard``, ``jaro_similarity`` and ``jaro_winkler_similarity``.

In: two strings (constants or columns) per row; out: BIGINT distances or DOUBLE
similarities, counted on UTF-8 bytes as DuckDB counts them (``kernels.string_distance``).
NULL in, NULL out; DuckDB's errors for strings of unequal length or empty (hamming) and
an empty string (jaccard).  The jaro functions' optional third argument is a cutoff: a similarity
below it is 0.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..kernels import string_distance as kernels
from .functions import register
from .list_values import scalar_if_constant
from .string_pairs import pair_rows, with_nulls

# (name, aliases, kernel, result type, the error of a row the kernel marked -1)
_DISTANCES = (
    ("levenshtein", ("editdist3",), kernels.levenshtein, pa.int64(), None),
    ("damerau_levenshtein", (), kernels.damerau_levenshtein, pa.int64(), None),
    ("hamming", ("mismatches",), kernels.hamming, pa.int64(),
     "strings must be of equal length, and not empty"),
    ("jaccard", (), kernels.jaccard, pa.float64(), "an argument is too short (empty)"),
)


def _rows(ctx, a, b, kernel, out_type: pa.DataType,
          *options) -> tuple[pa.Array, np.ndarray, np.ndarray]:
    """(the kernel's answer per row, NULL where either string is; its raw numbers; where both
    strings are valid)."""
    out, valid = pair_rows(kernel, ctx.string(a, 0), ctx.string(b, 1), out_type.to_pandas_dtype(),
                           *options)
    return with_nulls(out, valid), out, valid


def _distance(kernel, out_type: pa.DataType, refused: str | None):
    def impl(ctx, a, b):
        answer, out, valid = _rows(ctx, a, b, kernel, out_type)
        if refused is not None and (out[valid] < 0).any():
            raise ctx.error(refused)
        return scalar_if_constant(answer, a, b)
    return impl


def _jaro(winkler: bool):
    def impl(ctx, a, b, cutoff=None):
        answer, out, valid = _rows(ctx, a, b, kernels.jaro, pa.float64(), winkler)
        if cutoff is not None:
            least = ctx.constant(ctx.double(cutoff, 2), 2, "score cutoff")
            if least is None:
                return scalar_if_constant(pa.nulls(len(answer), pa.float64()), a, b)
            answer = with_nulls(np.where(out >= least, out, 0.0), valid)
        return scalar_if_constant(answer, a, b)
    return impl


for _name, _aliases, _kernel, _type, _refused in _DISTANCES:
    register(_name, 2, aliases=_aliases)(_distance(_kernel, _type, _refused))
register("jaro_similarity", 2, 3)(_jaro(winkler=False))
register("jaro_winkler_similarity", 2, 3)(_jaro(winkler=True))
