"""LIKE patterns of literal pieces and % (engine/like_match.py, kernels/like.py) against
Arrow's match_like on random UTF-8 strings and patterns, NULLs and sliced arrays included;
ESCAPE makes % and _ literal; a pattern with _ is left to Arrow."""

from __future__ import annotations

import numpy as np
import pytest
import pyarrow as pa
import pyarrow.compute as pc
from hypothesis import given, settings
from hypothesis import strategies as st

from tdbsql.engine import like_match

_TEXT = st.text(alphabet="abé%", max_size=7)


@settings(max_examples=300, derandomize=True, deadline=None)
@given(strings=st.lists(st.none() | st.text(alphabet="abé", max_size=8), max_size=30),
       pattern=_TEXT, start=st.integers(0, 5))
def test_pieces_match_as_arrow_does(strings, pattern, start):
    values = pa.array(strings, pa.string()).slice(min(start, len(strings)))
    got = like_match.match(values, like_match.pieces(pattern, None))
    assert got.equals(pc.match_like(values, pattern))


def test_escape_and_underscore():
    assert like_match.pieces("a_b", None) is None
    assert like_match.pieces("a!%b%", "!") == ([b"a%b"], True, False)
    assert like_match.pieces("%a!_", "!") == ([b"a_"], False, True)
    values = pa.array(["a%bc", "axbc", "a_", None])
    assert like_match.match(values, like_match.pieces("a!%b%", "!")).to_pylist() == \
        [True, False, False, None]
    assert like_match.match(values, like_match.pieces("", None)).to_pylist() == \
        [False, False, False, None]
    assert like_match.match(pa.array(["", "x"]), like_match.pieces("", None)).to_pylist() == \
        [True, False]
    assert like_match.match(pa.scalar("abc"), like_match.pieces("%b%", None)).as_py() is True
    assert like_match.match(pa.scalar(None, pa.string()),
                            like_match.pieces("%b%", None)).as_py() is None


_PIECES = st.lists(st.text(alphabet="abcé", min_size=1, max_size=4), min_size=1, max_size=3)


@settings(max_examples=400, derandomize=True, deadline=None)
@given(strings=st.lists(st.text(alphabet="abcé", max_size=5)
                        | st.text(alphabet="abcé", min_size=30, max_size=80), max_size=40),
       shape=st.tuples(st.booleans(), _PIECES, st.booleans()),
       keep=st.lists(st.booleans(), min_size=40, max_size=40))
def test_rows_left_out_stay_false_and_long_strings_match(strings, shape, keep):
    """Pieces between ``%`` (the buffer-wide search takes a first middle piece of up to three
    bytes), short strings and long ones (several of its 32-byte blocks), and rows an earlier
    test dropped: those stay False, the others are Arrow's answer."""
    anchored_start, parts, anchored_end = shape
    pattern = ("" if anchored_start else "%") + "%".join(parts) + ("" if anchored_end else "%")
    values = pa.array(strings, pa.string())
    data = np.frombuffer(values.buffers()[2] or b"\0", np.uint8).copy()
    offsets = np.frombuffer(values.buffers()[1], np.int32)[:len(strings) + 1].astype(np.int64)
    mask = np.array(keep[:len(strings)], bool)
    got = like_match.Pattern.of(*like_match.pieces(pattern, None)).matches(data, offsets, mask)
    want = np.array(pc.match_like(values, pattern).to_pylist(), bool) & mask
    assert got.tolist() == want.tolist()


@pytest.mark.parametrize("strings, pattern", [
    (["xa", "b", "", "a"], "%a%"),       # a hit on the last byte of the string before
    (["aa", "a", "aaa"], "%aa%a%"),      # the next piece starts after the first one
    (["ab" * 40 + "c", "c", "cab"], "%c%ab"),
    (["é", "xé", "e"], "%é%"),           # two bytes: the hit may straddle two strings
    (["a", "ba"], "a%"),                 # anchored pieces keep their own search
])
def test_buffer_wide_search_at_string_bounds(strings, pattern):
    values = pa.array(strings)
    got = like_match.match(values, like_match.pieces(pattern, None))
    assert got.equals(pc.match_like(values, pattern))
