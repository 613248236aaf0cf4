"""Scalar SQL functions: the registry (name -> implementation, with arity checks), the ``Call``
an implementation receives, and the mapping of sqlglot's typed function nodes to names.

In: evaluated arguments (Arrow arrays, chunked arrays or scalars) and a ``Call`` that knows the
SQL text and argument spans.  Out: an Arrow value.  Semantics follow DuckDB: NULL in, NULL out.
The families live beside this module and register themselves on import: ``functions_math``
(numbers), ``functions_text`` (strings); the date and conditional functions are below.  Every
function runs on pyarrow.compute kernels.
"""

from __future__ import annotations

import importlib
import threading
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from ..collector_pause import imports_paused
from ..errors import SqlError, UnsupportedSql
from ..planner.parse import span_of
from . import datetime_ops as dto
from .frame import broadcast
from .grouping import group_ids, rows_by_group
from .interval_compare import compare_intervals
from .interval_parts import interval_part, interval_trunc, is_interval_value
from .interval_rows import durations_as_intervals
from .list_values import is_list
from .value_types import (cast_value, common_type, fit_literals, is_numeric, kind, null_like,
                          plain, type_name)

# sqlglot arguments that are options of a function, not SQL arguments of it.
_FLAG_ARGS = {"binary", "encoding", "zero_start", "negative_length_returns_empty", "json_scope",
              "ignore_nulls", "is_nvl", "is_null", "safe", "coalesce", "truncate",
              "casts_non_integer_decimals", "fractions_supported", "mode", "clamp_position",
              "to", "occurrence", "position"}
_NAME_ALIASES = {"time_to_unix": "epoch", "str_position": "strpos", "signum": "sign",
                 "nvl": "coalesce", "array_contains_all": "list_has_all",  # a @> b
                 "array_overlaps": "list_has_any",  # a && b
                 "jarowinkler_similarity": "jaro_winkler_similarity",
                 "euclidean_distance": "list_distance", "cosine_distance": "list_cosine_distance"}


def node_span(node: exp.Expression) -> tuple[int, int] | None:
    """The SQL text span covering a node and everything under it (sqlglot records positions
    on identifiers, literals and function names only)."""
    starts, ends = [], []
    for sub in node.walk():
        meta = getattr(sub, "_meta", None) or {}  # reading .meta would create empty dicts
        if "start" in meta and "end" in meta:
            starts.append(meta["start"])
            ends.append(meta["end"] + 1)
    if starts:
        return min(starts), max(ends)
    # Nodes sqlglot rebuilt (e.g. INTERVAL parts) carry no position: underline the parent.
    return span_of(node) or (node_span(node.parent) if node.parent is not None else None)



