"""Evaluate scalar SQL expressions (sqlglot nodes) over an Arrow table, with DuckDB's semantics.

In: a pa.Table whose columns are named "<table>.<column>" (scanned/joined) or plainly (step-local
results), a sqlglot expression and the SQL text (for error spans).  Out: a pa.Array,
pa.ChunkedArray or pa.Scalar (a constant expression stays a scalar).

Rules (DuckDB's unless stated): three-valued logic (a WHERE keeps a row only when TRUE);
integer literals are BIGINT (UBIGINT, then DOUBLE, when too large); decimal literals such as
0.05 are DOUBLE (DuckDB makes them DECIMAL; tdbsql has no decimal storage); ``+ - *`` on
integers compute in BIGINT and an overflow is an error; ``/`` gives DOUBLE (x/0 is +-inf or
NaN); ``//`` and ``%`` truncate toward zero (the remainder has the dividend's sign) and an
integer division by zero is an error; NaN equals NaN and sorts above every number; a string
compared with a number/date/timestamp is read as that type; dictionary (enumeration) columns
are compared on their dictionary and expanded through the indices.  Everything runs on
pyarrow.compute kernels; the scalar functions live in ``functions.py``, date arithmetic in
``datetime_ops.py``.
"""

from __future__ import annotations

import difflib

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from ..errors import SqlError, UnsupportedSql
from ..planner.parse import span_of
from . import datetime_ops as dto
from . import list_ops
from .functions import (REGISTRY, Call, as_text, call, cast_value, common_type, fit_literals,
                        float_mod, join_strings, kind, node_span, null_like, plain)

_INT64_MAX = 2**63 - 1
_COMPARE = {exp.EQ: "equal", exp.NEQ: "not_equal", exp.GT: "greater",
            exp.GTE: "greater_equal", exp.LT: "less", exp.LTE: "less_equal"}
_FLAG_ARGS = {"binary", "encoding", "zero_start", "negative_length_returns_empty", "json_scope",
              "ignore_nulls", "is_nvl", "is_null", "safe", "coalesce", "truncate",
              "casts_non_integer_decimals", "fractions_supported", "mode", "clamp_position",
              "to", "occurrence", "position"}
_NAME_ALIASES = {"time_to_unix": "epoch", "str_position": "strpos", "signum": "sign",
                 "nvl": "coalesce"}
T = exp.DataType.Type
_CAST_TYPES = {
    T.TINYINT: pa.int8(), T.SMALLINT: pa.int16(), T.INT: pa.int32(), T.BIGINT: pa.int64(),
    T.UTINYINT: pa.uint8(), T.USMALLINT: pa.uint16(), T.UINT: pa.uint32(),
    T.UBIGINT: pa.uint64(), T.FLOAT: pa.float32(), T.DOUBLE: pa.float64(),
    T.DECIMAL: pa.float64(),  # no decimal storage: DECIMAL reads as DOUBLE
    T.VARCHAR: pa.string(), T.TEXT: pa.string(), T.CHAR: pa.string(), T.NCHAR: pa.string(),
    T.NVARCHAR: pa.string(), T.BOOLEAN: pa.bool_(), T.DATE: pa.date32(),
    T.TIMESTAMP: pa.timestamp("us"), T.TIMESTAMPNTZ: pa.timestamp("us"),
    T.DATETIME: pa.timestamp("us"), T.TIMESTAMP_S: pa.timestamp("s"),
    T.TIMESTAMP_MS: pa.timestamp("ms"), T.TIMESTAMP_NS: pa.timestamp("ns"),
    T.BLOB: pa.binary(), T.VARBINARY: pa.binary(), T.BINARY: pa.binary(),
}


