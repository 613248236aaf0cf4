"""A fresh process pays for what its query uses: the operators of step kinds a plan does not
have are not imported, and only the kernels a query runs get a numba dispatcher."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "examples" / "stations"

_CHILD = """
import json, sys
import tdbsql
table = tdbsql.query(sys.argv[2], sys.argv[1])
from tdbsql.kernels import Kernel
kernels = [value for name, module in list(sys.modules.items())
           if name.startswith("tdbsql.kernels.")
           for value in vars(module).values() if isinstance(value, Kernel)]
print(json.dumps({"rows": table.num_rows,
                  "modules": sorted(m for m in sys.modules if m.startswith("tdbsql.engine.")),
                  "kernels": len(kernels),
                  "made": sum(kernel._dispatcher is not None for kernel in kernels)}))
"""

_OPERATORS = ("aggregate_step", "streamed_aggregate", "join_step", "hash_join",
              "join_aggregate", "deferred_inputs", "sort_step", "top_scan", "setop_step",
              "metadata_answer", "values_scan", "series")


def _child(sql: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(SAMPLE), sql],
                          capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_a_filter_query_loads_no_other_operator():
    found = _child("SELECT day, station, city FROM array WHERE day BETWEEN 24 AND 26")
    assert found["rows"] == 15
    loaded = {m.rsplit(".", 1)[1] for m in found["modules"]}
    assert loaded.isdisjoint(_OPERATORS), loaded & set(_OPERATORS)
    assert 0 < found["made"] < found["kernels"] / 4


def test_an_aggregate_over_a_filter_loads_no_join_operator():
    found = _child("SELECT city, count(*) FROM array WHERE day BETWEEN 24 AND 26 GROUP BY city")
    assert found["rows"] == 5
    loaded = {m.rsplit(".", 1)[1] for m in found["modules"]}
    assert loaded.isdisjoint({"join_step", "hash_join", "join_aggregate", "deferred_inputs",
                              "eager_aggregate"}), loaded


def test_each_step_kind_loads_its_operator():
    found = _child("SELECT a.city, count(*) FROM array a JOIN array b ON a.day = b.day "
                   "GROUP BY a.city ORDER BY 2 DESC LIMIT 2")
    assert found["rows"] == 2
    loaded = {m.rsplit(".", 1)[1] for m in found["modules"]}
    assert {"aggregate_step", "join_step", "sort_step"} <= loaded


_NUMBA_CHILD = """
import sys
import tdbsql
table = tdbsql.query(sys.argv[2], sys.argv[1] or None)
print(table.num_rows, "numba" in sys.modules)
"""


def _imports_numba(path: str, sql: str) -> tuple[str, str]:
    proc = subprocess.run([sys.executable, "-c", _NUMBA_CHILD, path, sql],
                          capture_output=True, text=True, check=True)
    return tuple(proc.stdout.split())


def test_a_query_that_runs_no_kernel_never_imports_numba(tmp_path):
    """Numba (0.15-0.2 s to import) comes with the first kernel a query runs: an aggregate
    answered from fragment metadata, or a query over no array, runs none."""
    import numpy as np
    import tiledb

    uri = str(tmp_path / "one_write")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 999), tile=100, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=50, attrs=[
        tiledb.Attr("x", dtype=np.float64, filters=tiledb.FilterList([tiledb.ZstdFilter()]))]))
    with tiledb.open(uri, "w") as A:
        A[np.arange(0, 1000, 2)] = {"x": np.arange(500) * 0.5}
    assert _imports_numba(uri, "SELECT count(*), sum(x), min(x), max(d) FROM array") == \
        ("1", "False")
    assert _imports_numba("", "SELECT 1 + 1 AS two") == ("1", "False")
    # a kernel's first call brings numba in, and kernels called from kernels work
    assert _imports_numba(uri, "SELECT d, x FROM array WHERE x > 100 AND d < 600") == \
        ("99", "True")


def test_a_filter_query_imports_no_function_family():
    """The scalar functions' modules register at the first call looked up by name
    (``engine.functions.registry``): a filter on stored columns imports none of them."""
    code = ("import sys, tdbsql; tdbsql.query(sys.argv[2], sys.argv[1]); "
            "print(sorted(m for m in sys.modules if m.startswith('tdbsql.engine.functions_')))")
    proc = subprocess.run([sys.executable, "-c", code, str(SAMPLE),
                           "SELECT day, city FROM array WHERE day BETWEEN 24 AND 26"],
                          capture_output=True, text=True, check=True)
    loaded = proc.stdout.strip()
    for family in ("functions_math", "functions_dates", "functions_lists", "functions_blobs"):
        assert f"tdbsql.engine.{family}'" not in loaded, loaded


def test_an_unknown_function_suggests_a_close_name_in_a_fresh_process():
    code = ("import sys, tdbsql\ntry:\n    tdbsql.query('SELECT lenght(city) FROM array', "
            "sys.argv[1])\nexcept tdbsql.SqlError as err:\n    print(str(err).splitlines()[0])")
    proc = subprocess.run([sys.executable, "-c", code, str(SAMPLE)], capture_output=True,
                          text=True, check=True)
    assert proc.stdout.strip() == "unknown function lenght(); did you mean length()?"


def test_a_map_read_by_key_in_a_fresh_process():
    """``m[k]`` finds map_extract_value through the registry, loaded on demand: a process
    whose first query reads a MAP column by key has looked up no function before."""
    code = ("import pyarrow as pa, tdbsql\n"
            "t = pa.table({'m': pa.array([[('a', 1)], [('b', 2)]], "
            "pa.map_(pa.string(), pa.int64()))})\n"
            "print(tdbsql.connect().register_arrow('t', t).sql(\"SELECT m['a'] AS v FROM t\")"
            ".fetchall())")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert proc.stdout.strip() == "[(1,), (None,)]"
