"""Named windows: ``WINDOW w AS (...)`` and the calls over them, ``OVER w`` / ``OVER (w ...)``.

A reference stands for the named window with what the call adds to it, as DuckDB reads it
(``planner.windows`` runs the merged window; ``planner.column_names`` prints it, as DuckDB
names the result column: ``sum(x) OVER (PARTITION BY g ORDER BY k)``).  DuckDB's parser
errors are SqlErrors here (``check_named_windows``):

* a definition may build on one defined before it (``w2 AS (w ORDER BY k)``); names are
  case-insensitive; a name defined twice, or one not defined (before), is an error;
* a reference takes the named window's PARTITION BY, ORDER BY and frame: a clause that both
  give is an error (``Cannot override ORDER BY clause of window "w"``), and a window with a
  frame is only used as it is, ``OVER w``: ``OVER (w)`` / ``OVER (w ORDER BY ...)`` copy it,
  an error (``cannot copy window "w" because it has a frame clause``);
* the query's ORDER BY sees no named window.
"""

from __future__ import annotations

from sqlglot import exp

from ..errors import SqlError

_BARE = "tdbsql_bare_window"  # meta on a window written ``OVER name``, without parentheses
_CLAUSES = (("partition_by", "PARTITION BY"), ("order", "ORDER BY"))


def note_bare_reference(window: exp.Window) -> None:
    """Record that ``window`` was written ``OVER name`` (the parser cannot tell it from
    ``OVER (name)`` afterwards)."""
    window.meta[_BARE] = True


def definitions(select: exp.Select, sql: str | None = None) -> dict[str, exp.Window]:
    """The WINDOW clause of ``select`` by lower-case name, each definition merged with the one
    it builds on."""
    named: dict[str, exp.Window] = {}
    for definition in select.args.get("windows") or []:
        name = definition.name.lower()
        if name in named:
            raise SqlError(f'window "{definition.name}" is already defined', sql,
                           _span(definition.this))
        named[name] = resolved(definition, named, sql)
    return named


def resolved(window: exp.Window, named: dict[str, exp.Window],
             sql: str | None = None) -> exp.Window:
    """``window`` with the named window it refers to merged in (``window`` itself when it
    names none); ``named``: ``definitions`` of its SELECT."""
    reference = window.args.get("alias")
    if reference is None:
        return window
    base = named.get(reference.name.lower())
    if base is None:
        raise SqlError(f'window "{reference.name}" does not exist', sql, _span(reference))
    if base.args.get("spec") is not None and not window.meta.get(_BARE):
        raise SqlError(f'cannot copy window "{reference.name}" because it has a frame clause',
                       sql, _span(reference))
    merged = window.copy()
    merged.set("alias", None)
    for key, clause in _CLAUSES:
        if base.args.get(key):
            if merged.args.get(key):
                raise SqlError(f'Cannot override {clause} clause of window "{reference.name}"',
                               sql, _span(reference))
            copied = base.args[key]
            merged.set(key, [p.copy() for p in copied] if isinstance(copied, list)
                       else copied.copy())
    if base.args.get("spec") is not None:
        merged.set("spec", base.args["spec"].copy())
    return merged


def check_named_windows(tree: exp.Expression, sql: str) -> None:
    """Raise DuckDB's error for the first WINDOW clause or window reference it refuses."""
    for select in tree.find_all(exp.Select):
        named = definitions(select, sql)
        order = select.args.get("order")
        in_order = set() if order is None else set(map(id, order.find_all(exp.Window)))
        for window in own_windows(select):
            resolved(window, {} if id(window) in in_order else named, sql)


def own_windows(select: exp.Select) -> list[exp.Window]:
    """The window calls a SELECT computes itself (not those of a nested SELECT, nor the
    WINDOW clause's definitions)."""
    named = set(map(id, select.args.get("windows") or []))
    return [w for w in select.find_all(exp.Window)
            if w.find_ancestor(exp.Select) is select and id(w) not in named]


def _span(identifier: exp.Expression) -> tuple[int, int] | None:
    meta = identifier.meta
    return (meta["start"], meta["end"] + 1) if "start" in meta and "end" in meta else None
