"""A Join step seen from another of its inputs: that one the source, the others joined to it.

``a LEFT JOIN b ON a.k = b.k`` holds the same rows as ``b RIGHT JOIN a ON b.k = a.k``: the
entry's keys trade places and its side turns around (INNER and FULL stay).  Inner joins
commute and associate, so ``a JOIN b ON a.k = b.k JOIN c ON b.j = c.j`` seen from ``b`` is
``b JOIN a ON b.k = a.k JOIN c ON b.j = c.j``: each input of the leading inner joins comes
once an equality key ties it to the inputs before it, taking every key pair between it and
them, and every other ON condition comes with the first input after which it can be tested;
the joins after those follow as planned.  A join fed batch by batch from an input that is
not its source (``engine.streamed_join``: TPC-H Q13's orders, right of ``customer LEFT JOIN
orders``) runs the join seen from it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..planner.conjuncts import and_all, conjuncts, tables_of

_TURNED = {"": "", "LEFT": "RIGHT", "RIGHT": "LEFT", "FULL": "FULL"}


@dataclass(frozen=True)
class JoinView:
    """A Join step's ``source_name`` and ``joins`` (entries by input name), maybe turned."""

    source_name: str
    joins: dict


def seen_from(join, name: str) -> JoinView | None:
    """The Join step ``join`` with its input ``name`` as the source: as planned when it is
    the source already; turned around in a join of two inputs (None for an ASOF one); the
    leading inner joins reordered from it when it is one of theirs (None when a key pair
    reads more than one input on a side, or the inputs are not all tied by keys)."""
    if name == join.source_name:
        return JoinView(name, join.joins)
    if len(join.joins) == 1:
        entry = join.joins[name]
        if side_of(entry) not in _TURNED:
            return None
        turned = {**entry, "side": _TURNED[side_of(entry)], "source_key": entry["join_key"],
                  "join_key": entry["source_key"]}
        return JoinView(name, {join.source_name: turned})
    leading = []
    for entry_name, entry in join.joins.items():
        if side_of(entry) or not entry.get("source_key"):
            break
        leading.append(entry_name)
    if name not in leading:
        return None
    reordered = _reordered(join, [join.source_name, *leading], name)
    if reordered is None:
        return None
    rest = {n: entry for n, entry in join.joins.items() if n not in leading}
    return JoinView(name, {**reordered, **rest})


def _reordered(join, inputs: list[str], first: str) -> dict | None:
    """The entries of the inner joins of ``inputs`` (the source and the leading inner
    entries) joined from ``first`` on (see the module's text), or None."""
    pairs, terms = [], []
    for name in inputs[1:]:
        entry = join.joins[name]
        for left, right in zip(entry["source_key"], entry["join_key"]):
            sides = (_input_of(left, inputs), _input_of(right, inputs))
            if None in sides or sides[0] == sides[1]:
                return None
            pairs.append((sides[0], left, sides[1], right))
        terms += conjuncts(entry.get("condition"))
    joined, entries = [first], {}
    remaining = [name for name in inputs if name != first]
    while remaining:
        name = next((n for n in remaining if any(_tie(pair, n, joined) for pair in pairs)),
                    None)
        if name is None:
            return None
        keys = [_tie(pair, name, joined) for pair in pairs if _tie(pair, name, joined)]
        joined.append(name)
        remaining.remove(name)
        ready = [term for term in terms if tables_of(term) <= set(joined)]
        terms = [term for term in terms if term not in ready]
        entries[name] = {"side": "", "source_key": [k[0] for k in keys],
                         "join_key": [k[1] for k in keys], "condition": and_all(ready)}
    return None if terms else entries


def _input_of(key, inputs: list[str]) -> str | None:
    """The one input of ``inputs`` a key expression reads, or None."""
    tables = tables_of(key)
    return next(iter(tables)) if len(tables) == 1 and tables <= set(inputs) else None


def _tie(pair: tuple, name: str, joined: list[str]) -> tuple | None:
    """(the joined side's key, ``name``'s key) when the key ``pair`` ties ``name`` to an
    input ``joined`` already, else None."""
    left_input, left, right_input, right = pair
    if right_input == name and left_input in joined:
        return left, right
    if left_input == name and right_input in joined:
        return right, left
    return None


def side_of(entry: dict) -> str:
    """A join entry's side: "" (inner), "LEFT", "RIGHT", "FULL" (or another, e.g. ASOF)."""
    side = (entry.get("side") or "").upper()
    return "" if side == "INNER" else side