# --- calls ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """One function call being evaluated: its SQL name, argument nodes and the SQL text."""

    name: str
    node: exp.Expression
    args: tuple
    sql: str
    budget: object = None  # the query's MemoryBudget (None: unchecked), for big results
    rows: int = 1  # the rows the call is evaluated over (a function of no argument: random)

    @property
    def written_name(self) -> str:
        """The name as the SQL wrote it (``list_contains``), not sqlglot's (``array_contains``)
        nor the registered one; the registered one where the parser noted none."""
        from ..planner.column_names import written_call

        written = written_call(self.node)
        return written[0] if written else self.name

    def error(self, message: str, index: int | None = None) -> SqlError:
        where = self.args[index] if index is not None and index < len(self.args) else self.node
        return SqlError(f"{self.written_name}(): {message}", self.sql, node_span(where)
                        or node_span(self.node))

    def constant(self, value, index: int, what: str):
        """A constant argument's Python value (e.g. the digits of round)."""
        if not isinstance(value, pa.Scalar):  # DuckDB takes a column here: not yet tdbsql
            raise UnsupportedSql(f"{self.written_name}() with a {what} that is not a constant is "
                                 f"not supported: {self.sql_of(index)!r}")
        return value.as_py()

    def sql_of(self, index: int) -> str:
        node = self.args[index] if index < len(self.args) else self.node
        return node.sql(dialect="duckdb") if isinstance(node, exp.Expression) else str(node)

    def string(self, value, index: int):
        value = plain(value)
        if kind(value.type) == "null":
            return pa.scalar(None, pa.string()) if isinstance(value, pa.Scalar) else \
                pa.nulls(len(value), pa.string())
        if kind(value.type) != "string":
            raise self.error(f"expects a string, got {value.type}", index)
        return value

    def number(self, value, index: int):
        value = plain(value)
        if kind(value.type) == "null":
            return pa.scalar(None, pa.float64()) if isinstance(value, pa.Scalar) else \
                pa.nulls(len(value), pa.float64())
        if not is_numeric(value):
            raise self.error(f"expects a number, got {value.type}", index)
        return value

    def double(self, value, index: int):
        return cast_value(self.number(value, index), pa.float64())

    def integer(self, value, index: int):
        value = self.number(value, index)
        if value.null_count == len(value) if isinstance(value, pa.Array) else \
                isinstance(value, pa.Scalar) and not value.is_valid:
            return pc.cast(value, pa.int64())  # NULL (typed DOUBLE by ``number``)
        if kind(value.type) in ("float", "decimal"):
            raise self.error(f"expects an integer, got {value.type}", index)
        try:
            return pc.cast(value, pa.int64())
        except pa.ArrowInvalid:  # a HUGEINT or UBIGINT past BIGINT: DuckDB's binder error
            raise self.error(f"expects a BIGINT, got a {value.type} past its range",
                             index) from None

    def temporal(self, value, index: int, times: bool = False):
        """A DATE or TIMESTAMP argument (a string constant read as a TIMESTAMP); with
        ``times`` a TIME too (``hour(localtime)``)."""
        value = plain(value)
        if kind(value.type) == "null":
            return null_like(value, pa.timestamp("us"))
        if kind(value.type) == "string" and isinstance(value, pa.Scalar):
            try:
                return cast_value(value, pa.timestamp("us"))
            except ValueError as err:  # not a timestamp string
                raise self.error(str(err), index) from None
        if kind(value.type) == "time" and times:
            return value
        if kind(value.type) not in ("date", "timestamp"):
            expected = "a DATE, TIMESTAMP or TIME" if times else "a DATE or TIMESTAMP"
            raise self.error(f"expects {expected}, got {value.type}", index)
        return value


@dataclass(frozen=True)
class Function:
    name: str
    min_args: int
    max_args: int | None  # None: variadic
    impl: Callable


REGISTRY: dict[str, Function] = {}


def register(name: str, min_args: int, max_args: int | None = -1, aliases=()):
    """Register ``impl`` under ``name`` and ``aliases``.  A name is registered once: a
    function taking several types (``length`` of a string or a list) looks at them itself,
    so what runs never depends on which module was imported last."""
    def wrap(impl):
        top = min_args if max_args == -1 else max_args
        for alias in (name, *aliases):
            if alias in REGISTRY:
                raise ValueError(f"function {alias}() is registered twice")
            REGISTRY[alias] = Function(name, min_args, top, impl)
        return impl
    return wrap


def call(function: Function, ctx: Call, values: list):
    count = len(values)
    if count < function.min_args or (function.max_args is not None
                                     and count > function.max_args):
        if function.max_args is None:
            expected = f"at least {function.min_args}"
        elif function.min_args == function.max_args:
            expected = str(function.min_args)
        else:
            expected = f"{function.min_args} to {function.max_args}"
        raise ctx.error(f"takes {expected} argument(s), got {count}")
    try:
        return function.impl(ctx, *values)
    except dto.DatetimeError as err:  # a bad date/time input, e.g. past the TIMESTAMP range
        raise ctx.error(str(err)) from None


