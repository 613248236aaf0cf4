"""String SQL functions, registered into ``functions.REGISTRY``.

In: evaluated arguments and the ``Call``.  Out: an Arrow value.  DuckDB's semantics: NULL in,
NULL out; ``reverse`` keeps grapheme clusters whole (``graphemes``); ``concat`` skips NULLs
(``||`` does not: see the evaluator); ``substr`` is 1-based with DuckDB's negative
start/length rules; ``trim`` without characters removes spaces only; ``lpad``/``rpad`` cut
longer strings to the width.  ``as_text`` prints values as DuckDB's
VARCHAR cast does (also used by CAST and ``||``).
"""

from __future__ import annotations

import functools

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import UnsupportedSql
from . import graphemes, like_match, text_search
from .arrow_calendar import arrow_calendar
from .datetime_ops import Interval, end_of_day
from .functions import per_distinct, python_map, register
from .interval_text import interval_text
from .frame import broadcast
from .list_values import scalar_if_constant
from .value_types import join_strings, kind, null_like, plain, valid_rows

# One string argument in, a string out: (name, aliases, Arrow kernel).
_STRING_FUNCTIONS = (
    ("lower", ("lcase",), pc.utf8_lower), ("upper", ("ucase",), pc.utf8_upper),
)


def _contains(s, pattern: str):
    """contains(s, constant): the LIKE kernel's search for one literal piece
    (``engine.like_match``) -- over 1.5M TPC-H comments 104 ms, Arrow's match_substring 173."""
    return like_match.match(s, ([pattern.encode()] if pattern else [], False, False))


# (name, aliases, the test of a constant pattern, the search for one per row).
_PATTERN_FUNCTIONS = (
    ("starts_with", ("prefix",), pc.starts_with,
     lambda s, p: text_search.affixed(s, p, at_end=False)),
    ("ends_with", ("suffix",), pc.ends_with, lambda s, p: text_search.affixed(s, p, at_end=True)),
    ("contains", (), _contains, text_search.found),
)
_TRIM_FUNCTIONS = (("trim", pc.utf8_trim, str.strip), ("ltrim", pc.utf8_ltrim, str.lstrip),
                   ("rtrim", pc.utf8_rtrim, str.rstrip))


def _on_string(kernel):
    def impl(ctx, s):
        return kernel(ctx.string(s, 0))
    return impl


def _on_pattern(kernel, per_row):
    def impl(ctx, s, pattern):
        pattern, s = ctx.string(pattern, 1), ctx.string(s, 0)
        if not isinstance(pattern, pa.Scalar):
            return per_row(s, pattern)
        text = pattern.as_py()
        if text is None:
            return null_like(s, pa.bool_())
        return kernel(s, pattern=text)
    return impl


def _on_trim(kernel, strip):
    def impl(ctx, s, chars=None):
        """DuckDB's trim without characters removes spaces only (not tabs or newlines)."""
        chars = pa.scalar(" ") if chars is None else ctx.string(chars, 1)
        if not isinstance(chars, pa.Scalar):  # characters per row
            return python_map(strip, pa.string(), ctx.string(s, 0), chars)
        if not chars.is_valid:
            return pa.scalar(None, pa.string())
        return kernel(ctx.string(s, 0), characters=chars.as_py())
    return impl


for _name, _aliases, _kernel in _STRING_FUNCTIONS:
    register(_name, 1, aliases=_aliases)(_on_string(_kernel))
for _name, _aliases, _kernel, _per_row_kernel in _PATTERN_FUNCTIONS:
    register(_name, 2, aliases=_aliases)(_on_pattern(_kernel, _per_row_kernel))
for _name, _kernel, _strip in _TRIM_FUNCTIONS:
    register(_name, 1, 2)(_on_trim(_kernel, _strip))


