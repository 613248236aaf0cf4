"""DuckDB's names for the columns of a derived table or a CTE.

sqlglot's optimizer names an unaliased select item of a subquery ``_col_N``; DuckDB names it
as it names a result column (``count_star()``, ``(a + 1)``: ``planner.column_names``), and a
name that repeats an earlier one (case-insensitively) gets ``_1``, ``_2``, ... -- after the
alias's column list renamed the first columns: ``(SELECT a, a FROM t) s`` has ``a``, ``a_1``,
``(SELECT a, a FROM t) s(x)`` has ``x``, ``a``.  Aliasing the items so before the optimizer
runs shows those names through ``*`` and lets the outer query read them
(``SELECT "count_star()" FROM (SELECT count(*) FROM t)``).  A ``*`` over base tables only
(no USING / NATURAL join, no EXCLUDE / REPLACE) is written out as their columns first, so
``(SELECT *, a FROM t)`` has ``a, b, a_1`` as in DuckDB.  Derived tables and CTEs are named
innermost first (a CTE before the queries after it), so a ``*`` over one whose items are all
named by then is written out the same way: ``(SELECT *, id FROM (SELECT id, grp FROM t) i)``
has ``id, grp, id_1``.  A select list with any other ``*`` is not deduplicated (the star's
names are not known yet); its other items are named all the same.
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
    for node in _innermost_first(tree):
        if isinstance(node, exp.Subquery) and not isinstance(node.parent, (exp.From, exp.Join,
                                                                           exp.Lateral)):
            continue  # IN / EXISTS / scalar subqueries: their names are never seen
        alias = node.parent.args.get("alias") if isinstance(node.parent, exp.Lateral) else \
            node.args.get("alias")
        renamed = [column.name for column in alias.columns] if alias is not None else []
        for select in set_branches(node.this):
            if schema is not None:
                _expand_stars(select, schema)
            _name_items(select, renamed)
    return tree


def _innermost_first(node: exp.Expression) -> list[exp.Expression]:
    """The derived tables and CTEs under ``node``, each after those it contains and each CTE
    before the rest of the query that defines it (which may read it)."""
    with_ = node.args.get("with_") if isinstance(node, exp.Query) else None
    children = ([with_] if with_ is not None else []) + [
        child for child in node.iter_expressions() if child is not with_]
    found = [inner for child in children for inner in _innermost_first(child)]
    return found + [node] if isinstance(node, (exp.Subquery, exp.CTE)) else found


def _expand_stars(select: exp.Select, schema: dict[str, dict[str, str]]) -> None:
    """Each ``*`` / ``t.*`` of a select list beside other items, as the columns it stands
    for, when those are known (``_base_sources``; in place; else unchanged)."""
    items = select.expressions
    if len(items) < 2 or not any(item.is_star for item in items):
        return
    expanded = written_out(select, schema)
    if expanded is not None:
        select.set("expressions", expanded)


def written_out(select: exp.Select, schema) -> list[exp.Expression] | None:
    """The select list with each ``*`` / ``t.*`` written out as its columns, or None when
    they are not known (or the star has EXCLUDE / REPLACE / COLUMNS)."""
    sources = _base_sources(select, schema)
    if sources is None:
        return None
    expanded = []
    for item in select.expressions:
        if not item.is_star:
            expanded.append(item)
            continue
        star = item.this if isinstance(item, exp.Column) else item
        if not isinstance(star, exp.Star) or any(star.args.values()):
            return None  # * EXCLUDE (...) / REPLACE (...) / COLUMNS(...)
        wanted = item.table if isinstance(item, exp.Column) else None
        chosen = [(alias, columns) for alias, columns in sources
                  if wanted is None or alias == wanted]
        if not chosen:
            return None
        expanded += [exp.column(name, table=alias, quoted=True)
                     for alias, columns in chosen for name in columns]
    return expanded


def _base_sources(select: exp.Select, schema) -> list[tuple[str, list[str]]] | None:
    """(alias, columns) of each FROM / JOIN source in order, when all are base tables of
    ``schema``, or derived tables and CTEs whose items are named, joined without USING or
    NATURAL (whose ``*`` merges columns); else None."""
    from_ = select.args.get("from_")
    if from_ is None:
        return None
    joins = select.args.get("joins") or []
    if any(j.args.get("using") or str(j.args.get("method") or "").upper() == "NATURAL"
           for j in joins):
        return None
    sources = []
    for source in [from_.this] + [j.this for j in joins]:
        columns = source_columns(source, schema)
        if columns is None:
            return None
        sources.append((source.alias_or_name, columns))
    return sources


def source_columns(source: exp.Expression, schema) -> list[str] | None:
    """The column names of a FROM source: a base table of ``schema`` (no column list on its
    alias), a derived table or a CTE whose select items are all named; else None."""
    if isinstance(source, exp.Subquery):
        return _query_columns(source.this, schema)
    if not isinstance(source, exp.Table):
        return None
    cte = cte_of(source)
    alias = source.args.get("alias")
    if alias is not None and alias.columns:
        return None
    if cte is not None:
        return _query_columns(cte.this, schema)
    return _columns_of(schema, table_key(source))


def _query_columns(query: exp.Expression, schema) -> list[str] | None:
    """The names of a query's columns (its first SELECT's), once ``_name_items`` has named
    them; a lone ``*`` (``SELECT * FROM t``) stands for its sources' columns when those are
    known and distinct; else None."""
    branches = set_branches(query)
    if not branches:
        return None
    items = branches[0].expressions
    if any(item.is_star for item in items):
        items = written_out(branches[0], schema)
        if items is None:
            return None
    names = [item.alias_or_name for item in items]
    return names if len({name.lower() for name in names}) == len(names) else None


def _columns_of(schema, key: str) -> list[str] | None:
    if key in schema:
        return list(schema[key])
    matches = [name for name in schema if name.lower() == key.lower()]
    return list(schema[matches[0]]) if len(matches) == 1 else None


def set_branches(query: exp.Expression) -> list[exp.Select]:
    """The SELECTs of a query: itself, or each side of its UNION / INTERSECT / EXCEPT, a
    side in parentheses too."""
    if isinstance(query, exp.Subquery):
        return set_branches(query.unnest())
    if isinstance(query, exp.SetOperation):
        return set_branches(query.this) + set_branches(query.expression)
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
