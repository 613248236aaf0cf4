"""User columns -> the raw cell buffers a fragment stores.

In: one column of user data (a pyarrow Array/ChunkedArray, a numpy array, a pandas Series or a
list) and the field it is written to (datatype, cell_val_num, nullable).
Out: a ``FieldBuffer``: fixed fields keep ``values`` in the storage dtype (cells x
cell_val_num values, 1-D); var-sized fields keep ``values`` as uint8 bytes and ``offsets``
(int64, one more than cells); nullable fields keep ``validity`` (uint8, 1 = valid).

Conversions: numbers are cast safely (overflow and lossy float->int casts are errors naming
the column and row); datetimes/times convert units exactly (numpy datetime64/timedelta64,
Arrow timestamp/date/time/duration) or take integers as raw counts in the field's unit;
strings are UTF-8 (UTF-16/32 for those types), fixed-size strings are NUL-padded to the cell
size; multi-value cells come from fixed-size lists, lists or 2-D numpy arrays.
``column_buffer`` takes cells read back (engine Columns) as they are stored.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..datatypes import VAR_NUM, Datatype, string_codec, type_info
from ..errors import DataError


@dataclass(frozen=True)
class FieldBuffer:
    values: np.ndarray
    offsets: np.ndarray | None = None  # var-sized: int64 byte offsets, cells + 1
    validity: np.ndarray | None = None  # nullable: uint8 per cell

    def cells(self, cell_val_num: int = 1) -> int:
        """The number of cells (``cell_val_num`` values per fixed cell; ignored when var)."""
        if self.offsets is not None:
            return len(self.offsets) - 1
        return len(self.values) // max(cell_val_num, 1)

    def cell_bytes(self, idx: int) -> bytes:
        """The bytes of var-sized cell ``idx``."""
        return bytes(self.values[self.offsets[idx]:self.offsets[idx + 1]])

    def take(self, order: np.ndarray, cell_val_num: int) -> "FieldBuffer":
        """The cells in ``order`` (a permutation or selection of cell indices)."""
        validity = None if self.validity is None else np.ascontiguousarray(self.validity[order])
        if self.offsets is None:
            if cell_val_num == 1:
                return FieldBuffer(np.ascontiguousarray(self.values[order]), None, validity)
            rows = self.values.reshape(-1, cell_val_num)[order]
            return FieldBuffer(np.ascontiguousarray(rows).reshape(-1), None, validity)
        from ..kernels.gather import WIDE, gather_bytes, gathered_offsets

        order = np.ascontiguousarray(order, dtype=np.int64)
        new_offsets = np.empty(len(order) + 1, dtype=np.int64)
        total = int(gathered_offsets(self.offsets, order, new_offsets))
        out = np.empty(total + WIDE, dtype=np.uint8)
        gather_bytes(self.values, self.offsets, order, new_offsets, out)
        return FieldBuffer(out[:total], new_offsets, validity)


def column_buffer(field, column) -> FieldBuffer:
    """The buffer of cells read back (an ``engine.column.Column`` of ``field``): its stored
    values as they are, nothing converted (enumerated attributes keep their indices)."""
    validity = None
    if getattr(field, "nullable", False):
        validity = column.validity if column.validity is not None else np.ones(len(column), np.uint8)
        validity = np.ascontiguousarray(validity, dtype=np.uint8)
    if column.offsets is not None:
        start = int(column.offsets[0])
        values = np.ascontiguousarray(column.values[start:int(column.offsets[-1])], dtype=np.uint8)
        return FieldBuffer(values, np.ascontiguousarray(column.offsets - start, dtype=np.int64),
                           validity)
    values = np.ascontiguousarray(column.values).view(type_info(field.datatype).numpy)
    return FieldBuffer(np.ascontiguousarray(values.reshape(-1)), None, validity)


def to_arrow(column, name: str) -> pa.Array:
    """Any supported column as one pyarrow Array."""
    if isinstance(column, pa.ChunkedArray):
        return column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    if isinstance(column, pa.Array):
        return column
    try:
        import pandas as pd

        if isinstance(column, pd.Series):
            if column.dtype.kind == "f":  # NaN is a value here, not a NULL
                return pa.array(column.to_numpy())
            return pa.Array.from_pandas(column)
    except ImportError:  # pandas is optional
        pass
    if isinstance(column, np.ndarray):
        if column.ndim != 1 and column.ndim != 2:
            raise DataError(f"column {name!r}: a {column.ndim}-D array; give one value per cell "
                            "(1-D) or one row of values per cell (2-D)")
        if column.ndim == 2:
            flat = pa.array(np.ascontiguousarray(column).reshape(-1))
            return pa.FixedSizeListArray.from_arrays(flat, column.shape[1])
        if column.dtype.kind == "O":  # pandas' object columns: NaN is a missing value
            return _python_values(list(column), name, from_pandas=True)
        if column.dtype.kind == "U":
            return pa.array(column.tolist(), type=pa.string())
        if column.dtype.kind == "S":
            return pa.array(column.tolist(), type=pa.binary())
        if column.dtype.kind in "Mm":
            return _numpy_temporal(column, name)
        return pa.array(column)
    return _python_values(column, name)


def _python_values(values, name: str, from_pandas: bool = False) -> pa.Array:
    """A list (or object array) as Arrow: None is NULL and a float NaN is a value, as in a
    numpy or pandas float column; NaN stands for NULL only among non-float values (pandas'
    missing string, for instance) or with ``from_pandas``."""
    for nan_is_null in (True,) if from_pandas else (False, True):
        try:
            return pa.array(values, from_pandas=nan_is_null)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError,
                TypeError) as exc:
            error = exc
    raise DataError(f"column {name!r}: cannot read the values ({error})")


# numpy units Arrow has no type for -> the coarsest Arrow unit holding them exactly
_ARROW_UNIT_OF = {"M": {"Y": "D", "M": "D", "W": "D", "h": "s", "m": "s"},
                  "m": {"W": "s", "D": "s", "h": "s", "m": "s"}}


def _numpy_temporal(column: np.ndarray, name: str, info=None) -> pa.Array:
    """A numpy datetime64/timedelta64 column as Arrow, exactly (NaT -> NULL).  For a temporal
    field (``info``): its raw int64 counts in the field's unit, from any numpy unit (below
    nanoseconds too).  Else in Arrow's own type, in the coarsest Arrow unit holding every
    value: Arrow lacks numpy's years, months, weeks, days of durations, hours, minutes and
    the units below nanoseconds."""
    kind = column.dtype.kind
    unit, count = np.datetime_data(column.dtype)
    if info is not None:
        if (kind == "M") != (info.kind == "datetime"):
            raise DataError(f"column {name!r}: {column.dtype} values cannot be stored as "
                            f"{info.datatype.name}")
        target, exact = info.unit, f"unit {info.unit!r} of {info.datatype.name}"
    else:
        if count != 1:
            raise DataError(f"column {name!r}: numpy {column.dtype} (a unit multiple) is not "
                            f"supported; convert it to {kind}8[{unit}]")
        target = _ARROW_UNIT_OF[kind].get(unit, "ns" if unit in ("ps", "fs", "as") else unit)
        exact = f"Arrow unit {target!r}"
        if unit in ("Y", "M") and kind == "m" and target != unit:
            raise DataError(f"column {name!r}: numpy {column.dtype} durations have no fixed "
                            "length; write them as integers (raw counts in the field's unit)")
    nat = np.isnat(column)
    converted = column if target == unit and count == 1 else _exactly(
        column, f"{kind}8[{target}]", nat, lambda row: DataError(
            f"column {name!r}, row {row}: {column.dtype} value {column[row]} does not "
            f"convert exactly to {exact}; write it as an integer (the raw count in the "
            "field's unit)"))
    if info is None:
        return pa.array(converted)
    return pa.array(converted.view(np.int64), mask=nat)


def _exactly(values: np.ndarray, target: str, skipped, error) -> np.ndarray:
    """numpy datetime64 / timedelta64 ``values`` as dtype ``target``, when each converts back
    to itself (``skipped``: rows not checked, NaT; None: none); else ``error(first bad
    row)``, raised."""
    converted = values.astype(target)
    bad = converted.astype(values.dtype).view(np.int64) != values.view(np.int64)
    rows = np.flatnonzero(bad if skipped is None else bad & ~skipped)
    if len(rows):
        raise error(int(rows[0]))
    return converted


def field_buffer(column, name: str, datatype: int, cell_val_num: int, nullable: bool, *,
                 labels: pa.Array | None = None) -> FieldBuffer:
    """Convert one column for a field; errors name the column and the first bad row.

    ``labels``: the enumeration of an enumerated attribute (see ``label_indices``).  NULL
    cells are zero bytes, as TileDB-Py writes them.
    """
    info = type_info(datatype)
    if isinstance(column, np.ndarray) and column.dtype.kind in "Mm" and column.ndim == 1 \
            and info.kind in ("datetime", "time"):
        column = _numpy_temporal(column, name, info)
    arr = to_arrow(column, name)
    if labels is not None:
        arr = label_indices(arr, name, labels)
    if arr.null_count and not nullable and info.kind in ("datetime", "time"):
        # NaT (INT64_MIN) is how a non-nullable datetime says "no value"; the reader shows NULL
        arr = _nat_for_nulls(arr, name, info)
    validity = _validity(arr, name, nullable)
    if info.kind in ("string", "binary"):
        if cell_val_num == VAR_NUM:
            values, offsets = _var_bytes(arr, name, datatype)
            return FieldBuffer(values, offsets, validity)
        values = _fixed_bytes(arr, name, datatype, cell_val_num)
        return FieldBuffer(values, None, validity)
    if cell_val_num == VAR_NUM:
        values, offsets = _var_numbers(arr, name, datatype)
        return FieldBuffer(values.view(np.uint8), offsets, validity)
    if cell_val_num > 1:
        values = _multi_numbers(arr, name, datatype, cell_val_num)
        return FieldBuffer(values, None, validity)
    values = _numbers(arr, name, datatype)
    return FieldBuffer(values, None, validity)


def label_indices(arr: pa.Array, name: str, labels: pa.Array) -> pa.Array:
    """An enumerated attribute's column as stored indices.  Dictionary arrays (what reads of
    the attribute return) and string/binary columns hold labels, looked up in ``labels``;
    any other column already holds the indices (as TileDB-Py writes them)."""
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    elif not (_is_text(arr.type) and _is_text(labels.type)):
        return arr
    if arr.type != labels.type:
        try:
            arr = arr.cast(labels.type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            raise DataError(f"column {name!r}: {arr.type} values cannot be labels of type "
                            f"{labels.type}") from None
    indices = pc.index_in(arr, value_set=labels)
    unknown = pc.and_(pc.is_null(indices), pc.is_valid(arr)).to_numpy(zero_copy_only=False)
    if unknown.any():
        row = int(np.argmax(unknown))
        shown = ", ".join(repr(v) for v in labels.slice(0, 10).to_pylist())
        raise DataError(f"column {name!r}, row {row}: {arr[row].as_py()!r} is not a label of the "
                        f"attribute's enumeration ({shown}{', ...' if len(labels) > 10 else ''})")
    return indices


def _is_text(t: pa.DataType) -> bool:
    return (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t)
            or pa.types.is_large_binary(t))


def _nat_for_nulls(arr: pa.Array, name: str, info) -> pa.Array:
    raw = _temporal(arr, name, info)
    raw = raw.copy()
    raw[pc.is_null(arr).to_numpy(zero_copy_only=False)] = np.iinfo(np.int64).min
    return pa.array(raw, type=pa.int64())


def _validity(arr: pa.Array, name: str, nullable: bool) -> np.ndarray | None:
    if arr.null_count and not nullable:
        row = _first_null(arr)
        raise DataError(f"column {name!r}, row {row}: NULL in a non-nullable field")
    if not nullable:
        return None
    if arr.null_count == 0:
        return np.ones(len(arr), dtype=np.uint8)
    return np.ascontiguousarray(pc.is_valid(arr).to_numpy(zero_copy_only=False).astype(np.uint8))


def _first_null(arr: pa.Array) -> int:
    mask = pc.is_null(arr).to_numpy(zero_copy_only=False)
    return int(np.argmax(mask))


# --- numbers -----------------------------------------------------------------------------


def _numbers(arr: pa.Array, name: str, datatype: int) -> np.ndarray:
    """NULL cells hold zero bytes, as TileDB-Py writes them (readers never look at them)."""
    info = type_info(datatype)
    if info.kind in ("datetime", "time"):
        values = _temporal(arr, name, info)  # NULLs already 0
    else:
        target = pa.bool_() if info.kind == "bool" else pa.from_numpy_dtype(info.numpy)
        values = _cast(arr, target, name, datatype)
        values = values.fill_null(False if info.kind == "bool" else 0) if values.null_count else values
        values = values.to_numpy(zero_copy_only=False)
    return np.ascontiguousarray(values, dtype=info.numpy)


def _cast(arr: pa.Array, target: pa.DataType, name: str, datatype: int) -> pa.Array:
    if pa.types.is_string(arr.type) or pa.types.is_binary(arr.type) or pa.types.is_large_string(arr.type):
        raise DataError(f"column {name!r}: strings cannot be written to a "
                        f"{Datatype(datatype).name} field")
    if pa.types.is_null(arr.type):
        return pa.nulls(len(arr), target)
    try:
        return pc.cast(arr, target, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        row = _first_bad_cast(arr, target)
        where = f", row {row}" if row is not None else ""
        raise DataError(f"column {name!r}{where}: cannot store {arr.type} values as "
                        f"{Datatype(datatype).name} ({exc})") from None


def _first_bad_cast(arr: pa.Array, target: pa.DataType) -> int | None:
    for row in range(len(arr)):
        try:
            pc.cast(arr.slice(row, 1), target, safe=True)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return row
    return None


_ARROW_UNITS = {"s": "s", "ms": "ms", "us": "us", "ns": "ns"}


def _temporal(arr: pa.Array, name: str, info) -> np.ndarray:
    """Raw counts in the field's unit."""
    unit = info.unit
    kind = "M" if info.kind == "datetime" else "m"
    t = arr.type
    if pa.types.is_integer(t) or pa.types.is_null(t):
        values = _cast(arr, pa.int64(), name, info.datatype)
        return values.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    if pa.types.is_timestamp(t) or pa.types.is_duration(t):
        src_unit, src_kind = t.unit, ("M" if pa.types.is_timestamp(t) else "m")
    elif pa.types.is_date32(t):
        src_unit, src_kind = "D", "M"
    elif pa.types.is_date64(t):
        src_unit, src_kind = "ms", "M"
    elif pa.types.is_time32(t) or pa.types.is_time64(t):
        src_unit, src_kind = t.unit, "m"
    else:
        raise DataError(f"column {name!r}: {t} values cannot be stored as {info.datatype.name}")
    if src_kind != kind and not (src_kind == "m" and kind == "m"):
        if kind == "m" or src_kind == "m":
            raise DataError(f"column {name!r}: {t} values cannot be stored as {info.datatype.name}")
    if pa.types.is_date32(t) or pa.types.is_time32(t):  # no direct 32-bit -> int64 cast
        raw = arr.cast(pa.int32()).cast(pa.int64())
    else:
        raw = pc.cast(arr, pa.int64())
    raw = raw.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    if src_unit == unit:
        return raw
    converted = _exactly(raw.view(f"{src_kind}8[{src_unit}]"), f"{src_kind}8[{unit}]", None,
                         lambda row: DataError(f"column {name!r}, row {row}: {t} value does "
                                               f"not convert exactly to unit {unit!r} of "
                                               f"{info.datatype.name}"))
    return converted.view(np.int64)


