"""An array opened at a timestamp window: schemas, fragments with metadata, deletes, metadata.

``Array`` is what ``tdbsql.open`` returns and what every scan reads from.  Files are read
lazily and once: fragment metadata when a scan first needs a fragment (its footer from a
consolidated fragment metadata file when one lists it, as TileDB does), enumerations when a
query touches their attribute.  Dense arrays see only fragments wholly inside the window.
A key for an array that is not encrypted is refused, as in TileDB.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property, partial

from ..errors import EncryptionKeyError, InterfaceError
from ..datatypes import EncryptionType
from ..format.array_schema import ArraySchema, read_array_schema
from ..format.binary import Reader
from ..format.generic_tile import read_header
from .directory import (
    FRAGMENT_METADATA_FILE, LEGACY_SCHEMA, UINT64_MAX, ArrayDirectory, FragmentEntry,
    SchemaEntry, latest_schema, list_array, require_array,
)
from .tiles import TileReader, field_specs
from . import vfs
from .by_identity import ByIdentity
from .parsed_files import ParsedFiles, key_digest
from ..format.names import META_DIR, SCHEMA_DIR, now_ms


def normalize_window(timestamp) -> tuple[int, int]:
    """``None`` -> [0, now]; ``t`` -> [0, t]; ``(t1, t2)`` -> [t1, t2] (None ends allowed).
    Timestamps are milliseconds >= 0 and a window's start is not after its end."""
    if timestamp is None:
        return (0, now_ms())
    try:
        if isinstance(timestamp, tuple | list):
            start, end = timestamp
            window = (_millis(start or 0), _millis(end) if end is not None else now_ms())
        else:
            window = (0, _millis(timestamp))
    except (TypeError, ValueError):
        raise InterfaceError(f"timestamp {timestamp!r} is not milliseconds or a (start, end) "
                             "pair of them") from None
    if window[0] < 0 or window[0] > window[1]:
        raise InterfaceError(f"timestamp window {list(window)} is empty or negative "
                             "(timestamps are milliseconds since the epoch, start <= end)")
    return window


def write_timestamp(timestamp) -> int:
    """A write's timestamp: None -> now, else whole milliseconds in [0, 2**64 - 1] (what a
    fragment or file name can hold; anything else would name a file TileDB cannot parse)."""
    if timestamp is None:
        return now_ms()
    try:
        value = _millis(timestamp)
    except (TypeError, ValueError):
        raise InterfaceError(f"timestamp {timestamp!r} is not a whole number of milliseconds") from None
    if not 0 <= value <= UINT64_MAX:
        raise InterfaceError(f"timestamp {value} is outside [0, 2**64 - 1] (milliseconds since "
                             "the epoch)")
    return value


def _millis(value) -> int:
    if isinstance(value, bool) or isinstance(value, str) or int(value) != value:
        raise ValueError(value)
    return int(value)


def normalize_key(key) -> bytes | None:
    if key is None:
        return None
    if not isinstance(key, (str, bytes, bytearray, memoryview)):  # bytes(5): five zero bytes
        raise EncryptionKeyError(f"an encryption key is a str or bytes, not {type(key).__name__}")
    raw = key.encode("utf-8") if isinstance(key, str) else bytes(key)
    if len(raw) != 32:
        raise EncryptionKeyError(
            f"an AES-256-GCM key must be 32 bytes long (got {len(raw)} bytes)"
        )
    return raw


