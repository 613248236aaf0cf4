"""Tile zone maps: classify every tile NEVER / MAYBE / ALWAYS against the pushed-down predicate.

In: a sqlglot boolean expression over unqualified column names (the conjuncts the planner
pushes into a scan) and, per tile, the min / max / null count TileDB keeps in the fragment
metadata (``tile_stats``) or, for dimensions, the tile's bounds (sparse: R-tree MBRs; dense:
the space tile clipped to the fragment's non-empty domain).  Out: ``TileClasses`` -- one int8
class per tile for the dimension conjuncts and one for the attribute conjuncts, and whether
the whole predicate is ALWAYS true for the tile.

A conjunct is understood when it is ``col <op> literal`` (either side), ``col BETWEEN a AND b``,
``col [NOT] IN (literals)``, ``col <> literal`` or ``col IS [NOT] NULL``.  Anything else is
MAYBE for every tile, and then no tile is ALWAYS for the whole predicate.

What TileDB stores (TileMetadataGenerator, format 11+): min/max for fixed-size numeric,
datetime, time and bool attributes with one value a cell, and for CHAR / STRING_ASCII strings
(var-sized: the bytes, compared by ``strncmp``); none for dimensions (they have MBRs),
STRING_UTF8 and other encodings, BLOB or multi-value cells.  Null counts for every nullable
attribute.  Traps the classification guards against:

* a float tile holding NaN has a meaningless min/max (``<`` with NaN flips the running min);
  its sum then is NaN or saturated to +-DBL_MAX, so a float tile is trusted only when its sum is
  finite and not saturated;
* datetime cells holding INT64_MIN (NaT) are SQL NULLs but not counted as nulls: a datetime
  tile whose min is INT64_MIN is not trusted;
* ``strncmp`` stops at a NUL byte: a string tile is trusted only when neither its min nor its
  max contains one (then the bounds are the bytewise bounds);
* dense tiles may include padding cells outside the fragment's domain in their min/max: a
  superset of the real cells, so NEVER and ALWAYS stay sound;
* the string bounds of a dense tile can be garbage (TileDB 2.30, a dense write of three
  attributes, one an ASCII string: ``'aa'`` plus stray bytes where the tile holds
  ``'zz\\0zz'``), so dense string bounds are not trusted;
* the statistics are of the values written: behind a lossy filter (float scaling, lossy WEBP)
  the cells read back differ, so only the null counts are used.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, Callable

import numpy as np
from sqlglot import exp

from ..datatypes import VAR_NUM, Datatype, type_info
from ..kernels import zonemap as kernels
from .comparison_order import FLIPPED
from .conjuncts import conjuncts
from .pruning import pick_tiles

NEVER, MAYBE, ALWAYS = kernels.NEVER, kernels.MAYBE, kernels.ALWAYS
_NAT = np.iinfo(np.int64).min
_DBL_MAX = np.finfo(np.float64).max
_STRING_TYPES = (Datatype.CHAR, Datatype.STRING_ASCII)
# numpy datetime units with a fixed length in nanoseconds (years and months have none)
_UNIT_NS = {"W": 7 * 86400 * 10**9, "D": 86400 * 10**9, "h": 3600 * 10**9, "m": 60 * 10**9,
            "s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}


# -- what a column is ---------------------------------------------------------------------------


@dataclass(frozen=True)
class FieldKind:
    """How a field's values compare: ``domain`` is int / uint / float / datetime / bytes or
    None (not comparable here: bool, UTF-8 strings, multi-value cells, enumerations...)."""

    name: str
    datatype: int
    is_dim: bool
    nullable: bool
    domain: str | None
    unit_ns: int = 0  # datetime: nanoseconds per stored unit
    text: bool = False  # a var-sized ASCII / UTF-8 string: LIKE can read its bytes as stored


def field_kinds(schema) -> dict[str, FieldKind]:
    out = {}
    for dim in schema.dimensions:
        out[dim.name] = _kind(dim.name, dim.datatype, dim.cell_val_num, True, False)
    for attr in schema.attributes:
        kind = _kind(attr.name, attr.datatype, attr.cell_val_num, False, attr.nullable)
        if attr.enumeration_name:  # stored values are label indices; SQL compares the labels
            kind = replace(kind, domain=None)
        out[attr.name] = kind
    return out


def _kind(name, datatype, cvn, is_dim, nullable) -> FieldKind:
    info = type_info(datatype)
    domain, unit_ns = None, 0
    if cvn == VAR_NUM and datatype in _STRING_TYPES:
        domain = "bytes"
    elif cvn == 1 and info.kind == "int":
        domain = "uint" if info.numpy.kind == "u" else "int"
    elif cvn == 1 and info.kind == "float":
        domain = "float"
    elif cvn == 1 and info.kind == "datetime" and info.unit in _UNIT_NS:
        domain, unit_ns = "datetime", _UNIT_NS[info.unit]
    # (CHAR is a BLOB in SQL: no LIKE, and a string constant is read as a BLOB's bytes)
    text = cvn == VAR_NUM and info.kind == "string" and info.size == 1 and \
        datatype != Datatype.CHAR
    return FieldKind(name, int(datatype), is_dim, nullable, domain, unit_ns, text)


# -- the predicate ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Interval:
    """``lo <(=) x <(=) hi`` in the column's comparison domain; None = unbounded."""

    lo: Any
    hi: Any
    lo_strict: bool = False
    hi_strict: bool = False


