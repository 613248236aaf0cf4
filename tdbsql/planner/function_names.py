"""The names of the functions the engine evaluates, for the planner's messages.

The planner never imports the engine; the engine adds its names here when its aggregate step
is imported (``engine.aggregate_step``: the scalar registry and the aggregates).  ``unknown_call``
finds a call of a name that is none of them, so a grouped query misspelling an aggregate
(``prodct(x)``) is told about the function, not about the column it reads
(``planner.grouped_columns``).  Before the engine is imported nothing counts as unknown.
"""

from __future__ import annotations

import difflib

from sqlglot import exp

from ..errors import SqlError, UnsupportedSql
from .duckdb_functions import is_duckdb_function

FUNCTION_NAMES: set[str] = set()


def unknown_call(node: exp.Expression, within: exp.Expression) -> exp.Anonymous | None:
    """The outermost call of an unknown name between ``node`` and its ancestor ``within``
    (both included), or None."""
    found = None
    while node is not None:
        if isinstance(node, exp.Anonymous) and FUNCTION_NAMES and \
                node.name.lower() not in FUNCTION_NAMES:
            found = node
        if node is within:
            break
        node = node.parent
    return found


def unknown_function(name: str, sql: str, span) -> SqlError | UnsupportedSql:
    """The error for a call of ``name``, which the engine does not evaluate: one of DuckDB's
    functions is valid SQL tdbsql does not support, any other name is unknown."""
    if is_duckdb_function(name):
        return UnsupportedSql(f"unsupported SQL function {name.lower()}()")
    return SqlError(unknown_message(name), sql, span)


def unknown_message(name: str) -> str:
    """``unknown function f()``, with the closest known names."""
    close = difflib.get_close_matches(name.lower(), sorted(FUNCTION_NAMES), n=3, cutoff=0.8)
    hint = f"; did you mean {' or '.join(c + '()' for c in close)}?" if close else ""
    return f"unknown function {name.lower()}(){hint}"
