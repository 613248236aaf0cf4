"""Shared by the syntax-error tests: the small array they query, what a message must never
show, and the sweep that cuts a valid statement after every token."""

from __future__ import annotations

import re

import numpy as np
import sqlglot
import tiledb

from tdbsql.errors import SqlError

# sqlglot's and Python's own words: a message showing one leaked an internal error
LEAKS = re.compile(r"Token|TokenType|SENTINEL|<class|sqlglot|Required keyword|Expecting |"
                   r"Invalid expression|Error tokenizing|Traceback")


def small_array(uri: str) -> str:
    """A sparse array ``k`` (int64 dimension), ``v`` int64, ``s`` string: 5 cells."""
    dom = tiledb.Domain(tiledb.Dim("k", domain=(0, 99), tile=10, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, attrs=[
        tiledb.Attr("v", dtype=np.int64), tiledb.Attr("s", dtype=str, var=True)]))
    with tiledb.open(uri, "w") as A:
        A[np.arange(5)] = {"v": np.arange(5) * 10, "s": np.array(list("abcde"), dtype=object)}
    return uri


def check_truncations(sql: str, parse) -> None:
    """Cut ``sql`` after every token (and add a stray ')', ',' or quote): ``parse`` accepts it,
    or raises tdbsql's own message with a span inside the SQL -- never a Python error."""
    cuts = sorted({t.end + 1 for t in sqlglot.tokenize(sql, read="duckdb")})
    for cut in cuts:
        for broken in (sql[:cut], sql[:cut] + " )", sql[:cut] + " ,", sql[:cut] + " 'x"):
            try:
                parse(broken)
            except SqlError as err:
                assert not LEAKS.search(str(err)), (broken, str(err))
                if err.span is not None:
                    start, end = err.span
                    assert 0 <= start < end <= len(broken), (broken, err.span)
                assert err.plain_message.startswith(("SQL syntax error: ", "empty SQL")), broken


def assert_underlined(run, sql: str, message: str, culprit: str) -> None:
    """``run(sql)`` raises SqlError ``message`` with ``culprit`` underlined: the message,
    then the statement's line, then carets under the culprit; nothing of sqlglot leaks."""
    try:
        run(sql)
    except SqlError as err:
        assert err.plain_message == message
        assert err.span is not None and sql[err.span[0]:err.span[1]] == culprit
        text = str(err)
        assert not LEAKS.search(text), text
        head, line, carets = text.split("\n")
        assert head == message and line == "  " + sql
        assert carets == "  " + " " * err.span[0] + "^" * len(culprit.split("\n")[0])
    else:
        raise AssertionError(f"no SqlError for {sql!r}")
