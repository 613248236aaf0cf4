"""The public schema API: ``Dim``, ``Attr``, ``Enumeration``, ``FilterList``, one class per
filter, and ``Schema`` -- the way TileDB users describe an array.

In: Python values (numpy dtypes or names, Python numbers, lists of filters).
Out: ``Schema.to_format()`` -> ``tdbsql.format.array_schema.ArraySchema`` (what the writer
stores, format version 22) plus ``Schema.format_enumerations(...)`` for the label files;
``Schema.from_format(ArraySchema)`` goes back.

Validation follows TileDB 2.30's own checks (``ArraySchema::check``, ``Dimension::check_*``,
``FilterPipeline::check_filter_types``): a schema TileDB would refuse raises ``SchemaError``
naming the dimension, attribute or filter at fault.

Datatypes: numpy dtypes (``"int32"``, ``np.float64``, ``"datetime64[ms]"``, ``bool``),
``"ascii"`` (STRING_ASCII, the only string type a dimension may have), ``str``/``"utf8"``
(STRING_UTF8), ``bytes``/``"char"`` (CHAR), ``"blob"`` (BLOB), or any TileDB datatype name
(``"STRING_UTF16"``, ``"DATETIME_HR"``, ``"TIME_NS"`` ...).  String and blob attributes are
var-sized unless ``var=False`` or a ``cell_val_num`` is given.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .datatypes import VAR_NUM, ArrayType, DataOrder, Datatype, Layout, type_info
from .errors import SchemaError
from .format import filters as ff
from .format.array_schema import (
    SCHEMA_WRITE_VERSION, ArraySchema, Attribute, CurrentDomain, Dimension, EnumerationRef,
    default_fill_value,
)
from .format.enumeration import Enumeration as FormatEnumeration
from .format.filter_pipeline import FilterPipeline

HILBERT_MAX_DIMS = 16  # TileDB's Hilbert::HC_MAX_DIM


# --- datatypes ------------------------------------------------------------------------------

_ALIASES = {
    "ascii": Datatype.STRING_ASCII, "str": Datatype.STRING_UTF8, "utf8": Datatype.STRING_UTF8,
    "utf-8": Datatype.STRING_UTF8, "string": Datatype.STRING_UTF8, "char": Datatype.CHAR,
    "bytes": Datatype.CHAR, "blob": Datatype.BLOB, "bool": Datatype.BOOL,
}
_NUMPY_UNITS = {"Y": "YEAR", "M": "MONTH", "W": "WEEK", "D": "DAY", "h": "HR", "m": "MIN",
                "s": "SEC", "ms": "MS", "us": "US", "ns": "NS", "ps": "PS", "fs": "FS", "as": "AS"}


def to_datatype(dtype: Any, where: str = "") -> Datatype:
    """A TileDB datatype from a numpy dtype, a Python type, an alias or a TileDB name."""
    if isinstance(dtype, Datatype):
        return dtype
    if dtype is str:
        return Datatype.STRING_UTF8
    if dtype is bytes:
        return Datatype.CHAR
    if dtype is bool:
        return Datatype.BOOL
    if isinstance(dtype, str):
        lowered = dtype.lower()
        if lowered in _ALIASES:
            return _ALIASES[lowered]
        if dtype.upper() in Datatype.__members__:
            return Datatype[dtype.upper()]
    try:
        np_dtype = np.dtype(dtype)
    except TypeError:
        raise SchemaError(f"{where}unknown datatype {dtype!r}") from None
    return _from_numpy(np_dtype, where)


def _from_numpy(np_dtype: np.dtype, where: str) -> Datatype:
    kind = np_dtype.kind
    if kind == "b":
        return Datatype.BOOL
    if kind in "iu":
        return Datatype[f"{'INT' if kind == 'i' else 'UINT'}{np_dtype.itemsize * 8}"]
    if kind == "f" and np_dtype.itemsize in (4, 8):
        return Datatype[f"FLOAT{np_dtype.itemsize * 8}"]
    if kind in "Mm":
        unit = np.datetime_data(np_dtype)[0]
        name = ("DATETIME_" if kind == "M" else "TIME_") + _NUMPY_UNITS.get(unit, "")
        if name in Datatype.__members__:  # TileDB has no TIME_DAY, TIME_WEEK, ...
            return Datatype[name]
    if kind == "U":
        return Datatype.STRING_UTF8
    if kind == "S":
        return Datatype.CHAR
    raise SchemaError(f"{where}datatype {np_dtype} has no TileDB equivalent")


def _is_integer(dt: Datatype) -> bool:
    return type_info(dt).kind == "int"


def _is_temporal(dt: Datatype) -> bool:
    return type_info(dt).kind in ("datetime", "time")


# --- filters --------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Codec:
    """A filter whose one option is a compression level (-1: the codec's default)."""

    level: int = -1
    _format = None  # the format filter class (set per subclass)

    def to_format(self):
        return self._format(level=self.level)


class Zstd(_Codec):
    _format = ff.ZstdFilter


class Gzip(_Codec):
    _format = ff.GzipFilter


class Lz4(_Codec):
    _format = ff.Lz4Filter


class Bzip2(_Codec):
    _format = ff.Bzip2Filter


class Rle(_Codec):
    _format = ff.RleFilter


class Dictionary(_Codec):
    _format = ff.DictionaryFilter


@dataclass(frozen=True)
class _DeltaCodec:
    """DELTA / DOUBLE_DELTA: values reinterpreted as ``reinterpret_dtype`` (None: as stored)."""

    reinterpret_dtype: Any = None
    level: int = -1
    _format = None

    def to_format(self):
        reinterpret = Datatype.ANY if self.reinterpret_dtype is None else to_datatype(self.reinterpret_dtype)
        return self._format(level=self.level, reinterpret_datatype=reinterpret)


class DoubleDelta(_DeltaCodec):
    _format = ff.DoubleDeltaFilter


class Delta(_DeltaCodec):
    _format = ff.DeltaFilter


@dataclass(frozen=True)
class _Plain:
    """A filter without options."""

    _format = None

    def to_format(self):
        return self._format()


class BitShuffle(_Plain):
    _format = ff.BitshuffleFilter


class ByteShuffle(_Plain):
    _format = ff.ByteshuffleFilter


class Xor(_Plain):
    _format = ff.XorFilter


class ChecksumMD5(_Plain):
    _format = ff.ChecksumMd5Filter


class ChecksumSHA256(_Plain):
    _format = ff.ChecksumSha256Filter


class NoOp(_Plain):
    _format = ff.NoopFilter


@dataclass(frozen=True)
class BitWidthReduction:
    window: int = 256

    def to_format(self):
        return ff.BitWidthReductionFilter(max_window_size=self.window)


@dataclass(frozen=True)
class PositiveDelta:
    window: int = 1024

    def to_format(self):
        return ff.PositiveDeltaFilter(max_window_size=self.window)


@dataclass(frozen=True)
class FloatScale:
    factor: float = 1.0
    offset: float = 0.0
    bytewidth: int = 8

    def to_format(self):
        if self.bytewidth not in (1, 2, 4, 8):
            raise SchemaError(f"FloatScale: bytewidth must be 1, 2, 4 or 8, not {self.bytewidth}")
        return ff.FloatScaleFilter(scale=float(self.factor), offset=float(self.offset),
                                   byte_width=int(self.bytewidth))


@dataclass(frozen=True)
class Webp:
    quality: float = 100.0
    input_format: str = "rgb"  # rgb, bgr, rgba, bgra
    lossless: bool = False

    def to_format(self):
        formats = {"rgb": 1, "bgr": 2, "rgba": 3, "bgra": 4}
        if self.input_format not in formats:
            raise SchemaError(f"Webp: input_format must be one of {sorted(formats)}")
        return ff.WebpFilter(quality=float(self.quality), input_format=formats[self.input_format],
                             lossless=bool(self.lossless))


_FROM_FORMAT = {
    **{c._format: (lambda f, c=c: c(f.level)) for c in (Zstd, Gzip, Lz4, Bzip2, Rle, Dictionary)},
    **{c._format: (lambda f, c=c: c(_reinterpret(f), f.level)) for c in (DoubleDelta, Delta)},
    **{c._format: (lambda f, c=c: c()) for c in (BitShuffle, ByteShuffle, Xor, ChecksumMD5,
                                                 ChecksumSHA256, NoOp)},
    ff.BitWidthReductionFilter: lambda f: BitWidthReduction(f.max_window_size),
    ff.PositiveDeltaFilter: lambda f: PositiveDelta(f.max_window_size),
    ff.FloatScaleFilter: lambda f: FloatScale(f.scale, f.offset, f.byte_width),
    ff.WebpFilter: lambda f: Webp(f.quality, ("rgb", "bgr", "rgba", "bgra")[f.input_format - 1],
                                  f.lossless),
}


def _reinterpret(f) -> Datatype | None:
    return None if f.reinterpret_datatype == Datatype.ANY else Datatype(f.reinterpret_datatype)


@dataclass(frozen=True)
class FilterList:
    """An ordered filter pipeline; ``max_chunk_size`` as TileDB stores it."""

    filters: tuple = ()
    max_chunk_size: int = 65536

    def __init__(self, filters: Sequence = (), max_chunk_size: int = 65536):
        object.__setattr__(self, "filters", tuple(filters))
        object.__setattr__(self, "max_chunk_size", int(max_chunk_size))

    def to_format(self) -> FilterPipeline:
        out = []
        for f in self.filters:
            if not hasattr(f, "to_format"):
                raise SchemaError(f"{f!r} is not a tdbsql filter (use tdbsql.Zstd(...) etc.)")
            out.append(f.to_format())
        return FilterPipeline(tuple(out), self.max_chunk_size)

    @classmethod
    def from_format(cls, pipeline: FilterPipeline) -> "FilterList":
        return cls([_FROM_FORMAT[type(f)](f) for f in pipeline.filters], pipeline.max_chunk_size)


def as_filter_list(value) -> FilterList:
    if isinstance(value, FilterList):
        return value
    if value is None:
        return FilterList()
    if hasattr(value, "to_format") and not isinstance(value, (list, tuple)):
        return FilterList([value])
    return FilterList(list(value))


# --- dimensions, attributes, enumerations ----------------------------------------------------


@dataclass(frozen=True)
class Dim:
    name: str
    dtype: Any = "int64"
    domain: tuple | None = None
    tile: Any = None
    filters: Any = ()

    @property
    def datatype(self) -> Datatype:
        return to_datatype(self.dtype, f"dimension {self.name!r}: ")


@dataclass(frozen=True)
class Attr:
    name: str
    dtype: Any = "float64"
    var: bool | None = None
    cell_val_num: int | None = None
    nullable: bool = False
    fill: Any = None
    enumeration: str | None = None
    filters: Any = ()

    @property
    def datatype(self) -> Datatype:
        return to_datatype(self.dtype, f"attribute {self.name!r}: ")

    @property
    def resolved_cell_val_num(self) -> int:
        """VAR_NUM for var-sized attributes, else the values per cell."""
        if self.var:
            return VAR_NUM
        if self.cell_val_num is not None:
            return VAR_NUM if self.cell_val_num == VAR_NUM else int(self.cell_val_num)
        if self.var is None and type_info(self.datatype).kind in ("string", "binary"):
            return VAR_NUM
        return 1


@dataclass(frozen=True)
class Enumeration:
    """Labels of an integer attribute: ``values`` are str, bytes or numbers."""

    name: str
    values: tuple
    ordered: bool = False
    dtype: Any = None

    def __init__(self, name: str, values: Sequence, *, ordered: bool = False, dtype: Any = None):
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "values", tuple(values))
        object.__setattr__(self, "ordered", bool(ordered))
        object.__setattr__(self, "dtype", dtype)

    def to_format(self, path_name: str) -> FormatEnumeration:
        values = self.values
        if self.dtype is not None:
            datatype = to_datatype(self.dtype, f"enumeration {self.name!r}: ")
        elif values and all(isinstance(v, str) for v in values):
            datatype = Datatype.STRING_UTF8
        elif values and all(isinstance(v, bytes) for v in values):
            datatype = Datatype.BLOB
        else:
            datatype = to_datatype(np.asarray(values).dtype, f"enumeration {self.name!r}: ")
        info = type_info(datatype)
        if info.kind in ("string", "binary"):
            raw = [v.encode("utf-8") if isinstance(v, str) else bytes(v) for v in values]
            if len(set(raw)) != len(raw):
                raise SchemaError(f"enumeration {self.name!r}: values must be unique")
            offsets = tuple(int(x) for x in np.cumsum([0] + [len(r) for r in raw[:-1]])) if raw else ()
            return FormatEnumeration(self.name, path_name, datatype, VAR_NUM, self.ordered,
                                     b"".join(raw), offsets)
        arr = np.asarray(values, dtype=info.numpy)
        if len(np.unique(arr)) != len(arr):
            raise SchemaError(f"enumeration {self.name!r}: values must be unique")
        return FormatEnumeration(self.name, path_name, datatype, 1, self.ordered, arr.tobytes())

    @classmethod
    def from_format(cls, e: FormatEnumeration) -> "Enumeration":
        return cls(e.name, e.values(), ordered=e.ordered, dtype=Datatype(e.datatype))


