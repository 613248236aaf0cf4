"""Conjuncts tested on a task's stored values, before its cells become Arrow.

A scan's condition is mostly ``column <op> constant`` / ``BETWEEN`` / ``IN (constants)`` over
numbers and dates (TPC-H Q6: a date range, a discount band, a quantity bound).  The zone-map
parser (``planner.zonemap.parse_predicate``) already turns such conjuncts into intervals in
each column's stored domain, with exact integer bounds (``x < 23.5`` on an int column is
``x <= 23``) and dates as stored units.  Those tests run here, one Numba pass per conjunct
over the decoded values (``kernels/predicate.py``), as do comparisons of two stored columns of
one type (``l_commitdate < l_receiptdate``) and ``[NOT] LIKE`` patterns of literal pieces and
``%`` over stored strings (on the tile's bytes), and only the rows that pass are gathered and
converted to Arrow; the conjuncts the parser does not take (expressions, other string tests,
IS NULL, float32 or uint64 columns ...) stay for the evaluator, over the fewer rows.

Same answers as the evaluator: NULL fails every test, NaN sorts above every number, a datetime
INT64_MIN (NaT) is NULL.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from sqlglot import exp

from ..datatypes import Datatype
from ..kernels import predicate as kernels
from ..planner.conjuncts import and_all, conjuncts, has_subquery, is_settled
from ..planner.zonemap import FieldKind, Predicate, Test
from . import like_match
from .like_match import Pattern
from ..storage.tile_codes import string_dictionary
from .column import Column

NO_VALIDITY = np.zeros(0, np.uint8)


@dataclass(frozen=True)
class _Kernel:
    """One test in the kernel's terms."""

    column: str
    lo: np.ndarray
    hi: np.ndarray
    lo_strict: np.ndarray
    hi_strict: np.ndarray
    lo_open: np.ndarray
    hi_open: np.ndarray
    negate: bool
    nat_is_null: bool


@dataclass(frozen=True)
class _Pair:
    """``left OP right`` between two stored columns of one datatype (``kernels`` op code)."""

    left: str
    right: str
    op: int
    nat_is_null: bool


_PAIR_OPS = {exp.EQ: 0, exp.NEQ: 1, exp.LT: 2, exp.LTE: 3, exp.GT: 4, exp.GTE: 5}


@dataclass(frozen=True)
class _Like:
    """``column [NOT] LIKE pattern`` (a pattern of literal pieces and ``%``), ``column [<>|=]
    'text'`` and ``column [NOT] IN ('text', ...)`` over a stored string column: a row passes
    when it matches one of ``patterns`` (none, with ``negate``).  Matched on the tile's bytes
    and offsets as they are stored, so the column never becomes Arrow when nothing else reads
    it (TPC-H Q13's ``o_comment NOT LIKE '%special%requests%'``, Q12's ``l_shipmode IN
    ('MAIL', 'SHIP')``)."""

    column: str
    patterns: tuple[Pattern, ...]
    negate: bool


