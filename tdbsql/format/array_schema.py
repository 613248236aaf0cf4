"""Array schemas (spec: array_schema.md, checked against TileDB's array_schema sources).

In: the bytes of a schema file (a generic tile) of any format version, 1 through 23.
Out: an ``ArraySchema``.  ``ArraySchema.to_bytes()`` gives back the decoded bytes TileDB 2.30
writes (always format version 22, as TileDB re-writes every schema in its own version) and
``write_array_schema`` the whole file.

Layout of the decoded bytes (fields marked vN exist from format version N on)::

    version u32, allows_dups u8 (v5), array_type u8, tile_order u8, cell_order u8,
    capacity u64, coords filters, offsets filters, validity filters (v7),
    domain: [datatype u8 (before v5)], dim_num u32, dimensions,
    attribute_num u32, attributes,
    label_num u32, labels (v18),
    enumeration_num u32, (name length u32, name, file length u32, file name) each (v20),
    current domain (v22)

Dimension: ``name length u32, name, datatype u8 (v5), cell_val_num u32 (v5), filters (v5),
domain size u64 (v5; before it is 2 x the domain datatype size), domain, null tile extent u8,
tile extent (datatype size bytes, if not null)``.  A dimension whose stored pipeline is empty
uses the coords filters; ``Dimension.filters`` holds that effective pipeline.

Attribute: ``name length u32, name, datatype u8, cell_val_num u32, filters, fill size u64 (v6),
fill value (v6), nullable u8 (v7), fill validity u8 (v7), order u8 (v17), enumeration name
length u32 + name (v20)``.

Dimension label (v18, differs from the spec's table, which TileDB never followed)::

    dimension index u32, name length u32, name, relative uri u8, uri length u64, uri,
    label attribute name length u32, label attribute name, label order u8, datatype u8,
    cell_val_num u32, is external u8

Current domain (v22): ``version u32 (0), empty u8``, then if not empty ``type u8
(0 = NDRECTANGLE)`` and per dimension either ``lo, hi`` (fixed) or ``range size u64,
start size u64, bytes`` (var-sized).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

import numpy as np

from ..datatypes import VAR_NUM, ArrayType, DataOrder, Datatype, Layout, TypeInfo, type_info
from ..errors import CorruptArrayError, UnsupportedFormatError
from .binary import Reader, Writer
from .filter_pipeline import FilterPipeline
from .filters.compression import GzipFilter
from .generic_tile import MAX_READ_VERSION, decode_generic_tile, encode_generic_tile

# TileDB 2.30 writes every schema as version 22; version 23 (TileDB 2.31+) changed only
# fragment metadata, so its schemas have the same layout and are read too.
SCHEMA_WRITE_VERSION = 22
MAX_CELL_VALUES = 2**31 - 1  # Arrow's fixed-size lists count values in an int32
CURRENT_DOMAIN_VERSION = 0
CURRENT_DOMAIN_NDRECTANGLE = 0
LEGACY_SCHEMA_NAME = "__array_schema.tdb"

# How TileDB filters every generic tile it writes (constants::generic_tile_compressor/level).
GENERIC_TILE_PIPELINE = FilterPipeline((GzipFilter(level=1),))


class Field:
    """What a dimension and an attribute share: ``datatype`` and ``cell_val_num`` read as
    the datatype's facts and var-sizedness."""

    datatype: Datatype
    cell_val_num: int

    @property
    def is_var(self) -> bool:
        return self.cell_val_num == VAR_NUM

    @property
    def info(self) -> TypeInfo:
        return type_info(self.datatype)


@dataclass(frozen=True)
class Dimension(Field):
    name: str
    datatype: Datatype
    cell_val_num: int  # 1, or VAR_NUM for var-sized (string) dimensions
    filters: FilterPipeline  # the pipeline its coordinate tiles use (coords filters if inherited)
    domain: tuple[Any, Any] | None  # (lo, hi) as Python numbers; None for var-sized dims
    tile_extent: Any | None  # Python number, or None (null tile extent)
    # The pipeline stored in the file when it differs from ``filters``: an empty stored pipeline
    # means "use the coords filters" (and before v5 dimensions stored none).
    stored_filters: FilterPipeline | None = None


