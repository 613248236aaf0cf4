"""The read pipeline in one screen: parse -> bind -> prune -> scan -> Arrow.

``query(sql, path)`` names the array ``array`` (or by its directory name, or by a quoted path in
FROM).  ``open`` gives the schema, fragments, non-empty domain and metadata of an array.
"""

from __future__ import annotations

import os

import pyarrow as pa
from sqlglot import exp

from .errors import SqlError
from .planner.parse import parse, span_of
from .planner.select import bind_select, table_ref
from .storage.array import Array


def open(path: str, *, timestamp=None, key=None) -> Array:  # noqa: A001 - mirrors tiledb.open
    """Open an array for reading at ``timestamp`` (ms, or a (start, end) window)."""
    return Array(path, timestamp, key)


def query(sql: str, path: str | None = None, *, key=None, timestamp=None) -> pa.Table:
    """Run one SELECT over the array at ``path``; returns a ``pyarrow.Table``."""
    tree = parse(sql)
    ref = table_ref(tree, sql)
    target = _resolve_table(ref.name, path, sql, tree)
    window = ref.window if ref.window is not None else timestamp
    if isinstance(window, tuple) and window[0] is None:
        window = window[1]
    array = Array(target, window, key)
    plan = bind_select(tree, array.schema, sql)
    from .engine.execute import execute

    return execute(plan, array, sql)


def metadata(path: str, key=None, timestamp=None) -> dict:
    """Array metadata at ``timestamp`` as a dict; ``key`` is the encryption key, as everywhere."""
    return Array(path, timestamp, key).metadata()


def _resolve_table(name: str, path: str | None, sql: str, tree) -> str:
    if path is not None:
        base = os.path.basename(os.path.normpath(path))
        if name in ("array", base) or os.path.normpath(name) == os.path.normpath(path):
            return path
    if os.path.isdir(name):
        return name
    table = tree.find(exp.Table)
    known = ["array"] + ([os.path.basename(os.path.normpath(path))] if path else [])
    raise SqlError(f"unknown table {name!r}: the array is named {' or '.join(map(repr, known))}",
                   sql, span_of(table) if table is not None else None)

__all__ = ["open", "query", "metadata"]
