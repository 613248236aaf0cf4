"""Evaluate scalar SQL expressions (sqlglot nodes) over an Arrow table, with DuckDB's semantics.

In: a pa.Table whose columns are named "<table>.<column>" (scanned/joined) or plainly (step-local
results), a sqlglot expression and the SQL text (for error spans).  Out: a pa.Array,
pa.ChunkedArray or pa.Scalar (a constant expression stays a scalar).

Rules (DuckDB's unless stated): three-valued logic (a WHERE keeps a row only when TRUE);
integer literals are BIGINT (UBIGINT, then DOUBLE, when too large); decimal literals such as
0.05 are DECIMAL(2,2) (Arrow decimal128), exact through ``+ - * %``, compared with DOUBLEs as
DOUBLEs (``decimal_values.py``); ``+ - *`` on integers compute in BIGINT and an overflow is
an error; ``/`` gives DOUBLE (x/0 is +-inf or
NaN); ``//`` and ``%`` truncate toward zero (the remainder has the dividend's sign) and an
integer division by zero is an error; NaN equals NaN and sorts above every number; a string
compared with a number/date/timestamp is read as that type; dictionary (enumeration) columns
are compared on their dictionary and expanded through the indices.  Everything runs on
pyarrow.compute kernels.  Elsewhere: operators ``+ - * / // %`` in ``arithmetic.py`` (date
arithmetic in ``datetime_ops.py``), scalar functions in ``functions*.py``, typing, casts and
NaN-aware comparisons in ``value_types.py``, list operators in ``list_ops.py`` and
``list_lambdas.py``.
"""

from __future__ import annotations

import decimal
import importlib

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from ..errors import SqlError, UnsupportedSql
from ..planner.column_names import type_sql, written_interval
from ..planner.function_names import unknown_function
from . import arithmetic, decimal_values, decimals, glob_match, interval_amounts, interval_rows, like_match
from . import functions_structs, functions_zones, list_lambdas, list_ops  # functions_zones: timezone()
from . import datetime_ops as dto
from .column_refs import resolve_column
from .frame import broadcast
from .functions import Call, call, call_shape, node_span, registry
from .functions_text import as_text
from .interval_compare import both_intervals, compare_intervals, is_interval
from .list_compare import compare_lists
from .list_values import is_list
from .map_values import any_map, compare_maps
from .struct_compare import compare_structs
from .struct_values import any_struct
from .value_types import (unsigned_zeros, cast_value, common_type, comparable_pair, numbered_bool, nanosecond_time,
                          compare_plain, fit_literals, has_cast, integer_literal_arrow_type,
                          is_dictionary, join_strings, kind, nan_members, null_like, null_unconvertible, on_values, plain,
                          type_name)

_INT64_MAX = 2**63 - 1
_COMPARE = {exp.EQ: "equal", exp.NEQ: "not_equal", exp.GT: "greater",
            exp.GTE: "greater_equal", exp.LT: "less", exp.LTE: "less_equal"}
T = exp.DataType.Type
_CAST_TYPES = {
    T.TINYINT: pa.int8(), T.SMALLINT: pa.int16(), T.INT: pa.int32(), T.BIGINT: pa.int64(),
    T.UTINYINT: pa.uint8(), T.USMALLINT: pa.uint16(), T.UINT: pa.uint32(),
    T.UBIGINT: pa.uint64(), T.FLOAT: pa.float32(), T.DOUBLE: pa.float64(),
    T.VARCHAR: pa.string(), T.TEXT: pa.string(), T.CHAR: pa.string(), T.NCHAR: pa.string(),
    T.NVARCHAR: pa.string(), T.BOOLEAN: pa.bool_(), T.DATE: pa.date32(),
    T.TIMESTAMP: pa.timestamp("us"), T.TIMESTAMPNTZ: pa.timestamp("us"),
    T.TIMESTAMPTZ: pa.timestamp("us", tz="UTC"),  # no session time zone: UTC (planner/clock.py)
    T.DATETIME: pa.timestamp("us"), T.TIMESTAMP_S: pa.timestamp("s"),
    T.TIMESTAMP_MS: pa.timestamp("ms"), T.TIMESTAMP_NS: pa.timestamp("ns"),
    T.TIME: pa.time64("us"),  # (TIME WITH TIME ZONE has no Arrow type: no CAST to it)
    T.TIME_NS: pa.time64("ns"),
    T.BLOB: pa.binary(), T.VARBINARY: pa.binary(), T.BINARY: pa.binary(),
}


