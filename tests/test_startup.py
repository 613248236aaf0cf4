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
