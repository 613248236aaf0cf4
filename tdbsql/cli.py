"""The ``tdbsql`` command: a thin shell over the Python API.

    tdbsql query "SELECT * FROM array WHERE d BETWEEN 1 AND 9" ./my_array
    tdbsql query "SELECT ... FROM a JOIN b USING (k)" --array a=./a --array b=./b
    tdbsql explain "SELECT count(*) FROM array WHERE d < 5" ./my_array --analyze
    tdbsql shell ./my_array                      (statements typed, or piped in, one by one)
    tdbsql schema ./my_array
    tdbsql fragments ./my_array
    tdbsql ingest data.parquet ./my_array --dims d1,d2 / consolidate / vacuum / demo

Errors print one line (``tdbsql: error: ...``) and exit 1.  ``tdbsql --help`` imports nothing
heavy.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import NoReturn

FORMATS = ("table", "csv", "json", "line", "markdown", "parquet", "arrow")
ALIGNED = ("table", "markdown")  # every row's width first: a result held whole


class UsageError(Exception):
    """A command line argparse refused (unknown option or choice, a value of the wrong type)."""


class _Parser(argparse.ArgumentParser):
    """argparse, with its usage errors reported like every other error: one line,
    ``tdbsql: error: ...``, exit 1 (argparse alone prints the usage and exits 2).  Subparsers
    inherit the class."""

    def error(self, message):
        raise UsageError(f"{message} (see '{self.prog} --help')")


def milliseconds(text: str) -> int:
    """A ``--timestamp MS`` value: a whole number of milliseconds since the epoch."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a timestamp (whole milliseconds since the epoch)") from None


def add_key_options(p: argparse.ArgumentParser) -> None:
    group = p.add_mutually_exclusive_group()
    group.add_argument("--key", help="encryption key of an AES-256-GCM encrypted array")
    group.add_argument("--key-env", metavar="VAR", help="read the encryption key from $VAR")


def _add_output_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", "-f", choices=FORMATS, default="table", help="output format")
    p.add_argument("--output", "-o", metavar="FILE", help="write to FILE instead of stdout")


def _add_query_inputs(p: argparse.ArgumentParser, sql: bool = True) -> None:
    if sql:
        p.add_argument("sql", help="the SQL text, or - to read it from stdin")
    p.add_argument("path", nargs="?", help="the array (named 'array' in the SQL)")
    p.add_argument("--array", "-a", action="append", default=[], metavar="NAME=PATH",
                   help="make the array at PATH the table NAME (repeatable)")
    p.add_argument("--timestamp", "--as-of", dest="timestamp", type=milliseconds, metavar="MS",
                   help="read the positional array (PATH) as of this time (ms since the epoch)")
    p.add_argument("--memory-mb", type=float, metavar="MB",
                   help="memory budget for intermediate results (default $TDBSQL_MEMORY_MB, "
                        "else 75%% of physical memory)")


def _arrays(pairs: list[str], positional: str | None) -> dict[str, str]:
    import tdbsql

    arrays = {}
    for pair in pairs:
        name, sep, path = pair.partition("=")
        if not sep or not name or not path:
            raise tdbsql.ProgrammingError(f"--array takes NAME=PATH, not {pair!r}")
        if name in arrays:
            raise tdbsql.ProgrammingError(f"--array names the table {name!r} twice")
        if name == "array" and positional is not None:
            raise tdbsql.ProgrammingError(f"--array {pair!r}: the table 'array' is already "
                                          f"the positional array {positional!r}")
        arrays[name] = path
    return arrays


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="tdbsql", description="SQL over TileDB arrays.")
    parser.add_argument("--version", action=_Version, nargs=0, help="print the version and exit")
    sub = parser.add_subparsers(dest="command", required=True)
    q = sub.add_parser("query", help="run SQL over arrays (a query, or a script of statements)",
                       epilog='example: tdbsql query "SELECT * FROM array LIMIT 5" ./my_array')
    _add_query_inputs(q)
    _add_output_options(q)
    add_key_options(q)
    sh = sub.add_parser("shell", help="type statements one after another (or pipe them in)",
                        epilog="example: tdbsql shell ./my_array")
    _add_query_inputs(sh, sql=False)
    add_key_options(sh)
    e = sub.add_parser("explain", help="show a query's plan and pruning funnel",
                       epilog='example: tdbsql explain "SELECT count(*) FROM array" ./my_array')
    _add_query_inputs(e)
    e.add_argument("--analyze", action="store_true",
                   help="run the query and show rows, tiles, bytes and time per operator")
    add_key_options(e)
    s = sub.add_parser("schema", help="print an array's schema",
                       epilog="example: tdbsql schema ./my_array")
    s.add_argument("path")
    s.add_argument("--json", action="store_true", help="print JSON")
    add_key_options(s)
    f = sub.add_parser("fragments", help="list an array's fragments",
                       epilog="example: tdbsql fragments ./my_array")
    f.add_argument("path")
    f.add_argument("--timestamp", "--as-of", dest="timestamp", type=milliseconds, metavar="MS",
                   help="list the fragments visible at this time (ms since the epoch)")
    _add_output_options(f)
    add_key_options(f)
    from .cli_group import add_command as add_group_command
    from .cli_write import add_commands

    add_commands(sub)
    add_group_command(sub)
    sub.add_parser("warmup", help="compile and cache the Numba kernels (run once after install)")
    return parser


