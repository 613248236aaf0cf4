"""ONE table: TileDB datatype id <-> name <-> numpy storage dtype <-> Arrow type.

Every other module asks this table; nothing else hard-codes a datatype id.

Arrow mapping (the documented contract, also in README.md):

=====================================  ===========================================
TileDB                                 Arrow
=====================================  ===========================================
INT8..UINT64, FLOAT32/64               the same numeric type
BOOL                                   bool
CHAR                                   binary (bytes, as ``tiledb`` reads CHAR: the type of
                                       the column, never of the bytes it holds)
STRING_ASCII, STRING_UTF8              string (raw bytes kept; invalid UTF-8 -> binary)
STRING_UTF16/UCS2, UTF32/UCS4          string (transcoded from UTF-16-LE / UTF-32-LE; binary if
                                       a cell is not valid: raw bytes are never altered)
BLOB, GEOM_WKB, ANY                    binary
GEOM_WKT                               string
DATETIME_DAY                           date32
DATETIME_WEEK                          date32 (week count x 7 days, exact)
DATETIME_SEC/MS/US/NS                  timestamp[s/ms/us/ns]
DATETIME_HR, DATETIME_MIN              timestamp[s] (scaled by 3600 / 60, exact)
DATETIME_YEAR, MONTH, PS, FS, AS       int64 (the raw count; no Arrow type holds them exactly)
TIME_SEC/MS                            time32[s/ms]
TIME_US/NS                             time64[us/ns]
TIME_HR, TIME_MIN                      time32[s] (scaled, exact)
TIME_PS, FS, AS                        int64 (the raw count)
=====================================  ===========================================

Cells with ``cell_val_num > 1`` become ``fixed_size_list<T>[n]`` (strings: fixed n bytes as
string/binary), var-sized numeric cells ``list<T>``.  Datetime/time values equal to INT64_MIN
(NaT, TileDB's default fill) are NULL for every unit, the raw-count ones included; a value that
overflows its Arrow unit once scaled (HR/MIN to seconds, DAY/WEEK to date32) is a ``DataError``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

import numpy as np


class Datatype(IntEnum):
    INT32 = 0
    INT64 = 1
    FLOAT32 = 2
    FLOAT64 = 3
    CHAR = 4
    INT8 = 5
    UINT8 = 6
    INT16 = 7
    UINT16 = 8
    UINT32 = 9
    UINT64 = 10
    STRING_ASCII = 11
    STRING_UTF8 = 12
    STRING_UTF16 = 13
    STRING_UTF32 = 14
    STRING_UCS2 = 15
    STRING_UCS4 = 16
    ANY = 17
    DATETIME_YEAR = 18
    DATETIME_MONTH = 19
    DATETIME_WEEK = 20
    DATETIME_DAY = 21
    DATETIME_HR = 22
    DATETIME_MIN = 23
    DATETIME_SEC = 24
    DATETIME_MS = 25
    DATETIME_US = 26
    DATETIME_NS = 27
    DATETIME_PS = 28
    DATETIME_FS = 29
    DATETIME_AS = 30
    TIME_HR = 31
    TIME_MIN = 32
    TIME_SEC = 33
    TIME_MS = 34
    TIME_US = 35
    TIME_NS = 36
    TIME_PS = 37
    TIME_FS = 38
    TIME_AS = 39
    BLOB = 40
    BOOL = 41
    GEOM_WKB = 42
    GEOM_WKT = 43


class Layout(IntEnum):
    ROW_MAJOR = 0
    COL_MAJOR = 1
    GLOBAL_ORDER = 2
    UNORDERED = 3
    HILBERT = 4


class ArrayType(IntEnum):
    DENSE = 0
    SPARSE = 1


class DataOrder(IntEnum):
    UNORDERED = 0
    INCREASING = 1
    DECREASING = 2


class EncryptionType(IntEnum):
    NO_ENCRYPTION = 0
    AES_256_GCM = 1


VAR_NUM = 0xFFFFFFFF  # cell_val_num of var-sized fields


@dataclass(frozen=True)
class TypeInfo:
    datatype: Datatype
    numpy: np.dtype  # storage dtype of one value
    kind: str  # "int", "float", "bool", "string", "binary", "datetime", "time"
    unit: str | None = None  # numpy datetime unit for datetime/time types

    @property
    def size(self) -> int:
        return self.numpy.itemsize

    @property
    def is_string(self) -> bool:
        return self.kind == "string"


def _t(dt: Datatype, np_dtype: str, kind: str, unit: str | None = None) -> TypeInfo:
    return TypeInfo(dt, np.dtype(np_dtype), kind, unit)


D = Datatype
_TABLE: tuple[TypeInfo, ...] = (
    _t(D.INT8, "<i1", "int"),
    _t(D.UINT8, "<u1", "int"),
    _t(D.INT16, "<i2", "int"),
    _t(D.UINT16, "<u2", "int"),
    _t(D.INT32, "<i4", "int"),
    _t(D.UINT32, "<u4", "int"),
    _t(D.INT64, "<i8", "int"),
    _t(D.UINT64, "<u8", "int"),
    _t(D.FLOAT32, "<f4", "float"),
    _t(D.FLOAT64, "<f8", "float"),
    _t(D.BOOL, "<u1", "bool"),
    _t(D.CHAR, "<u1", "string"),
    _t(D.STRING_ASCII, "<u1", "string"),
    _t(D.STRING_UTF8, "<u1", "string"),
    _t(D.STRING_UTF16, "<u2", "string"),
    _t(D.STRING_UTF32, "<u4", "string"),
    _t(D.STRING_UCS2, "<u2", "string"),
    _t(D.STRING_UCS4, "<u4", "string"),
    _t(D.ANY, "<u1", "binary"),
    _t(D.BLOB, "<u1", "binary"),
    _t(D.GEOM_WKB, "<u1", "binary"),
    _t(D.GEOM_WKT, "<u1", "string"),
    _t(D.DATETIME_YEAR, "<i8", "datetime", "Y"),
    _t(D.DATETIME_MONTH, "<i8", "datetime", "M"),
    _t(D.DATETIME_WEEK, "<i8", "datetime", "W"),
    _t(D.DATETIME_DAY, "<i8", "datetime", "D"),
    _t(D.DATETIME_HR, "<i8", "datetime", "h"),
    _t(D.DATETIME_MIN, "<i8", "datetime", "m"),
    _t(D.DATETIME_SEC, "<i8", "datetime", "s"),
    _t(D.DATETIME_MS, "<i8", "datetime", "ms"),
    _t(D.DATETIME_US, "<i8", "datetime", "us"),
    _t(D.DATETIME_NS, "<i8", "datetime", "ns"),
    _t(D.DATETIME_PS, "<i8", "datetime", "ps"),
    _t(D.DATETIME_FS, "<i8", "datetime", "fs"),
    _t(D.DATETIME_AS, "<i8", "datetime", "as"),
    _t(D.TIME_HR, "<i8", "time", "h"),
    _t(D.TIME_MIN, "<i8", "time", "m"),
    _t(D.TIME_SEC, "<i8", "time", "s"),
    _t(D.TIME_MS, "<i8", "time", "ms"),
    _t(D.TIME_US, "<i8", "time", "us"),
    _t(D.TIME_NS, "<i8", "time", "ns"),
    _t(D.TIME_PS, "<i8", "time", "ps"),
    _t(D.TIME_FS, "<i8", "time", "fs"),
    _t(D.TIME_AS, "<i8", "time", "as"),
)
del D

_BY_ID: dict[int, TypeInfo] = {info.datatype.value: info for info in _TABLE}


def type_info(datatype: int) -> TypeInfo:
    """The table row of a TileDB datatype id (raises UnsupportedFormatError if unknown)."""
    info = _BY_ID.get(int(datatype))
    if info is None:
        from .errors import UnsupportedFormatError

        raise UnsupportedFormatError(f"unknown TileDB datatype id {datatype}")
    return info


def datatype_size(datatype: int) -> int:
    return type_info(datatype).size


def string_codec(datatype: int) -> str:
    """Python codec of a string datatype's stored bytes."""
    dt = Datatype(datatype)
    if dt in (Datatype.STRING_UTF16, Datatype.STRING_UCS2):
        return "utf-16-le"
    if dt in (Datatype.STRING_UTF32, Datatype.STRING_UCS4):
        return "utf-32-le"
    return "utf-8"


