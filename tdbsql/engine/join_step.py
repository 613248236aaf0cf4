"""The Join step: the source rows joined with each join entry in turn.

sqlglot lifts the equality conjuncts of ON into ``source_key`` / ``join_key``; those go to the
hash join kernel.  The rest of ON (``condition``) filters the matched pairs before outer rows are
added back, which is what ON means for LEFT / RIGHT / FULL joins.  A join without keys is a
cross product, refused past the memory budget.
"""

from __future__ import annotations

import numpy as np
from sqlglot import exp

from ..errors import SqlError
from ..planner.asof_joins import ASOF
from ..planner.conjuncts import and_all, conjuncts, tables_of
from .asof_join import asof_pairs
from .deferred_inputs import (
    Deferred, few_enough, keyed_on, may_test_keys, run_deferred, run_scan, scan_keys,
)
from .frame import Frame
from .joined_rows import JoinedRows
from .grouping import group_ids
from .hash_join import hash_join
from .range_join import BLOCK_PAIRS, conditional_pairs


def run_join(step, dependencies: dict[str, Frame], runner) -> Frame:
    """``dependencies``: the frame of each input step by step name (source and join aliases).

    The leading inner joins run in the planned order except that a join on a unique key of a
    table no larger than the rows so far -- it can only keep or drop rows -- goes first
    whenever its keys can be read (the smallest such table first: TPC-H Q21 joins the one
    nation row before 3.8M lineitem rows, not after).  Inner joins commute, so the rows are
    the same.  So do the key parts of inner joins with other ON conditions: a condition
    reading a table not joined yet when its join runs waits (``Held``) and filters the rows
    as soon as every table it reads is there (TPC-H Q7's nation pair test no longer pins n2,
    and customer is read for its two nations).  A deferred source (an array read for the
    keys of the first join's input: ``deferred_inputs``) is joined into that input first."""
    names = list(step.joins)
    order = []
    held = Held(order)
    source = dependencies[step.source_name]
    if isinstance(source, Deferred):
        left = _from_partner(step, source, dependencies, runner, names, held)
    else:
        left = JoinedRows.of(source)
    pending = _leading_inner(names, step.joins)
    unique: dict[str, bool] = {}
    bridges: set[str] = set()  # joins whose keys made another join's keys ready
    dependencies = _prejoined(pending, names, dependencies, step.joins, runner, unique, held,
                              left)
    while pending:
        left = held.filtered(left, runner)
        name, join = _next_inner(pending, left, dependencies, step.joins, runner, unique,
                                 bridges)
        pending.remove(name)
        left = held.join(left, dependencies[name], join, runner, name)
        names.remove(name)
        order.append((name, left.length))
    left = held.filtered(left, runner, everything=True)
    for name in names:
        left = _join_one(left, dependencies[name], step.joins[name], runner, name)
        order.append((name, left.length))
    runner.join_orders[id(step)] = order  # for EXPLAIN ANALYZE: the order that ran
    return left.frame()


def join_in_order(left: JoinedRows, dependencies: dict, joins: dict, runner,
                  builds: dict) -> JoinedRows:
    """``left`` joined with each entry of ``joins`` in the planned order (each one's keys
    read only the tables before it), each matched through its kept ``builds`` entry
    (``build_side``): the join of one batch of a streamed source (``streamed_join``).  The
    ON conditions of leading inner joins that read a later table wait as in ``run_join``."""
    names = list(joins)
    held = Held([])
    leading = _leading_inner(names, joins)
    for name in leading:
        left = held.filtered(left, runner)
        left = held.join(left, dependencies[name], joins[name], runner, name, builds[name])
    left = held.filtered(left, runner, everything=True)
    for name in names[len(leading):]:
        left = _join_one(left, dependencies[name], joins[name], runner, name, builds[name])
    return left


