"""Window-frame kernels: rows are in window order (partition, then ORDER BY) and every row has a
frame ``[start, end)`` of rows; frames only move forward (start and end never decrease), which
holds for ROWS and RANGE frames with constant offsets.  ``range_bounds`` finds where a RANGE
frame with an offset starts or ends; ``compensated_prefix`` and (beside far larger values)
``sum_tree`` / ``tree_frame_sums`` sum floats over frames; ``frame_rows`` and ``join_frames``
copy every frame's values out (array_agg / string_agg)."""

from __future__ import annotations

from . import jit
from .aggregate import neumaier, sql_less


@jit
def compensated_prefix(values, valid, high, low):
    """Running sums of the valid ``values`` as double-doubles: ``high[i] + low[i]`` is the sum
    of rows ``0..i-1`` to about 106 bits, so ``(high[e] - high[s]) + (low[e] - low[s])`` is a
    frame's sum without the cancellation a plain running sum suffers -- unless values far
    larger than the frame's came before it (``sum_tree`` then).  Non-finite values must be
    masked out by the caller (they are counted apart)."""
    total = 0.0
    error = 0.0
    high[0] = 0.0
    low[0] = 0.0
    for i in range(values.shape[0]):
        if valid[i]:
            total, rounding = neumaier(total, values[i])
            error += rounding
        high[i + 1] = total
        low[i + 1] = error
    return values.shape[0]


@jit
def sum_tree(values, valid, high, low):
    """A bottom-up segment tree of the valid ``values``' sums as double-doubles: leaves at
    ``size + i`` (``size``, a power of two >= the number of values, is ``len(high) // 2``),
    node ``k`` the sum of nodes ``2k`` and ``2k + 1``.  A node sums only its own rows, so a
    frame's sum is never computed against far larger values outside it (a running sum is:
    1e300 before a frame cancels every small value inside it).  Non-finite values must be
    masked out by the caller (they are counted apart)."""
    size = high.shape[0] // 2
    for i in range(size):
        high[size + i] = values[i] if i < values.shape[0] and valid[i] else 0.0
        low[size + i] = 0.0
    for node in range(size - 1, 0, -1):
        total, rounding = neumaier(high[2 * node], high[2 * node + 1])
        high[node] = total
        low[node] = rounding + low[2 * node] + low[2 * node + 1]
    return size


@jit
def tree_frame_sums(high, low, starts, ends, out):
    """Every frame ``[starts[i], ends[i])``'s sum from ``sum_tree``'s nodes: at most two per
    tree level, added with their rounding errors."""
    size = high.shape[0] // 2
    for i in range(starts.shape[0]):
        left = starts[i] + size
        right = ends[i] + size
        total = 0.0
        error = 0.0
        while left < right:
            if left & 1:
                total, rounding = neumaier(total, high[left])
                error += rounding + low[left]
                left += 1
            if right & 1:
                right -= 1
                total, rounding = neumaier(total, high[right])
                error += rounding + low[right]
            left >>= 1
            right >>= 1
        out[i] = total + error
    return starts.shape[0]


@jit
def sliding_extreme(ranks, valid, starts, ends, largest, queue, out):
    """For every row the index of the smallest (largest) valid ``ranks`` value in its frame,
    -1 for a frame without one: a monotonic queue of candidate rows, O(n) in all."""
    head = 0
    tail = 0
    added = 0
    for i in range(starts.shape[0]):
        while added < ends[i]:
            if valid[added]:
                rank = ranks[added]
                while tail > head and ((ranks[queue[tail - 1]] <= rank) if largest
                                       else (ranks[queue[tail - 1]] >= rank)):
                    tail -= 1
                queue[tail] = added
                tail += 1
            added += 1
        while tail > head and queue[head] < starts[i]:
            head += 1
        out[i] = queue[head] if tail > head else -1
    return starts.shape[0]


@jit
def range_bounds(keys, targets, lo, hi, descending, inclusive, out):
    """For every row ``i`` the first position ``p`` in ``lo[i]..hi[i]`` whose key is not before
    ``targets[i]`` (``hi[i]`` if none): ``keys[lo[i]:hi[i]]`` is sorted (descending if
    ``descending``), and a key is before the target when it sorts before it, or, if
    ``inclusive``, is equal to it.  So with ascending keys a frame start ``key - n PRECEDING``
    is the first key >= the target and a frame end (exclusive) the first key > the target.
    A binary search per row."""
    for i in range(targets.shape[0]):
        a = lo[i]
        b = hi[i]
        target = targets[i]
        while a < b:
            middle = (a + b) >> 1
            key = keys[middle]
            if descending:
                before = sql_less(target, key) or (inclusive and not sql_less(key, target))
            else:
                before = sql_less(key, target) or (inclusive and not sql_less(target, key))
            if before:
                a = middle + 1
            else:
                b = middle
        out[i] = a
    return targets.shape[0]


@jit
def frame_rows(rows, starts, ends, out):
    """Every frame's rows one after another: ``rows[starts[i]:ends[i]]`` for i = 0, 1, ...
    into ``out``, which the caller sized as the sum of the frame lengths (array_agg over
    moving frames: the take indices of every row's list)."""
    at = 0
    for i in range(starts.shape[0]):
        for k in range(starts[i], ends[i]):
            out[at] = rows[k]
            at += 1
    return at


@jit
def join_frames(offsets, data, starts, ends, separator, out_offsets, out_data):
    """Every frame's texts joined by ``separator`` (string_agg over moving frames): text ``k``
    is ``data[offsets[k]:offsets[k + 1]]`` (UTF-8 bytes), and row ``i``'s result, texts
    ``starts[i]`` to ``ends[i] - 1`` with ``separator`` between them, is written at
    ``out_data[out_offsets[i]:]`` (the caller worked out ``out_offsets`` from the lengths)."""
    for i in range(starts.shape[0]):
        at = out_offsets[i]
        for k in range(starts[i], ends[i]):
            if k > starts[i]:
                for b in range(separator.shape[0]):
                    out_data[at] = separator[b]
                    at += 1
            for b in range(offsets[k], offsets[k + 1]):
                out_data[at] = data[b]
                at += 1
    return starts.shape[0]
