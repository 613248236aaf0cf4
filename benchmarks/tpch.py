"""TPC-H lineitem: tdbsql against DuckDB, Polars and `tiledb` on the same rows, as ratios.

    python benchmarks/tpch.py [--sf 1] [--repeat 5] [--fresh-repeat 3]
                              [--systems a,b] [--queries a,b] [--builder auto|tdbsql|tiledb]

Builds once under ``benchmarks/data/tpch_sf<sf>/`` (gitignored): tpchgen-cli's lineitem,
normalised like the test suite's (decimals -> float64 as unscaled/100, dates -> date32), sorted by
(l_shipdate, l_orderkey) and stored three ways: a sparse TileDB array with dimensions
(l_shipdate, l_orderkey) and Zstd on every attribute (written with `tiledb`), a Zstd Parquet
file, and a DuckDB database file holding the table in the same order (DuckDB's compressed
native storage).

Queries: TPC-H Q1 and Q6, a selective query (one week of l_shipdate x an l_orderkey window,
~0.1% of the rows, returned as rows) and a full-scan aggregate (count/sum/min/max).
Systems: tdbsql (``tdbsql.connect``), duckdb_native (the .duckdb file), duckdb_parquet,
polars (lazy scan of the Parquet), tiledb_numpy (ranges + query condition in TileDB, the rest in
numpy) and tiledb_agg (TileDB's own aggregates, only where they can answer the query).

Warm: one untimed run per system, then ``--repeat`` rounds interleaving the systems
(A B C ... A B C ...); the median is printed.  Fresh: each system runs the query as the first
thing in a new Python process (``--child``); the time covers importing the system, opening the
data and the query (interpreter start-up excluded; the OS page cache stays warm).  Ratios are
tdbsql / system: below 1 means tdbsql is faster.  A system that fails a query is reported and
skipped; results are checked against duckdb_native and a mismatch is printed.
"""

from __future__ import annotations

import argparse
import datetime
import decimal
import json
import math
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SYSTEMS = ("tdbsql", "duckdb_native", "duckdb_parquet", "polars", "tiledb_numpy", "tiledb_agg")
QUERIES = ("q1", "q6", "selective", "fullscan")
REFERENCE = "duckdb_native"

# The selective query: one week of ship dates x the orderkeys in [30%, 67.5%) of the key range
# (37.5% of one week ~ 0.1% of the rows; orderkeys run up to 6,000,000 x SF).
WEEK = (datetime.date(1995, 6, 1), datetime.date(1995, 6, 7))
KEY_WINDOW = (0.30, 0.675)
Q1_SHIPDATE_MAX = datetime.date(1998, 9, 2)  # 1998-12-01 - 90 days
Q6_DATES = (datetime.date(1994, 1, 1), datetime.date(1995, 1, 1))
FULLSCAN_SQL = """select count(*) as n, sum(l_quantity) as sum_qty,
    sum(l_extendedprice) as sum_price, min(l_discount) as min_disc,
    max(l_discount) as max_disc, min(l_tax) as min_tax, max(l_tax) as max_tax,
    min(l_partkey) as min_part, max(l_partkey) as max_part
from lineitem"""


class NotApplicable(Exception):
    """The system has no way to express this query (printed as n/a, not as a failure)."""


# -- data ----------------------------------------------------------------------------------------


def tpch_module(with_data: bool = False):
    """tests/tpch: the query files (cheap) and, if asked, the data builder (numpy, pyarrow)."""
    tests = os.path.join(os.path.dirname(HERE), "tests")
    if sys.path[0] != tests:  # ahead of benchmarks/, whose tpch.py is this script
        sys.path.insert(0, tests)
    import tpch

    if with_data:
        import tpch.data
    return tpch


def data_paths(root: str) -> dict[str, str]:
    return {"array": os.path.join(root, "lineitem_array"),
            "parquet": os.path.join(root, "lineitem_normalized.parquet"),
            "duckdb": os.path.join(root, "lineitem_normalized.duckdb")}


