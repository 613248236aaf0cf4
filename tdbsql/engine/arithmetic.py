"""Arithmetic of the SQL evaluator: ``+ - * / // %`` and unary minus, numbers and dates.

In: the ``Evaluator`` (to evaluate operands and raise span errors) and the operator node.
Out: an Arrow value (an ``Interval`` for interval arithmetic).  DuckDB's rules: integers
compute in the wider of their types, an integer literal taking the other side's type when it
fits (``integer_arithmetic_type``: ``tinyint_column + 1`` is a TINYINT, ``2147483647 + 1`` an
INTEGER), and an overflow is an error; ``/``
gives DOUBLE; ``//`` and ``%`` truncate toward zero (the remainder has the dividend's sign) and
an integer division by zero is an error (``%`` on DOUBLE is ``fmod``, NaN for a zero divisor);
date +/- integer days, date/timestamp +/- INTERVAL, time +/- INTERVAL (a time), date + time
(a timestamp), date - date (days) and timestamp - timestamp (an interval) as ``datetime_ops``
computes them; other operators on a TIME are refused, as in DuckDB (``TIME - TIME`` too).
"""

from __future__ import annotations

import decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from ..errors import UnsupportedSql
from . import datetime_ops as dto
from .decimal_constants import fold
from . import decimal_values, interval_factors, interval_rows
from .decimals import integer_literal, integer_literal_type, scalar
from .frame import broadcast
from .value_types import (cast_value, common_type, integer_arithmetic_type,
                          integer_literal_arrow_type, kind, plain, type_name)

# DuckDB's functions behind the operators: add(a, b) is a + b, divide(a, b) is a // b
OPERATOR_CALLS = {"add": exp.Add, "subtract": exp.Sub, "multiply": exp.Mul, "divide": exp.IntDiv}
INTERVAL_ALONE = ("an INTERVAL can only be added to or subtracted from a date, timestamp "
                  "or time")


def add(ev, node):
    return _arith(ev, node, "add")


def subtract(ev, node):
    return _arith(ev, node, "subtract")


def multiply(ev, node):
    return _arith(ev, node, "multiply")


def _arith(ev, node, op: str):
    constant = _folded(ev, node)
    if constant is not None:
        return constant
    left, right = ev(node.this), ev(node.expression)
    temporal = _temporal_arith(ev, node, op, left, right)
    if temporal is not None:
        return temporal
    left, right = _numbers(ev, node, left, right)
    if kind(left.type) == "decimal":
        return _decimal(ev, node, op, left, right)
    if kind(left.type) in ("int", "uint"):
        return _checked(ev, node, f"{op}_checked", left, right)
    return getattr(pc, op)(left, right)


def _decimal(ev, node, op: str, left, right):
    """Exact DECIMAL arithmetic (``decimal_values.arithmetic``); DuckDB's errors."""
    try:
        return decimal_values.arithmetic(op, left, right)
    except decimal_values.DecimalError as err:
        raise ev.error(str(err), node) from None


def _temporal_arith(ev, node, op, left, right):
    """Date/time arithmetic, or None if neither side is a date, timestamp or interval."""
    if _interval_rows(op, left, right):
        return _interval_rows_arith(ev, node, op, left, right)
    left, right = _interval_constant(left), _interval_constant(right)
    kinds = {_kind_of(left), _kind_of(right)}
    if not kinds & {"date", "timestamp", "time", "interval", "duration"}:
        return None
    try:
        return _temporal(ev, node, op, left, right)
    except dto.DatetimeError as err:
        raise ev.error(str(err), node) from None
    except pa.ArrowInvalid as err:
        raise ev.error(f"date/time arithmetic out of range ({err})", node) from None


