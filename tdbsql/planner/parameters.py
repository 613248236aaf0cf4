"""Query parameters: ``con.sql("... WHERE k = ? AND day >= ?", [7, date(2024, 1, 1)])``.

A placeholder -- ``?`` (in order), ``$1`` (by number, from 1) or ``$name`` (by name, from a
dict) -- is replaced in the parsed tree by its value as a typed constant, the way DuckDB binds
Python values: ``None`` is NULL, ``bool`` BOOLEAN, ``int`` INTEGER or BIGINT by its size, as a
literal (DECIMAL(38, 0) past them, where DuckDB has HUGEINT), ``float`` DOUBLE, ``str`` VARCHAR,
``Decimal`` DECIMAL, ``date`` / ``datetime`` / ``time`` DATE / TIMESTAMP / TIME, ``bytes`` BLOB,
a list a LIST of such values.  The value is a node of the tree, never SQL text,
so a string parameter cannot change the statement (no injection).  One statement takes one
style of placeholder, and exactly as many values as it names.
"""

from __future__ import annotations

import datetime
import decimal
import math
from collections.abc import Mapping, Sequence

from sqlglot import exp

from ..errors import InterfaceError, SqlError, UnsupportedSql
from .file_tables import file_tables
from .parse import span_of


def bind_parameters(tree: exp.Expression, params, sql: str) -> exp.Expression:
    """``tree`` with each placeholder replaced by its value from ``params`` (a sequence for
    ``?`` / ``$1``, a mapping for ``$name``; None: the statement must have no placeholder)."""
    holders = list(_written_order(tree))
    if not holders:
        if params:
            raise InterfaceError(f"the statement has no parameters, but {len(params)} "
                                 f"{'was' if len(params) == 1 else 'were'} given")
        return tree
    styles = {_style(holder) for holder in holders}
    if len(styles) > 1:
        raise SqlError("a statement takes one style of parameter: ?, $1 or $name, not a mix",
                       sql, span_of(holders[0]))
    style = styles.pop()
    if params is None:
        raise InterfaceError(f"the statement has parameters ({_count(holders, style)}); pass "
                             "their values: con.sql(sql, params)")
    values = _values(holders, style, params)
    for index, holder in enumerate(holders):
        key = index if style == "?" else _name(holder) if style == "$name" else \
            int(_name(holder)) - 1
        holder.replace(constant(values[key], _label(holder, style, index)))
    return file_tables(tree)  # read_parquet(?): the path is known now


def _written_order(node: exp.Expression):
    """The placeholders under ``node`` in the order the SQL writes them: depth first, a
    query's WITH first (sqlglot attaches it after the query it heads)."""
    for key in sorted(node.args, key=lambda key: key != "with_"):
        value = node.args[key]
        for child in value if isinstance(value, list) else [value]:
            if isinstance(child, exp.Placeholder):
                yield child
            elif isinstance(child, exp.Expression):
                yield from _written_order(child)


def _name(holder: exp.Placeholder) -> str:
    """A ``$`` placeholder's name: its number or word."""
    return str(holder.this)


def _style(holder: exp.Placeholder) -> str:
    if holder.this is None:
        return "?"
    return "$1" if _name(holder).isdigit() else "$name"


def _count(holders: list, style: str) -> str:
    if style == "?":
        return f"{len(holders)} ?"
    names = sorted({_name(h) for h in holders}, key=lambda n: (len(n), n))
    return ", ".join("$" + n for n in names)


