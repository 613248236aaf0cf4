"""Kernels load from numba's cache without numba's compiler set-up (``kernels.cache_loading``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tdbsql.kernels import jit
from tdbsql.kernels.cache_loading import QUICK_LOADING, QuickLoadCache

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "examples" / "stations"

# a fresh process: one query over the sample array (every kernel of a scan, a filter, a group
# and a sort), reporting its rows, whether numba's compiler set-up ran (it imports every
# lowering module, among them linalg and the typed dict, which no kernel's code refers to) and
# how many kernels came from the cache
_CHILD = """
import json, sys
import tdbsql
table = tdbsql.query(
    "SELECT city, count(*) AS n, sum(temp_c) AS t FROM array WHERE day BETWEEN 20 AND 28 "
    "GROUP BY city ORDER BY city", sys.argv[1])
from tdbsql.kernels import Kernel
hits = 0
for module in list(sys.modules.values()):
    if getattr(module, "__name__", "").startswith("tdbsql.kernels."):
        for value in vars(module).values():
            if isinstance(value, Kernel) and value._dispatcher is not None:
                hits += sum(value.stats.cache_hits.values())
print(json.dumps({"rows": table.to_pylist(), "setup": "numba.np.linalg" in sys.modules or "numba.typed.dictimpl" in sys.modules,
                  "arrayobj": "numba.np.arrayobj" in sys.modules, "hits": hits}))
"""


def _child() -> dict:
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(SAMPLE)], capture_output=True,
                          text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_this_numba_takes_the_quick_loading():
    assert QUICK_LOADING
    assert isinstance(jit(lambda x: x + 1)._cache, QuickLoadCache)


def test_a_process_with_cached_kernels_skips_the_compiler_setup():
    first = _child()  # compiles what the cache lacks (after the compiler set-up)
    second = _child()
    assert second["rows"] == first["rows"]
    assert [row["city"] for row in second["rows"]] == sorted(row["city"]
                                                            for row in second["rows"])
    assert second["hits"] > 5
    assert second["setup"] is False
    assert second["arrayobj"] is False  # the environments its kernels link, not imported


# a kernel that allocates and views arrays (linking numba's own functions, whose modules a
# loaded kernel does not import) still raises numba's errors and its own from the cache
_ALLOCATING = """
import numpy as np
from tdbsql.kernels import jit

@jit
def filled(n, raise_at):
    out = np.empty(n, np.int64)
    for i in range(n):
        if i == raise_at:
            raise ValueError("row past the limit")
        out[i] = i
    return out.view(np.uint64).sum()

@jit(inline="always")
def twice(x):
    return 2 * x

@jit
def plus_one(x):
    return x + 1

@jit
def chained(values):
    total = 0
    for v in values:
        total += plus_one(twice(v))
    return total
"""

_CALLER = """
import json, sys
import numpy as np
import allocating
from numba.core.runtime import rtsys
made = allocating.chained._dispatcher is not None
answers = [int(allocating.filled(4, -1)), int(allocating.chained(np.arange(4)))]
for args in ((-1, -1), (5, 2)):
    try:
        allocating.filled(*args)
    except ValueError as exc:
        answers.append(str(exc))
print(json.dumps({"answers": answers, "arrayobj": "numba.np.arrayobj" in sys.modules,
                  "made_at_import": made, "nrt_compiled": rtsys._init}))
"""


def test_a_loaded_kernel_that_allocates_raises_as_compiled(tmp_path):
    """... and kernels calling kernels (inlined or not) load as they compiled; a kernel's
    dispatcher is made at its first call (``lazy_dispatcher``), and loading links the NRT's
    C functions without compiling its LLVM ones, which the first process's compile does."""
    (tmp_path / "allocating.py").write_text(_ALLOCATING)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    runs = [json.loads(subprocess.run([sys.executable, "-c", _CALLER], capture_output=True,
                                      text=True, check=True, env=env).stdout)
            for _ in range(2)]  # compiled, then loaded from the cache
    assert runs[0]["answers"] == runs[1]["answers"] == [
        6, 16, "negative dimensions not allowed", "row past the limit"]
    assert runs[1]["arrayobj"] is False
    assert runs[0]["made_at_import"] is runs[1]["made_at_import"] is False
    assert runs[0]["nrt_compiled"] is True and runs[1]["nrt_compiled"] is False


def test_bare_and_called_forms_compile_the_same_kernel():
    import numpy as np

    @jit
    def bare(values):
        return values.sum()

    @jit(inline="always")
    def called(values):
        return values.sum()

    values = np.arange(10, dtype=np.int64)
    assert bare(values) == called(values) == 45


def test_a_kernel_pickles_by_name():
    import pickle

    from tdbsql.kernels import predicate

    kernel = predicate.keep_coded
    assert pickle.loads(pickle.dumps(kernel)) is kernel
    assert (kernel.__module__, kernel.__qualname__) == ("tdbsql.kernels.predicate", "keep_coded")