def _from_partner(step, source: Deferred, dependencies, runner, names: list[str],
                  held: Held) -> JoinedRows:
    """The rows to start the join from when the source is deferred: the source's partner
    input joined with the source read for the partner's keys (the join entry turned around:
    the partner's keys are now the source side's; ``names`` loses the partner), or -- when
    those keys are not worth testing (``deferred_inputs.scan_keys``) and no input joined into
    the partner first -- the whole source."""
    join = step.joins[source.partner]
    order = held.order
    prejoined = len(order)
    partner = JoinedRows.of(dependencies[source.partner])
    if few_enough(source, partner.length):
        partner = _filtered_partner(step.joins, source.partner, partner, dependencies,
                                    runner, names, held)
    keys = None
    if may_test_keys(source, partner.length):  # a partner keyed on most values: skip
        values = _key_values(partner, [join["join_key"][source.position]], runner)[0]
        keys = scan_keys(source, values)
    if keys is None and len(order) == prejoined:
        return JoinedRows.of(run_scan(runner, source, None))
    turned = {**join, "side": "", "source_key": join["join_key"],
              "join_key": join["source_key"]}
    order.append((source.partner, partner.length))
    names.remove(source.partner)
    left = held.join(partner, run_scan(runner, source, keys), turned, runner,
                     step.source_name)
    order.append((step.source_name, left.length))
    return left


def _filtered_partner(joins: dict, partner: str, rows: JoinedRows, dependencies, runner,
                      names: list[str], held: Held) -> JoinedRows:
    """The deferred source's partner (its ``rows``) with each small unique-key input whose
    keys it holds joined into it first (``names`` loses those, in place), repeatedly: such a
    join only keeps or drops rows, so the source is read for fewer keys.  TPC-H Q11 reads
    partsupp for the 396 suppliers of the one GERMANY nation row, not for all 10,000."""
    unique: dict[str, bool] = {}
    joined = True
    while joined:
        joined = False
        for name in _leading_inner(names, joins):
            right, join = dependencies[name], joins[name]
            keys = join.get("source_key") or []
            if name == partner or isinstance(right, Deferred) or not keys or \
                    right.length > rows.length or not _keys_ready(keys, rows) or \
                    not _unique(name, right, join, runner, unique):
                continue
            rows = held.join(rows, right, join, runner, name)
            names.remove(name)
            held.order.append((f"{name} into {partner}", rows.length))
            joined = True
    return rows


class Held:
    """The ON conditions of the leading inner joins that read a table not joined yet when
    their join runs, each with its join's name.  An inner join's condition may filter its
    rows at any point after every table it reads is joined: the rows are the same.  A
    condition reading only the join's two sides stays in the join (tested on the matched
    pairs in blocks: ``tested_pairs``).  ``order`` (EXPLAIN ANALYZE's) gets the rows left
    after each filter."""

    def __init__(self, order: list):
        self.order = order
        self.terms: list[tuple[str, exp.Expression]] = []

    def join(self, left: JoinedRows, right, join: dict, runner, name: str,
             built=None) -> JoinedRows:
        """``_join_one`` with the join's conditions on tables not joined yet held back."""
        terms = conjuncts(join.get("condition"))
        if terms and _inner(join):
            tables = left.tables | (set(right.tables) if isinstance(right, Frame) else {name})
            later = [term for term in terms if not tables_of(term) <= tables]
            if later:
                self.terms += [(name, term) for term in later]
                join = {**join, "condition": and_all([t for t in terms if t not in later])}
        return _join_one(left, right, join, runner, name, built)

    def filtered(self, left: JoinedRows, runner, everything: bool = False) -> JoinedRows:
        """``left`` kept where the held conditions that read only its tables hold (all of
        them when ``everything``); those are done."""
        tables = left.tables
        ready = [(name, term) for name, term in self.terms
                 if everything or tables_of(term) <= tables]
        if not ready:
            return left
        self.terms = [found for found in self.terms if found not in ready]
        condition = and_all([term for _, term in ready])
        left = left.taken(np.flatnonzero(runner.mask(left.frame([condition]), condition)))
        names = ", ".join(dict.fromkeys(name for name, _ in ready))
        self.order.append((f"the ON condition of {names}", left.length))
        return left


def _inner(join: dict) -> bool:
    return (join.get("side") or "").upper() in ("", "INNER")


def _leading_inner(names: list[str], joins: dict) -> list[str]:
    """The join entries up to the first that is not an inner join on keys (a cross join has
    none, and no condition): those commute and associate, so they may run in any order, the
    conditions beyond their keys held where they cannot run yet (``Held``)."""
    leading = []
    for name in names:
        join = joins[name]
        if not _inner(join) or not join.get("source_key") and conjuncts(join.get("condition")):
            break
        leading.append(name)
    return leading


