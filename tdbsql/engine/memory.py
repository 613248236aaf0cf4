"""The memory budget of a query.

Scans and aggregations stream, but some results must be held whole: a step's output until the
steps reading it are done, a sort's input, a join's build side, the cells of overlapping
fragments while the newest version of each coordinate is picked.  ``MemoryBudget`` counts
those bytes (Arrow buffer sizes, decoded tiles) as they pile up and stops the query with
``MemoryLimitError`` naming what outgrew the budget -- before the machine starts swapping or
the process is killed, and with the way out in the message.

The budget is ``tdbsql.connect(memory_mb=...)``, else ``$TDBSQL_MEMORY_MB``, else 75% of the
machine's physical memory.  Memory the query only borrows is not counted: the buffers of Arrow
tables registered with ``register_arrow`` (``MemoryBudget.borrow``).  The decoded-tile cache
has a budget of its own (``TDBSQL_TILE_CACHE_MB``).
"""

from __future__ import annotations

import os

from ..errors import InterfaceError, MemoryLimitError
from ..settings import env_number

_MB = 1 << 20


def default_budget_mb() -> int:
    """75% of physical memory (8 GiB where the platform does not say)."""
    try:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return 8192
    return max(64, int(total * 0.75) // _MB)


def budget_mb(memory_mb: float | None = None) -> float:
    """The budget in MB: the argument, else ``$TDBSQL_MEMORY_MB``, else ``default_budget_mb``."""
    if memory_mb is not None:
        if isinstance(memory_mb, bool) or not isinstance(memory_mb, (int, float)) or \
                not memory_mb > 0:
            raise InterfaceError(f"memory_mb={memory_mb!r} is not a positive number")
        return float(memory_mb)
    return env_number("TDBSQL_MEMORY_MB", default_budget_mb(), minimum=1, integer=False)


def frame_bytes(*frames, borrowed: frozenset | set = frozenset()) -> int:
    """Bytes of the buffers of the frames' tables, each buffer counted once (a table under two
    aliases, columns or frames sharing a buffer) and ``borrowed`` buffers (by address) not at
    all."""
    seen: set[int] = set()
    total = 0
    for buffer in _buffers(table for frame in frames for table in frame.tables.values()):
        if buffer.address not in seen and buffer.address not in borrowed:
            seen.add(buffer.address)
            total += buffer.size
    return total


def _buffers(tables):
    for table in {id(t): t for t in tables}.values():
        for column in table.columns:
            for chunk in column.chunks:
                yield from _array_buffers(chunk)


def _array_buffers(array):
    for buffer in array.buffers():  # children's buffers too (lists, structs)
        if buffer is not None:
            yield buffer
    dictionary = getattr(array, "dictionary", None)
    if dictionary is not None:
        yield from _array_buffers(dictionary)


class MemoryBudget:
    """Bytes held by finished steps (``settle``) plus what a running step has gathered so far
    (``check``), against ``limit_mb``."""

    def __init__(self, limit_mb: float):
        self.limit = int(limit_mb * _MB)
        self.held = 0
        self.borrowed: set[int] = set()

    def borrow(self, table) -> None:
        """``table``'s buffers belong to the caller (a registered Arrow table): never counted."""
        self.borrowed.update(buffer.address for buffer in _buffers([table]))

    def bytes_of(self, *frames) -> int:
        """What the frames hold that the query allocated (borrowed buffers left out)."""
        return frame_bytes(*frames, borrowed=self.borrowed)

    def settle(self, frames, after: str) -> None:
        """The frames still held once step ``after`` is done; checked against the budget."""
        self.held = self.bytes_of(*frames)
        self.check(0, after)

    def room(self) -> int:
        """Bytes that still fit next to what is held."""
        return max(0, self.limit - self.held)

    def check(self, gathering: int, what: str) -> None:
        """Refuse ``gathering`` more bytes for ``what`` if they do not fit next to what is held."""
        need = self.held + gathering
        if need > self.limit:
            raise MemoryLimitError(
                f"{what} needs {_mb(need)} of intermediate results, more than the memory budget "
                f"of {_mb(self.limit)}; filter or aggregate earlier, select fewer columns, or "
                f"raise the budget (TDBSQL_MEMORY_MB, or tdbsql.connect(memory_mb=...))")


def step_label(step) -> str:
    """A plan step as the budget's messages name it: ``the sort step 't'``."""
    return f"the {step.type_name.lower()} step {step.name!r}"


def _mb(nbytes: int) -> str:
    if nbytes < _MB / 10:  # a budget of a few KB: "0.0 MB" would name neither amount
        return f"{nbytes / 1024:,.1f} KB"
    return f"{nbytes / _MB:,.1f} MB"
