"""Fragment metadata files ``__fragment_metadata.tdb`` (spec: fragment.md), read and written.

In: the bytes of the file (or a ``read_range(offset, size)`` callable, or a local path), the array
schema(s), the fragment's folder name and optionally an encryption key.
Out: ``FragmentMetadata`` -- footer values eagerly, every other section lazily.

Layout (format 3+): generic tiles (R-tree, then per-field tile offsets, var offsets, var sizes,
validity offsets, tile mins, maxes, sums, null counts, then fragment-level min/max/sum/null
count and processed conditions), then a plain footer holding the offsets of those tiles, then
``footer length u64`` (always from v10; before v10 only with var-sized dimensions, otherwise the
footer size follows from the schema).  Before version 3 the whole file is one generic tile.

Per-field arrays follow TileDB's index map: attributes in schema order, then the slot
``__coords`` (the zipped coordinates of formats < 5; always empty later), then the dimensions
(format 5+), then ``__timestamps`` (t.tdb), ``__delete_timestamps`` (dt.tdb) and
``__delete_condition_index`` (dci.tdb) when the footer says the fragment has them.
``FragmentMetadata.field_names`` lists that order; every per-field mapping accepts a field
name or its position in that list.

Lazy loading: the footer is parsed on open; each section is read with two ``read_range`` calls
(header, then the whole generic tile) on first access and cached, so a query touching two
fields of a 30-field fragment reads only their offsets.  Pass the whole file as bytes to read
nothing further.
"""

from __future__ import annotations

import functools
import os
import struct
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..datatypes import VAR_NUM, Datatype, type_info
from ..errors import CorruptArrayError, UnsupportedFormatError
from .array_schema import ArraySchema, Dimension
from .binary import Reader, Writer
from .filter_pipeline import FilterPipeline
from .filters.compression import GzipFilter
from .names import parse_name
from .generic_tile import HEADER_FIXED_SIZE, MAX_READ_VERSION, decode_generic_tile, encode_generic_tile
from .rtree import (DEFAULT_FANOUT, RTree, check_leaf_count, check_leaves_inside, read_mbrs,
                    read_ranges, read_rtree, write_ranges)

METADATA_FILE = "__fragment_metadata.tdb"
LEGACY_SCHEMA_NAME = "__array_schema.tdb"
COORDS = "__coords"
TIMESTAMPS = "__timestamps"
DELETE_TIMESTAMPS = "__delete_timestamps"
DELETE_CONDITION_INDEX = "__delete_condition_index"
OPTIONAL_TILE_GLOBAL_ORDER = 0  # v23 optional footer section identifier
WRITE_VERSION = 22

# TileDB writes every metadata generic tile with GZIP level 1 (constants::generic_tile_*).
GENERIC_TILE_PIPELINE = FilterPipeline((GzipFilter(level=1),))

# Per-field tile sections in file and footer order (format 11 adds the last four).
_OFFSET_KINDS = ("tile_offsets", "tile_var_offsets", "tile_var_sizes", "tile_validity_offsets")
_STAT_KINDS = ("tile_mins", "tile_maxes", "tile_sums", "tile_null_counts")
_TILE_STARTS = ("tile_offsets", "tile_var_offsets", "tile_validity_offsets")  # never decrease

ReadRange = Callable[[int, int], bytes]


# --- fields -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class FieldInfo:
    """One entry of the per-field arrays."""

    name: str
    role: str  # "attribute", "coords", "dimension" or "special"
    index: int  # attribute / dimension index (0 for the others)
    datatype: int
    cell_val_num: int
    nullable: bool = False

    @property
    def is_var(self) -> bool:
        return self.cell_val_num == VAR_NUM

    @property
    def is_string(self) -> bool:
        return self.datatype in (Datatype.CHAR, Datatype.STRING_ASCII)

    @property
    def sum_dtype(self) -> np.dtype:
        """How TileDB stores this field's 8-byte sums (metadata_generator_type_data)."""
        return sum_dtype(self.datatype)

    def file_stem(self, version: int) -> str:
        """Data file name without ``.tdb`` (``a0``/``d1``/``t``/...; legacy names before v9)."""
        if self.role == "special":
            return {TIMESTAMPS: "t", DELETE_TIMESTAMPS: "dt", DELETE_CONDITION_INDEX: "dci"}[self.name]
        if self.role == "coords" or version <= 7:
            return self.name
        if version == 8:
            return "".join(_V8_PERCENT.get(c, c) for c in self.name)
        return f"{'a' if self.role == 'attribute' else 'd'}{self.index}"

    def filters(self, schema: ArraySchema) -> FilterPipeline:
        """The pipeline this field's tiles are filtered with: its attribute's or dimension's
        own; the internal timestamp / delete fields use the coords filters, as TileDB writes
        them (so do the zipped ``__coords`` of formats < 5)."""
        if self.role == "attribute":
            return schema.attributes[self.index].filters
        if self.role == "dimension":
            return schema.dimensions[self.index].filters
        return schema.coords_filters


# Version 8 percent-encoded these characters in data file names (the last five for Windows).
_V8_PERCENT = {c: f"%{ord(c):02X}" for c in "!#$%&'()*+,/:;=?@[]\""}
_V8_PERCENT.update({"<": "%20", ">": "%2D", "\\": "%30", "|": "%3C"})


def sum_dtype(datatype: int) -> np.dtype:
    """int64 for signed ints, CHAR, datetimes and times; uint64 for unsigned ints and BOOL;
    float64 for floats; uint64 (unused) for types without sums."""
    info = type_info(datatype)
    if info.kind == "float":
        return np.dtype("<f8")
    if datatype == Datatype.CHAR or info.kind in ("datetime", "time"):
        return np.dtype("<i8")
    if info.kind in ("int", "bool") and info.numpy.kind == "i":
        return np.dtype("<i8")
    return np.dtype("<u8")


def field_infos(schema: ArraySchema, version: int, has_timestamps: bool = False,
                has_delete_meta: bool = False) -> tuple[FieldInfo, ...]:
    """The per-field entries of a fragment of ``version`` written with ``schema``."""
    out = [FieldInfo(a.name, "attribute", i, a.datatype, a.cell_val_num, a.nullable)
           for i, a in enumerate(schema.attributes)]
    dims = schema.dimensions
    out.append(FieldInfo(COORDS, "coords", 0, dims[0].datatype, len(dims)))
    if version >= 5:
        out += [FieldInfo(d.name, "dimension", i, d.datatype, d.cell_val_num) for i, d in enumerate(dims)]
    if has_timestamps:
        out.append(FieldInfo(TIMESTAMPS, "special", 0, Datatype.UINT64, 1))
    if has_delete_meta:
        out.append(FieldInfo(DELETE_TIMESTAMPS, "special", 0, Datatype.UINT64, 1))
        out.append(FieldInfo(DELETE_CONDITION_INDEX, "special", 0, Datatype.UINT64, 1))
    return tuple(out)


