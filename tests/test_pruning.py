"""The pruning helpers shared by the scans and the metadata-aggregate planner: picking the
entries of some tiles, a non-empty domain as a box, and whether boxes of tiles or fragments
meet other fragments' non-empty domains (against brute force)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tdbsql.planner.pruning import disjoint_domains, domain_box, isolated_tiles, pick_tiles


def test_pick_tiles_keeps_the_kind_and_the_order():
    values = np.array([10, 11, 12, 13], dtype=np.int32)
    picked = pick_tiles(values, np.array([3, 0, 2]))
    assert isinstance(picked, np.ndarray) and picked.dtype == np.int32
    assert picked.tolist() == [13, 10, 12]
    words = [b"a", memoryview(b"b"), b"c"]
    picked = pick_tiles(words, np.array([2, 1], dtype=np.int64))
    assert isinstance(picked, list) and picked == [b"c", memoryview(b"b")]
    assert pick_tiles(words, np.array([], dtype=np.int64)) == []
    assert pick_tiles(values, np.array([], dtype=np.int64)).tolist() == []


def test_domain_box_makes_bytes_like_bounds_bytes():
    box = domain_box([(np.int64(1), np.int64(5)), (memoryview(b"ab"), bytearray(b"cd"))],
                     ["d", "s"])
    assert box == {"d": [(1, 5)], "s": [(b"ab", b"cd")]}
    assert all(type(v) is bytes for v in box["s"][0])


def test_disjoint_domains():
    dims = ["d", "s"]
    a = [(0, 9), (memoryview(b"a"), memoryview(b"a"))]
    b = [(10, 19), (memoryview(b"a"), memoryview(b"a"))]
    c = [(0, 9), (memoryview(b"b"), memoryview(b"c"))]  # apart from a on s only
    touching = [(9, 12), (memoryview(b"a"), memoryview(b"z"))]  # meets a at d = 9, s = a
    assert disjoint_domains([a, b, c], dims)
    assert disjoint_domains([None, a, None, b], dims)  # an empty fragment is apart from all
    assert not disjoint_domains([a, b, touching], dims)
    assert not disjoint_domains([a, a], dims)
    assert disjoint_domains([], dims) and disjoint_domains([a], dims)


def _meets(x, y) -> bool:
    return all(lo1 <= hi2 and lo2 <= hi1 for (lo1, hi1), (lo2, hi2) in zip(x, y))


_BOX = st.lists(st.tuples(st.integers(0, 20), st.integers(0, 5)), min_size=2, max_size=2).map(
    lambda dims: [(lo, lo + size) for lo, size in dims])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), _BOX), max_size=6), st.lists(_BOX, min_size=1, max_size=5))
def test_box_tests_match_brute_force(domains, tiles):
    dims = ["x", "y"]
    boxes = [d for d in domains if d is not None]
    apart = all(not _meets(p, q) for i, p in enumerate(boxes) for q in boxes[i + 1:])
    assert disjoint_domains(domains, dims) == apart
    mbrs = [(np.array([t[d][0] for t in tiles], np.int64), np.array([t[d][1] for t in tiles],
                                                                     np.int64)) for d in range(2)]
    alone = isolated_tiles(mbrs, dims, domains, len(tiles))
    assert alone.tolist() == [not any(_meets(t, b) for b in boxes) for t in tiles]
