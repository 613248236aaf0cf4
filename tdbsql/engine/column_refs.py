"""Which table column a column reference names, and which columns an expression reads.

In: an Arrow table whose columns are named ``"<table>.<column>"`` (scanned, joined) or plainly
(step-local values), and sqlglot ``Column`` nodes.  Out: column names.  ``columns_read`` lets
a step that repeats rows (``unnest``, a lambda over list elements) copy only the columns the
expressions evaluated over the repeated rows read.
"""

from __future__ import annotations

import difflib

import pyarrow as pa
from sqlglot import exp

from ..errors import SqlError
from ..planner.conjuncts import has_subquery
from ..planner.parse import span_of


def resolve_column(table: pa.Table, node: exp.Column, sql: str | None = None) -> str:
    """The table column a Column node names: "<table>.<name>", "<name>", or the unique
    "*.<name>"; otherwise an SqlError with a close-name suggestion."""
    names = table.column_names
    name, qualifier = node.name, node.table
    if qualifier:
        if f"{qualifier}.{name}" in names:
            return f"{qualifier}.{name}"
        if name in names and not any("." in n for n in names):
            return name  # a single-table step whose columns are not qualified
    elif name in names:
        return name
    else:
        matches = [n for n in names if n.endswith(f".{name}")]
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            raise SqlError(f"column {name!r} is ambiguous: {', '.join(sorted(matches))}", sql,
                           span_of(node))
    wanted = f"{qualifier}.{name}" if qualifier else name
    candidates = names + [n.rsplit(".", 1)[-1] for n in names]
    close = difflib.get_close_matches(wanted, candidates, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise SqlError(f"unknown column {wanted!r}{hint}", sql, span_of(node))


def columns_read(table: pa.Table, nodes, known=frozenset()) -> list[str] | None:
    """The columns of ``table`` that the expressions ``nodes`` read, in the table's order;
    a reference ``known`` names (``"t.c"`` or ``"c"`` as written) comes from elsewhere.  None
    when that cannot be told ahead: a subquery (it runs against the whole frame) or a name
    no column resolves to (evaluating it reports that)."""
    if has_subquery(*nodes):
        return None
    wanted = set()
    for node in nodes:
        for column in node.find_all(exp.Column):
            written = f"{column.table}.{column.name}" if column.table else column.name
            if written in known:
                continue
            try:
                wanted.add(resolve_column(table, column))
            except SqlError:
                return None
    return [name for name in table.column_names if name in wanted]


def check_repeats(budget, kept: pa.Table, rows: int, what: str, more_per_row: float = 0.0) -> None:
    """Refuse (``budget.check``) repeating ``kept``'s columns into ``rows`` rows -- their
    bytes per row, 8 for the take index, and ``more_per_row`` the caller adds -- if they would
    not fit; nothing without a budget."""
    if budget is not None:
        per_row = 8 + more_per_row + kept.nbytes / max(kept.num_rows, 1)
        budget.check(int(rows * per_row), what)
