"""The read pipeline in one screen: parse -> plan (sqlglot optimizer) -> prune -> run -> Arrow.

``query(sql, path)`` is the one-liner: the array at ``path`` is the table ``array`` (also its
directory name, or the quoted path itself in FROM); a TileDB group's arrays are tables by their
member names.  ``connect()`` gives a session with several
named tables.  ``open`` gives the schema, fragments, non-empty domain and metadata of an array.
"""

from __future__ import annotations

import os

import pyarrow as pa

from .connection import connect
from .storage.array import Array


def open(path: str, *, timestamp=None, key=None) -> Array:  # noqa: A001 - mirrors tiledb.open
    """Open an array for reading at ``timestamp`` (ms, or a (start, end) window)."""
    return Array(path, timestamp, key)


def query(sql: str, path: str | None = None, *, key=None, timestamp=None,
          memory_mb=None, params=None) -> pa.Table:
    """Run one query over the array at ``path``; returns a ``pyarrow.Table``.  ``params``:
    the values of the query's ``?`` / ``$1`` / ``$name`` placeholders."""
    return connection_for(path, key=key, timestamp=timestamp,
                          memory_mb=memory_mb).sql(sql, params).arrow()


def explain(sql: str, path: str | None = None, *, key=None, timestamp=None,
            analyze: bool = False, memory_mb=None) -> str:
    """The plan of ``sql`` (with ``analyze``: run it and add rows, tiles and time per step)."""
    return connection_for(path, key=key, timestamp=timestamp,
                          memory_mb=memory_mb).explain(sql, analyze=analyze)


def connection_for(path: str | None, *, key=None, timestamp=None, arrays=None,
                   memory_mb=None):
    """A connection with ``path`` as ``array`` (and its directory name) plus ``arrays``
    ({name: path}); ``memory_mb`` as for ``connect``.  A TileDB group at ``path`` gives its
    member arrays instead, by their names and under the group's directory name
    (``lineitem``, ``tpch.lineitem``)."""
    from .storage.group import is_group

    con = connect(memory_mb)
    if path is not None and is_group(os.fspath(path)):
        con.register_group(path, timestamp=timestamp, key=key)
        base = os.path.basename(os.path.normpath(path))
        if base:
            for name in con.tables():
                con.catalog.register(f"{base}.{name}", con.catalog.sources[name])
    elif path is not None:
        con.register("array", path, timestamp=timestamp, key=key)
        base = os.path.basename(os.path.normpath(path))
        if base and base != "array":  # the same source: opened once per query, not again here
            con.catalog.register(base, con.catalog.sources["array"])
    for name, array_path in (arrays or {}).items():
        con.register(name, array_path, key=key)
    return con


def metadata(path: str, key=None, timestamp=None) -> dict:
    """Array metadata at ``timestamp`` as a dict; ``key`` is the encryption key, as everywhere.
    A group's metadata comes alike."""
    from .storage.group import Group, is_group, refuse_key

    if is_group(os.fspath(path)):
        refuse_key(key)
        return Group(path, timestamp).metadata()
    return Array(path, timestamp, key).metadata()


__all__ = ["open", "query", "explain", "metadata", "connect"]
