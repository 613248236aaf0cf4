"""How the evaluator types, unifies and casts Arrow values, with DuckDB's readings.

In: Arrow values (arrays, chunked arrays, scalars) and Arrow types.  Out: the value "kind"
(``int``, ``uint``, ``float``, ``string``, ``date``...), the type a set of values unifies to
(``common_type``), casts that read strings and floats as DuckDB does (``cast_value``) and the
TRY_CAST pre-pass that turns unconvertible values into NULLs (``null_unconvertible``), and
comparisons where NaN equals NaN and sorts above every number (``compare_plain``).  The
evaluator, the scalar functions and the arithmetic all coerce through these.
"""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import datetime_ops as dto
from . import decimal_values
from ..errors import UnsupportedSql


# --- kinds and unification ------------------------------------------------------------------


def plain(value):
    """Dictionary (enumeration) values decoded to their label type; other values unchanged."""
    if pa.types.is_dictionary(value.type):
        return pc.cast(value, value.type.value_type)
    return value


def bare_null(*values) -> bool:
    """Is one of ``values`` a NULL written as it is (``f(NULL)``, NULL-typed)?  DuckDB
    answers its own NULL-typed NULL to most list, struct and lambda functions then."""
    return any(isinstance(v, pa.Scalar) and pa.types.is_null(v.type) for v in values)


@lru_cache(maxsize=1024)  # 12 type tests are 2.5 us; a query asks dozens of times
def kind(t: pa.DataType) -> str:
    if pa.types.is_dictionary(t):
        return kind(t.value_type)
    for name, test in (("null", pa.types.is_null), ("bool", pa.types.is_boolean),
                       ("uint", pa.types.is_unsigned_integer), ("int", pa.types.is_integer),
                       ("float", pa.types.is_floating), ("decimal", pa.types.is_decimal),
                       ("string", _is_string),
                       ("binary", _is_binary), ("date", pa.types.is_date),
                       ("timestamp", pa.types.is_timestamp), ("duration", pa.types.is_duration),
                       ("time", pa.types.is_time)):
        if test(t):
            return name
    return "other"


_TYPE_NAMES = (
    (pa.types.is_null, '"NULL"'), (pa.types.is_boolean, "BOOLEAN"),
    (pa.types.is_int8, "TINYINT"), (pa.types.is_int16, "SMALLINT"),
    (pa.types.is_int32, "INTEGER"), (pa.types.is_int64, "BIGINT"),
    (pa.types.is_uint8, "UTINYINT"), (pa.types.is_uint16, "USMALLINT"),
    (pa.types.is_uint32, "UINTEGER"), (pa.types.is_uint64, "UBIGINT"),
    (pa.types.is_float32, "FLOAT"), (pa.types.is_float64, "DOUBLE"),
    (lambda t: pa.types.is_string(t) or pa.types.is_large_string(t), "VARCHAR"),
    (lambda t: pa.types.is_binary(t) or pa.types.is_large_binary(t)
     or pa.types.is_fixed_size_binary(t), "BLOB"),
    (pa.types.is_date, "DATE"), (lambda t: pa.types.is_time64(t) and t.unit == "ns", "TIME_NS"),
    (pa.types.is_time, "TIME"),
    (lambda t: pa.types.is_timestamp(t) and t.tz is not None, "TIMESTAMP WITH TIME ZONE"),
    (lambda t: pa.types.is_timestamp(t) and t.unit == "s", "TIMESTAMP_S"),
    (lambda t: pa.types.is_timestamp(t) and t.unit == "ms", "TIMESTAMP_MS"),
    (lambda t: pa.types.is_timestamp(t) and t.unit == "ns", "TIMESTAMP_NS"),
    (pa.types.is_timestamp, "TIMESTAMP"),
    (lambda t: pa.types.is_interval(t) or pa.types.is_duration(t), "INTERVAL"),
)


def storage_integers(t: pa.DataType) -> pa.DataType:
    """The integer type a DATE / TIME / TIMESTAMP / INTERVAL (duration) type stores its counts
    in: int32 for the 32-bit ones (date32, time32), else int64."""
    return pa.int32() if t.bit_width == 32 else pa.int64()


def type_name(t: pa.DataType) -> str:
    """DuckDB's name of the SQL type an Arrow type stands for (``typeof``, ``DESCRIBE``):
    ``INTEGER``, ``TIMESTAMP_MS``, ``DECIMAL(12,3)``, ``DOUBLE[]``, ``DOUBLE[3]`` (a fixed-size
    list is DuckDB's ARRAY); an enumeration is its labels' type, as tdbsql reads it."""
    if pa.types.is_dictionary(t):
        return type_name(t.value_type)
    if pa.types.is_fixed_size_list(t):
        return f"{type_name(t.value_type)}[{t.list_size}]"
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return type_name(t.value_type) + "[]"
    if pa.types.is_decimal(t):
        return f"DECIMAL({t.precision},{t.scale})"
    if pa.types.is_map(t):
        return f"MAP({type_name(t.key_type)}, {type_name(t.item_type)})"
    if pa.types.is_struct(t):
        from .struct_values import is_unnamed

        if is_unnamed(t):
            return "TUPLE(" + ", ".join(type_name(f.type) for f in t) + ")"
        return "STRUCT(" + ", ".join(f"{_field_name(f.name)} {type_name(f.type)}"
                                     for f in t) + ")"
    return next((name for check, name in _TYPE_NAMES if check(t)), str(t).upper())


def _field_name(name: str) -> str:
    """A struct field's name in a type's text, quoted as DuckDB quotes it: unless ASCII
    letters, digits and _ that are no keyword in any case (``"Label"``, ``B``)."""
    from ..planner.duckdb_keywords import KEYWORDS

    plain_name = re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) and name.lower() not in KEYWORDS
    return name if plain_name else '"' + name.replace('"', '""') + '"'


