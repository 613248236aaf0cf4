"""All 22 TPC-H queries: tdbsql over TileDB arrays vs DuckDB on the same rows.

    python benchmarks/tpch_queries.py [--sf 1] [--repeat 3] [--queries 1,2,...]

Data: the test suite's TPC-H builder (``tests/tpch/data.py``: tpchgen-cli at ``--sf``,
normalised, one sparse array per table written with ``tiledb``), cached under
``benchmarks/data/tpch_all_sf<sf>/``.  DuckDB gets the same normalised tables as native tables
(``CREATE TABLE ... AS``).  Every result is checked against DuckDB's (rows, floats to 1e-6); a
difference prints ``MISMATCH``.  Warm times, best of ``--repeat`` after one untimed run, and
the ratio tdbsql / DuckDB.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

import duckdb

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

import tdbsql  # noqa: E402
from tpch import QUERY_NUMBERS, query_sql  # noqa: E402
from tpch import data as tpch_data  # noqa: E402


def best(run, repeat: int) -> tuple[float, object]:
    result = run()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times), result


def same(a: list[tuple], b: list[tuple]) -> bool:
    if len(a) != len(b):
        return False
    key = lambda row: tuple((v is None, str(v)) for v in row)  # noqa: E731
    for x, y in zip(sorted(a, key=key), sorted(b, key=key)):
        for u, v in zip(x, y):
            if isinstance(u, float) or isinstance(v, float):
                if u is None or v is None or not math.isclose(float(u), float(v), rel_tol=1e-6,
                                                              abs_tol=1e-6):
                    return False
            elif u != v:
                return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sf", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--queries", default=",".join(map(str, QUERY_NUMBERS)))
    args = parser.parse_args()
    root = os.path.join(HERE, "data", f"tpch_all_sf{args.sf:g}")
    data = tpch_data.build_all(args.sf, root)
    con = tdbsql.connect()
    duck = duckdb.connect()
    for name, path in data.arrays.items():
        con.register(name, path)
        duck.register(f"{name}_arrow", data.tables[name])
        duck.execute(f"CREATE TABLE {name} AS SELECT * FROM {name}_arrow")
    print(f"TPC-H SF {args.sf:g}: warm, best of {args.repeat}")
    print(f"{'query':>5} {'tdbsql':>10} {'duckdb':>10} {'ratio':>8}")
    totals = [0.0, 0.0]
    for number in map(int, args.queries.split(",")):
        sql = query_sql(number)
        ours, got = best(lambda: con.sql(sql).fetchall(), args.repeat)
        theirs, want = best(lambda: duck.sql(sql).fetchall(), args.repeat)
        totals[0] += ours
        totals[1] += theirs
        check = "" if same(got, want) else "  MISMATCH"
        print(f"{number:>5} {ours:9.4f}s {theirs:9.4f}s {ours / theirs:7.2f}x{check}", flush=True)
    print(f"{'sum':>5} {totals[0]:9.4f}s {totals[1]:9.4f}s {totals[0] / totals[1]:7.2f}x")


if __name__ == "__main__":
    main()
