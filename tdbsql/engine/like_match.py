"""LIKE without ``_`` and case-sensitive: one Numba pass over the strings' bytes.

Arrow's ``match_like`` runs a regular expression per string; TPC-H's ``o_comment NOT LIKE
'%special%requests%'`` (1.5M strings) is several times faster as a search for the literal
pieces in order (``kernels.like``).  ``pieces`` returns None for a pattern with a ``_``
wildcard; those, and ILIKE, stay with Arrow.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..kernels import like as kernels
from .hash_table import valid_mask


def pieces(pattern: str, escape: str | None) -> tuple[list[bytes], bool, bool] | None:
    """(the literal pieces between ``%``, anchored at the start, anchored at the end) of a
    LIKE pattern (``escape`` makes the next character literal), or None if it has ``_``."""
    parts, current, pos = [], [], 0
    while pos < len(pattern):
        char = pattern[pos]
        if escape is not None and char == escape and pos + 1 < len(pattern):
            current.append(pattern[pos + 1])
            pos += 2
            continue
        if char == "_":
            return None
        if char == "%":
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
        pos += 1
    parts.append("".join(current))
    anchored_start, anchored_end = len(parts) == 1 or parts[0] != "", \
        len(parts) == 1 or parts[-1] != ""
    return [p.encode() for p in parts if p], anchored_start, anchored_end


def match(values, found: tuple[list[bytes], bool, bool]):
    """LIKE over a string array (or chunked array) with the parsed pattern; NULL stays NULL."""
    if isinstance(values, pa.ChunkedArray):
        return pa.chunked_array([match(chunk, found) for chunk in values.chunks], pa.bool_())
    if isinstance(values, pa.Scalar):  # a constant: as a one-row array
        return match(pa.array([values.as_py()], values.type), found)[0]
    parts, anchored_start, anchored_end = found
    n = len(values)
    if not parts:  # '' matches the empty string; '%', '%%' ... anything
        lengths = np.diff(_offsets(values)) if n else np.zeros(0, np.int64)
        hit = lengths == 0 if anchored_start and anchored_end else np.ones(n, bool)
    else:
        data = np.frombuffer(values.buffers()[2], np.uint8) if n and values.buffers()[2] \
            is not None else np.zeros(1, np.uint8)
        pieces_bytes = np.frombuffer(b"".join(parts), np.uint8).copy()
        starts = np.concatenate([[0], np.cumsum([len(p) for p in parts])]).astype(np.int64)
        hit = np.ones(n, np.bool_)
        kernels.like_pieces(np.require(data, requirements=["C", "W"]), _offsets(values),
                            pieces_bytes, starts, anchored_start, anchored_end, hit)
    valid = valid_mask(values)
    return pa.array(hit, pa.bool_(), mask=None if valid is None else valid == 0)


def _offsets(values: pa.Array) -> np.ndarray:
    """The array's offsets into its data buffer (its own slice), int64, writable."""
    width = np.int64 if pa.types.is_large_string(values.type) or \
        pa.types.is_large_binary(values.type) else np.int32
    raw = np.frombuffer(values.buffers()[1], width)
    return raw[values.offset:values.offset + len(values) + 1].astype(np.int64)
