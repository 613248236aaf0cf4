"""A kernel whose numba dispatcher is made the first time it is used.

Making a dispatcher costs about 0.3 ms (numba inspects the function's signature and locates
and stamps its cache files), and tdbsql has some 160 kernels, most of which a given query never
runs.  Made eagerly at import, they were 40-50 ms of every process's start; a ``Kernel`` makes
its dispatcher at its first call (or the first look at a dispatcher attribute such as
``signatures``), once, under a lock, so threads scanning tiles share one.

Numba itself is imported with the first dispatcher: importing it costs 0.15-0.2 s, and a
query that runs no kernel (answered from fragment metadata, or over no array at all) never
pays it.

Inside another kernel a ``Kernel`` types as its dispatcher (the ``typeof`` registration made
with the first dispatcher, before anything is compiled or loaded), so kernels call kernels,
inlined or not, as they call numba dispatchers.
"""

from __future__ import annotations

import importlib
import threading

from ..collector_pause import imports_paused

_MAKING = threading.Lock()
_OWN = frozenset({"_func", "_options", "_dispatcher"})
_NJIT = []  # numba.njit once numba is imported (``_njit``), and the cache loader with it


class Kernel:
    """``numba.njit(func, cache=True, nogil=True, **options)``, made on first use."""

    def __init__(self, func, options: dict):
        self._func = func
        self._options = options
        self._dispatcher = None
        self.__wrapped__ = func
        self.__name__ = func.__name__
        self.__qualname__ = func.__qualname__
        self.__module__ = func.__module__
        self.__doc__ = func.__doc__

    @property
    def dispatcher(self):
        """The numba dispatcher (loading from the cache by ``cache_loading``)."""
        dispatcher = self._dispatcher
        if dispatcher is None:
            with _MAKING:
                if self._dispatcher is None:
                    with imports_paused():  # numba's import and its cache's loads
                        njit, quick_loading = _NJIT or _import_numba()
                        self._dispatcher = quick_loading(njit(
                            self._func, cache=True, nogil=True, **self._options))
                dispatcher = self._dispatcher
        return dispatcher

    def __call__(self, *args):
        return (self._dispatcher or self.dispatcher)(*args)

    def __getattr__(self, name: str):  # the dispatcher's: signatures, py_func, stats, ...
        if name in _OWN or (name.startswith("__") and name.endswith("__")):
            raise AttributeError(name)  # not set yet (copy, pickle): never the dispatcher's
        return getattr(self.dispatcher, name)

    def __reduce__(self):  # pickled by name, as functions (and numba's dispatchers) are
        return _kernel_named, (self.__module__, self.__qualname__)

    def __repr__(self) -> str:
        return f"Kernel({self._func.__module__}.{self.__name__})"


def _kernel_named(module: str, qualname: str) -> Kernel:
    """The kernel ``module.qualname`` (unpickling)."""
    found = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    return found


def _import_numba() -> list:
    """Import numba and the cache loader, and have numba type a ``Kernel`` inside another
    kernel as its dispatcher (under ``_MAKING``, once)."""
    import numba
    from numba.core import types
    from numba.core.typing.typeof import typeof_impl

    from .cache_loading import quick_loading

    @typeof_impl.register(Kernel)
    def _typeof_kernel(kernel: Kernel, context) -> types.Dispatcher:
        return types.Dispatcher(kernel.dispatcher)

    _NJIT[:] = [numba.njit, quick_loading]
    return _NJIT
