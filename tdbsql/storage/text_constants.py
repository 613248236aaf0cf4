"""String constants a DELETE compares with a number or BOOLEAN column (``i = '1'``,
``f = 'NaN'``, ``b = 'yes'``), read as DuckDB reads them: cast to the column's type with the
engine's own CAST (``engine.value_types.cast_value``: ``' 1 '``, ``'1.5'`` -> 2, ``'0x10'``,
``'1_000'``, ``'inf'``, ``'t'``), so the commit compares the value DuckDB compares.

A string that does not read as the column's type is DuckDB's conversion error (an
``SqlError`` underlining it: ``Could not convert string 'x' to INT32``).  DuckDB gives the
constants of an IN list or a BETWEEN one type with the column: a string beside a constant of
another type (``i IN ('1.5', 2.5)`` reads '1.5' as a DECIMAL, ``b IN ('t', 0)`` as an
INTEGER, ``r IN ('0.1', 0.1e0)`` on a FLOAT as a DOUBLE) is read in that type instead, which
is refused as ``UnsupportedSql``.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Callable

import pyarrow as pa
from sqlglot import exp

from ..datatypes import Datatype, arrow_value_type, type_info
from ..engine.value_types import cast_value
from ..errors import UnsupportedSql

READ_KINDS = ("int", "float", "bool")


def read_strings(field, values: list, items: list, refuse: Callable) -> list:
    """``values`` with each string read as a value of ``field`` (a number or BOOLEAN field
    holding one value a cell); else unchanged.  ``refuse(item, message)`` raises DuckDB's
    conversion error for the constant ``item`` whose string does not read."""
    if type_info(field.datatype).kind not in READ_KINDS or field.cell_val_num != 1 or \
            not any(isinstance(v, str) for v in values):
        return values
    _refuse_other_types(field, values, items)
    target = arrow_value_type(field.datatype)
    read = []
    for value, item in zip(values, items):
        if not isinstance(value, str):
            read.append(value)
            continue
        try:
            number = cast_value(pa.scalar(value), target).as_py()
        except ValueError as err:
            refuse(item, str(err))
        read.append(int(number) if isinstance(number, bool) else number)
    return read


def _refuse_other_types(field, values: list, items: list) -> None:
    """A string beside a constant DuckDB does not read in the column's type (the module
    docstring)."""
    info = type_info(field.datatype)
    for value, item in zip(values, items):
        if isinstance(value, str):
            continue
        if info.kind == "bool":
            other = not isinstance(unwrapped(item), exp.Boolean)
        elif info.kind == "int":
            other = isinstance(value, (Decimal, float))
        else:  # a FLOAT column beside a DOUBLE constant compares as DOUBLEs
            other = field.datatype == Datatype.FLOAT32 and isinstance(value, float)
        if other:
            raise UnsupportedSql(
                f"DELETE: a string compared with the {info.kind} column {field.name!r} beside "
                f"the constant {item.sql(dialect='duckdb')} is read in their common type, not "
                "the column's; not supported (write the constants without quotes)")


def unwrapped(item):
    """A constant without the parentheses and minus signs around it."""
    while isinstance(item, (exp.Paren, exp.Neg)):
        item = item.this
    return item