@dataclass(frozen=True)
class StoredFilter:
    tests: tuple[_Kernel | _Pair, ...]  # conjuncts the kernels evaluate
    residual: exp.Expression | None  # the other conjuncts, for the evaluator

    @cached_property
    def residual_columns(self) -> frozenset[str]:
        """Names of the columns the residual reads."""
        if self.residual is None:
            return frozenset()
        return frozenset(c.name for c in self.residual.find_all(exp.Column))

    @cached_property
    def _tested_columns(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(name for test in self.tests for name in _columns_of(test)))

    @cached_property
    def _raw_columns(self) -> frozenset[str]:
        """Columns a test reads as stored even when the tile has codes (pairs)."""
        return frozenset(name for test in self.tests if isinstance(test, _Pair)
                         for name in _columns_of(test))

    def keep(self, columns: dict[str, Column], length: int, keep: np.ndarray | None = None,
             kept: int | None = None) -> tuple[np.ndarray, int]:
        """(per row whether every test holds, how many rows do), ANDed into ``keep`` (of
        ``kept`` rows kept) when given.  Each tested column is made writable once (a
        read-only buffer would compile the kernels again), however many tests read it."""
        if keep is None:
            keep, kept = np.ones(length, bool), length
        inputs = {}
        for name in self._tested_columns:
            column = columns[name]
            if column.codes is not None and name not in self._raw_columns:
                continue  # read by its codes alone
            inputs[name] = (np.require(column.values, requirements=["C", "W"]),
                            NO_VALIDITY if column.validity is None else
                            np.require(column.validity, requirements=["C", "W"]))
        for test in self.tests:
            if isinstance(test, _Like):
                column = columns[test.column]
                kept = _test_like_codes(test, column, keep, kept) if column.codes is not None \
                    else _test_like(test, column, *inputs[test.column], keep)
                if kept == 0:
                    break
                continue
            if isinstance(test, _Pair):
                kept = kernels.keep_compared(*inputs[test.left], *inputs[test.right], test.op,
                                             test.nat_is_null, keep)
                if kept == 0:
                    break
                continue
            column = columns[test.column]
            if column.codes is not None:
                kept = _test_codes(test, column, keep, kept)
            else:
                kept = _test(test, *inputs[test.column], keep)
            if kept == 0:
                break
        return keep, int(kept)


def _test(test: _Kernel, values: np.ndarray, validity: np.ndarray, keep: np.ndarray) -> int:
    """AND one interval test into ``keep``; the rows still kept."""
    if len(test.lo) == 1:
        return kernels.keep_in_interval(
            values, validity, test.lo[0], test.hi[0], test.lo_strict[0], test.hi_strict[0],
            test.lo_open[0], test.hi_open[0], test.negate, test.nat_is_null, keep)
    return kernels.keep_in_intervals(
        values, validity, test.lo, test.hi, test.lo_strict, test.hi_strict, test.lo_open,
        test.hi_open, test.negate, test.nat_is_null, keep)


def _test_codes(test: _Kernel, column: Column, keep: np.ndarray, kept: int) -> int:
    """``_test`` over a tile's dictionary codes (``storage.tile_codes``; its float64
    dictionary is sorted in SQL order): the test runs once a dictionary entry, then a row
    keeps its entry's outcome, by a range of codes when the entries that pass are one run
    (an interval test always, a NOT IN often)."""
    hits = np.ones(len(column.dictionary), bool)
    _test(test, column.dictionary, NO_VALIDITY, hits)
    return _keep_by_codes(column, hits, keep, kept)


def _keep_by_codes(column: Column, hits: np.ndarray, keep: np.ndarray, kept: int) -> int:
    """AND into ``keep`` the rows whose dictionary entry passed (``hits``, one an entry):
    nothing to do when all did, by a range of codes when those that did are one run."""
    passing = np.flatnonzero(hits)
    if len(passing) == len(hits):
        return kept
    if not len(passing):
        keep[:] = False
        return 0
    low, high = passing[0], passing[-1]
    if high - low + 1 == len(passing):
        return kernels.keep_code_range(column.codes, np.uint8(low), np.uint8(high), keep)
    return kernels.keep_coded(column.codes, hits, keep)


NOTHING_LEFT = StoredFilter((), None)  # a task with no condition left to test