class _Version(argparse.Action):
    """``--version``, looked up only when asked: the package metadata lookup takes 70 ms, a
    tenth of a small query's whole run."""

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"tdbsql {_version()}")
        parser.exit()


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tdbsql")
    except PackageNotFoundError:
        return "unknown"


def entry() -> NoReturn:
    """The ``tdbsql`` command (console script and ``python -m tdbsql``).  pyarrow does not
    import pandas for it (``pandas_deferral``)."""
    _leave(main())


def _leave(code: int) -> NoReturn:
    """End the process once the command is done, without the interpreter's teardown.

    Freeing every module's objects (numba's type registries, LLVM's, pyarrow's) takes 0.1-0.2 s
    after a small query, a quarter of the whole run, and achieves nothing for a process that
    ends.  The command has returned, so every file it wrote is closed and its thread pools are
    idle; only stdout and stderr are still buffered, and a failure to flush them (a full disk)
    is reported as an error instead of being lost.  Under a tracer or profiler (coverage, a
    debugger, cProfile) the interpreter ends as usual, so their exit handlers write out."""
    if sys.gettrace() is not None or sys.getprofile() is not None:
        sys.exit(code)
    try:
        sys.stdout.flush()
    except BrokenPipeError:  # the reader left: nothing more to say to it
        pass
    except OSError as err:
        print(f"tdbsql: error: cannot write the result to standard output: {_reason(err)}",
              file=sys.stderr)
        code = code or 1
    try:
        sys.stderr.flush()
    except OSError:
        pass
    os._exit(code)


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except UsageError as err:
        print(f"tdbsql: error: {err}", file=sys.stderr)
        return 1
    import tdbsql

    try:
        key = _key(args)
        if getattr(args, "handler", None) is not None:  # ingest, consolidate, vacuum, demo
            args.handler(args, key)
        elif args.command in ("query", "explain", "shell"):
            from .collector_pause import imports_paused

            with imports_paused():
                from .api import connection_for

            if args.timestamp is not None and args.path is None:
                raise tdbsql.ProgrammingError(
                    "--timestamp/--as-of reads the positional array PATH as of a time; give "
                    "PATH (or write FOR SYSTEM_TIME AS OF MS after an --array table in the SQL)")
            arrays = _arrays(args.array, args.path)
            con = connection_for(args.path, key=key, timestamp=args.timestamp,
                                 arrays=arrays, memory_mb=args.memory_mb)
            if args.command == "shell":
                return _shell(con)
            sql = sys.stdin.read() if args.sql == "-" else args.sql
            if args.command == "explain":
                print(con.explain(sql, analyze=args.analyze))
            else:
                # a streamed result is written part by part, but as an aligned table (every
                # row's width first) it is held whole, within the memory budget
                result = con.sql(sql)
                streamed = result.streamed and args.format not in ALIGNED
                _emit(result.fetch_record_batch() if streamed else result.arrow(),
                      args.format, args.output)
        elif args.command == "warmup":
            from .warmup import warmup

            print(f"kernels compiled and cached in {warmup():.1f} s")
        elif args.command == "schema":
            from .describe import schema_dict, schema_text

            arr = tdbsql.open(args.path, key=key)
            print(json.dumps(schema_dict(arr.schema, arr.enumerations), indent=2) if args.json
                  else schema_text(arr.schema, arr.enumerations))
        elif args.command == "fragments":
            from .describe import fragments_table

            arr = tdbsql.open(args.path, key=key, timestamp=args.timestamp)
            _emit(fragments_table(arr), args.format, args.output)
    except tdbsql.Error as err:
        print(f"tdbsql: error: {err}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print("tdbsql: interrupted", file=sys.stderr)
        return 130
    except Exception as err:  # a bug in tdbsql: one line, the traceback only on request
        if os.environ.get("TDBSQL_DEBUG"):
            raise
        print(f"tdbsql: internal error: {type(err).__name__}: {err} "
              "(set TDBSQL_DEBUG=1 for a traceback)", file=sys.stderr)
        return 2
    return 0


def _shell(con) -> int:
    """``tdbsql shell``: prompts on a terminal; piped statements exit 1 if one failed."""
    from .cli_shell import TerminalReader, piped_reader, run_shell

    if sys.stdin.isatty():
        reader = TerminalReader()
        print("tdbsql shell: statements end with ';', .help for more, Ctrl-D to leave")
        try:
            run_shell(con, reader)
        finally:
            reader.close()
        return 0
    return 1 if run_shell(con, piped_reader(sys.stdin)) else 0


def _key(args) -> str | None:
    if getattr(args, "key_env", None):
        value = os.environ.get(args.key_env)
        if value is None:
            import tdbsql

            raise tdbsql.EncryptionKeyError(f"environment variable {args.key_env} is not set")
        return value
    return getattr(args, "key", None)


def _emit(table, fmt: str, output: str | None) -> None:
    """Write a result (a table, or a streamed result's batches) as ``--format`` says."""
    from .collector_pause import imports_paused

    with imports_paused():
        from .output import write_table

    try:
        write_table(table, fmt, output)
    except BrokenPipeError:
        raise  # the reader of stdout left: ``main`` ends the command quietly
    except OSError as err:  # a full disk; for --output a missing folder, a directory, no permission
        from .errors import InterfaceError

        where = "the result to standard output" if output is None else f"--output {output!r}"
        raise InterfaceError(f"cannot write {where}: {_reason(err)}") from None


def _reason(err: OSError) -> str:
    """An OS error as its system message (``No space left on device``)."""
    return os.strerror(err.errno) if err.errno else str(err)

if __name__ == "__main__":
    sys.exit(entry())