@dataclass(frozen=True)
class Test:
    """One understood conjunct.  ``kind``: "in" (true inside any interval), "not_in" (true
    outside all of them), "is_null", "not_null"."""

    column: str
    kind: str
    intervals: tuple[Interval, ...] = ()
    empty: bool = False  # "in" over no value of the column's type: true for no cell
    position: int = -1  # which conjunct of the predicate (``conjuncts`` order) it came from


@dataclass(frozen=True)
class Predicate:
    tests: tuple[Test, ...]
    complete: bool  # every conjunct understood: ALWAYS for all tests means ALWAYS overall

    @property
    def columns(self) -> set[str]:
        return {t.column for t in self.tests}


def parse_predicate(node: exp.Expression | None, kinds: dict[str, FieldKind]) -> Predicate:
    tests, complete = [], True
    for position, conj in enumerate(conjuncts(node)):
        test = _test(conj, kinds)
        if test is None:
            complete = False
        else:
            tests.append(replace(test, position=position))
    return Predicate(tuple(tests), complete)


def _test(node, kinds) -> Test | None:
    negated = False
    if isinstance(node, exp.Not):
        node, negated = node.this, True
        while isinstance(node, exp.Paren):
            node = node.this
    if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
        kind = _column(node.this, kinds)
        if kind is None or kind.is_dim:
            return None
        return Test(kind.name, "not_null" if negated else "is_null")
    test = _positive_test(node, kinds)
    if test is None or not negated:
        return test
    return Test(test.column, "not_in" if test.kind == "in" else "in", test.intervals, test.empty) \
        if test.kind in ("in", "not_in") and not test.empty else None


def _positive_test(node, kinds) -> Test | None:
    if isinstance(node, exp.Or):
        return _either(node, kinds)
    if isinstance(node, exp.Between):
        kind = _column(node.this, kinds)
        lo, hi = _literal(node.args.get("low")), _literal(node.args.get("high"))
        if kind is None or lo is None or hi is None:
            return None
        lo, hi = _one_type([lo, hi])
        return _make(kind, "in", [(lo, False, hi, False)])
    if isinstance(node, exp.In) and not node.args.get("query"):
        kind = _column(node.this, kinds)
        values = [_literal(v) for v in node.expressions]
        if kind is None or not values or any(v is None for v in values):
            return None
        values = _one_type(values)
        return _make(kind, "in", [(v, False, v, False) for v in values])
    if isinstance(node, (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)):
        left, right, op = node.this, node.expression, type(node)
        if _column(left, kinds) is None:
            left, right, op = right, left, FLIPPED.get(op, op)
        kind, value = _column(left, kinds), _literal(right)
        if kind is None or value is None:
            return None
        bound = {exp.EQ: (value, False, value, False), exp.NEQ: (value, False, value, False),
                 exp.GT: (value, True, None, False), exp.GTE: (value, False, None, False),
                 exp.LT: (None, False, value, True), exp.LTE: (None, False, value, False)}[op]
        return _make(kind, "not_in" if op is exp.NEQ else "in", [bound])
    return None


