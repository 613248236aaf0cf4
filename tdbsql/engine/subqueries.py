"""Subqueries the optimizer left inside expressions, run once and turned into columns.

sqlglot decorrelates most subqueries into joins; what remains in an expression (a scalar
subquery in SELECT, ``x IN (SELECT ...)`` under an OR, ``EXISTS`` in a CASE ...) is
uncorrelated, so it runs once per query: a scalar becomes a constant, IN becomes a membership
test with SQL's NULL rules, EXISTS a boolean.  A correlated subquery sqlglot could not unnest
is refused by name rather than run row by row.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp
from sqlglot.optimizer.scope import build_scope

import numpy as np

from ..errors import SqlError, UnsupportedSql
from ..planner.build import plan_steps
from ..planner.conjuncts import has_subquery
from ..planner.correlated import Correlated
from ..planner.table_refs import inside
from .correlated import correlated_values
from .frame import broadcast
from .hash_table import as_array
from .list_values import is_list
from .value_types import comparable_pair, compare_plain, unsigned_zeros


class SubqueryResolver:
    def __init__(self, runner, ctes: exp.With | None, correlated: tuple = ()):
        self.runner = runner
        self.ctes = ctes
        self.correlated = correlated  # planner.correlated: the query's correlated subqueries
        self.cache: dict[str, pa.Table] = {}

    def resolve(self, node: exp.Expression, flat: pa.Table, frame) -> tuple:
        """``node`` with its subqueries replaced by columns added to ``flat``."""
        if not has_subquery(node):
            return node, flat
        node = node.copy()
        found = node.find_all(exp.Exists, exp.Any, exp.All, exp.Subquery, Correlated)
        for i, sub in enumerate(list(found)):
            if not inside(sub, node):
                continue  # inside a subtree already replaced (a subquery under ANY/ALL)
            name = f"__subquery{i}"
            target, value = self._value(sub, flat, frame)
            flat = flat.append_column(name, broadcast(value, flat.num_rows))  # a constant column
            replacement = exp.column(name, quoted=True)
            if target is node:
                node = replacement
            else:
                target.replace(replacement)
        return node, flat

    def _value(self, sub, flat, frame):
        if isinstance(sub, Correlated):
            entry = self.correlated[int(sub.this.name)]
            return sub, correlated_values(self.runner, entry, sub, frame, flat)
        if isinstance(sub, (exp.Any, exp.All)):
            return self._quantified(sub, flat, frame)
        query = sub.this.unnest() if isinstance(sub.this, exp.Expression) else sub.this
        scope = build_scope(query)
        if scope is not None and scope.external_columns:
            raise UnsupportedSql(f"correlated subquery {sub.sql()!r} in this position is not "
                                 "supported")
        result = self._run(query)
        if isinstance(sub, exp.Exists):
            return sub, pa.scalar(result.num_rows > 0)
        parent = sub.parent
        if isinstance(parent, exp.In) and parent.args.get("query") is sub:
            if isinstance(parent.this, exp.Tuple):
                probes = [self.runner.column(frame, e, flat) for e in parent.this.expressions]
                return parent, _tuple_membership(probes, result)
            probe = self.runner.column(frame, parent.this, flat)
            return parent, _membership(probe, result.column(0))
        if result.num_columns != 1:
            raise SqlError(f"a subquery used as a value must return one column, not "
                           f"{result.num_columns}", self.runner.sql)
        if result.num_rows > 1:
            raise SqlError("more than one row returned by a subquery used as an expression",
                           self.runner.sql)
        column = result.column(0)
        return sub, column[0] if result.num_rows else pa.scalar(None, column.type)

    def _quantified(self, sub, flat, frame):
        """``x <op> ANY|ALL (subquery)``: one pass over the candidates' min / max / set."""
        comparison = sub.parent
        if not isinstance(comparison, tuple(_FLIP)) or comparison.expression is not sub:
            raise UnsupportedSql(f"{sub.key.upper()} must be the right side of a comparison: "
                                 f"{comparison.sql()!r}")
        query = sub.this.unnest() if isinstance(sub.this, exp.Expression) else sub.this
        if isinstance(query, (exp.Select, exp.SetOperation)):
            scope = build_scope(query)
            if scope is not None and scope.external_columns:
                raise UnsupportedSql(f"correlated subquery {sub.sql()!r} is not supported")
            values = self._run(query).column(0).combine_chunks()
        else:  # x = ANY ([1, 2]): the list's elements are the candidates
            values = self._list_candidates(sub, query, flat, frame)
        if pa.types.is_dictionary(values.type):
            values = values.dictionary_decode()
        probe = self.runner.column(frame, comparison.this, flat)
        if pa.types.is_dictionary(probe.type):
            probe = probe.dictionary_decode()
        return comparison, _quantified(type(comparison), isinstance(sub, exp.All), probe, values)

    def _list_candidates(self, sub, value: exp.Expression, flat, frame) -> pa.Array:
        """The elements of the constant list ``value`` that ``x <op> ANY|ALL (list)`` compares
        with (a NULL list has none: ANY is FALSE, ALL TRUE, as in DuckDB)."""
        if value.find(exp.Column) is not None:
            raise UnsupportedSql(f"{sub.key.upper()} over a list that is not a constant is not "
                                 f"supported: {sub.sql()!r}")
        listed = self.runner.evaluate(frame, value, flat)
        first = listed if isinstance(listed, pa.Scalar) else listed[0]
        if not is_list(first):
            raise UnsupportedSql(f"{sub.key.upper()} of a {first.type} value is not supported "
                                 f"(a subquery or a list is): {sub.sql()!r}")
        return first.values if first.is_valid else pa.array([], first.type.value_type)

    def _run(self, query: exp.Expression) -> pa.Table:
        key = query.sql()
        if key not in self.cache:
            if self.ctes is not None:
                query = _with_outer_ctes(query, self.ctes)
            plan = plan_steps(query)
            frames = self.runner.run_plan(plan)
            root = plan.root
            self.cache[key] = frames[root].tables.get(root.name) or \
                next(iter(frames[root].tables.values()))
        return self.cache[key]