def _prejoined(pending: list[str], names: list[str], dependencies, joins, runner,
               unique: dict[str, bool], held: Held, source: JoinedRows) -> dict:
    """The inputs with each small unique-key input whose keys read only one other pending
    input -- no larger than the join's ``source``, so that joining into it first is cheap --
    joined into that input first (``pending`` and ``names`` lose it, in place).  Not one
    whose keys the source can already stand in for (``_bridged``): that one joins the source
    rows first (Q5's nation on c_nationkey), which filters more.

    TPC-H Q11 joins partsupp's 800K rows to supplier, then to the one GERMANY nation row;
    joining nation into supplier first leaves 400 suppliers, and partsupp is joined to those.
    Inner joins associate, so the rows are the same.  Repeated: region then joins the
    supplier-nation rows (Q2)."""
    dependencies = _keyed_hosts(pending, dict(dependencies), joins, runner, unique, source)
    owner = {alias: name for name in pending if not isinstance(dependencies[name], Deferred)
             for alias in dependencies[name].tables}
    merged = True
    while merged:
        merged = False
        for name in list(pending):
            right, join = dependencies[name], joins[name]
            keys = join.get("source_key") or []
            if isinstance(right, Deferred) or not keys:
                continue
            hosts = {owner.get(table) for key in keys for table in tables_of(key)}
            host = next(iter(hosts)) if len(hosts) == 1 else None
            if host is None or host == name or host not in pending or \
                    right.length > dependencies[host].length or \
                    dependencies[host].length > source.length or \
                    not _unique(name, right, join, runner, unique) or \
                    _bridged(name, join, pending, joins, dependencies, source, set()) is not None:
                continue
            joined = held.join(JoinedRows.of(dependencies[host]), right, join, runner, name)
            dependencies[host] = joined.frame()
            owner.update({alias: host for alias in right.tables})
            pending.remove(name)
            names.remove(name)
            held.order.append((f"{name} into {host}", joined.length))
            merged = True
    return dependencies


def _keyed_hosts(pending: list[str], dependencies: dict, joins, runner,
                 unique: dict[str, bool], source: JoinedRows) -> dict:
    """``dependencies`` with each deferred array scan that a small unique-key input's keys
    read -- and only it -- read now for that input's keys, on the column they name, so that
    the input can join into it first (``_prejoined``).  TPC-H Q18: the 57 big orders of
    ``_u_0`` key on o_orderkey, and orders (planned to be read for customer's keys on
    o_custkey, all of them) is read for those 57 orders instead of all 1.5M."""
    for name in pending:
        right, join = dependencies[name], joins[name]
        keys = join.get("source_key") or []
        if isinstance(right, Deferred) or len(keys) != 1 or right.length > source.length:
            continue
        hosts = {table for table in tables_of(keys[0])}
        host = next(iter(hosts)) if len(hosts) == 1 else None
        if host is None or host not in pending or not isinstance(dependencies[host], Deferred) \
                or not _unique(name, right, join, runner, unique):
            continue
        keyed = keyed_on(runner, dependencies[host], keys[0])
        if keyed is None or not may_test_keys(keyed, right.length):
            continue
        values = _key_values(JoinedRows.of(right), join["join_key"], runner)[0]
        found = scan_keys(keyed, values)
        if found is not None:
            dependencies[host] = run_scan(runner, keyed, found)
    return dependencies


def _unique(name: str, right: Frame, join: dict, runner, unique: dict[str, bool]) -> bool:
    """Are ``right``'s join keys unique (so the join keeps or drops rows, never adds)?"""
    if name not in unique:
        flat = right.flat()
        values = [runner.column(right, key, flat) for key in join.get("join_key")]
        unique[name] = group_ids(values).count == right.length
    return unique[name]


