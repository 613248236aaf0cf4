"""Dense writes: a subarray's cells -> the space tiles TileDB's dense tiler writes.

In: the stored schema, the attribute columns (flat in the schema's cell order over the
subarray, or n-D numpy arrays indexed like the dimensions), the subarray ((lo, hi) per
dimension, inclusive), a timestamp and key.  Out: one dense fragment whose non-empty domain is
the subarray and whose tiles are every space tile the subarray meets, in tile order, each
holding all its cells in cell order.  Cells of those tiles outside the subarray are padded as
TileDB's ``DenseTiler`` pads them: zero bytes (validity 0) for fixed-size cells, one zero value
for var-sized cells; statistics cover only the written cells.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..datatypes import VAR_NUM, Layout
from ..errors import DataError
from ..format.array_schema import ArraySchema
from ..format.fragment_metadata import cells_per_dense_tile
from ..schema import raw_temporal
from .array import write_timestamp
from .fragment_writer import FragmentWriter
from .write_buffers import FieldBuffer, field_buffer, to_arrow


def write_dense(path: str, schema: ArraySchema, columns: dict, subarray, timestamp: int | None,
                key: bytes | None, labels: dict | None = None, commit: bool = True) -> str:
    """``labels``: enumerated attribute -> its labels (``writer.enumeration_labels``).  Without
    ``subarray``, the columns must hold every dimension and the rows must fill the rectangle
    their coordinates span, each cell once, in any order (``rectangle_of``).  ``commit=False``
    leaves the ``.wrt`` to the caller."""
    labels = labels or {}
    if subarray is None and all(d.name in columns for d in schema.dimensions):
        columns, subarray = rectangle_of(schema, columns)
    box = _subarray(schema, subarray)
    n_cells = int(np.prod([hi - lo + 1 for lo, hi in box]))
    order = "F" if schema.cell_order == Layout.COL_MAJOR else "C"
    buffers = {}
    for attr in schema.attributes:
        if attr.name not in columns:
            raise DataError(f"missing column {attr.name!r}: a dense write needs every attribute")
        column = _flatten(columns[attr.name], order, attr)
        buf = field_buffer(column, attr.name, attr.datatype, attr.cell_val_num, attr.nullable,
                           labels=labels.get(attr.name))
        count = buf.cells(attr.cell_val_num)
        if count != n_cells:
            raise DataError(f"column {attr.name!r} has {count} cells, the subarray "
                            f"{[list(b) for b in box]} has {n_cells}")
        buffers[attr.name] = buf
    extra = sorted(set(columns) - {a.name for a in schema.attributes})
    if extra:
        raise DataError(f"column {extra[0]!r} is not an attribute of the dense array")
    t = write_timestamp(timestamp)
    writer = write_box(path, schema, buffers, box, (t, t), key)
    if commit:
        writer.commit()
    return writer.name


def write_box(path: str, schema: ArraySchema, buffers: dict[str, FieldBuffer], box,
              timestamp_range: tuple[int, int], key: bytes | None, *,
              name: str | None = None) -> FragmentWriter:
    """Write one dense fragment over ``box``, not yet committed.

    In: every attribute's cells of the box ((lo, hi) per dimension) in the schema's cell order
    over it, the fragment's timestamp range, the key and optionally its folder ``name``
    (default: a fresh one).  Out: the ``FragmentWriter`` (``commit()`` makes the fragment
    visible); its tiles are every space tile the box meets, padded (``pad_dense``), and the
    box is its non-empty domain."""
    writer = start_box(path, schema, timestamp_range, key, name=name)
    with writer.discarded_on_error():
        append_box(writer, schema, buffers, box)
        writer.finish(box)
    return writer


def start_box(path: str, schema: ArraySchema, timestamp_range: tuple[int, int],
              key: bytes | None, *, name: str | None = None) -> FragmentWriter:
    """A dense fragment started, to be written box after box (``append_box``), then
    ``finish``-ed with the union of the boxes as its non-empty domain."""
    writer = FragmentWriter(path, schema, timestamp_range=timestamp_range, key=key, name=name)
    writer.start(dense=True, tile_size=cells_per_dense_tile(schema))
    return writer


def append_box(writer: FragmentWriter, schema: ArraySchema, buffers: dict[str, FieldBuffer],
               box, fill: bool = False) -> None:
    """The space tiles ``box`` meets, padded (``pad_dense``), onto ``writer``.  Boxes
    appended one after another must meet successive runs of the fragment's tiles in tile
    order: bands of whole tiles along the dimension the tile order varies slowest."""
    positions = tile_positions(schema, box)
    tiled = {a.name: pad_dense(buffers[a.name], positions, a, fill) for a in schema.attributes}
    writer.append(tiled, len(positions), written_mask=(positions >= 0).astype(np.uint8))


def rectangle_of(schema: ArraySchema, columns: dict) -> tuple[dict, tuple]:
    """Cells given with their coordinates -> (attribute columns in the schema's cell order over
    the rectangle the coordinates span, that rectangle).  The rows must cover it exactly once."""
    dims = schema.dimensions
    coords = [_coordinates(columns[d.name], d) for d in dims]
    lows = [c.min().item() if len(c) else 0 for c in coords]
    highs = [c.max().item() if len(c) else -1 for c in coords]
    shape = [h - lo + 1 for lo, h in zip(lows, highs)]
    volume = int(np.prod(shape, dtype=object))
    n = len(coords[0])
    order = "F" if schema.cell_order == Layout.COL_MAJOR else "C"
    # offsets from the low corner, in the coordinates' own width read unsigned (no overflow
    # near its limits; an INT8 span of 200 wraps to -56 signed)
    offsets = tuple((c - c.dtype.type(lo)).view(f"u{c.dtype.itemsize}").astype(np.int64)
                    for c, lo in zip(coords, lows))
    linear = np.ravel_multi_index(offsets, shape, order=order) if volume == n and n else None
    if linear is None or len(np.unique(linear)) != volume:
        spans = ", ".join(f"{d.name} {lo}..{hi}" for d, lo, hi in zip(dims, lows, highs))
        raise DataError(f"{n:,} rows do not fill the rectangle {spans} ({volume:,} cells) "
                        "exactly once, as a dense write without subarray needs")
    rows = np.argsort(linear, kind="stable")
    attrs = {name: to_arrow(column, name).take(rows) for name, column in columns.items()
             if name not in {d.name for d in dims}}
    return attrs, tuple(zip(lows, highs))


def _coordinates(column, dim) -> np.ndarray:
    """A dimension column as its stored coordinates (dates and times as raw counts in the
    dimension's unit), converted exactly as a sparse write converts them."""
    return field_buffer(column, dim.name, dim.datatype, 1, False).values


def _subarray(schema: ArraySchema, subarray) -> tuple[tuple[int, int], ...]:
    if subarray is None:
        raise DataError("a dense write needs subarray=((lo, hi), ...) per dimension, or "
                        "every dimension as a column")
    if len(subarray) != len(schema.dimensions):
        raise DataError(f"subarray has {len(subarray)} ranges for {len(schema.dimensions)} dimensions")
    box = []
    for dim, rng, current in zip(schema.dimensions, subarray, schema.current_bounds()):
        lo, hi = _bounds(dim, rng)
        dlo, dhi = dim.domain
        if lo > hi:
            raise DataError(f"dimension {dim.name!r}: subarray range [{lo}, {hi}] is empty")
        if lo < dlo or hi > dhi:
            raise DataError(f"dimension {dim.name!r}: subarray [{lo}, {hi}] is outside the "
                            f"domain [{dlo}, {dhi}]")
        if current is not None and (lo < current[0] or hi > current[1]):
            raise DataError(f"dimension {dim.name!r}: subarray [{lo}, {hi}] is outside the "
                            f"current domain [{current[0]}, {current[1]}]")
        box.append((lo, hi))
    return tuple(box)


def _bounds(dim, rng) -> tuple[int, int]:
    """A subarray's (lo, hi) for ``dim`` as whole raw coordinates (datetimes in its unit)."""
    try:
        lo, hi = rng
        bounds = tuple(raw_temporal(v, dim.info.unit) if isinstance(v, np.datetime64 | np.timedelta64)
                       else v for v in (lo, hi))
        if any(isinstance(v, bool | str | bytes) or int(v) != v for v in bounds):
            raise ValueError
    except (TypeError, ValueError):
        raise DataError(f"dimension {dim.name!r}: subarray range {rng!r} is not a (lo, hi) pair "
                        "of whole coordinates") from None
    return int(bounds[0]), int(bounds[1])


def _flatten(column, order: str, attr):
    if isinstance(column, np.ndarray) and column.ndim > 1:
        cvn = attr.cell_val_num
        if cvn not in (1, VAR_NUM) and column.shape[-1] == cvn and column.dtype.kind not in "SUO":
            cells = column.reshape(-1, cvn) if order == "C" else np.moveaxis(
                column, -1, 0).reshape(cvn, -1, order="F").T
            return np.ascontiguousarray(cells)
        return column.reshape(-1, order=order)
    return column


def tile_positions(schema: ArraySchema, box) -> np.ndarray:
    """For every cell of every tile the subarray meets (tile order, then cell order): the
    index of the written cell (in the subarray's cell order), or -1 for padding."""
    dims = schema.dimensions
    extents = [int(d.tile_extent) for d in dims]
    # the box relative to the domain's low corner, in Python ints (exact near type limits)
    rel = [(lo - int(d.domain[0]), hi - int(d.domain[0])) for (lo, hi), d in zip(box, dims)]
    tile_ranges = [range(lo // ext, hi // ext + 1) for (lo, hi), ext in zip(rel, extents)]
    col_tiles = schema.tile_order == Layout.COL_MAJOR
    col_cells = schema.cell_order == Layout.COL_MAJOR
    shape = [hi - lo + 1 for lo, hi in box]
    strides = _strides(shape, col_cells)
    out = []
    ordered = tile_ranges[::-1] if col_tiles else tile_ranges
    for tile in itertools.product(*ordered):
        tile = tile[::-1] if col_tiles else tile
        index = None
        valid = None
        for dim_idx, tile_idx in enumerate(tile):
            # each cell of the tile along this dimension, as its offset in the box
            within = tile_idx * extents[dim_idx] - rel[dim_idx][0] + np.arange(extents[dim_idx])
            inside = (within >= 0) & (within < shape[dim_idx])
            part = within * strides[dim_idx]
            shape_nd = [1] * len(dims)
            shape_nd[dim_idx] = extents[dim_idx]
            part, inside = part.reshape(shape_nd), inside.reshape(shape_nd)
            index = part if index is None else index + part
            valid = inside if valid is None else valid & inside
        positions = np.where(valid, index, -1)
        out.append(positions.reshape(-1, order="F" if col_cells else "C"))
    return np.concatenate(out).astype(np.int64)


def _strides(shape: list[int], col_major: bool) -> list[int]:
    strides = [1] * len(shape)
    dims = range(len(shape)) if col_major else reversed(range(len(shape)))
    step = 1
    for dim_idx in dims:
        strides[dim_idx] = step
        step *= shape[dim_idx]
    return strides


def pad_dense(buf: FieldBuffer, positions: np.ndarray, attr, fill: bool = False) -> FieldBuffer:
    """The tiles' cells (``positions`` from ``tile_positions``): written cells from ``buf``,
    padding elsewhere -- zero bytes, or with ``fill`` the attribute's fill value (and fill
    validity), as TileDB's consolidation pads the tiles it writes."""
    cvn = 1 if attr.cell_val_num == VAR_NUM else attr.cell_val_num
    n = buf.cells(cvn)
    take = np.where(positions >= 0, positions, n)  # index n is the padding cell
    pad_valid = np.uint8(fill and attr.fill_value_validity)
    validity = None if buf.validity is None else np.append(buf.validity, pad_valid)
    if buf.offsets is not None:
        pad = np.frombuffer(attr.fill_value, np.uint8) if fill else \
            np.zeros(attr.info.size, dtype=np.uint8)
        values = np.concatenate([buf.values.view(np.uint8), pad])
        offsets = np.append(buf.offsets, buf.offsets[-1] + len(pad))
        return FieldBuffer(values, offsets, validity).take(take, 1)
    pad = np.frombuffer(attr.fill_value, buf.values.dtype) if fill else \
        np.zeros(cvn, dtype=buf.values.dtype)
    values = np.concatenate([buf.values, pad])
    return FieldBuffer(values, None, validity).take(take, cvn)
