"""BLOBs from and to text, registered into ``functions.REGISTRY``.  NULL in, NULL out, as
DuckDB:

- ``encode(s)``: a string's UTF-8 bytes as a BLOB; ``decode(b)`` the reverse (bytes that are
  not UTF-8 are DuckDB's error).
- ``unhex(s)`` / ``from_hex``: the bytes hex digits spell (an odd count: the first digit
  alone is the first byte); a character that is not a hex digit is an error.
- ``to_base64(b)`` / ``base64``: the bytes (of a BLOB, or a string's) in base64;
  ``from_base64(s)`` the reverse, strictly (a length not a multiple of 4 or a character
  outside the alphabet is DuckDB's error; padding misplaced is an error too, where DuckDB
  reads some such strings).
"""

from __future__ import annotations

import base64
import binascii
import re

import pyarrow as pa

from ..planner.column_names import written_arguments
from .functions import python_map, register
from .value_types import kind, plain

_NOT_BASE64 = re.compile(r"[^A-Za-z0-9+/=]")


def _blob(ctx, value, index: int):
    """A BLOB argument (a string constant reads as one, as DuckDB casts it)."""
    value = plain(value)
    if kind(value.type) in ("binary", "null"):
        return value.cast(pa.binary()) if kind(value.type) == "null" else value
    return ctx.string(value, index).cast(pa.binary())


def _one_written(ctx) -> None:
    """sqlglot gives encode / decode a charset argument ('utf-8') the SQL did not write;
    DuckDB's take none."""
    written = written_arguments(ctx.node)
    if written is not None and len(written) != 1:
        raise ctx.error(f"takes 1 argument(s), got {len(written)}")


@register("encode", 1, 2)
def _encode(ctx, s, _charset=None):
    _one_written(ctx)
    return ctx.string(s, 0).cast(pa.binary())


@register("decode", 1, 2)
def _decode(ctx, blob, _charset=None):
    _one_written(ctx)

    def decoded(data: bytes) -> str:
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise ctx.error("Failure in decode: could not convert blob to UTF8 string, the "
                            "blob contained invalid UTF8 characters", 0) from None
    return python_map(decoded, pa.string(), _blob(ctx, blob, 0))


@register("unhex", 1, aliases=("from_hex",))
def _unhex(ctx, s):
    def unhexed(text: str) -> bytes:
        for char in text:
            if char not in "0123456789abcdefABCDEF":
                raise ctx.error(f"Invalid input for hex digit: {char}", 0)
        return bytes.fromhex(("0" + text) if len(text) % 2 else text)
    return python_map(unhexed, pa.binary(), ctx.string(s, 0))


@register("to_base64", 1, aliases=("base64",))
def _to_base64(ctx, blob):
    return python_map(lambda data: base64.b64encode(data).decode("ascii"), pa.string(),
                      _blob(ctx, blob, 0))


@register("from_base64", 1)
def _from_base64(ctx, s):
    def decoded(text: str) -> bytes:
        prefix = f'Could not decode string "{text}" as base64: '
        if len(text) % 4:
            raise ctx.error(prefix + "length must be a multiple of 4", 0)
        wrong = _NOT_BASE64.search(text)
        if wrong:
            raise ctx.error(prefix + f"invalid byte value '{ord(wrong.group())}' at position "
                            f"{wrong.start()}", 0)
        try:
            return base64.b64decode(text, validate=True)
        except binascii.Error:
            raise ctx.error(prefix + "the padding is misplaced", 0) from None
    return python_map(decoded, pa.binary(), ctx.string(s, 0))