def normalized_parquet(path: str) -> bool:
    """The Parquet file exists and holds the normalised columns (float64, not decimals)."""
    if not os.path.exists(path):
        return False
    import pyarrow as pa
    import pyarrow.parquet as pq

    return pq.read_schema(path).field("l_quantity").type == pa.float64()


def pick_builder(requested: str) -> str:
    if requested != "auto":
        return requested
    import importlib.util

    try:
        found = importlib.util.find_spec("tdbsql.storage.writer") is not None
    except ImportError:
        found = False
    return "tdbsql" if found else "tiledb"


def verify_array(path: str, table) -> None:
    """The array holds the table's cell count and key range, as `tiledb` reads it."""
    import tiledb

    with tiledb.open(path) as A:
        count = A.query(dims=[]).agg({"l_linenumber": "count"})[:]
        ned = A.nonempty_domain()
    keys = table.column("l_orderkey").to_numpy()
    want = (int(keys.min()), int(keys.max()))
    got = (int(ned[1][0]), int(ned[1][1]))
    if int(count) != table.num_rows or got != want:
        raise RuntimeError(f"array check failed: {count} cells, keys {got}; "
                           f"expected {table.num_rows}, {want}")


def build(sf: float, root: str, capacity: int, builder: str = "tiledb") -> dict[str, str]:
    """Generate, normalise and store lineitem three ways (each skipped if present)."""
    paths = data_paths(root)
    if normalized_parquet(paths["parquet"]) and all(os.path.exists(p) for p in paths.values()):
        return paths
    tpch = tpch_module(with_data=True)
    raw = tpch.data.generate_parquet(sf, os.path.join(root, "raw"), ("lineitem",))["lineitem"]
    import pyarrow.parquet as pq

    started = time.perf_counter()
    table = tpch.data.normalize(pq.read_table(raw)).sort_by(
        [("l_shipdate", "ascending"), ("l_orderkey", "ascending")])
    if not normalized_parquet(paths["parquet"]):
        if os.path.exists(paths["duckdb"]):
            os.remove(paths["duckdb"])  # built from the stale file
        pq.write_table(table, paths["parquet"] + ".tmp", compression="zstd")
        os.replace(paths["parquet"] + ".tmp", paths["parquet"])
    if not os.path.exists(paths["duckdb"]):
        import duckdb

        con = duckdb.connect(paths["duckdb"] + ".tmp")
        con.execute("create table lineitem as select * from read_parquet(?) "
                    "order by l_shipdate, l_orderkey", [paths["parquet"]])
        con.close()
        os.replace(paths["duckdb"] + ".tmp", paths["duckdb"])
    if not os.path.exists(paths["array"]):
        layout = tpch.data.Layout(capacity=capacity)
        tmp = paths["array"] + ".tmp"
        if os.path.exists(tmp):
            import shutil

            shutil.rmtree(tmp)
        builder = pick_builder(builder)
        tpch.data.build_array(tmp, table, tpch.data.DIMENSIONS["lineitem"], layout, builder)
        verify_array(tmp, table)
        os.replace(tmp, paths["array"])
        print(f"TileDB array written by {builder}")
    print(f"built {table.num_rows:,} rows under {root} in {time.perf_counter() - started:.1f} s")
    return paths


def key_window(sf: float) -> tuple[int, int]:
    top = 6_000_000 * sf
    return int(top * KEY_WINDOW[0]), int(top * KEY_WINDOW[1])


def sql_queries(sf: float) -> dict[str, str]:
    tpch = tpch_module()
    lo, hi = key_window(sf)
    selective = (f"select l_orderkey, l_shipdate, l_quantity, l_extendedprice, l_discount "
                 f"from lineitem where l_shipdate between date '{WEEK[0]}' and date '{WEEK[1]}' "
                 f"and l_orderkey >= {lo} and l_orderkey < {hi}")
    return {"q1": tpch.query_sql(1), "q6": tpch.query_sql(6), "selective": selective,
            "fullscan": FULLSCAN_SQL}


