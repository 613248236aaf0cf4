"""A kernel whose numba dispatcher is made the first time it is used.

Making a dispatcher costs about 0.3 ms (numba inspects the function's signature and locates
and stamps its cache files), and tdbsql has some 160 kernels, most of which a given query never
runs.  Made eagerly at import, they were 40-50 ms of every process's start; a ``Kernel`` makes
its dispatcher at its first call (or the first look at a dispatcher attribute such as
``signatures``), once, under a lock, so threads scanning tiles share one.

Inside another kernel a ``Kernel`` types as its dispatcher (the ``typeof`` registration below),
so kernels call kernels, inlined or not, as they call numba dispatchers.
"""

from __future__ import annotations

import importlib
import threading

import numba
from numba.core import types
from numba.core.typing.typeof import typeof_impl

from .cache_loading import quick_loading

_MAKING = threading.Lock()
_OWN = frozenset({"_func", "_options", "_dispatcher"})


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
                    self._dispatcher = quick_loading(numba.njit(
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


@typeof_impl.register(Kernel)
def _typeof_kernel(kernel: Kernel, context) -> types.Dispatcher:
    return types.Dispatcher(kernel.dispatcher)
