"""Reading one tile of one field of one fragment: locate, read, decode -> ``Column``.

A field is an attribute, a dimension, or one of the internal fields of consolidated fragments
(``t`` timestamps, ``dt`` delete timestamps, ``dci`` delete condition indices).  Tile ``i`` of a
field spans ``tile_offsets[i] .. tile_offsets[i + 1]`` of its data file (the last tile ends at
the file size recorded in the footer); var-sized fields have an offsets file and a ``_var``
values file, nullable attributes a ``_validity`` file.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass

import numpy as np

from ..datatypes import VAR_NUM, Datatype, type_info
from ..engine.column import Column, concat, rows_of
from ..errors import CorruptArrayError
from ..format.filter_pipeline import FilterPipeline
from ..kernels import offsets as offsets_kernels
from . import vfs
from .tile_cache import tile_cache
from .tile_codes import with_codes

RUN_TILES = 8  # tiles of a sparse fragment a scan task reads as one (``read_run``)


@dataclass(frozen=True)
class FieldSpec:
    """Everything needed to encode or decode a field's tiles."""

    name: str  # key of the field in the fragment metadata's per-field maps
    file_stem: str  # a0, d1, t, dt, dci (or the legacy name)
    datatype: int
    cell_val_num: int
    filters: FilterPipeline
    nullable: bool = False
    is_dim: bool = False

    @property
    def is_var(self) -> bool:
        return self.cell_val_num == VAR_NUM


def stored_fields(schema, infos, version: int) -> list[FieldSpec]:
    """The fields with data files of their own, in file order: every per-field entry of the
    fragment metadata (``infos``, from ``field_infos``) but the ``__coords`` slot, whose legacy
    zipped coordinates (< v5) are not read field by field (and which is empty later).

    Derived from the metadata's entries so that reader and writer (``fragment_writer``) agree
    with it on which fields exist, their order, stems and filters.
    """
    return [FieldSpec(info.name, info.file_stem(version), info.datatype, info.cell_val_num,
                      info.filters(schema), info.nullable, info.role == "dimension")
            for info in infos if info.role != "coords"]


def field_specs(schema, meta) -> dict[str, FieldSpec]:
    """The readable fields of a fragment (``meta``: its FragmentMetadata), by name."""
    return {spec.name: spec for spec in stored_fields(schema, meta.infos, meta.version)}


READ_AHEAD = 64 * 1024  # bytes read from a tile's start: the next tiles of a scan come free
WINDOW_BUDGET = 64 * 1024 * 1024  # bytes of read-ahead windows a reader keeps at most


class _ReadAhead:
    """Ranged reads served from one read-ahead window per file (oldest windows dropped past the
    budget).  Scans read tiles front to back, so one file read serves many small tiles."""

    def __init__(self):
        self.windows: dict[str, tuple[int, memoryview]] = {}
        self.sizes: dict[str, int] = {}
        self.held = 0
        self.lock = threading.Lock()  # scans decode tiles on several threads

    def read(self, path: str, start: int, size: int) -> memoryview:
        with self.lock:
            return self._read(path, start, size)

    def size(self, path: str) -> int:
        """The file's size, stat'ed once (then a lookup, without the lock)."""
        size = self.sizes.get(path)
        if size is None:
            with self.lock:
                if path not in self.sizes:
                    self.sizes[path] = vfs.file_size(path)
                size = self.sizes[path]
        return size

    def know_size(self, path: str, size: int) -> None:
        """The file's size, already stat'ed by the caller: ``_read`` need not stat it again."""
        with self.lock:
            self.sizes.setdefault(path, size)

    def _read(self, path: str, start: int, size: int) -> memoryview:
        window = self.windows.get(path)
        if window is not None and window[0] <= start and start + size <= window[0] + len(window[1]):
            offset = start - window[0]
            return window[1][offset : offset + size]
        if path not in self.sizes:
            self.sizes[path] = vfs.file_size(path)
        # never read ahead past the real end: a bad range is the requested tile's own error
        ahead = min(max(size, READ_AHEAD), max(self.sizes[path] - start, size))
        data = memoryview(vfs.read_range(path, start, ahead))
        self._keep(path, start, data)
        return data[:size]

    def _keep(self, path: str, start: int, data: memoryview):
        old = self.windows.pop(path, None)
        if old is not None:
            self.held -= len(old[1])
        self.windows[path] = (start, data)
        self.held += len(data)
        while self.held > WINDOW_BUDGET and len(self.windows) > 1:
            oldest = next(iter(self.windows))
            self.held -= len(self.windows.pop(oldest)[1])