def _next_inner(pending: list[str], left: JoinedRows, dependencies, joins, runner,
                unique: dict[str, bool], bridges: set[str]) -> tuple[str, dict]:
    """(name, join entry) of the planned next join, or of a filtering one (see ``run_join``)
    that can run now -- its keys as written, or read through another pending join's keys
    (``_bridged``)."""
    best = None
    for name in pending:
        right, join = dependencies[name], joins[name]
        keys = join.get("source_key") or []
        if isinstance(right, Deferred) or not keys or right.length > left.length or \
                best is not None and dependencies[best[0]].length <= right.length:
            continue
        if not _keys_ready(keys, left):
            join = _bridged(name, join, pending, joins, dependencies, left, bridges)
            if join is None:
                continue
        if _unique(name, right, join, runner, unique):
            best = (name, join)
    if best is not None:
        if best[1] is not joins[best[0]]:
            bridges.update(best[1]["bridges"])
        return best
    if isinstance(dependencies[pending[0]], Deferred):
        # a deferred input runs for the keys joined so far: join what can come first
        ready = next((name for name in pending if not isinstance(dependencies[name], Deferred)
                      and joins[name].get("source_key")
                      and _keys_ready(joins[name]["source_key"], left)), None)
        if ready is not None:
            return ready, joins[ready]
    return pending[0], joins[pending[0]]


def _bridged(name: str, join: dict, pending: list[str], joins, dependencies,
             left: JoinedRows, bridges: set[str]) -> dict | None:
    """``join`` with each key not ready yet replaced by an equal column that is: a pending
    join P holds ``x = p`` where ``p`` is that key (a column of P's table) and ``x`` is
    ready, so the join can run on ``x`` now and P, joined later on its own keys, still
    makes the key equal ``x`` (TPC-H Q5 joins nation on c_nationkey, through supplier's
    c_nationkey = s_nationkey, before lineitem and supplier are there).  None if some key
    has no such stand-in, or ``name`` itself bridges a join already run."""
    if name in bridges:
        return None
    tables = left.tables
    keys, used = [], set()
    for key in join.get("source_key") or []:
        if tables_of(key) <= tables:
            keys.append(key)
            continue
        found = _stand_in(key, name, pending, joins, dependencies, left, tables)
        if found is None:
            return None
        keys.append(found[0])
        used.add(found[1])
    return {**join, "source_key": keys, "bridges": used}


def _stand_in(key, name: str, pending: list[str], joins, dependencies, left: JoinedRows,
              tables: set) -> tuple | None:
    """(a ready column equal to ``key`` through a pending join's keys, that join) or None;
    both columns of one type, so equality stays transitive."""
    if not isinstance(key, exp.Column):
        return None
    for other in pending:
        right = dependencies[other]
        if other == name or isinstance(right, Deferred):
            continue
        entry = joins[other]
        for source, joined in zip(entry.get("source_key") or [], entry.get("join_key") or []):
            if isinstance(joined, exp.Column) and isinstance(source, exp.Column) and \
                    (joined.table, joined.name) == (key.table, key.name) and \
                    source.table in tables and \
                    _column_type(right, key) == _column_type(left, source):
                return source, other
    return None


def _column_type(frame, column: exp.Column):
    """The Arrow type of ``column`` in ``frame`` (a Frame, or the parts of JoinedRows)."""
    frames = frame.inputs if isinstance(frame, JoinedRows) else [frame]
    for part in frames:
        table = part.tables.get(column.table)
        if table is not None and column.name in table.column_names:
            return table.schema.field(column.name).type
    return None


def _keys_ready(keys, left: JoinedRows) -> bool:
    tables = left.tables
    return all(tables_of(key) <= tables for key in keys)



def _join_one(left: JoinedRows, right, join: dict, runner, name: str,
              built=None) -> JoinedRows:
    """``left`` joined with the entry ``name`` (``right`` its input's rows); ``built``: the
    right keys kept hashed for batch after batch of left rows (``build_side``), if any."""
    left_keys = _key_values(left, join.get("source_key") or [], runner)
    if isinstance(right, Deferred):
        right = run_deferred(runner, right, left_keys[right.position])
    side = (join.get("side") or "").upper()
    if side.startswith(ASOF):  # planner.asof_joins: "ASOF" or "ASOF LEFT"
        left_idx, right_idx = asof_pairs(left, left_keys, right, join, runner, name)
        side = side[len(ASOF):].strip()
    else:
        left_idx, right_idx, condition = _matches(left, left_keys, right, join, runner, name,
                                                  built)
        if condition is not None and len(left_idx):
            left_idx, right_idx = tested_pairs(left, right, left_idx, right_idx, condition,
                                               runner)
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


