"""String functions that format or digest values, registered into ``functions.REGISTRY``.

In: evaluated arguments and the ``Call``.  Out: VARCHAR values, NULL where any argument is
NULL, as DuckDB:

- ``format(fmt, ...)``: DuckDB's (the fmt library's) ``{}`` placeholders -- ``{}`` takes the
  next argument, ``{1}`` one by position, ``{:>8.2f}`` a format spec (fill, align, sign, ``0``,
  width, precision, type), ``{{`` / ``}}`` braces; a value without spec prints as its VARCHAR
  cast does;
- ``printf(fmt, ...)``: C's ``%`` conversions (flags, width, precision; ``d i u x X o c`` for
  integers, ``x X o u`` reading a negative one as unsigned, ``f e g E G`` for numbers, ``s``
  for strings, dates and booleans, ``%%``);
- a type a conversion does not take is DuckDB's ``Invalid type specifier "s" for formatting a
  value of type int``, a placeholder past the last argument its ``Argument index "1" out of
  range``;
- ``translate(s, from, to)``: each character of ``from`` becomes the one at its place in
  ``to``, or goes when ``to`` is shorter; ``md5`` / ``sha1`` / ``sha256``: the hex digest of
  the UTF-8 bytes (of a BLOB's bytes); ``format_bytes`` / ``formatReadableSize`` and
  ``formatReadableDecimalSize``: a byte count in KiB ... PiB (kB ... PB).
"""

from __future__ import annotations

import hashlib
import math
import re

import pyarrow as pa

from .functions import python_map, register
from .functions_text import text_of
from .value_types import kind, plain

_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([0-9]*)(?::([^{}]*))?\}|[{}]")
_CONVERSION = re.compile(r"%([-+ #0]*)(\*|\d+)?(?:\.(\d+))?([diuxXocfeEgGs%])")
_KINDS = {"int": "int", "uint": "int", "float": "float", "decimal": "float"}


@register("translate", 3)
def _translate(ctx, s, source, target):
    def translate(text, a, b):
        table = {}
        for position, char in enumerate(a):
            if char not in table:
                table[char] = b[position] if position < len(b) else None
        return text.translate({ord(k): v for k, v in table.items()})
    return python_map(translate, pa.string(), ctx.string(s, 0), ctx.string(source, 1),
                      ctx.string(target, 2))


def _digest(algorithm: str, spelled=lambda digest: digest.hexdigest(), out_type=pa.string()):
    """A digest of a string's UTF-8 bytes or a BLOB's, ``spelled`` from hashlib's object."""
    def impl(ctx, value):
        value = plain(value)
        if kind(value.type) != "binary":
            value = ctx.string(value, 0)

        def digest(data):
            data = data.encode() if isinstance(data, str) else data
            return spelled(hashlib.new(algorithm, data))
        return python_map(digest, out_type, value)
    return impl


register("md5", 1)(_digest("md5"))
register("sha256", 1)(_digest("sha256"))
register("sha1", 1, aliases=("sha",))(_digest("sha1"))
# DuckDB's md5_number_upper / _lower: the digest's first / last 8 bytes, little-endian
register("md5_number_upper", 1)(_digest(
    "md5", lambda digest: int.from_bytes(digest.digest()[:8], "little"), pa.uint64()))
register("md5_number_lower", 1)(_digest(
    "md5", lambda digest: int.from_bytes(digest.digest()[8:], "little"), pa.uint64()))

_BYTE_UNITS = {1024: ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"),
               1000: ("bytes", "kB", "MB", "GB", "TB", "PB")}