class FieldMap(Mapping):
    """Per-field values keyed by field name (or by position in ``field_names``)."""

    __slots__ = ("_names", "_get")

    def __init__(self, names: tuple[str, ...], get: Callable[[int], Any]):
        self._names = names
        self._get = get

    def _position(self, key) -> int:
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            if not -len(self._names) <= key < len(self._names):
                raise KeyError(key)
            return int(key) % len(self._names)
        try:
            return self._names.index(key)
        except ValueError:
            raise KeyError(key) from None

    def __getitem__(self, key):
        return self._get(self._position(key))

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, key) -> bool:
        try:
            self._position(key)
        except KeyError:
            return False
        return True

    def __eq__(self, other) -> bool:
        if not isinstance(other, Mapping) or list(other.keys()) != list(self._names):
            return False
        return all(values_equal(self[n], other[n]) for n in self._names)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{n!r}: {self[n]!r}" for n in self._names) + "}"


def values_equal(a, b) -> bool:
    """Equality of section values: numpy arrays by dtype and bytes (exact for NaN)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype
                and a.shape == b.shape and a.tobytes() == b.tobytes())
    if isinstance(a, float) and isinstance(b, float):
        return struct.pack("<d", a) == struct.pack("<d", b)
    return a == b


# --- footer -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Footer:
    """The plain footer at the end of the file (or inside a consolidated .meta file)."""

    version: int
    schema_name: str
    dense: bool
    non_empty_domain: tuple[tuple[Any, Any], ...] | None
    sparse_tile_num: int
    last_tile_cell_num: int
    has_timestamps: bool
    has_delete_meta: bool
    file_sizes: tuple[int, ...]
    file_var_sizes: tuple[int, ...]
    file_validity_sizes: tuple[int, ...]
    rtree_offset: int
    section_offsets: dict[str, tuple[int, ...]]  # kind -> per-field generic tile offsets
    fragment_stats_offset: int | None  # v12+
    processed_conditions_offset: int | None  # v16+
    optional_sections: tuple[tuple[int, bytes], ...] = ()  # v23+: (identifier, data)
    size: int = 0  # bytes of the footer proper (without the trailing length)


def _schema_for(schemas, name: str, where: str) -> ArraySchema:
    if isinstance(schemas, ArraySchema):
        return schemas
    try:
        return schemas[name]
    except KeyError:
        raise CorruptArrayError(f"footer: the fragment names schema {name!r}, which the array "
                                "does not have", where) from None


def parse_footer(data, schemas, where: str, offset: int = 0,
                 name_version: int | None = None) -> tuple[Footer, ArraySchema]:
    """Parse a footer at ``offset``; ``schemas`` is one schema or a mapping name -> schema.

    ``name_version`` (from the fragment folder name) must agree with the stored version.
    """
    r = Reader(data, where, offset)
    version = _read_version(r, name_version)
    schema_name = _read_schema_name(r) if version >= 10 else LEGACY_SCHEMA_NAME
    schema = _schema_for(schemas, schema_name, where)
    dense = r.bool("footer dense flag")
    if dense and schema.sparse:  # (a dense array may hold sparse fragments: old TileDB wrote them)
        raise r.error("footer dense flag", "a dense fragment in a sparse array")
    ned = _read_non_empty_domain(r, schema.dimensions)
    sparse_tile_num = r.u64("footer sparse tile count")
    last_tile_cell_num = r.u64("footer last tile cell count")
    if not dense and sparse_tile_num and not 0 < last_tile_cell_num <= schema.capacity:
        raise r.error("footer last tile cell count",  # counts come from it, no tile read
                      f"{last_tile_cell_num} cells for tiles of {schema.capacity}")
    has_ts = r.bool("footer has-timestamps flag") if version >= 14 else False
    has_dm = r.bool("footer has-delete-metadata flag") if version >= 15 else False
    n = len(field_infos(schema, version, has_ts, has_dm))
    # Before v5 the var-sized lists cover the attributes only (no coords slot).
    n_var = len(schema.attributes) if version < 5 else n
    sizes = (_u64s(r, n, "footer file sizes"), _u64s(r, n_var, "footer file var sizes"),
             _u64s(r, n, "footer file validity sizes") if version >= 7 else (0,) * n)
    offsets = _read_tile_offsets(r, version, n, n_var)
    optional = _read_optional_sections(r, len(schema.dimensions)) if version >= 23 else ()
    footer = Footer(version, schema_name, dense, ned, sparse_tile_num, last_tile_cell_num, has_ts,
                    has_dm, *sizes, *offsets, optional, r.pos - offset)
    return footer, schema


def _read_version(r: Reader, name_version: int | None) -> int:
    version = r.u32("footer version")
    # Names of formats 3-4 carry no version (TileDB reads them as 4).
    if name_version is not None and version != name_version and not (name_version <= 4 and version <= 4):
        raise r.error("footer version", f"{version}, but the fragment name says {name_version}")
    if version > MAX_READ_VERSION:
        raise UnsupportedFormatError(f"{r.where}: fragment format version {version} is newer "
                                     f"than the versions tdbsql reads (up to {MAX_READ_VERSION})")
    if version < 3:
        raise r.error("footer version", f"{version} is not a footer format version")
    return version


def _read_schema_name(r: Reader) -> str:
    size = r.u64("footer schema name size")
    if size == 0 or size > 4096:
        raise r.error("footer schema name size", f"implausible value {size}")
    return r.string(size, "footer schema name")


def _read_tile_offsets(r: Reader, version: int, n: int, n_var: int):
    """(R-tree offset, {kind: per-field offsets}, fragment stats offset, processed offset)."""
    rtree_offset = r.u64("footer R-tree offset")
    section_offsets = {kind: _u64s(r, n if kind == "tile_offsets" else n_var, f"footer {kind} offsets")
                       for kind in _kinds(version)}
    stats_offset = r.u64("footer fragment min/max/sum/null count offset") if version >= 12 else None
    processed_offset = r.u64("footer processed conditions offset") if version >= 16 else None
    return rtree_offset, section_offsets, stats_offset, processed_offset


def _kinds(version: int) -> tuple[str, ...]:
    kinds = _OFFSET_KINDS if version >= 7 else _OFFSET_KINDS[:3]
    return kinds + _STAT_KINDS if version >= 11 else kinds


def _u64s(r: Reader, n: int, field: str) -> tuple[int, ...]:
    return tuple(int(v) for v in r.array("<u8", n, field))


def _read_non_empty_domain(r: Reader, dims: Sequence[Dimension]):
    is_null = r.bool("footer null non-empty domain flag")
    if is_null:
        # The writer fills a null domain with zeros sized for fixed dimensions of dim 0's type.
        if all(not d.is_var for d in dims):
            r.skip(2 * len(dims) * dims[0].info.size, "footer non-empty domain")
        return None
    # Formats 3-4 had one datatype for all dimensions, so the generic decoding fits them too.
    return read_ranges(r, dims, "footer non-empty domain")


def _read_optional_sections(r: Reader, dim_num: int) -> tuple[tuple[int, bytes], ...]:
    """v23 footer extensions, kept raw; unknown identifiers are skipped by size, as the spec asks.

    Identifier 0 (tile global order bounds: two u64 tile offsets per dimension) is checked for
    size only: tdbsql does not use those bounds.
    """
    count = r.u32("footer optional section count")
    if count > 1024:
        raise r.error("footer optional section count", f"implausible value {count}")
    out = []
    for i in range(count):
        ident = r.u64(f"footer optional section {i} identifier")
        size = r.u32(f"footer optional section {i} size")
        if ident == OPTIONAL_TILE_GLOBAL_ORDER and size != 2 * dim_num * 8:
            raise r.error("footer tile global order section", f"size {size}, expected {2 * dim_num * 8}")
        out.append((ident, r.bytes(size, f"footer optional section {i} data")))
    return tuple(out)


def legacy_footer_size(schema: ArraySchema, version: int) -> int:
    """Footer size of a format 3-9 fragment whose dimensions are all fixed-sized (no length field)."""
    a, dims = len(schema.attributes), schema.dimensions
    if version <= 4:
        domain = 2 * len(dims) * dims[0].info.size
        return 4 + 1 + 1 + domain + 8 + 8 + (a + 1) * 8 + a * 8 + 8 + (a + 1) * 8 + 2 * a * 8
    n = a + 1 + len(dims)
    domain = sum(2 * d.info.size for d in dims)
    per_field = 5 if version <= 6 else 7  # file sizes, var sizes, (validity), offsets kinds
    return 4 + 1 + 1 + domain + 8 + 8 + 8 + per_field * n * 8


# --- sections ---------------------------------------------------------------------------------


class _Source:
    """Reads byte ranges of the metadata file, checking that they exist."""

    def __init__(self, read_range: ReadRange, limit: int | None, where: str):
        self.read_range = read_range
        self.limit = limit  # sections must end before the footer; None when unknown
        self.where = where

    def read(self, offset: int, size: int, where: str) -> bytes:
        if offset < 0 or (self.limit is not None and offset + size > self.limit):
            raise CorruptArrayError(
                f"section at offset {offset} ({size} bytes) lies beyond the "
                f"{self.limit} bytes before the footer", where)
        try:
            data = self.read_range(offset, size)
        except CorruptArrayError as exc:
            raise CorruptArrayError(f"cannot read section at offset {offset}: {exc}", where) from None
        if len(data) != size:
            raise CorruptArrayError(
                f"section at offset {offset} needs {size} bytes, the file has {len(data)} there", where)
        return data

    def generic_tile(self, offset: int, key: bytes | None, where: str) -> np.ndarray:
        head = self.read(offset, HEADER_FIXED_SIZE, where)
        persisted = struct.unpack_from("<Q", head, 4)[0]
        pipeline_size = struct.unpack_from("<I", head, HEADER_FIXED_SIZE - 4)[0]
        return decode_generic_tile(self.read(offset, HEADER_FIXED_SIZE + pipeline_size + persisted, where),
                                   where, key)


class Sections:
    """The generic-tile sections of one fragment: eager values or a lazy, caching loader."""

    def __init__(self, infos: tuple[FieldInfo, ...], values: dict | None = None,
                 loader: Callable[[tuple], Any] | None = None):
        self.infos = infos
        self._cache: dict = dict(values or {})
        self._loader = loader

    def get(self, key: tuple):
        """``("rtree",)``, ``(kind, field_position)``, ``("fragment_stats",)``, ``("processed",)``."""
        try:
            return self._cache[key]
        except KeyError:
            pass
        if self._loader is None:
            value = _empty_value(key, self.infos)
        else:
            value = self._loader(key)
        self._cache[key] = value
        return value

    def all_keys(self) -> list[tuple]:
        keys: list[tuple] = [("rtree",)]
        keys += [(kind, i) for kind in _OFFSET_KINDS + _STAT_KINDS for i in range(len(self.infos))]
        return keys + [("fragment_stats",), ("processed",)]

    def load_all(self) -> None:
        for key in self.all_keys():
            self.get(key)

    def __eq__(self, other) -> bool:
        if not isinstance(other, Sections):
            return NotImplemented
        if [i.name for i in self.infos] != [i.name for i in other.infos]:
            return False
        return all(_section_equal(self.get(k), other.get(k)) for k in self.all_keys())

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Sections({len(self._cache)} loaded{', lazy' if self._loader else ''})"


def _section_equal(a, b) -> bool:
    if isinstance(a, FragmentStats):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(values_equal(x, y) for x, y in zip(a, b))
    return values_equal(a, b)


@dataclass(frozen=True, eq=False)
class FragmentStats:
    """Fragment-level min, max (raw bytes, empty when absent), sum (raw 8 bytes) and null count."""

    mins: tuple[bytes, ...]
    maxes: tuple[bytes, ...]
    sums: tuple[bytes, ...]
    null_counts: tuple[int, ...]

    def __eq__(self, other) -> bool:
        return isinstance(other, FragmentStats) and (self.mins, self.maxes, self.sums, self.null_counts) == (
            other.mins, other.maxes, other.sums, other.null_counts)

    __hash__ = None  # type: ignore[assignment]


def _empty_value(key: tuple, infos: tuple[FieldInfo, ...]):
    """The value of a section the file does not have (absent in its version, or not given)."""
    kind = key[0]
    if kind == "rtree":
        return RTree(DEFAULT_FANOUT, ())
    if kind == "fragment_stats":
        n = len(infos)
        return FragmentStats((b"",) * n, (b"",) * n, (b"\0" * 8,) * n, (0,) * n)
    if kind == "processed":
        return []
    info = infos[key[1]]
    if kind in ("tile_mins", "tile_maxes"):
        return _empty_bounds(info)
    if kind == "tile_sums":
        return np.zeros(0, dtype=info.sum_dtype)
    return np.zeros(0, dtype=np.uint64)


def _empty_bounds(info: FieldInfo):
    if _bounds_are_bytes(info):
        return []
    return np.zeros(0, dtype=type_info(info.datatype).numpy)


def _bounds_are_bytes(info: FieldInfo) -> bool:
    """Var fields, strings and multi-value cells keep their mins/maxes as lists of bytes."""
    return info.is_var or info.is_string or info.cell_val_num != 1


# --- section parsers ------------------------------------------------------------------------


def _parse_u64_list(data, where: str, field: str) -> np.ndarray:
    r = Reader(data, where)
    n = r.u64(f"{field} count")
    values = r.array("<u8", n, field)
    if not r.at_end():
        raise r.error(field, f"{r.remaining} unexpected bytes after {n} values")
    return values.astype(np.uint64, copy=False)


def _parse_bounds(data, info: FieldInfo, where: str, field: str):
    r = Reader(data, where)
    fixed_size = r.u64(f"{field} buffer size")
    var_size = r.u64(f"{field} var buffer size")
    if fixed_size == 0:
        return _empty_bounds(info)
    fixed = r.bytes(fixed_size, f"{field} buffer")
    var = r.bytes(var_size, f"{field} var buffer")
    if info.is_var:
        return _split_var(fixed, var, r, field)
    cell_size = type_info(info.datatype).size * (1 if info.cell_val_num == VAR_NUM else info.cell_val_num)
    if fixed_size % cell_size:
        raise r.error(f"{field} buffer size", f"{fixed_size} is not a multiple of the cell size {cell_size}")
    if _bounds_are_bytes(info):
        return [fixed[i : i + cell_size] for i in range(0, fixed_size, cell_size)]
    return np.frombuffer(fixed, dtype=type_info(info.datatype).numpy).copy()


def _split_var(fixed: bytes, var: bytes, r: Reader, field: str) -> list[bytes]:
    if len(fixed) % 8:
        raise r.error(f"{field} offsets", f"{len(fixed)} bytes is not a multiple of 8")
    offsets = np.frombuffer(fixed, dtype="<u8").astype(np.int64)
    ends = np.append(offsets[1:], len(var))
    if len(offsets) and (offsets[0] < 0 or np.any(ends < offsets) or ends[-1] > len(var)):
        raise r.error(f"{field} offsets", "are not increasing within the var buffer")
    return [var[s:e] for s, e in zip(offsets.tolist(), ends.tolist())]


def _parse_sums(data, info: FieldInfo, where: str, field: str) -> np.ndarray:
    return _parse_u64_list(data, where, field).view(info.sum_dtype)


def _parse_fragment_stats(data, infos: tuple[FieldInfo, ...], where: str) -> FragmentStats:
    r = Reader(data, where)
    mins, maxes, sums, nulls = [], [], [], []
    for info in infos:
        mins.append(r.bytes(r.u64(f"fragment min size of {info.name!r}"), f"fragment min of {info.name!r}"))
        maxes.append(r.bytes(r.u64(f"fragment max size of {info.name!r}"), f"fragment max of {info.name!r}"))
        sums.append(r.bytes(8, f"fragment sum of {info.name!r}"))
        nulls.append(r.u64(f"fragment null count of {info.name!r}"))
    if not r.at_end():
        raise r.error("fragment min/max/sum/null count", f"{r.remaining} unexpected bytes at the end")
    return FragmentStats(tuple(mins), tuple(maxes), tuple(sums), tuple(nulls))


def _parse_processed(data, where: str) -> list[str]:
    r = Reader(data, where)
    n = r.u64("processed condition count")
    if n > r.remaining // 8:
        raise r.error("processed condition count", f"{n} conditions cannot fit in {r.remaining} bytes")
    return [r.string(r.u64(f"processed condition {i} size"), f"processed condition {i}") for i in range(n)]


class _Loader:
    """Loads one section of a format 3+ fragment from its metadata file on demand."""

    def __init__(self, source: _Source, footer: Footer, infos, dims, key):
        self.source, self.footer, self.infos, self.dims, self.key = source, footer, infos, dims, key

    def __call__(self, key: tuple):
        kind = key[0]
        if kind == "rtree":
            data = self._tile(self.footer.rtree_offset, "R-tree")
            tree = read_rtree(data, self.dims, self.footer.version, self._where("R-tree"))
            if not self.footer.dense:
                check_leaf_count(tree, self.footer.sparse_tile_num, self._where("R-tree"))
                check_leaves_inside(tree, self.dims, self.footer.non_empty_domain,
                                    self._where("R-tree"))
            return tree
        if kind == "fragment_stats":
            return self._fragment_stats()
        if kind == "processed":
            if self.footer.processed_conditions_offset is None:
                return []
            label = "processed conditions"
            return _parse_processed(self._tile(self.footer.processed_conditions_offset, label), self._where(label))
        return self._field_section(kind, key[1])

    def _where(self, label: str) -> str:
        return f"{self.source.where}, {label}"

    def _tile(self, offset: int, label: str) -> np.ndarray:
        return self.source.generic_tile(offset, self.key, self._where(label))

    def _fragment_stats(self) -> FragmentStats:
        if self.footer.fragment_stats_offset is None:
            return _empty_value(("fragment_stats",), self.infos)
        label = "fragment min/max/sum/null count"
        return _parse_fragment_stats(self._tile(self.footer.fragment_stats_offset, label), self.infos,
                                     self._where(label))

    def _field_section(self, kind: str, pos: int):
        offsets = self.footer.section_offsets.get(kind, ())
        info = self.infos[pos]
        if pos >= len(offsets):  # absent in this version (or var sections of coords before v5)
            return _empty_value((kind, pos), self.infos)
        label = f"{kind.replace('_', ' ')} of {info.name!r}"
        data, where = self._tile(offsets[pos], label), self._where(label)
        if kind in ("tile_mins", "tile_maxes"):
            return _parse_bounds(data, info, where, kind)
        if kind == "tile_sums":
            return _parse_sums(data, info, where, kind)
        values = _parse_u64_list(data, where, kind)
        if kind in _TILE_STARTS and np.any(values[1:] < values[:-1]):
            raise CorruptArrayError(f"{kind.replace('_', ' ')} decrease", where)
        return values


# --- the metadata object ------------------------------------------------------------------------


@dataclass(frozen=True)
class FragmentMetadata:
    """Everything in a ``__fragment_metadata.tdb``; sections load on first access.

    ``non_empty_domain`` is ``((lo, hi), ...)`` per dimension as Python values (bytes for var
    dimensions) or ``None``.  Per-field values are ``FieldMap``s keyed by field name or position.
    """

    version: int
    schema_name: str
    dense: bool
    non_empty_domain: tuple[tuple[Any, Any], ...] | None
    sparse_tile_num: int
    last_tile_cell_num: int
    has_timestamps: bool
    has_delete_meta: bool
    field_names: tuple[str, ...]
    file_sizes: FieldMap
    file_var_sizes: FieldMap
    file_validity_sizes: FieldMap
    sections: Sections
    optional_sections: tuple[tuple[int, bytes], ...] = ()
    schema: ArraySchema | None = field(default=None, compare=False, repr=False)
    name: str = field(default="", compare=False)  # the fragment folder name

    # -- sections ----------------------------------------------------------------------------

    @property
    def infos(self) -> tuple[FieldInfo, ...]:
        return self.sections.infos

    def _field_map(self, kind: str) -> FieldMap:
        return FieldMap(self.field_names, lambda pos: self.sections.get((kind, pos)))

    @property
    def rtree(self) -> RTree:
        return self.sections.get(("rtree",))

    @property
    def tile_offsets(self) -> FieldMap:
        """uint64 start offset of each tile in the field's data file (offsets file if var)."""
        return self._field_map("tile_offsets")

    @property
    def tile_var_offsets(self) -> FieldMap:
        return self._field_map("tile_var_offsets")

    @property
    def tile_var_sizes(self) -> FieldMap:
        """uint64 *decoded* size of each var tile."""
        return self._field_map("tile_var_sizes")

    @property
    def tile_validity_offsets(self) -> FieldMap:
        return self._field_map("tile_validity_offsets")

    @property
    def tile_mins(self) -> FieldMap:
        """Per tile: numpy array for fixed numeric fields, list of bytes for strings/var/multi."""
        return self._field_map("tile_mins")

    @property
    def tile_maxes(self) -> FieldMap:
        return self._field_map("tile_maxes")

    @property
    def tile_sums(self) -> FieldMap:
        """Per tile sums as int64 / uint64 / float64 (``sum_dtype`` of the field)."""
        return self._field_map("tile_sums")

    @property
    def tile_null_counts(self) -> FieldMap:
        return self._field_map("tile_null_counts")

    @property
    def fragment_stats(self) -> FragmentStats:
        return self.sections.get(("fragment_stats",))

    @property
    def fragment_mins(self) -> FieldMap:
        """Raw bytes of the fragment-level min (b"" when TileDB keeps none)."""
        return FieldMap(self.field_names, lambda pos: self.fragment_stats.mins[pos])

    @property
    def fragment_maxes(self) -> FieldMap:
        return FieldMap(self.field_names, lambda pos: self.fragment_stats.maxes[pos])

    @property
    def fragment_sums(self) -> FieldMap:
        """The fragment-level sum as a Python int/float (``sum_dtype`` of the field)."""
        return FieldMap(self.field_names, lambda pos: np.frombuffer(
            self.fragment_stats.sums[pos], dtype=self.infos[pos].sum_dtype)[0].item())

    @property
    def fragment_null_counts(self) -> FieldMap:
        return FieldMap(self.field_names, lambda pos: self.fragment_stats.null_counts[pos])

    @property
    def processed_conditions(self) -> list[str]:
        return self.sections.get(("processed",))

    def load_all(self) -> "FragmentMetadata":
        """Read every section now (e.g. before the file goes away); returns ``self``."""
        self.sections.load_all()
        return self

    def field_info(self, name) -> FieldInfo:
        return self.infos[self.file_sizes._position(name)]

    def fragment_min_value(self, name):
        return _decode_stat(self.field_info(name), self.fragment_mins[name])

    def fragment_max_value(self, name):
        return _decode_stat(self.field_info(name), self.fragment_maxes[name])

    # -- tiles and cells ---------------------------------------------------------------------

    @property
    def tile_count(self) -> int:
        if not self.dense:
            return self.sparse_tile_num
        if self.non_empty_domain is None:
            return 0
        count = 1
        for dim, (lo, hi) in zip(self._schema().dimensions, self.non_empty_domain):
            count *= _dim_tile_span(dim, lo, hi)
        return count

    @property
    def cell_count(self) -> int:
        """Cells in the fragment, as TileDB counts them (dense: whole space tiles)."""
        tiles = self.tile_count
        if tiles == 0:
            return 0
        if self.dense:
            return tiles * cells_per_dense_tile(self._schema())
        return (tiles - 1) * self._schema().capacity + self.last_tile_cell_num

    def tile_cell_count(self, i: int) -> int:
        if self.dense:
            return cells_per_dense_tile(self._schema())
        return self.last_tile_cell_num if i == self.tile_count - 1 else self._schema().capacity

    def tile_range(self, name, i: int) -> tuple[int, int]:
        """``(offset, size)`` of tile ``i`` in the field's data file (offsets file if var)."""
        return _tile_span(self.tile_offsets[name], self.file_sizes[name], i)

    def tile_var_range(self, name, i: int) -> tuple[int, int]:
        return _tile_span(self.tile_var_offsets[name], self.file_var_sizes[name], i)

    def tile_validity_range(self, name, i: int) -> tuple[int, int]:
        return _tile_span(self.tile_validity_offsets[name], self.file_validity_sizes[name], i)

    def data_file_names(self, name) -> tuple[str, str, str]:
        """File names of the field's data, var data and validity files."""
        stem = self.field_info(name).file_stem(self.version)
        return f"{stem}.tdb", f"{stem}_var.tdb", f"{stem}_validity.tdb"

    def _schema(self) -> ArraySchema:
        if self.schema is None:
            raise ValueError("this FragmentMetadata was built without its schema")
        return self.schema

    # -- writing -----------------------------------------------------------------------------

    def to_bytes(self, schema: ArraySchema | None = None, key: bytes | None = None) -> bytes:
        """The ``__fragment_metadata.tdb`` file as TileDB writes it for this version (3-22)."""
        return _write_file(self, schema or self._schema(), key)

    def footer_bytes(self, schema: ArraySchema | None = None, key: bytes | None = None) -> bytes:
        """The footer alone, as consolidated fragment metadata files hold it."""
        offsets = _section_layout(self, schema or self._schema(), key)[1]
        return _footer_bytes(self, schema or self._schema(), offsets)

    @classmethod
    def create(cls, schema: ArraySchema, *, dense: bool, non_empty_domain, sparse_tile_num: int = 0,
               last_tile_cell_num: int = 0, has_timestamps: bool = False, has_delete_meta: bool = False,
               file_sizes: Mapping | None = None, file_var_sizes: Mapping | None = None,
               file_validity_sizes: Mapping | None = None, rtree: RTree | None = None,
               sections: Mapping[str, Mapping] | None = None, fragment_stats: FragmentStats | None = None,
               processed_conditions: Sequence[str] = (), version: int = WRITE_VERSION,
               schema_name: str | None = None, name: str = "") -> "FragmentMetadata":
        """Build metadata from values (for writers); ``sections`` maps kind -> {field: value}.

        A ``last_tile_cell_num`` of 0 becomes a full tile, as TileDB writes it.  Values that
        ``version`` cannot store (e.g. tile mins before v11) are dropped.
        """
        if (has_timestamps and version < 14) or (has_delete_meta and version < 15):
            raise ValueError(f"format {version} cannot record timestamps / delete metadata")
        infos = field_infos(schema, version, has_timestamps, has_delete_meta)
        names = tuple(i.name for i in infos)
        values: dict = {("rtree",): rtree or RTree(DEFAULT_FANOUT, ())}
        if version >= 16:
            values[("processed",)] = list(processed_conditions)
        if fragment_stats is not None and version >= 12:
            values[("fragment_stats",)] = fragment_stats
        for kind, per_field in (sections or {}).items():
            for fname, value in per_field.items():
                pos = names.index(fname)
                if kind in _kinds(version) and pos < _kind_count(kind, version, infos):
                    values[(kind, pos)] = _normalize_section(kind, infos[pos], value)
        sizes = [_size_map(names, file_sizes),
                 _size_map(names[: _kind_count("file_var_sizes", version, infos)], file_var_sizes, names),
                 _size_map(names if version >= 7 else (), file_validity_sizes, names)]
        # Before v10 footers name no schema: the legacy schema file is implied.
        schema_name = LEGACY_SCHEMA_NAME if version < 10 else (schema_name or schema.name)
        if last_tile_cell_num == 0:
            last_tile_cell_num = cells_per_dense_tile(schema) if dense else schema.capacity
        return cls(
            version, schema_name, dense, _normalize_domain(non_empty_domain),
            sparse_tile_num, last_tile_cell_num, has_timestamps, has_delete_meta, names, *sizes,
            Sections(infos, values), (), schema, name)


