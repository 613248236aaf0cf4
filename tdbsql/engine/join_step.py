"""The Join step: the source rows joined with each join entry in turn.

sqlglot lifts the equality conjuncts of ON into ``source_key`` / ``join_key``; those go to the
hash join kernel.  The rest of ON (``condition``) filters the matched pairs before outer rows are
added back, which is what ON means for LEFT / RIGHT / FULL joins.  A join without keys is a
cross product, refused past the memory budget.
"""

from __future__ import annotations

import numpy as np
from ..errors import SqlError
from ..planner.conjuncts import and_all, conjuncts, tables_of
from .deferred_inputs import Deferred, run_deferred
from .frame import Frame
from .joined_rows import JoinedRows
from .grouping import group_ids
from .hash_join import hash_join


def run_join(step, dependencies: dict[str, Frame], runner) -> Frame:
    """``dependencies``: the frame of each input step by step name (source and join aliases).

    The leading inner joins run in the planned order except that a join on a unique key of a
    table no larger than the rows so far -- it can only keep or drop rows -- goes first
    whenever its keys can be read (the smallest such table first: TPC-H Q21 joins the one
    nation row before 3.8M lineitem rows, not after).  Inner joins commute, so the rows are
    the same; joins with other ON conditions keep their place."""
    left = JoinedRows.of(dependencies[step.source_name])
    names = list(step.joins)
    pending = []
    for name in names:
        join = step.joins[name]
        if (join.get("side") or "").upper() not in ("", "INNER") or conjuncts(
                join.get("condition")):
            break
        pending.append(name)
    unique: dict[str, bool] = {}
    order = []
    while pending:
        name = _next_inner(pending, left, dependencies, step.joins, runner, unique)
        pending.remove(name)
        left = _join_one(left, dependencies[name], step.joins[name], runner, name)
        names.remove(name)
        order.append((name, left.length))
    for name in names:
        left = _join_one(left, dependencies[name], step.joins[name], runner, name)
        order.append((name, left.length))
    runner.join_orders[id(step)] = order  # for EXPLAIN ANALYZE: the order that ran
    return left.frame()


def _next_inner(pending: list[str], left: JoinedRows, dependencies, joins, runner,
                unique: dict[str, bool]) -> str:
    """The planned next join, or a filtering one (see ``run_join``) that can run now."""
    best = None
    for name in pending:
        right, join = dependencies[name], joins[name]
        keys = join.get("source_key") or []
        if isinstance(right, Deferred) or not keys or right.length > left.length or \
                best is not None and dependencies[best].length <= right.length:
            continue
        if not _keys_ready(keys, left):
            continue
        if name not in unique:
            flat = right.flat()
            values = [runner.column(right, key, flat) for key in join.get("join_key")]
            unique[name] = group_ids(values).count == right.length
        if unique[name]:
            best = name
    if best is None and isinstance(dependencies[pending[0]], Deferred):
        # a deferred input runs for the keys joined so far: join what can come first
        best = next((name for name in pending if not isinstance(dependencies[name], Deferred)
                     and joins[name].get("source_key")
                     and _keys_ready(joins[name]["source_key"], left)), None)
    return pending[0] if best is None else best


def _keys_ready(keys, left: JoinedRows) -> bool:
    tables = left.tables
    return all(tables_of(key) <= tables for key in keys)



def _join_one(left: JoinedRows, right, join: dict, runner, name: str) -> JoinedRows:
    if isinstance(right, Deferred):
        right = run_deferred(runner, right, left.frame(join["source_key"]), join)
    side = (join.get("side") or "").upper()
    left_idx, right_idx = _matches(left, right, join, runner, name)
    condition = and_all(conjuncts(join.get("condition")))
    if condition is not None and len(left_idx):
        pairs = left.joined(left_idx, right, right_idx).frame([condition])
        keep = runner.mask(pairs, condition)
        left_idx, right_idx = left_idx[keep], right_idx[keep]
    if side in ("LEFT", "FULL"):
        unmatched = _unmatched(left.length, left_idx)
        left_idx = np.concatenate([left_idx, unmatched])
        right_idx = np.concatenate([right_idx, np.full(len(unmatched), -1, np.int64)])
    if side in ("RIGHT", "FULL"):
        unmatched = _unmatched(right.length, right_idx)
        right_idx = np.concatenate([right_idx, unmatched])
        left_idx = np.concatenate([left_idx, np.full(len(unmatched), -1, np.int64)])
    runner.check_join(len(left_idx), [*left.inputs, right], f"the join with {name!r}")
    return left.joined(left_idx, right, right_idx)


def _matches(left: JoinedRows, right: Frame, join: dict, runner, name: str):
    source_key, join_key = join.get("source_key") or [], join.get("join_key") or []
    if name in runner.query.scalar_subqueries and right.length > 1:
        raise SqlError("more than one row returned by a subquery used as an expression",
                       runner.sql)
    if not source_key:
        runner.check_join(left.length * right.length, [*left.inputs, right],
                          f"the cross join with {name!r}")
        left_idx = np.repeat(np.arange(left.length, dtype=np.int64), right.length)
        right_idx = np.tile(np.arange(right.length, dtype=np.int64), left.length)
        return left_idx, right_idx
    keyed = left.frame(source_key)
    left_flat, right_flat = keyed.flat(), right.flat()
    left_keys = [runner.column(keyed, key, left_flat) for key in source_key]
    right_keys = [runner.column(right, key, right_flat) for key in join_key]
    # the hash table is built on the smaller side (part's 1,451 rows, not lineitem's 6M);
    # the matched pairs are the same either way (outer rows are added from them after)
    if right.length > left.length:
        right_idx, left_idx = hash_join(right_keys, left_keys, "inner")
    else:
        left_idx, right_idx = hash_join(left_keys, right_keys, "inner")  # it unifies types
    return np.asarray(left_idx, dtype=np.int64), np.asarray(right_idx, dtype=np.int64)


def _unmatched(length: int, matched: np.ndarray) -> np.ndarray:
    seen = np.zeros(length, dtype=bool)
    seen[matched[matched >= 0]] = True
    return np.flatnonzero(~seen).astype(np.int64)
