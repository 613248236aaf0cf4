"""Columns -> Arrow arrays, following the mapping documented in ``tdbsql.datatypes``.

Buffers are handed to Arrow without copies where the layout allows (numbers, var offsets that
fit int32).  Datetime/time values equal to INT64_MIN (numpy's NaT, TileDB's default fill) become
NULL, exactly as numpy shows them as NaT, and their slots hold 0 (Arrow's checked kernels,
``ts - INTERVAL 1 DAY``, compute under NULL slots too and would overflow on INT64_MIN).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..datatypes import VAR_NUM, arrow_type, string_codec, temporal_mapping, type_info
from ..errors import DataError
from ..kernels import transcode
from . import pooled
from .arrow_calendar import TICKS_PER_DAY
from .column import Column

_NAT = np.iinfo(np.int64).min


def to_arrow(column: Column, datatype: int, cell_val_num: int, name: str = "") -> pa.Array:
    info = type_info(datatype)
    target = arrow_type(datatype, cell_val_num)
    mask = None if column.validity is None else column.validity == 0
    if info.kind in ("string", "binary"):
        return _strings(column, datatype, cell_val_num, target, mask, name)
    values = column.values.view(info.numpy)
    values, mask_from_values = _scalar_values(values, info, name)
    if cell_val_num == 1:
        mask = _or_masks(mask, mask_from_values)
        return _numeric(values, info, target, mask)
    value_type = target.value_type
    flat = _numeric(values, info, value_type, mask_from_values)
    if cell_val_num == VAR_NUM:
        width = info.size
        if column.offsets[-1] // width >= 2**31:
            raise DataError(f"column {name!r}: a batch holds over 2**31 list values")
        offsets = (column.offsets // width).astype(np.int32)
        return pa.ListArray.from_arrays(pa.array(offsets), flat, mask=_pa_mask(mask))
    return pa.FixedSizeListArray.from_arrays(flat, cell_val_num, mask=_pa_mask(mask))


def _scalar_values(values: np.ndarray, info, name: str):
    """Scale temporal values to their Arrow unit; return (values, NaT mask or None)."""
    if info.kind not in ("datetime", "time"):
        return values, None
    nat = values == _NAT
    has_nat = bool(nat.any())
    mapping = temporal_mapping(info)
    if mapping is None:  # raw int64 count (YEAR, MONTH, PS, FS, AS): NaT is still NULL
        return values, (nat if has_nat else None)
    kind, _, scale = mapping
    if scale != 1 or kind in ("date32", "time32"):
        safe = np.where(nat, 0, values)
        limit = np.iinfo(np.int64).max // scale
        if scale != 1 and safe.size and (safe.min() < -limit or safe.max() > limit):
            raise DataError(f"column {name!r}: a {info.datatype.name} value does not fit "
                            f"Arrow {kind} once scaled to seconds")
        scaled = safe * scale
        if kind in ("date32", "time32"):
            if scaled.size and (scaled.min() < -(2**31) or scaled.max() >= 2**31):
                raise DataError(f"column {name!r}: a {info.datatype.name} value does not fit "
                                f"Arrow {kind}")
            values = scaled.astype(np.int32)
        else:
            values = scaled
    elif has_nat:  # a NULL slot holds 0, not INT64_MIN: checked arithmetic reads NULL slots too
        values = np.where(nat, 0, values)
    if kind in ("time32", "time64"):
        _check_time_of_day(values, nat, info, mapping, name)
    return values, (nat if has_nat else None)




def _check_time_of_day(values: np.ndarray, nat: np.ndarray, info, mapping, name: str) -> None:
    """TileDB's TIME_* values are any int64 count; Arrow's and DuckDB's TIMEs lie in
    [00:00:00, 24:00:00].  A value outside is refused, naming it, rather than read wrapped
    around the clock (or printed as ``<value out of range>``)."""
    _, unit, scale = mapping
    outside = ((values < 0) | (values > TICKS_PER_DAY[unit])) & ~nat
    if outside.any():
        raw = int(values[np.argmax(outside)]) // scale
        raise DataError(f"column {name!r}: the {info.datatype.name} value {raw} is not a time "
                        "of day (TIME lies in [00:00:00, 24:00:00])")


def _numeric(values: np.ndarray, info, target: pa.DataType, mask) -> pa.Array:
    if info.kind == "bool":
        return pa.array(values.view(np.uint8) != 0, type=pa.bool_(), mask=mask)
    if pa.types.is_temporal(target):
        storage = pa.int32() if values.dtype.itemsize == 4 else pa.int64()
        arr = pa.array(values, type=storage, mask=mask)
        return arr.view(target)
    return pa.array(values, type=target, mask=mask)


def _strings(column: Column, datatype: int, cell_val_num: int, target, mask, name: str) -> pa.Array:
    n = len(column)
    raw = np.ascontiguousarray(column.values).view(np.uint8)
    if column.offsets is not None:
        offsets = column.offsets
    else:
        width = type_info(datatype).size * cell_val_num
        offsets = np.arange(n + 1, dtype=np.int64) * width
    codec = string_codec(datatype)
    if codec != "utf-8":
        return _decode_wide(raw, offsets, codec, mask)
    if offsets[-1] >= 2**31:
        raise DataError(f"column {name!r}: a batch holds over 2 GiB of strings")
    arr = _binary(raw, offsets, mask)
    if target == pa.binary():
        return arr
    as_string = arr.view(pa.string())
    used = raw[offsets[0]:offsets[-1]]
    if not used.size or used.max() < 0x80:
        return as_string  # ASCII is valid UTF-8: no need for Arrow's slower full check
    try:
        as_string.validate(full=True)
    except pa.ArrowInvalid:
        return arr  # not valid UTF-8: keep the raw bytes as binary rather than alter them
    return as_string


def _decode_wide(raw: np.ndarray, offsets: np.ndarray, codec: str, mask) -> pa.Array:
    """UTF-16/UTF-32 cells -> Arrow string; raw bytes (binary) if a cell is not valid."""
    width = 2 if codec == "utf-16-le" else 4
    n = len(offsets) - 1
    if raw.nbytes % width or np.any(offsets % width):
        return _binary(raw, offsets, mask)
    units = np.ascontiguousarray(raw).view(np.uint16 if width == 2 else np.uint32)
    unit_offsets = np.ascontiguousarray(offsets // width, dtype=np.int64)
    out = np.empty(len(units) * (3 if width == 2 else 4), dtype=np.uint8)
    out_offsets = np.empty(n + 1, dtype=np.int64)
    kernel = transcode.utf16_to_utf8 if width == 2 else transcode.utf32_to_utf8
    if not units.flags.writeable:
        units = units.copy()
    written = kernel(units, unit_offsets, out, out_offsets)
    if written < 0:
        return _binary(raw, offsets, mask)
    return _binary(out[:written], out_offsets, mask).view(pa.string())


def _binary(raw: np.ndarray, offsets: np.ndarray, mask) -> pa.Array:
    if offsets[-1] >= 2**31:
        raise DataError("a batch holds over 2 GiB of strings")
    validity = None if mask is None else pa.array(~mask).buffers()[1]
    return pa.Array.from_buffers(
        pa.binary(), len(offsets) - 1,
        [validity, pa.py_buffer(_int32(offsets)), pa.py_buffer(raw)],
        -1 if mask is not None else 0,
    )


def _int32(offsets: np.ndarray) -> np.ndarray:
    """Offsets below 2**31 as int32 (Arrow's string offsets)."""
    out = pooled.empty(len(offsets), np.int32)
    np.copyto(out, offsets, casting="unsafe")
    return out


def _or_masks(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return a | b


def _pa_mask(mask):
    return None if mask is None else pa.array(mask)
