"""A window frame's EXCLUDE clause: the frame ``[start, end)`` of every window position, less
the rows it excludes, as segments of positions.

``EXCLUDE CURRENT ROW`` leaves out the row itself, ``EXCLUDE GROUP`` its peer group (the rows
equal to it on the ORDER BY keys), ``EXCLUDE TIES`` its peers but not the row, ``EXCLUDE NO
OTHERS`` (the default) nothing.  What is left of a frame is at most three runs of positions,
in window order: the frame before the excluded rows, the row itself (TIES), the frame after
them.  Every segment is a pair of arrays ``(start, end)`` by window position, each
non-decreasing as the frame's own ends are, so the frame kernels that rely on frames moving
forward read each segment as a frame; an empty segment has ``start == end``.
"""

from __future__ import annotations

import numpy as np
from sqlglot import exp

Segments = list[tuple[np.ndarray, np.ndarray]]


def exclusion(spec: exp.WindowSpec | None) -> str:
    """The EXCLUDE clause of a frame ("CURRENT ROW", "GROUP", "TIES" or "NO OTHERS")."""
    exclude = None if spec is None else spec.args.get("exclude")
    return "NO OTHERS" if exclude is None else " ".join(exclude.name.upper().split())


def frame_segments(start: np.ndarray, end: np.ndarray, exclude: str, position: np.ndarray,
                   peer_start: np.ndarray, peer_end: np.ndarray) -> Segments:
    """The frames ``[start, end)`` of every position less the rows ``exclude`` names."""
    if exclude == "NO OTHERS":
        return [(start, end)]
    if exclude == "CURRENT ROW":
        first, last = position, position + 1
    else:  # GROUP and TIES: the peer group, TIES giving the row itself back
        first, last = peer_start, peer_end
    segments = [(start, np.clip(first, start, end))]
    if exclude == "TIES":
        segments.append((np.clip(position, start, end), np.clip(position + 1, start, end)))
    segments.append((np.clip(last, start, end), end))
    return segments


def is_whole(segments: Segments, part_start: np.ndarray, part_end: np.ndarray) -> bool:
    """Is every frame its whole partition (nothing excluded)?"""
    if len(segments) != 1:
        return False
    start, end = segments[0]
    return np.array_equal(start, part_start) and np.array_equal(end, part_end)


def segment_sums(values: np.ndarray, segments: Segments) -> np.ndarray:
    """Per position the sum of ``values`` (by window position) over its frame's segments."""
    before = np.concatenate([[0], np.cumsum(values)])
    return sum(before[end] - before[start] for start, end in segments)


def nth_in_frame(before: np.ndarray, segments: Segments, nth: np.ndarray):
    """``(k, found)``: per position the index ``k`` of the ``nth`` (1 = first) row that counts
    in its frame, where ``before[p]`` is the number of rows that count before position ``p``;
    ``found`` is False where the frame has fewer."""
    k = np.zeros(len(nth), np.int64)
    found = np.zeros(len(nth), bool)
    remaining = nth.copy()
    for start, end in segments:
        counted = before[end] - before[start]
        hit = ~found & (remaining >= 1) & (remaining <= counted)
        k = np.where(hit, before[start] + remaining - 1, k)
        found |= hit
        remaining = remaining - counted
    return k, found


def last_in_frame(before: np.ndarray, segments: Segments):
    """``(k, found)``: per position the index of the last row that counts in its frame."""
    k = np.zeros(len(segments[0][0]), np.int64)
    found = np.zeros(len(k), bool)
    for start, end in reversed(segments):
        hit = ~found & (before[end] > before[start])
        k = np.where(hit, before[end] - 1, k)
        found |= hit
    return k, found