def stored_filter(condition: exp.Expression, predicate: Predicate, kinds: dict[str, FieldKind],
                  settled: int = 0) -> StoredFilter:
    """Split ``condition`` into kernel tests and the residual for the evaluator.  ``predicate``
    is ``condition`` parsed by the zone-map parser (test positions are conjunct positions);
    conjuncts whose bit is set in ``settled`` hold for every cell and are dropped.  A condition
    holding a subquery goes to the evaluator whole (its result is cached per node)."""
    if has_subquery(condition):
        return StoredFilter((), condition)
    tests = [(test.position, _kernel(test, kinds[test.column])) for test in predicate.tests
             if not is_settled(test.position, settled)]
    tests = [(position, test) for position, test in tests if test is not None]
    taken = {position for position, _ in tests}
    for position, term in enumerate(conjuncts(condition)):
        pair = None if position in taken or is_settled(position, settled) else \
            _pair(term, kinds) or _like(term, kinds)
        if pair is not None:
            tests.append((position, pair))
            taken.add(position)
    # the numeric tests first: a LIKE pass costs more a row than any of them
    tests.sort(key=lambda found: isinstance(found[1], _Like))
    residual = and_all([term.copy() for position, term in enumerate(conjuncts(condition))
                        if position not in taken and not is_settled(position, settled)])
    return StoredFilter(tuple(test for _, test in tests), residual)


def _kernel(test: Test, kind: FieldKind) -> _Kernel | None:
    if test.kind not in ("in", "not_in") or kind.domain not in ("int", "uint", "float",
                                                                  "datetime"):
        return None
    if kind.domain == "float" and kind.datatype != Datatype.FLOAT64:
        return None  # float32: DuckDB compares in FLOAT, the literal rounded; the evaluator does
    if kind.datatype == Datatype.UINT64:
        return None  # bounds past int64
    bound_type = np.float64 if kind.domain == "float" else np.int64
    intervals = test.intervals

    def bounds(attr: str) -> np.ndarray:
        return np.array([0 if getattr(i, attr) is None else getattr(i, attr)
                         for i in intervals], bound_type)

    def flags(get) -> np.ndarray:
        return np.array([get(i) for i in intervals], np.bool_)

    return _Kernel(
        kind.name, bounds("lo"), bounds("hi"),
        flags(lambda i: i.lo_strict), flags(lambda i: i.hi_strict),
        flags(lambda i: i.lo is None), flags(lambda i: i.hi is None),
        test.kind == "not_in", kind.domain == "datetime")


def _pair(term: exp.Expression, kinds: dict[str, FieldKind]) -> _Pair | None:
    """``column OP column`` over two stored fields of one datatype (signed integers, float64
    or dates: the kinds the zone-map parser reads as int / float / datetime), e.g. TPC-H's
    ``l_commitdate < l_receiptdate``."""
    op = _PAIR_OPS.get(type(term))
    left, right = term.args.get("this"), term.args.get("expression")
    if op is None or not isinstance(left, exp.Column) or not isinstance(right, exp.Column):
        return None
    a, b = kinds.get(left.name), kinds.get(right.name)
    if a is None or b is None or a.datatype != b.datatype or \
            a.domain not in ("int", "float", "datetime") or \
            (a.domain == "float" and a.datatype != Datatype.FLOAT64):
        return None
    return _Pair(a.name, b.name, op, a.domain == "datetime")


def _like(term: exp.Expression, kinds: dict[str, FieldKind]) -> _Like | None:
    """``column [NOT] LIKE 'literal pieces and %'``, ``column = | <> 'text'`` (either side)
    or ``column [NOT] IN ('text', ...)`` over a stored string column, or an OR of such tests
    of one column, none negated, under an optional NOT (``s = 'a' OR s LIKE '%b'``: a row
    passes when it matches one of the branches' patterns).  A NULL in a list or a literal of
    another type stays with the evaluator (its NULL or type semantics)."""
    negate = isinstance(term, exp.Not)
    node = (term.this if negate else term).unnest()
    if not isinstance(node, exp.Or):
        found = _text_test(node, kinds)
        return None if found is None else _Like(found.column, found.patterns,
                                                found.negate ^ negate)
    branches = [_text_test(branch.unnest(), kinds) for branch in node.flatten()]
    if any(b is None or b.negate or b.column != branches[0].column for b in branches):
        return None
    return _Like(branches[0].column, tuple(p for b in branches for p in b.patterns), negate)