class Evaluator:
    def __init__(self, table: pa.Table, sql: str, budget=None):
        self.table = table
        self.sql = sql
        self.budget = budget  # the query's MemoryBudget, for results that can outgrow it

    def __call__(self, node: exp.Expression):
        handler = _HANDLERS.get(type(node))
        if handler is not None:
            return handler(self, node)
        if isinstance(node, exp.AggFunc):
            raise UnsupportedSql(f"aggregate {node.sql(dialect='duckdb')} is not allowed here")
        if isinstance(node, exp.Func):
            return self._function(node)
        raise UnsupportedSql(f"unsupported SQL expression: {node.sql(dialect='duckdb')!r} "
                             f"({type(node).__name__})")

    def error(self, message: str, node: exp.Expression) -> SqlError:
        return SqlError(message, self.sql, node_span(node))

    def value(self, node: exp.Expression):
        """An Arrow value (an INTERVAL is not one: it only takes part in date arithmetic)."""
        result = self(node)
        if isinstance(result, dto.Interval):
            raise self.error(arithmetic.INTERVAL_ALONE, node)
        return result

    # -- leaves --------------------------------------------------------------------------

    def _column(self, node: exp.Column):
        return self.table.column(resolve_column(self.table, node, self.sql))

    def _literal(self, node: exp.Literal):
        if node.is_string:
            return pa.scalar(node.this, pa.string())
        text = node.this
        decimal_type = decimals.decimal_type_of(node)
        if decimal_type is not None:  # 0.05: a DECIMAL(2,2), as DuckDB types it
            return pa.scalar(decimal.Decimal(text), decimal_type.arrow)
        try:
            value = int(text)
        except ValueError:
            try:
                return pa.scalar(float(text), pa.float64())
            except ValueError:  # ``1e``: DuckDB's error too
                raise self.error(f"could not convert string {text!r} to DOUBLE", node) from None
        if value > _INT64_MAX:  # e.g. uint64 coordinates past 2**63
            if value < 2**64:
                return pa.scalar(value, pa.uint64())
            if value < 10**38:  # DuckDB's HUGEINT: exact, as a DECIMAL(38,0)
                return pa.scalar(decimal.Decimal(value), pa.decimal128(38, 0))
            raise UnsupportedSql(f"the integer literal {text}: past 38 digits (DuckDB's exact "
                                 "HUGEINT, UHUGEINT or BIGNUM) is not supported")
        return pa.scalar(value, integer_literal_arrow_type(value))

    def _null(self, node):
        return pa.scalar(None)

    def _boolean(self, node: exp.Boolean):
        return pa.scalar(bool(node.this))

    def _paren(self, node):
        return self(node.this)

    def _alias(self, node):
        return self(node.this)

    def _interval(self, node: exp.Interval, amount: exp.Expression | None = None):
        """``amount``: the (un-negated) amount being read; the plan's nodes are never
        rewrapped (scans evaluate one expression on several threads).  sqlglot reads
        ``INTERVAL '1.5 hours'`` as ``INTERVAL '1.5' HOURS`` (noting ``fraction_in_string``),
        whose fraction counts where ``INTERVAL '1.5' HOUR``'s does not."""
        amount = node.this if amount is None else amount
        unit = node.args.get("unit")
        if isinstance(amount, exp.Neg) and isinstance(amount.this, exp.Literal) and unit \
                and not node.args.get("fraction_in_string"):  # INTERVAL (-2147483648) MONTH
            return self._constant_interval(node, pa.scalar(f"-{amount.this.this}"), unit.name)
        if isinstance(amount, exp.Neg):
            return arithmetic.negated_interval(self._interval(node, amount.this),
                                               lambda text: self.error(text, node))
        if isinstance(amount, exp.Paren):  # INTERVAL (-1) MONTH
            return self._interval(node, amount.this)
        if not isinstance(amount, exp.Literal):
            amounts = self(amount)
            if unit is not None and isinstance(amounts, pa.Scalar):  # INTERVAL (1 + 1) DAY
                return self._constant_interval(node, amounts, unit.name)
            if unit is None or isinstance(amounts, dto.Interval):
                raise UnsupportedSql(f"INTERVAL with a non-constant amount: {node.sql()}")
            return interval_amounts.of_amounts(amounts, unit.name,
                                               lambda text: self.error(text, node))
        text, unit = str(amount.this), unit.name if unit else None
        written = written_interval(node)
        if unit is None and written is not None and written[0] is not None \
                and not written[0].startswith("'"):
            # ``INTERVAL 3`` (no unit: DuckDB casts the number, which has no such cast)
            source = "INTEGER" if written[0].isdigit() else "DOUBLE" if "e" in \
                written[0].lower() else decimals.decimal_type_of(exp.Literal.number(
                    written[0])).sql()
            raise self.error(f"Unimplemented type for cast ({source} -> INTERVAL)", node)
        if unit is not None and (node.args.get("fraction_in_string") or (
                written is not None and written[1] is None)):  # INTERVAL '1.5 days'
            text = f"{text} {unit}"
        elif unit is not None:  # INTERVAL '2' DAY, INTERVAL 1.5 HOUR: as INTERVAL (x) unit
            return self._constant_interval(node, pa.scalar(text), unit)
        try:
            return dto.parse_interval(text)
        except dto.DatetimeError as err:
            raise self.error(str(err), node) from None

    def _constant_interval(self, node: exp.Interval, amount: pa.Scalar, unit: str):
        """``INTERVAL (expression) unit`` of a constant, as of a column of it
        (``interval_amounts``), kept as an ``Interval``; NULL gives NULL."""
        if not amount.is_valid:
            return pa.scalar(None, pa.month_day_nano_interval())
        if kind(amount.type) not in ("int", "uint", "float", "decimal", "bool", "string"):
            raise self.error(f"an INTERVAL amount must be a number, not {amount.type}", node)
        months, days, micros, _ = interval_amounts.amount_parts(
            pa.array([amount.as_py()], amount.type), unit, lambda text: self.error(text, node))
        return dto.Interval(int(months[0]), int(days[0]), int(micros[0]))

    # -- casts ---------------------------------------------------------------------------

    def _cast(self, node: exp.Cast):
        return self._convert(node, safe=False)

    def _trycast(self, node: exp.TryCast):
        return self._convert(node, safe=True)

    def _convert(self, node, safe: bool):
        if node.to.this == T.INTERVAL:
            return self._to_interval(node, safe)
        if node.to.this == T.DECIMAL:
            return self._to_decimal(node, safe)
        if node.to.this == T.ARRAY and len(node.to.expressions) == 1 and \
                not node.to.args.get("values"):
            return list_ops.cast_list(self, node, safe)
        if node.to.this == T.MAP and len(node.to.expressions) == 2:
            return list_ops.cast_map(self, node, safe)
        if node.to.this == T.STRUCT and node.to.expressions:
            return functions_structs.cast_struct(self, node, safe)
        target = _CAST_TYPES.get(node.to.this)
        if target is None:
            raise UnsupportedSql(f"CAST to {node.to.sql(dialect='duckdb')} is not supported")
        value = self(node.this)
        if pa.types.is_string(target) and is_interval(value):
            return as_text(Call("cast", node, (node.this,), self.sql), value, 0)
        if isinstance(value, dto.Interval) or not has_cast(value.type, target):
            return self._no_cast(node, value, target, safe)
        value = plain(value)
        if safe and kind(value.type) == "decimal" and kind(target) in ("int", "uint"):
            value = _try_decimal(value, target)
        if safe:
            value = null_unconvertible(value, target)
        if pa.types.is_string(target) and kind(value.type) != "string":
            return as_text(Call("cast", node, (node.this,), self.sql), value, 0)
        try:
            return cast_value(value, target)
        except ValueError as err:
            word = "TRY_CAST" if safe else "CAST"
            raise self.error(f"cannot {word} to {type_sql(node.to)}: {err}", node) from None

    def _to_decimal(self, node, safe: bool):
        """CAST to DECIMAL(p, s): rounded to s digits as DuckDB rounds, an error (NULL under
        TRY_CAST) when a value needs more than p digits (``decimals.py``)."""
        try:
            target = decimals.declared(node.to)
        except ValueError as err:
            raise self.error(str(err), node.to) from None
        value = self(node.this)
        if isinstance(value, dto.Interval) or not has_cast(value.type, pa.float64()):
            return self._no_cast(node, value, target.arrow, safe)
        try:
            result, problem = decimals.to_decimal(
                value, target, literal=decimals.decimal_literal(node.this))
        except ValueError as err:
            raise self.error(f"cannot CAST to {type_sql(node.to)}: {err}", node) from None
        if problem is not None and not safe:
            raise self.error(f"cannot CAST to {type_sql(node.to)}: {problem}", node)
        return result

    def _no_cast(self, node, value, target: pa.DataType, safe: bool):
        """A cast DuckDB does not have (``CAST(1 AS DATE)``): NULL under TRY_CAST or for
        NULL values, else DuckDB's error."""
        if isinstance(value, dto.Interval):
            source, empty, value = "INTERVAL", False, pa.scalar(None)  # a constant's shape
        else:
            source, empty = type_name(value.type), _all_null(value)
        if safe or empty:
            return null_like(value, target)
        raise self.error(f"Unimplemented type for cast ({source} -> {type_sql(node.to)})",
                         node)

    def _to_interval(self, node, safe: bool):
        """CAST to INTERVAL: of a string (``'2 days'``; a column's each read once), an
        INTERVAL or NULL; other types have no cast to it."""
        inner, target = node.this, pa.month_day_nano_interval()
        if isinstance(inner, exp.Literal) and inner.is_string:
            try:
                return dto.parse_interval(inner.this)
            except dto.DatetimeError as err:
                if safe:
                    return pa.scalar(None, target)
                raise self.error(str(err), inner) from None
        value = self(inner)
        if isinstance(value, dto.Interval) or kind(value.type) == "duration" or \
                pa.types.is_interval(value.type):
            return value  # an INTERVAL already (``ts - ts`` is an Arrow duration)
        if kind(value.type) == "string":
            return interval_rows.of_strings(value, safe, lambda text: self.error(text, inner))
        return self._no_cast(node, value, target, safe)

    # -- logic ---------------------------------------------------------------------------

    def _boolean_operand(self, node):
        return self.condition(node, "a boolean operand")

    def condition(self, node, what: str):
        """``node``'s value as a BOOLEAN where SQL tests it (``what``: WHERE, an AND's
        operand...): numbers and strings are cast as DuckDB casts them there (``WHERE n``:
        n <> 0; ``'yes'``); another type, or a string that is no boolean, is an error."""
        value = plain(self.value(node))
        if kind(value.type) == "bool":
            return value
        if kind(value.type) not in _TRUTH_KINDS:
            raise self.error(f"{what} must be a boolean, not {type_name(value.type)}", node)
        try:
            return cast_value(value, pa.bool_())
        except ValueError as err:
            raise self.error(f"{what} must be a boolean: {err}", node) from None

    def _and(self, node):
        return pc.and_kleene(self._boolean_operand(node.this),
                             self._boolean_operand(node.expression))

    def _or(self, node):
        return pc.or_kleene(self._boolean_operand(node.this),
                            self._boolean_operand(node.expression))

    def _not(self, node):
        return pc.invert(self._boolean_operand(node.this))

    def _is(self, node: exp.Is):
        value = self._tested(node.this)
        target = node.expression
        if isinstance(target, exp.Null):
            result = pc.is_null(value)
        elif isinstance(target, exp.Boolean):
            result = pc.fill_null(pc.equal(self._boolean_operand(node.this),
                                           pa.scalar(bool(target.this))), False)
        else:
            raise UnsupportedSql(f"unsupported IS form: {node.sql(dialect='duckdb')!r}")
        return pc.invert(result) if node.args.get("negate") else result

    def _tested(self, node):
        """An operand of IS [NOT] NULL / IS [NOT] DISTINCT FROM: an INTERVAL constant too,
        as its Arrow value (never NULL), as DuckDB tests one."""
        result = self(node)
        return result.as_arrow() if isinstance(result, dto.Interval) else result

    def _nullsafeeq(self, node):
        return self._distinct(node, equal=True)

    def _nullsafeneq(self, node):
        return self._distinct(node, equal=False)

    def _distinct(self, node, equal: bool):
        left, right = self._tested(node.this), self._tested(node.expression)
        same = pc.fill_null(self.compare("equal", left, right, node), False)
        both_null = pc.and_(pc.is_null(left), pc.is_null(right))
        result = pc.or_(same, both_null)
        return result if equal else pc.invert(result)

    def _between(self, node: exp.Between):
        value = self(node.this)  # INTERVALs too: compare takes them
        try:
            value, low, high = _between_operands([value, self(node.args["low"]),
                                                  self(node.args["high"])])
        except ValueError as err:  # a string that is no number
            raise self.error(str(err), node) from None
        result = pc.and_kleene(self.compare("greater_equal", value, low, node),
                               self.compare("less_equal", value, high, node))
        return pc.invert(result) if node.args.get("negate") else result

    def _in(self, node: exp.In):
        if node.args.get("query") or node.args.get("unnest"):
            raise UnsupportedSql("IN (subquery) must be planned as a semi join; it reached the "
                                 "expression evaluator")
        value = self(node.this)  # INTERVALs too: compared one by one
        items = [self(e) for e in node.expressions]
        if not items:
            none = pa.scalar(False)
            return none if isinstance(value, pa.Scalar) else broadcast(none, len(value))
        if all(isinstance(item, pa.Scalar) for item in items) and not is_interval(value) \
                and not list_ops.any_list([value, *items]) \
                and not any_map([value, *items]) and not any_struct([value, *items]):
            # (lists, MAPs and structs: compared one by one)
            return self._in_constants(value, items, node)
        value, *items = _float_operands([value, *items])
        result = None
        for item in items:  # x IN (a, NULL) is NULL when nothing matches
            eq = self.compare("equal", value, item, node)
            result = eq if result is None else pc.or_kleene(result, eq)
        return result

    def _in_constants(self, value, items, node):
        items = fit_literals([plain(value)] + items)[1:]
        listed = common_type([item.type for item in items])
        value = value if listed is None else numbered_bool(value, listed)
        target = common_type([value.type] + [item.type for item in items])
        if target is None:
            raise self.error("IN list values do not match the type "
                             f"{plain(value).type}", node)
        try:
            cast_items = [cast_value(item, target) for item in items]
        except ValueError as err:
            raise self.error(f"IN list: {err}", node) from None
        has_null = any(not item.is_valid for item in cast_items)
        valid_items = [item for item in cast_items if item.is_valid]
        # (the scalars themselves: a TIME of 24:00:00 has no Python value, midnight would
        # stand for it)
        candidates = unsigned_zeros(pa.array(valid_items, target) if pa.types.is_time(target)
                                    else pa.array([item.as_py() for item in valid_items], target))

        def member(values):
            try:
                values = cast_value(values, target)
            except ValueError as err:  # a string column against numbers: a value that is none
                raise self.error(str(err), node) from None
            found = pc.is_in(unsigned_zeros(values), value_set=candidates, skip_nulls=True)
            return nan_members(found, values, valid_items, target)

        found = on_values(value, member, target)
        if has_null:
            found = pc.if_else(found, True, pa.scalar(None, pa.bool_()))
        return pc.if_else(pc.is_null(value), pa.scalar(None, pa.bool_()), found)

    # -- LIKE ----------------------------------------------------------------------------

    def _like(self, node):
        return self._match(node, ignore_case=False, escape=None)

    def _ilike(self, node):
        return self._match(node, ignore_case=True, escape=None)

    def _escape(self, node: exp.Escape):
        inner = node.this
        if not isinstance(inner, (exp.Like, exp.ILike)):
            raise UnsupportedSql(f"ESCAPE on {type(inner).__name__} is not supported")
        char = node.expression
        if isinstance(char, exp.Null):  # DuckDB: NULL, whatever the string and pattern
            return null_like(plain_strings(self, inner.this), pa.bool_())
        if not (isinstance(char, exp.Literal) and char.is_string):
            raise self.error("ESCAPE needs a string literal", char)
        if len(char.this.encode()) > 1:  # DuckDB counts bytes: 'é' is two
            raise self.error("the ESCAPE string must be empty or one character", char)
        return self._match(inner, ignore_case=isinstance(inner, exp.ILike),
                           escape=char.this or None)

    def _match(self, node, ignore_case: bool, escape: str | None):
        pattern_node = node.expression
        pattern = plain(self.value(pattern_node))
        value = plain_strings(self, node.this)
        if kind(pattern.type) not in ("string", "null"):
            raise self.error(f"LIKE pattern must be a string, got {pattern.type}", pattern_node)
        if not isinstance(pattern, pa.Scalar):  # a pattern per row
            if ignore_case and escape is not None and escape.lower() != escape:
                raise UnsupportedSql("ILIKE with an upper-case ESCAPE character and a pattern "
                                     "that is not a constant is not supported")
            if ignore_case:  # DuckDB's ILIKE: LIKE of both sides lowered
                value, pattern = _lowered(value), _lowered(pattern)
            found = like_match.match_rows(value, pattern, escape,
                                          lambda message: self.error(message, pattern_node))
            return pc.invert(found) if node.args.get("negate") else found
        if not pattern.is_valid:
            return null_like(value, pa.bool_())
        if ignore_case and (escape is None or escape.lower() == escape):
            # DuckDB's ILIKE is LIKE of both sides lowered: 'İ' ILIKE 'i' (RE2's case folding
            # does not map İ to i)
            value = _lowered(value)
            pattern, ignore_case = pc.utf8_lower(pattern), False
        arrow_pattern = self._arrow_like_pattern(pattern.as_py(), escape, pattern_node)
        found = None if ignore_case else like_match.pieces(pattern.as_py(), escape)
        if found is not None:  # literal pieces and %: one Numba pass
            result = on_values(value, lambda v: like_match.match(v, found), pa.bool_())
        else:
            result = on_values(value, lambda v: pc.match_like(v, arrow_pattern,
                                                               ignore_case=ignore_case),
                                pa.bool_())
        return pc.invert(result) if node.args.get("negate") else result

    def _arrow_like_pattern(self, pattern: str, escape: str | None, node) -> str:
        """SQL LIKE (no escape unless ESCAPE says so) -> Arrow's LIKE, where a backslash
        escapes.  Walks the pattern literal, not the rows."""
        out, pos = [], 0
        while pos < len(pattern):
            char = pattern[pos]
            if escape is not None and char == escape:
                pos += 1
                if pos == len(pattern):
                    raise self.error("LIKE pattern ends with the ESCAPE character", node)
                char = pattern[pos]
                out.append("\\" + char if char in "%_\\" else char)
            else:
                out.append("\\\\" if char == "\\" else char)
            pos += 1
        return "".join(out)

    # -- GLOB, SIMILAR TO ----------------------------------------------------------------

    def _glob(self, node: exp.Glob):
        return glob_match.glob(plain_strings(self, node.this),
                               plain_strings(self, node.expression))

    def _similar_to(self, node: exp.SimilarTo):
        return glob_match.similar_to(plain_strings(self, node.this),
                                     plain_strings(self, node.expression),
                                     lambda message: self.error(message, node.expression))

    # -- date_add ------------------------------------------------------------------------

    def _date_add(self, node: exp.DateAdd):
        """``date_add(t, interval)`` is ``t + interval``.  (sqlglot casts ``t`` to a
        TIMESTAMP, so ``date_add(date, days)``, a DATE in DuckDB, is not offered.)"""
        if not isinstance(node.expression, exp.Interval):
            raise UnsupportedSql("date_add() of anything but an INTERVAL literal is not "
                                 f"supported: {node.expression.sql(dialect='duckdb')!r}")
        return arithmetic.add(self, exp.Add(this=node.this, expression=node.expression))

    # -- CASE ----------------------------------------------------------------------------

    def _case(self, node: exp.Case):
        subject = node.this
        subject_value = self._argument(subject) if subject is not None else None
        conditions, branches = [], []
        for branch in node.args.get("ifs") or []:
            if subject is None:
                conditions.append(self._boolean_operand(branch.this))
            else:
                conditions.append(self.compare("equal", subject_value,
                                               self._argument(branch.this), branch))
            branches.append(branch.args["true"])
        branches.append(node.args.get("default"))
        return self._choose(conditions, self._branch_values(conditions, branches), node)

    def _if(self, node: exp.If):
        conditions = [self._boolean_operand(node.this)]
        branches = [node.args["true"], node.args.get("false")]
        return self._choose(conditions, self._branch_values(conditions, branches), node)

    def _branch_values(self, conditions, branches) -> list:
        """Each branch's value (None: NULL).  Over every row when that works; when a branch
        raises (a division by zero, an overflow, a failed cast), over the rows that choose it
        only, as DuckDB evaluates a branch: ``CASE WHEN g <> 0 THEN v // g END`` is no error
        where g = 0 (NULL elsewhere)."""
        values = []
        for index, branch in enumerate(branches):
            if branch is None:
                values.append(pa.scalar(None))
                continue
            try:
                values.append(self._argument(branch))  # an INTERVAL too
            except SqlError:
                values.append(self._value_where(branch, _chosen(conditions, index,
                                                                 self.table.num_rows)))
        return values

    def _value_where(self, node: exp.Expression, rows: np.ndarray):
        """``node`` evaluated over the rows ``rows`` only, NULL elsewhere (an error in those
        rows is raised)."""
        if rows.all():
            return self.value(node)
        positions = np.flatnonzero(rows)
        part = type(self)(self.table.take(pa.array(positions)), self.sql, self.budget)
        value = broadcast(part.value(node), len(positions))
        index = np.full(len(rows), -1, dtype=np.int64)
        index[positions] = np.arange(len(positions))
        return value.take(pa.array(index, mask=index < 0))

    def _choose(self, conditions, results, node):
        target = common_type([r.type for r in results])
        if target is None:
            raise self.error("CASE branches have no common type: "
                             + ", ".join(str(r.type) for r in results), node)
        results = [self._branch_as(target, conditions, index, result, node)
                   for index, result in enumerate(results)]
        if pa.types.is_null(target):
            return results[-1]
        chosen = results[-1]
        for condition, result in zip(reversed(conditions), reversed(results[:-1])):
            chosen = pc.if_else(pc.fill_null(condition, False), result, chosen)
        return chosen

    def _branch_as(self, target, conditions, index: int, result, node):
        """Branch ``index``'s value as the CASE's type; cast over the rows choosing it only
        when it fails (DuckDB's ``CASE WHEN true THEN 1 ELSE 'a' END`` is 1: no row reads
        'a' as an INTEGER)."""
        try:
            return cast_value(result, target)
        except ValueError as err:
            rows = _chosen(conditions, index, self.table.num_rows)
            if not rows.any():
                return pa.scalar(None, target)
            if isinstance(result, pa.Scalar):
                raise self.error(f"CASE: {err}", node) from None
            kept = pc.if_else(pa.array(rows), result, pa.scalar(None, result.type))
            try:
                return cast_value(kept, target)
            except ValueError as err:
                raise self.error(f"CASE: {err}", node) from None

    # -- comparisons ---------------------------------------------------------------------

    def _comparison(self, node):
        left, right = self._strings_as_intervals(self(node.this), self(node.expression), node)
        if not both_intervals(left, right):
            for value, operand in ((left, node.this), (right, node.expression)):
                if isinstance(value, dto.Interval):
                    raise self.error(arithmetic.INTERVAL_ALONE, operand)
        return self.compare(_COMPARE[type(node)], left, right, node)

    def compare(self, op: str, left, right, node):
        """``left <op> right`` with DuckDB's coercions and NaN ordering; two INTERVALs
        normalised, as DuckDB compares them (``interval_compare``)."""
        left, right = self._strings_as_intervals(left, right, node)
        if both_intervals(left, right):
            return compare_intervals(op, left, right)
        if isinstance(left, dto.Interval) or isinstance(right, dto.Interval):
            raise self.error(arithmetic.INTERVAL_ALONE, node)
        if any_map((left, right)):  # as their lists of keys and of values
            return compare_maps(op, left, right, self.table.num_rows,
                                lambda list_op, a, b: self.compare(list_op, a, b, node),
                                lambda message: self.error(message, node))
        if any_struct((left, right)):  # field by field (engine/struct_compare.py)
            return compare_structs(op, left, right, self.table.num_rows,
                                   lambda field_op, a, b: self.compare(field_op, a, b, node))
        if list_ops.any_list((left, right)):  # element by element (engine/list_compare.py)
            if not all(is_list(v) or pa.types.is_null(v.type) for v in (left, right)):
                raise self.error(f"cannot compare {left.type} and {right.type}", node)
            return compare_lists(op, left, right, self.table.num_rows,
                                 lambda element_op, a, b: self.compare(element_op, a, b, node))
        if is_dictionary(left) and isinstance(right, pa.Scalar):
            target = common_type([left.type.value_type, right.type])
            if target is not None and target == left.type.value_type:
                constant = self._coerce_scalar(right, target, node)
                return on_values(left, lambda v: compare_plain(op, v, constant), pa.bool_())
        if is_dictionary(right) and isinstance(left, pa.Scalar):
            flipped = {"less": "greater", "greater": "less", "less_equal": "greater_equal",
                       "greater_equal": "less_equal"}.get(op, op)
            return self.compare(flipped, right, left, node)
        if op in ("equal", "not_equal"):
            left, right = numbered_bool(left, right.type), numbered_bool(right, left.type)
            left, right = nanosecond_time(left, right.type), nanosecond_time(right, left.type)
        left, right = self.coerce_pair(left, right, node, f"compare ({op.replace('_', ' ')})")
        return compare_plain(op, left, right)

    def _strings_as_intervals(self, left, right, node):
        """``left``, ``right`` with strings beside an INTERVAL read as INTERVALs ('1 day'; a
        column's too), as DuckDB compares them."""
        if is_interval(left) and _textual(right):
            right = interval_rows.of_strings(right, False, lambda text: self.error(text, node))
        elif is_interval(right) and _textual(left):
            left = interval_rows.of_strings(left, False, lambda text: self.error(text, node))
        return left, right

    def _coerce_scalar(self, scalar, target, node):
        try:
            return cast_value(scalar, target)
        except ValueError as err:
            raise self.error(str(err), node) from None

    def coerce_pair(self, left, right, node, what: str):
        try:
            return comparable_pair(left, right, what)
        except ValueError as err:
            raise self.error(str(err), node) from None

    # -- functions (and the operators that are functions) --------------------------------

    def _pow(self, node):
        return self._call("power", node, [node.this, node.expression])

    def _dpipe(self, node):
        """``a || b``: NULL if either side is NULL (unlike concat)."""
        ctx = Call("||", node, (node.this, node.expression), self.sql)
        values = [self(arg) for arg in ctx.args]
        values = [as_text(ctx, value, i) if is_interval(value) else value  # '1 day'
                  for i, value in enumerate(values)]
        if list_ops.any_list(values):  # [1] || [2]: list_concat, NULL if either side is
            return list_ops.concatenated(ctx, values)
        return join_strings([as_text(ctx, plain(value), i) for i, value in enumerate(values)],
                            "emit_null")

    def _function(self, node: exp.Func):
        if isinstance(node, exp.Anonymous):
            name = node.name.lower()
            if name in functions_structs.NAMED_CALLS:  # struct_insert(s, c := 1)
                return functions_structs.NAMED_CALLS[name](self, node)
            if name in list_lambdas.LAMBDA_CALLS:  # list_reduce(l, lambda a, x: ...)
                return list_lambdas.LAMBDA_CALLS[name](self, node)
            if name in _LIKE_CALLS and len(node.expressions) == 3:
                return self._like_call(name, *node.expressions)
            if name in arithmetic.OPERATOR_CALLS:
                return self._operator_call(name, node)
            return self._call(name, node, list(node.expressions))
        name, args = call_shape(node)
        return self._call(name, node, args)

    def _at_time_zone(self, node: exp.AtTimeZone):
        """``value AT TIME ZONE zone``: DuckDB's ``timezone(zone, value)``."""
        return self._call(functions_zones.TIMEZONE, node, [node.args["zone"], node.this])

    def _like_call(self, name: str, value, pattern, escape):
        """like_escape(s, p, e) is ``s LIKE p ESCAPE e`` (ilike_escape, not_like_escape,
        not_ilike_escape likewise)."""
        like, negated = _LIKE_CALLS[name]
        found = self._escape(exp.Escape(this=like(this=value, expression=pattern),
                                        expression=escape))
        return pc.invert(found) if negated else found

    def _operator_call(self, name: str, node: exp.Anonymous):
        """add(a, b) is ``a + b``, subtract(a, b) ``a - b``, multiply(a, b) ``a * b`` and
        divide(a, b) ``a // b`` (DuckDB's functions behind the operators); add(a) is a and
        subtract(a) ``-a``, of a number."""
        args = [arg.copy() for arg in node.expressions]
        if len(args) == 2:
            return self(arithmetic.OPERATOR_CALLS[name](this=args[0], expression=args[1]))
        if len(args) != 1 or name not in ("add", "subtract"):
            counts = "1 or 2" if name in ("add", "subtract") else "2"
            raise self.error(f"{name}() takes {counts} argument(s), got {len(args)}", node)
        value = plain(self.value(args[0]))
        if kind(value.type) not in ("null", "int", "uint", "float", "decimal"):
            raise self.error(f"{name}() takes a number, got {type_name(value.type)}", node)
        return self(exp.Neg(this=args[0])) if name == "subtract" else value

    def _call(self, name: str, node, args: list):
        function = registry().get(name)
        if function is None and isinstance(node, exp.Anonymous):  # the planner's decision
            importlib.import_module(".aggregate_step", __package__)  # every name, to suggest
            raise unknown_function(name, self.sql, node_span(node))
        if function is None:  # a function sqlglot knows (DuckDB's) tdbsql does not evaluate
            raise UnsupportedSql(f"unsupported SQL function {_written_name(node, name)}()")
        values = [self._argument(arg) for arg in args]
        return call(function, Call(name, node, tuple(args), self.sql, self.budget,
                                   self.table.num_rows), values)

    def _argument(self, node: exp.Expression):
        """A function's argument or a CASE branch; an INTERVAL literal as an Arrow interval
        (time_bucket's width; a function that takes none refuses its type)."""
        result = self(node)
        if isinstance(result, dto.Interval):
            return result.as_arrow()
        return result


