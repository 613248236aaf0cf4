"""SELECT DISTINCT whose select list repeats an output name (``SELECT DISTINCT g, g``,
``SELECT DISTINCT id, 10, 10``).

sqlglot's planner groups a DISTINCT by a dict of the output names, so a repeated name kept one
column: the result lost the others (DuckDB returns every item).  Before planning, each repeat
gets a name of its own (``g__2``); the result's names are the ones written
(``LogicalQuery.names``), so nothing shows the new name.
"""

from __future__ import annotations

from sqlglot import exp

from .source_aliases import fresh_alias


def distinct_output_names(tree: exp.Expression) -> exp.Expression:
    """``tree``, or a copy of it in which no DISTINCT select list repeats an output name."""
    if not any(_repeats(select) for select in tree.find_all(exp.Select)):
        return tree
    tree = tree.copy()
    for select in tree.find_all(exp.Select):
        if not _repeats(select):
            continue
        taken = {item.alias_or_name.lower() for item in select.expressions}
        seen: set[str] = set()
        for item in select.expressions:
            name = item.alias_or_name
            if name in seen:
                item.replace(exp.alias_(item.unalias(), fresh_alias(name, taken), quoted=True))
            seen.add(name)
    return tree


def _repeats(select: exp.Select) -> bool:
    if not select.args.get("distinct"):
        return False
    names = [item.alias_or_name for item in select.expressions]
    return len(set(names)) != len(names)
