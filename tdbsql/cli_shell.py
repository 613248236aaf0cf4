"""``tdbsql shell``: statements typed (or piped in) one after another, each answered as a table.

    $ tdbsql shell ./my_array
    tdbsql> SELECT city, count(*)
       ...> FROM array GROUP BY city;

A statement ends at a semicolon outside strings and comments, and may span lines; several on
one line run in turn, each result printed (CREATE and DROP print nothing).  An error is printed and the shell goes on (piped
input then exits 1 at its end).  Dot commands: ``.tables``, ``.schema NAME``, ``.help``,
``.quit`` (or the end of input).  On a terminal there are prompts, and lines are edited and
remembered with readline (``~/.tdbsql_history``).
"""

from __future__ import annotations

import os
import re
import sys

HELP = """\
Statements end with ';' and may span lines.
  .tables          the tables (arrays, files, views, tables in memory)
  .schema NAME     the columns of a table (DESCRIBE NAME)
  .help            this text
  .quit            leave (also Ctrl-D)"""
PROMPT, MORE = "tdbsql> ", "   ...> "
_DEFINITION = re.compile(r"\s*(CREATE|DROP)\b", re.IGNORECASE)  # nothing to print, as DuckDB


def run_shell(con, read) -> int:
    """Run the statements ``read(prompt)`` gives line by line (None at the end) on ``con``,
    printing each result; the number of statements (and dot commands) that failed."""
    from .planner.parse import statement_ended

    failed, buffer = 0, ""
    while True:
        line = read(MORE if buffer.strip() else PROMPT)
        if line is None:
            break
        if not buffer.strip() and line.strip().startswith("."):
            done, ok = _dot_command(con, line.strip())
            failed += not ok
            if done:
                break
            continue
        buffer += line if line.endswith("\n") else line + "\n"
        if statement_ended(buffer):
            failed += _run(con, buffer)
            buffer = ""
    if buffer.strip():  # the input ended inside a statement: run what there is
        failed += _run(con, buffer)
    return failed


def _run(con, text: str) -> int:
    """Run each statement of ``text`` (none in blanks and comments) and print its result,
    going on after an error; the number that failed."""
    import tdbsql

    from .output import write_table
    from .planner.parse import split_statements

    try:
        statements = split_statements(text)
    except tdbsql.SqlError:  # only blanks and comments (it tokenized: it ended)
        return 0
    failed = 0
    for statement in statements:
        try:
            result = con.sql(statement).arrow()
            if result.column_names == ["explain"] and result.num_rows == 1:
                print(result.column(0)[0].as_py())  # a plan: its text as it is
            elif result.num_columns and not _DEFINITION.match(statement):
                write_table(result, "table", None)
        except tdbsql.Error as err:
            failed += 1
            _error(str(err))
        except KeyboardInterrupt:
            failed += 1
            _error("interrupted")
        except Exception as err:  # a bug in tdbsql: one line, and the shell goes on
            failed += 1
            _error(f"internal error: {type(err).__name__}: {err}")
        sys.stdout.flush()
    return failed


def _error(message: str) -> None:
    sys.stdout.flush()
    print(f"Error: {message}", file=sys.stderr)


def _dot_command(con, command: str) -> tuple[bool, bool]:
    """Run a dot command: (leave the shell, it worked)."""
    name, _, rest = command.partition(" ")
    if name in (".quit", ".exit"):
        return True, True
    if name == ".help":
        print(HELP)
    elif name == ".tables":
        print("\n".join(sorted({*con.tables(), *(view.name for view in con.views)})))
    elif name == ".schema":
        if not rest.strip():
            _error("usage: .schema NAME")
            return False, False
        return False, not _run(con, "DESCRIBE \"{}\";".format(rest.strip().replace('"', '""')))
    else:
        _error(f"unknown command {command!r} (.help lists them)")
        return False, False
    return False, True


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
