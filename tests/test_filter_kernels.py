"""The filter kernels (``tdbsql.kernels``) against small pure-numpy / pure-Python references."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tdbsql.kernels import bit_width, delta, dictionary, float_scale, rle, shuffle, xor

WIDTHS = [1, 2, 4, 8]
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
SINT = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}
SETTINGS = settings(max_examples=80, deadline=None)


def random_bytes(seed: int, n: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8)


def unsigned_values(seed: int, n: int, width: int, style: str) -> np.ndarray:
    values = random_bytes(seed, n * width).view(UINT[width]).copy()
    if style == "small":
        values = (values % 7).astype(UINT[width])
    elif style == "sorted":
        values = np.sort(values)
    return values


value_args = dict(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 2500),
                  width=st.sampled_from(WIDTHS), style=st.sampled_from(["random", "small", "sorted"]))


# -- shuffles ---------------------------------------------------------------------------------


def ref_byteshuffle(src: np.ndarray, typesize: int) -> np.ndarray:
    n = src.size // typesize
    head = src[: n * typesize].reshape(n, typesize).T.reshape(-1)
    return np.concatenate([head, src[n * typesize :]])


def ref_bitshuffle(src: np.ndarray, typesize: int) -> np.ndarray:
    out = []
    for start in range(0, src.size, 8192):
        block = src[start : start + 8192]
        n = block.size // typesize // 8 * 8
        body = block[: n * typesize].reshape(n, typesize)
        bits = np.unpackbits(body, axis=1, bitorder="little")  # column 8 * byte + bit
        out += [np.packbits(bits.T, axis=1, bitorder="little").reshape(-1), block[n * typesize :]]
    return np.concatenate(out) if out else src.copy()


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 20000), typesize=st.sampled_from(WIDTHS))
def test_byteshuffle(seed, n, typesize):
    src = random_bytes(seed, n)
    out = np.empty_like(src)
    assert shuffle.byteshuffle(src, out, typesize) == n
    assert out.tobytes() == ref_byteshuffle(src, typesize).tobytes()
    back = np.empty_like(src)
    shuffle.byteunshuffle(out, back, typesize)
    assert back.tobytes() == src.tobytes()


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 20000), typesize=st.sampled_from(WIDTHS))
def test_bitshuffle(seed, n, typesize):
    n -= n % 8  # the filter only shuffles whole 8-byte parts of whole elements
    n -= n % typesize
    src = random_bytes(seed, n)
    out = np.empty_like(src)
    shuffle.bitshuffle(src, out, typesize, False)
    assert out.tobytes() == ref_bitshuffle(src, typesize).tobytes()
    back = np.empty_like(src)
    shuffle.bitshuffle(out, back, typesize, True)
    assert back.tobytes() == src.tobytes()


# -- XOR and delta ----------------------------------------------------------------------------


@SETTINGS
@given(**value_args)
def test_xor(seed, n, width, style):
    values = unsigned_values(seed, n, width, style)
    out = np.empty_like(values)
    xor.xor_encode(values, out)
    expected = values.copy()
    expected[1:] = values[1:] ^ values[:-1]
    assert out.tolist() == expected.tolist()
    xor.xor_decode(out)
    assert out.tolist() == values.tolist()
    if n:
        assert np.bitwise_xor.accumulate(expected).tolist() == values.tolist()


@SETTINGS
@given(**value_args)
def test_delta(seed, n, width, style):
    values = unsigned_values(seed, n, width, style)
    out = np.empty_like(values)
    delta.delta_encode(values, out)
    expected = values.copy()
    expected[1:] = values[1:] - values[:-1]  # numpy wraps unsigned arithmetic
    assert out.tolist() == expected.tolist()
    delta.delta_decode(out)
    assert out.tolist() == values.tolist()
    assert np.cumsum(expected, dtype=expected.dtype).tolist() == values.tolist()


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 2500), width=st.sampled_from(WIDTHS),
       signed=st.booleans(), window=st.integers(1, 400))
def test_positive_delta(seed, n, width, signed, window):
    dtype = SINT[width] if signed else UINT[width]
    typed = np.sort(random_bytes(seed, n * width).view(dtype))
    values = typed.view(UINT[width])
    out = np.empty_like(values)
    bias = values.dtype.type(1 << (8 * width - 1) if signed else 0)
    assert delta.positive_delta_encode(values, out, window, bias) == -1
    firsts = values[::window].copy()
    for start in range(0, n, window):
        chunk = [int(v) for v in typed[start : start + window]]
        assert [int(d) for d in out[start : start + window]] == [
            (b - a) % (1 << (8 * width)) for a, b in zip([chunk[0]] + chunk, chunk)]
    back = np.empty_like(values)
    delta.positive_delta_decode(out, back, window, firsts)
    assert back.tolist() == values.tolist()
    if n >= 2 and typed[0] != typed[-1]:
        reverse = values[::-1].copy()
        assert delta.positive_delta_encode(reverse, out, n, bias) >= 0


def ref_double_delta(values: list[int], bits: int) -> tuple[int, list[int]]:
    """(bitsize, words) as TileDB writes them, or (-1, []) when a delta leaves int64."""
    if len(values) <= 2:  # TileDB's compute_bitsize returns 0 before checking any delta
        return 0, []
    deltas = [b - a for a, b in zip(values, values[1:])]
    dds = [b - a for a, b in zip(deltas, deltas[1:])]
    limit = 2**63
    if any(not -limit <= d < limit for d in deltas + dds):
        return -1, []
    largest = max([abs(deltas[0])] + [abs(d) for d in dds])
    bitsize = max(1, largest.bit_length())
    if bitsize >= bits - 1:
        return bitsize, []
    stream = "".join(("1" if d < 0 else "0") + format(abs(d), f"0{bitsize}b") for d in dds)
    stream += "0" * (-len(stream) % 64)
    return bitsize, [int(stream[i : i + 64], 2) for i in range(0, len(stream), 64)]


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 600), width=st.sampled_from(WIDTHS),
       signed=st.booleans(), style=st.sampled_from(["random", "small", "sorted", "smooth"]))
def test_double_delta(seed, n, width, signed, style):
    dtype = np.dtype(SINT[width] if signed else UINT[width])
    if style == "smooth":
        rng = np.random.default_rng(seed)
        typed = (np.cumsum(np.cumsum(rng.integers(-3, 4, n))) % 100).astype(dtype)
    else:
        typed = unsigned_values(seed, n, width, style).view(dtype)
    wide = typed.view(np.int64) if width == 8 else typed.astype(np.int64)
    unsigned64 = width == 8 and not signed
    bitsize, words = ref_double_delta([int(v) for v in typed], 64 if width == 8 else 8 * width)
    assert delta.double_delta_bitsize(wide, unsigned64) == bitsize
    if bitsize < 0 or bitsize >= 8 * width - 1:
        return
    packed = np.zeros(delta.double_delta_words(n, bitsize), dtype=np.uint64)
    assert delta.double_delta_pack(wide, bitsize, packed) == len(words)
    assert packed.tolist() == words
    out = np.zeros(n, dtype=np.uint64)
    out[: min(n, 2)] = typed[:2].view(UINT[width])
    delta.double_delta_unpack(packed, bitsize, out)
    assert out.astype(UINT[width]).tolist() == typed.view(UINT[width]).tolist()


# -- bit width reduction ----------------------------------------------------------------------


def ref_bits(lo: int, hi: int, width: int, signed: bool) -> int:
    """TileDB's reduced width for a window's range (or the full width)."""
    full = 8 * width
    rng = hi - lo
    limit = 2 ** (full - 1) - 1 if signed else 2**full - 1
    if rng + 1 > limit:
        return full
    caps = [(8, 127), (16, 32767), (32, 2**31 - 1)] if signed else [(8, 255), (16, 65535), (32, 2**32 - 1)]
    return next((bits for bits, cap in caps if rng + 1 <= cap), 64)


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 2000), width=st.sampled_from([2, 4, 8]),
       signed=st.booleans(), window=st.integers(1, 200), style=st.sampled_from(["random", "small", "mixed"]))
def test_bit_width(seed, n, width, signed, window, style):
    dtype = np.dtype(SINT[width] if signed else UINT[width])
    typed = unsigned_values(seed, n, width, "small" if style == "small" else "random").view(dtype)
    if style == "mixed":
        typed = typed.copy()
        typed[: n // 2] = (typed[: n // 2].view(UINT[width]) % 300).astype(dtype)
    raw = typed.view(UINT[width])
    nwin = -(-n // window)
    mins = np.zeros(nwin, np.uint64)
    bits = np.zeros(nwin, np.uint8)
    packed = np.zeros(n * width, np.uint8)
    used = bit_width.bit_width_encode(raw.astype(np.uint64), width, signed, window, mins, bits, packed)
    pos = 0
    nbytes = []
    for w, start in enumerate(range(0, n, window)):
        chunk = typed[start : start + window]
        lo, hi = int(chunk.min()), int(chunk.max())
        expect = ref_bits(lo, hi, width, signed)
        assert bits[w] == expect
        if expect < 8 * width:
            assert int(mins[w]) == lo % 2 ** (8 * width)
            stored = packed[pos : pos + chunk.size * expect // 8].view(UINT[expect // 8])
            assert [int(v) for v in stored] == [int(v) - lo for v in chunk]
            pos += chunk.size * expect // 8
        else:
            assert packed[pos : pos + chunk.nbytes].tobytes() == chunk.tobytes()
            pos += chunk.nbytes
        nbytes.append(chunk.nbytes)
    assert used == pos
    out = np.zeros(n * width, np.uint8)
    assert bit_width.bit_width_decode(packed[:used].copy(), mins, bits, np.array(nbytes, np.int64),
                                      width, signed, out) == n * width
    assert out.tobytes() == typed.tobytes()


def test_bit_width_decode_sign_extends_signed_windows():
    # A stored int8 of -1 (0xFF) in an int32 window is -1 + minimum, as TileDB reads it.
    out = np.zeros(4, np.uint8)
    bit_width.bit_width_decode(np.array([0xFF], np.uint8), np.array([10], np.uint64),
                               np.array([8], np.uint8), np.array([4], np.int64), 4, True, out)
    assert out.view(np.int32)[0] == 9
    bit_width.bit_width_decode(np.array([0xFF], np.uint8), np.array([10], np.uint64),
                               np.array([8], np.uint8), np.array([4], np.int64), 4, False, out)
    assert out.view(np.uint32)[0] == 265


# -- RLE --------------------------------------------------------------------------------------


def ref_rle(src: bytes, size: int) -> bytes:
    out, values = [], [src[i : i + size] for i in range(0, len(src), size)]
    i = 0
    while i < len(values):
        run = 1
        while i + run < len(values) and values[i + run] == values[i] and run < 65535:
            run += 1
        out.append(values[i] + run.to_bytes(2, "big"))
        i += run
    return b"".join(out)


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 3000), size=st.integers(1, 12),
       runs=st.integers(1, 70000))
def test_rle_fixed(seed, n, size, runs):
    rng = np.random.default_rng(seed)
    pool = rng.integers(0, 256, (3, size), dtype=np.uint8)
    cells = pool[rng.integers(0, 3, max(1, n // 20))]
    values = np.repeat(cells, rng.integers(1, 40, cells.shape[0]), axis=0)[:n]
    if runs > 60000:
        values = np.repeat(cells[:1], runs, axis=0)  # runs longer than 65535 split
    src = np.ascontiguousarray(values).reshape(-1)
    out = np.empty(src.size // size * (size + 2), np.uint8)
    used = rle.rle_encode(src, size, out)
    assert out[:used].tobytes() == ref_rle(src.tobytes(), size)
    encoded = out[:used].copy()
    assert rle.rle_decoded_size(encoded, size) == src.size
    back = np.empty(src.size, np.uint8)
    rle.rle_decode(encoded, size, back)
    assert back.tobytes() == src.tobytes()
    assert rle.rle_decoded_size(encoded[:-1], size) in (-1, src.size) or used == 0


STRINGS = st.lists(st.sampled_from([b"", b"a", b"bc", b"x" * 300, b"y" * 70000]), max_size=80)


def ref_rle_strings(cells: list[bytes]) -> tuple[int, int, bytes]:
    runs = []
    for cell in cells:
        if runs and runs[-1][1] == cell:
            runs[-1][0] += 1
        else:
            runs.append([1, cell])
    rb = next(b for b in (1, 2, 4, 8) if max(r for r, _ in runs) < 256**b)
    lb = next(b for b in (1, 2, 4, 8) if max(len(c) for _, c in runs) < 256**b)
    return rb, lb, b"".join(r.to_bytes(rb, "big") + len(c).to_bytes(lb, "big") + c for r, c in runs)


def bounds(cells: list[bytes]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    data = np.frombuffer(b"".join(cells), np.uint8).copy()
    starts = np.cumsum([0] + [len(c) for c in cells[:-1]]).astype(np.int64)
    ends = starts + np.array([len(c) for c in cells], np.int64)
    return data, starts, ends


@SETTINGS
@given(cells=STRINGS.filter(len))
def test_rle_strings(cells):
    data, starts, ends = bounds(cells)
    params = np.zeros(4, np.int64)
    rle.rle_strings_params(data, starts, ends, params)
    rb, lb, expected = ref_rle_strings(cells)
    run_bytes = next(b for b in (1, 2, 4, 8) if params[0] < 256**b)
    len_bytes = next(b for b in (1, 2, 4, 8) if params[1] < 256**b)
    assert (run_bytes, len_bytes) == (rb, lb)
    out = np.empty(int(params[2]) * (rb + lb) + int(params[3]), np.uint8)
    assert rle.rle_strings_encode(data, starts, ends, rb, lb, out) == len(expected)
    assert out.tobytes() == expected
    found = np.zeros(2, np.int64)
    assert rle.rle_strings_scan(out, rb, lb, len(cells), data.size, found) == 0
    assert found.tolist() == [len(cells), data.size]
    back, offsets = np.empty(data.size, np.uint8), np.empty(len(cells), np.uint64)
    assert rle.rle_strings_decode(out, rb, lb, back, offsets) == len(cells)
    assert back.tobytes() == data.tobytes() and offsets.tolist() == starts.tolist()
    assert rle.rle_strings_scan(out, rb, lb, len(cells) - 1, data.size, found) == -1
    if out.size > 1:
        assert rle.rle_strings_scan(out[: rb + lb - 1], rb, lb, len(cells), data.size, found) == -1


# -- dictionary -------------------------------------------------------------------------------


@SETTINGS
@given(cells=STRINGS.filter(len), id_bytes=st.sampled_from([1, 2, 4, 8]), len_bytes=st.sampled_from([4, 8]))
def test_dictionary(cells, id_bytes, len_bytes):
    words = list(dict.fromkeys(cells))
    blob = b"".join(len(w).to_bytes(len_bytes, "big") + w for w in words)
    ids = b"".join(words.index(c).to_bytes(id_bytes, "big") for c in cells)
    dict_bytes = np.frombuffer(blob, np.uint8).copy()
    id_arr = np.frombuffer(ids, np.uint8).copy()
    none = np.empty(0, np.int64)
    count = dictionary.dictionary_words(dict_bytes, len_bytes, none, none)
    assert count == len(words)
    starts, lengths = np.empty(count, np.int64), np.empty(count, np.int64)
    dictionary.dictionary_words(dict_bytes, len_bytes, starts, lengths)
    assert [blob[s : s + n] for s, n in zip(starts, lengths)] == words
    total = dictionary.dictionary_decoded_size(id_arr, id_bytes, lengths)
    assert total == sum(map(len, cells))
    out, offsets = np.empty(total, np.uint8), np.empty(len(cells), np.uint64)
    dictionary.dictionary_decode(id_arr, id_bytes, dict_bytes, starts, lengths, out, offsets)
    data, expected_starts, _ = bounds(cells)
    assert out.tobytes() == data.tobytes() and offsets.tolist() == expected_starts.tolist()
    assert dictionary.dictionary_decoded_size(id_arr, id_bytes, lengths[:-1]) in (-1, total)
    assert dictionary.dictionary_words(dict_bytes[:-1], len_bytes, none, none) in (-1, count)


# -- float scale ------------------------------------------------------------------------------


def ref_round(x: np.ndarray) -> np.ndarray:
    a = np.abs(x)
    r = np.floor(a)
    r = np.where(a - r >= 0.5, r + 1, r)
    return np.copysign(r, x)


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 2000), f64=st.booleans(),
       scale=st.sampled_from([0.5, 0.1, 3.0, 1e-3]), offset=st.sampled_from([0.0, -2.5, 1e3]))
def test_float_scale(seed, n, f64, scale, offset):
    ftype = np.float64 if f64 else np.float32
    rng = np.random.default_rng(seed)
    values = (rng.normal(0, 100, n) + np.where(rng.random(n) < 0.3, 0.5, 0)).astype(ftype)
    values[:: 7] = np.round(values[::7]) + 0.5  # exact halves round away from zero
    out = np.empty(n, np.int64)
    float_scale.float_scale_encode(values, scale, offset, out)
    expected = ref_round((values - ftype(offset)) / ftype(scale))
    assert out.tolist() == expected.astype(np.int64).tolist()
    back = np.empty(n, ftype)
    float_scale.float_scale_decode(out, scale, offset, back)
    assert back.tobytes() == (out.astype(ftype).astype(np.float64) * scale + offset).astype(ftype).tobytes()


def test_float_scale_out_of_range_is_int64_min():
    out = np.empty(3, np.int64)
    float_scale.float_scale_encode(np.array([np.nan, 1e300, -1e300]), 1.0, 0.0, out)
    assert out.tolist() == [np.iinfo(np.int64).min] * 3


def _reference_var_chunk_bounds(offsets, nbytes, chunk_size):
    """TileDB's get_var_chunk_sizes, written plainly."""
    if nbytes <= chunk_size:
        return [0]
    starts = [int(o) for o in offsets]
    bounds, current = [0], 0
    for i, start in enumerate(starts):
        size = (starts[i + 1] if i + 1 < len(starts) else nbytes) - start
        if current + size <= chunk_size:
            current += size
        elif current <= chunk_size // 2 or current + size <= chunk_size + chunk_size // 2:
            bounds.append(start + size)
            current = 0
        else:
            bounds.append(start)
            if size > chunk_size:
                if i != len(starts) - 1:
                    bounds.append(start + size)
                current = 0
            else:
                current = size
    return [b for i, b in enumerate(bounds) if b < nbytes or i == 0]


@given(st.lists(st.integers(0, 200_000), min_size=1, max_size=300),
       st.sampled_from([64, 1000, 65536]))
@settings(max_examples=150, deadline=None)
def test_var_chunk_bounds_kernel_matches_reference(sizes, chunk_size):
    from tdbsql.format.filter_pipeline import var_chunk_bounds

    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.uint64)
    nbytes = int(sum(sizes))
    assert var_chunk_bounds(offsets, nbytes, chunk_size) == \
        _reference_var_chunk_bounds(offsets, nbytes, chunk_size)
