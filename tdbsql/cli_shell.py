"""``tdbsql shell``: statements typed (or piped in) one after another, each answered as a table.

    $ tdbsql shell ./my_array
    tdbsql> SELECT city, count(*)
       ...> FROM array GROUP BY city;

A statement ends at a semicolon outside strings and comments, and may span lines; several on
one line run in turn, each result printed (CREATE and DROP print nothing).  An error is printed and the shell goes on (piped
input then exits 1 at its end).  Dot commands: ``.tables``, ``.schema NAME``, ``.mode
MODE`` (how results print: ``output``'s text formats, named as in DuckDB's shell), ``.read
FILE`` (its statements and dot commands, as if typed; a ``.quit`` there ends the file),
``.output FILE`` / ``.output`` (what prints goes to FILE, replaced, until ``.output`` turns
back to standard output; errors always go to standard error), ``.timer on|off`` (each
statement's time, as DuckDB prints it), ``.help``, ``.quit`` (or the end of input).  On a
terminal there are prompts, and lines are edited and remembered with readline
(``~/.tdbsql_history``).
"""

from __future__ import annotations

import os
import re
import sys
import time
from dataclasses import dataclass

HELP = """\
Statements end with ';' and may span lines.
  .tables          the tables (arrays, files, views, tables in memory)
  .schema NAME     the columns of a table (DESCRIBE NAME)
  .mode [MODE]     how results print: table (the default), csv, json (one object a
                   line; also jsonlines), line (name = value) or markdown
  .read FILE       run the statements and dot commands of FILE, as if typed
  .output [FILE]   print to FILE (replaced) from now on; without FILE, to the terminal
  .timer on|off    print each statement's run time
  .help            this text
  .quit            leave (also Ctrl-D)"""
PROMPT, MORE = "tdbsql> ", "   ...> "
_DEFINITION = re.compile(r"\s*(CREATE|DROP)\b", re.IGNORECASE)  # nothing to print, as DuckDB
MODES = {"table": "table", "csv": "csv", "json": "json", "jsonlines": "json", "line": "line",
         "markdown": "markdown"}  # the shell's name (DuckDB's) -> ``output``'s format
MAX_READ_DEPTH = 16


@dataclass
class Settings:
    """What the dot commands set: the output mode, the file printed to (None: standard
    output), the timer."""

    mode: str = "table"
    file: object = None
    timer: bool = False
    reading: int = 0  # how many .read files deep

    @property
    def out(self):
        return sys.stdout if self.file is None else self.file

    def print(self, text: str) -> None:
        self.out.write(text if text.endswith("\n") else text + "\n")

    def output_to(self, path: str | None) -> None:
        """Print to ``path`` (replaced) from now on; None: to standard output."""
        new = None if path is None else open(path, "w", encoding="utf-8")
        if self.file is not None:
            self.file.close()
        self.file = new


def run_shell(con, read, settings: Settings | None = None) -> int:
    """Run the statements ``read(prompt)`` gives line by line (None at the end) on ``con``,
    printing each result; the number of statements (and dot commands) that failed.
    ``settings``: those of the shell a ``.read`` runs in (else new ones, and a file
    ``.output`` opened is closed at the end)."""
    from .planner.parse import statement_ended

    own = settings is None
    settings = Settings() if own else settings
    failed, buffer = 0, ""
    try:
        while True:
            line = read(MORE if buffer.strip() else PROMPT)
            if line is None:
                break
            if not buffer.strip() and line.strip().startswith("."):
                done, ok = _dot_command(con, line.strip(), settings)
                failed += not ok
                if done:
                    break
                continue
            buffer += line if line.endswith("\n") else line + "\n"
            # only a line with a ';' can end a statement: a long one is not rescanned a line
            if ";" in line and statement_ended(buffer):
                failed += _run(con, buffer, settings)
                buffer = ""
        if buffer.strip():  # the input ended inside a statement: run what there is
            failed += _run(con, buffer, settings)
    finally:
        if own:
            settings.output_to(None)
    return failed


