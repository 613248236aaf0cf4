"""The 22 TPC-H queries under a memory budget: tdbsql against DuckDB with the same limit.

    python benchmarks/tpch_memory.py [--sf 1] [--memory-mb 40] [--queries 1,2,...]

Data: the arrays and tables of ``tpch_queries.py`` (``benchmarks/data/tpch_all_sf<sf>/``),
plus a DuckDB database file of the same tables (``tpch.duckdb``, written once), so neither
side starts with the data in memory.  Each query runs in a new process:
``tdbsql.connect(memory_mb=M)`` over the arrays, and DuckDB with ``SET memory_limit='<M>MB'``
(one thread per core, as tdbsql) over its file.  Each child reports its wall time, its peak
resident memory (``VmHWM``, which includes the ~100 MB the interpreter and the libraries take
before any query) and its answer, which is compared with DuckDB's at no limit: ``ok``, or the
error's class (``MemoryLimitError``, DuckDB's ``OutOfMemoryException``), or MISMATCH.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))


def peak_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def child(system: str, number: int, root: str, memory_mb: float) -> None:
    from tpch import query_sql

    sql = query_sql(number)
    started = time.perf_counter()
    try:
        if system == "tdbsql":
            import tdbsql

            con = tdbsql.connect(memory_mb=memory_mb)
            arrays = os.path.join(root, "arrays")
            for name in sorted(os.listdir(arrays)):
                con.register(name, os.path.join(arrays, name))
            rows = con.sql(sql).fetchall()
        else:
            import duckdb

            con = duckdb.connect(os.path.join(root, "tpch.duckdb"), read_only=True)
            if memory_mb:
                con.execute(f"SET memory_limit='{memory_mb}MB'")
            rows = con.sql(sql).fetchall()
        outcome = "ok"
    except Exception as err:  # noqa: BLE001 - reported, not raised
        rows, outcome = None, type(err).__name__
    seconds = time.perf_counter() - started
    print(json.dumps({"outcome": outcome, "seconds": seconds, "peak_mb": peak_mb(),
                      "rows": None if rows is None else [[str(v) for v in r] for r in rows]}))


def run_child(system: str, number: int, root: str, memory_mb: float) -> dict:
    cmd = [sys.executable, os.path.abspath(__file__), "--child", system, str(number),
           "--root", root, "--memory-mb", str(memory_mb)]
    out = subprocess.run(cmd, capture_output=True, text=True)
    try:
        return json.loads(out.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        return {"outcome": f"crashed ({out.returncode})", "seconds": None, "peak_mb": None,
                "rows": None}


def same(a, b) -> bool:
    from tpch_queries import same as same_rows

    if a is None or b is None:
        return False
    typed = lambda rows: [tuple(_number(v) for v in r) for r in rows]  # noqa: E731
    return same_rows(typed(a), typed(b))


def _number(text: str):
    try:
        return float(text) if any(c in text for c in ".eE") else int(text)
    except ValueError:
        return text


def ensure_duckdb_file(root: str, tables: dict) -> None:
    import duckdb

    path = os.path.join(root, "tpch.duckdb")
    if os.path.exists(path):
        return
    con = duckdb.connect(path + ".tmp")
    for name, table in tables.items():
        con.register(f"{name}_arrow", table)
        con.execute(f"CREATE TABLE {name} AS SELECT * FROM {name}_arrow")
    con.close()
    os.replace(path + ".tmp", path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sf", type=float, default=1.0)
    parser.add_argument("--memory-mb", type=float, default=40)
    parser.add_argument("--queries", default=None)
    parser.add_argument("--child", nargs=2, metavar=("SYSTEM", "QUERY"), help=argparse.SUPPRESS)
    parser.add_argument("--root", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]), args.root, args.memory_mb)
        return
    from tpch import QUERY_NUMBERS
    from tpch import data as tpch_data

    root = os.path.join(HERE, "data", f"tpch_all_sf{args.sf:g}")
    data = tpch_data.build_all(args.sf, root)
    ensure_duckdb_file(root, data.tables)
    del data
    numbers = QUERY_NUMBERS if args.queries is None else [int(q) for q in args.queries.split(",")]
    print(f"TPC-H SF {args.sf:g}, memory limit {args.memory_mb:g} MB, one new process a query "
          "(peak = VmHWM, interpreter and libraries included)")
    print(f"{'query':>5}  {'tdbsql':>28}  {'duckdb':>28}")
    answered = [0, 0]
    for number in numbers:
        reference = run_child("duckdb", number, root, 0)["rows"]
        cells = []
        for index, system in enumerate(("tdbsql", "duckdb")):
            got = run_child(system, number, root, args.memory_mb)
            outcome = got["outcome"]
            if outcome == "ok" and not same(got["rows"], reference):
                outcome = "MISMATCH"
            answered[index] += outcome == "ok"
            if got["seconds"] is None:
                cells.append(f"{outcome:>28}")
            else:
                cells.append(f"{outcome:>10} {got['seconds']:7.2f}s {got['peak_mb']:6.0f} MB")
        print(f"{number:>5}  {cells[0]:>28}  {cells[1]:>28}", flush=True)
    print(f"answered: tdbsql {answered[0]} of {len(numbers)}, duckdb {answered[1]} of "
          f"{len(numbers)}")


if __name__ == "__main__":
    main()