@dataclass(frozen=True)
class Attribute(Field):
    name: str
    datatype: Datatype
    cell_val_num: int  # values per cell, or VAR_NUM
    filters: FilterPipeline
    fill_value: bytes  # raw bytes, as stored
    nullable: bool = False
    fill_value_validity: bool = False
    order: DataOrder = DataOrder.UNORDERED
    enumeration_name: str | None = None

    @property
    def cell_size(self) -> int:
        """Bytes per cell of a fixed-sized attribute."""
        return self.info.size * self.cell_val_num


@dataclass(frozen=True)
class DimensionLabel:
    dimension_index: int
    order: DataOrder
    name: str
    relative_uri: bool
    uri: str
    attribute_name: str
    datatype: Datatype
    cell_val_num: int
    is_external: bool
    # The spec lists a label domain, but TileDB never serializes one; these stay empty when read.
    domain: bytes = b""
    domain_start_size: int = 0


@dataclass(frozen=True)
class CurrentDomain:
    """The current domain: ``ranges`` per dimension ((lo, hi) Python values), or empty.

    Var-sized dimensions get ``(lo_bytes, hi_bytes)``.
    """

    version: int
    empty: bool
    ranges: tuple[tuple[Any, Any], ...] = ()
    type: int = CURRENT_DOMAIN_NDRECTANGLE


@dataclass(frozen=True)
class EnumerationRef:
    name: str
    filename: str  # file in __schema/__enumerations/


@dataclass(frozen=True)
class ArraySchema:
    version: int
    array_type: ArrayType
    allows_duplicates: bool
    tile_order: Layout
    cell_order: Layout
    capacity: int
    coords_filters: FilterPipeline
    offsets_filters: FilterPipeline
    validity_filters: FilterPipeline
    dimensions: tuple[Dimension, ...]
    attributes: tuple[Attribute, ...]
    dimension_labels: tuple[DimensionLabel, ...] = ()
    enumerations: tuple[EnumerationRef, ...] = ()
    current_domain: CurrentDomain | None = None
    name: str = ""  # file name in __schema/ ("__array_schema.tdb" for the legacy file)
    timestamp_range: tuple[int, int] = (0, 0)  # from the file name
    extra: dict = field(default_factory=dict, compare=False)

    @classmethod
    def read(
        cls, data: bytes, where: str, name: str = "", key: bytes | None = None
    ) -> "ArraySchema":
        return read_array_schema(data, where, name, key)

    def to_bytes(self) -> bytes:
        """The decoded schema bytes, as TileDB 2.30 writes them (format version 22)."""
        w = Writer()
        _write_schema(w, self)
        return w.getvalue()

    @property
    def sparse(self) -> bool:
        return self.array_type == ArrayType.SPARSE

    @property
    def dense(self) -> bool:
        return self.array_type == ArrayType.DENSE

    def current_bounds(self) -> list:
        """Per dimension the (lo, hi) of the current domain, or None where it sets no bound
        (no current domain, or it is the dimension's whole domain)."""
        current = self.current_domain
        if current is None or current.empty:
            return [None] * len(self.dimensions)
        return [None if dim.domain is not None and tuple(dim.domain) == tuple(bounds)
                else tuple(bounds) for dim, bounds in zip(self.dimensions, current.ranges)]

    def fields_by_name(self) -> dict[str, Field]:
        """Every dimension, then every attribute, by its name (unique across both)."""
        return {f.name: f for f in (*self.dimensions, *self.attributes)}

    def attribute(self, name: str) -> Attribute:
        for attr in self.attributes:
            if attr.name == name:
                return attr
        raise KeyError(name)

    def dimension(self, name: str) -> Dimension:
        for dim in self.dimensions:
            if dim.name == name:
                return dim
        raise KeyError(name)

    def enumeration_filename(self, name: str) -> str:
        """File (in ``__schema/__enumerations/``) of the enumeration called ``name``."""
        for ref in self.enumerations:
            if ref.name == name:
                return ref.filename
        raise KeyError(name)


# --- public entry points ------------------------------------------------------------------


