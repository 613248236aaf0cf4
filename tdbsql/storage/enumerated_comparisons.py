"""A DELETE comparison of an enumerated attribute, as a condition on the indices it stores.

SQL compares an enumerated attribute by its labels (``w = 1.5`` holds for the cells whose
label is 1.5, ``c = 'red'`` for those labelled 'red'), but a TileDB delete commit compares the
stored values, the indices into the enumeration.  ``tiledb`` itself stores its deletes on
enumerated attributes that way (``w == 1.5`` becomes a test of index 1).  So the comparison,
built on the labels as on any field of their type (constants cast as DuckDB casts them), is
evaluated on every label in SQL's logic, and the labels it holds for become an IN list of
their indices; none, a comparison no index satisfies (``w < min``), which ``tiledb`` reads
(it refuses to store a delete on a label that does not exist).  A label never NULL, the
comparison is TRUE or FALSE on each one, so negations stay exact; NULL cells are left to
``storage.delete_write_back`` as for any attribute.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..datatypes import type_info
from ..format.delete_condition import Node, ValueNode, sql_truth
from .integer_comparisons import no_value
from .write_buffers import field_buffer


def on_indices(on_labels: Node, attribute, label_field, labels: pa.Array) -> Node:
    """``on_labels`` (a condition on the field ``label_field``, one of ``attribute``'s labels)
    as the condition on ``attribute``'s indices that holds for the same cells."""
    name, info = label_field.name, type_info(label_field.datatype)
    values = labels if info.kind in ("string", "binary") else \
        field_buffer(labels, name, label_field.datatype, label_field.cell_val_num, False).values
    true, _ = sql_truth(on_labels, {name: values}, None, {name: int(label_field.datatype)},
                        num_cells=len(labels))
    dtype = np.dtype(type_info(attribute.datatype).numpy)
    indices = np.flatnonzero(true)
    if not len(indices):
        op, n = no_value(dtype)
        return ValueNode(attribute.name, op, n.tobytes())
    return ValueNode.member_set(attribute.name,
                                [np.array([i], dtype=dtype).tobytes() for i in indices])
