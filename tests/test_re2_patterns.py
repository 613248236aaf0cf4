"""regexp_extract finds groups with Python's re over patterns rewritten to match as RE2 does
(``engine.re2_patterns``): random patterns over random text, against DuckDB (RE2)."""

from __future__ import annotations

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tdbsql
from tdbsql.engine.re2_patterns import python_pattern

_TEXT = st.text(alphabet=["a", "B", "b", "1", "٣", "é", "É", " ", "\n", "_", "Σ", "\u00a0",
                          "\x0b", "ſ", "K"], max_size=8)
_ATOMS = ["a", "b", "é", "1", r"\d", r"\D", r"\w", r"\W", r"\s", r"\S", ".", "[a-c]",
          r"[^\d]", r"[\w\n]", "[[:alpha:]]", "[[:digit:]_]", "[[:space:]]", r"\x{e9}",
          r"\Qa.\E", "Σ", r"[^\w]", r"[\W]", r"[a\D]", r"[^a\D]", r"[é\d]", r"[^\dé]",
          r"[\s]", r"[^\S\d]"]
# no \B: RE2 tests it between the bytes of a UTF-8 character too ('(é|)\B' finds '' inside
# 'ſ' of 'aſé'), which no Python pattern reproduces
_ANCHORS = ["^", "$", r"\b", r"\z", r"\A"]
_FLAGS = ["(?i)", "(?m)", "(?s)", "(?-i)", "(?im)"]


@st.composite
def _patterns(draw, depth: int = 0) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["atom", "atom", "anchor", "flag", "group"]
                                    if depth < 2 else ["atom", "anchor", "flag"]))
        if kind == "atom":
            part = draw(st.sampled_from(_ATOMS))
            part += draw(st.sampled_from(["", "", "*", "+", "?", "{1,2}", "*?"]))
        elif kind == "anchor":
            part = draw(st.sampled_from(_ANCHORS))
        elif kind == "flag":
            part = draw(st.sampled_from(_FLAGS))
        else:
            inner = draw(_patterns(depth + 1))
            if draw(st.booleans()):
                inner += "|" + draw(_patterns(depth + 1))
            part = draw(st.sampled_from(["(", "(?:", "(?i:", "(?m:"])) + inner + ")"
            # no + on a group: a repeated group that can match '' iterates by other rules in
            # Python's backtracking than in RE2 ('(?:a?)+' and the like)
            part += draw(st.sampled_from(["", "", "?"]))
        parts.append(part)
    if draw(st.booleans()) and len(parts) > 1:
        cut = draw(st.integers(1, len(parts) - 1))
        return "".join(parts[:cut]) + "|" + "".join(parts[cut:])
    return "".join(parts)


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


@settings(max_examples=150, deadline=None)
@given(pattern=_patterns(), texts=st.lists(_TEXT, min_size=1, max_size=6))
def test_regexp_extract_matches_what_duckdb_matches(pattern, texts):
    rows = ", ".join(f"({i}, {_quoted(t)})" for i, t in enumerate(texts))
    sql = (f"SELECT i, regexp_extract(s, {_quoted(pattern)}) AS m FROM (VALUES {rows}) "
           f"AS t(i, s) ORDER BY i")
    try:
        want = duckdb.sql(sql).fetchall()
    except duckdb.Error:
        return  # RE2 refuses the pattern; tdbsql refuses it too (test_sqllogic)
    got = tdbsql.query(sql)
    assert [(r["i"], r["m"]) for r in got.to_pylist()] == want, python_pattern(pattern)


@pytest.mark.parametrize("pattern, rewritten", [
    (r"\d+", "[0-9]+"),
    (r"\W", "[^0-9A-Za-z_]"),
    (r"[a\D]", "(?:[a]|[^0-9])"),
    (r"[^a\D]", "(?:(?![a])[0-9])"),
    ("c$", r"c\Z"),
    ("(?m)c$", "(?m:c$)"),
    ("a(?i)b|c", "a(?i:b)|(?i:c)"),
    ("(a(?i)b|c)d", "(a(?i:b)|(?i:c))d"),
    (r"[[:alpha:]\d]", "[A-Za-z0-9]"),
    (r"\Qa.b\E", r"a\.b"),
    ("a{,3}", r"a\{,3}"),
    ("[]a]", r"[\]a]"),
])
def test_rewrites(pattern, rewritten):
    assert python_pattern(pattern) == rewritten
