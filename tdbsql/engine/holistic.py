"""Holistic aggregates: they need every value of a group at once.

``median(x)``, ``quantile_cont(x, q)``, ``quantile_disc(x, q)`` (``quantile`` is
quantile_disc; ``percentile_cont`` / ``percentile_disc ... WITHIN GROUP`` become these in
``planner.aggregate_names``): the non-NULL values are sorted by (group, value) once -- NaN
above every number, as DuckDB orders it -- and each group's answer is picked by position:

* discrete: position ``max(1, n - floor(n - n*q)) - 1``, as DuckDB computes it, in exact
  integer arithmetic when q is written as a decimal literal (``0.3`` is a DECIMAL in DuckDB)
  and in doubles otherwise (``0.3::DOUBLE``), so both agree with DuckDB at the edges;
* continuous: ``RN = (n - 1) * q`` between the values at ``floor(RN)`` and ``ceil(RN)``,
  ``lo * (1 - d) + hi * d`` for doubles (integers become DOUBLE, FLOAT stays FLOAT); DATE and
  TIMESTAMP interpolate in microseconds, rounded (a TIMESTAMP result; ``median`` keeps a
  TIMESTAMP's unit), TIME in its unit, DECIMAL in its unscaled integers, truncated, as DuckDB
  (``_decimal_interpolated``);
  ``median`` of strings and booleans is discrete, ``quantile_cont`` of them an error;
* a negative q counts from the top (DuckDB's descending quantile; so does a DOUBLE -0.0,
  not an integer or DECIMAL -0, which is 0); q must be a constant in [-1, 1]; a list of
  them gives a list per group (``quantile_cont(x, [0.25, 0.5])``).

``mode(x)``: the most frequent non-NULL value; ties go to the value seen first -- in the call's
ORDER BY when it has one (``mode(x ORDER BY y)``, ``mode() WITHIN GROUP (ORDER BY x)``: as
DuckDB, whose ties are otherwise decided by its hash table's order).  ``entropy(x)``: base-2
entropy of the non-NULL values' frequencies, 0 without values.  ``approx_count_distinct(x)``
is answered exactly -- the number of distinct non-NULL values, within any estimate's bounds.
``mad(x)``: the median of the absolute deviations from the median, of numbers (a DECIMAL or
FLOAT keeps its type; DuckDB's INTERVAL of dates and times is UnsupportedSql).

The sort copies the values' row numbers and groups; that copy is counted against the memory
budget (``budget``) besides the input rows the ordinary aggregate path already holds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from ..errors import SqlError, UnsupportedSql
from .decimal_values import from_units, units_of
from .grouping import Groups, aggregate, group_ids
from .hash_table import as_array, valid_mask
from .datetime_ops import US_PER_DAY, interval_micros
from .dense_ranks import dense_ranks
from .interval_rows import built, durations_as_intervals, parts
from .value_types import storage_integers, type_name

HOLISTIC = ("median", "quantile_cont", "quantile_disc", "mode", "entropy", "mad",
            "approx_count_distinct")


@dataclass(frozen=True)
class Fractions:
    """The constant q of a quantile call: each fraction's absolute value as a double and,
    for a decimal literal, exactly; whether it counts from the top; a list or one value."""

    values: tuple[float, ...]
    exact: tuple[Fraction | None, ...]
    descending: tuple[bool, ...]
    listed: bool

    MEDIAN = None  # set below

    @classmethod
    def of(cls, func: str, node: exp.Expression, evaluate) -> Fractions:
        """From the fraction's expression ``node`` (how it was written): one constant or a
        list of them (``[0.25, 0.5]``), each evaluated by ``evaluate(node)`` (a pa.Scalar for
        a constant)."""
        listed = isinstance(node, exp.Array)
        written = list(node.expressions) if listed else [node]
        values, exact, negative, positive = [], [], False, False
        for item in written:
            value = evaluate(item) if _constant(item) else None
            number = _fraction(func, value)
            values.append(abs(number))
            decimal = _decimal_literal(item)
            exact.append(None if decimal is None else abs(decimal))
            # DuckDB: below zero, or a DOUBLE -0.0 (``-(0.0::DOUBLE)``); an integer or
            # DECIMAL -0 is 0, which takes the others' direction
            negative |= number < 0 or (pa.types.is_floating(value.type)
                                       and math.copysign(1.0, number) < 0)
            positive |= number > 0
        if negative and positive:
            raise SqlError("QUANTILE parameters must have consistent signs")
        return cls(tuple(values), tuple(exact), (negative,) * len(values), listed)


def _constant(node: exp.Expression) -> bool:
    return node.find(exp.Column, exp.AggFunc, exp.Subquery, exp.Window) is None


def _fraction(func: str, value) -> float:
    """A fraction's value, checked as DuckDB's binder checks it."""
    if not isinstance(value, pa.Scalar):
        raise SqlError(f'The "quantile" argument in function "{func}" must be a constant '
                       "expression")
    if not value.is_valid:
        raise SqlError(f'The "quantile" argument in function "{func}" must not be NULL')
    kind = value.type
    if not (pa.types.is_integer(kind) or pa.types.is_floating(kind)
            or pa.types.is_decimal(kind)):
        raise SqlError(f"No function matches the given name and argument types: {func}() "
                       f"takes a number as its quantile, not {type_name(kind)}")
    number = float(value.as_py())
    if math.isnan(number) or not -1 <= number <= 1:
        raise SqlError("QUANTILE can only take parameters in the range [-1, 1]")
    return number


Fractions.MEDIAN = Fractions((0.5,), (None,), (False,), False)


def _decimal_literal(node: exp.Expression | None) -> Fraction | None:
    """The exact value of a decimal literal (``0.3``, ``-0.25``), None for anything else."""
    sign = 1
    while isinstance(node, (exp.Neg, exp.Paren)):
        sign = -sign if isinstance(node, exp.Neg) else sign
        node = node.this
    if isinstance(node, exp.Literal) and not node.is_string and "." in node.this \
            and "e" not in node.this.lower():
        return sign * Fraction(node.this)
    return None


def holistic(func: str, values: pa.Array, groups: Groups, fractions: Fractions | None = None,
             budget=None) -> pa.Array:
    """One value per group of ``func`` (one of ``HOLISTIC``)."""
    values = as_array(values)
    if func == "approx_count_distinct":
        return aggregate("count", values, groups, distinct=True)
    if pa.types.is_null(values.type):
        null_type = pa.float64() if func in ("median", "quantile_cont") else pa.null()
        if func == "entropy":
            return pa.array(np.zeros(groups.count))
        return pa.nulls(groups.count, null_type)
    if budget is not None:
        budget.check(len(values) * 24, f"{func}()")
    if func == "mode":
        return _mode(values, groups)
    if func == "entropy":
        return _entropy(values, groups)
    if func == "mad":
        return _mad(values, groups)
    if func == "median" and pa.types.is_duration(values.type):  # ts - ts: as an INTERVAL
        values = durations_as_intervals(values, _out_of_range)
    if func == "median":
        fractions = Fractions.MEDIAN
        continuous = _interpolable(values.type) or pa.types.is_interval(values.type)
    else:
        continuous = func == "quantile_cont"
        if continuous and not _interpolable(values.type):
            raise SqlError(f"No function matches the given name and argument types "
                           f"'{func}({type_name(values.type)})': it interpolates numbers, "
                           "dates and times (quantile_disc picks a value of any type)")
    ordered = _Sorted.of(values, groups)
    picked = [ordered.pick(q, exact, desc, continuous, func == "median")
              for q, exact, desc in zip(fractions.values, fractions.exact, fractions.descending)]
    if not fractions.listed:
        return picked[0]
    return _lists(picked, ordered.counts, _result_type(values.type, continuous,
                                                       func == "median"))


def _mad(values: pa.Array, groups: Groups) -> pa.Array:
    """median(|x - median(x)|) per group."""
    kind = values.type
    if not (pa.types.is_integer(kind) or pa.types.is_floating(kind)
            or pa.types.is_decimal(kind)):
        if _interpolable(kind):
            raise UnsupportedSql(f"mad() of {type_name(kind)} (DuckDB's INTERVAL) is not "
                                 "supported")
        raise SqlError(f"No function matches the given name and argument types "
                       f"'mad({type_name(kind)})': mad() takes numbers")
    centres = holistic("median", values, groups)
    if pa.types.is_integer(kind) and pa.types.is_floating(centres.type):  # as DOUBLEs, past
        values = values.cast(pa.float64(), safe=False)  # 2**53 too (Arrow's cast refuses)
    deviations = pc.abs(pc.subtract(values, centres.take(pa.array(groups.ids))))
    return holistic("median", deviations.cast(centres.type), groups)


def _interpolable(kind: pa.DataType) -> bool:
    return (pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_decimal(kind)
            or pa.types.is_date(kind) or pa.types.is_timestamp(kind) or pa.types.is_time(kind))


def _result_type(kind: pa.DataType, continuous: bool, median: bool) -> pa.DataType:
    if not continuous or pa.types.is_floating(kind) or pa.types.is_decimal(kind) \
            or pa.types.is_time(kind):
        return kind
    if pa.types.is_timestamp(kind):
        return kind if median else pa.timestamp("us", kind.tz)
    if pa.types.is_date(kind):
        return pa.timestamp("us")
    return pa.float64()


@dataclass(frozen=True)
class _Sorted:
    """The non-NULL values by (group, value): ``rows`` in that order, each group's ``starts``
    there and its value ``counts``."""

    values: pa.Array
    rows: np.ndarray
    starts: np.ndarray
    counts: np.ndarray

    @classmethod
    def of(cls, values: pa.Array, groups: Groups) -> _Sorted:
        rows, ids = _valid_rows(values, groups)
        picked = values.take(pa.array(rows))
        if pa.types.is_interval(values.type):  # as they compare: a month is 30 days
            picked = pa.array(dense_ranks(picked, "quantile"))
        table = pa.table({"g": pa.array(ids), "v": picked})
        order = pc.sort_indices(table, sort_keys=[("g", "ascending"), ("v", "ascending")])
        counts = np.bincount(ids, minlength=groups.count).astype(np.int64)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        return cls(values, rows[order.to_numpy()], starts, counts)

    def pick(self, q: float, exact: Fraction | None, desc: bool, continuous: bool,
             median: bool) -> pa.Array:
        n = self.counts
        present = n > 0
        if not continuous:
            index = _discrete_index(q, exact, n)
            return self._at(index, desc, present)
        position = (n - 1).astype(np.float64) * q
        low, high = np.floor(position), np.ceil(position)
        lo = self._at(low.astype(np.int64), desc, present)
        hi = self._at(high.astype(np.int64), desc, present)
        return _interpolated(lo, hi, position - low, present, median)

    def _at(self, index: np.ndarray, desc: bool, present: np.ndarray) -> pa.Array:
        """Per group the value at sorted position ``index`` (from the top when ``desc``)."""
        index = np.where(desc, self.counts - 1 - index, index)
        where = np.where(present, self.starts + np.clip(index, 0, None), 0)
        rows = self.rows[where] if len(self.rows) else np.zeros(len(where), np.int64)
        return self.values.take(pa.array(rows, mask=~present))


def _discrete_index(q: float, exact: Fraction | None, n: np.ndarray) -> np.ndarray:
    """DuckDB's discrete position: ``max(1, n - floor(n - n*q)) - 1``."""
    if exact is not None:  # Python ints: a 21-digit fraction's denominator passes int64
        whole = n.astype(object)
        floored = np.array((whole * exact.denominator - whole * exact.numerator)
                           // exact.denominator, dtype=np.int64)
    else:
        floored = np.floor(n.astype(np.float64) - n.astype(np.float64) * q).astype(np.int64)
    return np.maximum(1, n - floored) - 1


def _interpolated(lo: pa.Array, hi: pa.Array, d: np.ndarray, present: np.ndarray,
                  median: bool) -> pa.Array:
    kind = lo.type
    mask = ~present
    if pa.types.is_decimal(kind):
        return _decimal_interpolated(lo, hi, d, mask)
    if pa.types.is_floating(kind) or pa.types.is_integer(kind):
        low = lo.fill_null(0).to_numpy(zero_copy_only=False).astype(np.float64)
        high = hi.fill_null(0).to_numpy(zero_copy_only=False).astype(np.float64)
        # a quantile falling on one value is that value, as DuckDB's (inf * 0 is NaN)
        if kind == pa.float32():
            with np.errstate(invalid="ignore"):
                between = low + (high - low) * d
            return pa.array(np.where(d == 0, low, between).astype(np.float32), kind, mask=mask)
        doubles = kind if pa.types.is_floating(kind) else pa.float64()  # integers: DOUBLE
        with np.errstate(invalid="ignore"):
            between = _fused(low, 1.0 - d, high * d)
        return pa.array(np.where(d == 0, low, between), doubles, mask=mask)
    if pa.types.is_interval(kind):
        return _interval_interpolated(lo, hi, d, mask)
    if pa.types.is_timestamp(kind) and median:  # median keeps the unit (truncating, as DuckDB)
        low, high = _ints(lo), _ints(hi)
        return pa.array(np.trunc(low + (high - low) * d).astype(np.int64), pa.int64(),
                        mask=mask).view(kind)
    if pa.types.is_time(kind):
        low, high = _ints(lo), _ints(hi)
        out = np.rint(low * (1.0 - d) + high * d).astype(np.int64)
        return pc.cast(pa.array(out, pa.int64(), mask=mask), storage_integers(kind)).view(kind)
    # DATE / TIMESTAMP -> TIMESTAMP in microseconds, rounded
    target = pa.timestamp("us", getattr(kind, "tz", None))
    low, high = _ints(pc.cast(lo, target)), _ints(pc.cast(hi, target))
    out = np.rint(low * (1.0 - d) + high * d).astype(np.int64)
    return pa.array(out, pa.int64(), mask=mask).view(target)


def _interval_interpolated(lo: pa.Array, hi: pa.Array, d: np.ndarray, mask: np.ndarray
                           ) -> pa.Array:
    """DuckDB's median of INTERVALs: the middle one as it is, else between the two middle
    ones, each as its microseconds (a month 30 days), ``lo + (hi - lo) * d`` with the step
    rounded half up, back as days and microseconds."""
    def micros(values: pa.Array) -> list[int]:
        months, days, rest, _ = parts(values)
        return [interval_micros(int(m), int(n), int(u)) for m, n, u in zip(months, days, rest)]
    totals = [low + math.floor(float(high - low) * step + 0.5)
              for low, high, step in zip(micros(lo), micros(hi), d.tolist())]
    days = [abs(total) // US_PER_DAY * (-1 if total < 0 else 1) for total in totals]
    rests = [total - day * US_PER_DAY for total, day in zip(totals, days)]
    between = built(np.zeros(len(totals), np.int64), np.array(days, np.int64),
                    np.array(rests, np.int64), ~mask, _out_of_range)
    return pc.if_else(pa.array(d == 0), lo, between)


def _out_of_range(text: str):
    return SqlError(f"median() of INTERVALs: {text}")


def _decimal_interpolated(lo: pa.Array, hi: pa.Array, d: np.ndarray, mask: np.ndarray
                          ) -> pa.Array:
    """DuckDB's interpolation of the unscaled integers: up to 18 digits (its 16/32/64-bit
    storage) ``lo + (hi - lo) * d`` over their doubles (a fused multiply-add, as DuckDB's
    build compiles it), truncated -- ``lo`` itself, exactly, where d is 0; wider (128-bit)
    ``lo + trunc((hi - lo) * d)``, the difference exact and added exactly (DECIMAL(38,3)
    1.001 and 1.002 give 1.002 where DECIMAL(18,3) gives 1.001)."""
    kind = lo.type
    low, high = units_of(lo), units_of(hi)
    if kind.precision <= 18:
        low_double = low.astype(np.float64)
        moved = np.trunc(_fused(high.astype(np.float64) - low_double, d, low_double))
        units = np.where(d == 0, low, moved.astype(np.int64))
        return from_units(units, mask, kind)
    units = [int(lo_units) + math.trunc(float(hi_units - lo_units) * step)
             for lo_units, hi_units, step in zip(low.tolist(), high.tolist(), d.tolist())]
    return pa.array([None if null else Decimal(f"{unit}E-{kind.scale}")
                     for unit, null in zip(units, mask)], kind)


def _fused(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``a * b + c`` rounded once, as DuckDB's compiled ``lo * (1 - d) + hi * d`` is (a fused
    multiply-add): the product's exact error by Dekker's split, added back after TwoSum."""
    with np.errstate(invalid="ignore", over="ignore"):
        product = a * b
        a_hi, a_lo = _halves(a)
        b_hi, b_lo = _halves(b)
        error = ((a_hi * b_hi - product) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
        total = product + c
        moved = total - product
        rounding = (product - (total - moved)) + (c - moved)
        fused = total + (rounding + error)
    return np.where(np.isfinite(fused), fused, product + c)


def _halves(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    scaled = 134217729.0 * x  # 2**27 + 1: Veltkamp's split into two 26-bit halves
    high = scaled - (scaled - x)
    return high, x - high


def _ints(values: pa.Array) -> np.ndarray:
    return values.view(storage_integers(values.type)).fill_null(0).to_numpy(zero_copy_only=False).astype(np.float64)


def _lists(picked: list[pa.Array], counts: np.ndarray, item_type: pa.DataType) -> pa.Array:
    """Per group a list of one value per fraction; NULL for a group without values."""
    groups = len(counts)
    width = len(picked)
    if width:
        items = pa.concat_arrays([pc.cast(p, item_type) if p.type != item_type else p
                                  for p in picked])
        order = (np.arange(width)[None, :] * groups + np.arange(groups)[:, None]).ravel()
        items = items.take(pa.array(order))
    else:
        items = pa.array([], item_type)
    offsets = pa.array((np.arange(groups + 1) * width).astype(np.int32))
    empty = counts == 0
    return pa.ListArray.from_arrays(offsets, items, mask=pa.array(empty) if empty.any() else None)


def _valid_rows(values: pa.Array, groups: Groups) -> tuple[np.ndarray, np.ndarray]:
    """The rows of a group whose value is not NULL, and their group ids."""
    valid = valid_mask(values)
    keep = groups.ids >= 0 if valid is None else (groups.ids >= 0) & (valid == 1)
    rows = np.flatnonzero(keep)
    return rows, groups.ids[rows]


def value_pairs(values: pa.Array, groups: Groups) -> tuple[np.ndarray, np.ndarray, Groups]:
    """The non-NULL rows, and the distinct (group, value) pairs among them."""
    rows, ids = _valid_rows(values, groups)
    pairs = group_ids([pa.array(ids), values.take(pa.array(rows))]) if len(rows) else \
        Groups(np.zeros(0, np.int64), 0, np.zeros(0, np.int64))
    return rows, ids, pairs


def _mode(values: pa.Array, groups: Groups) -> pa.Array:
    rows, ids, pairs = value_pairs(values, groups)
    best = np.full(groups.count, -1, np.int64)
    if pairs.count:
        frequency = np.bincount(pairs.ids, minlength=pairs.count)
        group_of = ids[pairs.first]
        # by group, then most frequent, then first seen: the first pair of each group wins
        order = np.lexsort((pairs.first, -frequency, group_of))
        leaders = order[np.r_[True, group_of[order][1:] != group_of[order][:-1]]]
        best[group_of[leaders]] = rows[pairs.first[leaders]]
    return values.take(pa.array(best, mask=best < 0))


def _entropy(values: pa.Array, groups: Groups) -> pa.Array:
    _, ids, pairs = value_pairs(values, groups)
    result = np.zeros(groups.count)
    if pairs.count:
        frequency = np.bincount(pairs.ids, minlength=pairs.count).astype(np.float64)
        group_of = ids[pairs.first]
        total = np.bincount(ids, minlength=groups.count).astype(np.float64)[group_of]
        terms = frequency / total * np.log2(total / frequency)
        result = np.bincount(group_of, weights=terms, minlength=groups.count)
    return pa.array(result, pa.float64())
