"""More of DuckDB's regular expression functions, registered into ``functions.REGISTRY``:
``regexp_full_match`` (the whole string matches), ``string_split_regex`` /
``regexp_split_to_array`` (the pieces between matches) and ``regexp_extract_all`` (every
match's group, NULL where the group took no part), ``regexp_escape`` (RE2's QuoteMeta).  RE2 patterns as DuckDB's (Python's ``re``
for ``regexp_extract_all``, as for ``regexp_extract``), option ``i`` (``regexp_extract_all``:
``c`` or ``i``, its fourth argument); the pattern a constant or a column (once per distinct
pattern).  NULL string or pattern: NULL
(``string_split_regex`` keeps the string whole for a NULL pattern, as DuckDB).  A pattern
that matches the empty string splits and extracts by DuckDB's own rules, which tdbsql does
not follow: UnsupportedSql.
"""

from __future__ import annotations


import pyarrow as pa
import pyarrow.compute as pc

from ..errors import UnsupportedSql
from .functions import per_distinct, python_map, register
from .functions_text import by_regex, case_prefix, compiled_regex, ignores_case, regex_options
from .value_types import null_like, plain


def _refuse_empty_matches(ctx, regex: str) -> None:
    """DuckDB's error for a pattern RE2 cannot compile; UnsupportedSql for one that matches
    the empty string (both found by matching it against '' once)."""
    if by_regex(ctx, pc.match_substring_regex, pa.scalar(""), regex).as_py():
        raise UnsupportedSql(f"{ctx.written_name}() with a pattern that matches the empty "
                             f"string is not supported: {regex!r}")


@register("regexp_full_match", 2, 3)
def _regexp_full_match(ctx, s, pattern, options=None):
    from .glob_match import similar_to

    flags = regex_options(ctx, options, 2)
    pattern = ctx.string(pattern, 1)
    if ignores_case(flags):
        pattern = pc.binary_join_element_wise("(?i)(?:", pattern, ")", "")
    return similar_to(ctx.string(s, 0), pattern, lambda message: ctx.error(message, 1))


@register("string_split_regex", 2, 3,
          aliases=("regexp_split_to_array", "str_split_regex", "regexp_split"))
def _string_split_regex(ctx, s, pattern, options=None):
    s, pattern = ctx.string(s, 0), ctx.string(pattern, 1)
    if not isinstance(pattern, pa.Scalar):
        return per_distinct(lambda v, p: _string_split_regex(ctx, v, p, options), [s], [pattern])
    flags = regex_options(ctx, options, 2)
    if not pattern.is_valid:  # the string whole, as DuckDB
        return python_map(lambda text: [text], pa.list_(pa.string()), s)
    regex = ("(?i)" if ignores_case(flags) else "") + pattern.as_py()
    _refuse_empty_matches(ctx, regex)
    if isinstance(s, pa.Scalar):
        return by_regex(ctx, pc.split_pattern_regex, pa.array([s.as_py()], pa.string()),
                        regex)[0]
    return by_regex(ctx, pc.split_pattern_regex, plain(s).cast(pa.string()), regex)


@register("regexp_extract_all", 2, 4)
def _regexp_extract_all(ctx, s, pattern, group=None, options=None):
    s, pattern = ctx.string(s, 0), ctx.string(pattern, 1)
    if not isinstance(pattern, pa.Scalar):
        return per_distinct(lambda v, p: _regexp_extract_all(ctx, v, p, group, options), [s],
                            [pattern])
    number = 0 if group is None else ctx.constant(group, 2, "group")
    case = case_prefix(ctx, options, 3)
    if not pattern.is_valid or number is None:
        return null_like(s, pa.list_(pa.string()))
    regex = case + pattern.as_py()
    _refuse_empty_matches(ctx, regex)
    compiled = compiled_regex(ctx, regex)
    if not isinstance(number, int) or not 0 <= number <= compiled.groups:
        raise ctx.error(f"the pattern has {compiled.groups} group(s); cannot take group "
                        f"{number!r}", 2)
    return python_map(lambda text: [m.group(number) for m in compiled.finditer(text)],
                      pa.list_(pa.string()), s)


def _escaped(text: str) -> str:
    """RE2's QuoteMeta: every ASCII character but letters, digits and ``_`` after a
    backslash, NUL as ``\\x00``, other characters as they are."""
    return "".join("\\x00" if char == "\0" else
                   "\\" + char if char.isascii() and not (char.isalnum() or char == "_")
                   else char for char in text)


@register("regexp_escape", 1)
def _regexp_escape(ctx, s):
    return python_map(_escaped, pa.string(), ctx.string(s, 0))