@register("reverse", 1)
def _reverse(ctx, s):
    """By grapheme clusters, as DuckDB (``é`` of e + a combining accent, flags and emoji
    sequences stay whole): Arrow reverses code points, Python only the rows that hold a
    combining mark, ZWJ, flag, skin tone or Hangul jamo (``graphemes.JOINING``)."""
    s = ctx.string(s, 0)
    if isinstance(s, pa.ChunkedArray):
        s = s.combine_chunks()
    flipped = pc.utf8_reverse(s)
    joining = pc.fill_null(pc.and_(pc.match_substring_regex(s, graphemes.JOINING),
                                   pc.invert(pc.string_is_ascii(s))), False)
    if isinstance(joining, pa.Scalar):
        return python_map(graphemes.reversed_clusters, pa.string(), s) if joining.as_py() \
            else flipped
    if not pc.any(joining).as_py():
        return flipped
    # only the joining rows go through Python, scattered back in their places
    clusters = python_map(graphemes.reversed_clusters, pa.string(), pc.filter(s, joining))
    return pc.replace_with_mask(flipped, joining, clusters)


def text_length(ctx, s):
    """A string's length in characters.  ``length`` is registered once, where lists are known
    too (``functions_lists``), and calls this for anything but a list."""
    return pc.cast(pc.utf8_length(ctx.string(s, 0)), pa.int64())


@register("octet_length", 1, aliases=("strlen",))
def _octet_length(ctx, s):
    s = plain(s)
    if kind(s.type) not in ("string", "binary", "null"):
        raise ctx.error(f"expects a string or blob, got {s.type}", 0)
    return pc.cast(pc.binary_length(ctx.string(s, 0) if kind(s.type) != "binary" else s),
                   pa.int64())


@register("repeat", 2)
def _repeat(ctx, s, count):
    count = pc.max_element_wise(ctx.integer(count, 1), pa.scalar(0, pa.int64()), skip_nulls=False)
    s = ctx.string(s, 0)
    if count.null_count == len(count) if isinstance(count, pa.Array) else \
            not count.is_valid:  # Arrow would build an invalid array
        return null_like(s, pa.string())
    if s.null_count == len(s) if isinstance(s, pa.Array) else not s.is_valid:
        return null_like(s, pa.string())
    _check_repeat_size(ctx, s, count)
    return pc.binary_repeat(s, count)


def _check_repeat_size(ctx, s, count) -> None:
    """DuckDB's error for a repeated string past 2**32 - 1 bytes; UnsupportedSql for results
    whose bytes together outgrow an Arrow string array (2**31 - 1), not Arrow's error."""
    rows = next((len(v) for v in (s, count) if not isinstance(v, pa.Scalar)), 1)
    lengths = broadcast(pc.binary_length(s), rows).to_numpy(zero_copy_only=False)
    counts = broadcast(count, rows).to_numpy(zero_copy_only=False)
    sizes = np.nan_to_num(lengths.astype(np.float64) * counts.astype(np.float64))
    if not len(sizes):  # no rows
        return
    if sizes.max() > _LONGEST - 1:
        row = int(sizes.argmax())  # the exact size, as DuckDB's message has it
        raise ctx.error(f"Cannot create a string of size: '{int(lengths[row]) * int(counts[row])}'"
                        f", the maximum supported string size is: '{_LONGEST - 1}'", 1)
    if sizes.sum() > 2**31 - 1:
        raise UnsupportedSql(f"repeat() results of {sizes.sum():.0f} bytes together (over "
                             "2**31 - 1) are not supported")


def text_concat(ctx, *values):
    """``concat`` of values as text, NULL read as the empty string (registered with the list
    form: ``functions_lists``)."""
    return join_strings([as_text(ctx, v, i) for i, v in enumerate(values)], "replace")


def as_text(ctx, value, index: int):
    """A value as VARCHAR (numbers, dates, booleans print as DuckDB prints them)."""
    try:
        return text_of(value)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        raise ctx.error(f"cannot convert {value.type} to a string", index) from None


