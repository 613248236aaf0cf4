"""tdbsql: SQL over TileDB arrays, returning Arrow.

Public API only; see ``tdbsql.api`` for the pipeline.
"""

from .errors import (
    ArrayNotFoundError,
    ChecksumMismatchError,
    CorruptArrayError,
    EncryptionKeyError,
    Error,
    SqlError,
    TdbsqlError,
    UnsupportedFormatError,
    UnsupportedSql,
)

__version__ = "0.1.0"


def query(sql, path=None, *, key=None, timestamp=None):
    """Run ``sql`` over the array at ``path`` (named ``array`` in the SQL); a pyarrow.Table."""
    from .api import query as _query

    return _query(sql, path, key=key, timestamp=timestamp)


def open(path, *, timestamp=None, key=None):  # noqa: A001 - mirrors tiledb.open
    """Open an array for reading: schema, fragments, non-empty domain, metadata."""
    from .api import open as _open

    return _open(path, timestamp=timestamp, key=key)


def metadata(path, key=None, timestamp=None):
    """Array metadata at ``timestamp`` as a dict (``key``: the encryption key, if any)."""
    from .api import metadata as _metadata

    return _metadata(path, key, timestamp)


__all__ = [
    "query", "open", "metadata", "Error", "TdbsqlError", "SqlError", "UnsupportedSql",
    "ArrayNotFoundError", "CorruptArrayError", "ChecksumMismatchError", "EncryptionKeyError",
    "UnsupportedFormatError",
]