def read_array_schema(
    data: bytes, where: str, name: str = "", key: bytes | None = None
) -> ArraySchema:
    """Parse a schema file (a generic tile); ``name`` is its file name, for the timestamps."""
    raw = decode_generic_tile(data, where, key)
    return parse_array_schema(raw.tobytes(), where, name)


def write_array_schema(schema: ArraySchema, key: bytes | None = None) -> bytes:
    """The whole schema file as TileDB writes it: a GZIP(level 1) generic tile."""
    return encode_generic_tile(
        schema.to_bytes(), SCHEMA_WRITE_VERSION, pipeline=GENERIC_TILE_PIPELINE,
        datatype=Datatype.CHAR, cell_size=1, key=key,
    )


def parse_array_schema(raw: bytes, where: str, name: str = "") -> ArraySchema:
    """Parse the decoded bytes of a schema file."""
    r = Reader(raw, where)
    schema = _read_schema(r, name)
    if not r.at_end():
        raise r.error("schema", f"{r.remaining} unexpected bytes after the last field")
    return schema


_SCHEMA_NAME = re.compile(r"^__(\d+)_(\d+)_[0-9a-fA-F]+(?:_\d+)?$")


def schema_timestamp_range(name: str, where: str = "") -> tuple[int, int]:
    """Timestamps of a schema file name ``__t1_t2_uuid``; (0, 0) for the legacy file or ""."""
    base = name.rstrip("/").rsplit("/", 1)[-1]
    if base in ("", LEGACY_SCHEMA_NAME):
        return (0, 0)
    match = _SCHEMA_NAME.match(base)
    if match is None:
        raise CorruptArrayError(f"schema file name {base!r} is not __t1_t2_uuid", where or None)
    start, end = int(match.group(1)), int(match.group(2))
    if start > end:
        raise CorruptArrayError(f"schema file name {base!r}: start after end", where or None)
    return (start, end)


# --- small typed fields -------------------------------------------------------------------


def read_datatype(r: Reader, field_name: str) -> Datatype:
    """A datatype byte; an unknown id is an UnsupportedFormatError naming file and field."""
    code = r.u8(field_name)
    try:
        return type_info(code).datatype
    except UnsupportedFormatError:
        where = f"{r.where}: " if r.where else ""
        raise UnsupportedFormatError(f"{where}{field_name}: unknown datatype id {code}") from None


def read_enum(r: Reader, enum_type: type[IntEnum], field_name: str):
    code = r.u8(field_name)
    try:
        return enum_type(code)
    except ValueError:
        raise r.error(field_name, f"invalid value {code}") from None


def read_name(r: Reader, field_name: str) -> str:
    return r.string(r.u32(f"{field_name} length"), field_name)


def write_name(w: Writer, text: str) -> None:
    raw = text.encode("utf-8")
    w.u32(len(raw)).raw(raw)


def decode_values(raw: bytes, datatype: Datatype) -> tuple:
    """Stored values of ``datatype`` as Python numbers."""
    return tuple(np.frombuffer(raw, dtype=type_info(datatype).numpy).tolist())


def encode_values(values, datatype: Datatype) -> bytes:
    return np.asarray(values, dtype=type_info(datatype).numpy).tobytes()


def default_fill_value(datatype: Datatype, cell_val_num: int) -> bytes:
    """The fill value TileDB gives attributes of schemas older than v6 (one per value)."""
    info = type_info(datatype)
    if info.kind == "float":
        one = np.array([np.nan], dtype=info.numpy).tobytes()
    elif datatype == Datatype.CHAR:
        one = b"\x80"  # a C char is signed: its minimum
    elif info.kind in ("int", "datetime", "time") and info.numpy.kind == "i":
        one = np.array([np.iinfo(info.numpy).min], dtype=info.numpy).tobytes()
    elif info.kind == "int":  # unsigned
        one = np.array([np.iinfo(info.numpy).max], dtype=info.numpy).tobytes()
    else:  # bool, strings other than CHAR, blobs: zero
        one = bytes(info.size)
    return one * (1 if cell_val_num == VAR_NUM else cell_val_num)


