"""A correlated subquery's value for every row of a step, from one run of its decorrelated
query.

In: a ``Correlated`` call (``planner.correlated``) over the rows of a step.  Its outer
column arguments are evaluated over those rows; their distinct combinations (NULL equal to
NULL, as ``IS NOT DISTINCT FROM``) become the table ``__outer`` with a row number ``__k``;
the subquery's decorrelated form (``planner.decorrelate``) runs once over it; each row then
takes its ``__k``'s result.  Out: one array, a value per row:

- scalar: the row of its ``__k`` (NULL if none; more than one is DuckDB's error);
- EXISTS: whether its ``__k`` has a row (never NULL);
- ``x IN``: membership in its ``__k``'s rows with SQL's NULL rules (FALSE over none);
- ``x <op> ANY / ALL``: the comparison against its ``__k``'s rows' MIN / MAX.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from ..catalog import ArrowSource, Catalog, sql_type
from ..errors import SqlError
from ..planner.correlated import KEY, OUTER, Correlated, CorrelatedSubquery
from ..planner.decorrelate import dependent_query
from ..planner.table_refs import table_key
from .frame import null_padded
from .grouping import group_ids
from .hash_table import as_array
from .memory import MemoryBudget
from .value_types import compare_plain

_ORDERING = {exp.LT: "less", exp.LTE: "less_equal", exp.GT: "greater",
             exp.GTE: "greater_equal", exp.EQ: "equal", exp.NEQ: "not_equal"}


def correlated_values(runner, entry: CorrelatedSubquery, call: Correlated, frame,
                      flat: pa.Table) -> pa.Array:
    """The value of ``call`` for each row of ``flat`` (the rows of ``frame``)."""
    args = [as_array(runner.column(frame, arg, flat)) for arg in call.expressions]
    probes, keys = args[:entry.probes], args[entry.probes:]
    groups = group_ids(keys)
    ids = np.asarray(groups.ids, dtype=np.int64)
    first = pa.array(np.asarray(groups.first, dtype=np.int64))
    outer = pa.table([pa.array(np.arange(groups.count, dtype=np.int64))] +
                     [key.take(first) for key in keys],
                     names=[KEY] + [f"c{i}" for i in range(len(keys))])
    result = run_dependent(runner, entry, outer)
    if entry.kind == "exists":
        present = np.zeros(groups.count, dtype=bool)
        present[_keys(result)] = True
        return pa.array(present[ids])
    if entry.kind == "scalar":
        return _scalar(runner, result, groups.count, ids)
    if entry.kind == "in" or (entry.kind, entry.operator) in (("any", exp.EQ),
                                                               ("all", exp.NEQ)):
        found = _membership(probes, ids, result)
        return pc.invert(found) if entry.kind == "all" else found
    return _quantified(entry.operator, entry.kind == "all", probes[0], ids, groups.count, result)


def run_dependent(runner, entry: CorrelatedSubquery, outer: pa.Table) -> pa.Table:
    """The decorrelated subquery's rows over the outer values ``outer`` (``__k`` first)."""
    from ..planner.build import build
    from .runner import Runner
    from .subqueries import _with_outer_ctes

    budget = runner.budget  # the subquery's steps count on top of what the query holds
    child = MemoryBudget(0)
    child.borrowed = budget.borrowed
    child.limit = budget.limit - budget.held
    child.check(outer.nbytes, "the distinct outer values of a correlated subquery")
    types = tuple(map(str, outer.schema.types))
    query = entry.plans.get(types)
    if query is None:
        tree = dependent_query(entry.query)
        if entry.ctes:
            tree = _with_outer_ctes(tree, exp.With(expressions=list(entry.ctes)))
        schema = dict(entry.schema)
        schema[OUTER] = {name: sql_type(t) for name, t in zip(outer.column_names,
                                                              outer.schema.types)}
        query = build(tree, schema, runner.sql)
        entry.plans[types] = query
    catalog = _WithOuter(runner.catalog, outer)
    sub = Runner(catalog, runner.sql, runner.memory_rows, runner.arrays, child)
    return sub.run(query)


class _WithOuter(Catalog):
    """The runner's tables and ``__outer``."""

    def __init__(self, catalog, outer: pa.Table):
        super().__init__()
        self.catalog = catalog
        self.outer = ArrowSource(outer)

    def resolve(self, table: exp.Table, sql: str):
        if table_key(table) == OUTER:
            return self.outer, None
        return self.catalog.resolve(table, sql)


def _keys(result: pa.Table) -> np.ndarray:
    return result.column(0).to_numpy(zero_copy_only=False).astype(np.int64, copy=False)


