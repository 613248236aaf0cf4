"""Loading cached kernels without setting up numba's compiler.

Before numba loads a function from its on-disk cache it "refreshes" its target context: it
imports every lowering module it has (arrays, linalg, random, typed containers, unicode, ...)
and installs their registries, about 0.2-0.3 s, once per process.  A loaded function needs
none of that: its machine code is linked against symbols the context installs when it is
created (the C helpers, libm) and against the NRT, which every array argument goes through.
So tdbsql's kernels load with the NRT initialised and nothing else; a compile (a cache miss,
or another library's numba code in the same process) still refreshes the context first, as
numba's compiler always does.

This leans on two private names of numba's ``Cache`` (``_guard_against_spurious_io_errors``,
``_load_overload``).  A numba without them gets its own loading, unchanged:
``QUICK_LOADING`` says which one runs (``tests/test_kernel_loading.py`` pins it).
"""

from __future__ import annotations

from numba.core.caching import FunctionCache
from numba.core.runtime import rtsys


class QuickLoadCache(FunctionCache):
    """numba's function cache, loading without the compiler's context refresh."""

    def load_overload(self, sig, target_context):
        rtsys.initialize(target_context)
        with self._guard_against_spurious_io_errors():
            return self._load_overload(sig, target_context)
        return None  # the guard swallowed an I/O error: compile instead


QUICK_LOADING = all(hasattr(FunctionCache, name) for name in
                    ("_guard_against_spurious_io_errors", "_load_overload"))


def quick_loading(dispatcher):
    """``dispatcher`` (``njit(cache=True)``'s) loading from the cache by ``QuickLoadCache``
    where this numba allows it."""
    if QUICK_LOADING and type(getattr(dispatcher, "_cache", None)) is FunctionCache:
        dispatcher._cache.__class__ = QuickLoadCache  # numba's own, not a second one built
    return dispatcher
