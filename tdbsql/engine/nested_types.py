"""Arrow types looked into at every depth: does a type, or a type that a list, struct, map or
dictionary of it holds (its elements, fields, keys and items, labels), pass a test?

``holds(t, pa.types.is_interval)`` is how the result's ways out find the INTERVALs they
convert themselves, and how a recursive UNION finds the rows it cannot compare as tuples.
"""

from __future__ import annotations

from typing import Callable

import pyarrow as pa


def holds(type_: pa.DataType, test: Callable[[pa.DataType], bool]) -> bool:
    """Does ``test`` hold for ``type_`` or for a type inside it, at any depth?"""
    return test(type_) or any(holds(child, test) for child in children(type_))


def children(type_: pa.DataType) -> list[pa.DataType]:
    """The types ``type_`` is made of: a list's element type, a struct's field types, a map's
    entry struct (of its key and item types), a dictionary's value type; none for the rest."""
    if pa.types.is_dictionary(type_):
        return [type_.value_type]
    return [type_.field(i).type for i in range(type_.num_fields)]