_LIKE_CALLS = {"like_escape": (exp.Like, False), "ilike_escape": (exp.ILike, False),
               "not_like_escape": (exp.Like, True), "not_ilike_escape": (exp.ILike, True)}


def _written_name(node, name: str) -> str:
    """A function's name as the SQL wrote it, else as DuckDB spells it (sqlglot renames:
    ``regexp_matches`` is its RegexpLike, ``strftime`` its TimeToStr), for messages."""
    from ..planner.column_names import written_call

    written = written_call(node)
    if written:
        return written[0].lower()
    text = node.sql(dialect="duckdb")
    head = text.split("(", 1)[0]
    return head.lower() if "(" in text and head.replace("_", "").isalnum() else name


def _bitwise(name: str):
    def handler(ev, node):
        args = [node.this] if isinstance(node, exp.BitwiseNot) else [node.this, node.expression]
        return ev._call(name, node, args)
    return handler


def _chosen(conditions, index: int, length: int) -> np.ndarray:
    """The rows whose CASE picks branch ``index``: its condition true, no earlier one (the
    default, ``index == len(conditions)``: none true)."""
    taken = np.zeros(length, dtype=bool)
    for condition in conditions[:index]:
        taken |= _true_rows(condition, length)
    if index == len(conditions):
        return ~taken
    return _true_rows(conditions[index], length) & ~taken


