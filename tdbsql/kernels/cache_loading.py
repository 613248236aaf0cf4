"""Loading cached kernels without setting up numba's compiler.

Before numba loads a function from its on-disk cache it "refreshes" its target context: it
imports every lowering module it has (arrays, linalg, random, typed containers, unicode, ...)
and installs their registries, about 0.2-0.3 s, once per process.  A loaded function needs
none of that: its machine code is linked against symbols the context installs when it is
created (the C helpers, libm) and against the NRT, which every array argument goes through.
So tdbsql's kernels load with the NRT's C functions registered and nothing else; a compile (a
cache miss, or another library's numba code in the same process) still refreshes the context
and initialises the NRT in full first, as numba's compiler always does.

Initialising the NRT in full also compiles its LLVM functions (atomic incref/decref, the
meminfo data accessor: 25 ms of LLVM).  A loaded kernel does not call those: numba links the
NRT module into every library it compiles, so the cached object code carries its own copies
and needs only the C functions' symbols (``_register_nrt_symbols``).  A loaded library that
still asks for the NRT library (an unresolved symbol) gets the full initialisation and a
second try.

A loaded function also brings the environments of the numba functions linked into it (a
kernel that allocates or views an array links numba's own ``np.empty`` or ``view``), and numba
rebuilds each by importing its module: ``numba.np.arrayobj`` and what it imports, 40-110 ms,
for namespaces nopython code never reads (only object mode looks up a global; a nopython
function reads its environment's constants, which the cache stores).  ``_rebuild_env`` gives
such an environment, for a numba module not imported yet, a namespace holding its name only.

This leans on private names of numba: ``Cache._guard_against_spurious_io_errors``,
``Cache._load_overload``, ``environment._rebuild_env``, ``rtsys._init`` and
``_nrt_python.c_helpers``.  A numba without them gets its own
loading, unchanged: ``QUICK_LOADING`` says which one runs (``tests/test_kernel_loading.py``
pins it).
"""

from __future__ import annotations

import sys

from llvmlite import binding as llvm
from numba.core import config, environment
from numba.core.caching import FunctionCache
from numba.core.runtime import _nrt_python, rtsys


class QuickLoadCache(FunctionCache):
    """numba's function cache, loading without the compiler's context refresh."""

    def load_overload(self, sig, target_context):
        if not _register_nrt_symbols():
            rtsys.initialize(target_context)
        with self._guard_against_spurious_io_errors():
            try:
                return self._load_overload(sig, target_context)
            except RuntimeError:  # the library links the NRT's own (rtsys._init_guard)
                if rtsys._init:
                    raise
            rtsys.initialize(target_context)
            return self._load_overload(sig, target_context)
        return None  # the guard swallowed an I/O error: compile instead


_nrt_symbols_added = False


def _register_nrt_symbols() -> bool:
    """The first half of numba's ``rtsys.initialize``: the NRT's C functions as symbols for
    the JIT linker, once (callers hold numba's compiler lock).  False where numba's full
    initialisation must run instead (NRT statistics asked for, which that turns on)."""
    global _nrt_symbols_added
    if config.NRT_STATS:
        return False
    if not _nrt_symbols_added:
        for name, address in _nrt_python.c_helpers.items():
            llvm.add_symbol(name if name.startswith("_") else "NRT_" + name, address)
        _nrt_symbols_added = True
    return True


QUICK_LOADING = all(hasattr(FunctionCache, name) for name in
                    ("_guard_against_spurious_io_errors", "_load_overload")) and all(
    hasattr(environment, name) for name in ("_rebuild_env", "lookup_environment", "Environment")) \
    and hasattr(_nrt_python, "c_helpers") and hasattr(rtsys, "_init")

_numba_rebuild_env = getattr(environment, "_rebuild_env", None)


def _rebuild_env(modname, consts, env_name):
    """numba's ``_rebuild_env`` (what unpickling a cached function calls for each environment
    it links), without importing a numba module that is not imported yet: its environment
    gets a namespace of its name only (nopython code reads constants, never globals)."""
    if not modname or modname in sys.modules or not modname.startswith("numba."):
        return _numba_rebuild_env(modname, consts, env_name)
    env = environment.lookup_environment(env_name)
    if env is None:
        env = environment.Environment({"__name__": modname})
        env.consts[:] = consts
        env.env_name = env_name
        environment.Environment._memo[env_name] = env
    return env


if QUICK_LOADING:
    environment._rebuild_env = _rebuild_env


def quick_loading(dispatcher):
    """``dispatcher`` (``njit(cache=True)``'s) loading from the cache by ``QuickLoadCache``
    where this numba allows it."""
    if QUICK_LOADING and type(getattr(dispatcher, "_cache", None)) is FunctionCache:
        dispatcher._cache.__class__ = QuickLoadCache  # numba's own, not a second one built
    return dispatcher