def python_map(fn, out_type: pa.DataType, *values):
    """``fn`` applied in Python to each row's argument values (None where one is NULL), for
    functions Arrow has no kernel for.  When every argument but the first is a constant it
    runs once per distinct first value.  ``fn`` returns a Python value of ``out_type``."""
    values = [plain(v) for v in values]
    arrays = [v for v in values if not isinstance(v, pa.Scalar)]
    if any(isinstance(v, pa.Scalar) and not v.is_valid for v in values):
        return null_like(arrays[0], out_type) if arrays else pa.scalar(None, out_type)
    if not arrays:
        return pa.scalar(fn(*(v.as_py() for v in values)), out_type)
    arrays = [v.combine_chunks() if isinstance(v, pa.ChunkedArray) else v for v in arrays]
    first = values[0]
    if not isinstance(first, pa.Scalar) and len(arrays) == 1:
        rest = [v.as_py() for v in values[1:]]
        distinct = pc.unique(arrays[0])
        mapped = pa.array([None if x is None else fn(x, *rest)
                           for x in distinct.to_pylist()], out_type)
        return pc.take(mapped, pc.index_in(arrays[0], value_set=distinct))
    length = len(arrays[0])
    columns = [[v.as_py()] * length if isinstance(v, pa.Scalar)
               else (v.combine_chunks() if isinstance(v, pa.ChunkedArray) else v).to_pylist()
               for v in values]
    return pa.array([None if None in row else fn(*row) for row in zip(*columns)], out_type)


def per_distinct(fn, values: list, options: list):
    """``fn(*rows of values, *options)`` once per distinct combination of the options that
    differ from row to row (a regex pattern, a date part), each call given the options as
    constants (NULL ones too: ``fn`` answers those), the answers put back in row order."""
    values, options = [plain(v) for v in values], [plain(v) for v in options]
    rows = next(len(v) for v in (*values, *options) if not isinstance(v, pa.Scalar))
    values = [broadcast(v, rows) for v in values]
    options = [v if isinstance(v, pa.Scalar) else broadcast(v, rows) for v in options]
    varying = [v for v in options if not isinstance(v, pa.Scalar)]
    if not rows:
        return fn(*values, *(pa.scalar(None, v.type) for v in options))
    if not varying:
        return fn(*values, *options)
    groups = group_ids(varying)
    order, starts = rows_by_group(groups.ids, groups.count)
    pieces = []
    for group in range(groups.count):
        members = pa.array(order[starts[group]:starts[group + 1]])
        first = int(groups.first[group])
        constants = [v if isinstance(v, pa.Scalar) else v[first] for v in options]
        answer = fn(*(v.take(members) for v in values), *constants)
        pieces.append(broadcast(answer, len(members)))
    inverse = np.empty(rows, np.int64)
    inverse[order] = np.arange(rows)
    return pa.concat_arrays([p.cast(pieces[0].type) for p in pieces]).take(pa.array(inverse))


# --- sqlglot's typed function nodes ---------------------------------------------------------


def call_shape(node: exp.Func) -> tuple[str, list]:
    """(registry name, argument nodes) of a typed sqlglot function node."""
    if isinstance(node, exp.Extract):
        return "date_part", [exp.Literal.string(node.this.name), node.expression]
    if isinstance(node, exp.TimestampTrunc):
        return "date_trunc", [_unit_argument(node.args["unit"]), node.this]
    if isinstance(node, exp.DateDiff):  # sqlglot: this = end, expression = start
        part = _unit_argument(node.args.get("unit"))
        return "datediff", [node.this, node.expression, part or exp.Literal.string("day")]
    if isinstance(node, exp.Pad):
        name = "lpad" if node.args.get("is_left") else "rpad"
        return name, [a for a in (node.this, node.expression, node.args.get("fill_pattern"))
                      if a is not None]
    if isinstance(node, exp.Trim):
        position = str(node.args.get("position") or "").upper()
        name = {"LEADING": "ltrim", "TRAILING": "rtrim"}.get(position, "trim")
        return name, [a for a in (node.this, node.expression) if a is not None]
    if isinstance(node, exp.ArraySort):  # list_sort(l, 'DESC', 'NULLS FIRST') as flags
        descending = node.args.get("asc") is not None and not node.args["asc"].this
        nulls_first = node.args.get("nulls_first") is not None and node.args["nulls_first"].this
        return "array_sort", [node.this, exp.Literal.string("DESC" if descending else "ASC"),
                              exp.Literal.string("NULLS FIRST" if nulls_first else "NULLS LAST")]
    if isinstance(node, exp.ToMap):  # MAP {k: v, ...}: map([k, ...], [v, ...])
        pairs = node.this.expressions
        return "map", [exp.Array(expressions=[pair.this.copy() for pair in pairs]),
                       exp.Array(expressions=[pair.expression.copy() for pair in pairs])]
    if isinstance(node, exp.ArrayContainedBy):  # a <@ b: b holds all of a
        return "list_has_all", [node.expression, node.this]
    if isinstance(node, exp.GenerateSeries):  # range(3) / generate_series(1, 3) as lists
        name = "range" if node.args.get("is_end_exclusive") else "generate_series"
        return name, [a for a in (node.args.get("start"), node.args.get("end"),
                                  node.args.get("step")) if a is not None]
    keys = list(type(node).arg_types)
    if isinstance(node, exp.RegexpExtract):  # sqlglot lists the options before the group
        keys.remove("group")
        keys.insert(keys.index("parameters"), "group")
    args = []
    for key in keys:
        value = node.args.get(key)
        if key in _FLAG_ARGS and not (isinstance(value, exp.Expression)
                                      and not isinstance(value, exp.Boolean)):
            continue  # a flag; an expression there is an extra argument for the arity check
        if isinstance(value, list):
            args.extend(value)
        elif isinstance(value, exp.Expression):
            args.append(value)
    for candidate in type(node).sql_names():
        name = candidate.lower()
        name = _NAME_ALIASES.get(name, name)
        if name in registry():
            return name, args
    return type(node).sql_names()[0].lower(), args


