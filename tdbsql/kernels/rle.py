"""Run-length encoding (TileDB filter 4), both of its on-disk forms.

Fixed-size values: runs of ``value``(``value_size`` bytes) then the run length as 2 bytes
big-endian, runs at most 65535 long.

Var-sized strings (whole tile, offsets folded in): per run ``run length`` (``run_bytes``
big-endian), ``string length`` (``len_bytes`` big-endian), the string bytes.  Decoding also
rebuilds the cell start offsets.

All buffers are uint8 arrays except offsets (uint64); the caller allocates the outputs, sizes
come from the ``*_size`` scans, which return -1 for malformed input.
"""

from __future__ import annotations

import numpy as np

from . import jit

MAX_FIXED_RUN = 65535


@jit
def _load_be(buf, pos, nbytes):
    v = np.uint64(0)
    for k in range(nbytes):
        v = (v << np.uint64(8)) | np.uint64(buf[pos + k])
    return v


@jit
def _store_be(buf, pos, value, nbytes):
    for k in range(nbytes):
        shift = np.uint64(8 * (nbytes - 1 - k))
        buf[pos + k] = np.uint8((value >> shift) & np.uint64(0xFF))


@jit
def _same(buf, a, b, size):
    for k in range(size):
        if buf[a + k] != buf[b + k]:
            return False
    return True


# -- fixed-size values -----------------------------------------------------------------------


@jit
def rle_encode(src, value_size, out):
    """Encode ``src`` (a whole number of values); ``out`` needs ``n * (value_size + 2)`` bytes.
    Returns the number of bytes written."""
    n = src.shape[0] // value_size
    if n == 0:
        return 0
    pos = 0
    run = 1
    for i in range(1, n + 1):
        if i < n and run < MAX_FIXED_RUN:
            if _same(src, i * value_size, (i - 1) * value_size, value_size):
                run += 1
                continue
        prev = (i - 1) * value_size
        for k in range(value_size):
            out[pos + k] = src[prev + k]
        pos += value_size
        out[pos] = run >> 8
        out[pos + 1] = run & 0xFF
        pos += 2
        run = 1
    return pos


@jit
def rle_decoded_size(src, value_size):
    """Bytes ``rle_decode`` will produce, or -1 when ``src`` is not whole runs."""
    run_size = value_size + 2
    if src.shape[0] % run_size != 0:
        return -1
    total = 0
    for r in range(src.shape[0] // run_size):
        pos = r * run_size + value_size
        total += ((np.int64(src[pos]) << 8) | np.int64(src[pos + 1])) * value_size
    return total


@jit
def rle_decode(src, value_size, out):
    """Expand the runs of ``src`` into ``out`` (``rle_decoded_size`` bytes)."""
    run_size = value_size + 2
    dst = 0
    for r in range(src.shape[0] // run_size):
        start = r * run_size
        run = (np.int64(src[start + value_size]) << 8) | np.int64(src[start + value_size + 1])
        for _ in range(run):
            for k in range(value_size):
                out[dst + k] = src[start + k]
            dst += value_size
    return dst


# -- var-sized strings ------------------------------------------------------------------------


@jit
def _string_run_end(data, starts, ends, first):
    """The index after the run of cells equal to cell ``first`` (same length, same bytes): the
    one run test both encoding passes use, so the sizes counted are the sizes written."""
    length = ends[first] - starts[first]
    i = first + 1
    while (i < starts.shape[0] and ends[i] - starts[i] == length
           and _same(data, starts[i], starts[first], length)):
        i += 1
    return i


@jit
def rle_strings_params(data, starts, ends, out):
    """Fill ``out`` with (longest run, longest string, number of runs, bytes of run strings)."""
    max_run = 0
    max_len = 0
    runs = 0
    strings = 0
    i = 0
    while i < starts.shape[0]:
        end = _string_run_end(data, starts, ends, i)
        length = ends[i] - starts[i]
        max_run = max(max_run, end - i)
        max_len = max(max_len, length)
        runs += 1
        strings += length
        i = end
    out[0] = max_run
    out[1] = max_len
    out[2] = runs
    out[3] = strings
    return runs


@jit
def rle_strings_encode(data, starts, ends, run_bytes, len_bytes, out):
    """Write the runs of the strings ``data[starts[i]:ends[i]]``; returns bytes written."""
    pos = 0
    i = 0
    while i < starts.shape[0]:
        end = _string_run_end(data, starts, ends, i)
        s = starts[i]
        length = ends[i] - s
        _store_be(out, pos, np.uint64(end - i), run_bytes)
        _store_be(out, pos + run_bytes, np.uint64(length), len_bytes)
        pos += run_bytes + len_bytes
        for k in range(length):
            out[pos + k] = data[s + k]
        pos += length
        i = end
    return pos


@jit
def rle_strings_scan(src, run_bytes, len_bytes, max_cells, max_bytes, out):
    """Validate var-string runs; fill ``out`` with (cells, string bytes).  Returns 0, or -1 when
    a run header or string runs past the end of ``src`` or the runs exceed ``max_cells`` cells
    or ``max_bytes`` bytes."""
    pos = 0
    cells = 0
    total = 0
    n = src.shape[0]
    while pos < n:
        if pos + run_bytes + len_bytes > n:
            return -1
        run = _load_be(src, pos, run_bytes)
        length = _load_be(src, pos + run_bytes, len_bytes)
        pos += run_bytes + len_bytes
        if length > np.uint64(n - pos) or run > np.uint64(max_cells - cells):
            return -1
        cells += np.int64(run)
        if length > np.uint64(0) and np.int64(run) > (max_bytes - total) // np.int64(length):
            return -1
        total += np.int64(run) * np.int64(length)
        pos += np.int64(length)
    out[0] = cells
    out[1] = total
    return 0


@jit
def rle_strings_decode(src, run_bytes, len_bytes, out, offsets):
    """Expand validated var-string runs into ``out`` and the cell starts into ``offsets``."""
    pos = 0
    dst = 0
    cell = 0
    while pos < src.shape[0]:
        run = np.int64(_load_be(src, pos, run_bytes))
        length = np.int64(_load_be(src, pos + run_bytes, len_bytes))
        pos += run_bytes + len_bytes
        for _ in range(run):
            offsets[cell] = dst
            cell += 1
            for k in range(length):
                out[dst + k] = src[pos + k]
            dst += length
        pos += length
    return cell
