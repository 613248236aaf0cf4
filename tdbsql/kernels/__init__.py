"""Numba kernels: the ONLY package that imports numba.

A kernel is a plain loop over 1-D arrays that writes into outputs the caller allocates and
returns a count.  No Python objects, no globals, no per-query code generation; validation and
errors live in the Python wrappers that call them.  Every kernel is compiled with ``jit``
(``cache=True, nogil=True``) so a second process loads it from the cache and threads can run
kernels in parallel.
"""

from __future__ import annotations

import functools

import numba

jit = functools.partial(numba.njit, cache=True, nogil=True)

__all__ = ["jit"]