def _temporal(ev, node, op, left, right):
    lk, rk = _kind_of(left), _kind_of(right)
    if "null" in (lk, rk) and {lk, rk} & {"date", "timestamp"}:
        return _null_temporal(op, left, right, lk, rk)
    if "duration" in (lk, rk):
        return _computed_interval(ev, node, op, left, right)
    if lk == "interval" and rk == "interval" and op in ("add", "subtract"):
        return left + (right if op == "add" else -right)
    if op == "multiply" and "interval" in (lk, rk):  # a constant count times an INTERVAL
        return _interval_times(left, right) if lk == "interval" else _interval_times(right, left)
    if op == "add" and (lk, rk) in (("interval", "date"), ("interval", "timestamp"),
                                    ("interval", "time"), ("time", "date")):
        left, right, lk, rk = right, left, rk, lk
    if lk in ("date", "timestamp") and rk == "interval" and op in ("add", "subtract"):
        return dto.add_interval(plain(left), right if op == "add" else -right)
    if lk == "time" and rk == "interval" and op in ("add", "subtract"):
        return dto.add_time_interval(plain(left), right if op == "add" else -right)
    if op == "add" and lk == "date" and rk == "time":
        return dto.date_at_time(plain(left), plain(right))
    if op == "add" and lk in ("int", "uint") and rk == "date":
        left, right, lk, rk = right, left, rk, lk
    if lk == "date" and rk in ("int", "uint") and op in ("add", "subtract"):
        days_type = plain(right).type
        if days_type.bit_width > 32 or days_type == pa.uint32():  # DuckDB: INTEGER's at most
            raise ev.error(f"cannot {op} DATE and {type_name(days_type)}: a DATE takes INTEGER "
                           "days, as in DuckDB (cast the count: CAST(n AS INTEGER))", node)
        days = right if op == "add" else pc.negate_checked(pc.cast(right, pa.int64()))
        return dto.add_days(plain(left), pc.cast(days, pa.int64()))
    if op == "subtract" and lk == "date" and rk == "date":
        return dto.date_diff_days(plain(left), plain(right))
    if op == "subtract" and {lk, rk} <= {"date", "timestamp"}:
        a, b = dto.common_timestamp(plain(left), plain(right))
        return pc.subtract_checked(a, b)
    raise ev.error(f"cannot {op} {_type_name(left)} and {_type_name(right)}", node)


def _interval_times(interval: dto.Interval, count):
    """``INTERVAL * count`` of a constant integer count: an INTERVAL (NULL for NULL)."""
    count_kind = _kind_of(count)
    if count_kind == "null" or count_kind in ("int", "uint") and not count.is_valid:
        return pa.scalar(None, pa.month_day_nano_interval())
    if count_kind not in ("int", "uint"):
        raise dto.DatetimeError(f"cannot multiply INTERVAL and {_type_name(count)}")
    return interval.times(count.as_py())


def _interval_rows(op, left, right) -> bool:
    """Whether ``interval_rows`` / ``interval_factors`` compute ``left op right``: an
    interval per row or a NULL INTERVAL on either side, or an INTERVAL times a number per row
    or a fractional one, or divided by any number."""
    values = (left, right)
    if any(interval_rows.is_rows(v) or _null_interval(v) for v in values):
        return True
    kinds = [interval_rows.kind_of(v) for v in values]
    fractional = op == "divide" or op == "multiply" and ("float" in kinds or "decimal" in kinds)
    if "duration" in kinds:  # ts - ts times a fraction: as DuckDB's days and microseconds
        return fractional
    return "interval" in kinds and (fractional or op == "multiply" and any(
        not isinstance(v, (pa.Scalar, dto.Interval)) for v in values))


def _interval_rows_arith(ev, node, op, left, right):
    """``left op right`` over the rows of the side that has them (a constant of two
    constants); an INTERVAL computed from timestamps as DuckDB's days and microseconds."""
    arrays = [v for v in (left, right) if not isinstance(v, (pa.Scalar, dto.Interval))]
    rows = len(arrays[0]) if arrays else 1
    module = interval_factors if op in ("multiply", "divide") else interval_rows

    def error(text: str):
        return ev.error(text, node)

    left, right = (interval_rows.of_durations(v, rows, error)
                   if interval_rows.kind_of(v) == "duration" else v for v in (left, right))
    answer = module.arithmetic(op, left, right, rows, error)
    if answer is None:
        raise ev.error(f"cannot {op} {_type_name(left)} and {_type_name(right)}", node)
    return answer if arrays else answer[0]