def _is_string(t) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t)


def _is_binary(t) -> bool:
    return pa.types.is_binary(t) or pa.types.is_large_binary(t)


def _common_struct(types: list[pa.DataType], literal_strings: bool) -> pa.DataType | None:
    """Structs of the same field names unify field by field; DuckDB unifies others by name
    (the union of the fields), which tdbsql does not."""
    names = [tuple(f.name.lower() for f in t) for t in types]
    if len(set(names)) != 1:
        raise UnsupportedSql("combining STRUCTs of different fields is not supported: "
                             + ", ".join(type_name(t) for t in types))
    fields = []
    for position, field in enumerate(types[0]):
        member = common_type([t.field(position).type for t in types], literal_strings)
        if member is None:
            return None
        fields.append(field.with_type(member) if all(t.field(position).metadata == field.metadata
                                                     for t in types)
                      else pa.field(field.name, member))
    return pa.struct(fields)


def _common_map(types: list[pa.DataType]) -> pa.DataType | None:
    """Maps unify where their keys' and values' types do, a NULL type (``MAP {}``'s
    ``MAP("NULL", "NULL")``, ``MAP {'a': NULL}``'s values) taking the others', as DuckDB;
    maps of other different key or value types have none here."""
    from .map_values import map_type

    parts = []
    for part in ("key_type", "item_type"):
        typed = {str(getattr(t, part)): getattr(t, part) for t in types
                 if not pa.types.is_null(getattr(t, part))}
        if len(typed) > 1:
            return None
        parts.append(next(iter(typed.values()), pa.null()))
    return map_type(*parts)


def is_numeric(value) -> bool:
    return kind(value.type) in ("int", "uint", "float", "decimal")


def common_type(types: list[pa.DataType], literal_strings: bool = True) -> pa.DataType | None:
    """The type DuckDB would unify ``types`` to (NULL-typed members ignored); None if none.
    A string beside a typed value reads as that type, as DuckDB reads a string literal --
    unless ``literal_strings`` is False (values that are already text: list elements, a
    lambda's result), when text and other types have none."""
    kinds = {kind(t) for t in types} - {"null"}
    real = [t.value_type if pa.types.is_dictionary(t) else t for t in types
            if kind(t) != "null"]
    if not kinds:
        return pa.null()
    if len({str(t) for t in real}) == 1:
        return real[0]
    if all(pa.types.is_list(t) or pa.types.is_large_list(t) for t in real):  # [1] and []
        element = common_type([t.value_type for t in real], literal_strings)
        return None if element is None else pa.list_(element)
    if all(pa.types.is_struct(t) for t in real):
        return _common_struct(real, literal_strings)
    if all(pa.types.is_map(t) for t in real):
        return _common_map(real)
    if kinds <= {"int", "uint", "bool"} and kinds != {"bool"}:  # DuckDB: true is 1
        if kinds <= {"uint", "bool"}:
            return pa.uint64()
        # a UBIGINT beside a signed integer: DuckDB's HUGEINT, here the DECIMAL(20,0) that
        # holds both ranges exactly (BIGINT cannot hold a UBIGINT past 2**63 - 1)
        return pa.decimal128(20, 0) if pa.uint64() in real else pa.int64()
    if kinds == {"duration"}:  # ts - ts of different units
        return pa.duration(dto.finest_unit([t.unit for t in real]))
    if kinds <= {"int", "uint", "decimal"}:  # DuckDB: integers become DECIMAL(w, 0)
        return decimal_values.common_decimal(real)
    if kinds <= {"int", "uint", "float", "decimal"}:
        floats = [t for t in real if kind(t) == "float"]
        single = all(pa.types.is_float32(t) for t in floats)  # a number with FLOAT: FLOAT
        return pa.float32() if single else pa.float64()
    if kinds == {"time"} and all(t.unit != "ns" for t in real):
        # DuckDB reads TIME_SEC / TIME_MS (time32) as its one TIME (microseconds); TIME_NS
        # beside TIME needs an explicit cast there, as here
        return pa.time64("us")
    if kinds == {"string"}:
        return pa.large_string() if any(pa.types.is_large_string(t) for t in real) else pa.string()
    if kinds <= {"date", "timestamp"}:
        stamps = [t for t in real if pa.types.is_timestamp(t)]
        if not stamps:
            return pa.date32()
        zone = next((t.tz for t in stamps if t.tz is not None), None)  # TIMESTAMPTZ wins
        return pa.timestamp(dto.finest_unit([t.unit for t in stamps]), tz=zone)
    # A string next to a typed value is read as that type, as DuckDB reads string literals.
    typed = [t for t in real if kind(t) != "string"]
    if literal_strings and "string" in kinds and typed and common_type(typed) is not None:
        return common_type(typed)
    return None


def integer_literal_arrow_type(value: int) -> pa.DataType:
    """DuckDB's type of an integer literal up to BIGINT's range: INTEGER if it fits, else
    BIGINT (past that the evaluator has its own stand-ins)."""
    return pa.int32() if -2**31 <= value < 2**31 else pa.int64()