@dataclass
class Fragment:
    """One fragment visible in the window, read with the schema it names."""

    entry: FragmentEntry
    array: "Array"

    @property
    def name(self) -> str:
        return self.entry.name

    @property
    def timestamp_range(self) -> tuple[int, int]:
        return self.entry.timestamp_range

    @cached_property
    def metadata(self):
        """The fragment's metadata, parsed once per process (``storage.parsed_files``): the
        sections it loads on demand (R-tree, tile offsets, zone maps) then load once too."""
        entry, array = self.entry, self.array
        footer = array.consolidated_footers.get(entry.name) if entry.version >= 3 else None
        source = os.path.join(entry.path, FRAGMENT_METADATA_FILE)
        return _FRAGMENT_METADATA.get(
            source, lambda size: self._read_metadata(source, footer, size), footer,
            key_digest(array.key), tuple(e.name for e in array.schema_entries))

    def _read_metadata(self, source: str, footer: bytes | None, size: int | None):
        from ..format.fragment_metadata import read_fragment_metadata

        entry, array = self.entry, self.array
        # formats 1-2 tell dense from sparse by the __coords.tdb file; later ones by the footer
        coords_file = False
        if entry.version <= 2:
            coords_file = vfs.is_file(os.path.join(entry.path, "__coords.tdb"))
        # one stat, and ranged reads through vfs (which check each range against the file)
        return read_fragment_metadata(
            partial(vfs.read_range, source), array.schema_for_fragment(entry),
            entry.name, entry.version, key=array.key, schemas=array.schemas,
            footer=footer, file_size=vfs.file_size(source) if size is None else size,
            has_coords_file=coords_file, where=source,
        )

    @property
    def schema(self) -> ArraySchema:
        """The schema the fragment was written with."""
        return self.metadata.schema or self.array.schema_for_fragment(self.entry)

    @property
    def version(self) -> int:
        return self.metadata.version

    @cached_property
    def fields(self):
        """The fragment's readable fields by name, worked out once per fragment metadata
        (shared by every query that reads the fragment) and schema."""
        schema, metadata = self.schema, self.metadata
        kept, fields = _FIELDS.get(metadata, lambda: (schema, field_specs(schema, metadata)))
        return fields if kept is schema else field_specs(schema, metadata)

    @cached_property
    def tiles(self) -> TileReader:
        schema = self.schema
        return TileReader(self.entry.path, self.metadata, schema, schema.offsets_filters,
                          schema.validity_filters, self.array.encryption)


_SCHEMAS: ParsedFiles[ArraySchema] = ParsedFiles(256)
_FRAGMENT_METADATA: ParsedFiles = ParsedFiles(512)
_FIELDS = ByIdentity(512)  # fragment metadata -> (its schema, its fields)
_CONSOLIDATED_FOOTERS: ParsedFiles[dict] = ParsedFiles(256)


def _read_schema(entry, key: bytes | None) -> ArraySchema:
    def parse(size) -> ArraySchema:
        data = vfs.read_file(entry.path)
        if key is not None:
            _require_encrypted(data, entry.path)
        return read_array_schema(data, entry.path, entry.name, key)

    return _SCHEMAS.get(entry.path, parse, key_digest(key))