def _list_parts(arr: pa.Array, name: str) -> tuple[pa.Array, np.ndarray]:
    """(flat values, int64 value offsets) of a list-like column.  A NULL value inside a cell
    is an error: a cell of several values has one validity (or none), not one a value."""
    t = arr.type
    if pa.types.is_fixed_size_list(t):
        flat = arr.flatten() if arr.null_count == 0 else pc.list_flatten(arr.fill_null(
            pa.scalar([0] * t.list_size, type=t)))
        offsets = np.arange(len(arr) + 1, dtype=np.int64) * t.list_size
    elif pa.types.is_list(t) or pa.types.is_large_list(t):
        if arr.null_count:
            arr = pc.if_else(pc.is_null(arr), pa.scalar([], type=t), arr)
        offsets = np.asarray(arr.offsets.to_numpy(zero_copy_only=False), dtype=np.int64)
        offsets = offsets - offsets[0]
        flat = arr.flatten()
    else:
        raise DataError(f"column {name!r}: expected lists of values, got {t}")
    if flat.null_count:
        first = int(np.flatnonzero(pc.is_null(flat).to_numpy(zero_copy_only=False))[0])
        row = int(np.searchsorted(offsets, first, side="right")) - 1
        raise DataError(f"column {name!r}, row {row}: a NULL value inside a cell cannot be "
                        "stored (a cell of several values is NULL or not as a whole)")
    return flat, offsets


