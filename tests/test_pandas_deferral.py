"""pyarrow looks for pandas only once someone imports it (``tdbsql.pandas_deferral``): a query
does not import pandas, and pandas imported afterwards works with pyarrow as without tdbsql."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pandas")

SAMPLE = Path(__file__).resolve().parents[1] / "examples" / "stations"

_AFTER = """
import json, sys
import tdbsql
con = tdbsql.connect().register("s", sys.argv[1])
rows = con.sql("SELECT count(*) AS n FROM s WHERE station <= 2").fetchall()
imported = "pandas" in sys.modules
import pandas as pd
import pyarrow as pa
categories = pa.array(pd.Series(["x", "y", "x"], dtype="category"))
nullable = pa.array(pd.Series([1, None], dtype="Int64"))
frame = con.sql("SELECT city, count(*) AS n FROM s GROUP BY city ORDER BY city").df()
watching = [type(f).__name__ for f in sys.meta_path if "Pandas" in type(f).__name__]
print(json.dumps({"rows": rows, "imported": imported, "categories": str(categories.type),
                  "nullable": str(nullable.type), "frame": frame.to_dict("list"),
                  "watching": watching}))
"""

_BEFORE = """
import json, sys
import pandas as pd
import tdbsql
con = tdbsql.connect().register("s", sys.argv[1])
frame = con.sql("SELECT count(*) AS n FROM s").df()
import pyarrow as pa
categories = pa.array(pd.Series(["x", "y"], dtype="category"))
watching = [type(f).__name__ for f in sys.meta_path if "Pandas" in type(f).__name__]
print(json.dumps({"n": int(frame["n"][0]), "categories": str(categories.type),
                  "watching": watching}))
"""


def _child(code: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", code, str(SAMPLE)], capture_output=True,
                          text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_a_query_leaves_pandas_unimported_and_pandas_imported_later_works():
    import tdbsql

    got = _child(_AFTER)
    assert got["imported"] is False
    want = tdbsql.query("SELECT count(*) AS n FROM array WHERE station <= 2", str(SAMPLE))
    assert got["rows"] == [[want["n"][0].as_py()]]
    # pyarrow recognises pandas objects as it does in a process without tdbsql
    assert got["categories"] == "dictionary<values=string, indices=int8, ordered=0>"
    assert got["nullable"] == "int64"
    assert got["frame"]["city"] == sorted(got["frame"]["city"])
    assert sum(got["frame"]["n"]) == tdbsql.query("SELECT count(*) AS n FROM array",
                                                  str(SAMPLE))["n"][0].as_py()
    assert got["watching"] == []  # the watcher leaves once pandas has loaded


def test_pandas_imported_first_is_left_alone():
    got = _child(_BEFORE)
    assert got["n"] > 0
    assert got["categories"] == "dictionary<values=string, indices=int8, ordered=0>"
    assert got["watching"] == []
