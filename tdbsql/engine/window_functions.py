"""Window functions (``f(...) OVER (PARTITION BY ... ORDER BY ... frame)``) over a step's rows.

``planner.windows`` gives every window call a step of its own whose input is all the rows the
call sees, with its operands as plain columns.  Here one call becomes one Arrow array, in the
input's row order, with DuckDB's semantics:

* the rows are put in window order: partitions (group ids of the PARTITION BY keys, so NULLs
  form a partition and strings cost no comparisons), then ORDER BY with its directions and
  NULLS FIRST/LAST; rows equal on the ORDER BY keys are *peers*;
* ranking (row_number, rank, dense_rank, percent_rank, cume_dist, ntile) and lag/lead ignore
  the frame; first_value/last_value/nth_value and the aggregates read it.  The default frame
  is RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW (the row and its peers) with ORDER BY,
  the whole partition without;
* an aggregate whose frame is the whole partition is the grouped aggregate of the partition
  (any aggregate the engine has); over a moving frame count/sum/avg read running sums
  (compensated for floats) and min/max a monotonic queue (``kernels/window.py``).

Not supported (``UnsupportedSql``): RANGE frames with an offset, GROUPS frames, EXCLUDE,
FILTER, IGNORE NULLS on lag/lead, DISTINCT aggregates and aggregates other than
count/sum/avg/min/max over a moving frame.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from ..errors import SqlError, UnsupportedSql
from ..kernels import window as kernels
from .frame import broadcast, null_padded
from .grouping import AGGREGATES, Groups, aggregate, exact_integers, group_ids
from .hash_table import float64_values, int64_values
from .value_types import cast_value, kind

_AGGREGATE_NAMES = {"stddev": "stddev_samp", "variance": "var_samp", "variance_pop": "var_pop",
                    "logical_and": "bool_and", "logical_or": "bool_or"}
_MOVING = ("count_star", "count", "sum", "avg", "min", "max")
_INT64_LIMIT = 2**63 - 1


def window_value(ev, node: exp.Window) -> pa.Array:
    """The value of the window call ``node`` for every row of ``ev.table``."""
    call = node.this
    ignore_nulls = isinstance(call, exp.IgnoreNulls)
    if ignore_nulls:
        call = call.this
    name = call.name.lower()
    layout = Layout.of(ev, node)
    window = _Window(ev, node, call, layout, ignore_nulls)
    ranking = _RANKING.get(name)
    if ranking is not None:
        return window.in_row_order(pa.array(ranking(window)))
    if name in ("lag", "lead"):
        return window.shifted(-1 if name == "lag" else 1)
    if name in ("first_value", "last_value", "nth_value"):
        return window.frame_value(name)
    func = _AGGREGATE_NAMES.get(name, name)
    if func == "count" and window.args and isinstance(window.args[0], exp.Star):
        func = "count_star"
    if func in AGGREGATES:
        return window.aggregate(func)
    raise UnsupportedSql(f"{name}() is not a window function tdbsql supports")


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

    @classmethod
    def of(cls, ev, node: exp.Window) -> Layout:
        n = ev.table.num_rows
        keys = [_plain(broadcast(ev.value(p), n)) for p in node.args.get("partition_by") or []]
        partitions = group_ids(keys) if keys else Groups.single(n)
        ordered = (node.args.get("order") or exp.Order()).expressions
        sort_values = [_plain(broadcast(ev.value(o.this), n)) for o in ordered]
        if sort_values:
            columns = {"p": pa.array(partitions.ids)}
            sort_keys = [("p", "ascending", "at_end")]
            for i, (o, values) in enumerate(zip(ordered, sort_values)):
                columns[f"k{i}"] = values
                sort_keys.append((f"k{i}", "descending" if o.args.get("desc") else "ascending",
                                  "at_start" if o.args.get("nulls_first") else "at_end"))
            order = pc.sort_indices(pa.table(columns), sort_keys=sort_keys).to_numpy()
        else:
            order = np.argsort(partitions.ids, kind="stable")
        order = order.astype(np.int64, copy=False)
        part_new = _starts(partitions.ids[order])
        if sort_values:
            peer_new = _starts(group_ids(keys + sort_values).ids[order]) | part_new
        else:
            peer_new = part_new
        part_start, part_end = _runs(part_new)
        peer_start, peer_end = _runs(peer_new)
        return cls(order, partitions, part_start, part_end, peer_start, peer_end, peer_new)


class _Window:
    def __init__(self, ev, node: exp.Window, call: exp.Expression, layout: Layout,
                 ignore_nulls: bool):
        self.ev, self.node, self.layout = ev, node, layout
        self.args = list(call.expressions)
        self.name = call.name.lower()
        self.ignore_nulls = ignore_nulls
        self.n = len(layout.order)
        self.position = np.arange(self.n, dtype=np.int64)

    # -- helpers -------------------------------------------------------------------------------

    def in_row_order(self, sorted_values: pa.Array) -> pa.Array:
        """Values by window position -> values by input row."""
        inverse = np.empty(self.n, np.int64)
        inverse[self.layout.order] = self.position
        return sorted_values.take(pa.array(inverse))

    def rows_at(self, positions: np.ndarray, found: np.ndarray) -> pa.Array:
        """Take indices (input rows, by input row) for the window ``positions`` of every row,
        null where not ``found``."""
        rows = np.where(found, self.layout.order[np.where(found, positions, 0)], -1)
        by_row = np.empty(self.n, np.int64)
        by_row[self.layout.order] = rows
        return null_padded(by_row)

    def argument(self, index: int) -> pa.Array:
        if index >= len(self.args):
            raise self.error(f"{self.name}() needs {index + 1} argument(s)")
        value = broadcast(self.ev.value(self.args[index]), self.n)
        if isinstance(value, pa.ChunkedArray):
            value = value.combine_chunks()
        return _plain(value)

    def constant(self, index: int, default: int | None = None) -> int:
        """A constant integer argument (an offset, a bucket count)."""
        if index >= len(self.args):
            if default is None:
                raise self.error(f"{self.name}() needs {index + 1} argument(s)")
            return default
        value = self.ev.value(self.args[index])
        if not isinstance(value, pa.Scalar) or not pa.types.is_integer(value.type) \
                or not value.is_valid:
            raise self.error(f"argument {index + 1} of {self.name}() must be an integer constant")
        return int(value.as_py())

    def error(self, message: str) -> SqlError:
        return self.ev.error(message, self.node)

    # -- lag / lead ----------------------------------------------------------------------------

    def shifted(self, direction: int) -> pa.Array:
        if self.ignore_nulls:
            raise UnsupportedSql(f"IGNORE NULLS in {self.name}() is not supported")
        values = self.argument(0)
        offset = self.constant(1, default=1)
        target = self.position + direction * offset
        layout = self.layout
        found = (target >= layout.part_start) & (target < layout.part_end)
        shifted = values.take(self.rows_at(target, found))
        if len(self.args) < 3:
            return shifted
        default = self.ev.value(self.args[2])
        if isinstance(default, pa.Scalar) and not default.is_valid:
            return shifted
        found_by_row = np.empty(self.n, bool)
        found_by_row[layout.order] = found
        default = broadcast(default, self.n)
        try:
            default = cast_value(default, shifted.type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            raise self.error(f"the default of {self.name}() does not match its value's type "
                             f"{shifted.type}") from None
        return pc.if_else(pa.array(found_by_row), shifted, default)

    # -- first_value / last_value / nth_value --------------------------------------------------

    def frame_value(self, name: str) -> pa.Array:
        values = self.argument(0)
        start, end = self.frame()
        if name == "nth_value":
            nth = self.constant(1)
            if nth < 1:
                raise self.error("nth_value() counts from 1")
        else:
            nth = 1
        if not self.ignore_nulls:
            position = end - 1 if name == "last_value" else start + nth - 1
            found = (position >= start) & (position < end)
            return values.take(self.rows_at(position, found))
        valid = _valid(values)[self.layout.order]
        before = np.concatenate([[0], np.cumsum(valid)])  # valid values before each position
        valid_positions = np.flatnonzero(valid)
        k = before[end] - 1 if name == "last_value" else before[start] + nth - 1
        found = (k >= before[start]) & (k < before[end])
        position = valid_positions[np.where(found, k, 0)] if len(valid_positions) else k
        return values.take(self.rows_at(position, found))

    # -- aggregates ----------------------------------------------------------------------------

    def aggregate(self, func: str) -> pa.Array:
        distinct = bool(self.args) and isinstance(self.args[0], exp.Distinct)
        if distinct:
            self.args[0] = self.args[0].expressions[0]
        values = None if func == "count_star" else self.argument(0)
        start, end = self.frame()
        layout = self.layout
        if np.array_equal(start, layout.part_start) and np.array_equal(end, layout.part_end):
            per_partition = aggregate(func, values, layout.partitions, distinct=distinct)
            return per_partition.take(pa.array(layout.partitions.ids))
        if distinct:
            raise UnsupportedSql(f"{self.name}(DISTINCT ...) over a moving window frame is not "
                                 "supported (over the whole partition it is)")
        if func not in _MOVING:
            raise UnsupportedSql(f"{self.name}() over a moving window frame is not supported "
                                 "(count, sum, avg, min and max are; or use the whole partition)")
        if func == "count_star":
            return self.in_row_order(pa.array(end - start))
        if func in ("min", "max"):
            return values.take(self.rows_at(*_extremes(values, layout.order, start, end,
                                                        func == "max")))
        valid = _valid(values)[layout.order]
        counts = _frame_sums(valid.astype(np.int64), start, end)
        if func == "count":
            return self.in_row_order(pa.array(counts))
        sums = self.sums(values, valid, start, end, func)
        if func == "avg":
            sums = pc.divide(pc.cast(sums, pa.float64()), pa.array(counts, pa.float64()))
        return self.in_row_order(pc.if_else(pa.array(counts > 0), sums, pa.scalar(None, sums.type)))

    def sums(self, values: pa.Array, valid: np.ndarray, start, end, func: str) -> pa.Array:
        value_kind = kind(values.type)
        if value_kind == "int" and not pa.types.is_uint64(values.type):
            ints = int64_values(values, copy=True)[self.layout.order]
            ints[~valid] = 0
            bound = int(np.abs(ints).max(initial=0)) * max(self.n, 1)
            if bound <= _INT64_LIMIT:
                return pa.array(_frame_sums(ints, start, end))
            exact = np.concatenate([[0], np.cumsum(ints.astype(object))])
            return exact_integers((exact[end] - exact[start]).tolist())
        if value_kind not in ("int", "float"):
            raise self.error(f"{func}() needs numbers, not {values.type}")
        return pa.array(_float_frame_sums(float64_values(values, copy=True)[self.layout.order],
                                          valid, start, end))

    # -- frames --------------------------------------------------------------------------------

    def frame(self) -> tuple[np.ndarray, np.ndarray]:
        """Every position's frame ``[start, end)`` of window positions."""
        layout = self.layout
        spec = self.node.args.get("spec")
        has_order = self.node.args.get("order") is not None
        if spec is None:
            if not has_order:
                return layout.part_start, layout.part_end
            return layout.part_start, layout.peer_end
        rows = str(spec.args.get("kind")).upper() == "ROWS"
        start = self._bound(spec.args.get("start"), spec.args.get("start_side"), rows, True)
        end_value = spec.args.get("end")
        end = self._bound(end_value if end_value is not None else "CURRENT ROW",
                          spec.args.get("end_side"), rows, False)
        start = np.clip(start, layout.part_start, layout.part_end)
        end = np.clip(end, layout.part_start, layout.part_end)
        return start, np.maximum(end, start)

    def _bound(self, value, side, rows: bool, is_start: bool) -> np.ndarray:
        layout = self.layout
        side = str(side or "").upper()
        if isinstance(value, str) and value.upper() == "UNBOUNDED":
            if side == "FOLLOWING" and is_start or side == "PRECEDING" and not is_start:
                raise self.error(f"a frame cannot {'start' if is_start else 'end'} at "
                                 f"UNBOUNDED {side}")
            return layout.part_start if side == "PRECEDING" else layout.part_end
        if isinstance(value, str) and value.upper() == "CURRENT ROW":
            if rows:
                return self.position if is_start else self.position + 1
            return layout.peer_start if is_start else layout.peer_end
        if not rows:
            raise UnsupportedSql("RANGE frames with an offset are not supported (use ROWS, or "
                                 "RANGE with UNBOUNDED / CURRENT ROW)")
        offset = self.ev.value(value)
        if not isinstance(offset, pa.Scalar) or not pa.types.is_integer(offset.type) or \
                not offset.is_valid or offset.as_py() < 0:
            raise self.error("a ROWS frame offset must be a non-negative integer constant")
        shift = offset.as_py() * (-1 if side == "PRECEDING" else 1)
        return self.position + shift + (0 if is_start else 1)


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