def _bytes_text(multiplier: int):
    """DuckDB's human-readable sizes: the largest unit (up to PB) that is at least one, one
    decimal truncated (1500 bytes are 1.4 KiB), a negative size with its sign."""
    def impl(ctx, value):
        def text(count: int) -> str:
            sign, digits = "-" if count < 0 else "", [abs(count)]
            for _ in range(5):
                digits.append(digits[-1] // multiplier)
                digits[-2] %= multiplier
            for unit in range(5, 0, -1):
                if digits[unit]:
                    tenths = digits[unit - 1] * 10 // multiplier
                    return f"{sign}{digits[unit]}.{tenths} {_BYTE_UNITS[multiplier][unit]}"
            return f"{sign}{digits[0]} byte" + ("" if abs(count) == 1 else "s")
        return python_map(text, pa.string(), ctx.integer(value, 0))
    return impl


register("format_bytes", 1, aliases=("formatreadablesize",))(_bytes_text(1024))
register("formatreadabledecimalsize", 1)(_bytes_text(1000))


@register("sha2", 2)
def _sha2(ctx, value, bits):
    """sqlglot reads ``sha256(x)`` as ``SHA2(x, 256)``."""
    if ctx.constant(bits, 1, "digest length") != 256:
        raise ctx.error("only sha256 is supported", 1)
    return _digest("sha256")(ctx, value)


@register("format", 1, None)
def _format(ctx, fmt, *values):
    template = ctx.string(fmt, 0)
    return _rows(ctx, template, values, _format_one)


@register("printf", 1, None, aliases=("sprintf",))
def _printf(ctx, fmt, *values):
    template = ctx.string(fmt, 0)
    return _rows(ctx, template, values, _printf_one)


def _rows(ctx, template, values, render):
    """``render(ctx, template, [(value, text, kind)])`` per row; NULL where any is NULL."""
    values = [plain(v) for v in values]
    texts = [text_of(v) if kind(v.type) not in ("int", "uint", "float", "decimal")
             else v for v in values]
    kinds = [_KINDS.get(kind(v.type), "text") for v in values]
    columns = [template] + values + texts

    def one(fmt, *row):
        count = len(values)
        return render(ctx, fmt, list(zip(row[:count], row[count:], kinds)))
    return python_map(one, pa.string(), *columns)


def _format_one(ctx, fmt: str, args: list) -> str:
    out, next_index, position = [], 0, 0
    for match in _PLACEHOLDER.finditer(fmt):
        out.append(fmt[position:match.start()])
        position = match.end()
        token = match.group(0)
        if token in ("{{", "}}"):
            out.append(token[0])
            continue
        if token in ("{", "}"):
            raise ctx.error("Invalid format string: unmatched brace")
        index = int(match.group(1)) if match.group(1) else next_index
        next_index = index + 1
        if index >= len(args):
            raise ctx.error(f'Argument index "{index}" out of range')
        out.append(_formatted(ctx, args[index], match.group(2) or ""))
    out.append(fmt[position:])
    return "".join(out)


def _formatted(ctx, arg, spec: str) -> str:
    value, text, value_kind = arg
    if not spec:
        return _plain_text(value, text, value_kind)
    kind_char = spec[-1] if spec[-1].isalpha() or spec[-1] == "%" else ""
    if value_kind == "text" and kind_char not in ("", "s"):
        raise ctx.error(f'Invalid type specifier "{kind_char}" for formatting a value of '
                        f"type string")
    if value_kind == "int" and kind_char in ("f", "e", "g", "E", "G", "%", "s"):
        raise ctx.error(f'Invalid type specifier "{kind_char}" for formatting a value of '
                        f"type int")
    if value_kind == "float" and kind_char in ("d", "x", "X", "o", "b", "c", "s", "%"):
        raise ctx.error(f'Invalid type specifier "{kind_char}" for formatting a value of '
                        f"type float")
    # a DECIMAL formats as the DOUBLE it is in DuckDB's fmt: Python's Decimal would write
    # ``{:e}`` of 12345.678 as 1.2345678e+4, not 1.234568e+04
    subject = text if value_kind == "text" else float(value) if value_kind == "float" else value
    try:
        return format(subject, spec)
    except ValueError as err:
        raise ctx.error(f"Invalid format specifier: {err}") from None


def _plain_text(value, text, value_kind) -> str:
    if value_kind == "int":
        return str(value)
    if value_kind == "float":
        return repr(float(value))
    return text


def _printf_one(ctx, fmt: str, args: list) -> str:
    out, next_index, position = [], 0, 0
    for match in _CONVERSION.finditer(fmt):
        out.append(fmt[position:match.start()])
        position = match.end()
        flags, width, precision, conversion = match.groups()
        if conversion == "%":
            out.append("%")
            continue
        if width == "*":
            raise ctx.error("printf: a * width is not supported")
        if next_index >= len(args):
            raise ctx.error(f'Argument index "{next_index}" out of range')
        value, text, value_kind = args[next_index]
        next_index += 1
        if "-" in flags and "0" in flags and conversion not in "sc":  # fmt: the zeros win
            flags = flags.replace("-", "")
        spec = "%" + flags + (width or "") + (f".{precision}" if precision is not None else "")
        out.append(_converted(ctx, spec, conversion, value, text, value_kind))
    out.append(fmt[position:])
    return "".join(out)


def _alternate_octal(spec: str, code: str, value: int) -> str:
    """C's ``#`` (where Python's differs): octal digits after one ``0`` (not ``0o``), and
    nothing added to a 0 (not ``0x0``)."""
    if code != "o":
        return (spec + code) % value
    width = re.fullmatch(r"%([-+ 0]*)(\d*)(?:\.(\d+))?", spec)
    flags, size, precision = width.groups()
    digits = f"{value:0{precision or 1}o}"
    digits = digits if digits.startswith("0") else "0" + digits
    return f"%{flags.replace('0', '')}{size}s" % digits


def _converted(ctx, spec: str, conversion: str, value, text, value_kind) -> str:
    if conversion == "s":
        if value_kind != "text":
            raise ctx.error(f'Invalid type specifier "s" for formatting a value of type '
                            f"{value_kind}")
        return (spec + "s") % text
    if conversion in "diuxXoc":
        if value_kind != "int":
            raise ctx.error(f'Invalid type specifier "{conversion}" for formatting a value '
                            f"of type {value_kind if value_kind != 'text' else 'string'}")
        code = {"i": "d", "u": "d"}.get(conversion, conversion)
        if conversion in "xXou":  # C reads the BIGINT as unsigned: -1 is ffffffffffffffff
            value %= 2**64
        if "#" in spec and code == "o" or "#" in spec and value == 0:
            return _alternate_octal(spec.replace("#", ""), code, value)
        return (spec + code) % (chr(value) if code == "c" else value)
    if value_kind in ("text", "int"):  # DuckDB's fmt formats no integer as a float
        raise ctx.error(f'Invalid type specifier "{conversion}" for formatting a value of '
                        f"type {value_kind if value_kind == 'int' else 'string'}")
    return (spec + conversion) % float(value)


_FULL_BLOCK = "\u2588"
_EIGHTHS = " \u258f\u258e\u258d\u258c\u258b\u258a\u2589"  # 0/8 (none) .. 7/8 of a block


@register("bar", 3, 4)
def _bar(ctx, x, low, high, width=None):
    """A bar of ``width`` (80) cells filled (x - low) / (high - low) of the way, in eighths
    of a block, padded with spaces: empty at or below low (or for a NaN), full at or past
    high; DuckDB's errors for a width outside 1 .. 1000."""
    def drawn(value: float, least: float, most: float, cells: float) -> str:
        if not math.isfinite(cells):
            raise ctx.error("Max bar width must not be NaN or infinity", 3)
        if not 1 <= cells <= 1000:
            raise ctx.error(f"Max bar width must be {'>= 1' if cells < 1 else '<= 1000'}", 3)
        if math.isnan(value) or math.isnan(least) or math.isnan(most) or value <= least:
            length = 0.0
        else:
            length = cells if value >= most else cells * (value - least) / (most - least)
        if not math.isfinite(length):
            raise ctx.error("Bar width must not be NaN or infinity")
        eighths = int(length * 8)
        text = _FULL_BLOCK * (eighths // 8) + (_EIGHTHS[eighths % 8] if eighths % 8 else "")
        return text.ljust(int(cells))
    cells = pa.scalar(80.0) if width is None else ctx.double(width, 3)
    return python_map(drawn, pa.string(), ctx.double(x, 0), ctx.double(low, 1),
                      ctx.double(high, 2), cells)