def _null_interval(value) -> bool:
    return isinstance(value, pa.Scalar) and pa.types.is_interval(value.type) and \
        not value.is_valid


def _computed_interval(ev, node, op, left, right):
    """Arithmetic with an INTERVAL computed by ``ts - ts`` (an Arrow duration, whole
    microseconds): a DATE or TIMESTAMP plus or minus it is a TIMESTAMP (of the timestamp's
    zone and unit, TIMESTAMP_S / _MS widening to microseconds as in DuckDB), a TIME plus or
    minus it wraps around midnight, two of them (or one and an INTERVAL constant without
    months) add and subtract, and one times an integer scales it."""
    lk, rk = _kind_of(left), _kind_of(right)
    if op == "add" and rk in ("date", "timestamp", "time", "int", "uint"):
        left, right, lk, rk = right, left, rk, lk
    if lk in ("date", "timestamp", "time") and op in ("add", "subtract") \
            and rk in ("duration", "interval"):
        offsets = as_duration(ev, node, right)
        offsets = offsets if op == "add" else pc.negate_checked(offsets)
        if lk == "time":
            return dto.add_time_micros(plain(left), pc.cast(offsets, pa.int64()))
        stamps = dto.to_timestamp(plain(left))
        if stamps.type.unit in ("s", "ms"):
            stamps = pc.cast(stamps, pa.timestamp("us", tz=stamps.type.tz))
        return pc.add_checked(stamps, pc.cast(offsets, pa.duration(stamps.type.unit)))
    if {lk, rk} <= {"duration", "interval"} and op in ("add", "subtract"):
        function = pc.add_checked if op == "add" else pc.subtract_checked
        return function(as_duration(ev, node, left), as_duration(ev, node, right))
    if op == "multiply" and lk == "duration" and rk in ("int", "uint", "null"):
        micros = pc.multiply_checked(pc.cast(left, pa.int64()), pc.cast(plain(right), pa.int64()))
        return pc.cast(micros, pa.duration("us"))
    raise ev.error(f"cannot {op} {_type_name(left)} and {_type_name(right)}", node)


def as_duration(ev, node, value):
    """An INTERVAL as an Arrow duration of microseconds: a computed one as it is, a constant
    without months as its days and microseconds (one with months has no fixed length:
    unsupported beside a computed one)."""
    if not isinstance(value, dto.Interval):
        return pc.cast(plain(value), pa.duration("us"))
    if value.months:
        raise UnsupportedSql("an INTERVAL of months or years combined with an INTERVAL "
                             f"computed from timestamps is not supported: {node.sql('duckdb')}")
    return pa.scalar(value.as_timedelta(), pa.duration("us"))


def _numbers(ev, node, left, right):
    """Operands of + - * / // %, of one type: two integers of DuckDB's type for them
    (``integer_arithmetic_type``), a NULL of the other side's type."""
    left, right = plain(_not_interval(ev, left, node)), plain(_not_interval(ev, right, node))
    kinds = {kind(left.type), kind(right.type)}
    for value in (left, right):
        if kind(value.type) not in ("int", "uint", "float", "decimal", "null"):
            raise ev.error(f"cannot apply {node.key.upper()} to {left.type} and "
                           f"{right.type}", node)
    if "decimal" in (kind(left.type), kind(right.type)):
        return _decimal_operands(ev, node, left, right)
    target = common_type([left.type, right.type])
    if pa.types.is_null(target):  # NULL + NULL: DuckDB's BIGINT
        target = pa.int64()
    if kinds <= {"int", "uint"}:
        target = integer_arithmetic_type(
            (left.type, right.type), (integer_literal(node.this), integer_literal(node.expression)))
    try:
        left, right = cast_value(left, target), cast_value(right, target)
    except ValueError as err:  # a UBIGINT past BIGINT beside a signed integer
        raise ev.error(f"integer overflow in {node.sql(dialect='duckdb')}: {err}",
                       node) from None
    return ev.coerce_pair(left, right, node, "combine")


