"""The write-side commands of ``tdbsql``: ingest, consolidate, vacuum, demo.

    tdbsql ingest lineitem.parquet ./lineitem --dims l_shipdate,l_orderkey
    tdbsql consolidate ./lineitem && tdbsql vacuum ./lineitem
    tdbsql demo ./stations

``add_commands(subparsers)`` registers the four subcommands; each sets ``handler`` (a callable
``handler(args, key)``, ``key`` being the resolved ``--key``/``--key-env``).  Handlers raise
tdbsql errors; ``tdbsql.cli.main`` prints them on one line and exits 1.  Nothing heavy is
imported until a handler runs, so ``tdbsql --help`` stays fast.
"""

from __future__ import annotations

import argparse
import sys
import warnings

MODES = ("fragments", "fragment_meta", "commits", "array_meta")
DEMO_PATH = "stations"


def add_commands(subparsers) -> None:
    """Register ``ingest``, ``consolidate``, ``vacuum`` and ``demo`` on ``subparsers``."""
    from .cli import add_key_options

    _add_ingest(subparsers)
    for name, verb, handler in (("consolidate", "merge fragments or metadata files", consolidate),
                                ("vacuum", "remove what consolidation made redundant", vacuum)):
        p = subparsers.add_parser(name, help=f"{verb} of an array",
                                  epilog=f"example: tdbsql {name} ./my_array --mode fragments")
        p.add_argument("path")
        p.add_argument("--mode", choices=MODES, default="fragments")
        p.add_argument("--dry-run", action="store_true", help="show what would change, change nothing")
        if name == "consolidate":
            p.add_argument("--timestamp", metavar="T1,T2", type=_window,
                           help="only files written inside this window (ms since the epoch)")
            p.add_argument("--purge-deleted-cells", action="store_true",
                           help="drop deleted cells instead of keeping them with their delete "
                                "time (TileDB's sm.consolidation.purge_deleted_cells)")
        add_key_options(p)
        p.set_defaults(handler=handler)
    d = subparsers.add_parser("demo", help="build the README's sample array by ingesting data",
                              epilog="example: tdbsql demo ./stations && "
                                     "tdbsql query \"SELECT * FROM array LIMIT 5\" ./stations")
    d.add_argument("path", nargs="?", default=DEMO_PATH, help=f"where (default ./{DEMO_PATH})")
    d.set_defaults(handler=demo)


def _add_ingest(subparsers) -> None:
    from .cli import add_key_options

    p = subparsers.add_parser(
        "ingest", help="create (or append to) an array from a Parquet, CSV or Arrow IPC file",
        epilog="example: tdbsql ingest lineitem.parquet ./lineitem --dims l_shipdate,l_orderkey")
    p.add_argument("source", help="a .parquet file or folder of them, a .csv/.tsv, an .arrow file")
    p.add_argument("array", help="the array to create (or, with --append, to add to)")
    p.add_argument("--dims", metavar="COL[,COL...]",
                   help="columns that become dimensions (default: a row-index dimension)")
    kind = p.add_mutually_exclusive_group()
    kind.add_argument("--sparse", dest="sparse", action="store_true", default=True,
                      help="a sparse array (the default)")
    kind.add_argument("--dense", dest="sparse", action="store_false",
                      help="a dense array (each batch must fill the rectangle it spans)")
    p.add_argument("--domain", metavar="COL=LO:HI", action="append", default=[],
                   help="a dimension's domain (default: the data's min and max); repeatable")
    p.add_argument("--tile", metavar="N[,N...]|COL=N", action="append", default=[],
                   help="tile extents, one per dimension in order, or COL=N (repeatable)")
    p.add_argument("--capacity", type=int, metavar="N", help="cells per sparse data tile")
    p.add_argument("--filters", metavar="SPEC|COL=SPEC", action="append", default=[],
                   help="attribute filters, e.g. zstd:5 or bitshuffle,lz4 or none; COL=SPEC for "
                        "one column (default: zstd:3)")
    p.add_argument("--cell-order", choices=("row-major", "col-major", "hilbert"),
                   default="row-major")
    p.add_argument("--no-duplicates", dest="allows_duplicates", action="store_false",
                   help="refuse repeated coordinates (default: a sparse array keeps every row)")
    p.add_argument("--timestamp", type=int, metavar="MS", help="fragment timestamp (default: now)")
    p.add_argument("--append", action="store_true", help="add fragments to an existing array")
    p.add_argument("--format", dest="source_format", choices=("parquet", "csv", "ipc"),
                   help="source format (default: from the file name or contents)")
    p.add_argument("--batch-rows", type=int, metavar="N",
                   help="rows per fragment (default 1,000,000); bounds memory")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress line, no summary")
    add_key_options(p)
    p.set_defaults(handler=ingest)


