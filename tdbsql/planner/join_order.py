"""Join order: keyless inner joins put off until a key connects them, and LEFT joins whose
NULL rows the step drops made inner (``inner_when_nulls_rejected``).  At run time
``engine.join_step`` also moves small unique-key joins ahead.

sqlglot's planner joins the tables of a FROM list in the order written.  TPC-H Q2 lists
``part, supplier, partsupp, ...``: part and supplier share no key (both join partsupp), so the
second table was a cross product (747 x 10,000 rows at SF1) before partsupp narrowed it.
Within the leading run of inner joins of a Join step -- any order of inner joins gives the same
rows -- a join without a key to the tables joined so far waits while a later one has such a
key; each join then takes every equality key between its table and the tables joined before
it (``partsupp`` keeps ``p_partkey = ps_partkey``; ``supplier`` takes ``ps_suppkey =
s_suppkey``).  Joins that do have keys keep their written order (no cardinality guesses), and
a step whose joins carry other ON conditions, or whose keys read tables outside the step, is
left as it is.
"""

from __future__ import annotations

from sqlglot import exp, planner

from .conjuncts import conjuncts, tables_of


def defer_cross_joins(plan: planner.Plan) -> planner.Plan:
    """Reorder the inner joins of every Join step as the module says (in place)."""
    for step in plan.dag:
        if isinstance(step, planner.Join) and len(step.joins) > 1:
            step.joins = _ordered(step.source_name, step.joins)
    return plan


def keys_on_their_sides(plan: planner.Plan) -> planner.Plan:
    """Join key pairs whose join side reads more than the joined table, or whose source side
    reads it, made ON conditions (in place).  sqlglot takes ``da.x + db.id = 0.0`` for the
    key pair ``0.0`` / ``da.x + db.id`` of the join with ``db``; the hash join would then
    look for ``da`` among ``db``'s columns."""
    for step in plan.dag:
        if not isinstance(step, planner.Join):
            continue
        for name, join in step.joins.items():
            pairs = list(zip(join.get("source_key") or [], join.get("join_key") or []))
            misplaced = [(a, b) for a, b in pairs
                         if not tables_of(b) <= {name} or name in tables_of(a)]
            if not misplaced:
                continue
            kept = [pair for pair in pairs if pair not in misplaced]
            join["source_key"] = [a for a, _ in kept]
            join["join_key"] = [b for _, b in kept]
            equalities = [exp.EQ(this=a.copy(), expression=b.copy()) for a, b in misplaced]
            join["condition"] = exp.and_(*conjuncts(join.get("condition")), *equalities)
    return plan


def inner_when_nulls_rejected(plan: planner.Plan) -> planner.Plan:
    """A LEFT join whose step keeps only rows where a column of the joined table is not NULL
    (``WHERE NOT _u_0.k IS NULL``: how sqlglot decorrelates ``IN (SELECT ...)``) is an inner
    join -- the rows the LEFT join adds have that column NULL -- and becomes one (in place),
    so it can run as early as an inner join may (``engine.join_step``)."""
    for step in plan.dag:
        if not isinstance(step, planner.Join) or not step.joins:
            continue
        required = {_not_null_table(c) for c in conjuncts(step.condition)} - {None}
        for name, join in step.joins.items():
            if (join.get("side") or "").upper() == "LEFT" and name in required:
                join["side"] = ""
    return plan


def _not_null_table(conjunct: exp.Expression) -> str | None:
    """The table of ``NOT t.c IS NULL`` (how sqlglot holds ``t.c IS NOT NULL``), else None."""
    test = conjunct.this if isinstance(conjunct, exp.Not) else None
    if isinstance(test, exp.Is) and isinstance(test.this, exp.Column) and \
            isinstance(test.expression, exp.Null):
        return test.this.table or None
    return None


def _ordered(source: str, joins: dict[str, dict]) -> dict[str, dict]:
    names = list(joins)
    prefix = []
    for name in names:
        if (joins[name].get("side") or "").upper() not in ("", "INNER"):
            break
        prefix.append(name)
    if all(joins[name].get("source_key") for name in prefix) or \
            any(conjuncts(joins[name].get("condition")) for name in prefix):
        return joins
    pairs = [(a, b, tables_of(a), tables_of(b)) for name in prefix
             for a, b in zip(joins[name].get("source_key") or [], joins[name].get("join_key") or [])]
    joined, pending, order, used = {source}, list(prefix), [], set()
    keys: dict[str, tuple[list, list]] = {name: ([], []) for name in prefix}
    while pending:
        chosen = next((name for name in pending if any(
            i not in used and _connects(ta, tb, joined, name)
            for i, (_, _, ta, tb) in enumerate(pairs))), pending[0])
        for i, (a, b, ta, tb) in enumerate(pairs):
            if i in used:
                continue
            if ta <= joined and tb == {chosen}:
                keys[chosen][0].append(a)
                keys[chosen][1].append(b)
                used.add(i)
            elif tb <= joined and ta == {chosen}:
                keys[chosen][0].append(b)
                keys[chosen][1].append(a)
                used.add(i)
        pending.remove(chosen)
        order.append(chosen)
        joined.add(chosen)
    if order == prefix or len(used) != len(pairs):
        return joins  # nothing to gain, or a key this cannot place: as sqlglot planned it
    reordered = {name: {**joins[name], "source_key": keys[name][0], "join_key": keys[name][1]}
                 for name in order}
    reordered.update((name, joins[name]) for name in names[len(prefix):])
    return reordered


def _connects(ta: set[str], tb: set[str], joined: set[str], name: str) -> bool:
    return (ta <= joined and tb == {name}) or (tb <= joined and ta == {name})