def integer_arithmetic_type(types: tuple, literals: tuple) -> pa.DataType:
    """The integer type DuckDB computes ``+ - * // %`` of two integers in (checked: an
    overflow is an error): ``literals`` holds each side's value if it is an integer literal
    (else None), which takes the other side's type when it fits (``tinyint_column + 1`` is a
    TINYINT); then the wider of two signed or two unsigned types; a signed type wider than
    the unsigned one beside it, else BIGINT, and a UBIGINT beside a signed integer is a
    HUGEINT (the DECIMAL(20,0) that holds both ranges, as in ``common_type``)."""
    types = list(types)
    for side, value in enumerate(literals):
        other = types[1 - side]
        if value is not None and literals[1 - side] is None and kind(other) in ("int", "uint") \
                and _fits(value, other):
            types[side] = other
    signed = [t for t in types if kind(t) == "int"]
    unsigned = [t for t in types if kind(t) == "uint"]
    widest = max(types, key=lambda t: t.bit_width)
    if not signed or not unsigned:
        return widest
    if signed[0].bit_width > unsigned[0].bit_width:
        return signed[0]
    return pa.decimal128(20, 0) if unsigned[0] == pa.uint64() else pa.int64()


def _fits(value: int, t: pa.DataType) -> bool:
    info = np.iinfo(t.to_pandas_dtype())
    return int(info.min) <= value <= int(info.max)


def fit_literals(values: list) -> list:
    """Non-negative integer constants next to an unsigned column take the column's type, so
    ``u > 9223372036854775807`` on a UBIGINT column needs no signed common type."""
    if not any(kind(v.type) == "uint" and not isinstance(v, pa.Scalar) for v in values):
        return values
    return [pa.scalar(v.as_py(), pa.uint64())
            if isinstance(v, pa.Scalar) and kind(v.type) == "int" and v.is_valid
            and v.as_py() >= 0 else v for v in values]


def join_strings(parts: list, null_handling: str):
    """Concatenate string values row by row; strings and large strings mixed become large
    strings (Arrow's kernel wants one type, separator included)."""
    target = pa.large_string() if any(pa.types.is_large_string(p.type) for p in parts) \
        else pa.string()
    parts = [pc.cast(p, target) for p in parts]
    return pc.binary_join_element_wise(*parts, pa.scalar("", target),
                                       null_handling=null_handling, null_replacement="")



# --- casts ----------------------------------------------------------------------------------

_NUMBERS = {"bool", "int", "uint", "float", "decimal"}
# source kind -> the kinds DuckDB casts it to (a string or NULL casts to any type)
_CASTS = {
    **{number: _NUMBERS | {"string"} for number in _NUMBERS},
    "date": {"string", "date", "timestamp"},
    "timestamp": {"string", "date", "timestamp", "time"},
    "time": {"string", "time"},
    "binary": {"string", "binary"},
    "duration": {"string", "duration"},
}


def has_cast(source: pa.DataType, target: pa.DataType) -> bool:
    """Does DuckDB have a cast from ``source`` to ``target`` at all?  ``CAST(1 AS DATE)``,
    ``CAST(DATE '2024-01-31' AS INTEGER)`` and ``CAST(TIME '10:00' AS TIMESTAMP)`` have none
    (an error; NULL under TRY_CAST), nor has TIMESTAMP WITH TIME ZONE to TIME (DuckDB's
    needs its ICU extension), nor TIMESTAMP_NS to TIMESTAMP_S; an INTERVAL casts only to
    text and INTERVAL."""
    if pa.types.is_interval(source):
        return kind(target) in ("string", "duration") or pa.types.is_interval(target)
    allowed = _CASTS.get(kind(source))
    if allowed is None:
        return True
    if pa.types.is_timestamp(source) and source.tz is not None and pa.types.is_time(target):
        return False
    if pa.types.is_timestamp(source) and pa.types.is_timestamp(target) and \
            (source.unit, target.unit) == ("ns", "s"):
        return False
    return kind(target) in allowed


# DuckDB's internal type names, which its conversion errors show
_STORAGE_NAMES = {
    pa.int8(): "INT8", pa.int16(): "INT16", pa.int32(): "INT32", pa.int64(): "INT64",
    pa.uint8(): "UINT8", pa.uint16(): "UINT16", pa.uint32(): "UINT32", pa.uint64(): "UINT64",
    pa.float32(): "FLOAT", pa.float64(): "DOUBLE", pa.bool_(): "BOOL",
}


def _struct_cast(value, target: pa.DataType):
    """Structs cast field by field (by position: ``common_type`` unified same names)."""
    if value.type.num_fields != target.num_fields:
        raise ValueError(f"cannot cast {type_name(value.type)} to {type_name(target)}")
    scalar = isinstance(value, pa.Scalar)
    structs = pa.repeat(value, 1) if scalar else \
        (value.combine_chunks() if isinstance(value, pa.ChunkedArray) else value)
    fields = [cast_value(pc.struct_field(structs, [i]), field.type)
              for i, field in enumerate(target)]
    result = pa.StructArray.from_arrays(fields, fields=list(target), mask=structs.is_null())
    return result[0] if scalar else result