# -- systems: open(paths, sf) -> run(query) -> result --------------------------------------------


def open_tdbsql(paths, sf):
    import tdbsql

    con = tdbsql.connect()
    con.register("lineitem", paths["array"])
    queries = sql_queries(sf)
    return lambda q: con.sql(queries[q]).arrow()


def _duckdb_arrow(con, sql):
    import pyarrow as pa

    result = con.sql(sql).arrow()
    return result.read_all() if isinstance(result, pa.RecordBatchReader) else result


def open_duckdb_native(paths, sf):
    import duckdb

    con = duckdb.connect(paths["duckdb"], read_only=True)
    queries = sql_queries(sf)
    return lambda q: _duckdb_arrow(con, queries[q])


def open_duckdb_parquet(paths, sf):
    import duckdb

    con = duckdb.connect()
    con.execute(f"create view lineitem as select * from read_parquet('{paths['parquet']}')")
    queries = sql_queries(sf)
    return lambda q: _duckdb_arrow(con, queries[q])


def open_polars(paths, sf):
    import polars as pl

    c = pl.col
    lo, hi = key_window(sf)
    disc_price = c("l_extendedprice") * (1 - c("l_discount"))
    plans = {
        "q1": lambda lf: lf.filter(c("l_shipdate") <= Q1_SHIPDATE_MAX)
        .group_by("l_returnflag", "l_linestatus")
        .agg(c("l_quantity").sum().alias("sum_qty"),
             c("l_extendedprice").sum().alias("sum_base_price"),
             disc_price.sum().alias("sum_disc_price"),
             (disc_price * (1 + c("l_tax"))).sum().alias("sum_charge"),
             c("l_quantity").mean().alias("avg_qty"),
             c("l_extendedprice").mean().alias("avg_price"),
             c("l_discount").mean().alias("avg_disc"),
             pl.len().alias("count_order"))
        .sort("l_returnflag", "l_linestatus"),
        "q6": lambda lf: lf.filter((c("l_shipdate") >= Q6_DATES[0])
                                   & (c("l_shipdate") < Q6_DATES[1])
                                   & c("l_discount").is_between(0.05, 0.07)
                                   & (c("l_quantity") < 24))
        .select((c("l_extendedprice") * c("l_discount")).sum().alias("revenue")),
        "selective": lambda lf: lf.filter(c("l_shipdate").is_between(*WEEK)
                                          & (c("l_orderkey") >= lo) & (c("l_orderkey") < hi))
        .select("l_orderkey", "l_shipdate", "l_quantity", "l_extendedprice", "l_discount"),
        "fullscan": lambda lf: lf.select(
            pl.len().alias("n"), c("l_quantity").sum(), c("l_extendedprice").sum(),
            c("l_discount").min().alias("min_disc"), c("l_discount").max().alias("max_disc"),
            c("l_tax").min().alias("min_tax"), c("l_tax").max().alias("max_tax"),
            c("l_partkey").min().alias("min_part"), c("l_partkey").max().alias("max_part")),
    }
    return lambda q: plans[q](pl.scan_parquet(paths["parquet"])).collect()


def _tiledb_ctx():
    import tiledb

    # large first buffers so that tiledb-py does not resubmit incomplete queries many times
    return tiledb.Ctx({"py.init_buffer_bytes": str(256 * 1024 * 1024)})


