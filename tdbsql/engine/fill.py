"""Cells that were never written: fill-value columns and empty columns of a field."""

from __future__ import annotations

import numpy as np

from .column import Column, repeat_value


def fill_column(attr, n: int) -> Column:
    valid = None
    if attr.nullable:
        valid = bool(attr.fill_value_validity)
    return repeat_value(attr.fill_value, attr.info.numpy, n, attr.is_var, attr.cell_val_num, valid)


def empty_column(schema, name: str) -> Column:
    f = schema.fields_by_name()[name]
    if f.is_var:
        return Column(np.zeros(0, np.uint8), np.zeros(1, np.int64),
                      np.zeros(0, np.uint8) if getattr(f, "nullable", False) else None, f.cell_val_num)
    return Column(np.zeros(0, f.info.numpy), None,
                  np.zeros(0, np.uint8) if getattr(f, "nullable", False) else None, f.cell_val_num)
