"""Functions on a string's codes, bytes and Unicode forms, registered into
``functions.REGISTRY``.  NULL in, NULL out, as DuckDB:

- ``unicode`` / ``ord``: the first character's code point (-1 for ''); ``bit_length``: 8
  times the UTF-8 bytes; ``length_grapheme``: the grapheme clusters (``graphemes``).
- ``hex`` / ``to_hex`` and ``bin`` / ``to_binary``: a string's UTF-8 bytes (a BLOB's bytes)
  in upper-case hex or in bits; an integer in hex or bits without leading zeros, a negative
  one as its 64-bit two's complement (a float, which DuckDB reads as a BIGNUM, is
  UnsupportedSql).
- ``url_encode``: every byte but ``A-Z a-z 0-9 - _ . ~`` as ``%XX``; ``url_decode`` the
  reverse (a ``%`` not followed by two hex digits stays, ``+`` stays; bytes that are not
  UTF-8 are DuckDB's error).
- ``strip_accents``: the combining marks of the canonical decomposition dropped (``ñ`` ->
  ``n``, ``Ł`` stays); ``nfc_normalize``: the NFC form.
"""

from __future__ import annotations

import unicodedata
import urllib.parse

import pyarrow as pa
import pyarrow.compute as pc

from ..errors import UnsupportedSql
from . import graphemes
from .functions import python_map, register
from .value_types import is_numeric, kind, plain


@register("unicode", 1, aliases=("ord",))
def _unicode(ctx, s):
    return python_map(lambda text: ord(text[0]) if text else -1, pa.int32(), ctx.string(s, 0))


@register("bit_length", 1)
def _bit_length(ctx, s):
    return pc.multiply(pc.cast(pc.binary_length(ctx.string(s, 0)), pa.int64()), 8)


@register("length_grapheme", 1)
def _length_grapheme(ctx, s):
    return python_map(lambda text: len(graphemes.clusters(text)), pa.int64(), ctx.string(s, 0))


def _on_clusters(ctx, s, numbers, pick):
    """``pick(clusters, *numbers)`` of each string's grapheme clusters, joined back."""
    numbers = [ctx.integer(number, 1 + i) for i, number in enumerate(numbers)]
    return python_map(lambda text, *n: "".join(pick(graphemes.clusters(text), *n)),
                      pa.string(), ctx.string(s, 0), *numbers)


@register("left_grapheme", 2)
def _left_grapheme(ctx, s, count):
    """As ``left`` counts characters: a negative count drops that many from the end."""
    return _on_clusters(ctx, s, [count], lambda clusters, n: clusters[:n])


@register("right_grapheme", 2)
def _right_grapheme(ctx, s, count):
    """As ``right``: a negative count drops that many from the start."""
    return _on_clusters(ctx, s, [count],
                        lambda clusters, n: clusters[max(len(clusters) - n, 0):] if n >= 0
                        else clusters[-n:])


@register("substring_grapheme", 2, 3)
def _substring_grapheme(ctx, s, start, length=None):
    """As ``substring`` (1-based start, negative from the end, a negative length the
    clusters before start, start 0 eating one of length)."""
    length = pa.scalar(2**32 - 1) if length is None else length
    return _on_clusters(ctx, s, [start, length], _cluster_range)


def _cluster_range(clusters: list, begin: int, count: int) -> list:
    total = len(clusters)
    if begin == 0:
        return clusters[:max(count - 1, 0)]
    first = begin - 1 if begin > 0 else begin
    lo, hi = (first, first + count) if count >= 0 else (first + count, first)
    if begin > 0:
        return clusters[max(lo, 0):max(hi, 0)]
    hi = total if hi >= 0 else total + hi  # from the end: a stop at or past it is the end
    return clusters[max(total + lo, 0):max(hi, 0)]


def _digits(ctx, value, base: int):
    """A string's or BLOB's bytes, or an integer, in hex (``base`` 16) or bits (2)."""
    value = plain(value)
    width = 2 if base == 16 else 8
    if pa.types.is_integer(value.type):
        spell = "{:X}" if base == 16 else "{:b}"
        return python_map(lambda n: spell.format(n % 2**64), pa.string(), value)
    if kind(value.type) == "float":
        raise UnsupportedSql(f"{ctx.written_name}() of a float (DuckDB spells its BIGNUM "
                             "bytes) is not supported")
    if is_numeric(value):
        raise ctx.error(f"expects a string, blob or integer, got {value.type}", 0)
    if kind(value.type) != "binary":
        value = ctx.string(value, 0)

    def spelled(data) -> str:
        data = data.encode() if isinstance(data, str) else data
        return "".join(format(byte, f"0{width}{'X' if base == 16 else 'b'}") for byte in data)
    return python_map(spelled, pa.string(), value)


@register("hex", 1, aliases=("to_hex",))
def _hex(ctx, value):
    return _digits(ctx, value, 16)


@register("bin", 1, aliases=("to_binary",))
def _bin(ctx, value):
    return _digits(ctx, value, 2)


@register("url_encode", 1)
def _url_encode(ctx, s):
    return python_map(lambda text: urllib.parse.quote(text, safe="~"), pa.string(),
                      ctx.string(s, 0))


@register("url_decode", 1)
def _url_decode(ctx, s):
    def decode(text: str) -> str:
        try:
            return urllib.parse.unquote(text, errors="strict")
        except UnicodeDecodeError:
            raise ctx.error(f"failed to decode {text!r}: the decoded bytes are not UTF-8",
                            0) from None
    return python_map(decode, pa.string(), ctx.string(s, 0))


@register("strip_accents", 1)
def _strip_accents(ctx, s):
    def strip(text: str) -> str:
        return "".join(char for char in unicodedata.normalize("NFD", text)
                       if not unicodedata.combining(char))
    return python_map(strip, pa.string(), ctx.string(s, 0))


@register("nfc_normalize", 1)
def _nfc_normalize(ctx, s):
    return python_map(lambda text: unicodedata.normalize("NFC", text), pa.string(),
                      ctx.string(s, 0))
