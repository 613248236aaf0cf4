"""After GROUP BY, an expression reads a grouped expression through its group key column.

sqlglot's planner names each GROUP BY expression of an Aggregate step ``_g<i>`` (its
``group``), and the step's output has one row per group with those key columns; the input
columns are gone.  It rewrites a key's occurrences as ``<step>._g<i>`` only in the plain
projections and in a HAVING without an aggregate.  Everything else evaluated per group is left
reading the input rows, and fails with an unknown column at run time:

* the step's ``aggregations``: the whole output expressions around aggregate calls
  (``length(upper(g)) + count(*)``), a HAVING with an aggregate (``_h``) and an ORDER BY key
  with one (``_o_<i>``);
* the keys of the Sort over the step (``GROUP BY upper(g) ORDER BY upper(g)``, also for a
  plain column key: ``GROUP BY g ORDER BY g``);
* what the DISTINCT step over it evaluates (``SELECT DISTINCT ... GROUP BY ... ORDER BY``).

``group_key_references`` rewrites those, in every Aggregate step with GROUP BY keys: each
subtree equal to a key becomes a reference to the key's column, outside aggregate calls (whose
arguments are read per input row) and nested subqueries (their own scope).  The grouped-column
check (``planner.grouped_columns``) has already refused a column read outside the keys and the
aggregates, so whatever input column is left after this is inside an aggregate call.

Only those expressions: in them a qualified column is an input column (``_a_<i>`` operands are
unqualified, a bare ORDER BY name is an output alias).  The projections, the HAVING condition
and the DISTINCT step's group are left as sqlglot made them: there ``<step>.<name>`` may name
one of the step's outputs, which must not be taken for a grouped input column of that name
(``SELECT count(*) AS g FROM t GROUP BY g``).
"""

from __future__ import annotations

from sqlglot import exp, planner

_OWN_SCOPE = (exp.Subquery, exp.Exists, exp.Select)


def group_key_references(plan: planner.Plan) -> planner.Plan:
    """Rewrite, per grouped Aggregate step, what is evaluated over its groups to read the
    group key columns (in place; returns ``plan``)."""
    for step in plan.dag:
        if not isinstance(step, planner.Aggregate) or not step.group:
            continue
        keys: dict[exp.Expression, exp.Column] = {}
        for name, key in step.group.items():
            keys.setdefault(key, exp.column(name, step.name, quoted=True))
        step.aggregations = [_rewrite(e, keys) for e in step.aggregations]
        if step.projections or len(step.dependents) != 1:
            continue  # the last step of its SELECT: what reads it is another query
        after = next(iter(step.dependents))
        if isinstance(after, planner.Sort):
            for ordered in after.key:
                ordered.set("this", _rewrite(ordered.this, keys))
        elif isinstance(after, planner.Aggregate):  # DISTINCT: its rows are our groups
            after.operands = tuple(_rewrite(e, keys, calls=True) for e in after.operands)
            after.aggregations = [_rewrite(e, keys, calls=True) for e in after.aggregations]
    return plan


def _rewrite(node: exp.Expression, keys: dict, calls: bool = False) -> exp.Expression:
    """``node`` with every subtree equal to a key replaced by the key's column (the largest
    first: a key inside another key is read through the outer one), not inside aggregate calls
    unless ``calls``.  In place, but the root may be replaced: use the result."""
    column = keys.get(node)
    if column is not None:
        return column.copy()
    if isinstance(node, _OWN_SCOPE) or (isinstance(node, (exp.AggFunc, exp.Filter))
                                        and not calls):
        return node  # (a FILTER's condition, like the call's argument, reads input rows)
    for child in list(node.iter_expressions()):
        new = _rewrite(child, keys, calls)
        if new is not child:
            child.replace(new)
    return node
