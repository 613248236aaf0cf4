"""Push single-table predicates of a join down into the scans they filter.

sqlglot leaves a query's WHERE on its Join step and the ON conditions on the join entries; base
tables have no WHERE of their own.  A conjunct that reads one table alias only can filter that
table's scan -- where the scan prunes fragments and tiles with it -- as long as the alias is not
on the NULL-supplying side of an outer join (a WHERE on the right side of a LEFT JOIN must see
the NULL rows the join makes).  ON conjuncts of an inner or LEFT join that read only the joined
table filter that table before the join, which is what ON means.  Pushed conjuncts stay in the
plan where they were (EXPLAIN shows both places); the runner evaluates a WHERE conjunct only in
the scan it was pushed into (``Runner.residual``).
"""

from __future__ import annotations

import math

from sqlglot import exp, planner

from .asof_joins import ASOF
from .conjuncts import and_all, conjuncts, tables_of
from .table_samples import is_sample_mark


def scan_filters(plan: planner.Plan) -> dict[int, list[exp.Expression]]:
    """id(scan step) -> conjuncts to apply in that scan, on top of the step's own condition."""
    pushed: dict[int, list[exp.Expression]] = {}
    for step in plan.dag:
        if isinstance(step, planner.Join):
            _push_join(step, pushed)
    return pushed


def _push_join(step: planner.Join, pushed: dict[int, list]) -> None:
    scans = {dep.name: dep for dep in step.dependencies if isinstance(dep, planner.Scan)}
    nullable = _null_supplying(step)
    for conjunct in conjuncts(step.condition):
        alias = _single_alias(conjunct)
        if alias in scans and alias not in nullable:
            pushed.setdefault(id(scans[alias]), []).append(conjunct)
        elif is_sample_mark(conjunct):  # a SYSTEM sample: its table's rows, read alone
            if not step.joins and len(scans) == 1:
                pushed.setdefault(id(next(iter(scans.values()))), []).append(conjunct)
        elif alias is None:
            for implied_alias, implied in implied_filters(conjunct):
                if implied_alias in scans and implied_alias not in nullable:
                    scan = scans[implied_alias]
                    pushed.setdefault(id(scan), []).append(implied)
                    base = _projected_base(scan, implied)
                    if base is not None:  # through the projection, onto the array's scan
                        pushed.setdefault(id(base[0]), []).append(base[1])
    for name, join in step.joins.items():
        if join.get("side") not in (None, "", "LEFT") or name not in scans:
            continue
        for conjunct in conjuncts(join.get("condition")):
            if _single_alias(conjunct) == name:
                pushed.setdefault(id(scans[name]), []).append(conjunct)


def _null_supplying(step: planner.Join) -> set[str]:
    """Aliases whose rows an outer join may replace by NULLs, and the right tables of ASOF
    joins (which choose among their rows: filtering them first changes the choice)."""
    seen = [step.source_name]
    nullable: set[str] = set()
    for name, join in step.joins.items():
        side = join.get("side") or ""
        asof = side.startswith(ASOF)
        side = side.removeprefix(ASOF).strip()
        if side in ("LEFT", "FULL") or asof:
            nullable.add(name)
        if side in ("RIGHT", "FULL"):
            nullable.update(seen)
        seen.append(name)
    return nullable


def implied_filters(conjunct: exp.Expression) -> list[tuple[str, exp.Expression]]:
    """Filters on one table implied by a disjunction over several (TPC-H Q19's
    ``(p.x AND l.y AND join) OR (p.z AND l.w AND join) OR ...``): for each alias that every
    disjunct constrains on its own, the OR of those single-alias parts, as new nodes.  The scan
    of that table may apply it before the join; the whole disjunction still runs where it was,
    so only rows that cannot pass are dropped early."""
    if not isinstance(conjunct, exp.Or) or conjunct.find(exp.Subquery, exp.Exists, exp.AggFunc):
        return []
    disjuncts = [d.unnest() for d in conjunct.flatten()]
    parts = [[(alias, term) for term in conjuncts(d)
              if (alias := _single_alias(term)) is not None] for d in disjuncts]
    implied = []
    for alias in sorted({alias for part in parts for alias, _ in part}):
        per_disjunct = [[term for a, term in part if a == alias] for part in parts]
        if not all(per_disjunct):
            continue
        # (A AND B) OR (A AND C) = A AND (B OR C): a term every disjunct has is its own filter
        # (Q19's l_shipinstruct = 'DELIVER IN PERSON'), which zone maps and the stored-value
        # filters can use; the OR keeps the rest
        texts = [{term.sql() for term in terms} for terms in per_disjunct]
        common = set.intersection(*texts)
        implied += [(alias, term.copy()) for term in per_disjunct[0] if term.sql() in common]
        rests = [[term for term in terms if term.sql() not in common] for terms in per_disjunct]
        if all(rests):
            ors = [and_all([term.copy() for term in terms]) for terms in rests]
            implied.append((alias, exp.or_(*ors, copy=False)))
    return implied


def _projected_base(scan: planner.Scan, condition: exp.Expression):
    """(the base table's scan step, ``condition`` in its column names) when ``scan`` reads a
    step that only projects plain columns of one base table (how the optimizer isolates each
    table of a join: ``lineitem_2`` = SELECT l_partkey, ... FROM lineitem), else None.  There
    the condition can filter the array's scan itself (stored-value filters, zone maps), not
    the rows the projection materialized."""
    if len(scan.dependencies) != 1:
        return None
    middle = next(iter(scan.dependencies))
    if not isinstance(middle, planner.Join) or middle.joins or middle.limit != math.inf or \
            len(middle.dependencies) != 1 or not middle.projections:
        return None
    base = next(iter(middle.dependencies))
    if not isinstance(base, planner.Scan) or base.dependencies or \
            not isinstance(base.source, exp.Table) or base.limit != math.inf:
        return None
    columns = {}
    for projection in middle.projections:
        value = projection.unalias()
        if not isinstance(value, exp.Column) or value.table != base.name:
            continue
        columns[projection.alias_or_name] = value
    translated = condition.copy()
    for column in list(translated.find_all(exp.Column)):
        source = columns.get(column.name)
        if source is None:
            return None
        column.replace(source.copy())
    return base, translated


def _single_alias(node: exp.Expression) -> str | None:
    if node.find(exp.Subquery, exp.Exists, exp.AggFunc):
        return None
    tables = tables_of(node)
    return tables.pop() if len(tables) == 1 and "" not in tables else None
