"""Creating arrays and writing fragments, metadata and deletes (the public write API).

In: a path, a ``tdbsql.schema.Schema`` or user data (Arrow table / RecordBatchReader, pandas
DataFrame, dict of arrays), an optional 32-byte AES-256-GCM key and timestamp (ms).
Out: files laid out as TileDB 2.30 writes them (format version 22), which ``tiledb`` and
tdbsql read back cell for cell:

* ``create``: ``__schema/__t_t_<uuid>`` (+ ``__schema/__enumerations/__<uuid>_0``) and the
  empty folders TileDB makes (``__commits``, ``__fragments``, ``__fragment_meta``,
  ``__labels``, ``__meta``);
* ``write`` / ``write_fragment``: one fragment per call (``fragment_writer``), committed last
  (``write`` takes enumerated attributes as labels or indices, ``write_fragment`` as indices);
  its steps ``sort_cells`` and ``write_sorted`` are also fragment consolidation's;
* ``put_metadata`` / ``delete_metadata``: one ``__meta/__t_t_<uuid>`` file each;
* ``delete``: a ``__commits/__t_t_<uuid>_22.del`` delete commit (``delete_writer``).

Nothing is written when the input is bad: every check runs before the first file.
"""

from __future__ import annotations

import os
from typing import Any, Mapping

import numpy as np
import pyarrow as pa

from ..datatypes import VAR_NUM
from ..errors import DataError, TdbsqlError
from ..format.array_schema import ArraySchema, write_array_schema
from ..format.enumeration import ENUMERATIONS_DIR, write_enumeration
from ..format.fragment_metadata import DELETE_TIMESTAMPS, TIMESTAMPS
from ..format.names import new_name
from ..schema import Schema
from . import tiling, vfs
from .array import Array, normalize_key, write_timestamp
from .fragment_writer import FragmentWriter
from .write_buffers import FieldBuffer, column_buffer, field_buffer
from ..format.names import ARRAY_DIRS, META_DIR, SCHEMA_DIR



# --- create ----------------------------------------------------------------------------------


def create(path: str, schema: Schema, *, key=None, timestamp: int | None = None) -> None:
    """Create an empty array at ``path`` (refuses an existing array)."""
    if not isinstance(schema, Schema):
        raise TypeError("create() takes a tdbsql.Schema")
    raw_key = normalize_key(key)
    path = vfs.local_path(path)
    if os.path.isdir(os.path.join(path, SCHEMA_DIR)):
        raise TdbsqlError(f"{path!r} is already a TileDB array")
    if os.path.exists(path) and (not os.path.isdir(path) or os.listdir(path)):
        raise TdbsqlError(f"cannot create an array at {path!r}: the path exists and is not empty")
    t = write_timestamp(timestamp)
    enumerations = schema.format_enumerations()
    name = new_name(t, t, None)
    stored = schema.to_format(name, {k: e.path_name for k, e in enumerations.items()}, t)
    schema_bytes = write_array_schema(stored, raw_key)
    enum_bytes = {e.path_name: write_enumeration(e, raw_key) for e in enumerations.values()}
    os.makedirs(path, exist_ok=True)
    for folder in ARRAY_DIRS:
        os.makedirs(os.path.join(path, folder), exist_ok=True)
    os.makedirs(os.path.join(path, ENUMERATIONS_DIR), exist_ok=True)
    for file_name, data in enum_bytes.items():
        vfs.atomic_write(path, f"{ENUMERATIONS_DIR}/{file_name}", data)
    # The schema file last: until it exists the folder is not an array.
    vfs.atomic_write(path, f"{SCHEMA_DIR}/{name}", schema_bytes)


# --- input normalisation -------------------------------------------------------------------


def columns_of(data) -> dict[str, Any]:
    """Column name -> column of any supported input."""
    if isinstance(data, pa.RecordBatchReader):
        data = data.read_all()
    if isinstance(data, pa.RecordBatch):
        data = pa.Table.from_batches([data])
    if isinstance(data, pa.Table):
        return {name: data.column(name) for name in data.column_names}
    try:
        import pandas as pd

        if isinstance(data, pd.DataFrame):
            frame = data.reset_index() if _has_named_index(data) else data
            return {str(name): frame[name] for name in frame.columns}
    except ImportError:  # pandas is optional
        pass
    if isinstance(data, Mapping):
        return dict(data)
    raise TypeError(f"cannot write {type(data).__name__}: pass a pyarrow Table, a "
                    "RecordBatchReader, a pandas DataFrame or a dict of arrays")


