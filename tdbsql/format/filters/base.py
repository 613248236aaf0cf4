"""The filter interface and the registry keyed by TileDB filter id.

A filter works on one chunk at a time.  Decoding runs the pipeline's filters in reverse; each
filter receives the chunk metadata still to be consumed and the chunk data, reads its own header
from the *front* of the metadata, and returns ``(rest_of_metadata, decoded_data)`` -- exactly the
stacking TileDB uses (a filter prepends its header to the metadata it forwards; compressors
compress the whole metadata they were given).  Encoding is the mirror image.

Filters that care about element types (deltas, bit width, XOR, float scale) get the datatype that
the filter sees, computed by ``FilterPipeline`` from the tile's datatype through each earlier
filter's ``output_datatype``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ...errors import UnsupportedFormatError
from ..binary import Reader

Buffer = bytes | bytearray | memoryview | np.ndarray


@dataclass
class ChunkContext:
    """What a filter may need beyond its own options while (de)coding one chunk."""

    datatype: int  # datatype of the values this filter sees
    version: int  # format version of the fragment / generic tile
    where: str = ""  # file (and tile) for error messages
    # Var-sized string tiles whose pipeline has RLE or DICTIONARY: TileDB stores no separate
    # offsets; the filter rebuilds them and puts them here (uint64 cell start offsets).
    offsets_out: list[np.ndarray] | None = field(default=None)
    # For encoding such tiles: the cell start offsets of the chunk's strings.
    offsets_in: np.ndarray | None = None


class Filter(ABC):
    """Base of every filter: a frozen dataclass subclass with the TileDB ``filter_id``."""

    filter_id: ClassVar[int]
    name: ClassVar[str]

    @classmethod
    def read_options(cls, r: Reader, size: int, version: int) -> "Filter":
        """Parse the serialized options (``size`` bytes) of this filter."""
        r.skip(size, f"{cls.name} filter options")
        return cls()

    def options_bytes(self) -> bytes:
        """The serialized options, as TileDB writes them in a schema."""
        return b""

    def output_datatype(self, datatype: int) -> int:
        """Datatype of the values this filter emits when encoding values of ``datatype``."""
        return datatype

    @abstractmethod
    def decode(self, metadata: memoryview, data: memoryview, ctx: ChunkContext) -> tuple[Buffer, Buffer]:
        """Undo this filter on one chunk: ``(rest_of_metadata, decoded_data)``."""

    @abstractmethod
    def encode(self, metadata: bytes, data: Buffer, ctx: ChunkContext) -> tuple[bytes, Buffer]:
        """Apply this filter to one chunk: ``(metadata_with_own_header, encoded_data)``."""


_REGISTRY: dict[int, type[Filter]] = {}


def register(cls: type[Filter]) -> type[Filter]:
    """Class decorator: make ``cls`` the filter for ``cls.filter_id``."""
    _REGISTRY[cls.filter_id] = cls
    return cls


def filter_class(filter_id: int) -> type[Filter]:
    cls = _REGISTRY.get(filter_id)
    if cls is None:
        raise UnsupportedFormatError(f"unsupported TileDB filter type id {filter_id}")
    return cls