def _either(node: exp.Or, kinds) -> Test | None:
    """``a OR b OR ...`` where every branch tests one and the same column -- an interval, an
    IN list, or an AND of those (TPC-H Q19: ``(q >= 1 AND q <= 11) OR (q >= 10 AND q <= 20)
    OR ...``) -- as one "in" test over the union of the branches' intervals."""
    tests = [_branch(branch, kinds) for branch in node.flatten()]
    if any(t is None for t in tests) or len({t.column for t in tests}) != 1:
        return None
    intervals = tuple(i for t in tests for i in t.intervals)
    return Test(tests[0].column, "in", intervals, empty=not intervals)


def _branch(node, kinds) -> Test | None:
    """One OR branch as an "in" test: the intersection of its conjuncts' intervals."""
    while isinstance(node, exp.Paren):
        node = node.this
    parts = [_positive_test(part, kinds) for part in node.flatten()] \
        if isinstance(node, exp.And) else [_positive_test(node, kinds)]
    if any(t is None or t.kind != "in" for t in parts) or len({t.column for t in parts}) != 1:
        return None
    intervals = parts[0].intervals
    for part in parts[1:]:
        intervals = tuple(both for a in intervals for b in part.intervals
                          if (both := _intersection(a, b)) is not None)
    return Test(parts[0].column, "in", intervals, empty=not intervals)


def _intersection(a: Interval, b: Interval) -> Interval | None:
    """The values inside both intervals (None: none)."""
    if a.lo is None or (b.lo is not None and (b.lo > a.lo or b.lo == a.lo and b.lo_strict)):
        lo, lo_strict = b.lo, b.lo_strict
    else:
        lo, lo_strict = a.lo, a.lo_strict
    if a.hi is None or (b.hi is not None and (b.hi < a.hi or b.hi == a.hi and b.hi_strict)):
        hi, hi_strict = b.hi, b.hi_strict
    else:
        hi, hi_strict = a.hi, a.hi_strict
    if lo is not None and hi is not None and (lo > hi or lo == hi and (lo_strict or hi_strict)):
        return None
    return Interval(lo, hi, lo_strict, hi_strict)


def _column(node, kinds) -> FieldKind | None:
    if isinstance(node, exp.Column):
        kind = kinds.get(node.name)
        if kind is not None and kind.domain is not None:
            return kind
    return None


def _one_type(values: list) -> list:
    """The constants of one IN list or BETWEEN as DuckDB compares them, in their common type:
    beside a DOUBLE, an exact decimal is a DOUBLE too (``v IN (1e0, 2.9999999999999999)``
    holds for 3)."""
    if any(isinstance(v, float) for v in values):
        return [float(v) if isinstance(v, Fraction) else v for v in values]
    return values


def _literal(node):
    """int, float, str, date or datetime of a literal node, else None; a decimal literal
    (a point, no exponent: DuckDB's DECIMAL) is its exact Fraction, so an integer column
    meets it exactly (``i <= 1.9999999999999999`` is ``i <= 1``; as a double it was 2.0)."""
    negative = False
    if isinstance(node, exp.Neg):
        node, negative = node.this, True
    if isinstance(node, exp.Literal):
        if node.is_string:
            return None if negative else node.this
        try:
            value = int(node.this)
        except ValueError:
            try:
                value = Fraction(node.this) if "." in node.this and \
                    "e" not in node.this.lower() else float(node.this)
            except ValueError:
                return None
        return -value if negative else value
    if isinstance(node, exp.Cast) and not negative and isinstance(node.this, exp.Literal) \
            and node.this.is_string:
        to = node.to.this
        try:
            if to == exp.DataType.Type.DATE:
                return dt.date.fromisoformat(node.this.this)
            if to in (exp.DataType.Type.TIMESTAMP, exp.DataType.Type.DATETIME):
                return dt.datetime.fromisoformat(node.this.this)
        except ValueError:
            return None
    return None


def _make(kind: FieldKind, test_kind: str, bounds) -> Test | None:
    """Bounds ``(lo, lo_strict, hi, hi_strict)`` (literal values, None = open) in the column's
    domain; None when a literal does not fit the column (the evaluator decides then)."""
    intervals = []
    for lo, lo_strict, hi, hi_strict in bounds:
        lo_v, hi_v = _domain_value(kind, lo), _domain_value(kind, hi)
        if (lo is not None and lo_v is None) or (hi is not None and hi_v is None):
            return None
        interval = _closed(kind, lo_v, lo_strict, hi_v, hi_strict)
        if interval is not None:
            intervals.append(interval)
    return Test(kind.name, test_kind, tuple(intervals), empty=not intervals)


