"""The tables a query reads, and the catalog name each table reference stands for."""

from __future__ import annotations

from sqlglot import exp


def referenced_tables(tree: exp.Expression) -> list[exp.Table]:
    """The base tables of a query: every table reference that is not a CTE name."""
    ctes = {cte.alias_or_name for cte in tree.find_all(exp.CTE)}
    return [t for t in tree.find_all(exp.Table)
            if t.name and not (t.name in ctes and not t.args.get("db"))]


def table_key(table: exp.Table) -> str:
    """How a table reference names its source: a registered name or a (quoted) path."""
    if table.args.get("db") or table.args.get("catalog"):
        return ".".join(p.name for p in table.parts)
    return table.name


def dotted_names(tree: exp.Expression, registered) -> exp.Expression:
    """Tables registered under a dotted name (``tpch.lineitem``: a member of a registered
    TileDB group) named with their parts in ``tree`` become one quoted name, aliased by the
    last part unless aliased already, so the planner sees an ordinary table (its columns
    ``lineitem.x``); a column spelled ``tpch.lineitem.x`` loses its first part alike.
    ``registered(name)`` gives the catalog's name or None."""
    def dotted(node: exp.Expression) -> list[exp.Table]:
        return [t for t in node.find_all(exp.Table)
                if (t.args.get("db") or t.args.get("catalog")) and registered(table_key(t))]

    if not dotted(tree):
        return tree
    tree = tree.copy()
    prefixes = set()
    for table in dotted(tree):
        name = table.name
        prefixes.add((".".join(p.name for p in table.parts[:-1]).lower(), name.lower()))
        table.set("this", exp.to_identifier(registered(table_key(table)), quoted=True))
        table.set("db", None)
        table.set("catalog", None)
        if not table.alias:
            table.set("alias", exp.TableAlias(this=exp.to_identifier(name)))
    for column in tree.find_all(exp.Column):
        if column.args.get("db") and not column.args.get("catalog") and \
                (column.db.lower(), column.table.lower()) in prefixes:
            column.set("db", None)
    return tree


def cte_of(table: exp.Table, fold: bool = False) -> exp.CTE | None:
    """The CTE a table name refers to: the nearest WITH above it that defines the name (not
    the CTE the reference is in, which would be recursive); ``fold``: the name in any case."""
    if table.args.get("db") or table.args.get("catalog"):
        return None
    node = table.parent
    while node is not None:
        with_ = node.args.get("with_") if isinstance(node, exp.Query) else None
        if isinstance(with_, exp.With):
            for cte in with_.expressions:
                same = cte.alias.lower() == table.name.lower() if fold else \
                    cte.alias == table.name
                if same and not inside(table, cte):
                    return cte
        node = node.parent
    return None


def cte_names_as_written(tree: exp.Expression) -> exp.Expression:
    """A table reference naming a CTE in another case (``WITH x AS (...) ... FROM X``) spelled
    as the CTE is, in place: names are case-insensitive in DuckDB."""
    for table in list(tree.find_all(exp.Table)):
        if table.name and cte_of(table) is None:
            cte = cte_of(table, fold=True)
            if cte is not None:
                table.set("this", cte.args["alias"].this.copy())  # quoted as the CTE is
    return tree


def inside(node: exp.Expression, ancestor: exp.Expression) -> bool:
    """Is ``node`` ``ancestor`` or below it?"""
    while node is not None:
        if node is ancestor:
            return True
        node = node.parent
    return False


def local_names(query: exp.Expression) -> set[str]:
    """The names ``query`` (at any depth) gives its sources: a column naming another reads
    a query outside it (a correlated column)."""
    local = {t.alias_or_name for t in query.find_all(exp.Table)}
    return local | {s.alias for s in query.find_all(exp.Subquery, exp.CTE, exp.Values)
                    if s.alias}