def _has_named_index(frame) -> bool:
    return any(name is not None for name in frame.index.names)


def _buffers(schema: ArraySchema, columns: dict, labels: Mapping[str, pa.Array] | None = None,
             coords: tiling.Coords | None = None) -> dict[str, FieldBuffer]:
    """Every attribute and dimension converted; ``labels``: enumerated attribute -> labels;
    ``coords``: the dimensions already converted (``columns`` then holds the attributes)."""
    labels = labels or {}
    fields = {a.name: a for a in schema.attributes}
    dims = {d.name: d for d in schema.dimensions}
    given = {} if coords is None else dict(zip(dims, coords.buffers))
    names = list(fields) + list(dims)
    unknown = sorted(set(columns) - set(names))
    if unknown:
        raise DataError(f"column {unknown[0]!r} is not a dimension or attribute of the array "
                        f"(fields: {', '.join(names)})")
    twice = sorted(set(columns) & set(given))
    if twice:
        raise DataError(f"dimension {twice[0]!r} is given both as a column and converted")
    missing = [n for n in names if n not in columns and n not in given]
    if missing:
        raise DataError(f"missing column {missing[0]!r}: a write needs every "
                        f"{'dimension and ' if dims and missing[0] in dims else ''}attribute")
    out, count = {}, None
    for name in names:
        if name in given:
            buf = given[name]
        else:
            field = fields.get(name) or dims[name]
            buf = field_buffer(columns[name], name, field.datatype, field.cell_val_num,
                               getattr(field, "nullable", False), labels=labels.get(name))
        n = buf.cells(_cvn(schema, name))
        if count is not None and n != count:
            raise DataError(f"column {name!r} has {n} cells, the others {count}")
        count = n
        out[name] = buf
    return out


def enumeration_labels(array: Array) -> dict[str, pa.Array]:
    """Enumerated attribute name -> its labels (what a write may give instead of indices)."""
    from ..engine.fields import enumeration_labels as labels_of

    return {a.name: labels_of(array.enumerations[a.enumeration_name])
            for a in array.schema.attributes if a.enumeration_name}


# --- write -------------------------------------------------------------------------------------


def write(path: str, data, *, timestamp: int | None = None, key=None, subarray=None,
          commit: bool = True) -> str | None:
    """Write one fragment; returns its folder name (None when there are no cells: as in TileDB,
    an empty write writes nothing).  Sparse: any cell order.  Dense:
    ``subarray`` gives (lo, hi) per dimension and the cells come in the schema's cell order.
    Enumerated attributes take labels (dictionary or string columns) or their integer indices.
    ``commit=False`` leaves the ``.wrt`` to the caller (``fragment_writer.commit_fragment``)."""
    array = Array(path, None, key)
    schema = array.schema
    t = write_timestamp(timestamp)
    columns = columns_of(data)
    labels = enumeration_labels(array)
    if schema.dense:
        from .dense_writer import write_dense

        return write_dense(array.path, schema, columns, subarray, t, array.key, labels, commit)
    if subarray is not None:
        raise DataError("subarray is for dense arrays; sparse writes take coordinate columns")
    return _write_sparse(array.path, schema, _buffers(schema, columns, labels), (t, t),
                         array.key, commit=commit)