# --- handlers -----------------------------------------------------------------------------


def ingest(args, key) -> None:
    """Warnings about how a column is stored print as ``tdbsql: warning: ...``, once each."""
    from .ingestion import DEFAULT_BATCH_ROWS, IngestWarning, ingest as run_ingest

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", IngestWarning)
        report = run_ingest(
            args.source, args.array, dims=ingest_dims(args.dims, args.domain),
            sparse=args.sparse, tile=ingest_tiles(args.tile), capacity=args.capacity,
            filters=ingest_filters(args.filters), timestamp=args.timestamp,
            append=args.append, key=key,
            batch_rows=DEFAULT_BATCH_ROWS if args.batch_rows is None else args.batch_rows,
            progress=False if args.quiet else None, format=args.source_format,
            allows_duplicates=args.allows_duplicates, cell_order=args.cell_order)
    for message in dict.fromkeys(str(w.message) for w in caught
                                 if issubclass(w.category, IngestWarning)):
        print(f"tdbsql: warning: {message}", file=sys.stderr)
    for w in caught:
        if not issubclass(w.category, IngestWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if not args.quiet:
        print(report)


def consolidate(args, key) -> None:
    from .storage.consolidate import consolidate as run

    report = run(args.path, mode=args.mode, timestamp=args.timestamp, key=key,
                 dry_run=args.dry_run, purge_deleted_cells=args.purge_deleted_cells)
    verb = "would merge" if report.dry_run else "merged"
    if not report.created:
        print(f"nothing to consolidate ({args.mode})" + (f": {report.reason}" if report.reason else ""))
        return
    print(f"{verb} {len(report.inputs)} {args.mode} file(s) into {', '.join(report.created)}")
    for name in report.inputs:
        print(f"  {name}")


def vacuum(args, key) -> None:
    from .storage.vacuum import vacuum as run

    report = run(args.path, mode=args.mode, key=key, dry_run=args.dry_run)
    if not report.removed:
        print(f"nothing to vacuum ({args.mode})")
        return
    print(f"{'would remove' if report.dry_run else 'removed'} {len(report.removed)} path(s)")
    for name in report.removed:
        print(f"  {name}")


def demo(args, key) -> None:
    from .ingestion.demo import build_demo

    path = build_demo(args.path)
    print(f"built {path}; try: tdbsql query \"SELECT * FROM array WHERE day BETWEEN 24 AND 26 "
          f"AND station <= 2\" {path}")


# --- option parsing -------------------------------------------------------------------------


def ingest_dims(dims: str | None, domains: list[str]):
    """``--dims a,b`` and ``--domain a=0:9`` -> the ``dims`` argument of ``tdbsql.ingest``."""
    from .errors import ProgrammingError

    names = [d.strip() for d in dims.split(",") if d.strip()] if dims else []
    if not domains:
        return names or None
    given = {}
    for item in domains:
        name, sep, bounds = item.partition("=")
        lo, sep2, hi = bounds.partition(":")
        if not sep or not sep2 or not lo or not hi:
            raise ProgrammingError(f"--domain {item!r}: write COL=LO:HI")
        given[name.strip()] = (lo.strip(), hi.strip())
    unknown = [n for n in given if n not in names]
    if unknown:
        raise ProgrammingError(f"--domain names {unknown[0]!r}, which is not in --dims")
    return {n: given.get(n) for n in names}


def ingest_tiles(tiles: list[str]):
    """``--tile 30,10`` (per dimension, in order) or ``--tile day=30 --tile station=10``."""
    from .errors import ProgrammingError

    if not tiles:
        return None
    named, ordered = {}, []
    for item in tiles:
        for part in item.split(","):
            name, sep, value = part.partition("=")
            try:
                number = _number(value if sep else name)
            except ValueError:
                raise ProgrammingError(f"--tile {item!r}: {part!r} is not a number") from None
            if sep:
                named[name.strip()] = number
            else:
                ordered.append(number)
    if named and ordered:
        raise ProgrammingError("--tile: give either N,N... or COL=N, not both")
    return named or ordered


def _number(text: str):
    text = text.strip()
    try:
        return int(text)
    except ValueError:
        return float(text)


def ingest_filters(specs: list[str]):
    """``--filters zstd:5`` for every attribute, ``--filters col=lz4`` for one."""
    if not specs:
        return None
    chosen = {}
    for spec in specs:
        name, sep, value = spec.partition("=")
        if sep:
            chosen[name.strip()] = value
        else:
            chosen["*"] = spec
    return chosen


def _window(text: str) -> tuple[int, int]:
    start, sep, end = text.partition(",")
    try:
        if not sep:
            raise ValueError
        return int(start), int(end)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not T1,T2 (ms since the epoch)") from None
