"""Fragment consolidation, tdbsql against ``tiledb``: time and peak memory on the same arrays.

    python benchmarks/consolidate.py [--cells 3000000] [--fragments 3] [--repeat 3]

Two arrays are written with ``tiledb`` under ``benchmarks/data/consolidate/`` (kept between
runs): a sparse one of ``--fragments`` overlapping fragments of ``--cells`` random
coordinates each (an int64 and two float64 attributes and a string, Zstd), and a dense
4000 x 4000 grid written as two overlapping bands of rows.  Each consolidation runs in a
new process on a fresh copy (``tdbsql.consolidate`` / ``tiledb.consolidate`` with its
defaults), which reports its wall time and peak resident memory (``VmHWM``); the median of
``--repeat`` runs is printed with the ratio tdbsql / tiledb.  After each run the copy is
read back with ``tiledb`` (cells, a sum) and compared with the original: a difference
prints MISMATCH.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
GRID = 4000


def build_sparse(uri: str, cells: int, fragments: int) -> None:
    import tiledb

    dom = tiledb.Domain(tiledb.Dim("id", domain=(0, 10**9), tile=10**6, dtype=np.int64))
    zstd = [tiledb.ZstdFilter()]
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=100_000, attrs=[
        tiledb.Attr("g", dtype=np.int32, filters=zstd),
        tiledb.Attr("x", dtype=np.float64, filters=zstd),
        tiledb.Attr("y", dtype=np.float64, filters=zstd),
        tiledb.Attr("s", dtype=str, filters=zstd)]))
    rng = np.random.default_rng(1)
    for t in range(1, fragments + 1):
        ids = np.sort(rng.choice(cells * 10 // 3, cells, replace=False)).astype(np.int64)
        with tiledb.open(uri, "w", timestamp=t) as A:
            A[ids] = {"g": rng.integers(0, 100, cells).astype(np.int32), "x": rng.random(cells),
                      "y": rng.random(cells),
                      "s": np.array([f"s{v}" for v in rng.integers(0, 10**6, cells)], dtype=object)}


def build_dense(uri: str) -> None:
    import tiledb

    dims = [tiledb.Dim(n, domain=(0, GRID - 1), tile=100, dtype=np.int64) for n in ("r", "c")]
    zstd = [tiledb.ZstdFilter()]
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=tiledb.Domain(*dims), sparse=False, attrs=[
        tiledb.Attr("x", dtype=np.float64, filters=zstd),
        tiledb.Attr("g", dtype=np.int32, filters=zstd)]))
    rng = np.random.default_rng(1)
    for t, (lo, hi) in ((1, (0, GRID * 3 // 4 - 1)), (2, (GRID // 4, GRID - 1))):
        n = hi - lo + 1
        with tiledb.open(uri, "w", timestamp=t) as A:
            A[lo:hi + 1, 0:GRID] = {"x": rng.random((n, GRID)),
                                    "g": rng.integers(0, 100, (n, GRID)).astype(np.int32)}


def child(system: str, uri: str) -> None:
    """Consolidate ``uri`` in this process; print its seconds and peak memory."""
    import time

    started = time.perf_counter()
    if system == "tdbsql":
        import tdbsql

        tdbsql.consolidate(uri)
    else:
        import tiledb

        tiledb.consolidate(uri)
    seconds = time.perf_counter() - started
    print(json.dumps({"seconds": seconds, "peak_mb": _peak_kb() / 1024}))


def _peak_kb() -> int:
    """This process's peak resident memory: Linux's VmHWM, which starts again at exec (its
    ru_maxrss keeps the peak of the parent the process was forked from), else ru_maxrss."""
    import resource

    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def fingerprint(uri: str) -> tuple:
    """(cells, sum of g) as ``tiledb`` reads the array."""
    import tiledb

    with tiledb.open(uri) as A:
        g = A.query(attrs=["g"])[:]["g"].reshape(-1)
    return len(g), int(g.astype(np.int64).sum())


def measure(system: str, source: str, repeat: int, scratch: str) -> tuple[dict, bool]:
    samples, same = [], True
    expected = fingerprint(source)
    for _ in range(repeat):
        copy = os.path.join(scratch, "copy")
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(source, copy)
        out = subprocess.run([sys.executable, __file__, "--child", system, copy],
                             capture_output=True, text=True, check=True)
        samples.append(json.loads(out.stdout.strip().splitlines()[-1]))
        same &= fingerprint(copy) == expected
    return {key: statistics.median(s[key] for s in samples) for key in samples[0]}, same


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cells", type=int, default=3_000_000)
    parser.add_argument("--fragments", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--child", nargs=2, metavar=("SYSTEM", "URI"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    data = os.path.join(HERE, "data", "consolidate")
    arrays = {
        f"sparse {args.fragments} x {args.cells:,} cells":
            (os.path.join(data, f"sparse_{args.fragments}x{args.cells}"),
             lambda uri: build_sparse(uri, args.cells, args.fragments)),
        f"dense {GRID} x {GRID}, 2 bands": (os.path.join(data, "dense"), build_dense),
    }
    print(f"{'array':34} {'system':7} {'seconds':>8} {'peak MB':>8} {'time ratio':>11} "
          f"{'memory ratio':>13}")
    os.makedirs(data, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=data) as scratch:  # copies on the same disk
        for label, (uri, build) in arrays.items():
            if not os.path.isdir(uri):
                build(uri)
            results = {system: measure(system, uri, args.repeat, scratch)
                       for system in ("tdbsql", "tiledb")}
            ours = results["tdbsql"][0]
            for system, (numbers, same) in results.items():
                ratio_t = ours["seconds"] / numbers["seconds"]
                ratio_m = ours["peak_mb"] / numbers["peak_mb"]
                print(f"{label:34} {system:7} {numbers['seconds']:8.2f} {numbers['peak_mb']:8.0f} "
                      f"{ratio_t:10.2f}x {ratio_m:12.2f}x{'' if same else '  MISMATCH'}")


if __name__ == "__main__":
    main()