def _size_map(stored: tuple[str, ...], values: Mapping | Sequence | None,
              names: tuple[str, ...] | None = None) -> FieldMap:
    """Sizes of the ``stored`` fields (by name or in order); the other ``names`` get 0."""
    names = stored if names is None else names
    if values is None:
        given: dict = {}
    elif isinstance(values, Mapping):
        given = {n: values[n] for n in stored if n in values}
    else:
        given = dict(zip(stored, values))
    sizes = tuple(int(given.get(n, 0)) for n in names)
    return FieldMap(names, sizes.__getitem__)


def _normalize_domain(ned):
    if ned is None:
        return None
    return tuple((_python_value(lo), _python_value(hi)) for lo, hi in ned)


def _python_value(v):
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v)
    return np.asarray(v).item()


def _normalize_section(kind: str, info: FieldInfo, value):
    if kind in ("tile_mins", "tile_maxes"):
        if _bounds_are_bytes(info):
            return [bytes(v) for v in value]
        return np.ascontiguousarray(np.asarray(value, dtype=type_info(info.datatype).numpy))
    if kind == "tile_sums":
        return np.ascontiguousarray(np.asarray(value, dtype=info.sum_dtype))
    return np.ascontiguousarray(np.asarray(value, dtype=np.uint64))


def _decode_stat(info: FieldInfo, raw: bytes):
    if not raw:
        return None
    if _bounds_are_bytes(info):
        return raw
    return np.frombuffer(raw, dtype=type_info(info.datatype).numpy)[0].item()