def cast_value(value, target: pa.DataType):
    """Cast with DuckDB's readings: ISO strings to DATE/TIMESTAMP, floats to ints rounding half
    to even, numeric strings to ints half away from zero, ``'yes'`` / ``'f'`` ... to
    booleans.  Raises ``ValueError`` when a value does not convert, naming it as DuckDB does
    (``Could not convert string 'x' to INT32``)."""
    value = plain(value)
    if value.type == target or pa.types.is_null(target):
        return value
    if pa.types.is_null(value.type):
        return pa.scalar(None, target) if isinstance(value, pa.Scalar) else \
            pa.nulls(len(value), target)
    if pa.types.is_struct(target) and pa.types.is_struct(value.type):
        return _struct_cast(value, target)
    source = kind(value.type)
    if source == "decimal" or pa.types.is_decimal(target):
        return _decimal_cast(value, target)
    if pa.types.is_time(target):
        return _to_time(value, target)
    if source == "string" and isinstance(value, pa.Scalar) and (
            kind(target) in ("date", "timestamp") or pa.types.is_interval(target)):
        return cast_string_scalar(value, target)
    if source == "string" and kind(target) in ("date", "timestamp"):
        return _strings_to_stamps(value, target)
    if source == "string" and pa.types.is_boolean(target):
        return _string_to_bool(value)
    if source == "string" and pa.types.is_integer(target):
        return _string_to_int(value, target)
    if source == "string" and _is_binary(target):
        return _string_to_blob(value, target)
    if source == "timestamp" and pa.types.is_timestamp(target) and \
            dto.finest_unit((value.type.unit, target.unit)) != target.unit:
        return dto.to_coarser_unit(value, target)
    if source == "float" and target == pa.float32() and \
            first_unconvertible(value, target) is not None:
        raise ValueError(_conversion_error(value, target))
    original = value
    if source == "float" and pa.types.is_integer(target):
        value = pc.round(value, round_mode="half_to_even")  # DuckDB: DOUBLE -> int rounds to even
    if source == "string" and kind(target) == "float":
        value = float_text(value)
    elif source == "string" and kind(target) != "string":
        value = pc.utf8_trim_whitespace(value)
    # an integer past 2**53 rounds to the nearest double, as DuckDB's BIGINT -> DOUBLE
    rounds = source in ("int", "uint") and pa.types.is_floating(target)
    try:
        return pc.cast(value, target, safe=not rounds)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as err:
        raise ValueError(_conversion_error(original, target) or _first_line(err)) from None


def _decimal_cast(value, target: pa.DataType):
    """Casts from and to DECIMAL (decimal128) as DuckDB does them: DECIMAL -> DOUBLE
    correctly rounded (``decimal_values.to_double``), -> integers and other DECIMALs rounding
    half away from zero, -> VARCHAR with its scale's digits (``1.50``, ``0.0000000000``),
    -> BOOLEAN nonzero; integers, strings and doubles -> DECIMAL through
    ``decimals.to_decimal``."""
    source = kind(value.type)
    try:
        if source != "decimal" or pa.types.is_decimal(target):
            from .decimals import DecimalType, to_decimal  # decimals imports this module
            if source in ("int", "uint", "decimal") and pa.types.is_decimal(target):
                return decimal_values.cast_decimal(value, target)
            result, problem = to_decimal(value, DecimalType(target.precision, target.scale))
            if problem is not None:
                raise ValueError(problem)
            return result
        if kind(target) == "float":
            return pc.cast(decimal_values.to_double(value), target)
        if kind(target) in ("int", "uint"):
            rounded = decimal_values.to_integer(value, pa.int64() if kind(target) == "int"
                                                else pa.uint64())
            return cast_value(rounded, target)
        if pa.types.is_boolean(target):
            return pc.not_equal(value, pa.scalar(0, pa.int64()))
        if pa.types.is_string(target):
            return decimal_values.to_text(value)
        return pc.cast(value, target)
    except decimal_values.DecimalError as err:
        raise ValueError(str(err)) from None
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as err:
        raise ValueError(_first_line(err)) from None


def _conversion_error(value, target: pa.DataType) -> str | None:
    """DuckDB's message for the first value of ``value`` that does not convert to ``target``
    (a string that does not read, a number out of the target's range), or None."""
    if kind(value.type) in ("date", "timestamp"):
        return None  # past a finer unit's range: Arrow's words name the count (no value does)
    name = _STORAGE_NAMES.get(target, type_name(target))
    bad = first_unconvertible(value, target)
    if bad is None:
        return None
    if kind(value.type) == "string" and kind(target) in ("date", "timestamp"):
        try:
            cast_string_scalar(pa.scalar(bad), target)
        except ValueError as err:  # DuckDB's words for a date or timestamp it cannot read
            return str(err)
    if kind(value.type) == "string":
        return f"Could not convert string '{bad}' to {name}"
    return (f"Type {_STORAGE_NAMES.get(value.type, type_name(value.type))} with value {bad} "
            f"can't be cast because the value is out of range for the destination type {name}")


def first_unconvertible(value, target: pa.DataType):
    """The first value of ``value`` that does not convert to ``target``, as a Python value;
    None if every one does."""
    return _first_null_made(value, null_unconvertible(value, target))


def _first_null_made(value, checked):
    """The first value of ``value`` that is NULL in ``checked`` (its TRY_CAST reading) but
    not in ``value``, as a Python value; None if there is none."""
    if isinstance(value, pa.Scalar):
        return value.as_py() if value.is_valid and not checked.is_valid else None
    lost = pc.filter(value, pc.and_(pc.is_valid(value), pc.is_null(checked)))
    return lost[0].as_py() if len(lost) else None


def cast_string_scalar(value: pa.Scalar, target: pa.DataType):
    """A string constant read as a DATE, TIMESTAMP or INTERVAL (``'2 days'``) as DuckDB
    reads it."""
    if not value.is_valid:
        return pa.scalar(None, target)
    try:
        if pa.types.is_date(target):
            return pa.scalar(dto.parse_date(value.as_py()), target)
        if pa.types.is_interval(target):
            return dto.parse_interval(value.as_py()).as_arrow()
        if target.unit == "ns":
            return _nanosecond_stamp(value.as_py(), target)
        micros = dto.parse_timestamp(value.as_py(), zone=target.tz is not None)
        if target.unit in ("s", "ms"):  # DuckDB rounds to the unit, halves away from zero
            per = 1_000_000 if target.unit == "s" else 1_000
            ticks, rest = divmod(abs(micros), per)
            ticks += 2 * rest >= per
            return pa.scalar(ticks if micros >= 0 else -ticks, target)
        return pc.cast(pa.scalar(micros, pa.timestamp("us", target.tz)), target)
    except dto.DatetimeError as err:
        raise ValueError(str(err)) from None