def _values(holders: list, style: str, params):
    """``params`` checked against the placeholders: a dict for names, a sequence for
    positions, with exactly the values the statement uses."""
    if style == "$name":
        if not isinstance(params, Mapping):
            raise InterfaceError("$name parameters take a dict of values, not "
                                 f"{type(params).__name__}")
        names = {_name(h) for h in holders}
        missing, extra = sorted(names - set(params)), sorted(set(params) - names)
        if missing or extra:
            parts = ([f"no value for {', '.join('$' + n for n in missing)}"] if missing else []) \
                + ([f"no parameter named {', '.join('$' + str(n) for n in extra)}"]
                   if extra else [])
            raise InterfaceError("; ".join(parts))
        return params
    if isinstance(params, (str, bytes, Mapping)) or not isinstance(params, Sequence):
        raise InterfaceError(f"{style} parameters take a list or tuple of values, not "
                             f"{type(params).__name__}")
    wanted = len(holders) if style == "?" else max(int(_name(h)) for h in holders)
    if style == "$1" and min(int(_name(h)) for h in holders) < 1:
        raise InterfaceError("numbered parameters count from $1")
    if len(params) != wanted:
        raise InterfaceError(f"the statement takes {wanted} parameter"
                             f"{'' if wanted == 1 else 's'}, but {len(params)} "
                             f"{'was' if len(params) == 1 else 'were'} given")
    return list(params)


def _label(holder: exp.Placeholder, style: str, index: int) -> str:
    return f"parameter {index + 1}" if style == "?" else f"parameter ${_name(holder)}"


def constant(value, label: str) -> exp.Expression:
    """A Python value as a typed SQL constant (see the module docstring)."""
    if value is None:
        return exp.Null()
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, int):
        if -2**63 <= value < 2**63:
            return _number(str(value))
        if len(str(abs(value))) > 38:
            raise InterfaceError(f"{label}: {value} has more than 38 digits")
        return exp.cast(exp.Literal.string(str(value)), "DECIMAL(38, 0)")  # exact, not DOUBLE
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return exp.cast(exp.Literal.string(repr(value)), "DOUBLE")
        return exp.cast(_number(repr(value)), "DOUBLE")
    if isinstance(value, decimal.Decimal):
        return _decimal(value, label)
    if isinstance(value, str):
        return exp.Literal.string(value)
    if isinstance(value, datetime.datetime):
        if value.tzinfo is not None:
            raise UnsupportedSql(f"{label}: a datetime with a time zone is not supported; pass "
                                 "a naive datetime (UTC)")
        return exp.cast(exp.Literal.string(value.isoformat(sep=" ")), "TIMESTAMP")
    if isinstance(value, datetime.date):
        return exp.cast(exp.Literal.string(value.isoformat()), "DATE")
    if isinstance(value, datetime.time):
        if value.tzinfo is not None:
            raise UnsupportedSql(f"{label}: a time with a time zone is not supported")
        return exp.cast(exp.Literal.string(value.isoformat()), "TIME")
    if isinstance(value, (bytes, bytearray, memoryview)):
        text = "".join(f"\\x{b:02X}" for b in bytes(value))
        return exp.cast(exp.Literal.string(text), "BLOB")
    if isinstance(value, (list, tuple)):
        return exp.Array(expressions=[constant(v, label) for v in value])
    raise InterfaceError(f"{label}: a {type(value).__name__} cannot be a SQL value (None, bool, "
                         "int, float, str, Decimal, date, datetime, time, bytes or a list of "
                         "them can)")


def _number(text: str) -> exp.Expression:
    if text.startswith("-"):
        return exp.Neg(this=exp.Literal.number(text[1:]))
    return exp.Literal.number(text)


def _decimal(value: decimal.Decimal, label: str) -> exp.Expression:
    if not value.is_finite():
        raise InterfaceError(f"{label}: {value} is not a DECIMAL value")
    sign, digits, exponent = value.as_tuple()
    scale = max(-exponent, 0)
    precision = max(len(digits) + max(exponent, 0), scale, 1)
    if precision > 38:
        raise InterfaceError(f"{label}: {value} has more than 38 digits")
    text = format(value, "f")
    return exp.cast(exp.Literal.string(text), f"DECIMAL({max(precision, scale + 1)}, {scale})")
