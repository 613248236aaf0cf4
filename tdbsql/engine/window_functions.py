"""Window functions (``f(...) OVER (PARTITION BY ... ORDER BY ... frame)``) over a step's rows.

``planner.windows`` gives every window call a step of its own whose input is all the rows the
call sees, with its operands as plain columns.  Here one call becomes one Arrow array, in the
input's row order, with DuckDB's semantics:

* the rows are put in window order: partitions (group ids of the PARTITION BY keys, so NULLs
  form a partition and strings cost no comparisons), then ORDER BY with its directions and
  NULLS FIRST/LAST; rows equal on the ORDER BY keys are *peers*;
* ranking (row_number, rank, dense_rank, percent_rank, cume_dist, ntile) and lag/lead ignore
  the frame (but with an ORDER BY of their own, below); first_value/last_value/nth_value
  (``first`` / ``last`` are those, as DuckDB reads them over a window) and the aggregates
  read it.  The default frame
  is RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW (the row and its peers) with ORDER BY,
  the whole partition without;
* a RANGE frame with an offset (``RANGE BETWEEN 2 PRECEDING AND 1 FOLLOWING``) needs exactly
  one ORDER BY key: a number with a numeric offset, a DATE with whole days or an INTERVAL, a
  TIMESTAMP with an INTERVAL.  With ASC ``n PRECEDING`` starts the frame at the partition's
  first row whose key is >= key - n (``n FOLLOWING`` ends it after the last key <= key + n;
  DESC flips the direction), found by a binary search per row among the partition's non-NULL
  keys (``kernels.window.range_bounds``); NaN sorts above every number, as DuckDB has it.
  A row whose key is NULL has its NULL peers as the offset bound.  The arithmetic is
  DuckDB's: an integer offset is added in the key's type and an overflow is an error, a
  fractional one compares exactly; a bound on the wrong side of its row (a negative offset,
  inf - inf) is an error, row by row as in DuckDB (so not over no rows);
* an aggregate whose frame is the whole partition is the grouped aggregate of the partition
  (any aggregate the engine has); over a moving frame count/sum/avg read running sums
  (compensated for floats) and min/max a monotonic queue (``kernels/window.py``), which
  relies on frames only moving forward, as they do with constant offsets (ROWS, RANGE and
  GROUPS alike); ROWS offsets read per row make frames jump about, and min/max then read a
  sparse table (``engine.frame_minimum``).  array_agg and string_agg copy each frame's
  values out, in window order (``engine.window_lists``);
* a GROUPS frame counts peer groups: ``1 PRECEDING`` starts at the previous peer group;
* EXCLUDE CURRENT ROW / GROUP / TIES leaves rows out of a frame (``engine.frame_exclusion``):
  what is left is up to three segments, each moving forward as the frame does, read one
  after another by the moving-frame aggregates and first_value / last_value / nth_value;
* an aggregate with ``FILTER (WHERE c)`` has the frame it has without (the rows c rejects
  still count as rows of ROWS / GROUPS offsets) and aggregates those of its rows where c is
  true: over the whole partition only those rows are grouped; over a moving frame count(*)
  counts them, array_agg and string_agg leave the rejected rows out and the other aggregates
  read them as NULLs.  As in DuckDB, FILTER on ranking and navigation functions is an error.
* ``ORDER BY`` in an aggregate's arguments (``list(x ORDER BY y) OVER (...)``) orders the
  rows of a whole-partition aggregate instead of the window order; the order-blind
  aggregates ignore it over any frame.  In a navigation function's arguments
  (``first_value(x ORDER BY y)``, ``lead(x ORDER BY y)``) it orders each frame's rows
  (``engine.window_argument_order``), in a ranking function's it ranks the row among its
  frame's rows (``engine.window_ranks``).

The frame clause is checked (DuckDB's parser and binder errors) for every function, those that
ignore the frame too.  Not supported (``UnsupportedSql``): lead / lag and the ranking
functions with an ORDER BY of their own that begins the window's over a frame that leaves
out the current row, and RANGE offsets over DECIMAL, TIME or INTERVAL keys, or written as
strings.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from ..errors import SqlError, UnsupportedSql
from ..kernels import window as kernels
from ..planner.column_names import written_call
from . import datetime_ops as dto
from . import decimal_values, window_argument_order, window_lists
from . import frame_exclusion as fx
from .frame_minimum import NO_KEY, SparseMinimum
from .dense_ranks import dense_ranks
from .frame import broadcast, null_padded
from .interval_compare import frame_ranks
from .functions_text import text_of
from .aggregate_step import FUNCTIONS_BY_NAME, PAIRED, group_value
from .grouping import Groups, exact_integers, group_ids
from .holistic import Fractions
from .hash_table import float64_values, int64_values
from .histogram import check_arguments
from .sort_step import sort_columns
from .string_agg import DEFAULT_SEPARATOR, TOO_MANY, scalar_separator
from .value_types import cast_value, has_cast, kind, plain
from .window_ranks import ntile_buckets, ordered_rank

_MOVING = ("count_star", "count", "sum", "avg", "min", "max")
_NAVIGATION = ("lag", "lead", "first_value", "last_value", "nth_value")
# the moving-frame aggregates whose value depends on the order of their rows
_ORDERED_BY_ARGUMENTS = ("array_agg", "string_agg")
_DISTINCT_MOVING = ("count", "sum", "avg", "array_agg", "string_agg")
# DuckDB reads first / last over a window as first_value / last_value
_AS_WINDOW_FUNCTION = {"first": "first_value", "last": "last_value"}
_INT64_LIMIT = 2**63 - 1
# (id of a step's input table, PARTITION BY, ORDER BY) -> (weak ref to the table, its Layout)
_LAYOUTS: dict[tuple, tuple] = {}


def window_value(ev, node: exp.Window) -> pa.Array:
    """The value of the window call ``node`` for every row of ``ev.table``."""
    call = node.this
    ignore_nulls = isinstance(call, exp.IgnoreNulls)
    if ignore_nulls:
        call = call.this
    condition = None
    if isinstance(call, exp.Filter):  # planner.windows: FILTER (WHERE <_wc column>)
        call, condition = call.this, call.expression.this
    layout = Layout.shared(ev, node)
    window = _Window(ev, node, call, layout, ignore_nulls, condition)
    name = window.name
    window.check_frame()
    if condition is not None:
        window.check_filtered()
    ranking = _RANKING.get(name)
    if ranking is not None and len(window.args) != (name == "ntile"):
        takes = "one argument" if name == "ntile" else "no arguments"
        raise window.error(f"No function matches the given name and argument types: "
                           f"{window.shown}() takes {takes}")
    if ranking is not None and window.argument_order:
        return ordered_rank(window, name)
    if ranking is not None:
        ranks = ranking(window)
        return window.in_row_order(ranks if isinstance(ranks, pa.Array) else pa.array(ranks))
    if name in ("lag", "lead"):
        if window.argument_order:
            return window_argument_order.shifted(window, -1 if name == "lag" else 1)
        return window.shifted(-1 if name == "lag" else 1)
    if name in ("first_value", "last_value", "nth_value"):
        if window.argument_order:
            return window_argument_order.frame_value(window, name)
        return window.frame_value(name)
    func = FUNCTIONS_BY_NAME.get(name)
    if func == "count" and window.args and isinstance(window.args[0], exp.Star):
        func = "count_star"
    if func == "histogram":
        check_arguments(len(window.args))
    if func is not None:
        return window.aggregate(func)
    raise UnsupportedSql(f"{window.shown}() is not a window function tdbsql supports")


@dataclass(frozen=True)
class Layout:
    """The rows in window order: ``order[p]`` is the row at window position ``p``; per position
    the bounds of its partition and of its peer group (``end`` exclusive)."""

    order: np.ndarray
    partitions: Groups  # partition id of every row (input order)
    part_start: np.ndarray
    part_end: np.ndarray
    peer_start: np.ndarray
    peer_end: np.ndarray
    peer_new: np.ndarray  # position starts a peer group
    sort_values: list  # the ORDER BY keys' values (input order)
    inverse: np.ndarray  # window position of every row: order[inverse[row]] == row

    @classmethod
    def shared(cls, ev, node: exp.Window) -> Layout:
        """The layout of ``node``'s window over ``ev.table``, computed once for all the calls of
        one step that share PARTITION BY and ORDER BY (``rank() OVER w, sum(x) OVER w``): the
        step evaluates its calls one after another over the same table."""
        key = (id(ev.table), tuple(p.sql() for p in node.args.get("partition_by") or []),
               (node.args.get("order") or exp.Order()).sql())
        cached = _LAYOUTS.get(key)
        if cached is not None and cached[0]() is ev.table:
            return cached[1]
        layout = cls.of(ev, node)
        # the entry lives as long as the table: freed with the step's input
        _LAYOUTS[key] = (weakref.ref(ev.table, lambda _, key=key: _LAYOUTS.pop(key, None)),
                         layout)
        return layout

    @classmethod
    def of(cls, ev, node: exp.Window) -> Layout:
        n = ev.table.num_rows
        keys = [plain(broadcast(ev.value(p), n)) for p in node.args.get("partition_by") or []]
        partitions = group_ids(keys) if keys else Groups.single(n)
        ordered = (node.args.get("order") or exp.Order()).expressions
        sort_values = [plain(broadcast(ev.value(o.this), n)) for o in ordered]
        if sort_values:
            columns = {"p": pa.array(partitions.ids)}
            sort_keys = [("p", "ascending", "at_end")]
            for i, (o, values) in enumerate(zip(ordered, sort_values)):
                key_columns, key_sorts = sort_columns(f"k{i}", values, bool(o.args.get("desc")),
                                                      bool(o.args.get("nulls_first")))
                columns.update(key_columns)
                sort_keys += key_sorts
            order = pc.sort_indices(pa.table(columns), sort_keys=sort_keys).to_numpy()
        else:
            order = partitions.row_order()[0]
        order = order.astype(np.int64, copy=False)
        part_new = _starts(partitions.ids[order])
        if sort_values:  # peers: equal partition id and ORDER BY keys (keys hashed once)
            peers = group_ids([pa.array(partitions.ids)] + sort_values)
            peer_new = _starts(peers.ids[order]) | part_new
        else:
            peer_new = part_new
        part_start, part_end = _runs(part_new)
        peer_start, peer_end = _runs(peer_new)
        inverse = np.empty(n, np.int64)
        inverse[order] = np.arange(n, dtype=np.int64)
        return cls(order, partitions, part_start, part_end, peer_start, peer_end, peer_new,
                   sort_values, inverse)


class _Window:
    def __init__(self, ev, node: exp.Window, call: exp.Expression, layout: Layout,
                 ignore_nulls: bool, condition: exp.Expression | None = None):
        self.ev, self.node, self.layout = ev, node, layout
        self.args = list(call.expressions)
        name = call.name.lower()
        self.name = _AS_WINDOW_FUNCTION.get(name, name)
        written = written_call(call)  # planner.windows notes the name the SQL used
        self.shown = name if written is None else written[0].lower()  # for messages
        self.argument_order = ()  # the keys of ``f(x ORDER BY y)`` (``f(x, n ORDER BY y)``)
        ordered = [i for i, arg in enumerate(self.args) if isinstance(arg, exp.Order)]
        if ordered:  # on the last argument, or the first (string_agg's, as sqlglot reads it)
            self.argument_order = tuple(self.args[ordered[0]].expressions)
            self.args[ordered[0]] = self.args[ordered[0]].this
            if self.args[ordered[0]] is None:  # rank(ORDER BY y): no argument
                del self.args[ordered[0]]
        self.ignore_nulls = ignore_nulls
        self.condition = condition  # FILTER (WHERE ...), None without
        self.n = len(layout.order)
        self.position = np.arange(self.n, dtype=np.int64)
        self._range_key: _RangeKey | None = None
        self._moved: np.ndarray | None = None  # by_argument_order's positions
        self._keys: list[pa.Array] | None = None  # argument_keys' values

    # -- helpers -------------------------------------------------------------------------------

    def in_row_order(self, sorted_values: pa.Array) -> pa.Array:
        """Values by window position -> values by input row."""
        return sorted_values.take(pa.array(self.layout.inverse))

    def rows_at(self, positions: np.ndarray, found: np.ndarray) -> pa.Array:
        """Take indices (input rows, by input row) for the window ``positions`` of every row,
        null where not ``found``."""
        rows = np.where(found, self.layout.order[np.where(found, positions, 0)], -1)
        return null_padded(rows[self.layout.inverse])

    def argument(self, index: int) -> pa.Array:
        if index >= len(self.args):
            raise self.error(f"{self.shown}() needs {index + 1} argument(s)")
        return plain(broadcast(self.ev.value(self.args[index]), self.n))

    def integers(self, index: int, default: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """An integer argument (an offset, a bucket count, nth_value's n: a constant or a
        column, as in DuckDB) by window position, 0 where NULL, and where it is not NULL;
        ``default`` where the argument is not given (None: it must be)."""
        if index >= len(self.args) and default is not None:
            return np.full(self.n, default, np.int64), np.ones(self.n, bool)
        value = self.argument(index)
        if not pa.types.is_integer(value.type) and not pa.types.is_null(value.type):
            raise self.error(f"argument {index + 1} of {self.shown}() must be an integer, not "
                             f"{value.type}")
        order = self.layout.order
        numbers = pc.fill_null(value.cast(pa.int64()), 0).to_numpy(zero_copy_only=False)
        return np.asarray(numbers, np.int64)[order], _valid(value)[order]

    def nth(self) -> np.ndarray:
        """nth_value's position in the frame, per window position; 0 -- nothing found --
        where it is NULL or under 1."""
        return np.clip(self.integers(1)[0], 0, 2**62)

    def error(self, message: str) -> SqlError:
        return self.ev.error(message, self.node)

    def check_filtered(self) -> None:
        """DuckDB's error for FILTER on a function that is no aggregate in a window."""
        if self.name in _RANKING or self.name in _NAVIGATION:
            raise self.error(f'FILTER is not implemented for the window function "{self.name}"')

    def kept(self) -> np.ndarray | None:
        """By window position, whether the FILTER condition holds (NULL: no); None without
        a FILTER."""
        if self.condition is None:
            return None
        value = broadcast(self.ev.condition(self.condition, "FILTER's condition"), self.n)
        mask = pc.fill_null(value, False).to_numpy(zero_copy_only=False).astype(bool)
        return mask[self.layout.order]

    # -- lag / lead ----------------------------------------------------------------------------

    def shifted(self, direction: int, bounds: tuple | None = None) -> pa.Array:
        """lag (``direction`` -1) / lead (1) within each row's partition, or within the
        ``(start, end)`` window positions given (a frame holding the row)."""
        values = self.argument(0)
        shift, known = self.integers(1, default=1)  # an offset per row; NULL: a NULL answer
        shift = np.clip(shift, -2**62, 2**62) * direction
        layout = self.layout
        low, high = (layout.part_start, layout.part_end) if bounds is None else bounds
        target = self.position + shift
        found = known & (target >= low) & (target < high)
        if self.ignore_nulls:  # count only the rows whose value is not NULL
            before, valid_positions = _valid_counts(values, layout.order)
            # back: the |shift|-th valid row before this one; ahead: the shift-th after it
            k = np.where(shift < 0, before[self.position] + shift,
                         before[self.position + 1] + shift - 1)
            within = np.where(shift < 0, k >= before[low], k < before[high])
            moved = valid_positions[np.where(within, k, 0)] if len(valid_positions) else k
            target = np.where(shift == 0, target, moved)  # offset 0: the row itself
            found = np.where(shift == 0, found, known & within)
        shifted = values.take(self.rows_at(target, found))
        if len(self.args) < 3:
            return shifted
        return self.defaulted(shifted, known & ~found)  # a NULL offset: NULL, not the default

    def shares_order(self) -> bool:
        """Does the call's own ORDER BY begin the window's (same keys, same directions)?"""
        window = (self.node.args.get("order") or exp.Order()).expressions
        return len(self.argument_order) <= len(window) and all(
            _ordering(a) == _ordering(b) for a, b in zip(self.argument_order, window))

    def defaulted(self, shifted: pa.Array, missing: np.ndarray) -> pa.Array:
        """lag / lead's default (its third argument) where ``missing`` (by window
        position)."""
        layout = self.layout
        default = self.ev.value(self.args[2])
        if isinstance(default, pa.Scalar) and not default.is_valid:
            return shifted
        default = broadcast(default, self.n)
        try:
            if not has_cast(default.type, shifted.type):  # 0 for a DATE: no such cast
                raise ValueError(default.type)
            default = cast_value(default, shifted.type)
        except (ValueError, pa.ArrowNotImplementedError):  # ArrowInvalid is a ValueError
            raise self.error(f"the default of {self.shown}() does not match its value's type "
                             f"{shifted.type}") from None
        return pc.if_else(pa.array(missing[layout.inverse]), default, shifted)

    # -- first_value / last_value / nth_value --------------------------------------------------

    def frame_value(self, name: str) -> pa.Array:
        values = self.argument(0)
        segments = self.segments()
        if self.ignore_nulls:  # count the rows whose value is not NULL
            before, counted = _valid_counts(values, self.layout.order)
        else:
            before, counted = np.arange(self.n + 1), self.position
        if name == "last_value":
            k, found = fx.last_in_frame(before, segments)
        else:
            nth = self.nth() if name == "nth_value" else np.ones(self.n, np.int64)
            k, found = fx.nth_in_frame(before, segments, nth)
        position = counted[np.where(found, k, 0)] if len(counted) else k
        return values.take(self.rows_at(position, found))

    # -- aggregates ----------------------------------------------------------------------------

    def aggregate(self, func: str) -> pa.Array:
        distinct = bool(self.args) and isinstance(self.args[0], exp.Distinct)
        if distinct:
            self.args[0] = self.args[0].expressions[0]
        values = None if func == "count_star" else self.argument(0)
        separator = self.separator() if func == "string_agg" else None
        other = self.argument(1) if func in PAIRED else None
        fractions = Fractions.of(func, self._fraction_node(), self.ev.value) \
            if func in ("quantile_cont", "quantile_disc") else None
        kept = self.kept()
        segments = self.segments()
        layout = self.layout
        if fx.is_whole(segments, layout.part_start, layout.part_end):
            # the partition's rows in window order, or the call's own (``ORDER BY`` in its
            # arguments): first / any_value / array_agg follow it
            order = layout.order
            if self.argument_order:
                moved = self.by_argument_order()
                order, kept = order[moved], None if kept is None else kept[moved]
            rows = order if kept is None else order[kept]
            positions = pa.array(rows)
            groups = layout.partitions.subset(rows)
            taken = None if values is None else values.take(positions)
            per_partition = group_value(
                func, taken, groups, distinct, separator,
                other=None if other is None else other.take(positions), fractions=fractions,
                budget=self.ev.budget)
            return per_partition.take(pa.array(layout.partitions.ids))
        if distinct and func in _DISTINCT_MOVING:
            return self.distinct_frames(func, values, kept, separator, segments)
        if func in ("array_agg", "string_agg"):
            return self.frame_values(func, values, kept, separator, segments)
        if func not in _MOVING or (distinct and func not in ("min", "max")):
            return self.grouped_frames(func, values, kept, segments, distinct, other, fractions)
        if func == "count_star":
            counted = fx.segment_sums(np.ones(self.n, np.int64) if kept is None else
                                      kept.astype(np.int64), segments)
            return self.in_row_order(pa.array(counted))
        if kept is not None:  # the rows FILTER rejects count as NULLs
            values = pc.if_else(pa.array(kept[layout.inverse]), values,
                                pa.scalar(None, values.type))
        if func in ("min", "max", "sum", "avg") and pa.types.is_null(values.type):
            # max(NULL) OVER (...): DuckDB's types (NULL, HUGEINT, DOUBLE)
            return pa.nulls(self.n, {"avg": pa.float64(), "sum": pa.int64()}.get(func, pa.null()))
        if func in ("min", "max"):
            return values.take(self.rows_at(*_extremes(
                values, layout.order, segments, func == "max", self.ev.budget,
                f"the window function {self.shown}()")))
        valid = _valid(values)[layout.order]
        counts = fx.segment_sums(valid.astype(np.int64), segments)
        if func == "count":
            return self.in_row_order(pa.array(counts))
        sums = self.sums(values, valid, segments, func)
        if func == "avg":
            sums = pc.divide(cast_value(sums, pa.float64()), pa.array(counts, pa.float64()))
        return self.in_row_order(pc.if_else(pa.array(counts > 0), sums, pa.scalar(None, sums.type)))

    def argument_places(self) -> np.ndarray | None:
        """By window position, each row's place in the call's own ORDER BY (equal keys in
        window order); None without one."""
        if not self.argument_order:
            return None
        places = np.empty(self.n, np.int64)
        places[self.by_argument_order()] = np.arange(self.n)
        return places

    def by_argument_order(self) -> np.ndarray:
        """The window positions sorted (stably) by the ORDER BY in the call's arguments
        (sorted once a call)."""
        if self._moved is None:
            self._moved = self._sorted_by_argument_order()
        return self._moved

    def argument_keys(self) -> list[pa.Array]:
        """The values of the keys of the ORDER BY in the call's arguments, by input row
        (evaluated once a call)."""
        if self._keys is None:
            self._keys = [plain(broadcast(self.ev.value(key.this), self.n))
                          for key in self.argument_order]
        return self._keys

    def _sorted_by_argument_order(self) -> np.ndarray:
        columns, sort_keys = {}, []
        order = pa.array(self.layout.order)
        for i, (key, keys) in enumerate(zip(self.argument_order, self.argument_keys())):
            values = keys.take(order)
            key_columns, key_sorts = sort_columns(f"k{i}", values, bool(key.args.get("desc")),
                                                  bool(key.args.get("nulls_first")))
            columns.update(key_columns)
            sort_keys += key_sorts
        moved = pc.sort_indices(pa.table(columns), sort_keys=sort_keys)
        return moved.to_numpy().astype(np.int64, copy=False)

    def _fraction_node(self) -> exp.Expression:
        if len(self.args) < 2:
            raise self.error(f"{self.shown}() takes a value and a quantile")
        return self.args[1]

    def frame_values(self, func: str, values: pa.Array, kept: np.ndarray | None,
                     separator: str | None, segments: fx.Segments) -> pa.Array:
        """array_agg / string_agg over moving frames (``engine.window_lists``): each frame's
        rows that FILTER keeps -- for string_agg those whose value is not NULL -- in window
        order, or in the call's own (``ORDER BY`` in its arguments)."""
        if func == "string_agg" and separator is None:
            return pa.nulls(self.n, pa.string())
        counted = self.counted(kept, values if func == "string_agg" else None)
        rows, ranges, ranks = self.counted_frames(counted, segments)
        what = f"the window function {self.shown}()"
        if func == "array_agg":
            return window_lists.frame_lists(values, rows, ranges, self.ev.budget, what, ranks)
        texts = text_of(values.take(pa.array(rows)))
        return window_lists.frame_texts(texts, ranges, separator, self.ev.budget, what, ranks)

    def counted(self, kept: np.ndarray | None, values: pa.Array | None = None) -> np.ndarray:
        """By window position, the rows a moving-frame aggregate counts: those FILTER keeps,
        and (``values`` given) whose value is not NULL."""
        counted = np.ones(self.n, bool) if kept is None else kept
        return counted if values is None else counted & _valid(values)[self.layout.order]

    def counted_frames(self, counted: np.ndarray, segments: fx.Segments):
        """``(rows, ranges, ranks)``: the ``counted`` rows in window order; by input row, each
        row's frame as ``[first, last)`` ranges of positions in ``rows``; and the call's own
        ORDER BY (``f(x ORDER BY y)``) as a place per position in ``rows`` (None without)."""
        layout = self.layout
        before = np.concatenate([[0], np.cumsum(counted)])
        ranges = [(before[start][layout.inverse], before[end][layout.inverse])
                  for start, end in segments]
        places = self.argument_places()
        return layout.order[counted], ranges, None if places is None else places[counted]

    def grouped_frames(self, func: str, values: pa.Array, kept: np.ndarray | None,
                       segments: fx.Segments, distinct: bool, other: pa.Array | None,
                       fractions) -> pa.Array:
        """Every other aggregate over moving frames (median, the quantiles, mode, stddev,
        corr, bool_and, arg_max, ... DISTINCT too): each row's frame rows that FILTER keeps,
        in window order (or the call's own ORDER BY), are a group of their own, aggregated
        as GROUP BY aggregates (``group_value``).  A frame of k rows costs k: the frames are
        checked against the memory budget first (``window_lists``)."""
        rows, ranges, ranks = self.counted_frames(self.counted(kept), segments)
        taken, sizes = window_lists.frame_members(values, rows, ranges, self.ev.budget,
                                                  f"the window function {self.shown}()", ranks)
        starts = np.cumsum(sizes) - sizes
        groups = Groups(np.repeat(np.arange(self.n, dtype=np.int64), sizes), self.n,
                        np.where(sizes > 0, starts, -1))
        positions = pa.array(taken)
        return group_value(func, values.take(positions), groups, distinct,
                           other=None if other is None else other.take(positions),
                           fractions=fractions, budget=self.ev.budget)

    def distinct_frames(self, func: str, values: pa.Array, kept: np.ndarray | None,
                        separator: str | None, segments: fx.Segments) -> pa.Array:
        """count / sum / avg / array_agg / string_agg (DISTINCT ...) over moving frames: of
        each frame's rows that count (FILTER keeps; not NULL, but for array_agg, which keeps
        one NULL), the first of each value in window order (``window_lists.first_of_each``,
        values equal as GROUP BY finds them)."""
        if func == "string_agg" and separator is None:
            return pa.nulls(self.n, pa.string())
        rows, ranges, ranks = self.counted_frames(
            self.counted(kept, None if func == "array_agg" else values), segments)
        what = f"the window function {self.shown}()"
        taken, sizes = window_lists.first_of_each(values, group_ids([values]).ids, rows, ranges,
                                                  self.ev.budget, what, ranks)
        if func == "count":
            return pa.array(sizes)
        last = np.cumsum(sizes)
        ranges = [(last - sizes, last)]  # each position's distinct values, one run of ``taken``
        if func == "array_agg":
            return window_lists.frame_lists(values, taken, ranges, self.ev.budget, what)
        if func == "string_agg":
            return window_lists.frame_texts(text_of(values.take(pa.array(taken))), ranges,
                                            separator, self.ev.budget, what)
        totals = _frame_sums(values, np.asarray(taken, np.int64), np.ones(len(taken), bool),
                             ranges, func, self.error)
        if func == "avg":
            totals = pc.divide(cast_value(totals, pa.float64()), pa.array(sizes, pa.float64()))
        return pc.if_else(pa.array(sizes > 0), totals, pa.scalar(None, totals.type))

    def separator(self) -> str | None:
        """string_agg's separator: a constant VARCHAR (None: NULL), ',' when not given."""
        if len(self.args) > 2:
            raise self.error(TOO_MANY)
        if len(self.args) < 2:
            return DEFAULT_SEPARATOR
        return scalar_separator(self.ev.value(self.args[1]), self.error)

    def sums(self, values: pa.Array, valid: np.ndarray, segments: fx.Segments,
             func: str) -> pa.Array:
        """Frame sums of the rows in window order (``_frame_sums``)."""
        return _frame_sums(values, self.layout.order, valid, segments, func, self.error)

    # -- frames --------------------------------------------------------------------------------

    def check_frame(self) -> None:
        """The frame clause's checks (DuckDB's parser and binder), made for every window
        function, those that ignore the frame too."""
        spec = self.node.args.get("spec")
        if spec is None:
            return
        start, end = _Bound.pair(spec)
        if start.what == "unbounded" and start.side == "FOLLOWING":
            raise self.error("a frame cannot start at UNBOUNDED FOLLOWING")
        if end.what == "unbounded" and end.side == "PRECEDING":
            raise self.error("a frame cannot end at UNBOUNDED PRECEDING")
        if start.what == "current" and end.what == "offset" and end.side == "PRECEDING":
            raise self.error("a frame starting at the current row cannot end at a preceding row")
        if start.what == "offset" and start.side == "FOLLOWING" and (
                end.what == "current" or end.side == "PRECEDING"):
            raise self.error("a frame starting at a following row cannot end at the current "
                             "row or a preceding row")
        if _is_range(spec):
            for bound in (start, end):
                if bound.what == "offset":
                    self._range_offset(self.range_key(), bound)

    def segments(self) -> fx.Segments:
        """Every position's frame less the rows its EXCLUDE clause leaves out."""
        layout = self.layout
        return fx.frame_segments(*self.frame(), fx.exclusion(self.node.args.get("spec")),
                                 self.position, layout.peer_start, layout.peer_end)

    def frame(self) -> tuple[np.ndarray, np.ndarray]:
        """Every position's frame ``[start, end)`` of window positions."""
        layout = self.layout
        spec = self.node.args.get("spec")
        has_order = self.node.args.get("order") is not None
        if spec is None:
            if not has_order:
                return layout.part_start, layout.part_end
            return layout.part_start, layout.peer_end
        kind = str(spec.args.get("kind") or "ROWS").upper()
        first, last = _Bound.pair(spec)
        start = np.clip(self._bound(first, kind, True), layout.part_start, layout.part_end)
        end = np.clip(self._bound(last, kind, False), layout.part_start, layout.part_end)
        return start, np.maximum(end, start)

    def _bound(self, bound: _Bound, kind: str, is_start: bool) -> np.ndarray:
        """Where a ROWS / RANGE / GROUPS frame starts (``is_start``) or ends, exclusive, for
        every position (clipped to the partition by ``frame``)."""
        layout = self.layout
        if bound.what == "unbounded":
            return layout.part_start if bound.side == "PRECEDING" else layout.part_end
        if bound.what == "current":
            if kind == "ROWS":
                return self.position if is_start else self.position + 1
            return layout.peer_start if is_start else layout.peer_end
        if kind == "RANGE":
            return self._range_bound(bound, is_start)
        offset = self.ev.value(bound.value)
        if kind == "ROWS" and not isinstance(offset, pa.Scalar):  # an offset per row
            return self.position + self._row_offsets(bound, offset) + (0 if is_start else 1)
        if not isinstance(offset, pa.Scalar) or not pa.types.is_integer(offset.type) or \
                not offset.is_valid or offset.as_py() < 0:
            raise self.error(f"a {kind} frame offset must be a non-negative integer constant")
        shift = offset.as_py() * (-1 if bound.side == "PRECEDING" else 1)
        if kind == "ROWS":
            return self.position + shift + (0 if is_start else 1)
        return self._groups_bound(shift, is_start)

    def _row_offsets(self, bound: _Bound, offset: pa.Array) -> np.ndarray:
        """A ROWS bound's offsets read per row (by window position, negative PRECEDING),
        with DuckDB's errors for a NULL or negative one."""
        if not pa.types.is_integer(offset.type):
            raise self.error(f"a ROWS frame offset must be an integer, not {offset.type}")
        what = f"Window ROWS {bound.side} expression"
        if offset.null_count:
            raise self.error(f"{what} cannot be NULL")
        offsets = np.asarray(offset.cast(pa.int64()).to_numpy(), np.int64)[self.layout.order]
        if (offsets < 0).any():
            raise self.error(f"{what} cannot be negative")
        offsets = np.minimum(offsets, self.n)  # past the partition either way
        return -offsets if bound.side == "PRECEDING" else offsets

    def _groups_bound(self, shift: int, is_start: bool) -> np.ndarray:
        """GROUPS ``n PRECEDING / FOLLOWING``: the first (one past the last) row of the peer
        group ``shift`` groups from the row's own; past the partition's groups, its edge."""
        layout = self.layout
        group = np.cumsum(layout.peer_new) - 1  # peer group of every position
        firsts = np.flatnonzero(layout.peer_new)
        ends = np.append(firsts[1:], self.n)
        target = group + shift
        lowest, highest = group[layout.part_start], group[layout.part_end - 1]
        inside = np.clip(target, lowest, highest)
        bound = (firsts if is_start else ends)[inside]
        return np.where(target < lowest, layout.part_start,
                        np.where(target > highest, layout.part_end, bound))

    # -- RANGE frames with an offset -----------------------------------------------------------

    def range_key(self) -> _RangeKey:
        """The one ORDER BY key a RANGE frame with an offset measures, in window order."""
        if self._range_key is not None:
            return self._range_key
        ordered = (self.node.args.get("order") or exp.Order()).expressions
        if len(ordered) != 1:
            raise self.error("a RANGE frame with an offset needs exactly one ORDER BY key "
                             f"(not {len(ordered)})")
        values = self.layout.sort_values[0]
        key_kind = kind(values.type)
        if pa.types.is_decimal(values.type) or key_kind in ("time", "duration"):
            raise UnsupportedSql(f"a RANGE frame with an offset over a {values.type} ORDER BY key "
                                 "is not supported (numbers, dates and timestamps are)")
        if key_kind not in _RANGE_KEY_KINDS:
            raise self.error(f"a RANGE frame with an offset needs a number, date or timestamp "
                             f"ORDER BY key, not {values.type}")
        layout = self.layout
        values = values.take(pa.array(layout.order))
        valid = _valid(values)
        nulls = np.concatenate([[0], np.cumsum(~valid)])
        part_nulls = nulls[layout.part_end] - nulls[layout.part_start]
        if ordered[0].args.get("nulls_first"):
            lo, hi = layout.part_start + part_nulls, layout.part_end
        else:
            lo, hi = layout.part_start, layout.part_end - part_nulls
        self._range_key = _RangeKey(values, key_kind, valid, bool(ordered[0].args.get("desc")),
                                    np.ascontiguousarray(lo), np.ascontiguousarray(hi))
        return self._range_key

    def _range_offset(self, key: _RangeKey, bound: _Bound):
        """A RANGE bound's offset: a Python number, or a ``datetime_ops.Interval``."""
        value = self.ev(bound.value)
        if isinstance(value, dto.Interval):
            if key.kind in ("int", "uint", "float"):
                raise self.error(f"RANGE {_sql(bound)}: an INTERVAL offset needs a date or "
                                 f"timestamp ORDER BY key, not {key.values.type}")
            return value
        if not isinstance(value, pa.Scalar):
            raise UnsupportedSql(f"a RANGE frame offset must be a constant: {_sql(bound)}")
        if not value.is_valid:
            raise self.error(f"RANGE {_sql(bound)}: a frame offset cannot be NULL")
        offset_kind = kind(value.type)
        if offset_kind == "decimal":  # a decimal literal offset (2.5): its DOUBLE
            value, offset_kind = cast_value(value, pa.float64()), "float"
        if offset_kind == "string":
            raise UnsupportedSql(f"RANGE {_sql(bound)}: write the frame offset as a number or "
                                 "an INTERVAL, not a string")
        if offset_kind not in ("int", "uint", "float"):
            raise self.error(f"RANGE {_sql(bound)}: a frame offset must be a number or an "
                             f"INTERVAL, not {value.type}")
        if key.kind == "timestamp":
            raise self.error(f"RANGE {_sql(bound)}: a timestamp ORDER BY key needs an "
                             "INTERVAL offset")
        if key.kind == "date" and offset_kind == "float":
            raise self.error(f"RANGE {_sql(bound)}: a date ORDER BY key needs a whole number "
                             "of days or an INTERVAL as offset")
        return value.as_py()

    def _range_bound(self, bound: _Bound, is_start: bool) -> np.ndarray:
        """Where a RANGE ``offset PRECEDING/FOLLOWING`` frame starts (ends) for every position:
        the first row of the partition's non-NULL keys whose key is not before (is after) the
        current key -/+ offset, by binary search; a row whose key is NULL has its NULL peers."""
        key = self.range_key()
        offset = self._range_offset(key, bound)
        peers = self.layout.peer_start if is_start else self.layout.peer_end
        if not key.valid.any():
            return peers
        up = (bound.side == "FOLLOWING") != key.descending  # the bound is key + offset
        keys, targets, below, above = self._range_targets(key, offset, bound, up, is_start)
        found = np.empty(self.n, np.int64)
        kernels.range_bounds(np.ascontiguousarray(keys), np.ascontiguousarray(targets),
                             key.lo, key.hi, key.descending, not is_start, found)
        if below is not None:  # targets past every key the key's type can hold
            first, past = (key.hi, key.lo) if key.descending else (key.lo, key.hi)
            found = np.where(below, first, np.where(above, past, found))
        return np.where(key.valid, found, peers)

    def _range_targets(self, key: _RangeKey, offset, bound: _Bound, up: bool, is_start: bool):
        """``(keys, targets, below, above)``: the keys to search and every row's key +/- offset
        as numbers of one dtype; ``below`` / ``above`` (or None) mark targets beyond the keys'
        dtype.  DuckDB's arithmetic: an integer offset is computed in the key's type (an
        overflow is an error), a fractional one exactly (DECIMAL: no overflow); floats in the
        key's float type; a date with whole days, dates and timestamps with an INTERVAL as
        timestamps."""
        sign = 1 if up else -1
        valid = key.valid
        if key.kind == "float":
            dtype = np.float32 if pa.types.is_float32(key.values.type) else np.float64
            keys = _filled(key.values, 0).astype(dtype)
            with np.errstate(invalid="ignore", over="ignore"):
                targets = keys + dtype(sign) * dtype(offset)
            self._check_side(bound, key, keys, targets, up)
            return keys.astype(np.float64), targets.astype(np.float64), None, None
        if isinstance(offset, dto.Interval):
            unit = "ns" if key.kind == "timestamp" and key.values.type.unit == "ns" else "us"
            tz = key.values.type.tz if key.kind == "timestamp" else None
            stamps = pc.cast(key.values, pa.timestamp(unit, tz))
            try:
                moved = dto.add_interval(stamps, offset if up else -offset)
            except (pa.ArrowInvalid, dto.DatetimeError, OverflowError) as err:
                raise self.error(f"RANGE {_sql(bound)}: the frame bound is out of the "
                                 f"timestamp range ({err})") from None
            keys = _filled(pc.cast(stamps, pa.int64()), 0)
            targets = _filled(pc.cast(moved, pa.int64()), 0)
            self._check_side(bound, key, keys, targets, up)
            return keys, targets, None, None
        if key.kind == "date":  # + whole days: a date
            keys = _filled(pc.cast(key.values, pa.int32()), 0).astype(np.int64)
            targets, low, high = _shifted(keys, sign * offset, -2**31, 2**31 - 1)
            if ((low | high) & valid).any():
                raise self.error(f"RANGE {_sql(bound)}: the frame bound is out of the date "
                                 "range")
            self._check_negative(bound, offset)
            return keys, targets, None, None
        keys = _filled(key.values, 0)
        keys = keys.astype(np.uint64 if keys.dtype == np.uint64 else np.int64)
        if isinstance(offset, int):
            low, high, arithmetic = _arithmetic_range(key.values.type, offset)
            targets, under, over = _shifted(keys, sign * offset, low, high)
            wrong = (under | over) & valid
            if wrong.any():
                value = keys[np.argmax(wrong)]
                raise self.error(f"RANGE {_sql(bound)}: {value} {'+' if up else '-'} {offset} "
                                 f"is out of the range of {arithmetic}")
            self._check_negative(bound, offset)
            return keys, targets, None, None
        self._check_negative(bound, offset)
        exact = sign * offset
        info = np.iinfo(keys.dtype)
        if math.isinf(exact) or abs(exact) >= 2.0**64:
            everything, nothing = np.ones(self.n, bool), np.zeros(self.n, bool)
            return keys, keys, (nothing if up else everything), (everything if up else nothing)
        # integer keys compare with a fraction as with its ceiling or floor
        delta = math.ceil(exact) if is_start != key.descending else math.floor(exact)
        targets, below, above = _shifted(keys, delta, int(info.min), int(info.max))
        return keys, targets, below, above

    def _check_negative(self, bound: _Bound, offset) -> None:
        """Integer keys: a negative offset puts every bound on the wrong side (DuckDB checks
        row by row, so only when some key is not NULL, which the caller made sure of)."""
        if math.isnan(offset) or offset < 0:
            raise self.error(f"invalid RANGE {bound.side} value {_sql(bound)}: a frame offset "
                             "must be zero or more")

    def _check_side(self, bound: _Bound, key: _RangeKey, keys, targets, up: bool) -> None:
        """DuckDB's check, row by row: ``key - offset PRECEDING`` must not lie after the key
        (in the window's order, NaN above every number), ``FOLLOWING`` not before it."""
        wrong = key.valid & (_sql_less(targets, keys) if up else _sql_less(keys, targets))
        if wrong.any():
            row = int(np.argmax(wrong))
            raise self.error(f"invalid RANGE {bound.side} value {_sql(bound)}: a frame offset "
                             f"must be zero or more, and the bound of the row with ORDER BY key "
                             f"{key.values[row].as_py()} lies on the wrong side of it")