def resolve_column(table: pa.Table, node: exp.Column, sql: str | None = None) -> str:
    """The table column a Column node names: "<table>.<name>", "<name>", or the unique
    "*.<name>"; otherwise an SqlError with a close-name suggestion."""
    names = table.column_names
    name, qualifier = node.name, node.table
    if qualifier:
        if f"{qualifier}.{name}" in names:
            return f"{qualifier}.{name}"
        if name in names and not any("." in n for n in names):
            return name  # a single-table step whose columns are not qualified
    elif name in names:
        return name
    else:
        matches = [n for n in names if n.endswith(f".{name}")]
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            raise SqlError(f"column {name!r} is ambiguous: {', '.join(sorted(matches))}", sql,
                           span_of(node))
    wanted = f"{qualifier}.{name}" if qualifier else name
    candidates = names + [n.rsplit(".", 1)[-1] for n in names]
    close = difflib.get_close_matches(wanted, candidates, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise SqlError(f"unknown column {wanted!r}{hint}", sql, span_of(node))


class Evaluator:
    def __init__(self, table: pa.Table, sql: str):
        self.table = table
        self.sql = sql

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
            raise self.error("an INTERVAL can only be added to or subtracted from a date or "
                             "timestamp", node)
        return result

    # -- leaves --------------------------------------------------------------------------

    def _column(self, node: exp.Column):
        return self.table.column(resolve_column(self.table, node, self.sql))

    def _literal(self, node: exp.Literal):
        if node.is_string:
            return pa.scalar(node.this, pa.string())
        text = node.this
        try:
            value = int(text)
        except ValueError:
            return pa.scalar(float(text), pa.float64())
        if value > _INT64_MAX:  # e.g. uint64 coordinates past 2**63
            return pa.scalar(value, pa.uint64()) if value < 2**64 else pa.scalar(float(value))
        return pa.scalar(value, pa.int64())

    def _null(self, node):
        return pa.scalar(None)

    def _boolean(self, node: exp.Boolean):
        return pa.scalar(bool(node.this))

    def _paren(self, node):
        return self(node.this)

    def _alias(self, node):
        return self(node.this)

    def _interval(self, node: exp.Interval):
        amount = node.this
        unit = node.args.get("unit")
        if isinstance(amount, exp.Neg):
            return -self._interval(exp.Interval(this=amount.this, unit=unit))
        if not isinstance(amount, exp.Literal):
            raise UnsupportedSql(f"INTERVAL with a non-constant amount: {node.sql()}")
        try:
            return dto.parse_interval(str(amount.this), unit.name if unit else None)
        except dto.DatetimeError as err:
            raise self.error(str(err), node) from None

    # -- casts ---------------------------------------------------------------------------

    def _cast(self, node: exp.Cast):
        return self._convert(node, safe=False)

    def _trycast(self, node: exp.TryCast):
        return self._convert(node, safe=True)

    def _convert(self, node, safe: bool):
        to = node.to.this
        if to == T.INTERVAL:
            inner = node.this
            if isinstance(inner, exp.Literal) and inner.is_string:
                try:
                    return dto.parse_interval(inner.this, None)
                except dto.DatetimeError as err:
                    raise self.error(str(err), inner) from None
        target = _CAST_TYPES.get(to)
        if target is None:
            raise UnsupportedSql(f"CAST to {node.to.sql(dialect='duckdb')} is not supported")
        value = plain(self.value(node.this))
        if _is_decimal_literal(node.this) and pa.types.is_integer(target):
            # a literal like 2.5 is a DECIMAL in DuckDB, whose casts round half away from zero
            value = pc.round(value, 0, round_mode="half_towards_infinity")
        if safe:
            value = _null_unconvertible(value, target)
        if pa.types.is_string(target) and kind(value.type) != "string":
            return as_text(Call("cast", node, (node.this,), self.sql), value, 0)
        try:
            return cast_value(value, target)
        except ValueError as err:
            if safe:
                raise self.error(f"TRY_CAST to {target}: {err}", node) from None
            raise self.error(f"cannot CAST to {node.to.sql(dialect='duckdb')}: {err}",
                             node) from None

    # -- logic ---------------------------------------------------------------------------

    def _boolean_operand(self, node):
        value = plain(self.value(node))
        if kind(value.type) == "null":
            return cast_value(value, pa.bool_())
        if kind(value.type) != "bool":
            raise self.error(f"expected a boolean, got {value.type}", node)
        return value

    def _and(self, node):
        return pc.and_kleene(self._boolean_operand(node.this),
                             self._boolean_operand(node.expression))

    def _or(self, node):
        return pc.or_kleene(self._boolean_operand(node.this),
                            self._boolean_operand(node.expression))

    def _not(self, node):
        return pc.invert(self._boolean_operand(node.this))

    def _is(self, node: exp.Is):
        value = self.value(node.this)
        target = node.expression
        if isinstance(target, exp.Null):
            result = pc.is_null(value)
        elif isinstance(target, exp.Boolean):
            result = pc.fill_null(pc.equal(self._boolean_operand(node.this),
                                           pa.scalar(bool(target.this))), False)
        else:
            raise UnsupportedSql(f"unsupported IS form: {node.sql(dialect='duckdb')!r}")
        return pc.invert(result) if node.args.get("negate") else result

    def _nullsafeeq(self, node):
        return self._distinct(node, equal=True)

    def _nullsafeneq(self, node):
        return self._distinct(node, equal=False)

    def _distinct(self, node, equal: bool):
        left, right = self.value(node.this), self.value(node.expression)
        same = pc.fill_null(self.compare("equal", left, right, node), False)
        both_null = pc.and_(pc.is_null(left), pc.is_null(right))
        result = pc.or_(same, both_null)
        return result if equal else pc.invert(result)

    def _between(self, node: exp.Between):
        value = self.value(node.this)
        low, high = self.value(node.args["low"]), self.value(node.args["high"])
        result = pc.and_kleene(self.compare("greater_equal", value, low, node),
                               self.compare("less_equal", value, high, node))
        return pc.invert(result) if node.args.get("negate") else result

    def _in(self, node: exp.In):
        if node.args.get("query") or node.args.get("unnest"):
            raise UnsupportedSql("IN (subquery) must be planned as a semi join; it reached the "
                                 "expression evaluator")
        value = self.value(node.this)
        items = [self.value(e) for e in node.expressions]
        if not items:
            return _broadcast_like(value, pa.scalar(False))
        if all(isinstance(item, pa.Scalar) for item in items):
            return self._in_constants(value, items, node)
        result = None
        for item in items:  # x IN (a, NULL) is NULL when nothing matches
            eq = self.compare("equal", value, item, node)
            result = eq if result is None else pc.or_kleene(result, eq)
        return result

    def _in_constants(self, value, items, node):
        items = fit_literals([plain(value)] + items)[1:]
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
        candidates = pa.array([item.as_py() for item in valid_items], target)

        def member(values):
            values = cast_value(values, target)
            found = pc.is_in(values, value_set=candidates, skip_nulls=True)
            return _nan_members(found, values, valid_items, target)

        found = _on_values(value, member, target)
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
        if not (isinstance(char, exp.Literal) and char.is_string):
            raise self.error("ESCAPE needs a string literal", char)
        if len(char.this) > 1:
            raise self.error("the ESCAPE string must be empty or one character", char)
        return self._match(inner, ignore_case=isinstance(inner, exp.ILike),
                           escape=char.this or None)

    def _match(self, node, ignore_case: bool, escape: str | None):
        pattern_node = node.expression
        pattern = plain(self.value(pattern_node))
        value = plain_strings(self, node.this)
        if not isinstance(pattern, pa.Scalar):
            raise UnsupportedSql("LIKE with a non-constant pattern is not supported")
        if kind(pattern.type) not in ("string", "null"):
            raise self.error(f"LIKE pattern must be a string, got {pattern.type}", pattern_node)
        if not pattern.is_valid:
            return null_like(value, pa.bool_())
        arrow_pattern = self._arrow_like_pattern(pattern.as_py(), escape, pattern_node)
        result = _on_values(value, lambda v: pc.match_like(v, arrow_pattern,
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

    # -- CASE ----------------------------------------------------------------------------

    def _case(self, node: exp.Case):
        subject = node.this
        subject_value = self.value(subject) if subject is not None else None
        conditions, results = [], []
        for branch in node.args.get("ifs") or []:
            if subject is None:
                conditions.append(self._boolean_operand(branch.this))
            else:
                conditions.append(self.compare("equal", subject_value,
                                               self.value(branch.this), branch))
            results.append(self.value(branch.args["true"]))
        default = node.args.get("default")
        results.append(self.value(default) if default is not None else pa.scalar(None))
        return self._choose(conditions, results, node)

    def _if(self, node: exp.If):
        results = [self.value(node.args["true"])]
        otherwise = node.args.get("false")
        results.append(self.value(otherwise) if otherwise is not None else pa.scalar(None))
        return self._choose([self._boolean_operand(node.this)], results, node)

    def _choose(self, conditions, results, node):
        target = common_type([r.type for r in results])
        if target is None:
            raise self.error("CASE branches have no common type: "
                             + ", ".join(str(r.type) for r in results), node)
        try:
            results = [cast_value(r, target) for r in results]
        except ValueError as err:
            raise self.error(f"CASE: {err}", node) from None
        if pa.types.is_null(target):
            return results[-1]
        chosen = results[-1]
        for condition, result in zip(reversed(conditions), reversed(results[:-1])):
            chosen = pc.if_else(pc.fill_null(condition, False), result, chosen)
        return chosen

    # -- comparisons ---------------------------------------------------------------------

    def _comparison(self, node):
        left, right = self.value(node.this), self.value(node.expression)
        return self.compare(_COMPARE[type(node)], left, right, node)

    def compare(self, op: str, left, right, node):
        """``left <op> right`` with DuckDB's coercions and NaN ordering."""
        if _is_dictionary(left) and isinstance(right, pa.Scalar):
            target = common_type([left.type.value_type, right.type])
            if target is not None and target == left.type.value_type:
                constant = self._coerce_scalar(right, target, node)
                return _on_values(left, lambda v: _compare_plain(op, v, constant), pa.bool_())
        if _is_dictionary(right) and isinstance(left, pa.Scalar):
            flipped = {"less": "greater", "greater": "less", "less_equal": "greater_equal",
                       "greater_equal": "less_equal"}.get(op, op)
            return self.compare(flipped, right, left, node)
        left, right = self.coerce_pair(left, right, node, f"compare ({op.replace('_', ' ')})")
        return _compare_plain(op, left, right)

    def _coerce_scalar(self, scalar, target, node):
        try:
            return cast_value(scalar, target)
        except ValueError as err:
            raise self.error(str(err), node) from None

    def coerce_pair(self, left, right, node, what: str):
        left, right = fit_literals(list(_float32_literal(plain(left), plain(right))))
        target = common_type([left.type, right.type])
        if target is None:
            raise self.error(f"cannot {what} {left.type} and {right.type}", node)
        if pa.types.is_null(target):
            target = pa.bool_()  # NULL = NULL: any type gives NULL
        try:
            left, right = cast_value(left, target), cast_value(right, target)
        except ValueError as err:
            raise self.error(str(err), node) from None
        return left, right

    # -- arithmetic ----------------------------------------------------------------------

    def _add(self, node):
        return self._arith(node, "add")

    def _sub(self, node):
        return self._arith(node, "subtract")

    def _mul(self, node):
        return self._arith(node, "multiply")

    def _arith(self, node, op: str):
        left, right = self(node.this), self(node.expression)
        temporal = self._temporal_arith(node, op, left, right)
        if temporal is not None:
            return temporal
        left, right = self._numbers(node, left, right)
        if kind(left.type) in ("int", "uint"):
            return self._checked(node, f"{op}_checked", left, right)
        return getattr(pc, op)(left, right)

    def _temporal_arith(self, node, op, left, right):
        """Date/time arithmetic, or None if neither side is a date, timestamp or interval."""
        kinds = {_kind_of(left), _kind_of(right)}
        if not kinds & {"date", "timestamp", "interval"}:
            return None
        try:
            return self._temporal(node, op, left, right)
        except dto.DatetimeError as err:
            raise self.error(str(err), node) from None
        except pa.ArrowInvalid as err:
            raise self.error(f"date/time arithmetic out of range ({err})", node) from None

    def _temporal(self, node, op, left, right):
        lk, rk = _kind_of(left), _kind_of(right)
        if lk == "interval" and rk == "interval" and op in ("add", "subtract"):
            return left + (right if op == "add" else -right)
        if op == "add" and lk == "interval" and rk in ("date", "timestamp"):
            left, right, lk, rk = right, left, rk, lk
        if lk in ("date", "timestamp") and rk == "interval" and op in ("add", "subtract"):
            return dto.add_interval(plain(left), right if op == "add" else -right)
        if op == "add" and lk in ("int", "uint") and rk == "date":
            left, right, lk, rk = right, left, rk, lk
        if lk == "date" and rk in ("int", "uint") and op in ("add", "subtract"):
            days = right if op == "add" else pc.negate_checked(pc.cast(right, pa.int64()))
            return dto.add_days(plain(left), pc.cast(days, pa.int64()))
        if op == "subtract" and lk == "date" and rk == "date":
            return dto.date_diff_days(plain(left), plain(right))
        if op == "subtract" and {lk, rk} <= {"date", "timestamp"}:
            a, b = dto.common_timestamp(plain(left), plain(right))
            return pc.subtract_checked(a, b)
        raise self.error(f"cannot {op} {_type_name(left)} and {_type_name(right)}", node)

    def _numbers(self, node, left, right):
        """Operands of + - * / // %: integers widen to BIGINT (UBIGINT if both unsigned)."""
        left, right = fit_literals([plain(self._not_interval(left, node)),
                                    plain(self._not_interval(right, node))])
        for value in (left, right):
            if kind(value.type) not in ("int", "uint", "float", "null"):
                raise self.error(f"cannot apply {node.key.upper()} to {left.type} and "
                                 f"{right.type}", node)
        target = common_type([left.type, right.type])
        if pa.types.is_null(target):
            target = pa.int64()
        if kind(target) == "int" or (kind(target) == "uint" and target != pa.uint64()):
            target = pa.int64() if kind(target) == "int" else pa.uint64()
        return self.coerce_pair(cast_value(left, target), cast_value(right, target), node,
                                "combine")

    def _not_interval(self, value, node):
        if isinstance(value, dto.Interval):
            raise self.error("an INTERVAL can only be added to or subtracted from a date or "
                             "timestamp", node)
        return value

    def _checked(self, node, function: str, left, right):
        try:
            return getattr(pc, function)(left, right)
        except pa.ArrowInvalid as err:
            text = str(err).lower()
            if "divide by zero" in text:
                raise self.error("division by zero", node) from None
            raise self.error(f"integer overflow in {node.sql(dialect='duckdb')}", node) from None

    def _div(self, node):
        left, right = self._numbers(node, self(node.this), self(node.expression))
        return pc.divide(pc.cast(left, pa.float64()), pc.cast(right, pa.float64()))

    def _intdiv(self, node):
        left, right = self._numbers(node, self(node.this), self(node.expression))
        if kind(left.type) == "float":  # DuckDB: // on DOUBLE is plain division
            self._no_zero_divisor(node, right)
            return pc.divide(left, right)
        return self._checked(node, "divide_checked", left, right)

    def _mod(self, node):
        left, right = self._numbers(node, self(node.this), self(node.expression))
        if kind(left.type) == "float":
            return float_mod(left, right)
        self._no_zero_divisor(node, right)
        quotient = self._checked(node, "divide_checked", left, right)
        return self._checked(node, "subtract_checked", left,
                             self._checked(node, "multiply_checked", quotient, right))

    def _no_zero_divisor(self, node, divisor):
        if pc.any(pc.equal(divisor, 0)).as_py() if not isinstance(divisor, pa.Scalar) \
                else divisor.is_valid and divisor.as_py() == 0:
            raise self.error("division by zero", node)

    def _neg(self, node):
        value = self(node.this)
        if isinstance(value, dto.Interval):
            return -value
        value = plain(value)
        if kind(value.type) not in ("int", "uint", "float", "null"):
            raise self.error(f"cannot negate {value.type}", node)
        if kind(value.type) == "null":
            return value
        try:
            return pc.negate_checked(value)
        except pa.ArrowInvalid:
            raise self.error(f"integer overflow in {node.sql(dialect='duckdb')}", node) from None

    def _pow(self, node):
        return self._call("power", node, [node.this, node.expression])

    def _dpipe(self, node):
        """``a || b``: NULL if either side is NULL (unlike concat)."""
        ctx = Call("||", node, (node.this, node.expression), self.sql)
        return join_strings([as_text(ctx, plain(self.value(arg)), i)
                             for i, arg in enumerate(ctx.args)], "emit_null")

    # -- functions -----------------------------------------------------------------------

    def _function(self, node: exp.Func):
        if isinstance(node, exp.Anonymous):
            return self._call(node.name.lower(), node, list(node.expressions))
        name, args = _call_shape(node)
        return self._call(name, node, args)

    def _call(self, name: str, node, args: list):
        function = REGISTRY.get(name)
        if function is None and isinstance(node, exp.Anonymous):
            raise self.error(f"unknown function {name}()", node)
        if function is None:
            raise UnsupportedSql(f"unsupported SQL function {name}()")
        values = [self.value(arg) for arg in args]
        return call(function, Call(name, node, tuple(args), self.sql), values)


def _is_decimal_literal(node: exp.Expression) -> bool:
    if isinstance(node, exp.Neg):
        node = node.this
    return isinstance(node, exp.Literal) and not node.is_string and "." in node.this \
        and "e" not in node.this.lower()


def _call_shape(node: exp.Func) -> tuple[str, list]:
    """(registry name, argument nodes) of a typed sqlglot function node."""
    if isinstance(node, exp.Extract):
        return "date_part", [exp.Literal.string(node.this.name), node.expression]
    if isinstance(node, exp.TimestampTrunc):
        return "date_trunc", [exp.Literal.string(node.args["unit"].name), node.this]
    if isinstance(node, exp.Pad):
        name = "lpad" if node.args.get("is_left") else "rpad"
        return name, [a for a in (node.this, node.expression, node.args.get("fill_pattern"))
                      if a is not None]
    if isinstance(node, exp.Trim):
        position = str(node.args.get("position") or "").upper()
        name = {"LEADING": "ltrim", "TRAILING": "rtrim"}.get(position, "trim")
        return name, [a for a in (node.this, node.expression) if a is not None]
    args = []
    for key in type(node).arg_types:
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
        if name in REGISTRY:
            return name, args
    return type(node).sql_names()[0].lower(), args


# --- helpers on Arrow values ----------------------------------------------------------------


def plain_strings(ev: Evaluator, node):
    value = ev.value(node)
    value_kind = kind(value.type)
    if value_kind == "null":
        return cast_value(value, pa.string())
    if value_kind != "string":
        raise ev.error(f"LIKE needs a string, got {value.type}", node)
    return value


def _is_dictionary(value) -> bool:
    return not isinstance(value, (pa.Scalar, dto.Interval)) and pa.types.is_dictionary(value.type)


def _on_values(value, function, result_type: pa.DataType):
    """``function`` applied to a value's distinct labels when it is dictionary-encoded (then
    expanded through the indices), else to the value itself."""
    if isinstance(value, pa.ChunkedArray) and pa.types.is_dictionary(value.type):
        chunks = [_on_values(chunk, function, result_type) for chunk in value.chunks]
        return pa.chunked_array(chunks, type=chunks[0].type if chunks else result_type)
    if isinstance(value, pa.DictionaryArray):
        return pc.take(function(value.dictionary), value.indices)
    return function(plain(value))


def _compare_plain(op: str, left, right):
    """A comparison where NaN equals NaN and is greater than every number (DuckDB)."""
    result = getattr(pc, op)(left, right)
    if kind(left.type) != "float" or not (_has_nan(left) or _has_nan(right)):
        return result
    left_nan, right_nan = pc.is_nan(left), pc.is_nan(right)
    both = pc.and_kleene(left_nan, right_nan)
    if op in ("equal", "not_equal"):
        equal = pc.or_kleene(pc.equal(left, right), both)
        return equal if op == "equal" else pc.invert(equal)
    if op in ("greater", "greater_equal"):
        return _compare_plain("less" if op == "greater" else "less_equal", right, left)
    below = pc.or_kleene(pc.less(left, right), pc.and_kleene(pc.invert(left_nan), right_nan))
    if op == "less":
        return below
    return pc.or_kleene(below, pc.or_kleene(pc.equal(left, right), both))


def _has_nan(value) -> bool:
    if isinstance(value, pa.Scalar):
        return value.is_valid and value.as_py() != value.as_py()
    return bool(pc.any(pc.is_nan(value)).as_py())


def _nan_members(found, values, items, target):
    """pc.is_in never matches NaN; DuckDB's NaN = NaN does."""
    if kind(target) != "float" or not any(i.as_py() != i.as_py() for i in items):
        return found
    return pc.or_(found, pc.fill_null(pc.is_nan(values), False))


def _float32_literal(left, right):
    """A float literal compared with a FLOAT (float32) column is cast to FLOAT first, as DuckDB
    and TileDB do -- otherwise ``f = 0.3`` misses float32(0.3)."""
    def fix(scalar, other):
        if (isinstance(scalar, pa.Scalar) and not isinstance(other, pa.Scalar)
                and pa.types.is_float32(other.type) and pa.types.is_floating(scalar.type)
                and scalar.is_valid):
            return pa.scalar(scalar.as_py(), pa.float32())
        return scalar
    return fix(left, right), fix(right, left)


def _kind_of(value) -> str:
    return "interval" if isinstance(value, dto.Interval) else kind(value.type)


def _type_name(value) -> str:
    return "INTERVAL" if isinstance(value, dto.Interval) else str(value.type)


def _broadcast_like(value, scalar: pa.Scalar):
    if isinstance(value, pa.Scalar):
        return scalar
    return pa.array([scalar.as_py()] * len(value), scalar.type)


def _null_unconvertible(value, target: pa.DataType):
    """TRY_CAST: NULL where the value would not convert (checked with vectorised tests)."""
    source = kind(value.type)
    if source == "string" and kind(target) in ("int", "uint", "float"):
        text = pc.utf8_trim_whitespace(value)
        number = r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$"
        ok = pc.match_substring_regex(text, number)
        if kind(target) == "float":
            ok = pc.or_(ok, pc.match_substring_regex(text, r"^[+-]?(inf|infinity|nan)$",
                                                     ignore_case=True))
        value = pc.if_else(ok, value, pa.scalar(None, value.type))
        if kind(target) != "float":
            value = _null_out_of_range(value, pc.cast(pc.if_else(ok, text, None),
                                                      pa.float64()), target)
        return value
    if source == "string" and kind(target) in ("date", "timestamp"):
        text = pc.utf8_trim_whitespace(value)
        shape = r"^\d{4}-\d{1,2}-\d{1,2}([ T]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?)?$"
        ok = pc.match_substring_regex(text, shape)
        day = pc.utf8_slice_codeunits(pc.if_else(ok, text, None), 0, 10)
        real = pc.is_valid(pc.strptime(day, format="%Y-%m-%d", unit="s", error_is_null=True))
        return pc.if_else(pc.and_(ok, real), value, pa.scalar(None, value.type))
    if source in ("int", "uint", "float") and kind(target) in ("int", "uint"):
        as_float = pc.cast(value, pa.float64())
        if source == "float":
            as_float = pc.round(as_float, round_mode="half_towards_infinity")
        return _null_out_of_range(value, as_float, target)
    return value


def _null_out_of_range(value, as_float, target):
    info = np.iinfo(target.to_pandas_dtype())
    ok = pc.and_(pc.greater_equal(as_float, float(info.min)),
                 pc.less(as_float, float(info.max) + 1.0))
    return pc.if_else(pc.fill_null(ok, False), value, pa.scalar(None, value.type))


_HANDLERS = {
    exp.Column: Evaluator._column, exp.Literal: Evaluator._literal, exp.Null: Evaluator._null,
    exp.Boolean: Evaluator._boolean, exp.Paren: Evaluator._paren, exp.Alias: Evaluator._alias,
    exp.Interval: Evaluator._interval, exp.Cast: Evaluator._cast, exp.TryCast: Evaluator._trycast,
    exp.And: Evaluator._and, exp.Or: Evaluator._or, exp.Not: Evaluator._not, exp.Is: Evaluator._is,
    exp.NullSafeEQ: Evaluator._nullsafeeq, exp.NullSafeNEQ: Evaluator._nullsafeneq,
    exp.Between: Evaluator._between, exp.In: Evaluator._in, exp.Like: Evaluator._like,
    exp.ILike: Evaluator._ilike, exp.Escape: Evaluator._escape, exp.Case: Evaluator._case,
    exp.If: Evaluator._if, exp.Add: Evaluator._add, exp.Sub: Evaluator._sub,
    exp.Mul: Evaluator._mul, exp.Div: Evaluator._div, exp.IntDiv: Evaluator._intdiv,
    exp.Mod: Evaluator._mod, exp.Neg: Evaluator._neg, exp.Pow: Evaluator._pow,
    exp.DPipe: Evaluator._dpipe,
    exp.ArraySize: list_ops.array_size, exp.ArrayFilter: list_ops.array_filter,
    exp.ArrayAny: list_ops.array_any,
    **{cls: Evaluator._comparison for cls in _COMPARE},
}


def evaluate(table: pa.Table, node: exp.Expression, sql: str):
    result = Evaluator(table, sql)(node)
    if isinstance(result, dto.Interval):
        return pa.scalar(pa.MonthDayNano([result.months, result.days, result.micros * 1000]),
                         pa.month_day_nano_interval())
    return result


def where_mask(table: pa.Table, node: exp.Expression, sql: str) -> pa.Array:
    """Boolean mask of the rows whose predicate is TRUE (NULL counts as false)."""
    result = evaluate(table, node, sql)
    if isinstance(result, pa.Scalar):
        if not pa.types.is_boolean(result.type) and not pa.types.is_null(result.type):
            raise SqlError("WHERE needs a boolean condition", sql, span_of(node))
        keep = bool(result.as_py()) if result.is_valid else False
        return pa.array([keep] * table.num_rows, type=pa.bool_())
    if isinstance(result, pa.ChunkedArray):
        result = result.combine_chunks()
    if not pa.types.is_boolean(result.type):
        raise SqlError("WHERE needs a boolean condition", sql, span_of(node))
    return pc.fill_null(result, False)