def cells_per_dense_tile(schema: ArraySchema) -> int:
    count = 1
    for dim in schema.dimensions:
        extent = dim.tile_extent
        if extent is None:
            lo, hi = dim.domain
            extent = hi - lo + 1
        count *= int(extent)
    return count


def _dim_tile_span(dim: Dimension, lo, hi) -> int:
    if dim.is_var or dim.tile_extent is None:
        return 1
    base = dim.domain[0]
    if dim.info.kind == "float":
        return int((hi - base) / dim.tile_extent) - int((lo - base) / dim.tile_extent) + 1
    return (hi - base) // dim.tile_extent - (lo - base) // dim.tile_extent + 1


def _tile_span(offsets: np.ndarray, end_of_file: int, i: int) -> tuple[int, int]:
    n = len(offsets)
    if not 0 <= i < n:
        raise IndexError(f"tile {i} out of range ({n} tiles)")
    start = int(offsets[i])
    end = int(offsets[i + 1]) if i + 1 < n else int(end_of_file)
    return start, end - start


# --- reading ------------------------------------------------------------------------------------


def fragment_name_version(name: str) -> int:
    """Format version implied by a fragment folder name (TileDB's FragmentID rules):
    ``__t1_t2_uuid_v`` -> v, ``__t1_t2_uuid`` -> 4 (formats 3-4), ``__uuid_t`` -> 2 (1-2)."""
    return parse_name(name, strict=True).format_version