def _text_test(node: exp.Expression, kinds: dict[str, FieldKind]) -> _Like | None:
    """One text test (``_like`` without the OR)."""
    negate = isinstance(node, exp.Not)
    node = node.this if negate else node
    if isinstance(node, (exp.EQ, exp.NEQ)):
        column, values = node.this, [node.expression]
        if not isinstance(column, exp.Column):
            column, values = node.expression, [node.this]
        negate ^= isinstance(node, exp.NEQ)
    elif isinstance(node, exp.In) and not node.args.get("query"):
        column, values = node.this, node.expressions
    elif isinstance(node, exp.Like):  # sqlglot reads ``NOT LIKE`` as a LIKE with ``negate``
        column, values = node.this, [node.expression]
        negate ^= bool(node.args.get("negate"))
    else:
        return None
    kind = kinds.get(column.name) if isinstance(column, exp.Column) else None
    if kind is None or not kind.text or not values or not all(
            isinstance(v, exp.Literal) and v.is_string for v in values):
        return None
    if isinstance(node, exp.Like):
        found = like_match.pieces(values[0].this, None)
        if found is None:
            return None
        patterns = (Pattern.of(*found),)
    else:  # equal to the whole text: one piece, both ends anchored
        patterns = tuple(Pattern.of([v.this.encode()] if v.this else [], True, True)
                         for v in values)
    return _Like(kind.name, patterns, negate)


def _test_like(test: _Like, column: Column, data: np.ndarray, validity: np.ndarray,
               keep: np.ndarray) -> int:
    """AND ``test`` into ``keep``; NULL matches neither the test nor its negation."""
    # only the rows still kept are matched
    hit = _outcomes(test, data, np.require(column.offsets, np.int64, ["C", "W"]), keep)
    if len(validity):
        hit &= validity.view(bool)
    np.logical_and(keep, hit, out=keep)
    return int(np.count_nonzero(keep))


def _test_like_codes(test: _Like, column: Column, keep: np.ndarray, kept: int) -> int:
    """``_test_like`` over a tile's dictionary codes (``storage.tile_codes``: short strings,
    never NULL): the patterns are matched once a dictionary entry, then each row keeps its
    entry's outcome (TPC-H's l_shipmode, o_orderstatus: a byte a row, not its text)."""
    data, offsets = string_dictionary(column.dictionary)
    hits = _outcomes(test, data, offsets, np.ones(len(offsets) - 1, bool))
    return _keep_by_codes(column, hits, keep, kept)


def _outcomes(test: _Like, data: np.ndarray, offsets: np.ndarray,
              keep: np.ndarray) -> np.ndarray:
    """Per string (``data``, ``offsets``) whether it passes ``test`` -- it matches one of
    the patterns, or none with ``negate`` -- of those ``keep`` holds (the others: False
    before the negation)."""
    hit = np.zeros(len(keep), bool)
    for pattern in test.patterns:
        hit |= pattern.matches(data, offsets, keep)
    if test.negate:
        np.logical_not(hit, out=hit)
    return hit


def _columns_of(test) -> tuple[str, ...]:
    return (test.left, test.right) if isinstance(test, _Pair) else (test.column,)


def compress(columns: dict[str, Column], keep: np.ndarray) -> dict[str, Column]:
    """The rows of ``columns`` where ``keep`` is True."""
    indices = keep.nonzero()[0]  # np.flatnonzero costs twice as much a call
    return {name: column.take(indices) for name, column in columns.items()}


def gathered(columns: dict[str, Column], length: int, filtering: StoredFilter,
             selected: np.ndarray | None) -> tuple[dict[str, Column], int, StoredFilter]:
    """A piece ``TileScan.filtered`` left ungathered, as it would have given it gathered."""
    if selected is None:
        return columns, length, filtering
    return {name: column.take(selected) for name, column in columns.items()}, length, filtering
