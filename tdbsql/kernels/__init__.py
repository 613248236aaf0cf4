"""Numba kernels: the ONLY package that imports numba.

A kernel is a plain loop over 1-D arrays that writes into outputs the caller allocates and
returns a count.  No Python objects, no globals, no per-query code generation; validation and
errors live in the Python wrappers that call them.  Every kernel is compiled with ``jit``
(``cache=True, nogil=True``) so a second process loads it from the cache (quickly:
``cache_loading``) and threads can run kernels in parallel; its dispatcher is made when the
kernel is first used (``lazy_dispatcher``).
"""

from __future__ import annotations

from .lazy_dispatcher import Kernel


def jit(func=None, **options):
    """``numba.njit(cache=True, nogil=True, **options)`` as a decorator (bare or called): a
    ``Kernel``, whose dispatcher is made at its first use (``lazy_dispatcher``) and loads from
    the cache without numba's compiler set-up (``cache_loading``)."""
    if func is None:
        return lambda later: jit(later, **options)
    return Kernel(func, options)


__all__ = ["Kernel", "jit"]
