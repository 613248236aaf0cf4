"""Values worked out once per object, for objects that are themselves shared: a schema or a
fragment's metadata read again from unchanged files is the same object
(``storage.parsed_files``), so what is derived from it can be kept with it."""

from __future__ import annotations

import threading


class ByIdentity:
    """Values worked out once per object (its newest ``kept``), each kept with its object so
    that the object's id stays its own.  Safe to share between threads (a value may be worked
    out twice, once on each)."""

    def __init__(self, kept: int):
        self.kept = kept
        self._found: dict[int, tuple] = {}
        self._lock = threading.Lock()

    def get(self, key: object, compute):
        found = self._found.get(id(key))
        if found is not None and found[0] is key:
            return found[1]
        value = compute()
        with self._lock:
            if len(self._found) >= self.kept:
                self._found.pop(next(iter(self._found)))
            self._found[id(key)] = (key, value)
        return value