def write_fragment(path: str, schema_fmt: ArraySchema, table: pa.Table, *,
                   timestamp_range: tuple[int, int] | None = None, cell_timestamps=None, key=None,
                   ordered: bool = False, commit: bool = True,
                   coords: tiling.Coords | None = None) -> str | None:
    """The low-level sparse fragment writer (ingest, and callers with stored indices).

    ``table`` holds every dimension and attribute (enumerated attributes as their stored
    indices); ``cell_timestamps`` (uint64 per cell) writes the per-cell timestamps field
    ``t.tdb``; ``ordered`` says the cells are already in global order (checked);
    ``commit=False`` leaves the ``.wrt`` to the caller; ``coords``: the dimensions already
    converted (``tiling.Coords`` over ``schema_fmt``, e.g. ingest's sorted ones, whose string
    ranks the writer then reuses) -- ``table`` then holds the attributes only.
    """
    if not schema_fmt.sparse:
        raise DataError("write_fragment writes sparse fragments; use write() for dense arrays")
    raw_key = normalize_key(key)
    buffers = _buffers(schema_fmt, columns_of(table), coords=coords)
    if cell_timestamps is not None:
        stamps = np.ascontiguousarray(np.asarray(cell_timestamps, dtype=np.uint64))
        n = buffers[schema_fmt.dimensions[0].name].cells()
        if len(stamps) != n:
            raise DataError(f"cell_timestamps has {len(stamps)} values for {n} cells")
        buffers[TIMESTAMPS] = FieldBuffer(stamps)
    if timestamp_range is None:
        timestamp_range = (write_timestamp(None),) * 2
    else:
        timestamp_range = tuple(write_timestamp(t) for t in timestamp_range)
    return _write_sparse(vfs.local_path(path), schema_fmt, buffers, timestamp_range,
                         raw_key, ordered=ordered, commit=commit, coords=coords)


def _write_sparse(path, schema, buffers, timestamp_range, key, *, ordered=False,
                  commit=True, coords: tiling.Coords | None = None) -> str | None:
    """Sort (or check the order of) the cells, refuse duplicates, write and commit; None
    (nothing written) without cells.
    ``coords``: the ``Coords`` of ``buffers``' dimensions when the caller has them."""
    if coords is None:
        coords = tiling.Coords(schema, [buffers[d.name] for d in schema.dimensions])
    if coords.n == 0:  # as TileDB: an empty write commits no fragment (it cannot be read)
        return None
    tiling.check_in_domain(coords)
    if ordered:
        bad = tiling.first_out_of_order(coords)
        if bad >= 0:
            raise DataError(f"ordered=True but cell {bad} is not in global order")
    else:
        buffers, coords, order = sort_cells(schema, buffers, coords)
    if not schema.allows_duplicates:
        refuse_duplicates(coords, (lambda cell: cell) if ordered else
                          (lambda cell: int(order[cell])))
    writer = write_sorted(path, schema, buffers, coords, timestamp_range, key)
    if commit:
        writer.commit()
    return writer.name


def write_cells(array: Array, columns: Mapping[str, Any], timestamp: int) -> str | None:
    """Cells read back (engine Columns of every field, enumerated attributes as their stored
    indices) as one committed sparse fragment at ``timestamp``, their values as they are."""
    schema = array.schema
    fields = schema.fields_by_name()
    buffers = {name: column_buffer(fields[name], column) for name, column in columns.items()}
    return _write_sparse(array.path, schema, buffers, (timestamp, timestamp), array.key)


def sort_cells(schema: ArraySchema, buffers: dict[str, FieldBuffer], coords: tiling.Coords):
    """The cells in TileDB's global order.

    In: every field's cells by name (dimensions, attributes and per-cell fields such as
    ``__timestamps``) and ``coords`` over the same cells.  Out: ``(buffers, coords, order)``
    -- both permuted by ``order``, the stable sorting permutation (cells of equal coordinates
    keep their relative order)."""
    order = tiling.global_order(coords)
    buffers = {name: buf.take(order, _cvn(schema, name)) for name, buf in buffers.items()}
    return buffers, coords.take(order, [buffers[d.name] for d in schema.dimensions]), order


