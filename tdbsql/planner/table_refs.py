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