def _as_read_range(source) -> tuple[ReadRange, int | None]:
    if isinstance(source, (str, os.PathLike)):
        from ..storage import vfs  # local files are read through vfs only

        path = os.fspath(source)
        if os.path.isdir(path):
            path = os.path.join(path, METADATA_FILE)
        return functools.partial(vfs.read_range, path), vfs.file_size(path)
    if callable(source):
        return source, None
    data = memoryview(source).cast("B") if not isinstance(source, bytes) else source
    return (lambda offset, size: bytes(data[offset : offset + size])), len(data)


def read_fragment_metadata(source, schema, fragment_name: str, version: int | None = None,
                           key: bytes | None = None, *, schemas: Mapping[str, ArraySchema] | None = None,
                           file_size: int | None = None, footer: bytes | None = None,
                           has_coords_file: bool | None = None, where: str | None = None) -> FragmentMetadata:
    """Open the metadata of fragment ``fragment_name``.

    ``source``: the whole file (bytes-like), a ``read_range(offset, size) -> bytes`` callable
    (then give ``file_size`` unless ``footer`` is given), or a local path (fragment folder or the
    metadata file).  ``schema``: the schema to use, or a mapping name -> schema; with
    ``schemas`` as well, a v10+ fragment is parsed with the schema its footer names.
    ``version``: the format version from the folder name (derived from ``fragment_name`` when
    None); it decides where the footer is for formats < 10.  ``footer``: the fragment's footer
    from a consolidated ``.meta`` file (the file is then only read for sections).
    ``has_coords_file``: formats 1-2 only -- whether ``__coords.tdb`` exists (sparse); when None
    a fragment without MBRs is taken as dense.
    """
    read_range, size = _as_read_range(source)
    size = file_size if file_size is not None else size
    if isinstance(source, (str, os.PathLike)):
        where, has_coords_file = _path_context(os.fspath(source), where, has_coords_file)
    where = where or f"__fragments/{fragment_name}/{METADATA_FILE}"
    version = fragment_name_version(fragment_name) if version is None else version
    if version > MAX_READ_VERSION:
        raise UnsupportedFormatError(f"{where}: fragment format version {version} is newer than "
                                     f"the versions tdbsql reads (up to {MAX_READ_VERSION})")
    choose = _SchemaChooser(schema, schemas, where)
    if version <= 2 and footer is None:
        return _read_v1_v2(read_range, size, choose, fragment_name, key, has_coords_file, where)
    if footer is not None:
        ftr, chosen = parse_footer(footer, choose, where, name_version=version)
        limit = size
    else:
        ftr, chosen, limit = _read_file_footer(read_range, size, choose, version, where)
    return _from_footer(ftr, chosen, _Source(read_range, limit, where), key, fragment_name, limit)