def open_tiledb_numpy(paths, sf):
    import numpy as np
    import tiledb

    ctx = _tiledb_ctx()
    day = lambda d: np.datetime64(d, "D")  # noqa: E731
    lo, hi = key_window(sf)
    first_day = np.datetime64("1990-01-01", "D")

    def q1(A):
        cols = A.query(attrs=["l_returnflag", "l_linestatus", "l_quantity", "l_extendedprice",
                              "l_discount", "l_tax"], dims=[]).multi_index[
            first_day:day(Q1_SHIPDATE_MAX), :]
        flag = np.asarray(cols["l_returnflag"], dtype="S1").view(np.uint8).astype(np.int64)
        status = np.asarray(cols["l_linestatus"], dtype="S1").view(np.uint8).astype(np.int64)
        codes, group = np.unique(flag * 256 + status, return_inverse=True)
        qty, price = cols["l_quantity"], cols["l_extendedprice"]
        disc_price = price * (1 - cols["l_discount"])
        count = np.bincount(group)
        sums = [np.bincount(group, weights=w) for w in
                (qty, price, disc_price, disc_price * (1 + cols["l_tax"]), cols["l_discount"])]
        return {"l_returnflag": [chr(c // 256) for c in codes],
                "l_linestatus": [chr(c % 256) for c in codes],
                "sum_qty": sums[0], "sum_base_price": sums[1], "sum_disc_price": sums[2],
                "sum_charge": sums[3], "avg_qty": sums[0] / count, "avg_price": sums[1] / count,
                "avg_disc": sums[4] / count, "count_order": count}

    def q6(A):
        cols = A.query(attrs=["l_extendedprice", "l_discount"], dims=[],
                       cond="l_discount >= 0.05 and l_discount <= 0.07 and l_quantity < 24"
                       ).multi_index[day(Q6_DATES[0]):day(Q6_DATES[1]) - 1, :]
        return {"revenue": [float(np.dot(cols["l_extendedprice"], cols["l_discount"]))]}

    def selective(A):
        cols = A.query(attrs=["l_quantity", "l_extendedprice", "l_discount"]).multi_index[
            day(WEEK[0]):day(WEEK[1]), lo:hi - 1]
        names = ("l_orderkey", "l_shipdate", "l_quantity", "l_extendedprice", "l_discount")
        return {name: cols[name] for name in names}

    def fullscan(A):
        cols = A.query(attrs=["l_quantity", "l_extendedprice", "l_discount", "l_tax",
                              "l_partkey"], dims=[])[:]
        d, t, p = cols["l_discount"], cols["l_tax"], cols["l_partkey"]
        return {"n": [len(d)], "sum_qty": [cols["l_quantity"].sum()],
                "sum_price": [cols["l_extendedprice"].sum()], "min_disc": [d.min()],
                "max_disc": [d.max()], "min_tax": [t.min()], "max_tax": [t.max()],
                "min_part": [p.min()], "max_part": [p.max()]}

    plans = {"q1": q1, "q6": q6, "selective": selective, "fullscan": fullscan}

    def run(q):
        with tiledb.open(paths["array"], ctx=ctx) as A:
            return plans[q](A)

    return run


def open_tiledb_agg(paths, sf):
    import tiledb

    ctx = _tiledb_ctx()

    def run(q):
        if q != "fullscan":
            raise NotApplicable("TileDB aggregates cannot group or aggregate expressions")
        with tiledb.open(paths["array"], ctx=ctx) as A:
            out = A.query(dims=[]).agg({"l_quantity": ["count", "sum"], "l_extendedprice": "sum",
                                        "l_discount": ["min", "max"], "l_tax": ["min", "max"],
                                        "l_partkey": ["min", "max"]})[:]
        return {"n": [out["l_quantity"]["count"]], "sum_qty": [out["l_quantity"]["sum"]],
                "sum_price": [out["l_extendedprice"]["sum"]],
                "min_disc": [out["l_discount"]["min"]], "max_disc": [out["l_discount"]["max"]],
                "min_tax": [out["l_tax"]["min"]], "max_tax": [out["l_tax"]["max"]],
                "min_part": [out["l_partkey"]["min"]], "max_part": [out["l_partkey"]["max"]]}

    return run


OPENERS = {"tdbsql": open_tdbsql, "duckdb_native": open_duckdb_native,
           "duckdb_parquet": open_duckdb_parquet, "polars": open_polars,
           "tiledb_numpy": open_tiledb_numpy, "tiledb_agg": open_tiledb_agg}


# -- results, for the cross-check ----------------------------------------------------------------


def result_rows(result) -> list[tuple]:
    """Any system's result as sorted rows of plain Python values."""
    if hasattr(result, "to_pylist") and hasattr(result, "column_names"):  # pyarrow.Table
        columns = [c.to_pylist() for c in result.columns]
    elif hasattr(result, "rows") and hasattr(result, "columns"):  # polars.DataFrame
        columns = [result.get_column(n).to_list() for n in result.columns]
    else:  # dict of sequences (tiledb)
        columns = [list(v.tolist() if hasattr(v, "tolist") else v) for v in result.values()]
    rows = [tuple(_plain(v) for v in row) for row in zip(*columns)]
    return sorted(rows, key=lambda r: tuple(str(v) for v in r))


def _plain(value):
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, decimal.Decimal):
        return float(value)
    if hasattr(value, "item"):
        return value.item()
    return value


def same_rows(a: list[tuple], b: list[tuple]) -> bool:
    if len(a) != len(b):
        return False
    for row_a, row_b in zip(a, b):
        if len(row_a) != len(row_b):
            return False
        for x, y in zip(row_a, row_b):
            if isinstance(x, float) or isinstance(y, float):
                if not math.isclose(float(x), float(y), rel_tol=1e-6):
                    return False
            elif x != y:
                return False
    return True


def result_summary(rows: list[tuple]) -> str:
    return f"{len(rows)} rows" if len(rows) != 1 else "1 row"


# -- timing --------------------------------------------------------------------------------------


def timed(run, query) -> tuple[float, object]:
    started = time.perf_counter()
    result = run(query)
    return time.perf_counter() - started, result


def warm_times(runners, queries, repeat) -> tuple[dict, dict, dict]:
    """(query, system) -> median seconds; failures: (query, system) -> message; rows."""
    times, failures, rows = {}, {}, {}
    for query in queries:
        live = []
        for system, run in runners.items():
            try:
                _, result = timed(run, query)
                rows[query, system] = result_rows(result)
                live.append(system)
            except NotApplicable as exc:
                failures[query, system] = f"n/a ({exc})"
            except Exception as exc:  # noqa: BLE001 - a failing system is reported, not fatal
                failures[query, system] = f"failed: {type(exc).__name__}: {str(exc)[:160]}"
        samples = {system: [] for system in live}
        for _ in range(repeat):
            for system in live:
                samples[system].append(timed(runners[system], query)[0])
        for system in live:
            times[query, system] = statistics.median(samples[system])
    return times, failures, rows


def fresh_times(args, systems, queries, repeat) -> dict:
    """(query, system) -> median first-query seconds in a new process.  The children may
    write bytecode (``PYTHONDONTWRITEBYTECODE`` dropped) and a first unmeasured round writes
    it, as ``pip install`` does: otherwise each child compiles every edited module of an
    editable install from source (0.2-0.3 s for tdbsql), which no installed copy does."""
    samples = {}
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for round_ in range(repeat + 1):
        for query in queries:
            for system in systems:
                cmd = [sys.executable, os.path.abspath(__file__), "--child", system, query,
                       "--sf", str(args.sf), "--data", args.data]
                out = subprocess.run(cmd, capture_output=True, text=True, env=env)
                if round_ == 0:
                    continue  # bytecode and kernel caches written, not timed
                try:
                    seconds = json.loads(out.stdout.strip().splitlines()[-1])["seconds"]
                except (IndexError, ValueError, KeyError):
                    continue
                if seconds is not None:
                    samples.setdefault((query, system), []).append(seconds)
    return {key: statistics.median(values) for key, values in samples.items()}


def child(system: str, query: str, paths: dict, sf: float) -> None:
    started = time.perf_counter()
    try:
        run = OPENERS[system](paths, sf)
        run(query)
        seconds = time.perf_counter() - started
    except Exception:  # noqa: BLE001 - the parent prints the warm failure
        seconds = None
    print(json.dumps({"seconds": seconds}))


# -- report --------------------------------------------------------------------------------------


def fmt_seconds(value) -> str:
    return f"{value:9.4f}s" if value is not None else f"{'-':>10}"


def fmt_ratio(ours, theirs) -> str:
    if ours is None or theirs is None or theirs == 0:
        return f"{'-':>8}"
    return f"{ours / theirs:7.2f}x"


def report(queries, systems, warm, fresh, failures, rows) -> None:
    for query in queries:
        ref = rows.get((query, REFERENCE))
        shape = result_summary(ref) if ref is not None else "?"
        print(f"\n{query} ({shape})")
        print(f"  {'system':15} {'warm':>10} {'fresh':>10} {'tdbsql/x warm':>14} "
              f"{'tdbsql/x fresh':>15}")
        for system in systems:
            if (query, system) in failures:
                print(f"  {system:15} {failures[query, system]}")
                continue
            w, f = warm.get((query, system)), fresh.get((query, system))
            check = ""
            got = rows.get((query, system))
            if ref is not None and got is not None and not same_rows(got, ref):
                check = f"  MISMATCH vs {REFERENCE}: {result_summary(got)}, first {got[:1]}"
            print(f"  {system:15} {fmt_seconds(w)} {fmt_seconds(f)} "
                  f"{fmt_ratio(warm.get((query, 'tdbsql')), w):>14} "
                  f"{fmt_ratio(fresh.get((query, 'tdbsql')), f):>15}{check}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sf", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--fresh-repeat", type=int, default=3)
    parser.add_argument("--capacity", type=int, default=100_000,
                        help="cells per data tile of the TileDB array (at build time)")
    parser.add_argument("--builder", choices=("auto", "tdbsql", "tiledb"), default="auto",
                        help="who writes the TileDB array at build time (auto: tdbsql's writer "
                        "when installed, else tiledb); the array is checked with tiledb")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--queries", default=",".join(QUERIES))
    parser.add_argument("--data", default=None, help="default: benchmarks/data/tpch_sf<sf>")
    parser.add_argument("--child", nargs=2, metavar=("SYSTEM", "QUERY"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.data = args.data or os.path.join(HERE, "data", f"tpch_sf{args.sf:g}")
    if args.child:
        child(*args.child, data_paths(args.data), args.sf)
        return
    os.makedirs(args.data, exist_ok=True)
    paths = build(args.sf, args.data, args.capacity, args.builder)
    systems = [s for s in args.systems.split(",") if s]
    queries = [q for q in args.queries.split(",") if q]
    unknown = [s for s in systems if s not in OPENERS] + [q for q in queries if q not in QUERIES]
    if unknown:
        parser.error(f"unknown system or query: {', '.join(unknown)}")
    runners = {}
    for system in systems:
        try:
            runners[system] = OPENERS[system](paths, args.sf)
        except Exception as exc:  # noqa: BLE001 - e.g. polars not installed
            print(f"skipping {system}: {type(exc).__name__}: {exc}")
    lo, hi = key_window(args.sf)
    print(f"lineitem SF {args.sf:g}; selective: {WEEK[0]}..{WEEK[1]} x l_orderkey [{lo}, {hi}); "
          f"warm = median of {args.repeat}, fresh = median of {args.fresh_repeat} new processes")
    warm, failures, rows = warm_times(runners, queries, args.repeat)
    fresh = fresh_times(args, list(runners), queries, args.fresh_repeat) \
        if args.fresh_repeat > 0 else {}
    report(queries, list(runners), warm, fresh, failures, rows)


if __name__ == "__main__":
    main()
