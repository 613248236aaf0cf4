"""Hash aggregate microbenchmark: tdbsql's group_ids + aggregate vs pyarrow and DuckDB.

    python benchmarks/grouping.py [--rows 10000000] [--groups 1000] [--repeat 5]

Builds in memory a table of ``--rows`` rows with an int64 value ``v``, a float64 value ``f`` and
three kinds of GROUP BY key with about ``--groups`` distinct values each: ``k_small`` (ints in a
compact range: direct lookup), ``k_wide`` (ints spread over 2**60: hashed) and ``k_str``
(strings: dictionary codes).  For each key it computes count(*), sum(v), sum(f), min(f), max(f)
with tdbsql, pyarrow's ``Table.group_by`` and DuckDB (over the Arrow table and over a native
table), interleaving the systems (A B C ...) and printing medians and ratios to tdbsql.
"""

from __future__ import annotations

import argparse
import statistics
import time

import duckdb
import numpy as np
import pyarrow as pa

from tdbsql.engine.grouping import aggregate, group_ids

KEYS = ("k_small", "k_wide", "k_str")


def make_table(rows: int, groups: int) -> pa.Table:
    rng = np.random.default_rng(0)
    codes = rng.integers(0, groups, rows)
    wide = rng.integers(-(2**60), 2**60, groups)
    names = np.array([f"group-{code:05d}-é" for code in range(groups)], dtype=object)
    return pa.table({
        "k_small": pa.array(codes + 1000),
        "k_wide": pa.array(wide[codes]),
        "k_str": pa.DictionaryArray.from_arrays(pa.array(codes), pa.array(names)).cast(pa.string()),
        "v": pa.array(rng.integers(0, 10**6, rows)),
        "f": pa.array(rng.random(rows)),
    })


def run_tdbsql(table: pa.Table, key: str) -> int:
    groups = group_ids([table[key]])
    results = [aggregate("count_star", None, groups), aggregate("sum", table["v"], groups),
               aggregate("sum", table["f"], groups), aggregate("min", table["f"], groups),
               aggregate("max", table["f"], groups)]
    return len(results[0])


def run_pyarrow(table: pa.Table, key: str) -> int:
    result = table.group_by(key).aggregate([([], "count_all"), ("v", "sum"), ("f", "sum"),
                                            ("f", "min"), ("f", "max")])
    return result.num_rows


def make_duckdb(table: pa.Table):
    con = duckdb.connect()
    con.register("arrow_t", table)
    con.execute("CREATE TABLE native_t AS SELECT * FROM arrow_t")
    return con


def run_duckdb(con, source: str, key: str) -> int:
    sql = (f"SELECT {key}, count(*), sum(v), sum(f), min(f), max(f) FROM {source} "
           f"GROUP BY {key}")
    return len(con.execute(sql).fetchall())


def timed(fn) -> tuple[float, float]:
    """(wall seconds, process CPU seconds, all threads) of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--groups", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    table = make_table(args.rows, args.groups)
    con = make_duckdb(table)
    systems = {
        "tdbsql": lambda key: run_tdbsql(table, key),
        "pyarrow": lambda key: run_pyarrow(table, key),
        "duckdb (arrow)": lambda key: run_duckdb(con, "arrow_t", key),
        "duckdb (native)": lambda key: run_duckdb(con, "native_t", key),
    }
    threads = con.execute("SELECT current_setting('threads')").fetchone()[0]
    print(f"{args.rows:,} rows, ~{args.groups} groups; count(*), sum(v), sum(f), min(f), max(f)")
    print(f"medians of {args.repeat} interleaved runs; duckdb threads: {threads}; "
          f"cpu = process CPU time over all threads")
    for key in KEYS:
        first = timed(lambda: systems["tdbsql"](key))[0]  # includes loading cached kernels
        times = {name: [] for name in systems}
        for _ in range(args.repeat):
            for name, fn in systems.items():
                times[name].append(timed(lambda: fn(key)))
        base = statistics.median(wall for wall, _ in times["tdbsql"])
        print(f"\nGROUP BY {key} (tdbsql first call {first * 1000:.0f} ms)")
        for name, samples in times.items():
            wall = statistics.median(sample[0] for sample in samples)
            cpu = statistics.median(sample[1] for sample in samples)
            print(f"  {name:16s} wall {wall * 1000:8.1f} ms  cpu {cpu * 1000:8.1f} ms  "
                  f"wall x{wall / base:5.2f} of tdbsql")


if __name__ == "__main__":
    main()
