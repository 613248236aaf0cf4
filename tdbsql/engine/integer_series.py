"""Integer series: the values ``range`` / ``generate_series`` make from ``start`` towards
``stop`` by ``step``, for the table function (``engine.series``, one series) and the list
function (``engine.functions_lists``, one series a row) alike.

The whole int64 range is valid: a span or a step's size past int64 (``range(-2**63, 2**63 -
1, 2**62)``) is worked out in uint64, where the distance between two int64 values and every
offset from the start fit, and the values wrap back to int64 exactly.
"""

from __future__ import annotations

import numpy as np

from .list_values import ordinals, repeated_rows


def series_counts(start: np.ndarray, stop: np.ndarray, step: np.ndarray,
                  inclusive: bool) -> np.ndarray:
    """How many values each series has (int64): those before ``stop`` (``range``) or up to it
    (``generate_series``, ``inclusive``) in the step's direction; 0 for a zero step."""
    forward = step > 0
    distance = np.where(forward, stop.view(np.uint64) - start.view(np.uint64),
                        start.view(np.uint64) - stop.view(np.uint64))
    ahead = np.where(forward, stop >= start, stop <= start)  # the stop lies that way
    size = np.where(step == 0, np.uint64(1), _magnitude(step))
    if inclusive:
        counts = distance // size + np.uint64(1)
    else:
        counts = distance // size + (distance % size != 0)
        ahead &= stop != start
    return np.where(ahead & (step != 0), counts, np.uint64(0)).astype(np.int64)


def series_values(start: np.ndarray, step: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The values of every series one after another (int64): ``start + k * step`` for ``k``
    below its count."""
    rows, ordinal = repeated_rows(counts), ordinals(counts).view(np.uint64)
    base, size = start.view(np.uint64)[rows], _magnitude(step)[rows]
    offsets = ordinal * size  # < 2**64: the last value lies within int64
    return np.where(step[rows] > 0, base + offsets, base - offsets).view(np.int64)


def _magnitude(step: np.ndarray) -> np.ndarray:
    """|step| as uint64 (-2**63 included)."""
    return np.where(step < 0, np.uint64(0) - step.view(np.uint64), step.view(np.uint64))
