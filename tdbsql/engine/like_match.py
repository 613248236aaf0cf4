"""LIKE without ``_`` and case-sensitive: one Numba pass over the strings' bytes.

Arrow's ``match_like`` runs a regular expression per string; TPC-H's ``o_comment NOT LIKE
'%special%requests%'`` (1.5M strings) is several times faster as a search for the literal
pieces in order (``kernels.like``).  ``pieces`` returns None for a pattern with a ``_``
wildcard; those, and ILIKE, stay with Arrow.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ..kernels import like as kernels
from ..kernels.like_rows import like_rows
from .hash_table import valid_mask
from .string_pairs import pair_rows, with_nulls
from .value_types import string_buffers


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


@dataclass(frozen=True)
class Pattern:
    """A LIKE pattern of literal pieces and ``%``, ready for ``kernels.like``; an equality
    is the one piece anchored at both ends.  Used by the evaluator (``match``, over Arrow
    strings) and by the scan's stored filter (``engine.stored_filter``, over a tile's bytes
    or its dictionary of short strings)."""

    pieces: np.ndarray  # uint8: the literal pieces one after another
    starts: np.ndarray  # int64: where each piece starts in ``pieces``, and where the last ends
    anchored_start: bool
    anchored_end: bool

    @classmethod
    def of(cls, parts: list[bytes], anchored_start: bool, anchored_end: bool) -> "Pattern":
        starts = np.zeros(len(parts) + 1, np.int64)
        starts[1:] = np.cumsum([len(part) for part in parts])
        return cls(np.frombuffer(b"".join(parts) or b"\0", np.uint8).copy(), starts,
                   anchored_start, anchored_end)

    def matches(self, data: np.ndarray, offsets: np.ndarray, keep: np.ndarray) -> np.ndarray:
        """Which of the strings (``data``: uint8, ``offsets``: int64 n + 1, both writable)
        match, of those ``keep`` still holds (the others: False) -- but with no piece (''
        matches the empty string, '%' anything) every string is answered."""
        if len(self.starts) == 1:
            return np.diff(offsets) == 0 if self.anchored_start and self.anchored_end else \
                np.ones(len(keep), bool)
        hit = keep.copy()
        kernels.like_pieces(data, offsets, self.pieces, self.starts, self.anchored_start,
                            self.anchored_end, hit)
        return hit


def match(values, found: tuple[list[bytes], bool, bool]):
    """LIKE over a string array (or chunked array) with the parsed pattern; NULL stays NULL."""
    if isinstance(values, pa.ChunkedArray):
        return pa.chunked_array([match(chunk, found) for chunk in values.chunks], pa.bool_())
    if isinstance(values, pa.Scalar):  # a constant: as a one-row array
        return match(pa.array([values.as_py()], values.type), found)[0]
    n = len(values)
    data, offsets = string_buffers(values) if n else (np.zeros(0, np.uint8), np.zeros(1, np.int64))
    data = np.require(data if len(data) else np.zeros(1, np.uint8), requirements=["C", "W"])
    hit = Pattern.of(*found).matches(data, offsets, np.ones(n, np.bool_))
    valid = valid_mask(values)
    return pa.array(hit, pa.bool_(), mask=None if valid is None else valid == 0)


def match_rows(values, patterns, escape: str | None, error) -> pa.Array:
    """LIKE with a pattern per row (``kernels.like_rows``); NULL where either is NULL.
    ``error(message)`` is the SQL's error for a pattern ending with the escape character."""
    out, valid = pair_rows(like_rows, values, patterns, np.int64,
                           -1 if escape is None else ord(escape))
    if (out < 0).any():
        raise error("LIKE pattern must not end with the ESCAPE character")
    return with_nulls(out > 0, valid, values, patterns)
