"""Arrow values as DuckDB writes them in JSON (``COPY ... TO 'f.json'``, ``to_json``).

Numbers, booleans and text as JSON; lists as arrays, STRUCTs as objects (a TUPLE, DuckDB's
unnamed struct, as an array), MAPs as objects keyed by their keys' text; every other value
(dates, times, intervals, BLOBs, ...) as its VARCHAR text.  Doubles are written as yyjson
writes them (``json_number``), objects without spaces.
"""

from __future__ import annotations

import decimal
import json
import math

import pyarrow as pa


def json_values(array: pa.Array, text_of) -> list:
    """A column's values as JSON-ready Python values, one a row (a TUPLE as an array)."""
    from .engine.struct_values import is_unnamed

    data_type = array.type
    if pa.types.is_dictionary(data_type):
        return json_values(array.dictionary_decode(), text_of)
    if pa.types.is_map(data_type):
        spans, (keys, items) = _children(array, array.keys, array.items)
        keys, items = text_of(keys).to_pylist(), json_values(items, text_of)
        return [None if not valid else dict(zip(keys[start:end], items[start:end]))
                for valid, start, end in spans]
    if pa.types.is_list(data_type) or pa.types.is_large_list(data_type) or \
            pa.types.is_fixed_size_list(data_type):
        spans, (values,) = _children(array, array.values)
        values = json_values(values, text_of)
        return [None if not valid else values[start:end] for valid, start, end in spans]
    if pa.types.is_struct(data_type):
        fields = [json_values(array.field(i), text_of) for i in range(data_type.num_fields)]
        names = [data_type.field(i).name for i in range(data_type.num_fields)]
        rows = zip(*fields) if fields else ([] for _ in range(len(array)))
        as_json = list if is_unnamed(data_type) else lambda row: dict(zip(names, row))  # TUPLE
        return [as_json(row) if ok else None
                for ok, row in zip(array.is_valid().to_pylist(), rows)]
    if pa.types.is_integer(data_type) or pa.types.is_boolean(data_type) or \
            pa.types.is_string(data_type) or pa.types.is_large_string(data_type) or \
            pa.types.is_null(data_type):
        return array.to_pylist()
    if pa.types.is_decimal(data_type) and data_type.precision > 18:
        # DuckDB's 128-bit DECIMAL: its exact text, as a number
        return [None if v is None else Number(v) for v in text_of(array).to_pylist()]
    if pa.types.is_floating(data_type) or pa.types.is_decimal(data_type):
        # json writes NaN, Infinity, -Infinity as DuckDB does; a DECIMAL(18) as its double
        return [None if v is None else float(v) for v in array.to_pylist()]
    return text_of(array).to_pylist()


class Number(str):
    """A number's JSON text, written as it is (not as a string)."""


def json_text(value) -> str:
    """``value`` (None, bool, int, float, str, list, dict of them) as DuckDB writes JSON: no
    spaces, text as UTF-8, numbers as ``json_number``."""
    if isinstance(value, dict):
        return "{" + ",".join(f"{json_text(str(k))}:{json_text(v)}"
                             for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(map(json_text, value)) + "]"
    if isinstance(value, float):
        return json_number(value)
    if isinstance(value, Number):
        return str(value)
    return json.dumps(value, ensure_ascii=False)


def json_number(value: float) -> str:
    """A double as DuckDB's JSON writer prints it: its shortest digits, plainly written when
    the decimal point falls within 21 digits left or 6 right of them (``100000000000000000000.0``,
    ``0.000001``; whole values end in ``.0``), else in scientific form (``1e21``, ``1e-7``);
    ``NaN``, ``Infinity``, ``-Infinity``."""
    if value != value:
        return "NaN"
    if value in (math.inf, -math.inf):
        return "Infinity" if value > 0 else "-Infinity"
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        return sign + "0.0"
    shortest = decimal.Decimal(repr(abs(value))).normalize().as_tuple()  # repr: shortest
    digits = "".join(map(str, shortest.digits))
    point = len(digits) + shortest.exponent  # the decimal point after this many digits
    if 0 < point <= 21:
        text = digits[:point] + "0" * (point - len(digits)) + "." + (digits[point:] or "0")
    elif -6 < point <= 0:
        text = "0." + "0" * -point + digits
    else:
        text = digits[0] + ("." + digits[1:] if len(digits) > 1 else "") + f"e{point - 1}"
    return sign + text


def _children(array, *children) -> tuple[list[tuple[bool, int, int]], list]:
    """(valid, start, end) of each list (or MAP) row of ``array`` into its values, and the
    ``children`` (its values, or keys and items) cut to the rows' own values: a sliced
    array's children are the whole of them, its offsets not rebased."""
    if pa.types.is_fixed_size_list(array.type):
        size = array.type.list_size
        offsets = [(array.offset + i) * size for i in range(len(array) + 1)]
    else:
        offsets = array.offsets.to_pylist()
    base = offsets[0] if offsets else 0
    cut = [child.slice(base, offsets[-1] - base if offsets else 0) for child in children]
    valid = array.is_valid().to_pylist()
    return [(ok, offsets[i] - base, offsets[i + 1] - base) for i, ok in enumerate(valid)], cut
