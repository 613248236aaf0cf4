"""Dimension ranges implied by a WHERE clause, for pruning.

``dimension_ranges(where, dims)`` returns, per dimension, inclusive ``(lo, hi)`` ranges such that
every row satisfying ``where`` has its coordinate inside one of them.  Ranges are a sound
superset (strict bounds become inclusive, constructs it does not understand are ignored): the
full predicate is still evaluated on the cells that are read.

>>> import sqlglot
>>> dimension_ranges(sqlglot.parse_one("SELECT 1 WHERE d BETWEEN 2 AND 5 AND d < 4").args["where"].this, {"d": int})
{'d': [(2, 4)]}
"""

from __future__ import annotations

import math

from typing import Any

import numpy as np
from sqlglot import exp

from .comparison_order import FLIPPED
from .pruning import Ranges

_UNBOUNDED = (None, None)


def dimension_ranges(where: exp.Expression | None, dims: dict[str, type]) -> Ranges:
    """``dims`` maps a dimension name to the Python type of its literals (int, float, str)."""
    if where is None:
        return {}
    found = _ranges(where, dims)
    return {name: [(lo, hi) for lo, hi in rs] for name, rs in found.items() if rs is not None}


def _ranges(node: exp.Expression, dims) -> dict[str, list | None]:
    if isinstance(node, exp.Paren):
        return _ranges(node.this, dims)
    if isinstance(node, exp.And):
        left, right = _ranges(node.this, dims), _ranges(node.expression, dims)
        merged = dict(left)
        for name, rs in right.items():
            merged[name] = _intersect(merged[name], rs) if name in merged else rs
        return merged
    if isinstance(node, exp.Or):
        left, right = _ranges(node.this, dims), _ranges(node.expression, dims)
        # Only a dimension bounded on both sides stays bounded by the OR.
        return {name: left[name] + right[name] for name in left.keys() & right.keys()
                if left[name] is not None and right[name] is not None}
    return _leaf(node, dims)


def _leaf(node, dims) -> dict[str, list]:
    if isinstance(node, exp.Between):
        name, lo, hi = _dim(node.this, dims), _lit(node.args.get("low"), dims, node.this), \
            _lit(node.args.get("high"), dims, node.this)
        if name and lo is not None and hi is not None:
            return {name: [(lo, hi)] if lo <= hi else []}
        return {}
    if isinstance(node, exp.In) and not node.args.get("query"):
        name = _dim(node.this, dims)
        values = [_lit(v, dims, node.this) for v in node.expressions]
        if name and values and all(v is not None for v in values):
            return {name: [(v, v) for v in sorted(set(values))]}
        return {}
    if isinstance(node, (exp.EQ, exp.GT, exp.GTE, exp.LT, exp.LTE)):
        return _comparison(node, dims)
    return {}


def _comparison(node, dims) -> dict[str, list]:
    left, right = node.this, node.expression
    op = type(node)
    if _dim(left, dims) is None and _dim(right, dims) is not None:
        left, right = right, left
        op = FLIPPED.get(op, op)
    name = _dim(left, dims)
    value = _lit(right, dims, left) if name else None
    if name is None or value is None:
        return {}
    lo, hi = {exp.EQ: (value, value), exp.GT: (value, None), exp.GTE: (value, None),
              exp.LT: (None, value), exp.LTE: (None, value)}[op]
    return {name: [(lo, hi)]}


def _intersect(a: list | None, b: list | None) -> list:
    out = []
    for a_lo, a_hi in a:
        for b_lo, b_hi in b:
            lo = b_lo if a_lo is None else a_lo if b_lo is None else max(a_lo, b_lo)
            hi = b_hi if a_hi is None else a_hi if b_hi is None else min(a_hi, b_hi)
            if lo is None or hi is None or lo <= hi:
                out.append((lo, hi))
    return out


def _dim(node, dims) -> str | None:
    if isinstance(node, exp.Column) and node.name in dims:
        return node.name
    return None


def _lit(node, dims, column) -> Any:
    """The Python value of a literal usable against ``column``'s dimension type, else None."""
    kind = dims.get(column.name) if isinstance(column, exp.Column) else None
    if isinstance(kind, str):
        return _datetime_lit(node, kind)
    negative = False
    if isinstance(node, exp.Neg):
        node, negative = node.this, True
    if not isinstance(node, exp.Literal) or kind is None:
        return None
    if node.is_string:
        return node.this if kind is str and not negative else None
    if kind is str:
        return None
    try:
        value = int(node.this) if kind is int and _is_int(node.this) else float(node.this)
    except ValueError:
        return None
    return -value if negative else value