def _nanosecond_stamp(text: str, target: pa.DataType) -> pa.Scalar:
    """A string constant read as a TIMESTAMP_NS: nanoseconds kept, as DuckDB keeps them."""
    nanos = dto.parse_timestamp_ns(text, zone=target.tz is not None)
    if not -2**63 <= nanos < 2**63 or abs(nanos) == 2**63 - 1:  # DuckDB's infinities
        raise ValueError(f"Could not convert string '{text}' to INT64")  # DuckDB's words
    return pa.scalar(nanos, target)


def _strings_to_stamps(value, target: pa.DataType):
    """Strings CAST to DATE / TIMESTAMP (``read_stamps``); the first that does not read
    raises DuckDB's words for it."""
    stamps = read_stamps(value, target)
    bad = _first_null_made(value, stamps)
    if bad is not None:
        cast_string_scalar(pa.scalar(bad), target)  # raises DuckDB's words for it
        raise ValueError(f"Could not convert string '{bad}' to {type_name(target)}")
    return stamps


# what Arrow's string cast reads (spaces around trimmed) as DuckDB does; other strings are
# read by datetime_ops (a TIMESTAMP's date alone takes no trailing space, a DATE's does)
_PLAIN_STAMP = r"^\s*\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?\s*)?$"
_PLAIN_DATE = r"^\s*\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?)?\s*$"