def _true_rows(condition, length: int) -> np.ndarray:
    if isinstance(condition, pa.Scalar):
        return np.full(length, bool(condition.as_py()))
    return np.asarray(pc.fill_null(condition, False).to_numpy(zero_copy_only=False),
                      dtype=bool)


def _lowered(value):
    """Strings lowered as DuckDB's lower() does; a dictionary stays one (its labels lowered)."""
    if isinstance(value, pa.ChunkedArray):
        return pa.chunked_array([_lowered(chunk) for chunk in value.chunks],
                                type=None if value.num_chunks else pa.string())
    if isinstance(value, pa.DictionaryArray):
        return pa.DictionaryArray.from_arrays(value.indices, pc.utf8_lower(value.dictionary))
    return pc.utf8_lower(value)


def _between_operands(operands: list) -> list:
    """BETWEEN's operands in the one type DuckDB compares all three in, the numbers' common
    type: its string constants cast to it (``'NaN' BETWEEN f AND 'inf'`` compares DOUBLEs,
    never the two strings as text), and, when it is a FLOAT or DOUBLE and every operand is
    then a number or NULL, the numbers too (as ``_float_operands`` for IN); else the
    operands as they are."""
    number_kinds = ("int", "uint", "float", "decimal")
    kinds = [None if isinstance(o, dto.Interval) else kind(o.type) for o in operands]
    target = common_type([o.type for o, k in zip(operands, kinds) if k in number_kinds])
    if target is None or pa.types.is_null(target):
        return operands
    texts = [isinstance(o, pa.Scalar) and k == "string" for o, k in zip(operands, kinds)]
    widen = pa.types.is_floating(target) and all(
        text or k in (*number_kinds, "null") for text, k in zip(texts, kinds))
    return [cast_value(o, target) if text or (widen and k != "null") else o
            for o, k, text in zip(operands, kinds, texts)]