def text_of(value):
    """A value (array or scalar) as DuckDB's VARCHAR cast prints it: floats in the shortest
    form that reads back the same, with ``.0`` when whole (``480000.0``, ``1e+20``, as
    Python's ``str``); decimals with every digit of their scale (``0.0000001000``); times
    and timestamps without trailing zeros in the fraction of a second (``10:00:00.5``,
    ``10:00:00``); intervals as ``interval_text``.  Raises Arrow's error for a type without
    text."""
    if isinstance(value, Interval):
        return interval_text(value)
    value = plain(value)
    value_kind = kind(value.type)
    if value_kind == "string":
        return value
    if value_kind == "bool":
        return pc.if_else(value, "true", "false")
    if value_kind == "float":
        return _float_text(value)
    if value_kind == "decimal":  # every digit of the scale, never Arrow's 0E-10
        from .decimal_values import to_text

        return to_text(value)
    if value_kind == "timestamp" and value.type.tz is not None:
        # TIMESTAMP WITH TIME ZONE: DuckDB prints it in its session zone; tdbsql's is UTC
        utc = pc.cast(value, pa.timestamp(value.type.unit))  # the UTC wall clock
        return pc.binary_join_element_wise(text_of(utc), "+00", "")
    if pa.types.is_interval(value.type) or pa.types.is_duration(value.type):
        return interval_text(value)
    if pa.types.is_map(value.type):
        from .list_values import map_text

        return map_text(value, text_of)
    if pa.types.is_struct(value.type):
        from .struct_values import struct_text

        return struct_text(value, text_of)
    if pa.types.is_list(value.type) or pa.types.is_large_list(value.type):
        from .list_values import list_text  # lists print their elements' text

        return list_text(value, text_of)
    if value_kind == "binary":
        return _blob_text(value)
    text = _calendar_text(value) if value_kind in ("date", "timestamp") else \
        pc.cast(value, pa.string())
    if value_kind == "time" or value_kind == "timestamp":
        text = pc.replace_substring_regex(text, r"\.0+$", "")
        text = pc.replace_substring_regex(text, r"(\.\d*[1-9])0+$", r"\1")
    if value_kind == "time":  # Arrow has no text for DuckDB's end of the day
        text = pc.if_else(end_of_day(value), "24:00:00", text)
    return text


def _calendar_text(value):
    """DATEs and TIMESTAMPs as text, years as DuckDB writes them: at least four digits, and
    years up to 0 as BC ones (year 0 is ``0001-12-31 (BC)``, the mark after the date).
    Arrow's text is right for years 1..9999 only: values outside are moved there by whole
    cycles (``arrow_calendar``) and their years written back."""
    calendar = arrow_calendar(value, python=True)
    text = pc.cast(calendar.moved, pa.string())
    if calendar.cycles is None:
        return text
    years = calendar.year()
    after = pc.greater(years, 0)
    digits = pc.utf8_lpad(pc.cast(pc.if_else(after, years, pc.subtract(1, years)), pa.string()),
                          width=4, padding="0")
    return pc.binary_join_element_wise(
        digits, pc.utf8_slice_codeunits(text, 4, 10), pc.if_else(after, "", " (BC)"),
        pc.utf8_slice_codeunits(text, 10), "")


_BLOB_PLAIN = frozenset(range(0x20, 0x7F)) - {0x22, 0x27, 0x5C}  # printed as themselves


def _blob_text(value):
    """BLOBs as DuckDB prints them: printable ASCII bytes as they are (but quotes and the
    backslash), every other byte as ``\\xAA``."""
    def text(blob: bytes) -> str:
        return "".join(chr(b) if b in _BLOB_PLAIN else f"\\x{b:02X}" for b in blob)
    if isinstance(value, pa.Scalar):
        return pa.scalar(text(value.as_py()) if value.is_valid else None, pa.string())
    return pa.array([None if b is None else text(b) for b in value.to_pylist()], pa.string())


def _float_text(value):
    """Floats as text, each as Python prints a float (``1e+16``, ``0.0001``, ``1e-05``, as
    DuckDB); a float32 with its own shortest digits (numpy's) laid out the same way:
    ``123456790.0``, not numpy's ``1.2345679e+08``."""
    single = pa.types.is_float32(value.type)

    def text(number: float) -> str:
        return str(float(str(np.float32(number))) if single else number)
    if isinstance(value, pa.Scalar):
        return pa.scalar(None if not value.is_valid else text(value.as_py()), pa.string())
    return pa.array([None if v is None else text(v) for v in value.to_pylist()], pa.string())