# --- reading ------------------------------------------------------------------------------


def _read_schema(r: Reader, name: str) -> ArraySchema:
    version = r.u32("schema version")
    if version == 0 or version > MAX_READ_VERSION:
        where = f"{r.where}: " if r.where else ""
        raise UnsupportedFormatError(f"{where}schema format version {version} is not supported")
    allows_dups = r.bool("allows duplicates") if version >= 5 else False
    array_type = read_enum(r, ArrayType, "array type")
    tile_order = read_enum(r, Layout, "tile order")
    cell_order = read_enum(r, Layout, "cell order")
    capacity = r.u64("capacity")
    coords_filters = _read_pipeline(r, version, "coords filters")
    offsets_filters = _read_pipeline(r, version, "offsets filters")
    validity_filters = (
        _read_pipeline(r, version, "validity filters") if version >= 7 else FilterPipeline()
    )
    dimensions = _read_domain(r, version, coords_filters)
    attributes = tuple(_read_attribute(r, version, i) for i in range(r.u32("attribute count")))
    labels: tuple[DimensionLabel, ...] = ()
    if version >= 18:
        labels = tuple(_read_label(r, i) for i in range(r.u32("dimension label count")))
    enumerations: tuple[EnumerationRef, ...] = ()
    if version >= 20:
        enumerations = tuple(_read_enumeration_ref(r, i) for i in range(r.u32("enumeration count")))
    current_domain = _read_current_domain(r, dimensions) if version >= 22 else None
    return ArraySchema(
        version=version, array_type=array_type, allows_duplicates=allows_dups,
        tile_order=tile_order, cell_order=cell_order, capacity=capacity,
        coords_filters=coords_filters, offsets_filters=offsets_filters,
        validity_filters=validity_filters, dimensions=dimensions, attributes=attributes,
        dimension_labels=labels, enumerations=enumerations, current_domain=current_domain,
        name=name.rstrip("/").rsplit("/", 1)[-1],
        timestamp_range=schema_timestamp_range(name, r.where),
    )


def _read_pipeline(r: Reader, version: int, field_name: str) -> FilterPipeline:
    try:
        return FilterPipeline.read(r, version)
    except CorruptArrayError as exc:
        # Say which pipeline of the schema was broken.
        message = str(exc).removeprefix(f"{exc.where}: " if exc.where else "")
        raise type(exc)(f"{field_name}: {message}", exc.where) from None


def _read_domain(r: Reader, version: int, coords_filters: FilterPipeline) -> tuple[Dimension, ...]:
    legacy_type = read_datatype(r, "domain datatype") if version < 5 else None
    dim_num = r.u32("dimension count")
    if dim_num == 0:
        raise r.error("dimension count", "a domain needs at least one dimension")
    return tuple(
        _read_dimension(r, version, legacy_type, coords_filters, i) for i in range(dim_num)
    )


def _read_dimension(
    r: Reader, version: int, legacy_type: Datatype | None, coords_filters: FilterPipeline,
    index: int,
) -> Dimension:
    label = f"dimension {index}"
    name = read_name(r, f"{label} name")
    if version >= 5:
        datatype = read_datatype(r, f"{label} datatype")
        cell_val_num = r.u32(f"{label} cell_val_num")
        if cell_val_num not in (1, VAR_NUM):
            raise r.error(f"{label} cell_val_num", f"{cell_val_num}: a dimension has one value "
                          "a cell or is var-sized")
        stored = _read_pipeline(r, version, f"{label} filters")
        domain_size = r.u64(f"{label} domain size")
    else:
        datatype = legacy_type
        cell_val_num = VAR_NUM if type_info(datatype).is_string else 1
        stored = FilterPipeline()
        domain_size = 2 * type_info(datatype).size
    domain_raw = r.bytes(domain_size, f"{label} domain")
    null_extent = r.bool(f"{label} null tile extent flag")
    extent_raw = None if null_extent else r.bytes(type_info(datatype).size, f"{label} tile extent")
    inherits = not stored.filters
    domain = _dimension_domain(r, datatype, cell_val_num, domain_raw, label)
    extent = None if extent_raw is None else decode_values(extent_raw, datatype)[0]
    # the kernels divide by it; TileDB gives a float domain of one point the extent 0
    point = type_info(datatype).kind == "float" and domain is not None and domain[0] == domain[1]
    if extent is not None and not (extent > 0 or (extent == 0 and point)):
        raise r.error(f"{label} tile extent", f"{extent} is not positive")
    return Dimension(
        name=name, datatype=datatype, cell_val_num=cell_val_num,
        filters=coords_filters if inherits else stored, domain=domain,
        tile_extent=extent, stored_filters=stored if inherits else None,
    )