# --- Arrow ---------------------------------------------------------------------------------

_DATETIME_ARROW = {  # unit -> (arrow constructor args, scale to the Arrow unit)
    "D": ("date32", None, 1),
    "W": ("date32", None, 7),
    "h": ("timestamp", "s", 3600),
    "m": ("timestamp", "s", 60),
    "s": ("timestamp", "s", 1),
    "ms": ("timestamp", "ms", 1),
    "us": ("timestamp", "us", 1),
    "ns": ("timestamp", "ns", 1),
}
_TIME_ARROW = {
    "h": ("time32", "s", 3600),
    "m": ("time32", "s", 60),
    "s": ("time32", "s", 1),
    "ms": ("time32", "ms", 1),
    "us": ("time64", "us", 1),
    "ns": ("time64", "ns", 1),
}


def temporal_mapping(info: TypeInfo) -> tuple[str, str | None, int] | None:
    """(arrow kind, arrow unit, scale) for datetime/time types with an Arrow equivalent."""
    if info.kind == "datetime":
        return _DATETIME_ARROW.get(info.unit)
    if info.kind == "time":
        return _TIME_ARROW.get(info.unit)
    return None


def arrow_value_type(datatype: int):
    """Arrow type of ONE value of ``datatype`` (strings: the whole string)."""
    import pyarrow as pa

    info = type_info(datatype)
    if info.kind == "bool":
        return pa.bool_()
    if datatype == Datatype.CHAR:  # bytes, as ``tiledb`` reads it, whatever they hold
        return pa.binary()
    if info.kind == "string":
        return pa.string()
    if info.kind == "binary":
        return pa.binary()
    mapping = temporal_mapping(info)
    if mapping is not None:
        kind, unit, _ = mapping
        if kind == "date32":
            return pa.date32()
        return getattr(pa, kind)(unit)
    return pa.from_numpy_dtype(info.numpy)


def arrow_type(datatype: int, cell_val_num: int):
    """Arrow type of one cell: see the module docstring."""
    import pyarrow as pa

    info = type_info(datatype)
    value_type = arrow_value_type(datatype)
    if info.kind in ("string", "binary"):
        return value_type  # fixed or var, a cell is one string / blob
    if cell_val_num == VAR_NUM:
        return pa.list_(value_type)
    if cell_val_num > 1:
        return pa.list_(value_type, cell_val_num)
    return value_type
