"""Zone-map checks: classify many tiles against one closed/open interval at once.

In: per tile the stored min, max, null count, cell count and a ``trusted`` flag (0 when the
min/max cannot be relied on, e.g. a float tile holding NaN), plus the interval
``lo .. hi`` with strictness flags.  Out: per tile NEVER (0), MAYBE (1) or ALWAYS (2) that
``lo <(=) value <(=) hi`` holds for its cells (NULL cells never satisfy it).

Callers pass mins/maxes widened to int64, uint64 or float64 (three specialisations).
"""

from __future__ import annotations

from . import jit

NEVER = 0
MAYBE = 1
ALWAYS = 2


@jit
def classify_interval(mins, maxes, null_counts, cell_counts, trusted, lo, hi, lo_strict,
                      hi_strict, out):
    """Writes the class of every tile to ``out`` (int8); returns the number of NEVER tiles."""
    never = 0
    for i in range(out.shape[0]):
        if null_counts[i] >= cell_counts[i]:  # only NULLs: no comparison is true
            out[i] = 0
            never += 1
            continue
        if trusted[i] == 0:
            out[i] = 1
            continue
        mn = mins[i]
        mx = maxes[i]
        if mx < lo or (lo_strict and mx == lo) or mn > hi or (hi_strict and mn == hi):
            out[i] = 0
            never += 1
            continue
        above = mn > lo or (not lo_strict and mn == lo)
        below = mx < hi or (not hi_strict and mx == hi)
        out[i] = 2 if (above and below and null_counts[i] == 0) else 1
    return never