def _path_context(path: str, where: str | None, has_coords_file: bool | None):
    """Error location and (formats 1-2) sparseness from a local fragment path."""
    folder = path if os.path.isdir(path) else os.path.dirname(path)
    if has_coords_file is None:
        has_coords_file = os.path.isfile(os.path.join(folder, "__coords.tdb"))
    return where or os.path.join(folder, METADATA_FILE), has_coords_file


class _SchemaChooser(Mapping):
    """Schema lookup by name: the footer's schema if known, else the one given."""

    def __init__(self, schema, schemas, where: str):
        self.schema, self.schemas, self.where = schema, schemas, where

    def __getitem__(self, name: str) -> ArraySchema:
        if self.schemas is not None and name in self.schemas:
            return self.schemas[name]
        if isinstance(self.schema, ArraySchema):
            return self.schema
        return _schema_for(self.schema, name, self.where)

    def __iter__(self):
        return iter(self.schemas or ())

    def __len__(self) -> int:
        return len(self.schemas or ())


def raw_footer(read_range: ReadRange, size: int, schema: ArraySchema | None, version: int,
               where: str) -> tuple[bytes, int]:
    """The footer bytes of a format 3+ ``__fragment_metadata.tdb`` of ``size`` bytes, and
    where they start (sections must end there).

    The footer ends the file, followed by its u64 length -- always from v10; before v10 only
    with var-sized dimensions, otherwise ``schema`` (the legacy schema, only used before v10)
    fixes its size.  Readers and fragment_meta consolidation (which copies the bytes) both find
    it here.
    """
    if version < 10 and all(not d.is_var for d in schema.dimensions):
        footer_size = legacy_footer_size(schema, version)
        footer_offset = size - footer_size
    else:
        if size < 8:
            raise CorruptArrayError(f"file is {size} bytes, too short for a footer length", where)
        footer_size = struct.unpack("<Q", read_range(size - 8, 8))[0]
        footer_offset = size - 8 - footer_size
    if footer_offset < 0:
        raise CorruptArrayError(f"footer length {footer_size} exceeds the file size {size}", where)
    data = read_range(footer_offset, footer_size)
    if len(data) != footer_size:
        raise CorruptArrayError(f"footer: read {len(data)} of {footer_size} bytes", where)
    return data, footer_offset