def _stored_bytes(kind: FieldKind, text: str) -> bytes | None:
    """A string constant as the bytes SQL compares a string field's cells with: its UTF-8,
    or for CHAR (a BLOB in SQL) the BLOB DuckDB reads it as (``\\xAA`` a byte); None when it
    reads as none (the evaluator raises DuckDB's error)."""
    if kind.datatype != Datatype.CHAR:
        return text.encode("utf-8")
    from ..engine.value_types import blob_of

    try:
        return blob_of(text)
    except ValueError:
        return None


def _domain_value(kind: FieldKind, value):
    """A literal as a number (int/float/Fraction) or bytes comparable with the stored values."""
    if value is None:
        return None
    if kind.domain == "bytes":
        return _stored_bytes(kind, value) if isinstance(value, str) else None
    if isinstance(value, str) or isinstance(value, bool):
        return None
    if kind.domain == "datetime":
        if not isinstance(value, dt.date):
            return None
        if not isinstance(value, dt.datetime):
            value = dt.datetime(value.year, value.month, value.day)
        if value.tzinfo is not None:
            return None
        delta = value - dt.datetime(1970, 1, 1)
        ns = (delta.days * 86400 + delta.seconds) * 10**9 + delta.microseconds * 1000
        return Fraction(ns, kind.unit_ns)
    if isinstance(value, dt.date):
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, Fraction) and kind.domain == "float":
        return float(value)  # a DECIMAL beside a DOUBLE is its double, as DuckDB
    if kind.domain in ("int", "uint") and isinstance(value, float) and abs(value) >= 2**53 \
            and math.isfinite(value):
        return None  # the evaluator compares in float64 there: leave it to the evaluator
    return value


def _closed(kind: FieldKind, lo, lo_strict, hi, hi_strict) -> Interval | None:
    """Integer-valued domains get closed integer bounds clipped to the storage type (a literal
    between two integers tightens the bound); None when no value of the type fits."""
    if kind.domain in ("float", "bytes"):
        if lo is not None and hi is not None and (lo > hi or (lo == hi and (lo_strict or hi_strict))):
            return None
        return Interval(lo, hi, lo_strict, hi_strict)
    info = type_info(kind.datatype)
    t_lo, t_hi = (int(np.iinfo(info.numpy).min), int(np.iinfo(info.numpy).max))
    if kind.domain == "datetime":
        t_lo += 1  # INT64_MIN is NaT (NULL), never a value
    if lo is None or (isinstance(lo, float) and lo == -math.inf):
        int_lo = t_lo
    elif isinstance(lo, float) and lo == math.inf:
        return None
    else:
        int_lo = math.floor(lo) + 1 if lo_strict else math.ceil(lo)
    if hi is None or (isinstance(hi, float) and hi == math.inf):
        int_hi = t_hi
    elif isinstance(hi, float) and hi == -math.inf:
        return None
    else:
        int_hi = math.ceil(hi) - 1 if hi_strict else math.floor(hi)
    int_lo, int_hi = max(int_lo, t_lo), min(int_hi, t_hi)
    if int_lo > int_hi:
        return None
    return Interval(int_lo, int_hi)


# -- per-tile statistics ------------------------------------------------------------------------


@dataclass(frozen=True)
class Stats:
    """Per tile of one field: bounds (numpy for numbers, lists of bytes for strings), null
    counts and cell counts (uint64), ``trusted`` (uint8: bounds usable) and ``null_exact``
    (uint8: the null count is the SQL null count)."""

    mins: Any
    maxes: Any
    null_counts: np.ndarray
    cell_counts: np.ndarray
    trusted: np.ndarray
    null_exact: np.ndarray


def cell_counts(meta) -> np.ndarray:
    n = meta.tile_count
    counts = np.full(n, meta.tile_cell_count(0) if n else 0, dtype=np.uint64)
    if n and not meta.dense:
        counts[-1] = meta.last_tile_cell_num
    return counts