# --- the schema --------------------------------------------------------------------------------

_ORDERS = {"row-major": Layout.ROW_MAJOR, "col-major": Layout.COL_MAJOR, "hilbert": Layout.HILBERT,
           "C": Layout.ROW_MAJOR, "F": Layout.COL_MAJOR, "H": Layout.HILBERT}
_ORDER_NAMES = {Layout.ROW_MAJOR: "row-major", Layout.COL_MAJOR: "col-major", Layout.HILBERT: "hilbert"}

# TileDB's defaults for a new schema (ArraySchema constructor / TileDB-Py).
DEFAULT_COORDS = FilterList([Zstd(-1)])
DEFAULT_OFFSETS = FilterList([Zstd(-1)])
DEFAULT_VALIDITY = FilterList([Rle(-1)])


@dataclass(frozen=True)
class Schema:
    dims: tuple
    attrs: tuple
    sparse: bool = True
    capacity: int = 10000
    cell_order: str = "row-major"
    tile_order: str = "row-major"
    allows_duplicates: bool = False
    coords_filters: Any = None
    offsets_filters: Any = None
    validity_filters: Any = None
    enumerations: tuple = ()

    def __init__(self, dims: Sequence[Dim], attrs: Sequence[Attr] = (), *, sparse: bool = True,
                 capacity: int = 10000, cell_order: str = "row-major",
                 tile_order: str = "row-major", allows_duplicates: bool = False,
                 coords_filters=None, offsets_filters=None, validity_filters=None,
                 enumerations: Sequence[Enumeration] = ()):
        values = dict(dims=tuple(dims), attrs=tuple(attrs), sparse=bool(sparse),
                      capacity=int(capacity), cell_order=cell_order, tile_order=tile_order,
                      allows_duplicates=bool(allows_duplicates),
                      coords_filters=DEFAULT_COORDS if coords_filters is None else as_filter_list(coords_filters),
                      offsets_filters=DEFAULT_OFFSETS if offsets_filters is None else as_filter_list(offsets_filters),
                      validity_filters=DEFAULT_VALIDITY if validity_filters is None else as_filter_list(validity_filters),
                      enumerations=tuple(enumerations))
        for key, value in values.items():
            object.__setattr__(self, key, value)
        validate(self)

    # -- conversion ------------------------------------------------------------------------

    def to_format(self, name: str = "", enumeration_files: dict[str, str] | None = None,
                  timestamp: int = 0) -> ArraySchema:
        """The stored schema; ``enumeration_files`` maps enumeration name -> file name."""
        files = enumeration_files or {}
        coords = self.coords_filters.to_format()
        dims = tuple(_format_dim(d, coords, self) for d in self.dims)
        attrs = tuple(_format_attr(a) for a in self.attrs)
        refs = tuple(EnumerationRef(e.name, files.get(e.name, "")) for e in self.enumerations)
        return ArraySchema(
            version=SCHEMA_WRITE_VERSION,
            array_type=ArrayType.SPARSE if self.sparse else ArrayType.DENSE,
            allows_duplicates=self.allows_duplicates,
            tile_order=_ORDERS[self.tile_order], cell_order=_ORDERS[self.cell_order],
            capacity=self.capacity, coords_filters=coords,
            offsets_filters=self.offsets_filters.to_format(),
            validity_filters=self.validity_filters.to_format(),
            dimensions=dims, attributes=attrs, enumerations=refs,
            current_domain=CurrentDomain(0, True), name=name,
            timestamp_range=(timestamp, timestamp),
        )

    @classmethod
    def from_format(cls, s: ArraySchema, enumerations: dict | None = None) -> "Schema":
        """The public schema of a stored one (``enumerations``: name -> format Enumeration)."""
        dims = [Dim(d.name, "ascii" if d.is_var else d.datatype, d.domain, d.tile_extent,
                    filters=FilterList() if d.stored_filters is not None
                    else FilterList.from_format(d.filters))
                for d in s.dimensions]
        attrs = [Attr(a.name, a.datatype, var=a.is_var, cell_val_num=None if a.is_var else a.cell_val_num,
                      nullable=a.nullable, fill=a.fill_value, enumeration=a.enumeration_name,
                      filters=FilterList.from_format(a.filters)) for a in s.attributes]
        enums = [Enumeration.from_format(e) for e in (enumerations or {}).values()]
        return cls(dims, attrs, sparse=s.sparse, capacity=s.capacity,
                   cell_order=_ORDER_NAMES.get(s.cell_order, "row-major"),
                   tile_order=_ORDER_NAMES.get(s.tile_order, "row-major"),
                   allows_duplicates=s.allows_duplicates,
                   coords_filters=FilterList.from_format(s.coords_filters),
                   offsets_filters=FilterList.from_format(s.offsets_filters),
                   validity_filters=FilterList.from_format(s.validity_filters),
                   enumerations=enums)

    def format_enumerations(self) -> dict[str, FormatEnumeration]:
        """Each enumeration with a fresh file name ``__<uuid>_0`` (as TileDB names them)."""
        import uuid

        return {e.name: e.to_format(f"__{uuid.uuid4().hex}_0") for e in self.enumerations}


