"""``current_date``, ``today()``, ``now()``, ``current_timestamp``, ...: the clock, read once
per query.

DuckDB gives every call in a query the same value (the transaction's start).  Here the clock is
read once when the query is planned and each call becomes that constant, so a subquery, a CTE
and the select list all see one instant, and ``WHERE d > current_date - INTERVAL 30 DAY``
compares with a constant that prunes like any date literal.  A plan that read the clock is not
kept in the connection's plan cache (``LogicalQuery.reads_clock``): the next run reads it again.

Types, as DuckDB's: ``current_date`` / ``today()`` are DATE; ``now()`` / ``current_timestamp``
/ ``get_current_timestamp()`` / ``transaction_timestamp()`` are TIMESTAMP WITH TIME ZONE, an
Arrow ``timestamp[us, tz=UTC]``; ``localtimestamp`` / ``current_localtimestamp()`` TIMESTAMP;
``localtime`` / ``current_localtime()`` TIME and ``current_time`` / ``get_current_time()``
TIME WITH TIME ZONE, both an Arrow ``time64[us]`` (as DuckDB returns them to Arrow: Arrow has
no time of day with a zone, so here the latter is a TIME).  tdbsql has no session time zone:
it works in UTC, so the date and the local time are UTC's (DuckDB takes them in its
``TimeZone`` setting, the machine's zone unless set).
"""

from __future__ import annotations

import datetime as dt

from sqlglot import exp

from ..errors import SqlError
from .column_names import written_call
from .parse import span_of

# what each reading of the clock is, by sqlglot node or by the name of an unknown call
_DATE, _STAMP, _LOCAL, _TIME = "DATE", "TIMESTAMPTZ", "TIMESTAMP", "TIME"
_BY_NODE = {exp.CurrentDate: _DATE, exp.CurrentTimestamp: _STAMP, exp.Localtimestamp: _LOCAL,
            exp.CurrentTime: _TIME, exp.Localtime: _TIME}
_BY_NAME = {"now": _STAMP, "get_current_timestamp": _STAMP, "transaction_timestamp": _STAMP,
            "current_localtimestamp": _LOCAL, "current_localtime": _TIME}
# names DuckDB knows only without parentheses: ``current_timestamp()`` is no function there
_NO_PARENS = {"current_timestamp", "localtimestamp", "current_time", "localtime"}


def read_clock(tree: exp.Expression, sql: str,
               now: dt.datetime | None = None) -> tuple[exp.Expression, bool]:
    """``tree`` with every reading of the clock replaced by the time ``now`` (the current UTC
    time), and whether there was one (a copy when there was)."""
    if not any(_kind(node, sql) for node in tree.find_all(exp.Func)):
        return tree, False
    now = (now or dt.datetime.now(dt.timezone.utc)).astimezone(dt.timezone.utc)
    tree = tree.copy()
    for node in list(tree.find_all(exp.Func)):
        kind = _kind(node, sql)
        if kind is not None:
            node.replace(_constant(kind, now))
    return tree, True


def _kind(node: exp.Expression, sql: str) -> str | None:
    """The clock reading ``node`` is (DATE, TIMESTAMPTZ, TIMESTAMP), or None; a call DuckDB
    refuses is an SqlError."""
    if isinstance(node, exp.Anonymous):
        kind = _BY_NAME.get(node.name.lower())
        if kind is not None and node.expressions:
            raise SqlError(f"{node.name.lower()}() takes no arguments", sql, span_of(node))
        return kind
    kind = _BY_NODE.get(type(node))
    written = written_call(node)
    if kind is not None and written is not None and written[1] \
            and written[0].lower() in _NO_PARENS:
        raise SqlError(f"{written[0]} is written without parentheses (there is no function "
                       f"{written[0].lower()}())", sql, span_of(node))
    if kind is not None and any(isinstance(v, exp.Expression) for v in node.args.values()):
        raise SqlError(f"{written[0] if written else node.sql_name().lower()}() takes no "
                       "arguments", sql, span_of(node))
    return kind


def _constant(kind: str, now: dt.datetime) -> exp.Expression:
    if kind == _DATE:
        text = now.date().isoformat()
    elif kind == _TIME:
        text = now.time().isoformat(timespec="microseconds")
    else:
        text = now.replace(tzinfo=None).isoformat(sep=" ", timespec="microseconds")
    return exp.cast(exp.Literal.string(text), kind)