def _with_outer_ctes(query: exp.Expression, ctes: exp.With) -> exp.Expression:
    """``query`` (a copy) with the enclosing query's CTEs ahead of its own: a subquery with a
    WITH of its own (the window steps' ``_w0_rows``) may still read an outer CTE -- the
    optimizer hoists derived tables there (``NOT k IN (SELECT ... FROM (...) w)`` read an
    unknown table ``w``)."""
    query = query.copy()
    own = query.args.get("with_")
    if own is None:
        query.set("with_", ctes.copy())
        return query
    names = {cte.alias_or_name for cte in own.expressions}
    outer = [cte.copy() for cte in ctes.expressions if cte.alias_or_name not in names]
    own.set("expressions", outer + list(own.expressions))
    return query


_FLIP = {exp.EQ: "equal", exp.NEQ: "not_equal", exp.LT: "less", exp.LTE: "less_equal",
         exp.GT: "greater", exp.GTE: "greater_equal"}


def _quantified(op, every: bool, probe: pa.Array, values: pa.Array) -> pa.Array:
    """SQL's quantified comparison with its NULL rules: ANY is TRUE if some candidate compares
    TRUE, NULL if none does but a candidate (or the probe) is NULL, else FALSE; ALL is the dual;
    over no candidates ANY is FALSE and ALL is TRUE."""
    n = len(probe)
    if pa.types.is_struct(probe.type) or pa.types.is_struct(values.type):
        raise UnsupportedSql("ANY / ALL over a subquery of STRUCT values is not supported")
    if len(values) == 0:
        return pa.array(np.full(n, every, dtype=bool))
    known = values.drop_null()
    if len(known):
        probe, known = comparable(probe, known)
    if op in (exp.EQ, exp.NEQ):
        probe, known = unsigned_zeros(probe), unsigned_zeros(known)
        distinct = pc.unique(known)
        if (op is exp.EQ) != every:  # = ANY / <> ALL: membership
            hit = _is_in(probe, distinct)
            decided = hit if op is exp.EQ else pc.invert(hit)
        else:  # = ALL / <> ANY: all candidates equal the probe (NaN = NaN, as DuckDB)
            same = compare_plain("equal", probe, distinct[0]) if len(distinct) == 1 else \
                pa.array(np.zeros(n, dtype=bool))
            decided = same if op is exp.EQ else pc.invert(same)
    else:
        lower = op in (exp.LT, exp.LTE)
        pick_max = lower != every  # x < ANY -> vs max; x < ALL -> vs min
        if len(known) == 0:
            decided = pa.array(np.full(n, every, dtype=bool))
        else:
            decided = compare_plain(_FLIP[op], probe, _bound(known, pick_max))
    decided = pc.fill_null(decided, False).to_numpy(zero_copy_only=False).astype(bool)
    unknown = probe.is_null().to_numpy(zero_copy_only=False)
    if values.null_count:
        unknown = unknown | (decided == every)
    else:
        unknown = unknown & True
    return pa.array(decided, mask=unknown)


def _bound(known: pa.Array, pick_max: bool) -> pa.Scalar:
    """The largest or smallest of the non-NULL candidates as DuckDB orders them: NaN above
    every number (Arrow's min / max skip it)."""
    bound = pc.max(known) if pick_max else pc.min(known)
    if pa.types.is_floating(known.type) and (pick_max or not bound.is_valid) and \
            pc.any(pc.is_nan(known)).as_py():
        return pa.scalar(float("nan"), known.type)
    return bound