def _run(con, text: str, settings: Settings) -> int:
    """Run each statement of ``text`` (none in blanks and comments) and print its result,
    going on after an error; the number that failed."""
    import tdbsql

    from .output import write_text
    from .planner.parse import split_statements

    try:
        statements = split_statements(text)
    except tdbsql.SqlError:  # only blanks and comments (it tokenized: it ended)
        return 0
    failed = 0
    for statement in statements:
        try:
            started, used = time.perf_counter(), os.times()
            result = con.sql(statement).arrow()
            if result.column_names == ["explain"] and result.num_rows == 1:
                settings.print(result.column(0)[0].as_py())  # a plan: its text as it is
            elif result.num_columns and not _DEFINITION.match(statement):
                write_text(settings.out, [result], MODES[settings.mode])
            if settings.timer:
                settings.print(_run_time(started, used))
        except tdbsql.Error as err:
            failed += 1
            _error(str(err))
        except KeyboardInterrupt:
            failed += 1
            _error("interrupted")
        except OSError as err:  # the .output file: a full disk
            failed += 1
            _error(f"cannot write the output: {err}")
        except Exception as err:  # a bug in tdbsql: one line, and the shell goes on
            failed += 1
            _error(f"internal error: {type(err).__name__}: {err}")
        settings.out.flush()
    return failed


def _run_time(started: float, used) -> str:
    """The time since ``started`` (``perf_counter``) and the CPU time since ``used``
    (``os.times``), as DuckDB's ``.timer on`` prints them."""
    now = os.times()
    return (f"Run Time (s): real {time.perf_counter() - started:.3f} "
            f"user {now.user - used.user:.6f} sys {now.system - used.system:.6f}")


def _error(message: str) -> None:
    sys.stdout.flush()
    print(f"Error: {message}", file=sys.stderr)


def _dot_command(con, command: str, settings: Settings) -> tuple[bool, bool]:
    """Run a dot command: (leave the shell, it worked)."""
    name, _, rest = command.partition(" ")
    rest = rest.strip()
    if name in (".quit", ".exit"):
        return True, True
    if name == ".help":
        settings.print(HELP)
    elif name == ".tables":
        settings.print("\n".join(sorted({*con.tables(), *(view.name for view in con.views)})))
    elif name == ".schema":
        if not rest:
            return _usage(".schema NAME")
        return False, not _run(con, "DESCRIBE \"{}\";".format(rest.replace('"', '""')),
                               settings)
    elif name == ".mode":
        if not rest:
            settings.print(f"current output mode: {settings.mode}")
        elif rest.lower() in MODES:
            settings.mode = rest.lower()
        else:
            return _usage(f".mode {'|'.join(MODES)}")
    elif name == ".timer":
        if rest.lower() not in ("on", "off"):
            return _usage(".timer on|off")
        settings.timer = rest.lower() == "on"
    elif name == ".read":
        if not rest:
            return _usage(".read FILE")
        return False, _read_file(con, _unquoted(rest), settings)
    elif name == ".output":
        try:
            settings.output_to(_unquoted(rest) or None)
        except OSError as err:
            return _cannot_open(rest, err)
    else:
        _error(f"unknown command {command!r} (.help lists them)")
        return False, False
    return False, True


def _read_file(con, path: str, settings: Settings) -> bool:
    """``.read FILE``: whether every statement and dot command of the file worked."""
    if settings.reading >= MAX_READ_DEPTH:
        _error(f".read {path!r}: files read each other more than {MAX_READ_DEPTH} deep")
        return False
    try:
        f = open(path, encoding="utf-8")
    except OSError as err:
        return _cannot_open(path, err)[1]
    settings.reading += 1
    try:
        with f:
            return not run_shell(con, piped_reader(f), settings)
    finally:
        settings.reading -= 1


def _cannot_open(path: str, err: OSError) -> tuple[bool, bool]:
    _error(f"cannot open {path!r}: {err.strerror or err}")
    return False, False


def _unquoted(text: str) -> str:
    """A file name as given, or inside quotes (``'my file.sql'``)."""
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def _usage(text: str) -> tuple[bool, bool]:
    _error(f"usage: {text}")
    return False, False


def piped_reader(stream):
    """``read`` for piped input: its lines, no prompts."""
    return lambda prompt: stream.readline() or None


class TerminalReader:
    """``read`` for a terminal: prompts, with readline's editing and history where it exists
    (``close`` saves the history: the command ends with ``os._exit``, no atexit)."""

    def __init__(self):
        try:
            import readline
        except ImportError:  # not on every platform
            readline = None
        self.readline = readline
        self.history = os.path.expanduser("~/.tdbsql_history")
        if readline is not None:
            try:
                readline.read_history_file(self.history)
            except OSError:
                pass

    def __call__(self, prompt: str) -> str | None:
        try:
            return input(prompt)
        except EOFError:
            print()
            return None
        except KeyboardInterrupt:  # Ctrl-C: a new line, the shell goes on
            print()
            return ""

    def close(self) -> None:
        if self.readline is not None:
            try:
                self.readline.write_history_file(self.history)
            except OSError:
                pass