def _multi_numbers(arr, name, datatype, cell_val_num) -> np.ndarray:
    flat, offsets = _list_parts(arr, name)
    lengths = np.diff(offsets)
    bad = np.flatnonzero(lengths != cell_val_num)
    if len(bad) and not (arr.null_count and np.all(pc.is_null(arr).to_numpy(zero_copy_only=False)[bad])):
        row = int(bad[0])
        raise DataError(f"column {name!r}, row {row}: a cell holds {int(lengths[row])} values, "
                        f"the field takes {cell_val_num}")
    return _numbers(flat, name, datatype)


def _var_numbers(arr, name, datatype) -> tuple[np.ndarray, np.ndarray]:
    flat, offsets = _list_parts(arr, name)
    info = type_info(datatype)
    values = _numbers(flat, name, datatype)
    return np.ascontiguousarray(values), offsets * info.size


# --- strings -----------------------------------------------------------------------------


def _string_values(arr: pa.Array, name: str, datatype: int) -> pa.Array:
    t = arr.type
    if pa.types.is_dictionary(t):
        arr = arr.dictionary_decode()
        t = arr.type
    if pa.types.is_null(t):
        return pa.array([b""] * len(arr), type=pa.binary())
    if not (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t)
            or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t)):
        raise DataError(f"column {name!r}: {t} values cannot be stored as {Datatype(datatype).name}")
    codec = string_codec(datatype)
    if codec != "utf-8" and (pa.types.is_string(t) or pa.types.is_large_string(t)):
        return pa.array([None if v is None else v.encode(codec) for v in arr.to_pylist()],
                        type=pa.binary())
    return arr.cast(pa.large_binary())