def _read_file_footer(read_range: ReadRange, size: int | None, choose, version: int, where: str):
    if size is None:
        raise ValueError("read_fragment_metadata needs file_size with a read_range callable")
    schema = choose[LEGACY_SCHEMA_NAME] if version < 10 else None
    data, footer_offset = raw_footer(read_range, size, schema, version, where)
    footer_size = len(data)
    try:
        footer, chosen = parse_footer(data, choose, where, name_version=version)
    except CorruptArrayError as exc:
        detail = str(exc)[len(where) + 2 :] if str(exc).startswith(f"{where}: ") else str(exc)
        raise CorruptArrayError(f"{detail} (is the footer length {footer_size} corrupt?)", where) from None
    if footer.size != footer_size:
        raise CorruptArrayError(f"footer length {footer_size} but the footer fields take "
                                f"{footer.size} bytes (corrupt footer length)", where)
    return footer, chosen, footer_offset


def _from_footer(ftr: Footer, schema: ArraySchema, source: _Source, key, name: str,
                 limit: int | None) -> FragmentMetadata:
    infos = field_infos(schema, ftr.version, ftr.has_timestamps, ftr.has_delete_meta)
    names = tuple(i.name for i in infos)
    if limit is not None:
        _check_offsets(ftr, names, limit, source.where)
    dims = tuple(schema.dimensions)
    sections = Sections(infos, loader=_Loader(source, ftr, infos, dims, key))
    return FragmentMetadata(
        ftr.version, ftr.schema_name, ftr.dense, ftr.non_empty_domain, ftr.sparse_tile_num,
        ftr.last_tile_cell_num, ftr.has_timestamps, ftr.has_delete_meta, names,
        _size_map(names, ftr.file_sizes), _size_map(names[: len(ftr.file_var_sizes)], ftr.file_var_sizes, names),
        _size_map(names, ftr.file_validity_sizes), sections, ftr.optional_sections, schema, name)


def _check_offsets(ftr: Footer, names: tuple[str, ...], limit: int, where: str) -> None:
    named = [("R-tree", ftr.rtree_offset)]
    named += [(f"{kind.replace('_', ' ')} of {names[i]!r}", off) for kind, offs in ftr.section_offsets.items()
              for i, off in enumerate(offs)]
    if ftr.fragment_stats_offset is not None:
        named.append(("fragment min/max/sum/null count", ftr.fragment_stats_offset))
    if ftr.processed_conditions_offset is not None:
        named.append(("processed conditions", ftr.processed_conditions_offset))
    for label, off in named:
        if off + HEADER_FIXED_SIZE > limit:
            raise CorruptArrayError(f"footer: offset {off} of the {label} section lies beyond the "
                                    f"{limit} bytes before the footer", where)


