"""DuckDB's names for the columns of a derived table or a CTE.

sqlglot's optimizer names an unaliased select item of a subquery ``_col_N``; DuckDB names it
as it names a result column (``count_star()``, ``(a + 1)``: ``planner.column_names``), and a
name that repeats an earlier one (case-insensitively) gets ``_1``, ``_2``, ... -- after the
alias's column list renamed the first columns: ``(SELECT a, a FROM t) s`` has ``a``, ``a_1``,
``(SELECT a, a FROM t) s(x)`` has ``x``, ``a``.  Aliasing the items so before the optimizer
runs shows those names through ``*`` and lets the outer query read them
(``SELECT "count_star()" FROM (SELECT count(*) FROM t)``).  A ``*`` over base tables only
(no USING / NATURAL join, no EXCLUDE / REPLACE) is written out as their columns first, so
``(SELECT *, a FROM t)`` has ``a, b, a_1`` as in DuckDB; a select list with any other ``*`` is
not deduplicated (the star's names are not known yet); its other items are named all the same.
"""

from __future__ import annotations

from sqlglot import exp

from .column_names import column_name
from .table_aliases import unique_names
from .table_refs import cte_of, table_key


def name_subquery_columns(tree: exp.Expression,
                          schema: dict[str, dict[str, str]] | None = None) -> exp.Expression:
    """Alias every select item of each derived table and CTE by its DuckDB name (in place);
    ``schema`` ({table: {column: type}}) lets a ``*`` over base tables be written out."""
    for node in list(tree.find_all(exp.Subquery, exp.CTE)):
        if isinstance(node, exp.Subquery) and not isinstance(node.parent, (exp.From, exp.Join)):
            continue  # IN / EXISTS / scalar subqueries: their names are never seen
        alias = node.args.get("alias")
        renamed = [column.name for column in alias.columns] if alias is not None else []
        for select in _branches(node.this):
            if schema is not None:
                _expand_stars(select, schema)
            _name_items(select, renamed)
    return tree


def _expand_stars(select: exp.Select, schema: dict[str, dict[str, str]]) -> None:
    """Each ``*`` / ``t.*`` of a select list beside other items, as the columns it stands
    for, when those come from base tables of ``schema`` alone (in place; else unchanged)."""
    items = select.expressions
    if len(items) < 2 or not any(item.is_star for item in items):
        return
    sources = _base_sources(select, schema)
    if sources is None:
        return
    expanded = []
    for item in items:
        if not item.is_star:
            expanded.append(item)
            continue
        star = item.this if isinstance(item, exp.Column) else item
        if not isinstance(star, exp.Star) or any(star.args.values()):
            return  # * EXCLUDE (...) / REPLACE (...) / COLUMNS(...)
        wanted = item.table if isinstance(item, exp.Column) else None
        chosen = [(alias, columns) for alias, columns in sources
                  if wanted is None or alias == wanted]
        if not chosen:
            return
        expanded += [exp.column(name, table=alias, quoted=True)
                     for alias, columns in chosen for name in columns]
    select.set("expressions", expanded)


def _base_sources(select: exp.Select, schema) -> list[tuple[str, list[str]]] | None:
    """(alias, columns) of each FROM / JOIN source in order, when all are base tables of
    ``schema`` joined without USING or NATURAL (whose ``*`` merges columns); else None."""
    from_ = select.args.get("from_")
    if from_ is None:
        return None
    joins = select.args.get("joins") or []
    if any(j.args.get("using") or str(j.args.get("method") or "").upper() == "NATURAL"
           for j in joins):
        return None
    sources = []
    for source in [from_.this] + [j.this for j in joins]:
        if not isinstance(source, exp.Table) or cte_of(source) is not None:
            return None
        alias = source.args.get("alias")
        if alias is not None and alias.columns:
            return None
        columns = _columns_of(schema, table_key(source))
        if columns is None:
            return None
        sources.append((source.alias_or_name, columns))
    return sources


def _columns_of(schema, key: str) -> list[str] | None:
    if key in schema:
        return list(schema[key])
    matches = [name for name in schema if name.lower() == key.lower()]
    return list(schema[matches[0]]) if len(matches) == 1 else None


def _branches(query: exp.Expression) -> list[exp.Select]:
    """The SELECTs of a query: itself, or each side of its UNION / INTERSECT / EXCEPT."""
    if isinstance(query, exp.SetOperation):
        return _branches(query.this) + _branches(query.expression)
    return [query] if isinstance(query, exp.Select) else []


def _name_items(select: exp.Select, renamed: list[str]) -> None:
    items = select.expressions
    if any(item.is_star for item in items):
        names = [None if item.is_star or isinstance(item, (exp.Alias, exp.Column))
                 else column_name(item) for item in items]
    else:
        names = unique_names([renamed[i] if i < len(renamed) else column_name(item)
                              for i, item in enumerate(items)])
    select.set("expressions", [_aliased(item, name) for item, name in zip(items, names)])


def _aliased(item: exp.Expression, name: str | None) -> exp.Expression:
    """``item`` under the name ``name`` (None, or already its name: as it is)."""
    if name is None or (isinstance(item, (exp.Alias, exp.Column)) and item.alias_or_name == name):
        return item
    value = item.unalias() if isinstance(item, exp.Alias) else item
    # not exp.alias_, which gives a (scalar) subquery a table alias instead
    return exp.Alias(this=value, alias=exp.to_identifier(name, quoted=True))
