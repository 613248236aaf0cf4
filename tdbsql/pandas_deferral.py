"""pyarrow without pandas until someone imports pandas.

pyarrow's first ``pa.array`` / ``pa.scalar`` imports pandas when it is installed (0.15-0.4 s,
the largest part of a fresh process's first query), only to recognise pandas objects, which
tdbsql never hands it.  pyarrow keeps what it found in a shim: "no pandas" stays until a
pandas-only call (``Table.to_pandas``, ``from_pandas``) looks again and imports it.

So when pandas is not imported yet, ``defer_pandas`` makes pyarrow's first look with pandas
reported absent -- in this thread only, for that one call -- and leaves a watcher in
``sys.meta_path``: when anyone imports pandas later, right after it has loaded, the watcher
has pyarrow look again, so pyarrow sees pandas objects exactly as it would have.  A process
that imported pandas first is left alone.  Importing this module does it; ``connection``
imports it before anything else of tdbsql that uses pyarrow (the ``tdbsql`` command too).

One thing cannot be looked at again: pyarrow's C++ side notes pandas's DateOffset type once,
at that first call, and converting an Arrow INTERVAL (month_day_nano) array to pandas later
dereferences the note it did not get -- the process crashes.  ``Result.df()`` therefore
turns every INTERVAL, in lists and structs too, into timedeltas first (as DuckDB's df() gives
them); code of one's own converting month_day_nano arrays to pandas should import pandas
before tdbsql (or set ``TDBSQL_DEFER_PANDAS=0``, which leaves pyarrow's first look alone).
"""

from __future__ import annotations

import importlib.abc
import os
import sys
import threading

import pyarrow as pa

_started = threading.Lock()
_done = False


def defer_pandas() -> None:
    """Have pyarrow's pandas shim look before pandas is imported (see the module text);
    once per process."""
    global _done
    with _started:
        if _done:
            return
        _done = True
        if "pandas" in sys.modules or os.environ.get("TDBSQL_DEFER_PANDAS", "1") == "0":
            return
        watcher = _PandasWatcher(threading.get_ident())
        sys.meta_path.insert(0, watcher)
        try:
            pa.array([0])  # pyarrow's shim looks for pandas: reported absent, once
        finally:
            watcher.blocked_thread = None


class _PandasWatcher(importlib.abc.MetaPathFinder):
    """Reports pandas absent to ``blocked_thread`` while it is set; afterwards, finds pandas
    with the other finders and wraps its loader to tell pyarrow once it has loaded."""

    def __init__(self, blocked_thread: int):
        self.blocked_thread = blocked_thread

    def find_spec(self, name, path=None, target=None):
        if name != "pandas":
            return None
        if self.blocked_thread == threading.get_ident():
            raise ModuleNotFoundError("pandas deferred for pyarrow's first look", name=name)
        if self.blocked_thread is not None:
            return None  # another thread during that one call: pandas as usual
        sys.meta_path.remove(self)
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = None if find is None else find(name, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _Telling(spec.loader)
                return spec
        return None


class _Telling(importlib.abc.Loader):
    """pandas's own loader, then pyarrow's shim told that pandas is there."""

    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        pa.lib._pandas_api.pd  # a pandas-only call: the shim imports pandas (loaded) again

    def __getattr__(self, name):  # resources, get_source, ... as pandas's loader has them
        return getattr(self._loader, name)


defer_pandas()  # on import: ``connection`` imports this before any module that builds arrays