_PREFIXES: dict[tuple, int] = {}
_PREFIXES_LOCK = threading.Lock()


def _interned(prefix: tuple) -> int:
    """A small number standing for a field's cache-key prefix (its files' identities, name
    and type), the same for every reader of those files: a cache key is then two ints, whose
    hash costs nothing (a tuple's hash is recomputed on every lookup, nested tuples and all,
    seven fields a tile).  One entry per field file version the process reads: ~200 bytes
    each, kept for the process's life."""
    with _PREFIXES_LOCK:
        return _PREFIXES.setdefault(prefix, len(_PREFIXES))


class TileReader:
    """Decodes tiles of one fragment; ``meta`` is its ``FragmentMetadata``."""

    def __init__(self, fragment_path: str, meta, schema, offsets_filters, validity_filters,
                 encryption=None):
        self.path = fragment_path
        self.meta = meta
        self.schema = schema
        self.offsets_filters = offsets_filters
        self.validity_filters = validity_filters
        self.encryption = encryption
        self.version = meta.version
        self.files = _ReadAhead()
        self._paths: dict[tuple[str, str], str] = {}
        self._identities: dict[str, tuple | None] = {}
        self._key_prefixes: dict[tuple[str, str], tuple | bool] = {}
        self._identity_lock = threading.Lock()  # tiles are read on several threads

    def read(self, spec: FieldSpec, tile_idx: int, hits: list | None = None) -> Column:
        """Tile ``tile_idx`` of field ``spec``, from the tile cache when it holds it (then its
        name is appended to ``hits``, if given)."""
        return self.read_fields([spec], tile_idx, hits)[0]

    def read_fields(self, specs: list[FieldSpec], tile_idx: int, hits: list | None = None,
                    keep: bool = True) -> list[Column]:
        """``read`` of several fields of one tile, looked up in the cache together; a tile
        decoded goes into the cache unless ``keep`` is False (a run's tiles: the run goes in
        their place)."""
        keys = [self._cache_key(spec, tile_idx) for spec in specs]
        if keys[0] is None:  # no cache (or an encrypted array): every field alike
            return [self._decode(spec, tile_idx) for spec in specs]
        cache = tile_cache()
        out = []
        for spec, key, (column, first) in zip(specs, keys, cache.get_many(keys)):
            if key is None:
                column = self._decode(spec, tile_idx)
            elif column is None:
                column = self._from_run(spec, tile_idx)
                if column is not None:  # a slice of a run read before: cached, coded or not
                    if hits is not None:
                        hits.append(spec.name)
                    out.append(column)
                    continue
                column = self._decode(spec, tile_idx)
                if keep:
                    cache.put(key, column, column.nbytes)
            else:
                column = self._served(spec, key, column, first, hits)
            out.append(column)
        return out

    def read_run(self, specs: list[FieldSpec], run: int, hits: list | None = None
                 ) -> list[Column]:
        """Tiles ``run * RUN_TILES`` to the end of that run (``RUN_TILES`` tiles, fewer for
        the fragment's last run) of each field, as one column each: a run of a sparse
        fragment's tiles read by one scan task (``engine.sparse_scan``: a run holds at least
        two), so the steps above pay their per-call costs once a run, not once a tile.  The
        cache keeps the run whole (one buffer: no copy when it is read again) in place of its
        tiles, which are served as slices of it (``read_fields``).  A field's name goes to
        ``hits`` when the run (or every one of its tiles) came from the cache."""
        keys = [self._cache_key(spec, ("run", run)) for spec in specs]
        tiles = self.run_tiles(run)
        if keys[0] is None:  # no cache: the tiles decoded and put together
            return [concat([self._decode(spec, t) for t in tiles]) for spec in specs]
        cache = tile_cache()
        out = []
        for spec, key, (column, first) in zip(specs, keys, cache.get_many(keys)):
            if column is None:
                cached: list[str] = []
                column = concat([self.read_fields([spec], t, cached, keep=False)[0]
                                 for t in tiles])  # two tiles or more: a new, plain column
                if len(cached) == len(tiles) and hits is not None:
                    hits.append(spec.name)
                if key is not None:  # (None: a file is missing; read_fields said so)
                    cache.put(key, column, column.nbytes)
                    cache.discard([self._cache_key(spec, t) for t in tiles])
            else:
                column = self._served(spec, key, column, first, hits)
            out.append(column)
        return out

    @staticmethod
    def _served(spec: FieldSpec, key, column: Column, first: bool, hits) -> Column:
        """A column the cache served (a tile or a run), named in ``hits``; on its first hit
        it gets its codes, kept in the cache: read again, it is worth them now (a one-off
        read never pays)."""
        if hits is not None:
            hits.append(spec.name)
        if first:
            coded = with_codes(column, spec)
            if coded is not column:
                tile_cache().put(key, coded, coded.held_bytes)
                return coded
        return column

    def run_tiles(self, run: int) -> range:
        """The tile indices of run ``run``."""
        return range(run * RUN_TILES, min((run + 1) * RUN_TILES, self.meta.tile_count))

    def _from_run(self, spec: FieldSpec, tile_idx: int) -> Column | None:
        """Tile ``tile_idx`` of ``spec`` cut from its cached run, or None (no run cached)."""
        key = self._cache_key(spec, ("run", tile_idx // RUN_TILES))
        run = None if key is None else tile_cache().peek(key)
        if run is None:
            return None
        first = tile_idx - tile_idx % RUN_TILES
        start = sum(self.meta.tile_cell_count(t) for t in range(first, tile_idx))
        return rows_of(run, start, start + self.meta.tile_cell_count(tile_idx))

    def _cache_key(self, spec: FieldSpec, tile_idx: int | tuple):
        if self.encryption is not None or tile_cache().budget == 0:
            return None
        field = (spec.file_stem, spec.name)  # one field of this fragment
        prefix = self._key_prefixes.get(field)
        if prefix is None:
            prefix = self._key_prefixes[field] = self._key_prefix(spec)
        return None if prefix is False else (prefix, tile_idx)

    def _key_prefix(self, spec: FieldSpec):
        """The field's part of its tiles' cache keys (False when a file is missing): the
        same for every tile, so worked out once per reader, not once per tile read."""
        suffixes = ["", "_var"] if spec.is_var else [""]
        if spec.nullable:
            suffixes.append("_validity")
        files = []
        for suffix in suffixes:
            path = self._file(spec.file_stem, suffix)
            identity = self._identities.get(path)
            if identity is None:
                identity = self._identity(path)
            if identity is None:
                return False  # let the read report the missing file
            files.append(identity)
        return _interned((tuple(files), spec.name, spec.datatype, spec.cell_val_num,
                          spec.nullable))

    def _identity(self, path: str):
        """Stat a data file once per reader, even when several threads miss it at once; its
        size then serves the read-ahead too (one stat per file, not two)."""
        with self._identity_lock:
            identity = self._identities.get(path)
            if identity is None:
                identity = vfs.file_identity(path)
                if identity is not None:
                    self.files.know_size(path, identity[2])  # before other threads read it
                self._identities[path] = identity
            return identity

    def _decode(self, spec: FieldSpec, tile_idx: int) -> Column:
        meta = self.meta
        if spec.is_var:
            cells = meta.tile_cell_count(tile_idx)
            in_data = spec.filters.skip_offsets_filtering(spec.datatype, self.schema.version)
            # one uint64 start a cell, or an empty tile when the data tile carries them
            # (``decode_tile`` checks the size; ``_var_offsets`` the count of either)
            offsets_raw = self._tile(spec, tile_idx, "", meta.tile_offsets, meta.file_sizes,
                                     self.offsets_filters, Datatype.UINT64,
                                     expected=0 if in_data else cells * 8)
            rebuilt: list[np.ndarray] = []
            values = self._tile(spec, tile_idx, "_var", meta.tile_var_offsets, meta.file_var_sizes,
                                spec.filters, spec.datatype, offsets_out=rebuilt,
                                expected=int(meta.tile_var_sizes[spec.name][tile_idx]))
            offsets = self._var_offsets(spec, tile_idx, offsets_raw, rebuilt, values, cells)
        else:
            dtype = type_info(spec.datatype).numpy
            # fixed RLE runs are whole cells (TileDB's Tile::cell_size), not single values
            cells = meta.tile_cell_count(tile_idx)
            # the cell count bounds the decoded size: a corrupt chunk length cannot allocate
            # more, and a tile decodes to whole cells (``decode_tile`` checks the size)
            raw = self._tile(spec, tile_idx, "", meta.tile_offsets, meta.file_sizes,
                             spec.filters, spec.datatype,
                             cell_size=dtype.itemsize * spec.cell_val_num,
                             expected=cells * dtype.itemsize * spec.cell_val_num)
            values = raw.view(dtype)
            offsets = None
        validity = None
        if spec.nullable:
            validity = self._tile(spec, tile_idx, "_validity", meta.tile_validity_offsets,
                                  meta.file_validity_sizes, self.validity_filters, Datatype.UINT8,
                                  expected=meta.tile_cell_count(tile_idx))
        return Column(values, offsets, validity, spec.cell_val_num)

    def _var_offsets(self, spec, tile_idx, offsets_raw, rebuilt, values, cells) -> np.ndarray:
        if rebuilt:
            starts = np.concatenate(rebuilt).astype(np.int64)
        else:
            starts = offsets_raw.view(np.int64)  # a start past 2**63 reads negative: refused
            if not starts.flags.writeable or not starts.flags.c_contiguous:
                starts = starts.copy()
        if len(starts) != cells:  # the kernels index the offsets by cell: never fewer
            raise CorruptArrayError(f"{len(starts)} var offsets for a tile of {cells} cells",
                                    self._where(spec, tile_idx, ""))
        offsets = np.empty(len(starts) + 1, dtype=np.int64)
        if not offsets_kernels.offsets_from_starts(starts, values.nbytes, offsets):
            raise CorruptArrayError("var offsets are not increasing",
                                    self._where(spec, tile_idx, ""))
        return offsets

    def _tile(self, spec, tile_idx, suffix, tile_offsets, file_sizes, pipeline, datatype,
              offsets_out=None, expected=None, cell_size=0) -> np.ndarray:
        offsets = tile_offsets[spec.name]
        where = self._where(spec, tile_idx, suffix)
        if tile_idx >= len(offsets):
            raise CorruptArrayError(f"tile {tile_idx} is past the {len(offsets)} tiles recorded",
                                    where)
        recorded = int(file_sizes[spec.name])
        start = int(offsets[tile_idx])
        end = int(offsets[tile_idx + 1]) if tile_idx + 1 < len(offsets) else recorded
        path = self._file(spec.file_stem, suffix)
        if start < 0 or end < start:
            raise CorruptArrayError(f"tile byte range {start}..{end} is not a range", where)
        # a data file is exactly as long as the fragment metadata says: a file of another
        # fragment (or metadata of another fragment) would otherwise decode as valid tiles
        size = self.files.size(path)
        if size != recorded:
            raise CorruptArrayError(
                f"the file has {size} bytes but the fragment metadata records {recorded}", where)
        raw = self.files.read(path, start, end - start)
        return pipeline.decode_tile(raw, datatype, self.version, where=where,
                                    encryption=self.encryption, expected_size=expected,
                                    offsets_out=offsets_out, cell_size=cell_size,
                                    schema_version=self.schema.version)

    def _file(self, stem: str, suffix: str) -> str:
        key = (stem, suffix)
        path = self._paths.get(key)
        if path is None:
            path = self._paths[key] = os.path.join(self.path, f"{stem}{suffix}.tdb")
        return path

    def _where(self, spec, tile_idx, suffix) -> str:
        frag = os.path.basename(self.path)
        return f"{frag}/{spec.file_stem}{suffix}.tdb (field {spec.name!r}), tile {tile_idx}"
