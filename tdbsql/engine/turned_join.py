"""A two-input Join step seen from its other input: that one the source, the source joined.

``a LEFT JOIN b ON a.k = b.k`` holds the same rows as ``b RIGHT JOIN a ON b.k = a.k``: the
entry's keys trade places and its side turns around (INNER and FULL stay).  A join fed batch
by batch from its right input (``engine.streamed_join``: TPC-H Q13's orders, right of
``customer LEFT JOIN orders``) runs the turned join, the old source now the kept side.
"""

from __future__ import annotations

from dataclasses import dataclass

_TURNED = {"": "", "INNER": "", "LEFT": "RIGHT", "RIGHT": "LEFT", "FULL": "FULL"}


@dataclass(frozen=True)
class JoinView:
    """A Join step's ``source_name`` and ``joins`` (entries by input name), maybe turned."""

    source_name: str
    joins: dict


def seen_from(join, name: str) -> JoinView:
    """The Join step ``join`` with its input ``name`` as the source: as planned when it is
    the source already, else (a join of two inputs, ``name`` its entry) turned around."""
    if name == join.source_name:
        return JoinView(name, join.joins)
    (entry_name, entry), = join.joins.items()
    assert entry_name == name
    turned = {**entry, "side": _TURNED[(entry.get("side") or "").upper()],
              "source_key": entry["join_key"], "join_key": entry["source_key"]}
    return JoinView(name, {join.source_name: turned})


def side_of(entry: dict) -> str:
    """A join entry's side: "" (inner), "LEFT", "RIGHT" or "FULL"."""
    side = (entry.get("side") or "").upper()
    return "" if side == "INNER" else side
