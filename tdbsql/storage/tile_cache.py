"""A bounded, process-wide cache of decoded tiles: repeated queries skip reading and decoding.

Keyed by the tile's files (device, inode, size, modification time of each, so a rewritten or
damaged file is never served from the cache), the field and the tile index; the value is the
decoded ``Column``, shared read-only by every query that reads the tile (operators never write
into a column's buffers).  A tile's first hit is reported, so the reader can add its dictionary
codes then (``storage.tile_codes``): a tile read once is never encoded.  Least recently used
tiles go first once the bytes held (decoded cells and codes) pass the budget:
``TDBSQL_TILE_CACHE_MB`` (default 1024; 0 turns the cache off), and at most a quarter of the
running query's memory budget (``TileCache.fit``).  Tiles of encrypted
arrays are never cached, so a wrong key cannot read decrypted data left by a right one.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from ..settings import env_number

DEFAULT_MB = 1024
MEMORY_SHARE = 4  # the cache holds at most this share of a query's memory budget


def budget_bytes() -> int:
    return int(env_number("TDBSQL_TILE_CACHE_MB", DEFAULT_MB, integer=False) * 1024 * 1024)


class TileCache:
    def __init__(self, budget: int):
        self.configured = budget  # TDBSQL_TILE_CACHE_MB
        self.budget = budget  # the configured one, or less under a small memory budget (fit)
        self.held = 0
        self.hits = 0
        self.misses = 0
        self._tiles: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key):
        """``(column, first)``: the cached column (None when absent) and whether this is its
        first hit since it was put."""
        return self.get_many([key])[0]

    def get_many(self, keys: list) -> list:
        """``get`` of several keys under one lock (a tile's columns)."""
        out = []
        with self._lock:
            tiles = self._tiles
            for key in keys:
                found = tiles.get(key)
                if found is None:
                    self.misses += 1
                    out.append((None, False))
                    continue
                tiles.move_to_end(key)
                self.hits += 1
                out.append((found[0], not found[2]))
                found[2] = True
        return out

    def peek(self, key):
        """The cached column, or None; counted as neither a hit nor a miss (the caller
        reports the hit), but kept as recently used."""
        with self._lock:
            found = self._tiles.get(key)
            if found is None:
                return None
            self._tiles.move_to_end(key)
            return found[0]

    def discard(self, keys) -> None:
        """Drop ``keys`` (those present): entries another now holds (a run its tiles)."""
        with self._lock:
            for key in keys:
                old = self._tiles.pop(key, None)
                if old is not None:
                    self.held -= old[1]

    def fit(self, memory_budget: int) -> None:
        """Hold at most ``1/MEMORY_SHARE`` of the running query's memory budget (and never
        more than configured): a query run under ``memory_mb=40`` does not keep hundreds of
        MB of tiles; the next one with a larger budget lets the cache grow again."""
        budget = min(self.configured, memory_budget // MEMORY_SHARE)
        if budget == self.budget:
            return
        with self._lock:
            self.budget = budget
            while self.held > self.budget:
                _, (_, size, _) = self._tiles.popitem(last=False)
                self.held -= size

    def put(self, key, column, nbytes: int) -> None:
        if nbytes > self.budget:
            return
        with self._lock:
            old = self._tiles.pop(key, None)
            if old is not None:
                self.held -= old[1]
            self._tiles[key] = [column, nbytes, old is not None and old[2]]
            self.held += nbytes
            while self.held > self.budget:
                _, (_, size, _) = self._tiles.popitem(last=False)
                self.held -= size

    def clear(self) -> None:
        with self._lock:
            self._tiles.clear()
            self.held = 0


_CACHE: TileCache | None = None


def tile_cache() -> TileCache:
    """The process's cache (its budget read from the environment on first use)."""
    global _CACHE
    if _CACHE is None:
        _CACHE = TileCache(budget_bytes())
    return _CACHE