@register("replace", 3)
def _replace(ctx, s, old, new):
    old, new, s = ctx.string(old, 1), ctx.string(new, 2), ctx.string(s, 0)
    if not (isinstance(old, pa.Scalar) and isinstance(new, pa.Scalar)):  # per row
        return python_map(lambda text, a, b: text.replace(a, b) if a else text, pa.string(),
                          s, old, new)
    old_text, new_text = old.as_py(), new.as_py()
    if old_text is None or new_text is None:
        return null_like(s, pa.string())
    if old_text == "":
        return s
    return pc.replace_substring(s, pattern=old_text, replacement=new_text)


@register("strpos", 2, aliases=("instr", "position"))
def _strpos(ctx, s, needle):
    """1-based character position of the first match, 0 if none (``text_search``: a constant
    search string is read by every row, not copied)."""
    return text_search.positions(ctx.string(s, 0), ctx.string(needle, 1))


@register("left", 2)
def _left(ctx, s, count):
    """The first ``count`` characters; a negative count drops that many from the end (all
    of them past -2**32, as no string is longer).  DuckDB's substring underneath for a
    positive count: its range error past 2**32 - 1."""
    count, s = ctx.integer(count, 1), ctx.string(s, 0)
    _check_bounds(ctx, count, "substring length", 1, lowest=None)
    if not isinstance(count, pa.Scalar):  # a count per row
        s, valid, n, (k,) = _per_row(s, count)
        return _slice_rows(s, valid, n, np.zeros_like(n), np.where(k >= 0, k, n + k))
    n = count.as_py()
    if n is None:
        return null_like(s, pa.string())
    # a negative n drops characters from the end
    return pc.utf8_slice_codeunits(s, 0, max(n, -_LONGEST))


@register("right", 2)
def _right(ctx, s, count):
    """The last ``count`` characters; a negative count drops that many from the start (all
    of them past -2**32, as no string is longer; -count would overflow at -2**63)."""
    count, s = ctx.integer(count, 1), ctx.string(s, 0)
    if not isinstance(count, pa.Scalar):  # a count per row
        s, valid, n, (k,) = _per_row(s, count)
        k = np.maximum(k, -_LONGEST)
        return _slice_rows(s, valid, n, np.where(k >= 0, n - k, -k), n)
    n = count.as_py()
    if n is None:
        return null_like(s, pa.string())
    if n == 0:
        return pc.utf8_slice_codeunits(s, 0, 0)
    # a negative n drops characters from the start
    return pc.utf8_slice_codeunits(s, -max(n, -_LONGEST))


@register("substring", 2, 3, aliases=("substr",))
def _substring(ctx, s, start, length=None):
    """DuckDB's substring: 1-based ``start``; a negative start counts from the end; a negative
    length takes the characters before ``start``; start 0 eats one character of length.
    Without a length, the length is DuckDB's default, 2**32 - 1 (so ``substr(s, -2**32)``
    stops one character short of the end, as DuckDB's does)."""
    start = ctx.integer(start, 1)
    length = _SUBSTRING_LENGTH if length is None else ctx.integer(length, 2)
    _check_bounds(ctx, start, "substring offset", 1)
    _check_bounds(ctx, length, "substring length", 2)
    s = ctx.string(s, 0)
    if not (isinstance(start, pa.Scalar) and isinstance(length, pa.Scalar)):
        return _substring_rows(s, start, length)
    begin, count = start.as_py(), length.as_py()
    if begin is None or count is None:
        return null_like(s, pa.string())
    if begin > 0:
        lo, hi = (begin - 1, begin - 1 + count) if count >= 0 else (begin - 1 + count, begin - 1)
        return pc.utf8_slice_codeunits(s, max(lo, 0), max(hi, 0))
    if begin == 0:
        return pc.utf8_slice_codeunits(s, 0, max(count - 1, 0))
    lo, hi = (begin, begin + count) if count >= 0 else (begin + count, begin)
    # Offsets relative to the end: a stop at or past the end means "to the end".
    return _slice_from_end(s, lo, hi)


def character_at(ctx, s, index):
    """``s[i]`` / ``array_extract(s, i)``: ``substring(s, i, 1)``, as DuckDB's."""
    return _substring(ctx, s, index, pa.scalar(1, pa.int64()))