def _decimal_operands(ev, node, left, right):
    """A DECIMAL beside an integer (its DECIMAL(w, 0): an integer literal's w is DuckDB's
    INTEGER 10), a NULL (typed as the other side) or another DECIMAL: both DECIMALs, each
    of its own type; beside a DOUBLE or FLOAT both are that (DuckDB's common type)."""
    kinds = {kind(left.type), kind(right.type)}
    if kinds & {"float"}:
        target = common_type([left.type, right.type])
        return ev.coerce_pair(cast_value(left, target), cast_value(right, target), node,
                              "combine")
    out = []
    for value, operand, other in ((left, node.this, right), (right, node.expression, left)):
        if kind(value.type) == "null":
            value = pa.scalar(None, other.type) if isinstance(value, pa.Scalar) else \
                pa.nulls(len(value), other.type)
        elif kind(value.type) != "decimal":
            whole = integer_literal(operand)
            width = integer_literal_type(whole).width if whole is not None else None
            value = decimal_values.cast_decimal(value, decimal_values.decimal_of(
                value.type, width))
        out.append(value)
    return tuple(out)


def _not_interval(ev, value, node):
    if isinstance(value, dto.Interval):
        raise ev.error(INTERVAL_ALONE, node)
    return value


def _checked(ev, node, function: str, left, right):
    try:
        return getattr(pc, function)(left, right)
    except pa.ArrowInvalid as err:
        text = str(err).lower()
        if "divide by zero" in text:
            raise ev.error("division by zero", node) from None
        raise ev.error(f"integer overflow in {node.sql(dialect='duckdb')}", node) from None


def divide(ev, node):
    """DOUBLE division (FLOAT when the operands are: a FLOAT with an integer is a FLOAT); an
    INTERVAL divided by a number (``interval_factors``)."""
    left, right = ev(node.this), ev(node.expression)
    if _interval_rows("divide", left, right):
        return _interval_rows_arith(ev, node, "divide", left, right)
    left, right = _numbers(ev, node, left, right)
    target = pa.float32() if pa.types.is_float32(left.type) else pa.float64()
    return pc.divide(cast_value(left, target), cast_value(right, target))


def integer_divide(ev, node):
    left, right = plain(ev(node.this)), plain(ev(node.expression))
    if {kind(left.type), kind(right.type)} == {"int", "uint"} and pa.types.is_decimal(
            integer_arithmetic_type((left.type, right.type), (
                integer_literal(node.this), integer_literal(node.expression)))):
        return _huge_quotient(ev, node, left, right)  # DuckDB's HUGEINT //: exact
    sides = ((left, node.this), (right, node.expression))
    if any(_huge(ev, v, n) for v, n in sides) and \
            all(kind(v.type) in ("int", "uint") or _huge(ev, v, n) for v, n in sides):
        return _literal_quotient(ev, node, left, right)
    left, right = _numbers(ev, node, left, right)
    if kind(left.type) == "decimal":  # DuckDB: // of DECIMALs is a DOUBLE division
        left, right = cast_value(left, pa.float64()), cast_value(right, pa.float64())
    if kind(left.type) == "float":  # DuckDB: // on DOUBLE is plain division
        _no_zero_divisor(ev, node, right, left)
        return pc.divide(left, right)
    return _checked(ev, node, "divide_checked", left, right)


def _huge_quotient(ev, node, left, right):
    """``left // right`` of a UBIGINT and a signed integer (DuckDB computes it as HUGEINT),
    truncated toward zero, exact: the magnitudes' quotient in uint64, its sign put back, as
    the DECIMAL(20,0) that stands for HUGEINT beside a UBIGINT (``common_type``)."""
    magnitudes = [pc.cast(pc.abs(v) if kind(v.type) == "int" else v, pa.uint64(), safe=False)
                  for v in (left, right)]  # abs(-2**63) wraps to 2**63 as a uint64
    _no_zero_divisor(ev, node, magnitudes[1], left)
    quotient = pc.cast(pc.divide(*magnitudes), pa.decimal128(20, 0))
    negative = [pc.less(v, 0) if kind(v.type) == "int" else pa.scalar(False) for v in (left, right)]
    return pc.if_else(pc.xor(*negative), pc.negate(quotient), quotient)