def _dimension_domain(r: Reader, datatype: Datatype, cell_val_num: int, raw: bytes, label: str):
    if cell_val_num == VAR_NUM:
        return None
    size = type_info(datatype).size
    if len(raw) != 2 * size:
        raise r.error(f"{label} domain size", f"{len(raw)} bytes, expected {2 * size}")
    lo, hi = decode_values(raw, datatype)
    if not lo <= hi:
        raise r.error(f"{label} domain", f"[{lo}, {hi}] is empty")
    return (lo, hi)


def _read_attribute(r: Reader, version: int, index: int) -> Attribute:
    label = f"attribute {index}"
    name = read_name(r, f"{label} name")
    datatype = read_datatype(r, f"{label} datatype")
    cell_val_num = r.u32(f"{label} cell_val_num")
    if cell_val_num == 0 or MAX_CELL_VALUES < cell_val_num < VAR_NUM:
        raise r.error(f"{label} cell_val_num", f"{cell_val_num} values a cell")
    filters = _read_pipeline(r, version, f"{label} filters")
    if version >= 6:
        fill = r.bytes(r.u64(f"{label} fill value size"), f"{label} fill value")
        cell_size = type_info(datatype).size * cell_val_num
        if cell_val_num != VAR_NUM and len(fill) != cell_size:  # a cell's fill is one cell
            raise r.error(f"{label} fill value", f"{len(fill)} bytes for cells of {cell_size}")
    else:
        fill = default_fill_value(datatype, cell_val_num)
    nullable = r.bool(f"{label} nullable flag") if version >= 7 else False
    fill_validity = r.bool(f"{label} fill value validity") if version >= 7 else False
    order = read_enum(r, DataOrder, f"{label} order") if version >= 17 else DataOrder.UNORDERED
    enumeration = None
    if version >= 20:
        enumeration = read_name(r, f"{label} enumeration name") or None
    return Attribute(
        name=name, datatype=datatype, cell_val_num=cell_val_num, filters=filters,
        fill_value=fill, nullable=nullable, fill_value_validity=fill_validity, order=order,
        enumeration_name=enumeration,
    )


def _read_label(r: Reader, index: int) -> DimensionLabel:
    label = f"dimension label {index}"
    dim_index = r.u32(f"{label} dimension index")
    name = read_name(r, f"{label} name")
    relative = r.bool(f"{label} relative uri flag")
    uri = r.string(r.u64(f"{label} uri length"), f"{label} uri")
    attr_name = read_name(r, f"{label} attribute name")
    order = read_enum(r, DataOrder, f"{label} order")
    datatype = read_datatype(r, f"{label} datatype")
    cell_val_num = r.u32(f"{label} cell_val_num")
    is_external = r.bool(f"{label} is external flag")
    return DimensionLabel(
        dimension_index=dim_index, order=order, name=name, relative_uri=relative, uri=uri,
        attribute_name=attr_name, datatype=datatype, cell_val_num=cell_val_num,
        is_external=is_external,
    )


def _read_enumeration_ref(r: Reader, index: int) -> EnumerationRef:
    name = read_name(r, f"enumeration {index} name")
    filename = read_name(r, f"enumeration {index} file name")
    return EnumerationRef(name, filename)


