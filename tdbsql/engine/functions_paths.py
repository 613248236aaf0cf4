"""DuckDB's path functions, registered into ``functions.REGISTRY``: ``parse_path(p[, sep])``
(the parts, a leading separator its own first part, empty parts dropped), ``parse_dirname``
(the top directory: up to the first separator, ``/`` for a path starting with one),
``parse_dirpath`` (up to the last separator; '' for a file in the root, as DuckDB) and
``parse_filename(p[, trim_extension][, sep])`` (after the last separator, with
``trim_extension`` without the last ``.suffix``).

The separator option is 'forward_slash' (``/``), 'backslash' (``\\``), 'system' (``/``)
or anything else, NULL too, for both.  Options must be constants; a NULL path gives NULL.
"""

from __future__ import annotations

import pyarrow as pa

from .functions import python_map, register
from .value_types import kind, plain

_SEPARATORS = {"forward_slash": "/", "system": "/", "backslash": "\\"}


def _separators(ctx, option, index: int) -> str:
    if option is None:
        return "/\\"
    written = ctx.constant(plain(option), index, "separator option")
    return _SEPARATORS.get(written, "/\\")


def _first(text: str, separators: str) -> int:
    """Where the first separator is, -1 for none."""
    found = [at for at in (text.find(s) for s in separators) if at >= 0]
    return min(found) if found else -1


def _last(text: str, separators: str) -> int:
    return max(text.rfind(s) for s in separators)


def _parts(text: str, separators: str) -> list[str]:
    parts: list[str] = []
    rest = text
    while rest:
        at = _first(rest, separators)
        if at < 0:
            break
        if at > 0:
            parts.append(rest[:at])
        elif not parts:  # a leading separator is the root
            parts.append(rest[0])
            if len(rest) == 1:
                return parts
        rest = rest[at + 1:]
    return parts + [rest] if rest else parts


@register("parse_path", 1, 2)
def _parse_path(ctx, path, separator=None):
    separators = _separators(ctx, separator, 1)
    return python_map(lambda text: _parts(text, separators), pa.list_(pa.string()),
                      ctx.string(path, 0))


@register("parse_dirname", 1, 2)
def _parse_dirname(ctx, path, separator=None):
    separators = _separators(ctx, separator, 1)

    def dirname(text: str) -> str:
        at = _first(text, separators)
        return text[:max(at, 1)] if at >= 0 else ""
    return python_map(dirname, pa.string(), ctx.string(path, 0))


@register("parse_dirpath", 1, 2)
def _parse_dirpath(ctx, path, separator=None):
    separators = _separators(ctx, separator, 1)

    def dirpath(text: str) -> str:
        at = _last(text, separators)
        return text if text in tuple(separators) else text[:max(at, 0)]
    return python_map(dirpath, pa.string(), ctx.string(path, 0))


@register("parse_filename", 1, 3)
def _parse_filename(ctx, path, trim=None, separator=None):
    if trim is not None and separator is None and kind(plain(trim).type) == "string":
        trim, separator = None, trim  # parse_filename(p, sep)
    if trim is not None and kind(plain(trim).type) not in ("bool", "null"):
        raise ctx.error(f"trim_extension must be a BOOLEAN, got {plain(trim).type}", 1)
    trimmed = trim is not None and bool(ctx.constant(plain(trim), 1, "trim_extension"))
    separators = _separators(ctx, separator, 2)

    def filename(text: str) -> str:
        begin = _last(text, separators) + 1
        end = text.rfind(".") if trimmed else -1
        return text[begin:end] if end >= begin else text[begin:]
    return python_map(filename, pa.string(), ctx.string(path, 0))
