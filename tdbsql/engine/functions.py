"""Scalar SQL functions (name -> implementation, with arity checks) and the value-typing helpers
the evaluator shares with them.

In: evaluated arguments (Arrow arrays, chunked arrays or scalars) and a ``Call`` that knows the
SQL text and argument spans.  Out: an Arrow value.  Semantics follow DuckDB: NULL in, NULL out;
``round`` rounds half away from zero; ``floor``/``ceil`` return DOUBLE; ``concat`` skips NULLs;
``substr`` is 1-based with DuckDB's negative start/length rules; ``greatest``/``least`` skip
NULLs and order NaN above every number.  Every function runs on pyarrow.compute kernels.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from ..errors import SqlError
from ..planner.parse import span_of
from . import datetime_ops as dto

# --- value typing ---------------------------------------------------------------------------


def plain(value):
    """Dictionary (enumeration) values decoded to their label type; other values unchanged."""
    if pa.types.is_dictionary(value.type):
        return pc.cast(value, value.type.value_type)
    return value


def kind(t: pa.DataType) -> str:
    if pa.types.is_dictionary(t):
        return kind(t.value_type)
    for name, test in (("null", pa.types.is_null), ("bool", pa.types.is_boolean),
                       ("uint", pa.types.is_unsigned_integer), ("int", pa.types.is_integer),
                       ("float", pa.types.is_floating), ("string", _is_string),
                       ("binary", _is_binary), ("date", pa.types.is_date),
                       ("timestamp", pa.types.is_timestamp), ("duration", pa.types.is_duration),
                       ("time", pa.types.is_time)):
        if test(t):
            return name
    return "other"


def _is_string(t) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t)


def _is_binary(t) -> bool:
    return pa.types.is_binary(t) or pa.types.is_large_binary(t)


def is_numeric(value) -> bool:
    return kind(value.type) in ("int", "uint", "float")


def to_array(value, length: int = 1):
    """A plain (non-chunked) Array; scalars become ``length`` copies."""
    if isinstance(value, pa.Scalar):
        return pa.array([value.as_py()] * length, value.type)
    if isinstance(value, pa.ChunkedArray):
        return value.combine_chunks() if value.num_chunks != 1 else value.chunk(0)
    return value


def common_type(types: list[pa.DataType]) -> pa.DataType | None:
    """The type DuckDB would unify ``types`` to (NULL-typed members ignored); None if none."""
    kinds = {kind(t) for t in types} - {"null"}
    real = [t.value_type if pa.types.is_dictionary(t) else t for t in types
            if kind(t) != "null"]
    if not kinds:
        return pa.null()
    if len({str(t) for t in real}) == 1:
        return real[0]
    if kinds <= {"int", "uint"}:
        return pa.uint64() if kinds == {"uint"} else pa.int64()
    if kinds <= {"int", "uint", "float"}:
        return pa.float32() if all(pa.types.is_float32(t) for t in real
                                   if kind(t) == "float") and kinds == {"float"} \
            else pa.float64()
    if kinds == {"string"}:
        return pa.large_string() if any(pa.types.is_large_string(t) for t in real) else pa.string()
    if kinds <= {"date", "timestamp"}:
        units = [t.unit for t in real if pa.types.is_timestamp(t)]
        order = ["s", "ms", "us", "ns"]
        return pa.timestamp(max(units, key=order.index)) if units else pa.date32()
    # A string next to a typed value is read as that type, as DuckDB reads string literals.
    typed = [t for t in real if kind(t) != "string"]
    if "string" in kinds and typed and common_type(typed) is not None:
        return common_type(typed)
    return None


def fit_literals(values: list) -> list:
    """Non-negative integer constants next to an unsigned column take the column's type, so
    ``u > 9223372036854775807`` on a UBIGINT column needs no signed common type."""
    if not any(kind(v.type) == "uint" and not isinstance(v, pa.Scalar) for v in values):
        return values
    return [pa.scalar(v.as_py(), pa.uint64())
            if isinstance(v, pa.Scalar) and kind(v.type) == "int" and v.is_valid
            and v.as_py() >= 0 else v for v in values]


def join_strings(parts: list, null_handling: str):
    """Concatenate string values row by row; strings and large strings mixed become large
    strings (Arrow's kernel wants one type, separator included)."""
    target = pa.large_string() if any(pa.types.is_large_string(p.type) for p in parts) \
        else pa.string()
    parts = [pc.cast(p, target) for p in parts]
    return pc.binary_join_element_wise(*parts, pa.scalar("", target),
                                       null_handling=null_handling, null_replacement="")


def cast_value(value, target: pa.DataType, *, safe_strings: bool = True):
    """Cast with DuckDB's readings: ISO strings to DATE/TIMESTAMP, floats to ints rounding half
    away from zero.  Raises ``ValueError`` (with the bad value) when a value does not convert."""
    value = plain(value)
    if value.type == target or pa.types.is_null(target):
        return value
    if pa.types.is_null(value.type):
        return pa.scalar(None, target) if isinstance(value, pa.Scalar) else \
            pa.nulls(len(value), target)
    source = kind(value.type)
    if source == "string" and isinstance(value, pa.Scalar) and kind(target) in ("date",
                                                                               "timestamp"):
        return _cast_string_scalar(value, target)
    if source == "float" and pa.types.is_integer(target):
        value = pc.round(value, round_mode="half_to_even")  # DuckDB: DOUBLE -> int rounds to even
    if source == "string" and pa.types.is_integer(target):
        return _string_to_int(value, target)
    if source == "string" and kind(target) != "string":
        value = pc.utf8_trim_whitespace(value)
    try:
        return pc.cast(value, target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as err:
        raise ValueError(_first_line(err)) from None


def _cast_string_scalar(value: pa.Scalar, target: pa.DataType):
    if not value.is_valid:
        return pa.scalar(None, target)
    try:
        if pa.types.is_date(target):
            return pa.scalar(dto.parse_date(value.as_py()), target)
        stamp = pa.scalar(dto.parse_timestamp(value.as_py()), pa.timestamp("us"))
        return pc.cast(stamp, target)
    except dto.DatetimeError as err:
        raise ValueError(str(err)) from None


def _string_to_int(value, target):
    """DuckDB reads ' 12 ' and '1.5' (rounded) as integers."""
    trimmed = pc.utf8_trim_whitespace(value)
    try:
        return pc.cast(trimmed, target)
    except pa.ArrowInvalid:
        pass
    try:
        as_float = pc.cast(trimmed, pa.float64())
    except pa.ArrowInvalid as err:
        raise ValueError(_first_line(err)) from None
    try:
        return pc.cast(pc.round(as_float, round_mode="half_to_even"), target)
    except pa.ArrowInvalid as err:
        raise ValueError(_first_line(err)) from None


def _first_line(err: Exception) -> str:
    return str(err).strip().splitlines()[0]


def node_span(node: exp.Expression) -> tuple[int, int] | None:
    """The SQL text span covering a node and everything under it (sqlglot records positions
    on identifiers, literals and function names only)."""
    starts, ends = [], []
    for sub in node.walk():
        meta = getattr(sub, "_meta", None) or {}  # reading .meta would create empty dicts
        if "start" in meta and "end" in meta:
            starts.append(meta["start"])
            ends.append(meta["end"] + 1)
    if starts:
        return min(starts), max(ends)
    # Nodes sqlglot rebuilt (e.g. INTERVAL parts) carry no position: underline the parent.
    return span_of(node) or (node_span(node.parent) if node.parent is not None else None)


# --- calls ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """One function call being evaluated: its SQL name, argument nodes and the SQL text."""

    name: str
    node: exp.Expression
    args: tuple
    sql: str

    def error(self, message: str, index: int | None = None) -> SqlError:
        where = self.args[index] if index is not None and index < len(self.args) else self.node
        return SqlError(f"{self.name}(): {message}", self.sql, node_span(where)
                        or node_span(self.node))

    def constant(self, value, index: int, what: str):
        """A constant argument's Python value (e.g. the digits of round)."""
        if not isinstance(value, pa.Scalar):
            raise self.error(f"the {what} must be a constant", index)
        return value.as_py()

    def string(self, value, index: int):
        value = plain(value)
        if kind(value.type) == "null":
            return pa.scalar(None, pa.string()) if isinstance(value, pa.Scalar) else \
                pa.nulls(len(value), pa.string())
        if kind(value.type) != "string":
            raise self.error(f"expects a string, got {value.type}", index)
        return value

    def number(self, value, index: int):
        value = plain(value)
        if kind(value.type) == "null":
            return pa.scalar(None, pa.float64()) if isinstance(value, pa.Scalar) else \
                pa.nulls(len(value), pa.float64())
        if not is_numeric(value):
            raise self.error(f"expects a number, got {value.type}", index)
        return value

    def double(self, value, index: int):
        return pc.cast(self.number(value, index), pa.float64())

    def integer(self, value, index: int):
        value = self.number(value, index)
        if kind(value.type) == "float":
            raise self.error(f"expects an integer, got {value.type}", index)
        return pc.cast(value, pa.int64())

    def temporal(self, value, index: int):
        value = plain(value)
        if kind(value.type) == "null":
            return pa.scalar(None, pa.timestamp("us"))
        if kind(value.type) == "string" and isinstance(value, pa.Scalar):
            return cast_value(value, pa.timestamp("us"))
        if kind(value.type) not in ("date", "timestamp"):
            raise self.error(f"expects a DATE or TIMESTAMP, got {value.type}", index)
        return value


@dataclass(frozen=True)
class Function:
    name: str
    min_args: int
    max_args: int | None  # None: variadic
    impl: Callable


REGISTRY: dict[str, Function] = {}


def register(name: str, min_args: int, max_args: int | None = -1, aliases=()):
    def wrap(impl):
        top = min_args if max_args == -1 else max_args
        for alias in (name, *aliases):
            REGISTRY[alias] = Function(name, min_args, top, impl)
        return impl
    return wrap


def call(function: Function, ctx: Call, values: list):
    count = len(values)
    if count < function.min_args or (function.max_args is not None
                                     and count > function.max_args):
        if function.max_args is None:
            expected = f"at least {function.min_args}"
        elif function.min_args == function.max_args:
            expected = str(function.min_args)
        else:
            expected = f"{function.min_args} to {function.max_args}"
        raise ctx.error(f"takes {expected} argument(s), got {count}")
    return function.impl(ctx, *values)


# --- numeric --------------------------------------------------------------------------------


@register("abs", 1)
def _abs(ctx, x):
    x = ctx.number(x, 0)
    try:
        return pc.abs_checked(x)
    except pa.ArrowInvalid:
        raise ctx.error("integer overflow") from None


@register("floor", 1)
def _floor(ctx, x):
    return pc.floor(ctx.double(x, 0))


@register("ceil", 1, aliases=("ceiling",))
def _ceil(ctx, x):
    return pc.ceil(ctx.double(x, 0))


@register("trunc", 1)
def _trunc(ctx, x):
    return pc.trunc(ctx.double(x, 0))


@register("round", 1, 2)
def _round(ctx, x, digits=None):
    x = ctx.number(x, 0)
    places = 0 if digits is None else ctx.constant(digits, 1, "number of digits")
    if places is None:
        return pa.scalar(None, x.type) if isinstance(x, pa.Scalar) else pa.nulls(len(x), x.type)
    if not isinstance(places, int):
        raise ctx.error("the number of digits must be an integer", 1)
    if kind(x.type) != "float" and places >= 0:
        return x
    return pc.round(x, ndigits=places, round_mode="half_towards_infinity")


@register("sqrt", 1)
def _sqrt(ctx, x):
    return pc.sqrt(ctx.double(x, 0))


@register("exp", 1)
def _exp(ctx, x):
    return pc.exp(ctx.double(x, 0))


@register("ln", 1)
def _ln(ctx, x):
    return pc.ln(ctx.double(x, 0))


@register("log10", 1)
def _log10(ctx, x):
    return pc.log10(ctx.double(x, 0))


@register("log2", 1)
def _log2(ctx, x):
    return pc.log2(ctx.double(x, 0))


@register("log", 1, 2)
def _log(ctx, base_or_x, x=None):
    """DuckDB: log(x) is log10(x); log(b, x) is log base b."""
    if x is None:
        return _log10(ctx, base_or_x)
    base = ctx.double(base_or_x, 0)
    if isinstance(base, pa.Scalar) and base.as_py() in (2.0, 10.0):
        return (pc.log2 if base.as_py() == 2.0 else pc.log10)(ctx.double(x, 1))
    return pc.divide(pc.ln(ctx.double(x, 1)), pc.ln(base))


@register("power", 2, aliases=("pow",))
def _power(ctx, x, y):
    return pc.power(ctx.double(x, 0), ctx.double(y, 1))


@register("sign", 1)
def _sign(ctx, x):
    x = ctx.number(x, 0)
    signs = pc.sign(x)
    if kind(x.type) == "float":  # DuckDB: sign(NaN) = 0
        signs = pc.if_else(pc.is_nan(x), 0.0, signs)
    return pc.cast(signs, pa.int8())


@register("greatest", 1, None)
def _greatest(ctx, *values):
    return _extreme(ctx, values, greatest=True)


@register("least", 1, None)
def _least(ctx, *values):
    return _extreme(ctx, values, greatest=False)


def _extreme(ctx, values, greatest: bool):
    target = common_type([v.type for v in values])
    if target is None:
        raise ctx.error("arguments have no common type: "
                        + ", ".join(str(v.type) for v in values))
    try:
        values = [cast_value(v, target) for v in values]
    except ValueError as err:
        raise ctx.error(str(err)) from None
    if pa.types.is_null(target):
        return values[0]
    function = pc.max_element_wise if greatest else pc.min_element_wise
    result = function(*values, skip_nulls=True)
    if greatest and kind(target) == "float":  # NaN orders above every number (DuckDB)
        any_nan = None
        for value in values:
            nan = pc.fill_null(pc.is_nan(value), False)
            any_nan = nan if any_nan is None else pc.or_(any_nan, nan)
        result = pc.if_else(any_nan, pa.scalar(float("nan"), target), result)
    return result


# --- strings --------------------------------------------------------------------------------


@register("lower", 1, aliases=("lcase",))
def _lower(ctx, s):
    return pc.utf8_lower(ctx.string(s, 0))


@register("upper", 1, aliases=("ucase",))
def _upper(ctx, s):
    return pc.utf8_upper(ctx.string(s, 0))


@register("length", 1, aliases=("char_length", "character_length", "len"))
def _length(ctx, s):
    return pc.cast(pc.utf8_length(ctx.string(s, 0)), pa.int64())


@register("octet_length", 1, aliases=("strlen",))
def _octet_length(ctx, s):
    s = plain(s)
    if kind(s.type) not in ("string", "binary", "null"):
        raise ctx.error(f"expects a string or blob, got {s.type}", 0)
    return pc.cast(pc.binary_length(ctx.string(s, 0) if kind(s.type) != "binary" else s),
                   pa.int64())


@register("reverse", 1)
def _reverse(ctx, s):
    return pc.utf8_reverse(ctx.string(s, 0))


@register("repeat", 2)
def _repeat(ctx, s, count):
    count = pc.max_element_wise(ctx.integer(count, 1), pa.scalar(0, pa.int64()), skip_nulls=False)
    return pc.binary_repeat(ctx.string(s, 0), count)


@register("trim", 1, 2)
def _trim(ctx, s, chars=None):
    return _trim_side(ctx, s, chars, pc.utf8_trim)


@register("ltrim", 1, 2)
def _ltrim(ctx, s, chars=None):
    return _trim_side(ctx, s, chars, pc.utf8_ltrim)


@register("rtrim", 1, 2)
def _rtrim(ctx, s, chars=None):
    return _trim_side(ctx, s, chars, pc.utf8_rtrim)


def _trim_side(ctx, s, chars, function):
    """DuckDB's trim without characters removes spaces only (not tabs or newlines)."""
    text = " " if chars is None else ctx.constant(ctx.string(chars, 1), 1, "trim characters")
    if text is None:
        return pa.scalar(None, pa.string())
    return function(ctx.string(s, 0), characters=text)


@register("concat", 1, None)
def _concat(ctx, *values):
    """concat() treats NULL as the empty string."""
    return join_strings([as_text(ctx, v, i) for i, v in enumerate(values)], "replace")


def as_text(ctx, value, index: int):
    """A value as VARCHAR (numbers, dates, booleans print as DuckDB prints them)."""
    value = plain(value)
    if kind(value.type) == "string":
        return value
    if kind(value.type) == "bool":
        return pc.if_else(value, "true", "false")
    try:
        return pc.cast(value, pa.string())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        raise ctx.error(f"cannot convert {value.type} to a string", index) from None


@register("starts_with", 2, aliases=("prefix",))
def _starts_with(ctx, s, prefix):
    return _with_pattern(ctx, s, prefix, pc.starts_with)


@register("ends_with", 2, aliases=("suffix",))
def _ends_with(ctx, s, suffix):
    return _with_pattern(ctx, s, suffix, pc.ends_with)


@register("contains", 2)
def _contains(ctx, s, needle):
    return _with_pattern(ctx, s, needle, pc.match_substring)


def _with_pattern(ctx, s, pattern, function):
    text = ctx.constant(ctx.string(pattern, 1), 1, "pattern")
    s = ctx.string(s, 0)
    if text is None:
        return null_like(s, pa.bool_())
    return function(s, pattern=text)


def null_like(value, t: pa.DataType):
    """All-NULL value of type ``t`` shaped like ``value``."""
    if isinstance(value, pa.Scalar):
        return pa.scalar(None, t)
    return pa.nulls(len(value), t)


@register("replace", 3)
def _replace(ctx, s, old, new):
    old_text = ctx.constant(ctx.string(old, 1), 1, "search string")
    new_text = ctx.constant(ctx.string(new, 2), 2, "replacement")
    s = ctx.string(s, 0)
    if old_text is None or new_text is None:
        return null_like(s, pa.string())
    if old_text == "":
        return s
    return pc.replace_substring(s, pattern=old_text, replacement=new_text)


@register("strpos", 2, aliases=("instr", "position"))
def _strpos(ctx, s, needle):
    """1-based character position of the first match, 0 if none."""
    text = ctx.constant(ctx.string(needle, 1), 1, "search string")
    s = ctx.string(s, 0)
    if text is None:
        return null_like(s, pa.int64())
    if text == "":
        return pc.if_else(pc.is_null(s), pa.scalar(None, pa.int64()), pa.scalar(1, pa.int64()))
    pieces = pc.split_pattern(s, pattern=text, max_splits=1)
    found = pc.greater(pc.list_value_length(pieces), 1)
    before = pc.cast(pc.utf8_length(pc.list_element(pieces, 0)), pa.int64())
    return pc.if_else(found, pc.add(before, 1), pa.scalar(0, pa.int64()))


@register("left", 2)
def _left(ctx, s, count):
    n = ctx.constant(ctx.integer(count, 1), 1, "length")
    s = ctx.string(s, 0)
    if n is None:
        return null_like(s, pa.string())
    return pc.utf8_slice_codeunits(s, 0, n)  # a negative n drops characters from the end


@register("right", 2)
def _right(ctx, s, count):
    n = ctx.constant(ctx.integer(count, 1), 1, "length")
    s = ctx.string(s, 0)
    if n is None:
        return null_like(s, pa.string())
    if n == 0:
        return pc.utf8_slice_codeunits(s, 0, 0)
    return pc.utf8_slice_codeunits(s, -n)  # a negative n drops characters from the start


@register("substring", 2, 3, aliases=("substr",))
def _substring(ctx, s, start, length=None):
    """DuckDB's substring: 1-based ``start``; a negative start counts from the end; a negative
    length takes the characters before ``start``; start 0 eats one character of length."""
    begin = ctx.constant(ctx.integer(start, 1), 1, "start")
    count = None if length is None else ctx.constant(ctx.integer(length, 2), 2, "length")
    s = ctx.string(s, 0)
    if begin is None or (length is not None and count is None):
        return null_like(s, pa.string())
    if count is None:
        if begin > 0:
            return pc.utf8_slice_codeunits(s, begin - 1)
        return pc.utf8_slice_codeunits(s, begin) if begin < 0 else s
    if begin > 0:
        lo, hi = (begin - 1, begin - 1 + count) if count >= 0 else (begin - 1 + count, begin - 1)
        return pc.utf8_slice_codeunits(s, max(lo, 0), max(hi, 0))
    if begin == 0:
        return pc.utf8_slice_codeunits(s, 0, max(count - 1, 0))
    lo, hi = (begin, begin + count) if count >= 0 else (begin + count, begin)
    # Offsets relative to the end: a stop at or past the end means "to the end".
    return _slice_from_end(s, lo, hi)


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
    n = ctx.constant(ctx.integer(width, 1), 1, "width")
    text = ctx.constant(ctx.string(fill, 2), 2, "padding")
    s = ctx.string(s, 0)
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
    prefixes = pa.array([cycle[:k] for k in range(n + 1)], pa.string())
    padding = pc.take(prefixes, missing) if not isinstance(missing, pa.Scalar) else \
        prefixes[missing.as_py()] if missing.is_valid else pa.scalar(None, pa.string())
    parts = (padding, cut) if left else (cut, padding)
    return join_strings(list(parts), "emit_null")


# --- date / time ----------------------------------------------------------------------------


def _part_function(part: str):
    def impl(ctx, value):
        return dto.extract(part, ctx.temporal(value, 0))
    return impl


for _name, _part in (("year", "year"), ("month", "month"), ("day", "day"),
                     ("dayofmonth", "day"), ("quarter", "quarter"), ("dayofweek", "dow"),
                     ("isodow", "isodow"), ("dayofyear", "doy"), ("week", "week"),
                     ("weekofyear", "week"), ("hour", "hour"), ("minute", "minute"),
                     ("second", "second"), ("epoch", "epoch"), ("isoyear", "isoyear")):
    register(_name, 1)(_part_function(_part))


@register("date_part", 2, aliases=("datepart",))
def _date_part(ctx, part, value):
    name = ctx.constant(ctx.string(part, 0), 0, "date part")
    try:
        return dto.extract(name, ctx.temporal(value, 1))
    except dto.DatetimeError as err:
        raise ctx.error(str(err), 0) from None


@register("date_trunc", 2, aliases=("datetrunc",))
def _date_trunc(ctx, unit, value):
    name = ctx.constant(ctx.string(unit, 0), 0, "unit")
    try:
        return dto.date_trunc(name, ctx.temporal(value, 1))
    except dto.DatetimeError as err:
        raise ctx.error(str(err), 0) from None


# --- conditional ----------------------------------------------------------------------------


@register("coalesce", 1, None, aliases=("ifnull",))
def _coalesce(ctx, *values):
    values = unify(ctx, values)
    return values[0] if len(values) == 1 else pc.coalesce(*values)


@register("nullif", 2)
def _nullif(ctx, a, b):
    a_cast, b_cast = unify(ctx, (a, b))
    same = pc.fill_null(pc.equal(a_cast, b_cast), False)
    return pc.if_else(same, pa.scalar(None, a_cast.type), a_cast)


def unify(ctx, values):
    """Cast ``values`` to their common type, or raise an SqlError naming the types."""
    values = fit_literals(list(values))
    target = common_type([v.type for v in values])
    if target is None:
        raise ctx.error("arguments have no common type: "
                        + ", ".join(str(v.type) for v in values))
    try:
        return [cast_value(v, target) for v in values]
    except ValueError as err:
        raise ctx.error(str(err)) from None


def float_mod(left, right):
    """``fmod`` (sign of the dividend), NaN for a zero divisor, NULL where either is NULL."""
    a = to_array(left, _length_of(left, right))
    b = to_array(right, _length_of(left, right))
    a_np = pc.fill_null(pc.cast(a, pa.float64()), 0.0).to_numpy()
    b_np = pc.fill_null(pc.cast(b, pa.float64()), 1.0).to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        result = np.fmod(a_np, b_np)
    valid = pc.and_(pc.is_valid(a), pc.is_valid(b))
    out = pa.array(result, pa.float64(), mask=pc.invert(valid).to_numpy(zero_copy_only=False))
    if isinstance(left, pa.Scalar) and isinstance(right, pa.Scalar):
        return out[0]
    return out


def _length_of(*values) -> int:
    for value in values:
        if not isinstance(value, pa.Scalar):
            return len(value)
    return 1