def _unit_argument(unit):
    """date_trunc / date_diff's part: a keyword (sqlglot's Var, also for ``'month'``) as a
    string; NULL, or an expression giving a part per row (``parse.unit_columns``), as is."""
    return exp.Literal.string(unit.name) if isinstance(unit, exp.Var) else unit


# --- date / time ----------------------------------------------------------------------------


def _part_function(part: str):
    def impl(ctx, value):
        if is_interval_value(plain(value)):
            return _interval_part(ctx, part, value)
        return dto.extract(part, ctx.temporal(value, 0, times=part in dto.TIME_PARTS))
    return impl


def _interval_part(ctx, part: str, value):
    """A part of INTERVAL values (``interval_parts``); DuckDB's error for one they lack."""
    try:
        return interval_part(part, plain(value))
    except dto.DatetimeError as err:
        raise ctx.error(str(err), 0) from None


for _name, _part in (("year", "year"), ("month", "month"), ("day", "day"),
                     ("dayofmonth", "day"), ("quarter", "quarter"), ("dayofweek", "dow"),
                     ("isodow", "isodow"), ("dayofyear", "doy"), ("week", "week"),
                     ("weekofyear", "week"), ("hour", "hour"), ("minute", "minute"),
                     ("second", "second"), ("epoch", "epoch"), ("isoyear", "isoyear"),
                     ("millisecond", "millisecond"), ("microsecond", "microsecond"),
                     ("weekday", "dow"), ("yearweek", "yearweek"), ("julian", "julian"),
                     ("decade", "decade"), ("century", "century"),
                     ("millennium", "millennium"), ("era", "era")):
    register(_name, 1)(_part_function(_part))


@register("date_part", 2, aliases=("datepart",))
def _date_part(ctx, part, value):
    if is_list(plain(part)):  # DuckDB answers a STRUCT, a field for each part
        raise UnsupportedSql("date_part() of a list of parts (a STRUCT result) is not "
                             "supported")
    part = ctx.string(part, 0)
    if not isinstance(part, pa.Scalar):  # a part per row: a DOUBLE, as DuckDB's
        return per_distinct(lambda v, p: cast_value(_date_part(ctx, p, v), pa.float64()),
                            [value], [part])
    name = part.as_py()
    if name is None:  # a NULL part: NULL, as in DuckDB
        return null_like(value, pa.int64())
    if is_interval_value(plain(value)):
        return _interval_part(ctx, name, value)
    try:
        return dto.extract(name, ctx.temporal(value, 1, times=True))
    except dto.DatetimeError as err:
        raise ctx.error(str(err), 0) from None