# --- ranking, by window position -----------------------------------------------------------


def _row_number(w: _Window) -> np.ndarray:
    return w.position - w.layout.part_start + 1


def _rank(w: _Window) -> np.ndarray:
    return w.layout.peer_start - w.layout.part_start + 1


def _dense_rank(w: _Window) -> np.ndarray:
    groups = np.cumsum(w.layout.peer_new)
    return groups - groups[w.layout.part_start] + 1


def _percent_rank(w: _Window) -> np.ndarray:
    size = w.layout.part_end - w.layout.part_start
    return np.where(size > 1, (_rank(w) - 1) / np.maximum(size - 1, 1), 0.0)


def _cume_dist(w: _Window) -> np.ndarray:
    layout = w.layout
    return (layout.peer_end - layout.part_start) / (layout.part_end - layout.part_start)


def _ntile(w: _Window) -> pa.Array:
    """Buckets 1..n as equal as can be, the first ``size % n`` one row larger; ``n`` a
    constant or a column (each row its own count, as in DuckDB), NULL for a NULL count."""
    buckets, known = w.integers(0)
    layout = w.layout
    return ntile_buckets(w, buckets, known, w.position - layout.part_start,
                         layout.part_end - layout.part_start)


_RANKING = {"row_number": _row_number, "rank": _rank, "dense_rank": _dense_rank,
            "percent_rank": _percent_rank, "cume_dist": _cume_dist, "ntile": _ntile}


