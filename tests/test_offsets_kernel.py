"""kernels.offsets: TileDB's per-cell starts -> n + 1 offsets, checked in one pass, against the
numpy reference it replaced."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tdbsql.kernels.offsets import offsets_from_starts


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(-3, 60), max_size=30), st.integers(0, 70), st.booleans())
def test_offsets_from_starts_matches_numpy(values, total, sort):
    starts = np.array(sorted(values) if sort else values, dtype=np.int64)
    out = np.empty(len(starts) + 1, np.int64)
    ok = bool(offsets_from_starts(starts, total, out))
    full = np.append(starts, np.int64(total))
    valid = not (len(starts) and (starts[0] < 0 or np.any(np.diff(full) < 0)))
    assert ok == valid
    if ok:
        assert out.tolist() == full.tolist()