def same_field(schema, spec) -> bool:
    """Whether a fragment's field ``spec`` holds the cells of the schema's field of that name:
    False for an attribute dropped and added again with another type (tiledb reinterprets the
    old bytes; we read the new attribute's fill value) and for a field the fragment lacks
    (``spec`` None).  Dimensions and internal fields (``__timestamps``...) always match."""
    if spec is None:
        return False
    try:
        attr = schema.attribute(spec.name)
    except KeyError:
        return True
    return (int(attr.datatype), attr.cell_val_num, attr.nullable) == \
        (int(spec.datatype), spec.cell_val_num, spec.nullable)


def attribute_stats(frag, kind: FieldKind, spec_matches: bool, cells: np.ndarray) -> Stats | None:
    """Zone map of an attribute in a fragment, or None when the metadata has none usable
    (format < 11, the attribute added later or re-typed, no min/max for its type)."""
    meta = frag.metadata
    n = len(cells)
    if meta.version < 11 or kind.name not in frag.fields or not spec_matches:
        return None
    nulls = (np.asarray(meta.tile_null_counts[kind.name], dtype=np.uint64) if kind.nullable
             else np.zeros(n, dtype=np.uint64))
    if len(nulls) != n:
        return None
    ones = np.ones(n, dtype=np.uint8)
    if frag.fields[kind.name].filters.lossy:  # bounds of the values written, not those read
        return Stats(None, None, nulls, cells, np.zeros(n, np.uint8), ones)
    mins, maxes = meta.tile_mins[kind.name], meta.tile_maxes[kind.name]
    if kind.domain is None or len(mins) != n or len(maxes) != n:
        # null counts still answer IS [NOT] NULL -- except a var-sized field's without min /
        # max (UTF-8 strings, blobs, var numbers): TileDB leaves its null count 0 whatever
        # the cells (``TileMetadataGenerator::process_cell_range_var`` returns early)
        exact = kind.domain != "datetime" and not _var_without_bounds(frag, kind)
        return Stats(None, None, nulls, cells, np.zeros(n, np.uint8),
                     ones if exact else np.zeros(n, np.uint8))
    if kind.domain == "bytes":
        trusted = np.array([b"\0" not in lo and b"\0" not in hi for lo, hi in zip(mins, maxes)],
                           dtype=np.uint8)
        if meta.dense:  # TileDB 2.30 may store garbage string bounds for dense tiles
            trusted[:] = 0
        return Stats(list(mins), list(maxes), nulls, cells, trusted, ones)
    mins, maxes = _widen(np.asarray(mins)), _widen(np.asarray(maxes))
    trusted = ones.copy()
    null_exact = ones
    if kind.domain == "float":
        sums = np.asarray(meta.tile_sums[kind.name], dtype=np.float64)
        if len(sums) != n:
            return None
        trusted = (np.isfinite(sums) & (np.abs(sums) < _DBL_MAX)).astype(np.uint8)
    elif kind.domain == "datetime":
        trusted = (mins != _NAT).astype(np.uint8)
        null_exact = trusted
    return Stats(mins, maxes, nulls, cells, trusted, null_exact)


def _var_without_bounds(frag, kind: FieldKind) -> bool:
    """Is the field var-sized of a type TileDB keeps no tile min / max for (not CHAR or
    STRING_ASCII)?"""
    spec = frag.fields.get(kind.name)
    return spec is not None and spec.cell_val_num == VAR_NUM and \
        kind.datatype not in _STRING_TYPES


def bounds_stats(lows, highs, cells: np.ndarray) -> Stats:
    """Dimension bounds of tiles (MBRs or clipped space tiles) as a zone map."""
    n = len(cells)
    ones = np.ones(n, dtype=np.uint8)
    if isinstance(lows, np.ndarray):
        lows, highs = _widen(lows), _widen(highs)
    else:
        lows, highs = [bytes(v) for v in lows], [bytes(v) for v in highs]
    return Stats(lows, highs, np.zeros(n, np.uint64), cells, ones, ones)


