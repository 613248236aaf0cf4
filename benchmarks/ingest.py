"""Ingest TPC-H lineitem (SF1, Parquet) into a sparse (l_shipdate, l_orderkey) array:
tdbsql vs `tiledb`, time and size, as ratios.

    python benchmarks/ingest.py [--scale 1] [--repeat 3] [--batch-rows 1000000] [--data benchmarks/data]

Generates lineitem once with ``tpchgen-cli`` (``pip install tpchgen-cli``; cached under
``benchmarks/data/tpch_sf<scale>/``).  Each round ingests it twice, interleaved: with
``tdbsql.ingest`` (schema inferred: decimals as float64, strings as UTF-8, dates as
DATETIME_DAY, domains from the data, duplicates allowed, Zstd level 3 on attributes,
coordinates and offsets) and with ``tiledb`` writing the *same schema* (loaded from the array
tdbsql made) in the same batches of rows: each Parquet batch converted to numpy as TileDB-Py
takes it (decimals correctly rounded as tdbsql does, strings as object arrays) and assigned
with ``A[shipdate, orderkey] = {...}``, one fragment per batch.  Both times are end to end:
reading Parquet, converting, sorting, compressing, writing.  Prints the medians, the on-disk
sizes and tdbsql / tiledb ratios (< 1: tdbsql is faster or smaller), and checks that both
arrays hold every row.  The first tdbsql round includes loading cached Numba kernels.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

DIMS = ["l_shipdate", "l_orderkey"]
HERE = os.path.dirname(os.path.abspath(__file__))


def lineitem(data: str, scale: float) -> str:
    """The Parquet file, generated on first use."""
    folder = os.path.join(data, f"tpch_sf{scale:g}")
    path = os.path.join(folder, "lineitem.parquet")
    if os.path.exists(path):
        return path
    os.makedirs(folder, exist_ok=True)
    exe = shutil.which("tpchgen-cli") or os.path.join(os.path.dirname(sys.executable),
                                                       "tpchgen-cli")
    if not os.path.exists(exe):
        sys.exit("tpchgen-cli is missing: pip install tpchgen-cli (or the bench extra)")
    print(f"generating lineitem SF{scale:g} with tpchgen-cli ...", flush=True)
    common = ["-s", f"{scale:g}", "--tables", "lineitem", "-o", folder]
    # tpchgen-cli 4 takes the format as a subcommand; earlier releases as --format
    if subprocess.run([exe, "parquet", *common]).returncode != 0:
        subprocess.run([exe, *common, "--format", "parquet"], check=True)
    return path


def run_tdbsql(source: str, target: str, batch_rows: int) -> float:
    from tdbsql.ingestion import ingest

    shutil.rmtree(target, ignore_errors=True)
    start = time.perf_counter()
    ingest(source, target, dims=DIMS, timestamp=1, batch_rows=batch_rows, progress=False)
    return time.perf_counter() - start


def run_tiledb(source: str, target: str, template: str, batch_rows: int) -> float:
    import pyarrow.parquet as pq
    import tiledb

    shutil.rmtree(target, ignore_errors=True)
    start = time.perf_counter()
    tiledb.Array.create(target, tiledb.ArraySchema.load(template))
    with tiledb.open(target, "w", timestamp=1) as array:
        for batch in pq.ParquetFile(source).iter_batches(batch_size=batch_rows):
            cells = {name: _numpy(batch.column(name)) for name in batch.schema.names}
            shipdate, orderkey = cells.pop("l_shipdate"), cells.pop("l_orderkey")
            array[shipdate, orderkey] = cells
    return time.perf_counter() - start


def _numpy(column):
    import pyarrow as pa

    from tdbsql.ingestion.infer import decimal_to_float64

    if pa.types.is_decimal(column.type):
        column = decimal_to_float64(column)
    elif pa.types.is_string_view(column.type):
        column = column.cast(pa.string())
    return column.to_numpy(zero_copy_only=False)


def du(path: str) -> int:
    total = 0
    for root, _, files in os.walk(path):
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    return total


def count_cells(path: str) -> int:
    import tiledb

    return sum(f.cell_num for f in tiledb.array_fragments(path))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--batch-rows", type=int, default=1_000_000)
    parser.add_argument("--data", default=os.path.join(HERE, "data"))
    args = parser.parse_args()
    source = lineitem(args.data, args.scale)
    import pyarrow.parquet as pq

    rows = pq.ParquetFile(source).metadata.num_rows
    out_tdbsql = os.path.join(args.data, f"lineitem_sf{args.scale:g}_tdbsql")
    out_tiledb = os.path.join(args.data, f"lineitem_sf{args.scale:g}_tiledb")
    times = {"tdbsql": [], "tiledb": []}
    for round_idx in range(args.repeat):
        times["tdbsql"].append(run_tdbsql(source, out_tdbsql, args.batch_rows))
        times["tiledb"].append(run_tiledb(source, out_tiledb, out_tdbsql, args.batch_rows))
        print(f"round {round_idx + 1}: tdbsql {times['tdbsql'][-1]:.2f} s, "
              f"tiledb {times['tiledb'][-1]:.2f} s", flush=True)
    for name, path in (("tdbsql", out_tdbsql), ("tiledb", out_tiledb)):
        cells = count_cells(path)
        if cells != rows:
            sys.exit(f"{name} array holds {cells} cells, the source {rows} rows")
    size = {"tdbsql": du(out_tdbsql), "tiledb": du(out_tiledb)}
    median = {k: statistics.median(v) for k, v in times.items()}
    print(f"\nlineitem SF{args.scale:g}: {rows:,} rows, {os.path.getsize(source) / 1e6:.1f} MB "
          f"Parquet, batches of {args.batch_rows:,} rows, {os.cpu_count()} cores")
    print(f"{'':8} {'median s':>9} {'min s':>8} {'MB on disk':>11}")
    for name in ("tdbsql", "tiledb"):
        print(f"{name:8} {median[name]:9.2f} {min(times[name]):8.2f} {size[name] / 1e6:11.1f}")
    print(f"ratio tdbsql/tiledb: time {median['tdbsql'] / median['tiledb']:.2f}x (median), "
          f"size {size['tdbsql'] / size['tiledb']:.3f}x")


if __name__ == "__main__":
    main()