def _float_operands(operands: list) -> list:
    """The operands of ``x IN (a, b, ...)`` or ``x BETWEEN a AND b`` in their one common type
    when that is a FLOAT or DOUBLE, as DuckDB compares them all: a FLOAT probe beside an
    INTEGER and a DOUBLE item is widened to DOUBLE for both (compared pair by pair,
    2147483648.0::FLOAT matched 2147483647 as FLOATs); other operands as they are."""
    numbers = ("int", "uint", "float", "decimal", "null")
    if not all(isinstance(o, (pa.Array, pa.ChunkedArray, pa.Scalar)) and
               kind(o.type) in numbers for o in operands):
        return operands
    target = common_type([o.type for o in operands])
    if target is None or not pa.types.is_floating(target):
        return operands
    return [o if kind(o.type) == "null" else cast_value(o, target) for o in operands]


def _try_decimal(value, target: pa.DataType):
    """TRY_CAST of DECIMALs to an integer type: NULL where the rounded value is out of its
    range."""
    info = np.iinfo(target.to_pandas_dtype())
    bounds = pa.decimal128(38, 0)  # the rounded value's scale 0 too: (38, 5) met (38, 0)
    rounded = pc.cast(decimal_values.rounded(value, 0), bounds)
    ok = pc.and_(pc.greater_equal(rounded, pa.scalar(decimal.Decimal(int(info.min)), bounds)),
                 pc.less_equal(rounded, pa.scalar(decimal.Decimal(int(info.max)), bounds)))
    return pc.if_else(pc.fill_null(ok, False), value, pa.scalar(None, value.type))