def stats_getter(frag, schema, kinds: dict[str, FieldKind], dim_bounds: dict[str, tuple],
                 cells: np.ndarray, tiles: np.ndarray | None = None
                 ) -> Callable[[str], Stats | None]:
    """The zone-map lookup ``classify`` takes, for some tiles of the fragment ``frag``: a
    function of a field name returning that field's ``Stats`` over the listed tiles (None: no
    usable metadata), worked out once per name (two conjuncts on one column: one zone map).

    ``tiles``: the fragment's tile indices described, in order (None: every tile);
    ``dim_bounds[name]``: a dimension's ``(lows, highs)``, one entry per listed tile (numpy
    arrays, or lists of bytes-like bounds for var-sized dimensions); ``cells``: the cell count
    of each listed tile; ``schema``: the array schema in force, ``kinds`` its ``field_kinds``.
    A dimension's stats are its bounds (``bounds_stats``); an attribute's come from the
    fragment metadata (``attribute_stats``, None for one the fragment lacks or stored with
    another type: ``same_field``), narrowed to ``tiles``."""
    all_cells = cells if tiles is None else cell_counts(frag.metadata)  # metadata: every tile
    cache: dict[str, Stats | None] = {}

    def stats_of(name: str) -> Stats | None:
        if name not in cache:
            kind = kinds[name]
            if kind.is_dim:
                cache[name] = bounds_stats(*dim_bounds[name], cells)
            else:
                stats = attribute_stats(frag, kind, same_field(schema, frag.fields.get(name)),
                                        all_cells)
                cache[name] = stats if stats is None or tiles is None else _subset(stats, tiles)
        return cache[name]

    return stats_of


def _subset(stats: Stats, tiles: np.ndarray) -> Stats:
    """``stats`` of the tiles ``tiles`` only (contiguous numpy arrays, or lists)."""
    def pick(values):
        if values is None:
            return None
        picked = pick_tiles(values, tiles)
        return np.ascontiguousarray(picked) if isinstance(picked, np.ndarray) else picked
    return Stats(pick(stats.mins), pick(stats.maxes), pick(stats.null_counts),
                 pick(stats.cell_counts), pick(stats.trusted), pick(stats.null_exact))


def _widen(values: np.ndarray) -> np.ndarray:
    kind = values.dtype.kind
    target = np.float64 if kind == "f" else np.uint64 if kind == "u" else np.int64
    return np.ascontiguousarray(values, dtype=target)


# -- classification -----------------------------------------------------------------------------


@dataclass(frozen=True)
class TileClasses:
    dims: np.ndarray  # int8 per tile: AND of the dimension conjuncts
    attrs: np.ndarray  # int8 per tile: AND of the attribute conjuncts
    complete: bool
    # uint64 per tile: bit p set when conjunct p (below 64) is ALWAYS there, so a reader of
    # the tile need not test it (each cell's own tile describes it: sound under merging too)
    settled: np.ndarray

    @property
    def always(self) -> np.ndarray:
        """Tiles where every cell satisfies the whole predicate."""
        if not self.complete:
            return np.zeros(len(self.dims), dtype=bool)
        return (self.dims == ALWAYS) & (self.attrs == ALWAYS)


def classify(pred: Predicate, kinds: dict[str, FieldKind],
             stats_of: Callable[[str], Stats | None], n: int) -> TileClasses:
    dims = np.full(n, ALWAYS, dtype=np.int8)
    attrs = np.full(n, ALWAYS, dtype=np.int8)
    settled = np.zeros(n, dtype=np.uint64)
    for test in pred.tests:
        stats = stats_of(test.column)
        cls = classify_test(test, kinds[test.column], stats, n)
        target = dims if kinds[test.column].is_dim else attrs
        np.minimum(target, cls, out=target)
        if 0 <= test.position < 64:
            settled[cls == ALWAYS] |= np.uint64(1 << test.position)
    return TileClasses(dims, attrs, pred.complete, settled)


def classify_test(test: Test, kind: FieldKind, stats: Stats | None, n: int) -> np.ndarray:
    if test.kind in ("is_null", "not_null"):
        return _null_test(test.kind, kind, stats, n)
    if stats is None:
        return np.full(n, MAYBE, dtype=np.int8)
    inside = np.full(n, NEVER, dtype=np.int8)  # an empty test has no interval: NEVER
    for interval in test.intervals:  # OR of the intervals: the best class wins
        np.maximum(inside, _interval(interval, kind, stats), out=inside)
    if test.kind == "in":
        return inside
    return _negate(inside, stats)


