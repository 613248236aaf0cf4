"""A join without equality keys: the pairs its ON condition keeps, never the whole cross
product at once.

A decorrelated subquery with an inequality (``u.y <= t.x``) joins the distinct outer values
with the inner rows on that condition alone.  Two ways, the first that applies:

- range join: a conjunct compares an expression of the left rows with one of the right rows
  (``<``, ``<=``, ``>``, ``>=``) over numbers, dates or timestamps.  The right values are
  sorted once; each left value's matches are a run of them found by binary search.  The
  pairs are counted before they are made, so the memory budget sees the real output, and
  only the other conjuncts are evaluated on them.  NULLs match nothing.
- block loop: the condition is evaluated on blocks of at most 1Mi pairs of the cross
  product and only the pairs it keeps are held.  The cross product is still capped by the
  row limit (``TDBSQL_MAX_ROWS``): evaluating it past that would run for hours.

In: the joined rows so far (``JoinedRows``), the right input's Frame, the ON conjuncts.
Out: (left rows, right rows, the conjuncts still to test on those pairs) -- or, before any
pair is made, each left row's matches (``non_equi_matches``), whose pairs are made for a block
of left rows at a time (an aggregate grouped by the left rows consumes them block by block:
``engine.join_aggregate``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from ..kernels.window import frame_rows
from ..planner.comparison_order import FLIPPED
from ..planner.conjuncts import and_all, has_subquery, tables_of
from .list_values import repeated_rows
from .value_types import valid_rows

BLOCK_PAIRS = 1 << 20
# left OP right -> (side of searchsorted on the sorted right values, matches above it?)
_RANGES = {exp.LT: ("right", True), exp.LTE: ("left", True),
           exp.GT: ("left", False), exp.GTE: ("right", False)}


def conditional_pairs(left, right, terms: list[exp.Expression], runner, name: str):
    """(left rows, right rows, remaining conjuncts) of the pairs ``terms`` may keep."""
    matches, rest = non_equi_matches(left, right, terms, runner, name)
    if isinstance(matches, RangeMatches):
        runner.check_join(matches.total, [*left.inputs, right], f"the join with {name!r}")
    return (*matches.pairs(0, left.length), rest)


def non_equi_matches(left, right, terms: list[exp.Expression], runner, name: str):
    """(the matches of every left row, ``RangeMatches`` or ``LoopMatches``, the conjuncts
    still to test on their pairs); no pair is made yet."""
    for position, term in enumerate(terms):
        sides = compared_sides(term, left, right)
        if sides is None:
            continue
        op, left_expr, right_expr = sides
        found = _range_matches(left, right, op, left_expr, right_expr, runner)
        if found is not None:
            return found, terms[:position] + terms[position + 1:]
    return LoopMatches(left, right, and_all(terms), runner, name), []


def compared_sides(term, left, right, flipped: dict = FLIPPED):
    """(operator with the left rows' expression first, left expression, right expression),
    or None if ``term`` is no comparison of one side with the other (one of ``flipped``'s,
    which gives each operator with its sides swapped)."""
    op = type(term)
    if op not in flipped or has_subquery(term):
        return None
    a, b = term.this, term.expression
    left_tables, right_tables = left.tables, set(right.tables)
    a_tables, b_tables = tables_of(a), tables_of(b)
    if not a_tables or not b_tables:
        return None
    if a_tables <= left_tables and b_tables <= right_tables:
        return op, a, b
    if b_tables <= left_tables and a_tables <= right_tables:
        return flipped[op], b, a
    return None


@dataclass(frozen=True)
class RangeMatches:
    """Each left row's matches: a run of the right rows sorted by the compared value,
    ``order[start[i] : start[i] + counts[i]]`` for left row ``i`` (none for a NULL).  Left
    ``x < y`` / ``x <= y`` right match the sorted values from a cut on: every run ends at the
    last; ``x > y`` / ``x >= y`` those before it: every run starts at the first (``prefix``)."""

    order: np.ndarray  # the right rows with a value, by value (int64)
    start: np.ndarray  # per left row, where its run starts in ``order``
    counts: np.ndarray  # per left row, its run's length: its pairs
    prefix: bool

    @property
    def total(self) -> int:
        return int(self.counts.sum())

    def pairs(self, begin: int, end: int) -> tuple[np.ndarray, np.ndarray]:
        """(left rows, right rows) of the matches of left rows ``begin .. end - 1``, by left
        row, each left row's right rows in sorted order."""
        counts = self.counts[begin:end]
        starts = np.ascontiguousarray(self.start[begin:end])
        right_idx = np.empty(int(counts.sum()), np.int64)
        frame_rows(self.order, starts, starts + counts, right_idx)  # each left row's run
        return repeated_rows(counts) + begin, right_idx


def _range_matches(left, right, op, left_expr, right_expr, runner) -> RangeMatches | None:
    keyed = left.frame([left_expr])
    left_values = ordered_numbers(runner.column(keyed, left_expr, keyed.flat()))
    right_values = ordered_numbers(runner.column(right, right_expr, right.flat()))
    if left_values is None or right_values is None or left_values[2] != right_values[2]:
        return None
    (lv, lvalid, _), (rv, rvalid, _) = left_values, right_values
    if lv.dtype != rv.dtype:
        both = _common_numbers(lv, rv)
        if both is None:
            return None
        lv, rv = both
    right_rows = np.flatnonzero(rvalid)
    order = right_rows[np.argsort(rv[right_rows], kind="stable")].astype(np.int64)
    side, above = _RANGES[op]
    cut = np.searchsorted(rv[order], lv, side=side).astype(np.int64)
    start = cut if above else np.zeros_like(cut)
    counts = len(order) - cut if above else cut.copy()
    counts[~lvalid] = 0  # NULL matches nothing
    return RangeMatches(order, start, counts, prefix=not above)


def _common_numbers(lv: np.ndarray, rv: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Two number columns of different types as one, as DuckDB compares them: integers as
    BIGINTs when they fit (None past: the block loop compares them exactly; DOUBLEs would
    merge 2**53 and 2**53 + 1), a FLOAT beside an integer as FLOATs, else as DOUBLEs."""
    if {lv.dtype.kind, rv.dtype.kind} <= {"i", "u"}:
        if any(v.dtype == np.uint64 and len(v) and int(v.max()) >= 2**63 for v in (lv, rv)):
            return None
        return lv.astype(np.int64), rv.astype(np.int64)
    if np.dtype(np.float64) not in (lv.dtype, rv.dtype):  # a FLOAT beside an integer
        return (lv.astype(np.float32).astype(np.float64),
                rv.astype(np.float32).astype(np.float64))
    return lv.astype(np.float64), rv.astype(np.float64)


class LoopMatches:
    """Every right row a candidate for every left row: ``condition`` tested on blocks of at
    most ``BLOCK_PAIRS`` pairs of the cross product, only the pairs it keeps held.  The
    cross product is capped by the row limit (``TDBSQL_MAX_ROWS``): evaluating it past that
    would run for hours.  ``counts``: each left row's candidates (every right row)."""

    def __init__(self, left, right, condition, runner, name: str):
        runner.check_rows(left.length * right.length, f"the join with {name!r} (no equality "
                          "to hash on: every pair is tested)")
        self.left, self.right, self.condition = left, right, condition
        self.runner, self.name = runner, name
        self.counts = np.full(left.length, right.length, np.int64)

    def pairs(self, begin: int, end: int) -> tuple[np.ndarray, np.ndarray]:
        """(left rows, right rows) of the pairs of left rows ``begin .. end - 1`` that the
        condition keeps, by left row."""
        left, right, runner = self.left, self.right, self.runner
        step = max(1, BLOCK_PAIRS // max(right.length, 1))
        kept_left, kept_right = [], []
        for first in range(begin, end, step):
            rows = np.arange(first, min(first + step, end), dtype=np.int64)
            left_idx = np.repeat(rows, right.length)
            right_idx = np.tile(np.arange(right.length, dtype=np.int64), len(rows))
            pairs = left.joined(left_idx, right, right_idx).frame([self.condition])
            keep = runner.mask(pairs, self.condition)
            kept_left.append(left_idx[keep])
            kept_right.append(right_idx[keep])
            runner.check_join(sum(map(len, kept_left)), [*left.inputs, right],
                              f"the join with {self.name!r}")
        if not kept_left:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        return np.concatenate(kept_left), np.concatenate(kept_right)


def ordered_numbers(values):
    """(numpy values, valid mask, family) of a number / date / timestamp / time column, or
    None (strings, decimals, a float column holding NaN, nanoseconds that microseconds cannot
    hold: those take the block loop).  Two columns compare as numpy values only within one
    family."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    kind = values.type
    try:
        if pa.types.is_integer(kind) or pa.types.is_floating(kind):
            family, plain = "number", values
        elif pa.types.is_timestamp(kind):
            values = values.cast(pa.timestamp("us", kind.tz))  # one unit for both sides
            family, plain = str(values.type), values.view(pa.int64())
        elif pa.types.is_date32(kind):
            family, plain = "date", values.view(pa.int32())
        elif pa.types.is_time64(kind):
            values = values.cast(pa.time64("us"))
            family, plain = "time", values.view(pa.int64())
        else:
            return None
    except pa.ArrowInvalid:  # a TIMESTAMP_NS / TIME_NS value between two microseconds
        return None
    valid = valid_rows(plain)
    numbers = np.asarray(pc.fill_null(plain, 0).to_numpy(zero_copy_only=False))
    if numbers.dtype.kind == "f" and np.isnan(numbers[valid]).any():
        return None
    if family != "number":
        numbers = numbers.astype(np.int64)
    return numbers, valid, family