def _ntile(w: _Window) -> np.ndarray:
    """Buckets 1..n as equal as can be, the first ``size % n`` one row larger."""
    buckets = w.constant(0)
    if buckets < 1:
        raise w.error("ntile() needs a bucket count greater than zero")
    size = w.layout.part_end - w.layout.part_start
    row = w.position - w.layout.part_start
    buckets = np.minimum(buckets, size)
    small = size // buckets  # rows in a small bucket
    large = size - buckets * small  # buckets with one row more
    in_large = large * (small + 1)  # rows in the large buckets
    return np.where(row < in_large, 1 + row // (small + 1),
                    1 + large + (row - in_large) // np.maximum(small, 1))


_RANKING = {"row_number": _row_number, "rank": _rank, "dense_rank": _dense_rank,
            "percent_rank": _percent_rank, "cume_dist": _cume_dist, "ntile": _ntile}


# --- helpers ---------------------------------------------------------------------------------


def _plain(values):
    """Dictionary (enumeration) values decoded: window keys and values compare by value."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    return values.dictionary_decode() if pa.types.is_dictionary(values.type) else values


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


def _frame_sums(values: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    before = np.concatenate([[0], np.cumsum(values)])
    return before[end] - before[start]


def _float_frame_sums(values: np.ndarray, valid: np.ndarray, start, end) -> np.ndarray:
    """Frame sums of floats: finite values through compensated running sums, inf/NaN counted
    apart so one of them does not poison every later frame."""
    finite = valid & np.isfinite(values)
    high = np.empty(len(values) + 1)
    low = np.empty(len(values) + 1)
    kernels.compensated_prefix(np.ascontiguousarray(values), finite, high, low)
    sums = (high[end] - high[start]) + (low[end] - low[start])
    special = valid & ~finite
    if special.any():
        plus = _frame_sums((values == np.inf) & special, start, end) > 0
        minus = _frame_sums((values == -np.inf) & special, start, end) > 0
        nan = _frame_sums(np.isnan(values) & special, start, end) > 0
        sums = np.where(plus, np.inf, sums)
        sums = np.where(minus, -np.inf, sums)
        sums = np.where(nan | (plus & minus), np.nan, sums)
    return sums


def _extremes(values: pa.Array, order: np.ndarray, start, end, largest: bool):
    """(window position, found) of each frame's min / max, by value order (strings, dates and
    numbers alike: dense ranks; NaN above every number, as DuckDB)."""
    ranks = pc.rank(values, sort_keys="ascending", tiebreaker="dense").to_numpy().astype(np.int64)[order]
    valid = _valid(values)[order]
    found = np.empty(len(order), np.int64)
    queue = np.empty(max(len(order), 1), np.int64)
    kernels.sliding_extreme(ranks, valid, np.ascontiguousarray(start),
                            np.ascontiguousarray(end), largest, queue, found)
    return found, found >= 0
