"""array_agg / string_agg over moving window frames: per row the values of its frame, as a
list or as their texts joined by a separator.

``engine.window_functions`` picks the frame's rows that count (those FILTER keeps; for
string_agg those whose value is not NULL), numbers them 0, 1, ... in window order and gives
every row its frame ``[first, last)`` in that numbering, by input row (a frame with an EXCLUDE
clause: up to three such ranges, ``engine.frame_exclusion``).  Here the frames are copied out one after another (``kernels.window.frame_rows`` / ``join_frames``), so a row's
values come in window order, as DuckDB gives them; a frame without a row that counts is NULL.

The result holds every frame's values: a running frame (``ROWS UNBOUNDED PRECEDING``) over n
rows holds n(n+1)/2 of them.  Its size is worked out before anything is allocated and checked
against the query's memory budget (``MemoryLimitError``), and against Arrow's 32-bit offsets:
one result column holds at most 2**31 - 1 list values or text bytes (``UnsupportedSql``).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..errors import UnsupportedSql
from ..kernels import window as kernels
from .value_types import string_buffers

_OFFSET_LIMIT = 2**31 - 1


def frame_lists(values: pa.Array, rows: np.ndarray, ranges: list, budget, what: str,
                ranks: np.ndarray | None = None) -> pa.Array:
    """array_agg: per row the list of ``values[rows[first[i]:last[i]]]`` for every ``(first,
    last)`` of ``ranges`` (the segments of its frame, in order), NULL when empty; with
    ``ranks`` (per position of ``rows``), each list in the order of its values' ranks."""
    taken, sizes = frame_members(values, rows, ranges, budget, what, ranks)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int32)
    empty = sizes == 0
    return pa.ListArray.from_arrays(pa.array(offsets), values.take(pa.array(taken)),
                                    mask=pa.array(empty) if empty.any() else None)


def frame_texts(texts: pa.Array, ranges: list, separator: str, budget, what: str,
                ranks: np.ndarray | None = None) -> pa.Array:
    """string_agg: per row the ``texts[first[i]:last[i]]`` of every ``(first, last)`` of
    ``ranges`` joined by ``separator`` (NULL when empty), in the order of their ``ranks`` when
    given; ``texts`` are strings without NULLs."""
    if len(ranges) == 1 and ranks is None:
        first, last = ranges[0]
    else:  # the segments' texts copied one after another: one range a row
        taken, sizes = frame_members(texts, np.arange(len(texts)), ranges, budget, what, ranks)
        texts = texts.take(pa.array(taken))
        last = np.cumsum(sizes)
        first = last - sizes
    data, offsets = string_buffers(texts)
    sep = np.frombuffer(separator.encode(), np.uint8)
    sizes = last - first
    lengths = offsets[last] - offsets[first] + np.maximum(sizes - 1, 0) * len(sep)
    out_offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    total = int(out_offsets[-1])
    _check_offsets(total, "bytes of text", what)
    if budget is not None:
        budget.check(total + 4 * len(out_offsets), what)
    out_data = np.empty(total, np.uint8)
    kernels.join_frames(offsets, data, first, last, sep, out_offsets, out_data)
    valid = sizes > 0
    bitmap = None if valid.all() else pa.py_buffer(np.packbits(valid, bitorder="little"))
    return pa.StringArray.from_buffers(len(first), pa.py_buffer(out_offsets.astype(np.int32)),
                                       pa.py_buffer(out_data), bitmap,
                                       int(len(valid) - valid.sum()))


def frame_members(values: pa.Array, rows: np.ndarray, ranges: list, budget, what: str,
                  ranks: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(taken, sizes)``: every row's ``rows[first:last]`` of each of its ``ranges`` one after
    another (each row's in the order of ``ranks``, per position of ``rows``, when given), and
    how many that is per row; checked against the budget and Arrow's offsets."""
    sizes = sum(last - first for first, last in ranges)
    total = int(sizes.sum())
    _check_offsets(total, "list values", what)
    if budget is not None:
        per_value = 8 + values.nbytes / max(len(values), 1)  # a take index and the value
        budget.check(int(total * per_value), what)
    rows = np.ascontiguousarray(rows, np.int64)
    taken = np.empty(total, np.int64)
    # the ranges interleaved row by row (row 0's first, second ... range, then row 1's):
    # the kernel copies them in that order, one call for them all
    firsts = np.ascontiguousarray(np.stack([first for first, _ in ranges], 1).ravel(), np.int64)
    lasts = np.ascontiguousarray(np.stack([last for _, last in ranges], 1).ravel(), np.int64)
    if ranks is None:
        kernels.frame_rows(rows, firsts, lasts, taken)
        return taken, sizes
    at = np.empty(total, np.int64)  # positions in ``rows``, then sorted by rank within a row
    kernels.frame_rows(np.arange(len(rows), dtype=np.int64), firsts, lasts, at)
    owner = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)
    at = at[np.lexsort((ranks[at], owner))]
    return rows[at], sizes


def first_of_each(values: pa.Array, ids: np.ndarray, rows: np.ndarray, ranges: list, budget,
                  what: str, ranks: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(taken, sizes)`` as ``frame_members`` gives them, but of each row's frame only the first
    row of each value (``ids``: a group id per input row), in window order or that of
    ``ranks`` (per position of ``rows``): DISTINCT."""
    at, sizes = frame_members(values, np.arange(len(rows), dtype=np.int64), ranges, budget, what,
                              ranks)
    owner = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)
    value = ids[rows[at]]
    ordered = np.lexsort((np.arange(len(at)), value, owner))  # by row, value, place
    first = np.ones(len(at), bool)
    first[1:] = (owner[ordered][1:] != owner[ordered][:-1]) | \
        (value[ordered][1:] != value[ordered][:-1])
    keep = np.zeros(len(at), bool)
    keep[ordered[first]] = True
    return rows[at[keep]], np.bincount(owner[keep], minlength=len(sizes)).astype(np.int64)


def _check_offsets(total: int, unit: str, what: str) -> None:
    if total > _OFFSET_LIMIT:
        raise UnsupportedSql(f"{what} would hold {total:,} {unit} in one result column, more "
                             f"than the {_OFFSET_LIMIT:,} an Arrow column can; use a smaller "
                             "frame or fewer rows")