def _datetime_lit(node, unit: str) -> int | None:
    """A DATE/TIMESTAMP literal as the raw integer of a datetime dimension in ``unit``; None
    when the value is not exactly representable in that unit (then it is not pushed down)."""
    if isinstance(node, exp.Cast) and isinstance(node.this, exp.Literal) and node.this.is_string:
        text = node.this.this
    elif isinstance(node, exp.Literal) and node.is_string:
        text = node.this
    else:
        return None
    try:
        value = np.datetime64(text.strip().replace(" ", "T"))
    except ValueError:
        return None
    converted = value.astype(f"datetime64[{unit}]")
    if converted != value:
        return None
    return int(converted.astype(np.int64))


def scan_ranges(where: exp.Expression | None, schema) -> Ranges:
    """The dimension ranges a scan of ``schema`` can prune with, closed by the domains and in
    each dimension's own type (float32 dimensions compare in float32, as TileDB casts ranges)."""
    dims = {d.name: _literal_kind(d) for d in schema.dimensions}
    ranges = dimension_ranges(where, {k: v for k, v in dims.items() if v is not None})
    domains = {d.name: d.domain for d in schema.dimensions if d.domain is not None}
    out = {}
    for name, rs in finalize(ranges, domains).items():
        info = schema.dimension(name).info
        if info.kind == "float":
            cast = info.numpy.type
            rs = [(float(cast(lo)), float(cast(hi))) for lo, hi in rs]
        elif info.kind != "string":
            rs = [(_outward(lo, -math.inf), _outward(hi, math.inf)) for lo, hi in rs]
        out[name] = rs
    return within_current_domain(out, schema)


def _outward(bound, toward: float):
    """A float bound of an integer dimension as the integer one step past it, toward
    ``toward``: the float may be a literal rounded to the nearest float64 (``d <=
    9007199254740993.0`` holds 2**53, ``d >= 18446744073709551605.0`` 2**64), and a range
    only has to hold every cell its conjunct keeps (the conjunct tests them exactly).
    Integers, and infinities, stay as they are."""
    if not isinstance(bound, float) or math.isinf(bound) or math.isnan(bound):
        return bound
    stepped = math.nextafter(bound, toward)
    return math.floor(stepped) if toward < 0 else math.ceil(stepped)


def within_current_domain(ranges: Ranges, schema) -> Ranges:
    """``ranges`` cut to the current domain of ``schema`` (the schema in force at the read's
    timestamp): TileDB reads no cell outside it.  Such cells exist when a write stamped before
    an ``expand_current_domain`` lands outside the older, smaller domain; read AS OF a time
    before the expansion they are not there, as in ``tiledb``.  A dimension whose current
    domain is its whole domain gets no range of its own."""
    out = dict(ranges)
    for dim, bounds in zip(schema.dimensions, schema.current_bounds()):
        if bounds is None:
            continue
        lo, hi = bounds
        out[dim.name] = [(lo, hi)] if dim.name not in ranges else \
            [r for r in (_intersection(r, lo, hi) for r in ranges[dim.name]) if r is not None]
    return out


def _intersection(bounds: tuple, lo, hi) -> tuple | None:
    """A range (``None`` an open end of a string range) within ``[lo, hi]``; None if empty."""
    start = lo if bounds[0] is None else max(bounds[0], lo)
    end = hi if bounds[1] is None else min(bounds[1], hi)
    return (start, end) if start <= end else None


def _literal_kind(dim):
    info = dim.info
    if info.kind in ("int", "float", "string"):
        return {"int": int, "float": float, "string": str}[info.kind]
    if info.kind == "datetime" and info.unit:
        return info.unit
    return None


def _is_int(text: str) -> bool:
    return text.lstrip("-").isdigit()


def finalize(ranges: Ranges, domains: dict[str, tuple[Any, Any]]) -> Ranges:
    """Close numeric ranges with the dimension's domain bounds (or -inf/+inf); string ranges
    become UTF-8 bytes with ``None`` for an open end (string dimensions have no domain)."""
    out = {}
    for name, rs in ranges.items():
        if any(isinstance(v, str) for r in rs for v in r):
            out[name] = [tuple(None if v is None else v.encode("utf-8") for v in r) for r in rs]
            continue
        lo_d, hi_d = domains.get(name, _UNBOUNDED)
        lo_d = float("-inf") if lo_d is None else lo_d
        hi_d = float("inf") if hi_d is None else hi_d
        out[name] = [(lo_d if lo is None else lo, hi_d if hi is None else hi) for lo, hi in rs]
    return out