def _scalar(runner, result: pa.Table, count: int, ids: np.ndarray) -> pa.Array:
    if result.num_columns != 2:
        raise SqlError(f"a subquery used as a value must return one column, not "
                       f"{result.num_columns - 1}", runner.sql)
    keys = _keys(result)
    if len(keys) and np.bincount(keys, minlength=count).max() > 1:
        raise SqlError("More than one row returned by a subquery used as an expression - "
                       "scalar subqueries can only return a single row.", runner.sql)
    row = np.full(count, -1, dtype=np.int64)
    row[keys] = np.arange(len(keys), dtype=np.int64)
    values = result.column(1)  # an enumeration stays one
    values = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    return values.take(null_padded(row[ids]))


def _membership(probes: list[pa.Array], ids: np.ndarray, result: pa.Table) -> pa.Array:
    """``probes IN`` the rows of each row's ``__k``: the outer-key column is one more part
    of a tuple membership, never NULL, so SQL's NULL rules apply to the probes alone."""
    from .subqueries import _tuple_membership

    candidates = result.select(list(range(result.num_columns)))
    return _tuple_membership([pa.array(ids)] + probes, candidates)


def _nan_counts(values: pa.Array) -> pa.Array:
    """1 where a value is NaN, else 0 (no float: all 0)."""
    if not pa.types.is_floating(values.type):
        return pa.array(np.zeros(len(values), dtype=np.int64))
    return pc.cast(pc.fill_null(pc.is_nan(values), False), pa.int64())


def _bounds(stats: pa.Table) -> tuple[pa.Array, pa.Array]:
    """Each group's smallest and largest known value as DuckDB orders them: NaN above every
    number (Arrow's hash min / max skip it) -- the largest where a group has one, the
    smallest where it has nothing else."""
    low, high = stats.column("v_min").combine_chunks(), stats.column("v_max").combine_chunks()
    if not pa.types.is_floating(low.type):
        return low, high
    nans, known = stats.column("n_sum"), stats.column("v_count")
    nan = pa.scalar(float("nan"), low.type)
    return (pc.if_else(pc.and_(pc.greater(known, 0), pc.equal(nans, known)), nan, low),
            pc.if_else(pc.greater(nans, 0), nan, high))


def _quantified(op, every: bool, probe: pa.Array, ids: np.ndarray, count: int,
                result: pa.Table) -> pa.Array:
    """``probe <op> ANY|ALL`` of each row's ``__k`` rows, with SQL's NULL rules (see
    ``engine.subqueries._quantified``): against the MAX or MIN of the known values."""
    if result.num_columns != 2:
        raise SqlError(f"ANY / ALL compares with a subquery of one column, not "
                       f"{result.num_columns - 1}")
    from .subqueries import comparable

    values = as_array(result.column(1))
    if len(values):
        probe, values = comparable(probe, values)
    keys = _keys(result)
    table = pa.table({"k": keys, "v": values, "n": _nan_counts(values)})
    stats = table.group_by("k").aggregate([("v", "min"), ("v", "max"), ("v", "count"),
                                           ("k", "count"), ("n", "sum")])
    low, high = _bounds(stats)
    at = stats.column("k").to_numpy()
    rows = np.zeros(count, dtype=np.int64)
    known = np.zeros(count, dtype=np.int64)
    rows[at] = stats.column("k_count").to_numpy()
    known[at] = stats.column("v_count").to_numpy()
    slot = np.full(count, -1, dtype=np.int64)
    slot[at] = np.arange(len(at), dtype=np.int64)
    lower = op in (exp.LT, exp.LTE)
    if op in (exp.EQ, exp.NEQ):  # = ALL / <> ANY: every known value equals the probe
        row_slot = null_padded(slot[ids])
        same = pc.and_(compare_plain("equal", probe, low.take(row_slot)),
                       compare_plain("equal", probe, high.take(row_slot)))
        decided = same if op is exp.EQ else pc.invert(same)
    else:
        bound = high if lower != every else low
        decided = compare_plain(_ORDERING[op], probe, bound.take(null_padded(slot[ids])))
    decided = pc.fill_null(decided, False).to_numpy(zero_copy_only=False).astype(bool)
    row_rows, row_known = rows[ids], known[ids]
    decided = np.where(row_known > 0, decided, every)
    decided = np.where(row_rows > 0, decided, every)  # over no rows: ANY FALSE, ALL TRUE
    probe_null = probe.is_null().to_numpy(zero_copy_only=False)
    unknown = (row_rows > 0) & (probe_null | ((row_known < row_rows) & (decided == every)))
    return pa.array(decided, mask=unknown)
