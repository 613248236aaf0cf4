"""LIKE patterns of literal pieces and % (engine/like_match.py, kernels/like.py) against
Arrow's match_like on random UTF-8 strings and patterns, NULLs and sliced arrays included;
ESCAPE makes % and _ literal; a pattern with _ is left to Arrow."""

from __future__ import annotations

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
