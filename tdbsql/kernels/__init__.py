"""Numba kernels: the ONLY package that imports numba.

A kernel is a plain loop over 1-D arrays that writes into outputs the caller allocates and
returns a count.  No Python objects, no globals, no per-query code generation; validation and
errors live in the Python wrappers that call them.  Every kernel is compiled with ``jit``
(``cache=True, nogil=True``) so a second process loads it from the cache (quickly:
``cache_loading``) and threads can run kernels in parallel.
"""

from __future__ import annotations

import numba

from .cache_loading import quick_loading


def jit(func=None, **options):
    """``numba.njit(cache=True, nogil=True, **options)`` as a decorator (bare or called),
    its dispatcher loading from the cache without numba's compiler set-up
    (``cache_loading``)."""
    if func is None:
        return lambda later: jit(later, **options)
    return quick_loading(numba.njit(func, cache=True, nogil=True, **options))


__all__ = ["jit"]
