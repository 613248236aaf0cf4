"""A small shared thread pool: decode work runs on every core (codecs and Numba kernels release
the GIL), results come back in order, and at most ``window`` tasks are in flight so memory stays
bounded while a scan streams."""

from __future__ import annotations

import os
import threading
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterable, Iterator, TypeVar

from ..settings import env_number

T = TypeVar("T")
R = TypeVar("R")

_POOL: ThreadPoolExecutor | None = None


def workers() -> int:
    return env_number("TDBSQL_THREADS", os.cpu_count() or 1, minimum=1)


_WORKER = threading.local()  # ``inside`` is set on the pool's own threads


def _pool() -> ThreadPoolExecutor:
    global _POOL
    if _POOL is None:
        _POOL = ThreadPoolExecutor(max_workers=workers(), thread_name_prefix="tdbsql",
                                   initializer=_mark_worker)
    return _POOL


def _mark_worker() -> None:
    _WORKER.inside = True


def map_ordered(fn: Callable[[T], R], items: Iterable[T], window: int | None = None) -> Iterator[R]:
    """``map(fn, items)`` on the pool, yielding results in order with ``window`` in flight.
    When a task fails or the consumer stops early, the tasks not started yet are cancelled.

    A task of the pool that maps again (a merged scan's tiles, read inside a scan task) runs
    its items itself: waiting for the pool from inside it could deadlock, every worker
    waiting for tasks queued behind its own (two application threads querying at once did).
    A single item runs on the calling thread too: handing it over gains nothing, and it may
    then use the whole pool for its own items."""
    if workers() <= 1 or getattr(_WORKER, "inside", False) or (
            isinstance(items, (list, tuple)) and len(items) <= 1):
        yield from map(fn, items)
        return
    window = window or 2 * workers()
    pending: deque = deque()
    try:
        for item in items:
            pending.append(_pool().submit(fn, item))
            if len(pending) >= window:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        for future in pending:
            future.cancel()