def _tuple_membership(probes: list[pa.Array], candidates: pa.Table) -> pa.Array:
    """``(a, b) IN (SELECT x, y ...)``: TRUE on a match of every part; NULL when no match but
    some candidate row could match (each part equal or NULL on one side: ``(1, 'a')`` against
    ``(NULL, 'b')`` is FALSE); else FALSE."""
    from .hash_join import hash_join

    if candidates.num_columns != len(probes):
        raise SqlError(f"IN compares {len(probes)} values with a subquery returning "
                       f"{candidates.num_columns} columns")
    columns = [as_array(c) for c in candidates.columns]
    probes = [as_array(p) for p in probes]
    matched, _ = hash_join(probes, columns, "semi")
    found = np.zeros(len(probes[0]), dtype=bool)
    found[np.asarray(matched, dtype=np.int64)] = True
    unknown = np.zeros(len(found), dtype=bool)
    probe_nulls = _null_patterns(probes)
    candidate_nulls = _null_patterns(columns)
    for candidate_pattern in np.unique(candidate_nulls):
        rows = np.flatnonzero(candidate_nulls == candidate_pattern)
        for probe_pattern in np.unique(probe_nulls):
            nulls = int(candidate_pattern) | int(probe_pattern)
            if not nulls:
                continue  # no NULL involved: ``found`` decided it
            probe_rows = np.flatnonzero((probe_nulls == probe_pattern) & ~found & ~unknown)
            parts = [i for i in range(len(probes)) if not nulls >> i & 1]
            if not parts:
                unknown[probe_rows] = True
            elif len(probe_rows):
                hit, _ = hash_join([probes[i].take(probe_rows) for i in parts],
                                   [columns[i].take(rows) for i in parts], "semi")
                unknown[probe_rows[np.asarray(hit, dtype=np.int64)]] = True
    return pa.array(found, mask=unknown)


def _null_patterns(parts: list[pa.Array]) -> np.ndarray:
    """Per row, a bit per part that is NULL."""
    pattern = np.zeros(len(parts[0]), dtype=np.int64)
    for i, part in enumerate(parts):
        pattern |= part.is_null().to_numpy(zero_copy_only=False).astype(np.int64) << i
    return pattern


def _membership(values: pa.Array, candidates: pa.ChunkedArray) -> pa.Array:
    """``values IN (candidates)`` with SQL NULLs: NULL when no match and a NULL candidate (or a
    NULL value); FALSE only when the value is known to be absent -- a NULL too when there are
    no candidates (``NULL IN (empty)`` is FALSE, ``NULL NOT IN (empty)`` TRUE)."""
    if len(candidates) == 0:
        return pa.array(np.zeros(len(values), dtype=bool))
    candidates = candidates.combine_chunks() if isinstance(candidates, pa.ChunkedArray) \
        else candidates
    if pa.types.is_dictionary(candidates.type):
        candidates = candidates.dictionary_decode()
    if pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    has_null = candidates.null_count > 0
    values, candidates = comparable(values, candidates)
    values, candidates = unsigned_zeros(values), unsigned_zeros(candidates)
    found = _is_in(values, candidates.drop_null())
    found = found.to_numpy(zero_copy_only=False).astype(bool)
    unknown = ~found & has_null
    value_null = values.is_null().to_numpy(zero_copy_only=False)
    return pa.array(found, mask=unknown | value_null)


def _is_in(values: pa.Array, candidates: pa.Array) -> pa.Array:
    """Per value, whether it equals a (non-NULL) candidate: ``pc.is_in``, but INTERVALs
    equal as they compare (1 day = 24 hours, by ``hash_join``'s normalised parts) and
    STRUCTs field by field (``hash_join``'s codes; Arrow has no is_in of them)."""
    if not pa.types.is_interval(values.type) and not pa.types.is_struct(values.type):
        return pc.is_in(values, value_set=candidates)
    from .hash_join import hash_join

    found = np.zeros(len(values), dtype=bool)
    if len(candidates):
        found[hash_join([values], [candidates], "semi")[0]] = True
    return pa.array(found)


def comparable(values: pa.Array, candidates: pa.Array) -> tuple[pa.Array, pa.Array]:
    """``values`` and the ``candidates`` they are compared with (IN, ANY / ALL) in the type a
    comparison meets in (``value_types.comparable_pair``: an INTEGER with a DOUBLE 5.25, a
    DECIMAL(4,1) with a DECIMAL(7,2) in their common type); ``SqlError`` when there is none
    or a value does not fit it, as for ``=``."""
    if candidates.type == values.type:
        return values, candidates
    try:
        return comparable_pair(values, candidates)
    except (ValueError, pa.ArrowInvalid, pa.ArrowNotImplementedError) as err:
        raise SqlError(f"IN / ANY / ALL over a subquery: {err}") from None