def tested_pairs(left: JoinedRows, right, left_idx: np.ndarray, right_idx: np.ndarray,
            condition: exp.Expression, runner) -> tuple[np.ndarray, np.ndarray]:
    """The pairs ``condition`` keeps, tested in blocks of ``BLOCK_PAIRS``: the columns it
    reads are gathered for one block at a time, not for every key match at once (a
    decorrelated ``u.g = t.g AND u.k <> t.k`` matched 200M pairs on g)."""
    if len(left_idx) <= BLOCK_PAIRS:
        keep = runner.mask(left.joined(left_idx, right, right_idx).frame([condition]),
                           condition)
        return left_idx[keep], right_idx[keep]
    keep = np.zeros(len(left_idx), dtype=bool)
    for begin in range(0, len(left_idx), BLOCK_PAIRS):
        block = slice(begin, begin + BLOCK_PAIRS)
        pairs = left.joined(left_idx[block], right, right_idx[block]).frame([condition])
        keep[block] = runner.mask(pairs, condition)
    return left_idx[keep], right_idx[keep]


def _key_values(left: JoinedRows, keys: list, runner) -> list:
    """The joined rows' values of the join's ``source_key`` expressions (taken from the
    inputs once, for the deferred input's keys and the hash join alike)."""
    if not keys:
        return []
    keyed = left.frame(keys)
    flat = keyed.flat()
    return [runner.column(keyed, key, flat) for key in keys]


def _matches(left: JoinedRows, left_keys: list, right: Frame, join: dict, runner, name: str,
             built=None):
    source_key = join.get("source_key") or []
    if name in runner.query.scalar_subqueries and right.length > 1:
        raise SqlError("more than one row returned by a subquery used as an expression",
                       runner.sql)
    terms = conjuncts(join.get("condition"))
    if not source_key and terms:  # a non-equi join (engine/range_join.py)
        left_idx, right_idx, rest = conditional_pairs(left, right, terms, runner, name)
        return left_idx, right_idx, and_all(rest)
    if not source_key:
        runner.check_join(left.length * right.length, [*left.inputs, right],
                          f"the cross join with {name!r}")
        left_idx = np.repeat(np.arange(left.length, dtype=np.int64), right.length)
        right_idx = np.tile(np.arange(right.length, dtype=np.int64), left.length)
        return left_idx, right_idx, None
    check = _pairs_check(left, right, bool(terms), runner, name)
    if built is not None:
        left_idx, right_idx = built.pairs(left_keys, check)
        return left_idx, right_idx, and_all(terms)
    right_keys = right_keys_of(right, join, runner)
    # the hash table is built on the smaller side (part's 1,451 rows, not lineitem's 6M);
    # the matched pairs are the same either way (outer rows are added from them after)
    if right.length > left.length:
        right_idx, left_idx = hash_join(right_keys, left_keys, "inner", check)
    else:
        left_idx, right_idx = hash_join(left_keys, right_keys, "inner", check)  # unifies types
    return np.asarray(left_idx, dtype=np.int64), np.asarray(right_idx, dtype=np.int64), \
        and_all(terms)


def right_keys_of(right: Frame, join: dict, runner) -> list:
    """The values of the join entry's ``join_key`` expressions over its input ``right``."""
    flat = right.flat()
    return [runner.column(right, key, flat) for key in join.get("join_key") or []]


def _pairs_check(left: JoinedRows, right, tested: bool, runner, name: str):
    """What the key matches must pass before they are made: the join's own check when they
    are its output; when a condition still tests them, the row cap and their indices'
    bytes against the memory budget."""
    what = f"the join with {name!r}"
    if not tested:
        return lambda pairs: runner.check_join(pairs, [*left.inputs, right], what)

    def check(pairs: int) -> None:
        runner.check_rows(pairs, what)
        runner.budget.check(16 * pairs, what)
    return check


def _unmatched(length: int, matched: np.ndarray) -> np.ndarray:
    seen = np.zeros(length, dtype=bool)
    seen[matched[matched >= 0]] = True
    return np.flatnonzero(~seen).astype(np.int64)
