"""Imports with Python's cyclic garbage collector paused.

A process's first query imports numpy, pyarrow, sqlglot, numba and most of tdbsql: some
300,000 objects, nearly all kept for the life of the process.  While they are made, the
collector runs every 700 new objects, walking each young object again at every generation it
is promoted to, and now and then walking every object the process has: some 230 collections,
55-60 ms of a 0.5 s first query, that free nothing.

``imports_paused`` runs its body with the collector off.  If the body imported anything, the
objects made meanwhile (with every other tracked object) are then moved to the oldest
generation in one step (``gc.freeze`` and ``gc.unfreeze``), so no young collection walks
them.  Nothing is kept from the collector: garbage among them is freed by the next full
collection, as any long-lived object's is.  When the body imports nothing (every later
query), the pause only turns the collector off and on; nor are objects moved while the
application keeps some frozen itself (``gc.freeze`` before a fork), as unfreezing would
release those too.

The pause nests and is shared by threads: the first to enter turns the collector off (if it
was on) and the last to leave turns it back on.  A collector the application stopped stays
stopped.
"""

from __future__ import annotations

import gc
import sys
import threading
from contextlib import contextmanager

_LOCK = threading.Lock()
_STATE = {"depth": 0, "restart": False, "modules": 0}


@contextmanager
def imports_paused():
    """The body runs with the cyclic garbage collector off (see the module's notes)."""
    with _LOCK:
        if _STATE["depth"] == 0:
            _STATE["restart"] = gc.isenabled()
            _STATE["modules"] = len(sys.modules)
            gc.disable()
        _STATE["depth"] += 1
    try:
        yield
    finally:
        with _LOCK:
            _STATE["depth"] -= 1
            if _STATE["depth"] == 0 and _STATE["restart"]:
                if len(sys.modules) != _STATE["modules"] and not gc.get_freeze_count():
                    gc.freeze()  # every tracked object to the permanent generation ...
                    gc.unfreeze()  # ... and back, into the oldest one: no young walks
                gc.enable()
