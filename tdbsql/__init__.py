"""tdbsql: SQL over TileDB arrays, returning Arrow.

Public API only; see ``tdbsql.api`` for the pipeline.
"""

import importlib

from .errors import (
    ArrayLockedError,
    ArrayNotFoundError,
    ChecksumMismatchError,
    CorruptArrayError,
    DatabaseError,
    DataError,
    EncryptionKeyError,
    Error,
    IntegrityError,
    InterfaceError,
    InternalError,
    MemoryLimitError,
    NotSupportedError,
    OperationalError,
    ProgrammingError,
    SchemaError,
    SqlError,
    TdbsqlError,
    UnsupportedFormatError,
    UnsupportedSql,
)

__version__ = "0.1.0"


def _loaded(module: str, name: str):
    """``name`` from the tdbsql module ``module``, imported on first use (so ``import tdbsql``
    stays light) with the garbage collector paused (``collector_pause``)."""
    from .collector_pause import imports_paused

    with imports_paused():
        return getattr(importlib.import_module(module, __name__), name)


def query(sql, path=None, *, key=None, timestamp=None, memory_mb=None, params=None):
    """Run ``sql`` over the array at ``path`` (named ``array`` in the SQL); a pyarrow.Table.
    ``memory_mb``: the query's memory budget, as for ``connect``; ``params``: the values of
    its ``?`` / ``$1`` (a list) or ``$name`` (a dict) placeholders."""
    return _loaded(".api", "query")(sql, path, key=key, timestamp=timestamp,
                                     memory_mb=memory_mb, params=params)


def connect(memory_mb=None):
    """A connection: register arrays (``con.register(name, path)``) and run ``con.sql(...)``.
    ``memory_mb``: the budget for a query's intermediate results (default
    ``$TDBSQL_MEMORY_MB``, else 75% of physical memory); past it a query stops with
    ``MemoryLimitError``."""
    return _loaded(".connection", "connect")(memory_mb)


def explain(sql, path=None, *, key=None, timestamp=None, analyze=False, memory_mb=None):
    """The plan of ``sql`` over the array at ``path`` as text (``analyze``: run and measure)."""
    return _loaded(".api", "explain")(sql, path, key=key, timestamp=timestamp,
                                       analyze=analyze, memory_mb=memory_mb)


def open(path, *, timestamp=None, key=None):  # noqa: A001 - mirrors tiledb.open
    """Open an array for reading: schema, fragments, non-empty domain, metadata."""
    return _loaded(".api", "open")(path, timestamp=timestamp, key=key)


def metadata(path, key=None, timestamp=None):
    """Array (or group) metadata at ``timestamp`` as a dict (``key``: the encryption key, if
    any)."""
    return _loaded(".api", "metadata")(path, key, timestamp)


def open_group(path, *, timestamp=None):
    """Open a TileDB group at ``timestamp``: ``.members`` (each with its path), ``.tables()``
    (the SQL name of each member array) and ``.metadata()``."""
    return _loaded(".storage.group", "Group")(path, timestamp)


def create_group(path):
    """Create an empty TileDB group at ``path``."""
    return _loaded(".storage.group", "create_group")(path)


def add_member(group, uri, *, name=None):
    """Add the array or group at ``uri`` to ``group`` (under ``name``, if given)."""
    return _loaded(".storage.group", "add_member")(group, uri, name=name)


def remove_member(group, name_or_uri):
    """Remove a member from ``group``, by its name (or its URI / path)."""
    return _loaded(".storage.group", "remove_member")(group, name_or_uri)


def consolidate(path, *, mode="fragments", timestamp=None, key=None, dry_run=False,
                purge_deleted_cells=False):
    """Merge fragments (or fragment metadata, commits, array metadata) as TileDB does."""
    consolidate_ = _loaded(".storage.consolidate", "consolidate")
    return consolidate_(path, mode=mode, timestamp=timestamp, key=key, dry_run=dry_run,
                        purge_deleted_cells=purge_deleted_cells)


def vacuum(path, *, mode="fragments", key=None, dry_run=False):
    """Remove what consolidation made obsolete, exactly as TileDB's vacuum would."""
    return _loaded(".storage.vacuum", "vacuum")(path, mode=mode, key=key, dry_run=dry_run)


def create(path, schema, *, key=None, timestamp=None):
    """Create an empty array at ``path`` with ``schema`` (a ``tdbsql.Schema``)."""
    return _loaded(".storage.writer", "create")(path, schema, key=key, timestamp=timestamp)


def write(path, data, *, timestamp=None, key=None, subarray=None):
    """Write ``data`` (Arrow table/reader, DataFrame or dict of arrays) as one new fragment."""
    return _loaded(".storage.writer", "write")(path, data, timestamp=timestamp, key=key,
                                               subarray=subarray)


def delete(path, where, *, timestamp=None, key=None):
    """Delete the cells matching ``where`` (SQL) with a delete commit TileDB honours; returns a
    ``DeleteCommit``: ``.deleted`` the rows deleted (as DuckDB counts them), ``.name`` the
    commit's file name."""
    return _loaded(".storage.writer", "delete")(path, where, timestamp=timestamp, key=key)


def put_metadata(path, name, value, *, key=None, timestamp=None):
    """Set array metadata ``name`` to ``value``."""
    return _loaded(".storage.writer", "put_metadata")(path, name, value, key=key,
                                                      timestamp=timestamp)


def delete_metadata(path, name, *, key=None, timestamp=None):
    """Remove array metadata ``name``."""
    return _loaded(".storage.writer", "delete_metadata")(path, name, key=key,
                                                         timestamp=timestamp)


def ingest(source, array_path, **options):
    """Create (or append to) an array from a Parquet, CSV or Arrow IPC file; see
    ``tdbsql.ingestion.ingest`` for the options."""
    return _loaded(".ingestion", "ingest")(source, array_path, **options)


_SCHEMA_NAMES = (
    "Schema", "Dim", "Attr", "Enumeration", "FilterList", "Zstd", "Gzip", "Lz4", "Bzip2", "Rle",
    "Dictionary", "DoubleDelta", "Delta", "BitShuffle", "ByteShuffle", "BitWidthReduction",
    "PositiveDelta", "FloatScale", "Xor", "ChecksumMD5", "ChecksumSHA256", "NoOp", "Webp",
)


def __getattr__(name):
    """The schema types load on first use, so ``import tdbsql`` stays light."""
    if name in _SCHEMA_NAMES:
        return _loaded(".schema", name)
    raise AttributeError(f"module 'tdbsql' has no attribute {name!r}")


__all__ = [
    "query", "connect", "explain", "open", "metadata", "consolidate", "vacuum",
    "open_group", "create_group", "add_member", "remove_member",
    "create", "write", "delete", "put_metadata", "delete_metadata", "ingest",
    "ArrayLockedError", "SchemaError", *_SCHEMA_NAMES, "Error", "TdbsqlError", "SqlError", "UnsupportedSql",
    "ArrayNotFoundError", "CorruptArrayError", "ChecksumMismatchError", "EncryptionKeyError",
    "UnsupportedFormatError", "MemoryLimitError",
    # the PEP 249 classes every error above derives from
    "InterfaceError", "DatabaseError", "DataError", "OperationalError", "IntegrityError",
    "InternalError", "ProgrammingError", "NotSupportedError",
]
