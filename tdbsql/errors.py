"""One flat error hierarchy, mapped onto the DB-API (PEP 249) exception classes.

Every error a user can meet is a ``TdbsqlError``; the CLI prints ``str(err)`` on one line and
exits 1.  Messages name the file, field and tile where a problem was found, and never contain
an encryption key.
"""

from __future__ import annotations


class Error(Exception):
    """PEP 249 ``Error``: the base of every tdbsql error."""


TdbsqlError = Error


class InterfaceError(Error):
    """PEP 249 ``InterfaceError``."""


class DatabaseError(Error):
    """PEP 249 ``DatabaseError``."""


class DataError(DatabaseError):
    """PEP 249 ``DataError``."""


class OperationalError(DatabaseError):
    """PEP 249 ``OperationalError``."""


class MemoryLimitError(OperationalError):
    """A query would hold more intermediate data than its memory budget
    (``TDBSQL_MEMORY_MB`` / ``tdbsql.connect(memory_mb=...)``)."""


class IntegrityError(DatabaseError):
    """PEP 249 ``IntegrityError``."""


class InternalError(DatabaseError):
    """PEP 249 ``InternalError``."""


class ProgrammingError(DatabaseError):
    """PEP 249 ``ProgrammingError``."""


class NotSupportedError(DatabaseError):
    """PEP 249 ``NotSupportedError``."""


# --- arrays on disk ------------------------------------------------------------------------


class ArrayNotFoundError(OperationalError):
    """The path does not exist or is not a TileDB array."""


class SchemaError(ProgrammingError):
    """A schema TileDB would refuse (the message names the field at fault)."""


class ArrayLockedError(OperationalError):
    """Another process is consolidating or vacuuming the array."""


class CorruptArrayError(DataError):
    """A file of the array is truncated or inconsistent.

    ``where`` names the file, the field and (if known) the tile, e.g.
    ``__fragments/__1_1_x_22/a0.tdb, tile 3: chunk length``.
    """

    def __init__(self, message: str, where: str | None = None):
        self.where = where
        super().__init__(f"{where}: {message}" if where else message)


class ChecksumMismatchError(CorruptArrayError):
    """A CHECKSUM_MD5/SHA256 filter found data that does not match its stored checksum."""


class EncryptionKeyError(OperationalError):
    """The array is encrypted and the key is missing or wrong (the key is never echoed)."""


class UnsupportedFormatError(NotSupportedError):
    """A format version, datatype or filter that tdbsql cannot read."""


class MissingExtraError(NotSupportedError):
    """A feature needs an optional extra that is not installed (e.g. ``tdbsql[webp]``)."""


# --- SQL -----------------------------------------------------------------------------------


class SqlError(ProgrammingError):
    """Wrong SQL: a parse error, an unknown column or table, a type error.

    ``sql`` and ``span`` (start, end offsets) let the message underline the culprit.
    """

    def __init__(self, message: str, sql: str | None = None, span: tuple[int, int] | None = None):
        self.sql = sql
        self.span = span
        self.plain_message = message
        super().__init__(_underline(message, sql, span))


class UnsupportedSql(NotSupportedError):
    """Valid SQL that tdbsql does not run yet; the message names the construct."""


def _underline(message: str, sql: str | None, span: tuple[int, int] | None) -> str:
    if not sql or span is None:
        return message
    start, end = span
    line_start = sql.rfind("\n", 0, start) + 1
    line_end = sql.find("\n", start)
    line_end = len(sql) if line_end == -1 else line_end
    line = sql[line_start:line_end]
    caret = " " * (start - line_start) + "^" * max(1, min(end, line_end) - start)
    return f"{message}\n  {line}\n  {caret}"