# --- frame bounds ----------------------------------------------------------------------------

_RANGE_KEY_KINDS = ("null", "int", "uint", "float", "date", "timestamp")


@dataclass(frozen=True)
class _Bound:
    """One end of a frame clause: UNBOUNDED or an offset (``what`` "unbounded" / "offset") with
    ``side`` PRECEDING or FOLLOWING, or CURRENT ROW ("current")."""

    what: str
    side: str = ""
    value: exp.Expression | None = None

    @classmethod
    def of(cls, value, side) -> _Bound:
        if isinstance(value, str):
            if value.upper() == "UNBOUNDED":
                return cls("unbounded", str(side or "").upper())
            if value.upper() == "CURRENT ROW":
                return cls("current")
        return cls("offset", str(side or "").upper(), value)

    @classmethod
    def pair(cls, spec: exp.WindowSpec) -> tuple[_Bound, _Bound]:
        end = spec.args.get("end")
        return (cls.of(spec.args.get("start"), spec.args.get("start_side")),
                cls.of(end if end is not None else "CURRENT ROW", spec.args.get("end_side")))


@dataclass(frozen=True)
class _RangeKey:
    """The ORDER BY key of a RANGE frame with an offset, in window order; ``lo``/``hi`` bound
    every position's partition rows whose key is not NULL (the NULLs sort at one end)."""

    values: pa.Array
    kind: str
    valid: np.ndarray
    descending: bool
    lo: np.ndarray
    hi: np.ndarray


