"""Full-array read: tdbsql vs `tiledb` on the same arrays (>= 10M cells, Zstd), as ratios.

    python benchmarks/read_full.py [--cells 10000000] [--repeat 5] [--data benchmarks/data]

Builds (once) a dense 2-D array and a sparse 2-D array with `tiledb`, each with an int64 and a
float64 attribute under Zstd, then times `SELECT *` through tdbsql against `tiledb`'s own full
read (`A[:]`, numpy buffers), interleaving the two (A B A B ...) and printing medians and the
ratio tdbsql / tiledb (< 1 means tdbsql is faster).  The first tdbsql run of a fresh process is
reported apart (it includes loading cached Numba kernels).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np


def build(root: str, cells: int) -> dict[str, str]:
    import tiledb

    side = int(np.ceil(np.sqrt(cells)))
    paths = {"dense": os.path.join(root, f"dense_{side}"), "sparse": os.path.join(root, f"sparse_{side}")}
    zstd = tiledb.FilterList([tiledb.ZstdFilter(level=3)])
    rng = np.random.default_rng(0)
    if not os.path.exists(paths["dense"]):
        dom = tiledb.Domain(tiledb.Dim("r", domain=(0, side - 1), tile=1000, dtype=np.int64),
                            tiledb.Dim("c", domain=(0, side - 1), tile=1000, dtype=np.int64))
        schema = tiledb.ArraySchema(domain=dom, attrs=[tiledb.Attr("i", dtype=np.int64, filters=zstd),
                                                tiledb.Attr("f", dtype=np.float64, filters=zstd)])
        tiledb.Array.create(paths["dense"], schema)
        with tiledb.open(paths["dense"], "w") as A:
            A[:] = {"i": rng.integers(0, 1000, (side, side)), "f": rng.random((side, side))}
    if not os.path.exists(paths["sparse"]):
        dom = tiledb.Domain(tiledb.Dim("r", domain=(0, side - 1), tile=1000, dtype=np.int64),
                            tiledb.Dim("c", domain=(0, side - 1), tile=1000, dtype=np.int64))
        schema = tiledb.ArraySchema(domain=dom, sparse=True, capacity=100_000,
                                    attrs=[tiledb.Attr("i", dtype=np.int64, filters=zstd),
                                           tiledb.Attr("f", dtype=np.float64, filters=zstd)])
        tiledb.Array.create(paths["sparse"], schema)
        r, c = np.divmod(np.arange(side * side, dtype=np.int64), side)
        with tiledb.open(paths["sparse"], "w") as A:
            A[r, c] = {"i": rng.integers(0, 1000, side * side), "f": rng.random(side * side)}
    return paths


def time_tdbsql(path: str) -> float:
    import tdbsql

    start = time.perf_counter()
    table = tdbsql.query("SELECT * FROM array", path)
    elapsed = time.perf_counter() - start
    assert table.num_rows > 0
    return elapsed


def time_tiledb(path: str) -> float:
    import tiledb

    start = time.perf_counter()
    with tiledb.open(path) as A:
        result = A[:]
    elapsed = time.perf_counter() - start
    assert len(result["i"]) > 0
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "data"))
    args = parser.parse_args()
    os.makedirs(args.data, exist_ok=True)
    paths = build(args.data, args.cells)
    print(f"{'array':8} {'cells':>12} {'tdbsql first':>13} {'tdbsql':>9} {'tiledb':>9} {'ratio':>7}")
    for kind, path in paths.items():
        first = time_tdbsql(path)
        ours, theirs = [], []
        for _ in range(args.repeat):
            ours.append(time_tdbsql(path))
            theirs.append(time_tiledb(path))
        a, b = statistics.median(ours), statistics.median(theirs)
        import tdbsql

        cells = tdbsql.open(path).fragments[0].metadata.cell_count
        print(f"{kind:8} {cells:>12,} {first:>12.3f}s {a:>8.3f}s {b:>8.3f}s {a / b:>6.2f}x")


if __name__ == "__main__":
    main()