class Array:
    """A TileDB array opened for reading at a timestamp window."""

    def __init__(self, path: str, timestamp=None, key=None, schema_time: int | None = None):
        """``schema_time``: read with the schema in force then (default: the window's end) --
        a consolidation reads older fragments with the schema it writes."""
        self.path = vfs.local_path(path)
        self.window = normalize_window(timestamp)
        self.key = normalize_key(key)
        self.schema_time = self.window[1] if schema_time is None else schema_time
        # Only __schema is listed here (a clear error if this is no array): many callers need
        # just the schema; the full listing (``directory``) waits until something needs it.
        self.schema_entries: tuple[SchemaEntry, ...] = tuple(require_array(self.path))

    @cached_property
    def directory(self) -> ArrayDirectory:
        """Everything visible at the window (root, ``__commits``, ``__fragment_meta``, the
        ``.con``/``.ign``/``.vac``/``.del`` files), listed on first use; its schemas are the
        ones listed at open."""
        return list_array(self.path, self.window, self.schema_entries)

    # -- schemas -------------------------------------------------------------------------

    @cached_property
    def schemas(self) -> dict[str, ArraySchema]:
        """Every schema of the array by file name (schema evolution keeps them all)."""
        # a version past MAX_READ_VERSION is refused by the parser, naming the file
        return {entry.name: _read_schema(entry, self.key) for entry in self.schema_entries}

    @cached_property
    def schema(self) -> ArraySchema:
        """The schema in force at the end of the window (or at ``schema_time``)."""
        return self.schemas[latest_schema(self.schema_entries, self.schema_time).name]

    def schema_for_fragment(self, entry: FragmentEntry) -> ArraySchema:
        """The schema to parse a fragment's footer with.  Fragments of format 10+ name their
        schema in the footer (``read_fragment_metadata`` picks it from ``schemas``); older ones
        use the legacy ``__array_schema.tdb`` (or, if an upgrade removed it, the newest schema
        written by their time)."""
        if LEGACY_SCHEMA in self.schemas:
            return self.schemas[LEGACY_SCHEMA]
        candidates = [s for s in self.schema_entries if s.timestamp <= entry.timestamp_range[1]]
        chosen = (candidates or list(self.schema_entries))[-1]
        return self.schemas[chosen.name]

    @cached_property
    def encryption(self):
        if self.key is None:
            return None
        from ..format.filters.encryption import AesGcmFilter

        return AesGcmFilter(self.key)

    # -- fragments -----------------------------------------------------------------------

    @cached_property
    def fragments(self) -> list[Fragment]:
        """Fragments of the window, oldest first (dense arrays: whole-range overlap only)."""
        entries = self.directory.visible_fragments(full_overlap_only=self.schema.dense)
        return [Fragment(entry, self) for entry in entries]

    @cached_property
    def consolidated_footers(self) -> dict[str, bytes]:
        """Footers from consolidated fragment metadata files, by fragment folder name (the
        first file that lists a fragment wins, as in TileDB)."""
        from ..format.consolidated_fragment_metadata import read_consolidated_fragment_metadata

        footers: dict[str, bytes] = {}
        for path in self.directory.fragment_meta_files:
            found = _CONSOLIDATED_FOOTERS.get(path, lambda size, path=path: (
                read_consolidated_fragment_metadata(vfs.read_file(path), path, self.key).footers),
                key_digest(self.key))
            for name, footer in found.items():
                footers.setdefault(name, footer)
        return footers

    @cached_property
    def enumerations(self) -> dict:
        """Enumerations of the current schema by name (loaded once)."""
        from ..format.enumeration import read_enumeration

        found = {}
        for ref in self.schema.enumerations:
            path = os.path.join(self.path, SCHEMA_DIR, "__enumerations", ref.filename)
            found[ref.name] = read_enumeration(vfs.read_file(path), path, self.key)
        return found

    def non_empty_domain(self) -> tuple | None:
        """Per dimension (lo, hi) over every fragment in the window; None if empty."""
        domains = [f.metadata.non_empty_domain for f in self.fragments
                   if f.metadata.non_empty_domain is not None]
        if not domains:
            return None
        ndim = len(self.schema.dimensions)
        return tuple(
            (min(d[dim_idx][0] for d in domains), max(d[dim_idx][1] for d in domains))
            for dim_idx in range(ndim)
        )

    # -- array metadata ----------------------------------------------------------------------

    def metadata(self) -> dict:
        """``dict(A.meta)`` of TileDB-Py for this window."""
        from ..format.metadata import load_metadata_dir

        self.schema  # opening checks the key, as TileDB's open does
        start, end = self.window
        return load_metadata_dir(os.path.join(self.path, META_DIR), start, end, self.key)

    def __repr__(self) -> str:
        kind = "sparse" if self.schema.sparse else "dense"
        return f"<tdbsql.Array {kind} {self.path!r} fragments={len(self.fragments)}>"


def _require_encrypted(data: bytes, where: str) -> None:
    """A key for an array that is not encrypted is an error in TileDB too."""
    header = read_header(Reader(data, where))
    if header.encryption_type == EncryptionType.NO_ENCRYPTION:
        raise EncryptionKeyError(f"{where}: the array is not encrypted; open it without a key")


__all__ = ["Array", "Fragment", "normalize_window"]
