"""planner.join_order: keyless inner joins wait for a key; everything else keeps its order."""

from __future__ import annotations

from sqlglot import exp, parse_one

from tdbsql.planner.join_order import _ordered


def _col(text: str) -> exp.Column:
    return parse_one(text)


def _join(side="", keys=(), condition=None):
    return {"side": side, "source_key": [_col(a) for a, _ in keys],
            "join_key": [_col(b) for _, b in keys],
            "condition": parse_one(condition) if condition else exp.true()}


def _plan(joins):
    return {name: ([k.sql() for k in j["source_key"]], [k.sql() for k in j["join_key"]])
            for name, j in joins.items()}


def test_a_keyless_join_waits_and_takes_its_key():
    """TPC-H Q2's FROM part, supplier, partsupp: partsupp first, then supplier by ps_suppkey."""
    joins = {"supplier": _join(),
             "partsupp": _join(keys=[("part.pk", "partsupp.pk"), ("supplier.sk", "partsupp.sk")]),
             "nation": _join(keys=[("supplier.nk", "nation.nk")]),
             "_u_0": _join("LEFT", keys=[("part.pk", "_u_0.k")])}
    got = _ordered("part", joins)
    assert list(got) == ["partsupp", "supplier", "nation", "_u_0"]
    assert _plan(got) == {"partsupp": (["part.pk"], ["partsupp.pk"]),
                          "supplier": (["partsupp.sk"], ["supplier.sk"]),
                          "nation": (["supplier.nk"], ["nation.nk"]),
                          "_u_0": (["part.pk"], ["_u_0.k"])}


def test_orders_that_need_no_change_or_cannot_change_stay():
    keyed = {"b": _join(keys=[("a.x", "b.x")]), "c": _join(keys=[("b.y", "c.y")])}
    assert _ordered("a", keyed) is keyed
    cross = {"b": _join(), "c": _join()}  # no key anywhere
    assert _ordered("a", cross) is cross
    with_on = {"b": _join(condition="b.v > a.v"), "c": _join(keys=[("a.x", "c.x")])}
    assert _ordered("a", with_on) is with_on  # an ON condition: left as planned
    outside = {"b": _join(), "c": _join(keys=[("z.q", "c.q")])}  # a key from outside the step
    assert _ordered("a", outside) is outside