def string_slice(s, begin, end):
    """``s[a:b]`` / ``array_slice(s, a, b)`` as DuckDB slices a string: characters a to b,
    1-based and inclusive, a negative bound counting from the end (-1: the last), 0 as the
    begin the first; None (a bound not written) open; NULL where a bound is NULL."""
    bounds = [v for v in (begin, end) if v is not None]
    if any(isinstance(v, pa.Scalar) and not v.is_valid for v in bounds):
        return null_like(s, pa.string())
    strings, valid, n, numbers = _per_row(s, *bounds)
    b = numbers.pop(0) if begin is not None else np.ones_like(n)
    e = numbers.pop(0) if end is not None else n
    lo = np.where(b > 0, b - 1, np.where(b < 0, n + b, 0))
    hi = np.where(e < 0, n + e + 1, e)
    return scalar_if_constant(_slice_rows(strings, valid, n, lo, hi), s, *bounds)


_SUBSTRING_LENGTH = pa.scalar(2**32 - 1, pa.int64())
_LONGEST = 2**32  # more characters than any string holds


def _check_bounds(ctx, value, what: str, index: int, lowest: int | None = -2**32,
                  highest: int = 2**32 - 1) -> None:
    """DuckDB's range for a substring's offset and length, -2**32 .. 2**32 - 1 by default
    (``lowest`` None: only the upper bound)."""
    if value is None:
        return
    low, high = pc.min_max(value).values() if not isinstance(value, pa.Scalar) else (value,
                                                                                      value)
    if high.is_valid and high.as_py() > highest:
        raise ctx.error(f"{what} outside of supported range (> {highest})", index)
    if lowest is not None and low.is_valid and low.as_py() < lowest:
        raise ctx.error(f"{what} outside of supported range (< {lowest})", index)


def _substring_rows(s, start, length):
    """``_substring`` with a start or length that differs from row to row: each row's
    character range worked out as the constant forms above do (in numpy)."""
    s, valid, n, (begin, count) = _per_row(s, start, length)
    first = np.where(begin > 0, begin - 1, begin)  # 0-based; negative: from the end
    a = np.where(count >= 0, first, first + count)
    b = np.where(count >= 0, first + count, first)
    lo = np.where(begin > 0, np.maximum(a, 0), np.where(begin < 0, n + a, 0))
    hi = np.where(begin > 0, np.maximum(b, 0),
                  np.where(begin < 0, np.where(b >= 0, n, n + b), count - 1))
    return _slice_rows(s, valid, n, lo, hi)


def _per_row(s, *numbers):
    """(``s`` as one string array, where it and every number are valid, its lengths in
    characters, the numbers as int64 arrays with 0 for NULL), all as long as the longest."""
    rows = next((len(v) for v in (s, *numbers) if not isinstance(v, pa.Scalar)), 1)
    s = broadcast(s, rows).cast(pa.string())
    numbers = [broadcast(v, rows) for v in numbers]
    valid = np.logical_and.reduce([valid_rows(v) for v in (s, *numbers)])
    n = pc.fill_null(pc.utf8_length(s), 0).to_numpy().astype(np.int64)
    return s, valid, n, [pc.fill_null(v, 0).to_numpy().astype(np.int64) for v in numbers]


def _slice_rows(s: pa.Array, valid: np.ndarray, n: np.ndarray, lo: np.ndarray,
                hi: np.ndarray) -> pa.Array:
    """Characters ``lo[k]`` up to ``hi[k]`` of each string (clipped to it; NULL where not
    ``valid``): their bytes found in the UTF-8 (``kernels.utf8_slice``) and gathered
    (``kernels.gather``)."""
    from ..kernels.gather import WIDE, gather_bytes
    from ..kernels.utf8_slice import character_bytes

    rows = len(s)
    lo = np.clip(lo, 0, n)
    hi = np.clip(np.maximum(hi, lo), 0, n)
    lo = np.minimum(lo, hi)
    _, offsets, data = s.buffers()
    offsets = np.frombuffer(offsets, np.int32)[s.offset:s.offset + rows + 1].astype(np.int64)
    values = np.zeros(0, np.uint8) if data is None else np.frombuffer(data, np.uint8).copy()
    begins, ends = np.empty(rows, np.int64), np.empty(rows, np.int64)
    character_bytes(values, offsets, lo, hi, begins, ends)
    out_offsets = np.zeros(rows + 1, np.int64)
    np.cumsum(np.where(valid, ends - begins, 0), out=out_offsets[1:])
    out = np.empty(int(out_offsets[-1]) + WIDE, np.uint8)
    gather_bytes(values, begins, np.arange(rows, dtype=np.int64), out_offsets, out)
    return pa.LargeStringArray.from_buffers(
        rows, pa.py_buffer(out_offsets), pa.py_buffer(out[:int(out_offsets[-1])]),
        pa.array(valid).buffers()[1] if not valid.all() else None).cast(pa.string())


