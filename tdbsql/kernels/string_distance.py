"""Edit distances and similarities of two strings, row by row, on their UTF-8 bytes (as
DuckDB's ``levenshtein``, ``damerau_levenshtein``, ``hamming``, ``jaccard``,
``jaro_similarity`` and ``jaro_winkler_similarity`` count: 'ñ' is two bytes).  In: both
strings' bytes, int64 offsets and steps (``offsets.row_bounds``: 0 for a constant, read by
every row); out: one value per row (rows whose ``valid`` is 0 are skipped).
"""

from __future__ import annotations

import numpy as np

from . import jit
from .offsets import row_bounds


@jit
def levenshtein(a, a_offsets, a_step, b, b_offsets, b_step, valid, out):
    """Insertions, deletions and substitutions turning string a into string b (one row of
    the dynamic programme kept)."""
    for k in range(out.shape[0]):
        if not valid[k]:
            continue
        a0, a_end = row_bounds(a_offsets, a_step, k)
        b0, b_end = row_bounds(b_offsets, b_step, k)
        n, m = a_end - a0, b_end - b0
        row = np.arange(m + 1)
        for i in range(1, n + 1):
            diagonal, row[0] = row[0], i
            for j in range(1, m + 1):
                cost = 0 if a[a0 + i - 1] == b[b0 + j - 1] else 1
                best = min(row[j] + 1, row[j - 1] + 1, diagonal + cost)
                diagonal, row[j] = row[j], best
        out[k] = row[m]
    return out.shape[0]


@jit
def damerau_levenshtein(a, a_offsets, a_step, b, b_offsets, b_step, valid, out):
    """Levenshtein with transpositions of adjacent bytes, any edits between them allowed
    (the unrestricted distance: 'ca' -> 'abc' is 2), Lowrance and Wagner's table."""
    last_row = np.zeros(256, np.int64)  # per byte, the last row of a holding it
    for k in range(out.shape[0]):
        if not valid[k]:
            continue
        a0, a_end = row_bounds(a_offsets, a_step, k)
        b0, b_end = row_bounds(b_offsets, b_step, k)
        n, m = a_end - a0, b_end - b0
        last_row[:] = 0
        far = n + m
        d = np.empty((n + 2, m + 2), np.int64)
        d[0, :] = far
        d[:, 0] = far
        for i in range(n + 1):
            d[i + 1, 1] = i
        for j in range(m + 1):
            d[1, j + 1] = j
        for i in range(1, n + 1):
            last_column = 0  # the last column of this row where the bytes matched
            for j in range(1, m + 1):
                i1 = last_row[b[b0 + j - 1]]
                j1 = last_column
                cost = 1
                if a[a0 + i - 1] == b[b0 + j - 1]:
                    cost = 0
                    last_column = j
                d[i + 1, j + 1] = min(d[i, j] + cost, d[i + 1, j] + 1, d[i, j + 1] + 1,
                                      d[i1, j1] + (i - i1 - 1) + 1 + (j - j1 - 1))
            last_row[a[a0 + i - 1]] = i
        out[k] = d[n + 1, m + 1]
    return out.shape[0]


@jit
def hamming(a, a_offsets, a_step, b, b_offsets, b_step, valid, out):
    """Positions whose bytes differ; -1 where the lengths differ or a string is empty
    (DuckDB's errors)."""
    for k in range(out.shape[0]):
        if not valid[k]:
            continue
        a0, a_end = row_bounds(a_offsets, a_step, k)
        b0, b_end = row_bounds(b_offsets, b_step, k)
        n, m = a_end - a0, b_end - b0
        if n != m or n == 0:
            out[k] = -1
            continue
        count = 0
        for i in range(n):
            if a[a0 + i] != b[b0 + i]:
                count += 1
        out[k] = count
    return out.shape[0]


@jit
def jaccard(a, a_offsets, a_step, b, b_offsets, b_step, valid, out):
    """Shared distinct bytes over all distinct bytes; -1 where a string is empty (DuckDB's
    error)."""
    in_a = np.zeros(256, np.bool_)
    in_b = np.zeros(256, np.bool_)
    for k in range(out.shape[0]):
        if not valid[k]:
            continue
        a0, a_end = row_bounds(a_offsets, a_step, k)
        b0, b_end = row_bounds(b_offsets, b_step, k)
        if a0 == a_end or b0 == b_end:
            out[k] = -1.0
            continue
        in_a[:] = False
        in_b[:] = False
        for i in range(a0, a_end):
            in_a[a[i]] = True
        for i in range(b0, b_end):
            in_b[b[i]] = True
        both = 0
        either = 0
        for byte in range(256):
            both += in_a[byte] and in_b[byte]
            either += in_a[byte] or in_b[byte]
        out[k] = both / either
    return out.shape[0]


@jit
def jaro(a, a_offsets, a_step, b, b_offsets, b_step, valid, winkler, out):
    """Jaro's similarity (matches within half the longer length, less half the
    transpositions); with ``winkler`` raised by 0.1 per shared leading byte (up to 4) when
    above 0.7.  0 when a string is empty."""
    for k in range(out.shape[0]):
        if not valid[k]:
            continue
        a0, a_end = row_bounds(a_offsets, a_step, k)
        b0, b_end = row_bounds(b_offsets, b_step, k)
        n, m = a_end - a0, b_end - b0
        out[k] = 0.0
        if n == 0 or m == 0:
            continue
        window = max(max(n, m) // 2 - 1, 0)
        used_a = np.zeros(n, np.bool_)
        used_b = np.zeros(m, np.bool_)
        matches = 0
        for i in range(n):
            for j in range(max(0, i - window), min(m, i + window + 1)):
                if not used_b[j] and a[a0 + i] == b[b0 + j]:
                    used_a[i] = True
                    used_b[j] = True
                    matches += 1
                    break
        if matches == 0:
            continue
        half_transpositions = 0
        j = 0
        for i in range(n):
            if used_a[i]:
                while not used_b[j]:
                    j += 1
                half_transpositions += a[a0 + i] != b[b0 + j]
                j += 1
        similarity = (matches / n + matches / m
                      + (matches - half_transpositions // 2) / matches) / 3.0
        if winkler and similarity > 0.7:
            prefix = 0
            while prefix < min(4, n, m) and a[a0 + prefix] == b[b0 + prefix]:
                prefix += 1
            similarity += prefix * 0.1 * (1.0 - similarity)
        out[k] = similarity
    return out.shape[0]
