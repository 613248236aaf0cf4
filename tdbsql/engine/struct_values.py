"""STRUCT values as DuckDB builds and reads them: ``{'a': 1, 'b': 'x'}`` /
``struct_pack(a := 1, b := 'x')``, a field by name (``s.a``, ``s['a']``,
``struct_extract(s, 'a')``: case-insensitive, as DuckDB binds it) or by 1-based position
(``struct_extract_at``), and the VARCHAR text DuckDB prints (``{'a': 1, 'b': x}``).

DuckDB's unnamed structs (``row(1, 'a')``, ``(1, 'a')``: its TUPLE type) are structs whose
fields are called ``element1``, ``element2``, ... (the names DuckDB's Arrow gives them), each
field marked ``UNNAMED`` in its metadata: they print as ``(1, a)``, their fields are reached
by position only.

In: evaluated Arrow values (arrays, chunked arrays, scalars) and the row count.  Out: Arrow
values; a result of constants only stays a scalar.  A NULL struct has NULL fields.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .frame import broadcast
from .list_values import item_text, scalar_if_constant
from .value_types import plain


def is_struct(value) -> bool:
    return pa.types.is_struct(value.type)


def any_struct(values) -> bool:
    return any(is_struct(value) for value in values)


def struct_value(names: list[str], values: list, rows: int, metadata=None):
    """A struct per row whose fields ``names`` (with ``metadata``) hold ``values`` (never
    NULL itself)."""
    values = [plain(v) for v in values]
    length = 1 if all(isinstance(v, pa.Scalar) for v in values) else rows
    columns = [broadcast(v, length) for v in values]
    fields = [pa.field(name, column.type, metadata=metadata)
              for name, column in zip(names, columns)]
    result = pa.StructArray.from_arrays(columns, fields=fields)
    return scalar_if_constant(result, *values)


UNNAMED = {b"tdbsql.field": b"unnamed"}


def unnamed_struct(values: list, rows: int):
    """DuckDB's ``row(v1, v2, ...)``: a struct per row of unnamed fields."""
    return struct_value([f"element{n}" for n in range(1, len(values) + 1)], values, rows,
                        UNNAMED)


def is_unnamed(struct_type: pa.DataType) -> bool:
    """Is ``struct_type`` one of DuckDB's unnamed structs (TUPLE)?"""
    return struct_type.num_fields > 0 and all(f.metadata == UNNAMED for f in struct_type)


def field_position(struct_type: pa.DataType, name: str) -> int | None:
    """The 0-based position of the field called ``name`` (any case), None if none is."""
    wanted = name.lower()
    return next((i for i, f in enumerate(struct_type) if f.name.lower() == wanted), None)


def field_at(value, position: int):
    """The field at 0-based ``position`` of every struct (NULL where the struct is)."""
    if isinstance(value, pa.Scalar):
        return pc.struct_field(broadcast(value, 1), [position])[0]
    if isinstance(value, pa.ChunkedArray):
        value = broadcast(value, len(value))
    return pc.struct_field(value, [position])


def struct_text(value, element_text):
    """Structs as DuckDB's VARCHAR cast prints them: ``{'a': 1, 'b': x y, 'c': [1, 2]}``
    (an unnamed one ``(1, x y, [1, 2])``), the values as a list's elements are
    (``list_values``); NULL stays NULL."""
    rows = 1 if isinstance(value, pa.Scalar) else len(value)
    structs = broadcast(value, rows)
    unnamed = is_unnamed(structs.type)
    pieces = []
    for position, field in enumerate(structs.type):
        key = "" if unnamed else \
            "'" + field.name.replace("\\", "\\\\").replace("'", "\\'") + "': "
        text = item_text(pc.struct_field(structs, [position]), element_text)
        pieces.append(pc.binary_join_element_wise(key, text, ""))
    if pieces:
        joined = pc.binary_join_element_wise(*pieces, ", ")
        result = pc.binary_join_element_wise("(" if unnamed else "{", joined,
                                             ")" if unnamed else "}", "")
    else:
        result = pa.array(np.full(rows, "{}", dtype=object), pa.string())
    result = pc.if_else(structs.is_valid(), result, pa.scalar(None, pa.string()))
    return scalar_if_constant(result, value)