def _is_range(spec: exp.WindowSpec) -> bool:
    return str(spec.args.get("kind") or "").upper() == "RANGE"


def _sql(bound: _Bound) -> str:
    return f"{bound.value.sql(dialect='duckdb')} {bound.side}"


def _filled(values, fill) -> np.ndarray:
    """An Arrow array as numpy, NULLs replaced by ``fill``."""
    if values.null_count:
        values = pc.fill_null(values, fill)
    return values.to_numpy(zero_copy_only=False)


def _sql_less(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a < b`` with NaN above every number and equal to NaN."""
    if a.dtype.kind != "f":
        return a < b
    return ~np.isnan(a) & (np.isnan(b) | (a < b))


def _arithmetic_range(key_type: pa.DataType, offset: int) -> tuple[int, int, pa.DataType]:
    """The type DuckDB computes ``key +/- offset`` in (an integer literal offset): the key's
    type if the offset fits it, else INTEGER (for narrower keys) or BIGINT."""
    wider = [pa.int32(), pa.int64()] if key_type.bit_width < 32 else [pa.int64()]
    for candidate in [key_type] + wider:
        info = np.iinfo(candidate.to_pandas_dtype())
        if info.min <= offset <= info.max:
            return int(info.min), int(info.max), candidate
    return -2**63, 2**63 - 1, pa.int64()


def _shifted(keys: np.ndarray, delta: int, low: int, high: int):
    """``(keys + delta, under, over)`` for int64 or uint64 ``keys`` and any Python int
    ``delta``: the sums (exact where they fit the dtype) and where they fall below ``low`` /
    above ``high``."""
    info = np.iinfo(keys.dtype)
    under = _compared(keys, low - delta, np.less, info)
    over = _compared(keys, high - delta, np.greater, info)
    with np.errstate(over="ignore"):
        sums = (keys.view(np.uint64) + np.uint64(delta % 2**64)).view(keys.dtype)
    return sums, under, over


def _compared(keys: np.ndarray, threshold: int, op, info) -> np.ndarray:
    """``op(keys, threshold)`` for a threshold that may lie outside the keys' dtype."""
    if threshold < info.min or threshold > info.max:  # the same answer for every key
        return np.full(len(keys), bool(op(int(info.min), threshold)))
    return op(keys, keys.dtype.type(threshold))


# --- helpers ---------------------------------------------------------------------------------


def _valid_counts(values: pa.Array, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For IGNORE NULLS: the number of non-NULL values before each window position (n + 1
    entries) and the positions holding one."""
    valid = _valid(values)[order]
    return np.concatenate([[0], np.cumsum(valid)]), np.flatnonzero(valid)


def _ordering(key: exp.Ordered) -> tuple:
    """An ORDER BY key as its expression and directions, to compare keys."""
    return key.this.sql(), bool(key.args.get("desc")), bool(key.args.get("nulls_first"))


def _starts(ids: np.ndarray) -> np.ndarray:
    """True where a run of equal ``ids`` begins."""
    starts = np.ones(len(ids), bool)
    starts[1:] = ids[1:] != ids[:-1]
    return starts


def _runs(starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per position, the first position of its run and one past its last."""
    first = np.flatnonzero(starts)
    run = np.cumsum(starts) - 1
    ends = np.append(first[1:], len(starts)).astype(np.int64)
    return first[run].astype(np.int64), ends[run]


def _valid(values: pa.Array) -> np.ndarray:
    if values.null_count == 0:
        return np.ones(len(values), bool)
    return values.is_valid().to_numpy(zero_copy_only=False)


def _frame_sums(values: pa.Array, order: np.ndarray, valid: np.ndarray,
                segments: fx.Segments, func: str, error) -> pa.Array:
    """Per position the sum over its frame's ``segments`` of ``values`` taken in ``order``
    (``valid``: per taken value whether it counts): integers (booleans, unsigned) exactly --
    int64 running sums when no partial sum can overflow, Python ints otherwise -- DECIMALs
    exactly, floats compensated.  ``error(message)``: the error to raise for other types."""
    value_kind = kind(values.type)
    if value_kind in ("int", "uint", "bool") and not (func == "avg" and value_kind == "bool"):
        ints = int64_values(values, copy=False)[order]
        ints[~valid] = 0
        peak = max(-int(ints.min(initial=0)), int(ints.max(initial=0)))
        if not pa.types.is_uint64(values.type) and peak * max(len(ints), 1) <= _INT64_LIMIT:
            return pa.array(fx.segment_sums(ints, segments))
        exact = ints.view(np.uint64) if pa.types.is_uint64(values.type) else ints
        return exact_integers(fx.segment_sums(exact.astype(object), segments).tolist())
    if value_kind == "decimal":  # exact, DECIMAL(38, s) as DuckDB's sum
        units = decimal_values.units_of(values)[order]
        units[~valid] = 0
        if units.dtype != object and int(np.abs(units).max(initial=0)) * len(units) >= 2**62:
            units = units.astype(object)  # running sums past int64: Python ints
        total = pa.decimal128(38, values.type.scale)
        return pa.array([Decimal(f"{v}E-{total.scale}")  # exact past 28 digits
                         for v in fx.segment_sums(units, segments).tolist()], total)
    if value_kind != "float":
        raise error(f"{func}() needs numbers, not {values.type}")
    return pa.array(_float_frame_sums(float64_values(values, copy=False)[order], valid,
                                      segments))


def _float_frame_sums(values: np.ndarray, valid: np.ndarray, segments: fx.Segments) -> np.ndarray:
    """Frame sums of floats: finite values through compensated running sums, or a segment
    tree of compensated sums where those may have lost a frame's digits; inf/NaN counted
    apart so one of them does not poison every later frame."""
    finite = valid & np.isfinite(values)
    values = np.ascontiguousarray(values)
    segments = [(np.ascontiguousarray(start, np.int64), np.ascontiguousarray(end, np.int64))
                for start, end in segments]
    sums = _prefix_frame_sums(values, finite, segments)
    if sums is None:
        size = 1 << max(len(values) - 1, 0).bit_length()
        high, low = np.empty(2 * size), np.empty(2 * size)
        kernels.sum_tree(values, finite, high, low)
        sums = np.zeros(len(segments[0][0]))
        for start, end in segments:
            part = np.empty(len(start))
            kernels.tree_frame_sums(high, low, start, end, part)
            sums += part
    special = valid & ~finite
    if special.any():
        plus = fx.segment_sums((values == np.inf) & special, segments) > 0
        minus = fx.segment_sums((values == -np.inf) & special, segments) > 0
        nan = fx.segment_sums(np.isnan(values) & special, segments) > 0
        sums = np.where(plus, np.inf, sums)
        sums = np.where(minus, -np.inf, sums)
        sums = np.where(nan | (plus & minus), np.nan, sums)
    return sums


def _prefix_frame_sums(values, finite, segments: fx.Segments) -> np.ndarray | None:
    """Frame sums as differences of double-double running sums; None when some frame's may
    be off by more than 1e-13 of it: the low words add their roundings in plain doubles, so
    after a value far larger than a frame's (1e300 before 1.5 + 2.25) they lose its digits."""
    high, low = np.empty(len(values) + 1), np.empty(len(values) + 1)
    kernels.compensated_prefix(values, finite, high, low)
    largest_low = np.maximum.accumulate(np.abs(low))
    sums = np.zeros(len(segments[0][0]))  # one a position (as many as values, or fewer)
    drift = np.zeros(len(sums))
    for start, end in segments:
        sums += (high[end] - high[start]) + (low[end] - low[start])
        drift += np.where(end > start, largest_low[end] * end * np.finfo(np.float64).eps, 0.0)
    doubtful = (drift > 0) & (drift > 1e-13 * np.abs(sums))
    return None if doubtful.any() else sums


def _extremes(values: pa.Array, order: np.ndarray, segments: fx.Segments, largest: bool,
              budget, what: str):
    """(window position, found) of each frame's min / max, by value order (strings, dates and
    numbers alike: dense ranks; NaN above every number, as DuckDB): the best of its segments'.
    Segments that slide forward are read by a monotonic queue, others (ROWS offsets read per
    row) from a sparse table (its size checked against ``budget``)."""
    if pa.types.is_interval(values.type):  # equal intervals differ: the last one wins
        ranks = frame_ranks(values.take(pa.array(order)), largest)
    else:
        ranks = dense_ranks(values, what)[order]
    valid = _valid(values)[order]
    keys = np.where(valid, -ranks if largest else ranks, NO_KEY)  # the smallest key wins
    table = None if all(_slides(start, end) for start, end in segments) else \
        SparseMinimum(keys, budget, what)
    queue = np.empty(max(len(order), 1), np.int64)
    best = np.full(len(order), -1, np.int64)
    for start, end in segments:
        if table is None:
            found = np.empty(len(order), np.int64)
            kernels.sliding_extreme(ranks, valid, np.ascontiguousarray(start),
                                    np.ascontiguousarray(end), largest, queue, found)
        else:
            found = table.smallest(start, end)
        better = (found >= 0) & ((best < 0) | (keys[np.maximum(found, 0)] < keys[np.maximum(best, 0)]))
        best = np.where(better, found, best)
    return best, best >= 0


def _slides(start: np.ndarray, end: np.ndarray) -> bool:
    """Do the frames only move forward (neither end ever steps back)?"""
    return not ((np.diff(start) < 0).any() or (np.diff(end) < 0).any())
