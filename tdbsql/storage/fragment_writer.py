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
from dataclasses import dataclass

import numpy as np

from ..datatypes import VAR_NUM, Datatype, type_info
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
        os.makedirs(os.path.join(self.array_path, FRAGMENTS_DIR), exist_ok=True)
        os.makedirs(os.path.join(self.array_path, COMMITS_DIR), exist_ok=True)
        os.mkdir(self.path)
        try:
            return self._write_all(fields, dense=dense, n_cells=n_cells, tile_size=tile_size,
                                   non_empty_domain=non_empty_domain, mbrs=mbrs,
                                   has_timestamps=has_timestamps, written_mask=written_mask,
                                   has_delete_meta=has_delete_meta,
                                   processed_conditions=processed_conditions)
        except BaseException:
            # a filter refused the data (e.g. POSITIVE_DELTA on decreasing values): leave nothing
            discard_fragment(self.array_path, self.name)
            raise

    def _write_all(self, fields, *, dense, n_cells, tile_size, non_empty_domain, mbrs,
                   has_timestamps, written_mask, has_delete_meta,
                   processed_conditions) -> FragmentMetadata:
        n_tiles = -(-n_cells // tile_size) if n_cells else 0
        specs = field_specs(self.schema, dense, has_timestamps, has_delete_meta)
        written, stats, frag = {}, {}, {}
        for spec in specs:
            buf = fields[spec.name]
            written[spec.name] = self._write_field(spec, buf, tile_size, n_tiles, n_cells)
            stats[spec.name] = tm.tile_stats(spec.datatype, spec.cell_val_num, spec.is_dim,
                                             spec.nullable, buf, tile_size, n_cells,
                                             written_mask)
            frag[spec.name] = tm.fragment_stat(spec.datatype, spec.cell_val_num, spec.is_dim,
                                               spec.nullable, stats[spec.name])
        meta = self._metadata(written, stats, frag, dense=dense, n_tiles=n_tiles,
                              n_cells=n_cells, tile_size=tile_size,
                              non_empty_domain=non_empty_domain, mbrs=mbrs,
                              has_timestamps=has_timestamps, has_delete_meta=has_delete_meta,
                              processed_conditions=processed_conditions)
        self._write_file("__fragment_metadata.tdb", meta.to_bytes(self.schema, self.key))
        return meta

    def commit(self) -> None:
        """From now on readers see the fragment."""
        commit_fragment(self.array_path, self.name)

    # -- one field ----------------------------------------------------------------------------

    def _write_field(self, spec: FieldSpec, buf: FieldBuffer, tile_size: int, n_tiles: int,
                     n_cells: int) -> _Written:
        info = type_info(spec.datatype)
        is_var = spec.cell_val_num == VAR_NUM
        cell_size = info.size * (1 if is_var else spec.cell_val_num)
        fixed, var, validity = [], [], []
        var_sizes = np.zeros(n_tiles, dtype=np.uint64)
        for tile_idx in range(n_tiles):
            start = tile_idx * tile_size
            end = min(start + tile_size, n_cells)
            if is_var:
                lo, hi = int(buf.offsets[start]), int(buf.offsets[end])
                cell_starts = (buf.offsets[start:end] - lo).astype(np.uint64)
                data = buf.values[lo:hi]
                var.append(spec.filters.encode_tile(
                    data, spec.datatype, WRITE_VERSION, cell_size=info.size,
                    encryption=self.encryption, offsets=cell_starts))
                var_sizes[tile_idx] = hi - lo
                fixed.append(self._offsets_tile(spec, cell_starts))
            else:
                raw = buf.values.view(np.uint8)[start * cell_size:end * cell_size]
                fixed.append(spec.filters.encode_tile(raw, spec.datatype, WRITE_VERSION,
                                                      cell_size=cell_size,
                                                      encryption=self.encryption))
            if spec.nullable:
                validity.append(self.schema.validity_filters.encode_tile(
                    buf.validity[start:end], Datatype.UINT8, WRITE_VERSION, cell_size=1,
                    encryption=self.encryption))
        result = _Written(_offsets(fixed), _offsets(var) if is_var else np.zeros(n_tiles, np.uint64),
                          var_sizes, _offsets(validity) if spec.nullable else np.zeros(n_tiles, np.uint64),
                          sum(map(len, fixed)), sum(map(len, var)), sum(map(len, validity)))
        self._write_file(f"{spec.file_stem}.tdb", b"".join(fixed))
        if is_var:
            self._write_file(f"{spec.file_stem}_var.tdb", b"".join(var))
        if spec.nullable:
            self._write_file(f"{spec.file_stem}_validity.tdb", b"".join(validity))
        return result

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
    files were fsync'ed as they were written (``FragmentWriter._write_file``); here the
    fragment's folder (its file entries) and ``__fragments`` (the folder's entry) are fsync'ed
    first, then the marker is created and fsync'ed with ``__commits``."""
    fragments = os.path.join(array_path, FRAGMENTS_DIR)
    vfs.fsync_dir(os.path.join(fragments, name))
    vfs.fsync_dir(fragments)
    vfs.write_durable(os.path.join(array_path, commit_marker(name, WRITE_VERSION)), b"")


def _offsets(tiles: list[bytes]) -> np.ndarray:
    sizes = np.array([len(t) for t in tiles], dtype=np.uint64)
    out = np.zeros(len(tiles), dtype=np.uint64)
    if len(tiles) > 1:
        np.cumsum(sizes[:-1], out=out[1:])
    return out
