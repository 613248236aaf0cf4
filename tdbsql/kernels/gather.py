"""Gathering cells: copy var-sized cells selected by an index vector."""

from __future__ import annotations

from . import jit


@jit
def gather_bytes(values, offsets, indices, out_offsets, out):
    """Copy cell ``indices[k]`` (bytes ``offsets[i]..offsets[i+1]`` of ``values``) to
    ``out[out_offsets[k]:out_offsets[k+1]]``; returns the number of cells copied."""
    for k in range(indices.shape[0]):
        cell_idx = indices[k]
        start = offsets[cell_idx]
        length = offsets[cell_idx + 1] - start
        dst = out_offsets[k]
        for byte_idx in range(length):
            out[dst + byte_idx] = values[start + byte_idx]
    return indices.shape[0]
