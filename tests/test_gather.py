"""Gathering var-sized cells (``kernels.gather`` through ``engine.column.gather_var`` and the
writer's ``FieldBuffer.take``) against Python slicing: cells shorter and longer than the
fast path's ``WIDE`` bytes, empty cells, cells at the very end of the buffer (where a wide
read would run past it), repeated and unsorted indices."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tdbsql.engine.column import Column, gather_var
from tdbsql.kernels.gather import WIDE
from tdbsql.storage.write_buffers import FieldBuffer

cells = st.lists(st.binary(min_size=0, max_size=3 * WIDE), min_size=1, max_size=60)


def _layout(items: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.zeros(len(items) + 1, np.int64)
    np.cumsum([len(c) for c in items], out=offsets[1:])
    values = np.frombuffer(b"".join(items) or b"\0", np.uint8).copy()
    return values, offsets


def _cells(values: np.ndarray, offsets: np.ndarray) -> list[bytes]:
    return [bytes(values[offsets[i]:offsets[i + 1]]) for i in range(len(offsets) - 1)]


@settings(max_examples=200, deadline=None)
@given(cells, st.data())
def test_gathered_cells_are_the_selected_cells(items, data):
    values, offsets = _layout(items)
    picks = data.draw(st.lists(st.integers(0, len(items) - 1), max_size=80))
    indices = np.array(picks, np.int64)
    out, out_offsets = gather_var(values, offsets, indices)
    assert len(out) == out_offsets[-1] == sum(len(items[i]) for i in picks)
    assert _cells(out, out_offsets) == [items[i] for i in picks]
    taken = Column(values, offsets).take(indices)
    assert _cells(taken.values, taken.offsets) == [items[i] for i in picks]
    written = FieldBuffer(values, offsets).take(indices, 1)
    assert _cells(written.values, written.offsets) == [items[i] for i in picks]


def test_a_short_last_cell_is_not_read_past_the_buffer():
    """The last cell ends the buffer: the wide copy would read past it, so it goes byte by
    byte (a read past the end would be garbage, or a crash)."""
    items = [b"x" * 40, b"ab"]
    values, offsets = _layout(items)
    out, out_offsets = gather_var(values, offsets, np.array([1, 0, 1], np.int64))
    assert _cells(out, out_offsets) == [b"ab", b"x" * 40, b"ab"]
