"""Writing one fragment: tiles -> filtered data files -> ``__fragment_metadata.tdb`` -> commit.

In: the array path, its stored schema, every field's cells already in stored order
(``FieldBuffer`` by field name: attributes, dimensions for sparse fragments, ``__timestamps``
for per-cell timestamps), the cells per tile, the non-empty domain and (sparse) MBRs.
Out: the fragment folder ``__fragments/__t1_t2_<uuid>_22`` laid out as TileDB 2.30 writes it
(``a<i>.tdb`` fixed data or var offsets, ``a<i>_var.tdb``, ``a<i>_validity.tdb``, ``d<i>...``,
``t.tdb``), then ``__commits/<name>.wrt`` -- written LAST, so a reader never sees a fragment
whose files are incomplete.  Returns the fragment's folder name.

Tiles are filtered with the field's pipeline (var offsets with the schema's offsets pipeline,
validity with its validity pipeline; an RLE/DICTIONARY string tile folds its offsets into the
data and its offsets file gets an empty tile), encryption appended when a key is given.
"""

from __future__ import annotations

import os
import shutil
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from ..datatypes import VAR_NUM, Datatype, type_info
from ..engine.parallel import map_ordered
from ..format.array_schema import ArraySchema
from ..format.filter_pipeline import EMPTY_TILE
from ..format.fragment_metadata import (
    WRITE_VERSION, FragmentMetadata, FragmentStats, field_infos,
)
from ..format.names import COMMITS_DIR, FRAGMENTS_DIR, commit_marker, new_name
from ..format.rtree import RTree
from . import tile_metadata as tm
from . import vfs
from .tiles import FieldSpec, stored_fields
from .write_buffers import FieldBuffer



def field_specs(schema: ArraySchema, dense: bool, has_timestamps: bool,
                has_delete_meta: bool = False) -> list[FieldSpec]:
    """The fields a fragment stores, in file order: those its metadata lists
    (``field_infos``), without the dimensions of a dense fragment (they have no files)."""
    infos = field_infos(schema, WRITE_VERSION, has_timestamps, has_delete_meta)
    return [spec for spec in stored_fields(schema, infos, WRITE_VERSION)
            if not (dense and spec.is_dim)]


@dataclass
class _Written:
    tile_offsets: np.ndarray
    var_offsets: np.ndarray
    var_sizes: np.ndarray
    validity_offsets: np.ndarray
    file_size: int
    var_file_size: int
    validity_file_size: int


@dataclass
class _FieldFiles:
    """The files of one field being written (data or var offsets, var data, validity) and,
    per tile written so far, the bytes each of its filtered tiles took.  A file is open only
    while an append writes to it: an array of hundreds of attributes must not hold three
    files a field open at once."""

    spec: FieldSpec
    paths: dict[str, str]  # "fixed", "var", "validity" (those the field has) -> file
    sizes: dict[str, list[int]] = field(default_factory=dict)
    var_sizes: list[int] = field(default_factory=list)  # decoded bytes of each var tile

    @classmethod
    def create(cls, folder: str, spec: FieldSpec) -> "_FieldFiles":
        names = {"fixed": f"{spec.file_stem}.tdb"}
        if spec.cell_val_num == VAR_NUM:
            names["var"] = f"{spec.file_stem}_var.tdb"
        if spec.nullable:
            names["validity"] = f"{spec.file_stem}_validity.tdb"
        files = cls(spec, {kind: os.path.join(folder, name) for kind, name in names.items()})
        for kind, path in files.paths.items():
            open(path, "wb").close()
            files.sizes[kind] = []
        return files

    def add(self, tiles: dict[str, list[bytes]], var_sizes: list[int]) -> None:
        """Append an append's filtered tiles (by file kind) to the files; ``var_sizes``: the
        decoded bytes of its var tiles."""
        for kind, path in self.paths.items():
            with open(path, "ab") as out:
                for tile in tiles[kind]:
                    out.write(tile)
            self.sizes[kind].extend(len(tile) for tile in tiles[kind])
        self.var_sizes.extend(var_sizes)

    def close(self) -> _Written:
        """Fsync the files (their folder is fsync'ed at the commit); the tiles' offsets and
        the files' sizes."""
        for path in self.paths.values():
            vfs.fsync_file(path)
        n_tiles = len(self.sizes["fixed"])
        zeros = np.zeros(n_tiles, np.uint64)
        return _Written(
            _offsets(self.sizes["fixed"]),
            _offsets(self.sizes["var"]) if "var" in self.sizes else zeros,
            np.array(self.var_sizes, np.uint64) if "var" in self.sizes else zeros,
            _offsets(self.sizes["validity"]) if "validity" in self.sizes else zeros,
            *(sum(self.sizes.get(kind, [])) for kind in ("fixed", "var", "validity")))


