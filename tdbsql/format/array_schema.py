"""Array schemas (spec: array_schema.md, current_domain.md, enumeration.md).

``ArraySchema.read(data, ...)`` parses a schema file (a generic tile) of any format version;
``ArraySchema.to_bytes()`` writes the version-22 form TileDB 2.30 writes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..datatypes import VAR_NUM, ArrayType, DataOrder, Datatype, Layout, TypeInfo, type_info
from .filter_pipeline import FilterPipeline


@dataclass(frozen=True)
class Dimension:
    name: str
    datatype: Datatype
    cell_val_num: int  # 1, or VAR_NUM for var-sized (string) dimensions
    filters: FilterPipeline
    domain: tuple[Any, Any] | None  # (lo, hi) as Python numbers; None for var-sized dims
    tile_extent: Any | None  # Python number, or None (null tile extent)

    @property
    def is_var(self) -> bool:
        return self.cell_val_num == VAR_NUM

    @property
    def info(self) -> TypeInfo:
        return type_info(self.datatype)


@dataclass(frozen=True)
class Attribute:
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
    def is_var(self) -> bool:
        return self.cell_val_num == VAR_NUM

    @property
    def info(self) -> TypeInfo:
        return type_info(self.datatype)

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
    domain: bytes  # raw (min, max) bytes of the label domain; empty if not set
    domain_start_size: int
    is_external: bool


@dataclass(frozen=True)
class CurrentDomain:
    """The current domain: ``ranges`` per dimension ((lo, hi) Python values), or empty."""

    version: int
    empty: bool
    ranges: tuple[tuple[Any, Any], ...] = ()


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

    @property
    def sparse(self) -> bool:
        return self.array_type == ArrayType.SPARSE

    @property
    def dense(self) -> bool:
        return self.array_type == ArrayType.DENSE

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