def _all_null(value) -> bool:
    if isinstance(value, pa.Scalar):
        return not value.is_valid
    return value.null_count == len(value)


# --- helpers on Arrow values ----------------------------------------------------------------


def plain_strings(ev: Evaluator, node):
    value = ev.value(node)
    value_kind = kind(value.type)
    if value_kind == "null":
        return cast_value(value, pa.string())
    if value_kind != "string":
        raise ev.error(f"LIKE needs a string, got {value.type}", node)
    return value


def _window(ev: Evaluator, node: exp.Window):
    """A window function's value per row; its machinery (and the aggregates and sorts it
    runs on) loaded by the first query that has one."""
    from .window_functions import window_value
    return window_value(ev, node)


_HANDLERS = {
    exp.Column: Evaluator._column, exp.Literal: Evaluator._literal, exp.Null: Evaluator._null,
    exp.Boolean: Evaluator._boolean, exp.Paren: Evaluator._paren, exp.Alias: Evaluator._alias,
    exp.Interval: Evaluator._interval, exp.Cast: Evaluator._cast, exp.TryCast: Evaluator._trycast,
    exp.And: Evaluator._and, exp.Or: Evaluator._or, exp.Not: Evaluator._not, exp.Is: Evaluator._is,
    exp.NullSafeEQ: Evaluator._nullsafeeq, exp.NullSafeNEQ: Evaluator._nullsafeneq,
    exp.Between: Evaluator._between, exp.In: Evaluator._in, exp.Like: Evaluator._like,
    exp.ILike: Evaluator._ilike, exp.Escape: Evaluator._escape, exp.Case: Evaluator._case,
    exp.Glob: Evaluator._glob, exp.SimilarTo: Evaluator._similar_to,
    exp.DateAdd: Evaluator._date_add, exp.AtTimeZone: Evaluator._at_time_zone,
    exp.If: Evaluator._if, exp.Add: arithmetic.add, exp.Sub: arithmetic.subtract,
    exp.Mul: arithmetic.multiply, exp.Div: arithmetic.divide,
    exp.IntDiv: arithmetic.integer_divide, exp.Mod: arithmetic.modulo,
    exp.Neg: arithmetic.negate, exp.Pow: Evaluator._pow,
    exp.DPipe: Evaluator._dpipe,
    exp.BitwiseAnd: _bitwise("&"), exp.BitwiseOr: _bitwise("|"), exp.BitwiseXor: _bitwise("xor"),
    exp.BitwiseNot: _bitwise("~"), exp.BitwiseLeftShift: _bitwise("<<"),
    exp.BitwiseRightShift: _bitwise(">>"),
    exp.ArraySize: list_ops.array_size, exp.ArrayFilter: list_lambdas.array_filter,
    exp.ArrayAny: list_lambdas.array_any, exp.Bracket: list_ops.bracket,
    exp.Transform: list_lambdas.transform,
    exp.Struct: functions_structs.struct_literal, exp.Dot: functions_structs.dot,
    exp.Tuple: functions_structs.row,
    exp.Window: _window,
    **{cls: Evaluator._comparison for cls in _COMPARE},
}


_TRUTH_KINDS = frozenset({"null", "int", "uint", "float", "decimal", "string"})


def evaluate(table: pa.Table, node: exp.Expression, sql: str, budget=None):
    """``node`` over ``table``; ``budget`` (a ``MemoryBudget``, None: unchecked) bounds the
    results that can outgrow their inputs (array_agg / string_agg over window frames)."""
    result = Evaluator(table, sql, budget)(node)
    if isinstance(result, dto.Interval):
        return result.as_arrow()
    return result


def where_mask(table: pa.Table, node: exp.Expression, sql: str) -> pa.Array:
    """Boolean mask of the rows whose predicate is TRUE (NULL counts as false)."""
    result = Evaluator(table, sql).condition(node, "WHERE's condition")
    if isinstance(result, pa.Scalar):
        keep = bool(result.as_py()) if result.is_valid else False
        return pa.array([keep] * table.num_rows, type=pa.bool_())
    if isinstance(result, pa.ChunkedArray):
        result = result.combine_chunks()
    return pc.fill_null(result, False)


def _textual(value) -> bool:
    return not isinstance(value, dto.Interval) and kind(value.type) == "string"