def read_stamps(value, target: pa.DataType):
    """Strings read as ``target`` DATEs / TIMESTAMPs as DuckDB reads them; NULL where one
    does not read.  Plain ISO strings take Arrow's cast; the rest (UTC offsets, zone names,
    ``24:00:00``, single-digit fields, nanoseconds) are read once per distinct string by
    ``datetime_ops``."""
    if isinstance(value, pa.Scalar):
        return _read_stamp(value.as_py(), target) if value.is_valid else pa.scalar(None, target)
    if isinstance(value, pa.ChunkedArray):
        value = value.combine_chunks() if value.num_chunks != 1 else value.chunk(0)
        return pa.chunked_array([read_stamps(value, target)], target)
    value = plain(value)
    text = pc.utf8_trim_whitespace(value)
    plain_shape = pc.fill_null(pc.match_substring_regex(
        value, _PLAIN_DATE if pa.types.is_date(target) else _PLAIN_STAMP), False)
    try:
        stamps = pc.cast(pc.if_else(plain_shape, text, pa.scalar(None, text.type)), target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # e.g. '2024-02-30'
        plain_shape = pa.array(np.zeros(len(value), bool))
        stamps = pa.nulls(len(value), target)
    others = pc.and_(pc.is_valid(value), pc.invert(plain_shape))
    if not pc.any(others).as_py():
        return stamps
    distinct = pc.unique(pc.filter(value, others))
    read = pa.array([_read_stamp(text, target) for text in distinct.to_pylist()], target)
    return pc.if_else(others, pc.take(read, pc.index_in(value, value_set=distinct)), stamps)


def _read_stamp(text: str, target: pa.DataType):
    try:
        return cast_string_scalar(pa.scalar(text), target)
    except (ValueError, pa.ArrowInvalid):
        return pa.scalar(None, target)


def _to_time(value, target: pa.DataType):
    """CAST to TIME as DuckDB: strings read as a time of day (``dto.parse_time``), a TIMESTAMP
    its time of day, a TIME itself; anything else (numbers, DATE, TIMESTAMP WITH TIME ZONE)
    is refused."""
    source = kind(value.type)
    if source == "string":
        times = read_times(value, target)
        bad = _first_null_made(value, times)
        if bad is not None:  # raises DuckDB's words for the first that does not read
            dto.parse_time_ns(bad) if target.unit == "ns" else dto.parse_time(bad)
        return times
    if source == "timestamp" and value.type.tz is None and value.type.unit == "ns":
        value = dto.to_coarser_unit(value, pa.timestamp("us"))  # rounded, as DuckDB's
    if source == "time" and value.type.unit == "ns" and target.unit != "ns":
        return dto.rounded_to_micros(value, target)  # 23:59:59.9999995 is 24:00:00
    if source == "time" or (source == "timestamp" and value.type.tz is None):
        return pc.cast(value, target, safe=False)  # nanoseconds are cut, as DuckDB does
    raise ValueError(f"there is no cast from {type_name(value.type)}")


def read_times(value, target: pa.DataType):
    """Strings read as TIMEs (``dto.parse_time``), once per distinct string; NULL where one
    does not read."""
    if isinstance(value, pa.Scalar):
        return read_times(pa.array([value.as_py()], value.type), target)[0]
    if isinstance(value, pa.ChunkedArray):
        value = value.combine_chunks() if value.num_chunks != 1 else value.chunk(0)
        return pa.chunked_array([read_times(value, target)], target)
    distinct = pc.unique(value)
    unit = "ns" if target.unit == "ns" else "us"  # a TIME_NS keeps its nanoseconds
    ticks = pa.array([None if text is None else _read_time(text, unit)
                      for text in distinct.to_pylist()], pa.int64())
    times = dto.micros_as_times(ticks, target, unit)
    return pc.take(times, pc.index_in(value, value_set=distinct))


def _read_time(text: str, unit: str):
    try:
        return dto.parse_time_ns(text) if unit == "ns" else dto.parse_time(text)
    except dto.DatetimeError:
        return None


def _string_to_int(value, target):
    """Strings read as integers as DuckDB reads them (``read_integers``); a value that does
    not read, or falls outside the target's range, is DuckDB's conversion error."""
    result = read_integers(value, target)
    bad = _first_null_made(value, result)
    if bad is not None:
        raise ValueError(f"Could not convert string '{bad}' to {_STORAGE_NAMES[target]}")
    return result


# DuckDB's StringUtil::CharacterIsSpace: what it skips around a number (not Unicode spaces)
_SPACES = " \t\n\v\f\r"
_PLAIN_INTEGER = r"^[ \t\n\v\f\r]*[+-]?[0-9]+[ \t\n\v\f\r]*$"
_DIGITS = r"[0-9](?:_?[0-9])*"  # an underscore only between two digits, as in DuckDB
# (DuckDB's exponent may end in a bare point, '1e1.', unless it has an underscore)
_DECIMAL = re.compile(
    rf"([+-]?)({_DIGITS})?(?:\.({_DIGITS})?)?(?:[eE](?:([+-]?[0-9]+)\.|([+-]?{_DIGITS})))?")
_BASED = {"x": (re.compile(r"[0-9a-fA-F](?:_?[0-9a-fA-F])*"), 16),
          "b": (re.compile(r"[01](?:_?[01])*"), 2)}


def read_integers(value, target: pa.DataType):
    """Strings read as ``target`` integers the way DuckDB's string-to-integer cast reads them;
    NULL where one does not read or is out of range.  Plain digit strings take Arrow's exact
    cast; anything else (``'2.5'``, ``'1e3'``, ``'0x10'``, ``'1_000'``) is read once per
    distinct string by ``_read_integer``."""
    if isinstance(value, pa.Scalar):
        return pa.scalar(_read_integer(value.as_py(), target) if value.is_valid else None,
                         target)
    if isinstance(value, pa.ChunkedArray):
        value = value.combine_chunks() if value.num_chunks != 1 else value.chunk(0)
        return pa.chunked_array([read_integers(value, target)], target)
    plain_digits = pc.match_substring_regex(value, _PLAIN_INTEGER)
    if pc.all(pc.fill_null(plain_digits, True)).as_py():
        try:
            return pc.cast(pc.utf8_trim(value, _SPACES), target)
        except pa.ArrowInvalid:
            pass  # out of range somewhere: read one by one
    distinct = pc.unique(value)
    numbers = pa.array([None if text is None else _read_integer(text, target)
                        for text in distinct.to_pylist()], target)
    return pc.take(numbers, pc.index_in(value, value_set=distinct))


def _read_integer(text: str, target: pa.DataType):
    """DuckDB's TryIntegerCast for one string, or None: spaces skipped around the number
    (before only, for hex); ``0x`` / ``0b`` prefixes without a sign; underscores between
    digits; a fraction and an exponent (a 16-bit integer) rounding half away from zero, the
    digits before the point held in a BIGINT (UBIGINT for UBIGINT) first; an unsigned target
    takes a ``-`` only before zeros (``'-0'``)."""
    info = np.iinfo(target.to_pandas_dtype())
    text = text.lstrip(_SPACES)
    if text[:1] == "-" and info.min == 0:
        return 0 if len(text) > 1 and set(text[1:]) == {"0"} else None
    if len(text) > 2 and text[0] == "0" and text[1] in "xXbB":
        pattern, base = _BASED[text[1].lower()]
        if not pattern.fullmatch(text, 2):
            return None
        number = int(text[2:].replace("_", ""), base)
        return number if number <= info.max else None
    match = _DECIMAL.fullmatch(text.rstrip(_SPACES))
    if match is None:
        return None
    sign, whole, fraction, pointed, exponent = match.groups()
    exponent = pointed or exponent
    whole = (whole or "").replace("_", "")
    fraction = (fraction or "").replace("_", "")
    if not whole and not fraction:
        return None
    if exponent is not None:
        exponent = int(exponent.replace("_", ""))
        store = 2**64 - 1 if info.max == 2**64 - 1 else 2**63 - (sign != "-")
        if int(whole or "0") > store or not -2**15 <= exponent < 2**15:
            return None
    digits = int(whole + fraction)
    scale = len(fraction) - (exponent or 0)  # the value is digits / 10**scale
    if scale <= 0:
        if digits and -scale > 40:
            return None
        number = digits * 10**-scale
    elif scale > len(str(digits)) + 1:
        number = 0
    else:
        number, rest = divmod(digits, 10**scale)
        number += 2 * rest >= 10**scale
    number = -number if sign == "-" else number
    return number if info.min <= number <= info.max else None


_TRUE_WORDS = pa.array(["true", "t", "yes", "y", "1"])
_FALSE_WORDS = pa.array(["false", "f", "no", "n", "0"])


def _read_bool(value):
    """Strings read as booleans as DuckDB reads them (any case, no spaces around); NULL
    where one does not read."""
    lowered = pc.utf8_lower(value)
    return pc.if_else(pc.is_in(lowered, value_set=_TRUE_WORDS), True,
                      pc.if_else(pc.is_in(lowered, value_set=_FALSE_WORDS), False,
                                 pa.scalar(None, pa.bool_())))


def _string_to_bool(value):
    result = _read_bool(value)
    bad = _first_null_made(value, result)
    if bad is not None:
        raise ValueError(f"Could not convert string '{bad}' to BOOL")
    return result


_HEX_ESCAPE = re.compile(r"\\x([0-9A-Fa-f]{2})")


def _string_to_blob(value, target: pa.DataType):
    """Strings as DuckDB reads them as a BLOB: ASCII characters are their bytes, ``\\xAA``
    is the byte 0xAA; any other backslash, or a character past ASCII, is an error."""
    if isinstance(value, pa.Scalar):
        return _string_to_blob(pa.array([value.as_py()], value.type), target)[0]
    special = pc.or_(pc.match_substring(value, "\\"), pc.invert(pc.string_is_ascii(value)))
    if not pc.any(special).as_py():
        return pc.cast(value, target)
    return pa.array([None if text is None else blob_of(text) for text in value.to_pylist()],
                    target)


def blob_of(text: str) -> bytes:
    if not text.isascii():
        raise ValueError(f"Invalid byte encountered in STRING -> BLOB conversion of string "
                         f"{text!r}: all non-ascii characters must be escaped with hex codes "
                         "(e.g. \\xAA)")
    out, at = bytearray(), 0
    for found in _HEX_ESCAPE.finditer(text):
        out += _plain_bytes(text[at:found.start()], text)
        out.append(int(found.group(1), 16))
        at = found.end()
    return bytes(out + _plain_bytes(text[at:], text))


def _plain_bytes(piece: str, text: str) -> bytes:
    if "\\" in piece:
        raise ValueError(f"Invalid hex escape code encountered in string -> blob conversion "
                         f"of string {text!r}")
    return piece.encode("ascii")


def _first_line(err: Exception) -> str:
    return str(err).strip().splitlines()[0]


def valid_rows(values) -> np.ndarray:
    """Per row of an Arrow array, whether it holds a value (a numpy bool array)."""
    return np.asarray(values.is_valid().to_numpy(zero_copy_only=False), dtype=bool)


def string_buffers(values: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """A string (or binary) array's bytes (uint8) and its own offsets into them (int64,
    a writable copy)."""
    large = pa.types.is_large_string(values.type) or pa.types.is_large_binary(values.type)
    offsets = np.frombuffer(values.buffers()[1], np.int64 if large else np.int32)
    data = values.buffers()[2]
    return (np.frombuffer(data, np.uint8) if data is not None else np.zeros(0, np.uint8),
            offsets[values.offset:values.offset + len(values) + 1].astype(np.int64))


def null_rows(values) -> np.ndarray:
    """Per row of an Arrow array, whether it is NULL (a numpy bool array)."""
    return np.asarray(values.is_null().to_numpy(zero_copy_only=False), dtype=bool)


def null_like(value, t: pa.DataType):
    """All-NULL value of type ``t`` shaped like ``value``."""
    if isinstance(value, pa.Scalar):
        return pa.scalar(None, t)
    return pa.nulls(len(value), t)



def float_text(value):
    """Strings as DuckDB reads them as a DOUBLE: surrounding whitespace dropped, and an
    underscore between two digits too (``'1_000.5'``, ``'1e1_0'``; two passes, as
    ``'1_2_3'`` has underscores that share a digit).  Other underscores stay and fail."""
    text = pc.utf8_trim_whitespace(value)
    for _ in range(2):
        text = pc.replace_substring_regex(text, r"(\d)_(\d)", r"\1\2")
    return text


def null_unconvertible(value, target: pa.DataType):
    """TRY_CAST: NULL where the value would not convert (checked with vectorised tests)."""
    source = kind(value.type)
    if source == "string" and kind(target) in ("int", "uint"):
        return read_integers(value, target)  # already the target type: the cast keeps it
    if source == "string" and kind(target) == "float":
        text = float_text(value)
        number = r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$"
        ok = pc.or_(pc.match_substring_regex(text, number),
                    pc.match_substring_regex(text, r"^[+-]?(inf|infinity|nan)$",
                                             ignore_case=True))
        return pc.if_else(ok, text, pa.scalar(None, value.type))
    if source == "string" and kind(target) in ("date", "timestamp"):
        return read_stamps(value, target)  # already the target type: the cast keeps it
    if source == "string" and pa.types.is_boolean(target):
        return pc.if_else(pc.is_valid(_read_bool(value)), value, pa.scalar(None, value.type))
    if source == "string" and kind(target) == "time":
        return read_times(value, target)  # already the target type: the cast keeps it
    if source == "string" and _is_binary(target):  # ASCII but backslashes, or \xAA escapes
        ok = pc.match_substring_regex(value, r"^(?:[\x00-\x5b\x5d-\x7f]|\\x[0-9A-Fa-f]{2})*$")
        return pc.if_else(ok, value, pa.scalar(None, value.type))
    if source in ("int", "uint") and kind(target) in ("int", "uint"):
        return _null_out_of_int_range(value, target)
    if source == "float" and kind(target) in ("int", "uint"):
        as_float = pc.round(pc.cast(value, pa.float64()), round_mode="half_to_even")
        return _null_out_of_range(value, as_float, target)
    if source == "float" and target == pa.float32():
        return _null_past_float32(value)
    if source in ("date", "timestamp") and pa.types.is_timestamp(target):
        return _null_past_finer_unit(value, target)
    return value


def _null_out_of_int_range(value, target):
    """Integers outside ``target``'s range made NULL, compared exactly (not through a
    DOUBLE, which rounds 2**63 - 1 up to 2**63)."""
    info = np.iinfo(target.to_pandas_dtype())
    wide = pa.uint64() if kind(value.type) == "uint" else pa.int64()
    bounds = np.iinfo(wide.to_pandas_dtype())
    value = pc.cast(value, wide)
    ok = pc.and_(pc.greater_equal(value, pa.scalar(max(info.min, bounds.min), wide)),
                 pc.less_equal(value, pa.scalar(min(info.max, bounds.max), wide)))
    return pc.if_else(pc.fill_null(ok, False), value, pa.scalar(None, wide))


def _null_past_finer_unit(value, target):
    """DATEs / TIMESTAMPs a finer TIMESTAMP unit cannot hold (TIMESTAMP_NS's years 1677 to
    2262) made NULL."""
    per_second = dto.PER_SECOND[target.unit]
    factor = per_second * 86_400 if kind(value.type) == "date" else \
        per_second // dto.PER_SECOND[value.type.unit]
    if factor <= 1:
        return value
    ticks = pc.cast(value, pa.int32() if kind(value.type) == "date" else pa.int64())
    bound = (2**63 - 1) // factor
    ok = pc.and_(pc.greater_equal(ticks, -bound), pc.less_equal(ticks, bound))
    return pc.if_else(pc.fill_null(ok, False), value, pa.scalar(None, value.type))


def _null_past_float32(value):
    """Finite DOUBLEs that round past FLOAT's range made NULL (DuckDB's cast error); the
    infinities and NaN convert."""
    narrowed = pc.cast(value, pa.float32(), safe=False)
    ok = pc.or_(pc.is_inf(value), pc.invert(pc.is_inf(narrowed)))
    return pc.if_else(ok, value, pa.scalar(None, value.type))


def _null_out_of_range(value, as_float, target):
    info = np.iinfo(target.to_pandas_dtype())
    ok = pc.and_(pc.greater_equal(as_float, float(info.min)),
                 pc.less(as_float, float(info.max) + 1.0))
    return pc.if_else(pc.fill_null(ok, False), value, pa.scalar(None, value.type))


# --- comparisons -----------------------------------------------------------------------------


def is_dictionary(value) -> bool:
    return not isinstance(value, (pa.Scalar, dto.Interval)) and pa.types.is_dictionary(value.type)


def on_values(value, function, result_type: pa.DataType):
    """``function`` applied to a value's distinct labels when it is dictionary-encoded (then
    expanded through the indices), else to the value itself."""
    if isinstance(value, pa.ChunkedArray) and pa.types.is_dictionary(value.type):
        chunks = [on_values(chunk, function, result_type) for chunk in value.chunks]
        return pa.chunked_array(chunks, type=chunks[0].type if chunks else result_type)
    if isinstance(value, pa.DictionaryArray):
        return pc.take(function(value.dictionary), value.indices)
    return function(plain(value))


def compare_plain(op: str, left, right):
    """A comparison where NaN equals NaN and is greater than every number (DuckDB);
    INTERVALs as DuckDB compares them (``interval_compare``)."""
    if pa.types.is_interval(left.type):
        from .interval_compare import compare_intervals  # (it imports this module)

        return compare_intervals(op, left, right)
    result = getattr(pc, op)(left, right)
    if kind(left.type) != "float" or not (_has_nan(left) or _has_nan(right)):
        return result
    left_nan, right_nan = pc.is_nan(left), pc.is_nan(right)
    both = pc.and_kleene(left_nan, right_nan)
    if op in ("equal", "not_equal"):
        equal = pc.or_kleene(pc.equal(left, right), both)
        return equal if op == "equal" else pc.invert(equal)
    if op in ("greater", "greater_equal"):
        return compare_plain("less" if op == "greater" else "less_equal", right, left)
    below = pc.or_kleene(pc.less(left, right), pc.and_kleene(pc.invert(left_nan), right_nan))
    if op == "less":
        return below
    return pc.or_kleene(below, pc.or_kleene(pc.equal(left, right), both))


def _has_nan(value) -> bool:
    if isinstance(value, pa.Scalar):
        return value.is_valid and value.as_py() != value.as_py()
    return bool(pc.any(pc.is_nan(value)).as_py())


def nan_members(found, values, items, target):
    """pc.is_in never matches NaN; DuckDB's NaN = NaN does."""
    if kind(target) != "float" or not any(i.as_py() != i.as_py() for i in items):
        return found
    return pc.or_(found, pc.fill_null(pc.is_nan(values), False))


def comparable_pair(left, right, what: str = "compare"):
    """``left`` and ``right`` (arrays or scalars) in the one type SQL compares them in:
    DuckDB's coercions (``common_type``; a literal fitted to the other side's type; a FLOAT
    beside a DOUBLE constant compares as a DOUBLE, beside a DECIMAL one as a FLOAT).
    ``ValueError`` naming the problem when they have none or a value does not fit it."""
    left, right = fit_literals([plain(left), plain(right)])
    target = common_type([left.type, right.type])
    if target is None:
        raise ValueError(f"cannot {what} {left.type} and {right.type}")
    if pa.types.is_null(target):
        target = pa.bool_()  # NULL = NULL: any type gives NULL
    return cast_value(left, target), cast_value(right, target)


def numbered_bool(value, other: pa.DataType):
    """A BOOLEAN tested for equality (``=``, ``<>``, IN, IS DISTINCT FROM, CASE b WHEN) with a
    DOUBLE, FLOAT or DECIMAL of type ``other``: as that number, true 1 and false 0, as DuckDB
    casts it (ordering the two is DuckDB's error, and ours); other values as they are."""
    if kind(value.type) != "bool" or kind(other) not in ("float", "decimal"):
        return value
    if kind(other) == "decimal":  # a digit before the point for the 1
        other = pa.decimal128(max(other.precision, other.scale + 1), other.scale)
    return cast_value(cast_value(value, pa.int64()), other)


def nanosecond_time(value, other: pa.DataType):
    """A TIME tested for equality (``=``, ``<>``) with a TIME_NS: as a TIME_NS, exactly, as
    DuckDB compares them (ordering the two is DuckDB's error, and ours); other values as
    they are."""
    if not (pa.types.is_time(value.type) and pa.types.is_time64(other) and other.unit == "ns"
            and value.type != other):
        return value
    return pc.cast(value, other)


def unsigned_zeros(values):
    """Float values with -0.0 made 0.0 (``x + 0.0``), others as they are: Arrow's ``is_in``
    and ``unique`` hash a float's bits, and SQL holds -0.0 = 0.0."""
    return pc.add(values, 0.0) if pa.types.is_floating(values.type) else values
