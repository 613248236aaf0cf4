"""Temporary folders for what a query writes to disk past its memory budget (an ORDER BY's
sorted runs, an aggregate's partitions): in ``TDBSQL_SPILL_DIR``, else the system's temporary
folder; each query removes its own when done (or dropped)."""

from __future__ import annotations

import os
import tempfile

from ..errors import OperationalError


def spill_folder(prefix: str, what: str) -> str:
    """A new folder named ``prefix...``; ``what`` says in an error who needs it and for what
    (``"an ORDER BY past the memory budget sorts on disk, and no folder for its runs"``)."""
    where = os.environ.get("TDBSQL_SPILL_DIR")
    try:
        return tempfile.mkdtemp(prefix=prefix, dir=where)
    except OSError as err:
        place = repr(where) if where else "the temporary folder"
        raise OperationalError(f"{what} can be made in {place}: {err.strerror or err} "
                               "(set TDBSQL_SPILL_DIR)") from None