def _var_bytes(arr, name, datatype) -> tuple[np.ndarray, np.ndarray]:
    values = _string_values(arr, name, datatype).cast(pa.large_binary())
    if values.null_count:
        values = values.fill_null(b"")
    buffers = values.buffers()
    offsets = np.frombuffer(buffers[1], dtype=np.int64)[values.offset:values.offset + len(values) + 1]
    data_buf = buffers[2]
    start, end = int(offsets[0]), int(offsets[-1])
    data = (np.frombuffer(data_buf, dtype=np.uint8)[start:end] if data_buf is not None
            else np.zeros(0, np.uint8))
    width = type_info(datatype).size
    lengths = np.diff(offsets)
    bad = np.flatnonzero(lengths % width)
    if len(bad):
        raise DataError(f"column {name!r}, row {int(bad[0])}: {int(lengths[bad[0]])} bytes is not a "
                        f"whole number of {Datatype(datatype).name} characters")
    return np.array(data, dtype=np.uint8), offsets - start


def _fixed_bytes(arr, name, datatype, cell_val_num) -> np.ndarray:
    """Each string NUL-padded to the cell size (NULL cells: all zero bytes)."""
    width = type_info(datatype).size * cell_val_num
    raw, offsets = _var_bytes(arr, name, datatype)  # NULLs come back empty
    lengths = np.diff(offsets)
    too_long = np.flatnonzero(lengths > width)
    if len(too_long):
        row = int(too_long[0])
        raise DataError(f"column {name!r}, row {row}: {int(lengths[row])} bytes do not fit a "
                        f"{width}-byte cell")
    out = np.zeros(len(lengths) * width, dtype=np.uint8)
    # byte j of row r goes to r * width + j: the row starts shifted from packed to padded
    shift = np.arange(len(lengths), dtype=np.int64) * width - offsets[:-1]
    out[np.arange(len(raw), dtype=np.int64) + np.repeat(shift, lengths)] = raw
    return out.view(type_info(datatype).numpy)