def _read_v1_v2(read_range: ReadRange, size, choose, name: str, key, has_coords_file, where: str):
    """Formats 1-2: the whole metadata is a single generic tile at offset 0."""
    schema = choose[LEGACY_SCHEMA_NAME]
    data = _Source(read_range, size, where).generic_tile(0, key, where)
    r = Reader(data, where)
    version = r.u32("version")
    dims = tuple(schema.dimensions)
    ned_size = r.u64("non-empty domain size")
    ned = read_ranges(r, dims, "non-empty domain") if ned_size else None
    mbr_num = r.u64("MBR count")
    leaves = read_mbrs(r, dims, mbr_num, "MBRs")
    r.skip(r.u64("bounding coords count") * 2 * len(dims) * dims[0].info.size, "bounding coords")
    a = len(schema.attributes)
    values = {}
    for kind, count in (("tile_offsets", a + 1), ("tile_var_offsets", a), ("tile_var_sizes", a)):
        for pos in range(count):
            values[(kind, pos)] = r.array("<u8", r.u64(f"{kind} count"), kind).astype(np.uint64)
    last_tile_cell_num = r.u64("last tile cell count")
    file_sizes = _u64s(r, a + 1, "file sizes")
    file_var_sizes = _u64s(r, a, "file var sizes")
    infos = field_infos(schema, version)
    names = tuple(i.name for i in infos)
    values[("rtree",)] = RTree.from_leaves(leaves, dims) if mbr_num else RTree(DEFAULT_FANOUT, ())
    dense = (mbr_num == 0) if has_coords_file is None else not has_coords_file
    return FragmentMetadata(
        version, LEGACY_SCHEMA_NAME, dense, ned, mbr_num, last_tile_cell_num, False, False, names,
        _size_map(names, file_sizes), _size_map(names[:a], file_var_sizes, names), _size_map(names, None),
        Sections(infos, values), (), schema, name)


# --- writing ------------------------------------------------------------------------------------


def _generic_tile(payload: bytes, version: int, key: bytes | None) -> bytes:
    return encode_generic_tile(payload, version, pipeline=GENERIC_TILE_PIPELINE, key=key)


def _u64_list_bytes(values: np.ndarray) -> bytes:
    arr = np.ascontiguousarray(values)
    return struct.pack("<Q", len(arr)) + arr.astype(arr.dtype.newbyteorder("<"), copy=False).tobytes()


def _bounds_bytes(info: FieldInfo, value) -> bytes:
    if isinstance(value, np.ndarray):
        fixed, var = value.tobytes(), b""
    elif info.is_var:
        lengths = [len(v) for v in value]
        fixed = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype("<u8").tobytes() if value else b""
        var = b"".join(value)
    else:
        fixed, var = b"".join(value), b""
    return struct.pack("<QQ", len(fixed), len(var)) + fixed + var


def _stats_bytes(stats: FragmentStats) -> bytes:
    w = Writer()
    for mn, mx, sm, nc in zip(stats.mins, stats.maxes, stats.sums, stats.null_counts):
        w.u64(len(mn)).raw(mn).u64(len(mx)).raw(mx).raw(sm).u64(nc)
    return w.getvalue()


def _processed_bytes(conditions: list[str]) -> bytes:
    w = Writer().u64(len(conditions))
    for cond in conditions:
        raw = cond.encode("utf-8")
        w.u64(len(raw)).raw(raw)
    return w.getvalue()


def _section_payloads(meta: FragmentMetadata, schema: ArraySchema) -> list[tuple[str, bytes]]:
    """(label, payload) of every generic tile in file order."""
    version, infos = meta.version, meta.infos
    out = [("rtree", meta.rtree.to_bytes(schema.dimensions, version))]
    for kind in _kinds(version):
        for pos, info in enumerate(infos[: _kind_count(kind, version, infos)]):
            value = meta.sections.get((kind, pos))
            if kind in ("tile_mins", "tile_maxes"):
                out.append((kind, _bounds_bytes(info, value)))
            else:
                out.append((kind, _u64_list_bytes(value)))
    if version >= 12:
        out.append(("fragment_stats", _stats_bytes(meta.fragment_stats)))
    if version >= 16:
        out.append(("processed", _processed_bytes(meta.processed_conditions)))
    return out


def _section_layout(meta: FragmentMetadata, schema: ArraySchema, key):
    """The encoded generic tiles and their offsets grouped as the footer lists them."""
    if not 3 <= meta.version <= WRITE_VERSION:
        raise UnsupportedFormatError(f"tdbsql writes fragment metadata of formats 3-{WRITE_VERSION}, "
                                     f"not {meta.version}")
    tiles, offsets, pos = [], {}, 0
    for label, payload in _section_payloads(meta, schema):
        tile = _generic_tile(payload, meta.version, key)
        offsets.setdefault(label, []).append(pos)
        tiles.append(tile)
        pos += len(tile)
    return tiles, offsets


def _kind_count(kind: str, version: int, infos) -> int:
    """How many fields a per-field list covers: before v5 var lists skip the coords slot."""
    if version < 5 and kind in ("tile_var_offsets", "tile_var_sizes", "file_var_sizes"):
        return len(infos) - 1
    return len(infos)


def _footer_bytes(meta: FragmentMetadata, schema: ArraySchema, offsets: dict) -> bytes:
    version, names = meta.version, meta.field_names
    w = Writer().u32(version)
    if version >= 10:
        raw = meta.schema_name.encode("utf-8")
        w.u64(len(raw)).raw(raw)
    w.bool(meta.dense)
    _write_non_empty_domain(w, schema.dimensions, meta.non_empty_domain)
    w.u64(meta.sparse_tile_num).u64(meta.last_tile_cell_num)
    if version >= 14:
        w.bool(meta.has_timestamps)
    if version >= 15:
        w.bool(meta.has_delete_meta)
    size_lists = [("file_sizes", meta.file_sizes), ("file_var_sizes", meta.file_var_sizes)]
    if version >= 7:
        size_lists.append(("file_validity_sizes", meta.file_validity_sizes))
    for kind, sizes in size_lists:
        for n in names[: _kind_count(kind, version, meta.infos)]:
            w.u64(sizes[n])
    w.u64(offsets["rtree"][0])
    for kind in _kinds(version):
        for off in offsets[kind]:
            w.u64(off)
    if version >= 12:
        w.u64(offsets["fragment_stats"][0])
    if version >= 16:
        w.u64(offsets["processed"][0])
    return w.getvalue()


def _write_non_empty_domain(w: Writer, dims: Sequence[Dimension], ned) -> None:
    w.bool(ned is None)
    if ned is None:
        # TileDB fills a null domain with zeros sized as if every dimension had dim 0's type,
        # which it only allows for homogeneous fixed-sized domains.
        if any(d.is_var or d.datatype != dims[0].datatype for d in dims):
            raise ValueError("a null non-empty domain needs fixed-sized dimensions of one datatype")
        w.raw(b"\0" * (2 * len(dims) * dims[0].info.size))
    else:
        write_ranges(w, dims, ned)


def _write_file(meta: FragmentMetadata, schema: ArraySchema, key) -> bytes:
    tiles, offsets = _section_layout(meta, schema, key)
    footer = _footer_bytes(meta, schema, offsets)
    trailer = b""
    if meta.version >= 10 or any(d.is_var for d in schema.dimensions):
        trailer = struct.pack("<Q", len(footer))
    return b"".join(tiles) + footer + trailer
