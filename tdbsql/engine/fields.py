"""A field of an opened array as Arrow: dimensions and attributes through ``to_arrow``,
enumerated attributes as dictionary arrays of their labels; and the Arrow type of each field
without reading a tile (what the planner shows sqlglot)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from ..datatypes import arrow_type, type_info
from ..storage.by_identity import ByIdentity
from .arrow_convert import to_arrow


def column_to_arrow(array, name: str, column) -> pa.Array:
    schema = array.schema
    for dim in schema.dimensions:
        if dim.name == name:
            return to_arrow(column, dim.datatype, dim.cell_val_num, name)
    attr = schema.attribute(name)
    values = to_arrow(column, attr.datatype, attr.cell_val_num, name)
    if attr.enumeration_name:
        return _dictionary(array, attr, values)
    return values


def field_arrow_type(array, name: str) -> pa.DataType:
    """The Arrow type ``column_to_arrow`` gives field ``name`` (without reading any tile)."""
    schema = array.schema
    for dim in schema.dimensions:
        if dim.name == name:
            return arrow_type(dim.datatype, dim.cell_val_num)
    attr = schema.attribute(name)
    value_type = arrow_type(attr.datatype, attr.cell_val_num)
    if attr.enumeration_name and pa.types.is_integer(value_type):
        enumeration = array.enumerations[attr.enumeration_name]
        return pa.dictionary(value_type, enumeration_labels(enumeration).type, enumeration.ordered)
    return value_type


def stored_field(steps: list, name: str, array) -> str | None:
    """The array field that column ``name`` of the first of ``steps`` (plan steps, top-down
    to the array's scan) is, through their projections (each a plain column on the way), or
    None."""
    for step in steps:
        if step.projections:
            found = [p.unalias() for p in step.projections if p.alias_or_name == name]
            if len(found) != 1 or not isinstance(found[0], exp.Column):
                return None
            name = found[0].name
    return name if name in array.schema.fields_by_name() else None


def _dictionary(array, attr, indices: pa.Array) -> pa.Array:
    """Enumerated attribute: a dictionary array of the enumeration's labels (in their storage
    type; ``ordered`` as the enumeration says).  An index with no label -- e.g. the fill value
    of an enumerated attribute added by evolution, read in an older fragment -- is NULL."""
    if not pa.types.is_integer(indices.type):
        return indices
    enumeration = array.enumerations[attr.enumeration_name]
    labels = enumeration_labels(enumeration)
    in_range = pc.and_(pc.greater_equal(indices, 0), pc.less(indices, len(labels)))
    if not pc.all(in_range).as_py():
        indices = pc.if_else(in_range, indices, pa.scalar(None, indices.type))
    return pa.DictionaryArray.from_arrays(indices, labels, ordered=enumeration.ordered)


_LABELS = ByIdentity(64)  # enumeration -> its labels


def enumeration_labels(enumeration) -> pa.Array:
    """The labels of an enumeration as an Arrow array (built once per loaded enumeration: a
    scan asks for them on every tile)."""
    return _LABELS.get(enumeration, lambda: _build_labels(enumeration))


def _build_labels(enumeration) -> pa.Array:
    info = type_info(enumeration.datatype)
    if info.kind == "string":
        values = enumeration.values()
        if all(isinstance(v, str) for v in values):
            return pa.array(values, pa.string())
        return pa.array(enumeration.raw_values(), pa.binary())
    if info.kind == "binary":
        return pa.array(enumeration.raw_values(), pa.binary())
    if enumeration.cell_val_num == 1:
        numbers = np.frombuffer(enumeration.data, dtype=info.numpy)
        return pa.array(numbers.astype(bool) if info.kind == "bool" else numbers)
    return pa.array(enumeration.values())