def _null_test(which: str, kind: FieldKind, stats: Stats | None, n: int) -> np.ndarray:
    if not kind.nullable and kind.domain != "datetime":
        return np.full(n, NEVER if which == "is_null" else ALWAYS, dtype=np.int8)
    out = np.full(n, MAYBE, dtype=np.int8)
    if stats is None:
        return out
    all_null = stats.null_counts >= stats.cell_counts
    no_null = (stats.null_counts == 0) & (stats.null_exact == 1)
    out[all_null] = ALWAYS if which == "is_null" else NEVER
    out[no_null] = NEVER if which == "is_null" else ALWAYS
    return out


def _negate(inside: np.ndarray, stats: Stats) -> np.ndarray:
    """NOT of an interval test under SQL NULL rules (NULL stays not-true)."""
    out = np.full(len(inside), MAYBE, dtype=np.int8)
    out[inside == ALWAYS] = NEVER
    clean = (inside == NEVER) & (stats.null_counts == 0) & (stats.null_exact == 1) \
        & (stats.trusted == 1)
    out[clean] = ALWAYS
    out[stats.null_counts >= stats.cell_counts] = NEVER
    return out


def _interval(interval: Interval, kind: FieldKind, stats: Stats) -> np.ndarray:
    n = len(stats.cell_counts)
    if stats.mins is None:
        out = np.full(n, MAYBE, dtype=np.int8)
        out[stats.null_counts >= stats.cell_counts] = NEVER
        return out
    if kind.domain == "bytes":
        return _interval_bytes(interval, stats)
    if kind.domain == "float" and kind.datatype == Datatype.FLOAT32:
        # The evaluator rounds a float literal to FLOAT for FLOAT columns; be right either way.
        a = _interval_numeric(interval, stats)
        b = _interval_numeric(_rounded32(interval), stats)
        return np.where(a == b, a, MAYBE).astype(np.int8)
    return _interval_numeric(interval, stats)


def _rounded32(interval: Interval) -> Interval:
    r = lambda v: None if v is None else float(np.float32(v))  # noqa: E731
    return Interval(r(interval.lo), r(interval.hi), interval.lo_strict, interval.hi_strict)


def _interval_numeric(interval: Interval, stats: Stats) -> np.ndarray:
    mins, maxes = stats.mins, stats.maxes
    n = len(mins)
    out = np.empty(n, dtype=np.int8)
    lo, hi = interval.lo, interval.hi
    if mins.dtype.kind == "f":
        lo = -math.inf if lo is None else float(lo)
        hi = math.inf if hi is None else float(hi)
        scalar = np.float64
    else:
        info = np.iinfo(mins.dtype)
        lo = int(info.min) if lo is None else int(lo)
        hi = int(info.max) if hi is None else int(hi)
        if lo > int(info.max) or hi < int(info.min):
            out[:] = NEVER
            return out
        lo, hi = max(lo, int(info.min)), min(hi, int(info.max))
        scalar = mins.dtype.type
    cells = _kernel_input(stats.cell_counts, np.uint64)
    nulls = _kernel_input(stats.null_counts, np.uint64)
    kernels.classify_interval(_kernel_input(mins, mins.dtype), _kernel_input(maxes, mins.dtype),
                              nulls, cells, _kernel_input(stats.trusted, np.uint8), scalar(lo),
                              scalar(hi), bool(interval.lo_strict), bool(interval.hi_strict), out)
    return out


def _kernel_input(values: np.ndarray, dtype) -> np.ndarray:
    """Writable C-contiguous (a read-only metadata buffer would compile the kernel again)."""
    values = np.ascontiguousarray(values, dtype=dtype)
    return values if values.flags.writeable else values.copy()


def _interval_bytes(interval: Interval, stats: Stats) -> np.ndarray:
    lo, hi = interval.lo, interval.hi
    out = np.full(len(stats.mins), MAYBE, dtype=np.int8)
    for i, (mn, mx) in enumerate(zip(stats.mins, stats.maxes)):
        if stats.null_counts[i] >= stats.cell_counts[i]:
            out[i] = NEVER
            continue
        if not stats.trusted[i]:
            continue
        if (lo is not None and (mx < lo or (interval.lo_strict and mx == lo))) or \
                (hi is not None and (mn > hi or (interval.hi_strict and mn == hi))):
            out[i] = NEVER
            continue
        above = lo is None or mn > lo or (not interval.lo_strict and mn == lo)
        below = hi is None or mx < hi or (not interval.hi_strict and mx == hi)
        if above and below and stats.null_counts[i] == 0:
            out[i] = ALWAYS
    return out