@register("date_trunc", 2, aliases=("datetrunc",))
def _date_trunc(ctx, unit, value):
    unit = ctx.string(unit, 0)
    if not isinstance(unit, pa.Scalar):  # a unit per row
        return per_distinct(lambda v, u: _date_trunc(ctx, u, v), [value], [unit])
    name = unit.as_py()
    interval = is_interval_value(plain(value))
    if name is None:  # a NULL unit: NULL, as in DuckDB
        return null_like(value, pa.month_day_nano_interval() if interval else pa.timestamp("us"))
    try:
        if interval:  # an INTERVAL cut to whole units
            return interval_trunc(name, plain(value))
        return dto.date_trunc(name, ctx.temporal(value, 1))
    except dto.DatetimeError as err:
        raise ctx.error(str(err), 0) from None


# --- conditional ----------------------------------------------------------------------------


@register("coalesce", 1, None, aliases=("ifnull",))
def _coalesce(ctx, *values):
    values = unify(ctx, values)
    return values[0] if len(values) == 1 else pc.coalesce(*values)


@register("nullif", 2)
def _nullif(ctx, a, b):
    a_cast, b_cast = unify(ctx, (a, b))
    if pa.types.is_null(a_cast.type):  # nullif(NULL, NULL): Arrow has no equal on nulls
        return a_cast
    equal = compare_intervals("equal", a_cast, b_cast) if pa.types.is_interval(a_cast.type) \
        else pc.equal(a_cast, b_cast)  # a month = 30 days, as DuckDB's = on intervals
    same = pc.fill_null(equal, False)
    # DuckDB keeps the first argument's type: a DATE beside a TIMESTAMP, an INTEGER beside
    # a DOUBLE
    kept = a_cast if pa.types.is_null(plain(a).type) else plain(a)
    return pc.if_else(same, pa.scalar(None, kept.type), kept)


def unify(ctx, values):
    """Cast ``values`` to their common type, or raise an SqlError naming the types."""
    values = fit_literals(list(values))
    if any(pa.types.is_interval(v.type) for v in values):  # ts - ts beside an INTERVAL
        values = [durations_as_intervals(v, ctx.error) for v in values]
    target = common_type([v.type for v in values])
    if target is None:
        raise ctx.error("arguments have no common type: "
                        + ", ".join(str(v.type) for v in values))
    try:
        return [cast_value(v, target) for v in values]
    except ValueError as err:
        raise ctx.error(str(err)) from None


# --- types ----------------------------------------------------------------------------------

@register("typeof", 1)
def _typeof(ctx, value):
    """The argument's type by DuckDB's name: one constant for every row (integer literals
    are BIGINT here: README, where tdbsql differs)."""
    return pa.scalar(type_name(plain(value).type))


# The function families register into REGISTRY when imported (they import ``register`` above),
# at the first look-up of a function by name (``registry``): a query calling none -- a filter
# on stored columns -- does without their 15-20 ms of import.
_FAMILIES = (
    "functions_dates", "functions_lists", "functions_math", "functions_text",
    "functions_codes", "functions_from_parts",  # hex, make_time ...
    "functions_math_more",  # gamma, fmod, round_even, to_base ...
    "functions_blobs", "functions_paths",  # unhex, parse_path ...
    "functions_nanos",  # nanosecond, make_timestamp_ns ...
    "functions_list_more", "functions_list_vectors",  # list_where, list_dot_product ...
    "functions_maps",  # map, map_keys, map_concat ...
)
_LOADING = threading.Lock()
_LOADED: list[bool] = []


def registered_text_of():
    """``functions_text.text_of`` (a value as DuckDB's VARCHAR cast prints it) with every
    function family registered: the text of a nested value may call any of them."""
    from .functions_text import text_of

    registry()
    return text_of


def registry() -> dict[str, Function]:
    """``REGISTRY`` with every function family registered (imported once, under a lock)."""
    if not _LOADED:
        with _LOADING:
            if not _LOADED:
                with imports_paused():
                    for family in _FAMILIES:
                        importlib.import_module(f"{__package__}.{family}")
                _LOADED.append(True)
    return REGISTRY
