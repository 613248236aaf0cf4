"""``FROM t, unnest(t.l) AS u(x)``: an unnest in FROM reading the source before it (DuckDB's
lateral join), as a SELECT-list unnest of that source.

Every row of ``t`` is joined with each element of its own list (a NULL or empty list: no row),
which is what ``unnest`` in a select list gives.  So the two sources become one derived table
under ``t``'s name, ``(SELECT t's columns, unnest(t.l) AS x FROM t) AS t``, and ``u.x`` reads
``t.x``; ``*`` then lists t's columns and ``x`` in the order DuckDB does, the unnest coming
right after the source it reads, and ``t.*`` only t's columns.  WITH ORDINALITY adds the
position column; ``LEFT JOIN unnest(t.l) AS u(x) ON true`` keeps a row of NULLs for a NULL or
empty list (``table_functions.unnest_select``).  Taken when the unnest directly follows that source,
joined by a comma, CROSS JOIN, ``JOIN ... ON true`` or ``LEFT JOIN ... ON true``, reads no
other source, and its column names differ from the source's (known from the schema);
otherwise -- another ON condition, an unnest reading a source further back --
``UnsupportedSql`` as before (``planner.table_functions``).
"""

from __future__ import annotations

from sqlglot import exp

from .subquery_names import source_columns
from .table_functions import unnest_names, unnest_select


def lateral_unnests(tree: exp.Expression, schema: dict[str, dict[str, str]]) -> exp.Expression:
    """``tree`` with each lateral unnest it can take folded into its source (in place)."""
    for select in list(tree.find_all(exp.Select)):
        while _fold_one(select, schema):  # the join list changed: look at it again
            pass
    return tree


def _fold_one(select: exp.Select, schema) -> bool:
    """Fold the first lateral unnest of ``select`` that can be; did one?"""
    joins = select.args.get("joins") or []
    for index, join in enumerate(joins):
        unnest = join.this.this if isinstance(join.this, exp.Lateral) else join.this
        kind = _kind(join)
        if not isinstance(unnest, exp.Unnest) or kind is None:
            continue
        before = select.args["from_"].this if index == 0 else joins[index - 1].this
        if _folded(select, join, unnest, before, schema, keep_empty=kind == "left"):
            return True
    return False


def _kind(join: exp.Join) -> str | None:
    """"inner" for a comma, CROSS JOIN or INNER JOIN ... ON true, "left" for LEFT [OUTER]
    JOIN ... ON true, else None (USING, another condition, another side)."""
    on = join.args.get("on")
    if join.args.get("using") or not (on is None or isinstance(on, exp.Boolean) and on.this):
        return None
    kind, side = (join.kind or "").upper(), (join.side or "").upper()
    if not side and kind in ("", "CROSS", "INNER"):
        return "inner"
    if side == "LEFT" and kind in ("", "OUTER") and on is not None:
        return "left"
    return None


def _folded(select, join, unnest, before, schema, keep_empty: bool) -> bool:
    alias = before.alias_or_name
    if not isinstance(before, (exp.Table, exp.Subquery)) or not alias or \
            len(unnest.expressions) != 1:
        return False
    values = unnest.expressions[0]
    read = [c for c in values.find_all(exp.Column)
            if c.find_ancestor(exp.Select) is select]
    own = source_columns(before, schema)
    if not read or own is None:
        return False
    own_names = {c.lower() for c in own}  # names compare without regard to case, as DuckDB's
    if any(c.table.lower() != alias.lower() if c.table else c.name.lower() not in own_names
           for c in read):
        return False
    names = unnest_names(join.this if isinstance(join.this, exp.Lateral) else unnest)
    if {n.lower() for n in names} & own_names:
        return False
    rows = exp.Subquery(this=unnest_select(values, names, before.copy(), own,
                                           keep_empty=keep_empty),
                        alias=exp.TableAlias(this=exp.to_identifier(alias)))
    before.replace(rows)
    unnest_alias = (join.this.args.get("alias") or unnest.args.get("alias"))
    _source_star_without(select, alias, names)
    _read_from(select, unnest_alias.name if unnest_alias is not None else "", alias, names)
    join.pop()
    return True


def _source_star_without(select: exp.Select, alias: str, names: list[str]) -> None:
    """``t.*`` as ``t.* EXCLUDE (x)`` (in place): the derived table now under ``t``'s name also
    holds the unnest's columns, which ``t.*`` does not list in DuckDB."""
    for item in select.expressions:
        if isinstance(item, exp.Column) and item.is_star and item.table.lower() == alias.lower():
            star = item.this
            star.set("except_", [*(star.args.get("except_") or []),
                                 *(exp.column(name, quoted=True) for name in names)])


def _read_from(select: exp.Select, old: str, new: str, names: list[str]) -> None:
    """``u.x`` as ``t.x``, and a ``u.*`` select item as ``t.x`` (in place), in ``select``'s
    own clauses."""
    if not old:
        return
    items = []
    for item in select.expressions:
        if isinstance(item, exp.Column) and item.is_star and item.table.lower() == old.lower():
            items += [exp.column(name, new, quoted=True) for name in names]
        else:
            items.append(item)
    select.set("expressions", items)
    for column in list(select.find_all(exp.Column)):
        if column.table.lower() == old.lower() and column.find_ancestor(exp.Select) is select:
            column.set("table", exp.to_identifier(new))