def _huge(ev, value, node) -> bool:
    """A DuckDB HUGEINT, held here as the DECIMAL(p,0) that stands for it (not a DECIMAL of
    the query's own, which // divides as a DOUBLE, as DuckDB): an integer literal past
    BIGINT and UBIGINT, or integers combined past them (``u - i``, ``least(i, u)`` of a
    UBIGINT and a signed integer)."""
    return pa.types.is_decimal(value.type) and value.type.scale == 0 and \
        _integer_valued(ev, node)


_INTEGER_COMBINATIONS = (exp.Add, exp.Sub, exp.Mul, exp.Neg, exp.Paren, exp.Abs, exp.Greatest,
                         exp.Least, exp.Coalesce, exp.Nullif)


def _integer_valued(ev, node) -> bool:
    """Is ``node`` an integer in DuckDB's types: an integer literal or column, or integers
    combined by + - * (or least / greatest / coalesce / nullif / abs)?"""
    if integer_literal(node) is not None:
        return True
    if isinstance(node, exp.Column):
        return kind(plain(ev(node)).type) in ("int", "uint")
    parts = list(node.iter_expressions()) if isinstance(node, _INTEGER_COMBINATIONS) else []
    return bool(parts) and all(_integer_valued(ev, part) for part in parts)


def _literal_quotient(ev, node, left, right):
    """``left // right`` with a HUGEINT and integers: truncated toward zero, exact, in
    Python's integers (one value a row: a HUGEINT beside a column is rare)."""
    rows = max((len(v) for v in (left, right) if not isinstance(v, pa.Scalar)), default=None)
    pairs = zip(*(_python_ints(v, rows) for v in (left, right)))
    quotients = []
    for a, b in pairs:
        if b == 0 and a is not None:
            raise ev.error("division by zero", node)
        quotients.append(None if a is None or b is None else
                         (abs(a) // abs(b)) * (-1 if (a < 0) != (b < 0) else 1))
    result = pa.array([None if q is None else decimal.Decimal(q) for q in quotients],
                      pa.decimal128(38, 0))
    return result[0] if rows is None else result


def _python_ints(value, rows: int | None) -> list:
    if isinstance(value, pa.Scalar):
        return [value.as_py() if value.is_valid else None] * (rows or 1)
    return [None if v is None else int(v) for v in value.to_pylist()]


def modulo(ev, node):
    left, right = _numbers(ev, node, ev(node.this), ev(node.expression))
    if kind(left.type) == "decimal":
        return _decimal(ev, node, "modulo", left, right)
    if kind(left.type) == "float":
        return float_mod(left, right)
    _no_zero_divisor(ev, node, right, left)
    quotient = _checked(ev, node, "divide_checked", left, right)
    product = _checked(ev, node, "multiply_checked", quotient, right)
    return _checked(ev, node, "subtract_checked", left, product)


def _no_zero_divisor(ev, node, divisor, dividend):
    """DuckDB's error for a zero divisor -- beside a NULL dividend the result is NULL."""
    nought = pa.scalar(0, divisor.type) if kind(divisor.type) in ("int", "uint", "float") else 0
    zero = pc.and_(pc.equal(divisor, nought), pc.is_valid(dividend))  # (a UBIGINT past 2**63)
    if pc.any(zero).as_py() if not isinstance(zero, pa.Scalar) else zero.as_py():
        raise ev.error("division by zero", node)


def _folded(ev, node):
    """A constant DECIMAL expression, computed exactly (``0.06 + 0.01`` is 0.07), as its
    stand-in; None for anything else."""
    try:
        constant = fold(node)
    except decimal_values.DecimalError as err:
        raise ev.error(str(err), node) from None
    return None if constant is None else scalar(constant.units, constant.type)


def negate(ev, node):
    constant = _folded(ev, node)
    if constant is not None:
        return constant
    whole = integer_literal(node)
    if whole is not None and -2**63 <= whole < 2**63:
        return pa.scalar(whole, integer_literal_arrow_type(whole))
    value = _interval_constant(ev(node.this))
    if isinstance(value, dto.Interval) or interval_rows.is_rows(value):
        return negated_interval(value, lambda text: ev.error(text, node))
    if _null_interval(value):
        return value
    value = plain(value)
    if kind(value.type) == "duration":  # an INTERVAL computed by ts - ts
        return pc.negate_checked(value)
    if kind(value.type) not in ("int", "uint", "float", "decimal", "null"):
        raise ev.error(f"cannot negate {value.type}", node)
    if kind(value.type) in ("null", "decimal"):
        return value if kind(value.type) == "null" else pc.negate(value)
    if kind(value.type) == "uint":
        if isinstance(node.this, exp.Literal):  # past BIGINT's least (one in it is above):
            # DuckDB's HUGEINT, here the DECIMAL(38,0) that stands for it
            return pa.scalar(-decimal.Decimal(value.as_py()), pa.decimal128(38, 0))
        raise ev.error("overflow in negation of an unsigned value (cast it to a signed "
                       "type first)", node)  # DuckDB refuses -x of any unsigned x
    try:
        return pc.negate_checked(value)
    except pa.ArrowInvalid:
        raise ev.error(f"integer overflow in {node.sql(dialect='duckdb')}", node) from None


def negated_interval(value, error):
    """``-value`` of an INTERVAL constant or column; a part at its least value (-2**31 months
    or days) is DuckDB's negation overflow."""
    if isinstance(value, dto.Interval):
        try:
            return -value
        except dto.DatetimeError as err:
            raise error(str(err)) from None
    return interval_rows.negated(value, error)


def _null_temporal(op, left, right, lk, rk):
    """A date or timestamp +/- an untyped NULL: NULL of DuckDB's result type (the NULL takes
    the type that fits: days beside a DATE, an interval beside a TIMESTAMP, the same type
    as a DATE subtracted from it)."""
    value = right if lk == "null" else left
    if lk == "null" and op == "subtract":
        target = pa.int64() if rk == "date" else pa.duration("us")
    elif kind(plain(value).type) == "timestamp":  # TIMESTAMP (us), as after +/- INTERVAL
        target = pa.timestamp("us", plain(value).type.tz)
    else:
        target = plain(value).type
    length = len(value) if isinstance(value, (pa.Array, pa.ChunkedArray)) else None
    return pa.scalar(None, target) if length is None else pa.nulls(length, target)


def _interval_constant(value):
    """An Arrow interval scalar (``to_days(3)``) as the constant INTERVAL the rules below
    take (a NULL one stays as it is)."""
    if isinstance(value, pa.Scalar) and pa.types.is_interval(value.type) and value.is_valid:
        return dto.Interval.of_arrow(value)
    return value


def _kind_of(value) -> str:
    return "interval" if isinstance(value, dto.Interval) else kind(value.type)


def _type_name(value) -> str:
    return "INTERVAL" if isinstance(value, dto.Interval) else type_name(value.type)


def float_mod(left, right):
    """``fmod`` (sign of the dividend), NaN for a zero divisor, NULL where either is NULL; of
    the operands' type (FLOAT or DOUBLE)."""
    length = next((len(v) for v in (left, right) if not isinstance(v, pa.Scalar)), 1)
    a, b = broadcast(left, length), broadcast(right, length)
    a_np = pc.fill_null(pc.cast(a, pa.float64()), 0.0).to_numpy()
    b_np = pc.fill_null(pc.cast(b, pa.float64()), 1.0).to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        result = np.fmod(a_np, b_np)  # exact: a FLOAT's is its double's
    valid = pc.and_(pc.is_valid(a), pc.is_valid(b))
    out = pa.array(result, pa.float64(), mask=pc.invert(valid).to_numpy(zero_copy_only=False))
    if pa.types.is_float32(a.type):
        out = out.cast(pa.float32())
    if isinstance(left, pa.Scalar) and isinstance(right, pa.Scalar):
        return out[0]
    return out
