"""The filter interface and the registry keyed by TileDB filter id.

A filter works on one chunk at a time.  Decoding runs the pipeline's filters in reverse; each
filter receives the chunk metadata still to be consumed and the chunk data, reads its own header
from the *front* of the metadata, and returns ``(rest_of_metadata, decoded_data)`` -- exactly the
stacking TileDB uses (a filter prepends its header to the metadata it forwards; compressors
compress the whole metadata they were given).  Encoding is the mirror image.

Filters that care about element types (deltas, bit width, XOR, float scale) get the datatype that
the filter sees, computed by ``FilterPipeline`` from the tile's datatype through each earlier
filter's ``output_datatype``.  Which types a filter accepts at all (TileDB's schema check) is
the filter's own ``input_refusal``, next to the type tables its codec uses.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ...datatypes import datatype_size
from ...errors import CorruptArrayError, UnsupportedFormatError
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
    # Byte size of one cell of the tile (TileDB's ``Tile::cell_size``): fixed RLE runs are
    # this wide.  0 means "the size of ``datatype``".
    cell_size: int = 0
    # True when this chunk is a whole var-sized STRING_ASCII/UTF8 tile whose offsets RLE or
    # DICTIONARY encode together with the data (``FilterPipeline.skip_offsets_filtering``).
    var_strings: bool = False

    @property
    def value_size(self) -> int:
        """Byte width of one RLE value: the tile's cell size, else the datatype's size."""
        return self.cell_size if self.cell_size > 0 else datatype_size(self.datatype)


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

    @property
    def lossy(self) -> bool:
        """Whether decoding may give back other values than were encoded (the tile min / max /
        sum TileDB keeps describe the values written, so they no longer describe the cells)."""
        return False

    def input_refusal(self, datatype: int) -> str | None:
        """Why TileDB refuses this filter on values of ``datatype`` (its
        ``accepts_input_datatype``, checked when a schema is built), None when it accepts
        them.  Every type unless a filter says otherwise."""
        return None

    @abstractmethod
    def decode(
        self, metadata: memoryview, data: memoryview, ctx: ChunkContext
    ) -> tuple[Buffer, Buffer]:
        """Undo this filter on one chunk: ``(rest_of_metadata, decoded_data)``."""

    @abstractmethod
    def encode(self, metadata: bytes, data: Buffer, ctx: ChunkContext) -> tuple[bytes, Buffer]:
        """Apply this filter to one chunk: ``(metadata_with_own_header, encoded_data)``."""


_REGISTRY: dict[int, type[Filter]] = {}


def register(cls: type[Filter]) -> type[Filter]:
    """Class decorator: make ``cls`` the filter for ``cls.filter_id``."""
    _REGISTRY[cls.filter_id] = cls
    return cls


def filter_class(filter_id: int, where: str = "") -> type[Filter]:
    """The filter registered for ``filter_id``; ``where`` names the file in the error."""
    cls = _REGISTRY.get(filter_id)
    if cls is None:
        where = f"{where}: " if where else ""
        raise UnsupportedFormatError(f"{where}unsupported TileDB filter type id {filter_id}")
    return cls


# -- helpers shared by the filter modules -----------------------------------------------------


def as_uint8(buf: Buffer) -> np.ndarray:
    """``buf`` as a writable, C-contiguous uint8 array (a copy when it is read-only)."""
    if isinstance(buf, np.ndarray):
        arr = np.ascontiguousarray(buf).view(np.uint8).reshape(-1)
    else:
        arr = np.frombuffer(buf, dtype=np.uint8)
    return arr if arr.flags.writeable else arr.copy()


def uint_view(arr: np.ndarray, width: int) -> np.ndarray:
    """The uint8 array ``arr`` (a whole number of ``width``-byte values) as unsigned values."""
    return arr.view(_UINT_BY_WIDTH[width])


_UINT_BY_WIDTH = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def located(where: str, message: str) -> str:
    """``message`` prefixed with the file/tile it concerns (for errors without a ``where``)."""
    return f"{where}: {message}" if where else message


def rest(r: Reader) -> memoryview:
    """The metadata after what ``r`` consumed: what a filter forwards to the next one."""
    return memoryview(r.data)[r.pos :]


def read_part_sizes(r: Reader, name: str) -> list[int]:
    """``num_parts u32`` then one ``u32`` size per part (shuffles, XOR, float scale, WEBP)."""
    count = r.u32(f"{name} part count")
    if count > r.remaining // 4:
        raise r.error(f"{name} part count", f"{count} parts do not fit in the metadata")
    return [r.u32(f"{name} part {i} size") for i in range(count)]


def part_sizes_header(sizes: list[int]) -> bytes:
    """The metadata ``read_part_sizes`` reads."""
    return np.array([len(sizes), *sizes], dtype="<u4").tobytes()


def split_parts(data: Buffer, sizes: list[int], where: str, name: str) -> list[np.ndarray]:
    """Cut ``data`` into consecutive parts of ``sizes`` bytes (writable uint8 arrays, so the
    kernels see a single array type)."""
    arr = as_uint8(data)
    if sum(sizes) > arr.nbytes:
        raise CorruptArrayError(
            f"{name} parts need {sum(sizes)} bytes but the chunk has {arr.nbytes}", where
        )
    bounds = np.cumsum([0, *sizes])
    return [arr[bounds[i] : bounds[i + 1]] for i in range(len(sizes))]