@dataclass
class _Stream:
    """A fragment being written tile after tile (``FragmentWriter.start``)."""

    dense: bool
    tile_size: int
    has_timestamps: bool
    has_delete_meta: bool
    files: dict[str, _FieldFiles] = field(default_factory=dict)
    stats: dict[str, list[tm.TileStats]] = field(default_factory=dict)
    mbrs: list = field(default_factory=list)  # R-tree leaves of each append
    cells: int = 0


class FragmentWriter:
    """Writes one fragment folder; ``commit()`` makes it visible."""

    def __init__(self, array_path: str, schema: ArraySchema, *, timestamp_range: tuple[int, int],
                 key: bytes | None = None, name: str | None = None):
        self.array_path = array_path
        self.schema = schema
        self.key = key
        self.name = name or new_name(timestamp_range[0], timestamp_range[1], WRITE_VERSION)
        self.path = os.path.join(array_path, FRAGMENTS_DIR, self.name)
        self.encryption = None
        if key is not None:
            from ..format.filters.encryption import AesGcmFilter

            self.encryption = AesGcmFilter(key)

    # -- the whole fragment -------------------------------------------------------------------

    def write(self, fields: dict[str, FieldBuffer], *, dense: bool, n_cells: int, tile_size: int,
              non_empty_domain, mbrs=None, has_timestamps: bool = False,
              written_mask: np.ndarray | None = None, has_delete_meta: bool = False,
              processed_conditions: tuple[str, ...] = ()) -> FragmentMetadata:
        """Write every data file and the metadata file (not the commit)."""
        self.start(dense=dense, tile_size=tile_size, has_timestamps=has_timestamps,
                   has_delete_meta=has_delete_meta)
        with self.discarded_on_error():
            self.append(fields, n_cells, mbrs=mbrs, written_mask=written_mask)
            return self.finish(non_empty_domain, processed_conditions)

    # -- tile after tile ----------------------------------------------------------------------

    def start(self, *, dense: bool, tile_size: int, has_timestamps: bool = False,
              has_delete_meta: bool = False) -> None:
        """Create the fragment's folder and open its data files for ``append``."""
        os.makedirs(os.path.join(self.array_path, FRAGMENTS_DIR), exist_ok=True)
        os.makedirs(os.path.join(self.array_path, COMMITS_DIR), exist_ok=True)
        os.mkdir(self.path)
        self._stream = _Stream(dense, tile_size, has_timestamps, has_delete_meta)
        with self.discarded_on_error():
            for spec in field_specs(self.schema, dense, has_timestamps, has_delete_meta):
                self._stream.files[spec.name] = _FieldFiles.create(self.path, spec)

    def append(self, fields: dict[str, FieldBuffer], n_cells: int, *, mbrs=None,
               written_mask: np.ndarray | None = None) -> None:
        """Write the next ``n_cells`` cells of every field (``fields``, in the fragment's cell
        order), tiles of ``tile_size`` cells; all but the last append hold whole tiles.
        ``mbrs``: the R-tree leaves of these cells' tiles (sparse)."""
        stream = self._stream
        if stream.cells % stream.tile_size:
            raise ValueError("a fragment's tiles are full until its last one: cells were "
                             "appended after a partial tile")

        def written(files: _FieldFiles) -> tm.TileStats:  # its own files: fields in parallel
            spec, buf = files.spec, fields[files.spec.name]
            self._write_tiles(files, buf, stream.tile_size, n_cells)
            return tm.tile_stats(spec.datatype, spec.cell_val_num, spec.is_dim, spec.nullable,
                                 buf, stream.tile_size, n_cells, written_mask)

        with self.discarded_on_error():
            files = list(stream.files.values())
            for each, stats in zip(files, map_ordered(written, files)):
                stream.stats.setdefault(each.spec.name, []).append(stats)
        stream.cells += n_cells
        if mbrs is not None:
            stream.mbrs.append(mbrs)

    def finish(self, non_empty_domain,
               processed_conditions: tuple[str, ...] = ()) -> FragmentMetadata:
        """Fsync the data files and write the metadata file (not the commit)."""
        stream = self._stream
        with self.discarded_on_error():
            written, stats, frag = {}, {}, {}
            for name, files in stream.files.items():
                spec = files.spec
                written[name] = files.close()
                stats[name] = tm.concat_stats(stream.stats.get(name, []))
                frag[name] = tm.fragment_stat(spec.datatype, spec.cell_val_num, spec.is_dim,
                                              spec.nullable, stats[name])
            n_tiles = -(-stream.cells // stream.tile_size) if stream.cells else 0
            meta = self._metadata(written, stats, frag, dense=stream.dense, n_tiles=n_tiles,
                                  n_cells=stream.cells, tile_size=stream.tile_size,
                                  non_empty_domain=non_empty_domain,
                                  mbrs=_joined_leaves(stream.mbrs),
                                  has_timestamps=stream.has_timestamps,
                                  has_delete_meta=stream.has_delete_meta,
                                  processed_conditions=processed_conditions)
            self._write_file("__fragment_metadata.tdb", meta.to_bytes(self.schema, self.key))
            return meta

    @property
    def cells(self) -> int:
        """The cells appended so far."""
        return self._stream.cells

    @contextmanager
    def discarded_on_error(self):
        """On any error (a filter refusing the data, e.g. POSITIVE_DELTA on decreasing values;
        a full disk), remove the fragment: nothing is left behind."""
        try:
            yield
        except BaseException:
            self.discard()
            raise

    def discard(self) -> None:
        """Remove the fragment (never committed: no reader saw it)."""
        discard_fragment(self.array_path, self.name)

    def commit(self) -> None:
        """From now on readers see the fragment."""
        commit_fragment(self.array_path, self.name)

    # -- one field ----------------------------------------------------------------------------

    def _write_tiles(self, files: _FieldFiles, buf: FieldBuffer, tile_size: int,
                     n_cells: int) -> None:
        """The tiles of ``n_cells`` cells of one field, filtered, onto its files."""
        spec = files.spec
        info = type_info(spec.datatype)
        is_var = spec.cell_val_num == VAR_NUM
        cell_size = info.size * (1 if is_var else spec.cell_val_num)
        tiles: dict[str, list[bytes]] = {kind: [] for kind in files.paths}
        var_sizes = []
        for start in range(0, n_cells, tile_size):
            end = min(start + tile_size, n_cells)
            if is_var:
                lo, hi = int(buf.offsets[start]), int(buf.offsets[end])
                cell_starts = (buf.offsets[start:end] - lo).astype(np.uint64)
                tiles["var"].append(spec.filters.encode_tile(
                    buf.values[lo:hi], spec.datatype, WRITE_VERSION, cell_size=info.size,
                    encryption=self.encryption, offsets=cell_starts))
                var_sizes.append(hi - lo)
                tiles["fixed"].append(self._offsets_tile(spec, cell_starts))
            else:
                raw = buf.values.view(np.uint8)[start * cell_size:end * cell_size]
                tiles["fixed"].append(spec.filters.encode_tile(
                    raw, spec.datatype, WRITE_VERSION, cell_size=cell_size,
                    encryption=self.encryption))
            if spec.nullable:
                tiles["validity"].append(self.schema.validity_filters.encode_tile(
                    buf.validity[start:end], Datatype.UINT8, WRITE_VERSION, cell_size=1,
                    encryption=self.encryption))
        files.add(tiles, var_sizes)

    def _offsets_tile(self, spec: FieldSpec, cell_starts: np.ndarray) -> bytes:
        if spec.filters.skip_offsets_filtering(spec.datatype, self.schema.version):
            return EMPTY_TILE  # the offsets live in the data tile (TileDB skips encryption too)
        return self.schema.offsets_filters.encode_tile(
            cell_starts.view(np.uint8), Datatype.UINT64, WRITE_VERSION, cell_size=8,
            encryption=self.encryption)

    def _write_file(self, name: str, data: bytes) -> None:
        """One file of the fragment, fsync'ed: the ``.wrt`` written later must never be
        durable while the data it commits is not (the folder is fsync'ed at the commit)."""
        vfs.write_synced(os.path.join(self.path, name), data)

    # -- metadata -----------------------------------------------------------------------------

    def _metadata(self, written, stats, frag, *, dense, n_tiles, n_cells, tile_size,
                  non_empty_domain, mbrs, has_timestamps, has_delete_meta=False,
                  processed_conditions=()) -> FragmentMetadata:
        schema = self.schema
        infos = field_infos(schema, WRITE_VERSION, has_timestamps, has_delete_meta)
        coords_stats, coords_frag = tm.coords_slot(schema, n_tiles)
        zeros = np.zeros(n_tiles, dtype=np.uint64)
        sections: dict[str, dict] = {k: {} for k in (
            "tile_offsets", "tile_var_offsets", "tile_var_sizes", "tile_validity_offsets",
            "tile_mins", "tile_maxes", "tile_sums", "tile_null_counts")}
        sizes, var_sizes, validity_sizes = {}, {}, {}
        frag_stats = []
        for info in infos:
            w = written.get(info.name)
            st = stats.get(info.name, coords_stats if info.role == "coords" else None)
            sections["tile_offsets"][info.name] = w.tile_offsets if w else zeros
            sections["tile_var_offsets"][info.name] = w.var_offsets if w else zeros
            sections["tile_var_sizes"][info.name] = w.var_sizes if w else zeros
            sections["tile_validity_offsets"][info.name] = w.validity_offsets if w else zeros
            if st is not None:
                for kind, value in (("tile_mins", st.mins), ("tile_maxes", st.maxes),
                                    ("tile_sums", st.sums), ("tile_null_counts", st.null_counts)):
                    if value is not None:
                        sections[kind][info.name] = value
            if w:
                sizes[info.name], var_sizes[info.name] = w.file_size, w.var_file_size
                validity_sizes[info.name] = w.validity_file_size
            default = (b"", b"", bytes(8), 0)
            frag_stats.append(frag.get(info.name, coords_frag if info.role == "coords" else default))
        last = n_cells - tile_size * (n_tiles - 1) if n_tiles else 0
        rtree = None
        if mbrs is not None and n_tiles:
            rtree = RTree.from_leaves(mbrs, schema.dimensions)
        return FragmentMetadata.create(
            schema, dense=dense, non_empty_domain=non_empty_domain,
            sparse_tile_num=0 if dense else n_tiles, last_tile_cell_num=last,
            has_timestamps=has_timestamps, has_delete_meta=has_delete_meta,
            processed_conditions=processed_conditions, file_sizes=sizes, file_var_sizes=var_sizes,
            file_validity_sizes=validity_sizes, rtree=rtree, sections=sections,
            fragment_stats=FragmentStats(*(tuple(x) for x in zip(*frag_stats))),
            name=self.name)


def discard_fragment(array_path: str, name: str) -> None:
    """Remove a fragment written but not committed (no reader has seen it)."""
    shutil.rmtree(os.path.join(array_path, FRAGMENTS_DIR, name), ignore_errors=True)


def commit_fragment(array_path: str, name: str) -> None:
    """Create ``__commits/<name>.wrt`` (empty), the marker that makes a written fragment
    visible; it must come after every file of the fragment is on disk.

    Durability, so a power loss never leaves a marker pointing at data not on disk: the data
    files were fsync'ed when the fragment was finished (``_FieldFiles.close``, and
    ``FragmentWriter._write_file`` for the metadata); here the
    fragment's folder (its file entries) and ``__fragments`` (the folder's entry) are fsync'ed
    first, then the marker is created and fsync'ed with ``__commits``."""
    fragments = os.path.join(array_path, FRAGMENTS_DIR)
    vfs.fsync_dir(os.path.join(fragments, name))
    vfs.fsync_dir(fragments)
    vfs.write_durable(os.path.join(array_path, commit_marker(name, WRITE_VERSION)), b"")


def _offsets(sizes: list[int]) -> np.ndarray:
    """Each tile's start in its file, from the tiles' sizes."""
    out = np.zeros(len(sizes), dtype=np.uint64)
    if len(sizes) > 1:
        np.cumsum(np.array(sizes[:-1], dtype=np.uint64), out=out[1:])
    return out


def _joined_leaves(parts: list):
    """The R-tree leaves of several appends as one: per dimension, the (tiles, 2) arrays
    stacked, or the tuples of (min, max) bytes of a string dimension joined; None without
    any."""
    parts = [part for part in parts if part is not None]
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]
    return tuple(np.concatenate(dim_parts) if isinstance(dim_parts[0], np.ndarray)
                 else tuple(leaf for part in dim_parts for leaf in part)
                 for dim_parts in zip(*parts))
