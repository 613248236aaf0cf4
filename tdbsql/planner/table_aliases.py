"""``FROM emp AS e(a, b)``: a column list on a base table's alias renames its first columns.

DuckDB reads ``emp AS e(a, b)`` as ``emp`` whose first two columns are called ``a`` and ``b``
(the rest keep their names), so ``e.a`` is ``emp.emp_id`` and ``JOIN dept USING (b)`` /
``NATURAL JOIN`` match on the renamed column.  A name that the renaming makes appear twice
(``e(ename)`` when ``emp`` has an ``ename`` further on) gets DuckDB's ``_1``, ``_2`` suffix;
more names than columns is an error.

sqlglot resolves names through such a list, but its optimizer then wraps each table of a join
in ``(SELECT * FROM emp AS e) AS e`` (``isolate_table_selects``) and loses the list on the way:
``USING (b)`` fails with "Cannot automatically join", and a lone ``e(ename)`` read the string
column ``ename`` instead of ``emp_id``.  The arrays only know their real field names anyway.
So ``rename_table_columns`` writes the renaming out before the optimizer, as that wrapping
would: ``(SELECT emp_id AS a, dept_id AS b, ename, ... FROM emp AS e) AS e``.  The optimizer
merges it back into its query where it merges a plain table; the scans read real fields.
"""

from __future__ import annotations

from sqlglot import exp

from ..errors import SqlError
from .parse import span_of
from .table_refs import cte_of, table_key

_RENAMING = "tdbsql_renaming"  # meta key on the columns the renaming select reads


def rename_table_columns(tree: exp.Expression, schema: dict[str, dict[str, str]],
                         sql: str) -> exp.Expression:
    """Every table whose alias lists column names, as a subquery renaming its columns (in
    place: a table is never the root).  A CTE's reference becomes ``(SELECT * FROM c) AS
    z(a)``, a list on a derived table, which sqlglot keeps."""
    for table in list(tree.find_all(exp.Table)):
        alias = table.args.get("alias")
        if alias is None or not alias.columns:
            continue
        if cte_of(table) is not None:
            table.replace(_derived(table))
            continue
        real = list(schema.get(table_key(table)) or ())
        if not real:
            continue  # an unknown table: the catalog reports it
        if len(alias.columns) > len(real):
            raise SqlError(f'table "{alias.name}" has {len(real)} columns available but '
                           f"{len(alias.columns)} columns specified", sql, span_of(alias))
        table.replace(_renaming_select(table, real))
    return tree


def _renaming_select(table: exp.Table, real: list[str]) -> exp.Subquery:
    """``(SELECT real AS name, ... FROM table AS alias) AS alias`` for ``table`` (whose alias
    lists the new names), every column named as DuckDB names it."""
    alias = table.args["alias"]
    given = [ident.name for ident in alias.columns]
    names = unique_names(given + real[len(given):])
    outer = exp.TableAlias(this=alias.this.copy())
    alias.set("columns", None)
    items = []
    for field, name in zip(real, names):
        column = exp.column(field, alias.name, quoted=True)
        column.meta[_RENAMING] = True
        items.append(exp.alias_(column, name, quoted=True))
    return exp.select(*items).from_(table.copy()).subquery(outer)


def _derived(table: exp.Table) -> exp.Subquery:
    """``(SELECT * FROM table AS alias) AS alias(columns)``."""
    outer = table.args["alias"].copy()
    table.args["alias"].set("columns", None)
    return exp.select("*").from_(table.copy()).subquery(outer)


def unique_names(names: list[str]) -> list[str]:
    """DuckDB's renaming of repeated names (compared without regard to case): the first keeps
    its name, a later one becomes ``name_1`` (or ``name_2``, ... the first not yet taken).

    >>> unique_names(["y", "y", "z", "y_1"])
    ['y', 'y_1', 'z', 'y_1_1']
    """
    taken: set[str] = set()
    unique = []
    for name in names:
        candidate, suffix = name, 0
        while candidate.lower() in taken:
            suffix += 1
            candidate = f"{name}_{suffix}"
        taken.add(candidate.lower())
        unique.append(candidate)
    return unique


def renames(column: exp.Column) -> bool:
    """Whether ``column`` is one the renaming wrote (not the user: no name error is its)."""
    return bool(column.meta.get(_RENAMING))