def _format_dim(d: Dim, coords: FilterPipeline, schema: Schema) -> Dimension:
    dt = d.datatype
    stored = as_filter_list(d.filters).to_format()
    inherits = not stored.filters
    if type_info(dt).is_string:
        return Dimension(d.name, dt, VAR_NUM, coords if inherits else stored, None, None,
                         stored_filters=stored if inherits else None)
    info = type_info(dt)
    lo, hi = (np.asarray(v, dtype=info.numpy).item() for v in _raw_domain(d, dt))
    tile = d.tile
    if tile is None and schema.cell_order != "hilbert":
        # TileDB's set_null_tile_extents_to_range: the whole domain is one tile.
        tile = hi - lo if info.kind == "float" else whole_domain_tile(lo, hi, info.numpy)
    tile = None if tile is None else np.asarray(tile, dtype=info.numpy).item()
    return Dimension(d.name, dt, 1, coords if inherits else stored, (lo, hi), tile,
                     stored_filters=stored if inherits else None)


def whole_domain_tile(lo: int, hi: int, numpy_type) -> int:
    """The domain's width as the tile extent -- or, when the width does not fit the type
    (an INT8 domain of [-100, 100]), the fewest equal tiles whose extent fits it and whose
    expanded domain stays in range.  TileDB stores the width wrapped around (-55 there), a
    tile extent its own writes then trip over."""
    top = int(np.iinfo(numpy_type).max)
    span = hi - lo + 1
    tiles = 1
    while True:
        extent = -(-span // tiles)
        if extent <= top and lo + tiles * extent - 1 <= top:
            return extent
        tiles += 1


def _raw_domain(d: Dim, dt: Datatype) -> tuple:
    lo, hi = d.domain
    if type_info(dt).kind in ("datetime", "time"):
        unit = type_info(dt).unit
        return tuple(raw_temporal(v, unit) for v in (lo, hi))
    return lo, hi


def raw_temporal(v, unit: str) -> int:
    """A date/time value (numpy, Python ``datetime`` / ``date`` / ``timedelta``, pandas, or the
    raw integer count) as the count of ``unit`` TileDB stores."""
    if isinstance(v, datetime.datetime | datetime.date):
        v = np.datetime64(v.replace(tzinfo=None) if isinstance(v, datetime.datetime) else v)
    elif isinstance(v, datetime.timedelta):
        v = np.timedelta64(v)
    if isinstance(v, (np.datetime64, np.timedelta64)):
        return int(v.astype(f"{'M' if isinstance(v, np.datetime64) else 'm'}8[{unit}]").astype(np.int64))
    try:
        return int(v)
    except (TypeError, ValueError):
        raise SchemaError(f"{v!r} is not a date, time or integer count of {unit}") from None


def _format_attr(a: Attr) -> Attribute:
    dt = a.datatype
    cvn = a.resolved_cell_val_num
    return Attribute(a.name, dt, cvn, as_filter_list(a.filters).to_format(), fill_bytes(a, dt, cvn),
                     nullable=a.nullable, fill_value_validity=False, order=DataOrder.UNORDERED,
                     enumeration_name=a.enumeration)


def fill_bytes(a: Attr, dt: Datatype, cvn: int) -> bytes:
    """The stored fill value: the user's, else TileDB's default for the type."""
    if a.fill is None:
        return default_fill_value(dt, cvn)
    info = type_info(dt)
    if isinstance(a.fill, (bytes, bytearray)):
        raw = bytes(a.fill)
    elif isinstance(a.fill, str):
        raw = a.fill.encode("utf-8")
    elif info.kind in ("datetime", "time"):
        raw = np.asarray([raw_temporal(a.fill, info.unit)], dtype=info.numpy).tobytes()
    else:
        raw = np.asarray(a.fill, dtype=info.numpy).reshape(-1).tobytes()
    if cvn != VAR_NUM and len(raw) != info.size * cvn:
        if len(raw) == info.size and cvn > 1:
            raw = raw * cvn
        else:
            raise SchemaError(f"attribute {a.name!r}: fill value has {len(raw)} bytes, a cell has "
                              f"{info.size * cvn}")
    if cvn == VAR_NUM and (len(raw) == 0 or len(raw) % info.size):
        raise SchemaError(f"attribute {a.name!r}: fill value must hold at least one value")
    return raw


# --- validation (TileDB's rules) ---------------------------------------------------------------


def validate(s: Schema) -> None:
    if not s.dims:
        raise SchemaError("a schema needs at least one dimension")
    for order_name, order in (("cell_order", s.cell_order), ("tile_order", s.tile_order)):
        if order not in _ORDERS:
            raise SchemaError(f"{order_name} must be 'row-major', 'col-major' or 'hilbert', not {order!r}")
    if _ORDERS[s.tile_order] == Layout.HILBERT:
        raise SchemaError("tile_order cannot be 'hilbert' (only the cell order can)")
    _check_names(s)
    enum_names = {e.name for e in s.enumerations}
    if len(enum_names) != len(s.enumerations):
        raise SchemaError("enumeration names must be unique")
    for d in s.dims:
        _check_dim(d, s)
    for a in s.attrs:
        _check_attr(a, s)
    if s.sparse:
        if s.capacity <= 0:
            raise SchemaError("sparse arrays cannot have a capacity of 0")
    else:
        _check_dense(s)
    if _ORDERS[s.cell_order] == Layout.HILBERT and len(s.dims) > HILBERT_MAX_DIMS:
        raise SchemaError(f"Hilbert order supports at most {HILBERT_MAX_DIMS} dimensions")
    coords = s.coords_filters.to_format()
    for d in s.dims:  # dimensions without their own filters use the coords filters
        if not as_filter_list(d.filters).filters:
            _check_pipeline(coords, d.datatype, type_info(d.datatype).is_string,
                            f"coords filters (dimension {d.name!r})")
    _check_pipeline(s.offsets_filters.to_format(), Datatype.UINT64, False, "offsets filters")
    _check_pipeline(s.validity_filters.to_format(), Datatype.UINT8, False, "validity filters")


def _check_names(s: Schema) -> None:
    seen: set[str] = set()
    for kind, item in [("dimension", d) for d in s.dims] + [("attribute", a) for a in s.attrs]:
        name = item.name
        if not isinstance(name, str) or name == "":
            raise SchemaError(f"a {kind} needs a non-empty name")
        if name.startswith("__"):
            raise SchemaError(f"{kind} {name!r}: names starting with '__' are reserved")
        if name in seen:
            raise SchemaError(f"duplicate name {name!r}: dimension and attribute names must be unique")
        seen.add(name)


def _check_dim(d: Dim, s: Schema) -> None:
    where = f"dimension {d.name!r}: "
    dt = d.datatype
    info = type_info(dt)
    if info.is_string:
        if dt != Datatype.STRING_ASCII:
            raise SchemaError(f"{where}string dimensions must be 'ascii' (STRING_ASCII), not {dt.name}")
        if not s.sparse:
            raise SchemaError(f"{where}dense arrays cannot have string dimensions")
        if d.domain is not None and tuple(d.domain) != (None, None):
            raise SchemaError(f"{where}string dimensions take no domain")
        if d.tile is not None:
            raise SchemaError(f"{where}string dimensions take no tile extent")
    elif info.kind not in ("int", "float", "datetime", "time"):
        raise SchemaError(f"{where}datatype {dt.name} cannot be a dimension")
    else:
        _check_fixed_dim(d, dt, where, not s.sparse)
    _check_pipeline(as_filter_list(d.filters).to_format(), dt, info.is_string, where + "filters")


def _check_fixed_dim(d: Dim, dt: Datatype, where: str, dense: bool) -> None:
    info = type_info(dt)
    if d.domain is None or len(d.domain) != 2 or any(v is None for v in d.domain):
        raise SchemaError(f"{where}a domain (lo, hi) is required")
    try:
        lo, hi = (np.asarray(v, dtype=info.numpy).item() for v in _raw_domain(d, dt))
        raw_lo, raw_hi = _raw_domain(d, dt)
    except (TypeError, ValueError, OverflowError):
        raise SchemaError(f"{where}domain {d.domain!r} does not fit {dt.name}") from None
    if info.kind != "float" and (lo != raw_lo or hi != raw_hi):
        raise SchemaError(f"{where}domain {d.domain!r} does not fit {dt.name}")
    if info.kind == "float" and not (np.isfinite(lo) and np.isfinite(hi)):
        raise SchemaError(f"{where}domain bounds must be finite")
    if lo > hi:
        raise SchemaError(f"{where}domain lower bound {lo} is greater than the upper bound {hi}")
    if d.tile is None:
        if info.kind != "float" and lo == np.iinfo(info.numpy).min and hi == np.iinfo(info.numpy).max:
            raise SchemaError(f"{where}a tile extent is required when the domain spans the whole type")
        return
    try:
        tile = np.asarray(d.tile, dtype=info.numpy).item()
    except (TypeError, ValueError, OverflowError):
        raise SchemaError(f"{where}tile extent {d.tile!r} does not fit {dt.name}") from None
    if info.kind == "float":
        if not tile > 0:
            raise SchemaError(f"{where}tile extent must be greater than 0")
        if tile > hi - lo + 1:
            raise SchemaError(f"{where}tile extent {tile} exceeds the domain range [{lo}, {hi}]")
        return
    if tile <= 0:
        raise SchemaError(f"{where}tile extent must be greater than 0")
    span = hi - lo + 1
    if tile > span:
        raise SchemaError(f"{where}tile extent {tile} exceeds the domain range [{lo}, {hi}]")
    # TileDB checks the tile-expanded domain max against the 64-bit range whatever the type, so
    # a sparse int8 domain [0, 127] with extent 22 is fine; in a dense array TileDB cannot write
    # its last tile ("write tile overflow"), so tdbsql refuses the schema
    if span % tile and (np.dtype(info.numpy).itemsize == 8 or dense):
        upper_floor = (span - 1) // tile * tile + lo
        if upper_floor + tile - 1 > np.iinfo(info.numpy).max:
            raise SchemaError(f"{where}domain max expanded to a multiple of the tile extent exceeds "
                              f"the {dt.name} range; reduce the domain max by one tile extent")


def _check_attr(a: Attr, s: Schema) -> None:
    where = f"attribute {a.name!r}: "
    dt = a.datatype
    cvn = a.cell_val_num
    if a.var and cvn not in (None, VAR_NUM):
        raise SchemaError(f"{where}var=True conflicts with cell_val_num={cvn}")
    if cvn is not None and cvn != VAR_NUM and int(cvn) < 1:
        raise SchemaError(f"{where}cell_val_num must be at least 1")
    resolved = a.resolved_cell_val_num
    if a.enumeration is not None:
        enums = {e.name: e for e in s.enumerations}
        if a.enumeration not in enums:
            raise SchemaError(f"{where}refers to an unknown enumeration {a.enumeration!r}")
        if not _is_integer(dt):
            raise SchemaError(f"{where}an attribute with an enumeration must have an integer type, "
                              f"not {dt.name}")
        if resolved != 1:
            raise SchemaError(f"{where}an attribute with an enumeration must have cell_val_num 1")
        if np.iinfo(type_info(dt).numpy).max <= len(enums[a.enumeration].values):
            raise SchemaError(f"{where}type {dt.name} is too small for the "
                              f"{len(enums[a.enumeration].values)} labels of {a.enumeration!r}")
    fill_bytes(a, dt, resolved)
    _check_pipeline(as_filter_list(a.filters).to_format(), dt, resolved == VAR_NUM, where + "filters")


def _check_dense(s: Schema) -> None:
    if not s.attrs:
        raise SchemaError("dense arrays need at least one attribute")
    if _ORDERS[s.cell_order] == Layout.HILBERT:
        raise SchemaError("Hilbert cell order is only applicable to sparse arrays")
    types = {d.datatype for d in s.dims}
    if len(types) != 1:
        raise SchemaError("in dense arrays all dimensions must have the same datatype")
    dt = types.pop()
    if not (_is_integer(dt) or _is_temporal(dt)):
        raise SchemaError(f"dense arrays do not support dimension datatype {dt.name}")
    if s.allows_duplicates:
        raise SchemaError("dense arrays cannot allow duplicates")


def _check_pipeline(pipeline: FilterPipeline, datatype: Datatype, is_var: bool, where: str) -> None:
    """TileDB's FilterPipeline::check_filter_types (``FilterPipeline.type_refusal``)."""
    refusal = pipeline.type_refusal(datatype, is_var)
    if refusal:
        raise SchemaError(f"{where}: {refusal}")


__all__ = [
    "Attr", "BitShuffle", "BitWidthReduction", "ByteShuffle", "Bzip2", "ChecksumMD5",
    "ChecksumSHA256", "Delta", "Dictionary", "Dim", "DoubleDelta", "Enumeration", "FilterList",
    "FloatScale", "Gzip", "Lz4", "NoOp", "PositiveDelta", "Rle", "Schema", "SchemaError", "Webp",
    "Xor", "Zstd", "to_datatype",
]