def write_sorted(path: str, schema: ArraySchema, buffers: dict[str, FieldBuffer],
                 coords: tiling.Coords, timestamp_range: tuple[int, int], key: bytes | None, *,
                 name: str | None = None,
                 processed_conditions: tuple[str, ...] = ()) -> FragmentWriter:
    """Write cells already in global order as one sparse fragment, not yet committed.

    In: every field's cells by name, ``coords`` over the same cells (their MBRs become the
    R-tree), the fragment's timestamp range, the key, optionally its folder ``name`` (default:
    a fresh one) and, for a fragment with delete metadata, the delete commits its ``dci``
    values index.  ``__timestamps`` among ``buffers`` makes a fragment with per-cell
    timestamps, ``__delete_timestamps`` (with ``__delete_condition_index``) one with delete
    metadata.  Tiles hold ``schema.capacity`` cells.  Out: the ``FragmentWriter``, whose
    ``commit()`` makes the fragment visible."""
    leaves, ned = tiling.mbrs(coords, schema.capacity)
    writer = FragmentWriter(path, schema, timestamp_range=timestamp_range, key=key, name=name)
    writer.write(buffers, dense=False, n_cells=coords.n, tile_size=schema.capacity,
                 non_empty_domain=ned, mbrs=leaves, has_timestamps=TIMESTAMPS in buffers,
                 has_delete_meta=DELETE_TIMESTAMPS in buffers,
                 processed_conditions=processed_conditions)
    return writer


def _cvn(schema: ArraySchema, name: str) -> int:
    """Values per fixed cell of field ``name`` (1 for dimensions, var and internal fields)."""
    for a in schema.attributes:
        if a.name == name:
            return 1 if a.cell_val_num == VAR_NUM else a.cell_val_num
    return 1


def refuse_duplicates(coords: tiling.Coords, row_of=None) -> None:
    """A DataError naming the first coordinate ``coords`` (cells in global order) hold twice
    and, with ``row_of(cell)``, the row that cell came from."""
    twice = tiling.duplicate_rows(coords)
    if not len(twice):
        return
    cell = int(twice[0])
    text = ", ".join(coordinate_text(d, buf, cell)
                     for d, buf in zip(coords.schema.dimensions, coords.buffers))
    row = "" if row_of is None else f" at row {row_of(cell)}"
    raise DataError(f"duplicate coordinates ({text}){row}: the array does not allow "
                    "duplicates")


def coordinate_text(dim, buf: FieldBuffer, idx: int) -> str:
    """Cell ``idx``'s coordinate on ``dim`` as a message shows it."""
    if dim.is_var:
        return repr(buf.cell_bytes(idx).decode("utf-8", "replace"))
    return repr(buf.values[idx].item())


# --- array metadata --------------------------------------------------------------------------


def put_metadata(path: str, key_: str, value, *, key=None, timestamp: int | None = None) -> None:
    """Set array metadata ``key_`` to ``value`` (as ``A.meta[key_] = value`` in TileDB-Py)."""
    from ..format.metadata import tiledb_py_put

    try:
        entries = tiledb_py_put(key_, value)
    except TypeError as exc:
        raise DataError(f"metadata {key_!r}: {exc}") from None
    _write_metadata(path, entries, key, timestamp)


def delete_metadata(path: str, key_: str, *, key=None, timestamp: int | None = None) -> None:
    """Delete array metadata ``key_`` (as ``del A.meta[key_]``)."""
    from ..format.metadata import tiledb_py_delete

    _write_metadata(path, tiledb_py_delete(key_), key, timestamp)


def _write_metadata(path: str, entries, key, timestamp) -> None:
    from ..format.metadata import encode_metadata_file
    from .group import is_group, refuse_key

    if is_group(path):  # a group's metadata folder is an array's
        refuse_key(key)
        root, raw_key = vfs.local_path(path), None
    else:
        array = Array(path, None, key)
        array.schema  # checks the key as opening does
        root, raw_key = array.path, array.key
    t = write_timestamp(timestamp)
    data = encode_metadata_file(entries, key=raw_key)
    vfs.atomic_write(root, f"{META_DIR}/{new_name(t, t, None)}", data)


# --- deletes -------------------------------------------------------------------------------------


def delete(path: str, where: str, *, timestamp: int | None = None, key=None):
    """Write a delete commit removing the cells matching the SQL condition ``where``; returns
    its ``DeleteCommit`` (the commit's name, the rows deleted)."""
    from .delete_writer import write_delete

    return write_delete(path, where, timestamp=timestamp, key=key)


__all__ = ["create", "delete", "delete_metadata", "put_metadata", "write", "write_fragment"]