def _slice_from_end(s, lo: int, hi: int):
    if hi >= 0:
        return pc.utf8_slice_codeunits(s, lo)
    return pc.utf8_slice_codeunits(s, lo, hi)




@register("lpad", 3)
def _lpad(ctx, s, width, fill):
    return _pad(ctx, s, width, fill, left=True)


@register("rpad", 3)
def _rpad(ctx, s, width, fill):
    return _pad(ctx, s, width, fill, left=False)


def _pad(ctx, s, width, fill, left: bool):
    """Pad to ``width`` characters cycling ``fill``; longer strings are cut to ``width``."""
    width, fill, s = ctx.integer(width, 1), ctx.string(fill, 2), ctx.string(s, 0)
    # DuckDB's width is an INTEGER (a wider one is its binder error), not a gigabyte string
    _check_bounds(ctx, width, "width", 1, -2**31, 2**31 - 1)
    if not (isinstance(width, pa.Scalar) and isinstance(fill, pa.Scalar)):  # per row

        def pad(text, n, cycle):
            n = max(n, 0)
            missing = n - len(text[:n])
            if missing and not cycle:
                raise ctx.error("insufficient padding (empty fill string)", 2)
            padding = (cycle * (missing // len(cycle) + 1))[:missing] if missing else ""
            return padding + text[:n] if left else text[:n] + padding
        return python_map(pad, pa.string(), s, width, fill)
    n, text = width.as_py(), fill.as_py()
    if n is None or text is None:
        return null_like(s, pa.string())
    n = max(n, 0)
    cut = pc.utf8_slice_codeunits(s, 0, n)
    missing = pc.subtract(n, pc.cast(pc.utf8_length(cut), pa.int64()))
    if text == "":
        if pc.any(pc.greater(missing, 0)).as_py():
            raise ctx.error("insufficient padding (empty fill string)", 2)
        return cut
    cycle = (text * (n // len(text) + 1))[:n]
    if isinstance(missing, pa.Scalar):
        padding = pa.scalar(cycle[:missing.as_py()] if missing.is_valid else None, pa.string())
    else:  # one padding string per distinct shortfall, not one per width up to n
        shortfalls = pc.drop_null(pc.unique(missing))
        prefixes = pa.array([cycle[:k] for k in shortfalls.to_pylist()], pa.string())
        padding = pc.take(prefixes, pc.index_in(missing, value_set=shortfalls))
    parts = (padding, cut) if left else (cut, padding)
    return join_strings(list(parts), "emit_null")


# --- split_part, concat_ws, regular expressions, ascii / chr ---------------------------------


@register("split_part", 3)
def _split_part(ctx, s, delimiter, index):
    """The index-th (1-based; negative: from the end) piece of s split at delimiter; '' past
    either end or at 0; an empty delimiter splits into characters (DuckDB's split_part)."""
    def part(text, sep, position):
        pieces = text.split(sep) if sep else list(text) or [""]
        if position == 0 or abs(position) > len(pieces):
            return ""
        return pieces[position - 1] if position > 0 else pieces[position]
    return python_map(part, pa.string(), ctx.string(s, 0), ctx.string(delimiter, 1),
                      ctx.integer(index, 2))


@register("concat_ws", 2, None)
def _concat_ws(ctx, separator, *values):
    """The non-NULL values joined by separator (NULL only when the separator is)."""
    parts = [as_text(ctx, plain(value), index + 1) for index, value in enumerate(values)]
    separator = ctx.string(separator, 0)
    if all(isinstance(v, pa.Scalar) for v in (*parts, separator)):  # Arrow fails on these
        pieces = [v.as_py() for v in parts if v.is_valid]
        return pa.scalar(separator.as_py().join(pieces) if separator.is_valid else None,
                         pa.string())
    # Arrow's "skip" drops the rows whose values are all NULL (the result comes out short):
    # there the first value becomes '', which joins to DuckDB's ''
    all_null = functools.reduce(pc.and_, [pc.is_null(part) for part in parts])
    parts[0] = pc.if_else(all_null, pa.scalar("", pa.string()), parts[0])
    return pc.binary_join_element_wise(*parts, separator, null_handling="skip")


def regex_options(ctx, options, index: int, replacing: bool = False) -> str:
    """DuckDB's regex options string (a constant), read letter by letter as DuckDB does:
    a letter it does not know is an error, and so is 'g' (every match) unless ``replacing``
    (regexp_replace).  'l' (literal), 'p' and 's' (dot matches a newline) are not followed:
    UnsupportedSql, not a different answer."""
    flags = "" if options is None else ctx.constant(ctx.string(options, index), index, "option")
    if flags is None:
        raise ctx.error("Regex options field must not be NULL", index)
    flags = "".join(flags.split())  # DuckDB skips spaces, tabs and newlines there
    for letter in flags:
        if letter not in _DUCKDB_REGEX_OPTIONS:
            raise ctx.error(f"Unrecognized Regex option {letter}", index)
        if letter == "g" and not replacing:
            raise ctx.error("Option 'g' (global replace) is only valid for regexp_replace",
                            index)
    if set(flags) - set("cigmn"):
        raise UnsupportedSql(f"{ctx.name}() option {flags!r} is not supported")
    return flags


_DUCKDB_REGEX_OPTIONS = frozenset("cilmnpsg")


def ignores_case(flags: str) -> bool:
    """Whether regex options ask for case-insensitive matching: the last of 'c' / 'i' wins,
    as DuckDB ('ic' is case-sensitive)."""
    return flags.rfind("i") > flags.rfind("c")


def case_prefix(ctx, options, index: int) -> str:
    """``(?i)`` when DuckDB's regex options (here only ``c`` and ``i``) ask for case-insensitive
    matching (the last of them wins, as DuckDB), else ''."""
    flags = regex_options(ctx, options, index)
    if set(flags) - set("ci"):
        raise UnsupportedSql(f"{ctx.name}() option {flags!r} is not supported")
    return "(?i)" if ignores_case(flags) else ""


def _constant_pattern(ctx, pattern, index: int) -> str | None:
    return ctx.constant(ctx.string(pattern, index), index, "pattern")


def by_regex(ctx, compute, *args, **options):
    """An Arrow regex kernel's result; a pattern RE2 cannot compile is the SQL's error."""
    try:
        return compute(*args, **options)
    except pa.ArrowInvalid as err:
        if "replacement string" in str(err):  # a backslash followed by neither digit nor \
            raise ctx.error(f"invalid replacement string: {str(err).split(': ', 1)[-1]}",
                            2) from None
        if "regular expression" not in str(err):
            raise
        raise ctx.error(f"invalid regular expression: {str(err).split(': ', 1)[-1]}", 1) \
            from None


@register("regexp_matches", 2, 3, aliases=("regexp_like",))
def _regexp_matches(ctx, s, pattern, options=None):
    """Does a match of pattern (RE2, as DuckDB) occur anywhere in s?"""
    if not isinstance(plain(pattern), pa.Scalar):  # once per distinct pattern
        return per_distinct(lambda v, p: _regexp_matches(ctx, v, p, options), [s], [pattern])
    s, regex = ctx.string(s, 0), _constant_pattern(ctx, pattern, 1)
    flags = regex_options(ctx, options, 2)
    if regex is None:
        return null_like(s, pa.bool_())
    return by_regex(ctx, pc.match_substring_regex, s, regex, ignore_case=ignores_case(flags))


@register("regexp_replace", 3, 4)
def _regexp_replace(ctx, s, pattern, replacement, options=None):
    """The first match (every match with option 'g') replaced; ``\\1`` names a group."""
    if not all(isinstance(plain(v), pa.Scalar) for v in (pattern, replacement)):
        return per_distinct(lambda v, p, r: _regexp_replace(ctx, v, p, r, options), [s],
                            [pattern, replacement])
    s, regex = ctx.string(s, 0), _constant_pattern(ctx, pattern, 1)
    new = ctx.constant(ctx.string(replacement, 2), 2, "replacement")
    flags = regex_options(ctx, options, 3, replacing=True)
    if regex is None or new is None:
        return null_like(s, pa.string())
    if ignores_case(flags):
        regex = "(?i)" + regex
    return by_regex(ctx, pc.replace_substring_regex, s, regex, new,
                     max_replacements=None if "g" in flags else 1)


def compiled_regex(ctx, regex: str, index: int = 1):
    """``regex`` compiled by Python's ``re`` (for the groups RE2 in Arrow does not give),
    once RE2 -- DuckDB's engine -- reads it, and rewritten to match what RE2 matches
    (``re2_patterns``): a pattern RE2 refuses (a lookaround, a backreference) is the SQL
    error naming argument ``index``, as DuckDB's, though ``re`` reads it; one RE2 reads and
    ``re`` cannot (``\\pL``) is UnsupportedSql."""
    import re

    from .re2_patterns import python_pattern

    try:
        pc.match_substring_regex(pa.array([""]), regex)
    except pa.ArrowInvalid as err:
        raise ctx.error(f"invalid regular expression: {str(err).split(': ', 1)[-1]}",
                        index) from None
    try:
        return re.compile(python_pattern(regex))
    except re.error as err:
        raise UnsupportedSql(f"{ctx.name}() of a pattern Python's re cannot read "
                             f"({err}): {regex!r}") from None


@register("regexp_extract", 2, 4)
def _regexp_extract(ctx, s, pattern, group=None, options=None):
    """The group-th group (0: the whole match) of the first match; '' without a match (and
    for a NULL group).  Options ``c`` / ``i``: case-sensitive or not."""
    if not isinstance(plain(pattern), pa.Scalar):  # once per distinct pattern
        return per_distinct(lambda v, p: _regexp_extract(ctx, v, p, group, options), [s],
                            [pattern])
    regex = _constant_pattern(ctx, pattern, 1)
    number = 0 if group is None else ctx.constant(group, 2, "group")
    case = case_prefix(ctx, options, 3)
    if regex is None:
        return null_like(plain(s), pa.string())
    if number is None:  # DuckDB: a NULL group extracts '' (its rewrite string is empty)
        return pc.utf8_slice_codeunits(ctx.string(s, 0), 0, 0)
    compiled = compiled_regex(ctx, case + regex)
    if isinstance(number, list) and all(isinstance(n, str) for n in number):
        # DuckDB answers a STRUCT, a field for each name
        raise UnsupportedSql("regexp_extract() with a list of group names (a STRUCT result) "
                             "is not supported")
    if not isinstance(number, int) or number < 0:
        raise ctx.error(f"the group must be a non-negative integer, got {number!r}", 2)

    def extract(text):  # a group past the pattern's is '', as in DuckDB
        found = compiled.search(text)
        return (found.group(number) or "") if found and number <= compiled.groups else ""
    return python_map(extract, pa.string(), ctx.string(s, 0))


@register("ascii", 1)
def _ascii(ctx, s):
    """The code point of the first character (0 for '')."""
    return python_map(lambda text: ord(text[0]) if text else 0, pa.int32(), ctx.string(s, 0))


@register("chr", 1)
def _chr(ctx, code):
    def character(number):
        if not 0 <= number <= 0x10FFFF:
            raise ctx.error(f"invalid Unicode code point {number}", 0)
        if 0xD800 <= number <= 0xDFFF:  # a UTF-16 surrogate: no UTF-8 character
            raise ctx.error(f"Invalid UTF8 Codepoint {number}", 0)
        return chr(number)
    return python_map(character, pa.string(), ctx.integer(code, 0))


from . import functions_format, functions_similarity  # noqa: E402,F401 - format, printf,
# translate, md5, sha256; levenshtein, jaro_similarity ...
from . import functions_regexp_more  # noqa: E402,F401 - regexp_full_match, string_split_regex