def _read_current_domain(r: Reader, dimensions: tuple[Dimension, ...]) -> CurrentDomain:
    version = r.u32("current domain version")
    if version > CURRENT_DOMAIN_VERSION:
        where = f"{r.where}: " if r.where else ""
        raise UnsupportedFormatError(f"{where}current domain version {version} is not supported")
    if r.bool("current domain empty flag"):
        return CurrentDomain(version, True)
    kind = r.u8("current domain type")
    if kind != CURRENT_DOMAIN_NDRECTANGLE:
        where = f"{r.where}: " if r.where else ""
        raise UnsupportedFormatError(f"{where}current domain type {kind} is not supported")
    ranges = tuple(_read_range(r, dim, i) for i, dim in enumerate(dimensions))
    return CurrentDomain(version, False, ranges, kind)


def _read_range(r: Reader, dim: Dimension, index: int) -> tuple[Any, Any]:
    label = f"current domain range {index}"
    if not dim.is_var:
        lo, hi = decode_values(r.bytes(2 * dim.info.size, label), dim.datatype)
        return (lo, hi)
    size = r.u64(f"{label} size")
    start_size = r.u64(f"{label} start size")
    if start_size > size:
        raise r.error(f"{label} start size", f"{start_size} exceeds the range size {size}")
    raw = r.bytes(size, label)
    return (raw[:start_size], raw[start_size:])


# --- writing ------------------------------------------------------------------------------


def _write_schema(w: Writer, s: ArraySchema) -> None:
    w.u32(SCHEMA_WRITE_VERSION).bool(s.allows_duplicates)
    w.u8(s.array_type).u8(s.tile_order).u8(s.cell_order).u64(s.capacity)
    for pipeline in (s.coords_filters, s.offsets_filters, s.validity_filters):
        pipeline.write(w)
    w.u32(len(s.dimensions))
    for dim in s.dimensions:
        _write_dimension(w, dim)
    w.u32(len(s.attributes))
    for attr in s.attributes:
        _write_attribute(w, attr)
    w.u32(len(s.dimension_labels))
    for label in s.dimension_labels:
        _write_label(w, label)
    w.u32(len(s.enumerations))
    for ref in s.enumerations:
        write_name(w, ref.name)
        write_name(w, ref.filename)
    _write_current_domain(w, s.current_domain or CurrentDomain(CURRENT_DOMAIN_VERSION, True), s)


def _write_dimension(w: Writer, dim: Dimension) -> None:
    write_name(w, dim.name)
    w.u8(dim.datatype).u32(dim.cell_val_num)
    (dim.stored_filters if dim.stored_filters is not None else dim.filters).write(w)
    # TileDB stores no domain for string dimensions.
    domain = b"" if dim.is_var or dim.domain is None else encode_values(dim.domain, dim.datatype)
    w.u64(len(domain)).raw(domain)
    w.bool(dim.tile_extent is None)
    if dim.tile_extent is not None:
        w.raw(encode_values([dim.tile_extent], dim.datatype))


def _write_attribute(w: Writer, attr: Attribute) -> None:
    write_name(w, attr.name)
    w.u8(attr.datatype).u32(attr.cell_val_num)
    attr.filters.write(w)
    w.u64(len(attr.fill_value)).raw(attr.fill_value)
    w.bool(attr.nullable).bool(attr.fill_value_validity).u8(attr.order)
    write_name(w, attr.enumeration_name or "")


def _write_label(w: Writer, label: DimensionLabel) -> None:
    w.u32(label.dimension_index)
    write_name(w, label.name)
    uri = label.uri.encode("utf-8")
    w.bool(label.relative_uri).u64(len(uri)).raw(uri)
    write_name(w, label.attribute_name)
    w.u8(label.order).u8(label.datatype).u32(label.cell_val_num).bool(label.is_external)


def _write_current_domain(w: Writer, cd: CurrentDomain, s: ArraySchema) -> None:
    w.u32(cd.version).bool(cd.empty)
    if cd.empty:
        return
    if len(cd.ranges) != len(s.dimensions):
        raise ValueError(f"current domain has {len(cd.ranges)} ranges for {len(s.dimensions)} dims")
    w.u8(cd.type)
    for dim, (lo, hi) in zip(s.dimensions, cd.ranges):
        if dim.is_var:
            w.u64(len(lo) + len(hi)).u64(len(lo)).raw(lo).raw(hi)
        else:
            w.raw(encode_values([lo, hi], dim.datatype))
