"""SQL text -> sqlglot AST, with errors that underline the culprit.

Also reads the ``FOR SYSTEM_TIME AS OF t`` / ``FOR SYSTEM_TIME BETWEEN t1 AND t2`` clause of a
table into a timestamp window in milliseconds.
"""

from __future__ import annotations

import datetime as dt

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import TokenType

from ..errors import SqlError


def parse(sql: str) -> exp.Expression:
    if not sql or not sql.strip():
        raise SqlError("empty SQL statement")
    try:
        statements = [s for s in sqlglot.parse(sql, read="duckdb") if s is not None]
    except ParseError as err:
        first = err.errors[0] if err.errors else {}
        span = None
        if first.get("line") is not None:
            offset = _offset(sql, first["line"], first.get("col", 1))
            highlight = first.get("highlight") or " "
            span = (max(0, offset - len(highlight)), offset)
        raise SqlError(f"SQL syntax error: {first.get('description', str(err))}", sql, span) from None
    except TokenError as err:
        raise SqlError(f"SQL syntax error: {err}", sql) from None
    if len(statements) != 1:
        raise SqlError(f"expected one SQL statement, got {len(statements)}")
    _check_empty_items(sql)
    return statements[0]


def _check_empty_items(sql: str) -> None:
    """sqlglot reads ``SELECT a,, b`` as ``SELECT a, b``; SQL says it is a syntax error."""
    tokens = sqlglot.tokenize(sql, read="duckdb")
    for before, after in zip(tokens, tokens[1:]):
        if before.token_type == TokenType.COMMA and after.token_type == TokenType.COMMA:
            raise SqlError("SQL syntax error: empty item between commas", sql,
                           (after.start, after.end + 1))


def _offset(sql: str, line: int, col: int) -> int:
    lines = sql.split("\n")
    return sum(len(x) + 1 for x in lines[: line - 1]) + col


def span_of(node: exp.Expression) -> tuple[int, int] | None:
    """Character span of a node in the SQL text, when sqlglot recorded it."""
    meta = getattr(node, "meta", None) or {}
    if "start" in meta and "end" in meta:
        return meta["start"], meta["end"] + 1
    ident = node.find(exp.Identifier) if not isinstance(node, exp.Identifier) else node
    if ident is not None and ident is not node:
        return span_of(ident)
    return None


def timestamp_window(version: exp.Version | None, sql: str) -> tuple[int | None, int | None] | None:
    """The ``FOR SYSTEM_TIME`` window of a table: (start, end) ms, or None if absent."""
    if version is None:
        return None
    kind = str(version.args.get("kind", "")).upper()
    target = version.expression
    if kind == "AS OF":
        return (None, _millis(target, sql))
    if kind in ("BETWEEN", "FROM") and isinstance(target, exp.Tuple) and len(target.expressions) == 2:
        start, end = (_millis(e, sql) for e in target.expressions)
        if start > end:
            raise SqlError(f"FOR SYSTEM_TIME BETWEEN: start {start} is after end {end}", sql,
                           span_of(target))
        return (start, end)
    raise SqlError(f"unsupported FOR SYSTEM_TIME form {kind!r} (use AS OF or BETWEEN)", sql,
                   span_of(version))


def _millis(node: exp.Expression, sql: str) -> int:
    """A timestamp literal in ms: an integer, or a TIMESTAMP/DATE literal (UTC)."""
    if isinstance(node, exp.Literal) and not node.is_string:
        try:
            value = int(node.this)
        except ValueError:
            raise SqlError("timestamp must be an integer number of milliseconds", sql,
                           span_of(node)) from None
        if value < 0:
            raise SqlError("timestamp must not be negative", sql, span_of(node))
        return value
    text = None
    if isinstance(node, exp.Cast) and isinstance(node.this, exp.Literal):
        text = node.this.this
    elif isinstance(node, exp.Literal) and node.is_string:
        text = node.this
    if text is not None:
        try:
            when = dt.datetime.fromisoformat(text)
        except ValueError:
            raise SqlError(f"cannot read {text!r} as a timestamp", sql, span_of(node)) from None
        if when.tzinfo is None:
            when = when.replace(tzinfo=dt.timezone.utc)
        return int(when.timestamp() * 1000)
    raise SqlError("FOR SYSTEM_TIME needs a number of milliseconds or a TIMESTAMP literal", sql,
                   span_of(node))
