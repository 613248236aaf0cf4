"""TPC-H data: generate with tpchgen-cli, normalise to plain Arrow, store as TileDB arrays.

In: a scale factor and a directory.  Out: ``TpchData`` with the normalised Arrow table of every
TPC-H table (what DuckDB gets) and the path of the sparse TileDB array built from it with
``tiledb`` (what tdbsql gets).

Normalisation (``normalize``) is the one both sides share: decimals become float64 computed as
``unscaled_int / 100.0`` (pyarrow's decimal -> float cast is not correctly rounded, which moves
rows across predicates such as ``l_discount BETWEEN 0.05 AND 0.07``), dates stay date32,
string_view becomes string, everything else keeps its type.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

TABLES = ("region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem")

# Dimensions of each table's sparse array (the rest are attributes).
DIMENSIONS = {
    "lineitem": ("l_shipdate", "l_orderkey"),
    "orders": ("o_orderkey",),
    "customer": ("c_custkey",),
    "part": ("p_partkey",),
    "partsupp": ("ps_partkey", "ps_suppkey"),
    "supplier": ("s_suppkey",),
    "nation": ("n_nationkey",),
    "region": ("r_regionkey",),
}

# Free-text columns are stored as UTF-8, codes and names as ASCII: both string types get read.
UTF8_COLUMNS = frozenset({
    "l_comment", "o_comment", "c_comment", "p_comment", "ps_comment", "s_comment", "n_comment",
    "r_comment", "c_address", "s_address",
})

DATE_DOMAIN = (np.datetime64("1990-01-01", "D"), np.datetime64("2000-12-31", "D"))
KEY_DOMAIN_HIGH = 2**40  # keys of any scale factor up to 10^4 fit


@dataclass(frozen=True)
class Layout:
    """Physical choices for one sparse array: tile extents per dimension and data-tile capacity."""

    capacity: int = 10_000
    date_tile: int = 7  # days per space tile along a DATETIME_DAY dimension
    key_tile: int = KEY_DOMAIN_HIGH  # one space tile spans all keys: order is (date, key)
    zstd_level: int = 3


@dataclass(frozen=True)
class TpchData:
    tables: dict[str, pa.Table]
    arrays: dict[str, str]
    parquet: dict[str, str] = field(default_factory=dict)


# -- generation ----------------------------------------------------------------------------------


def tpchgen_binary() -> str:
    """The tpchgen-cli executable next to this interpreter, else the one on PATH."""
    local = os.path.join(os.path.dirname(sys.executable), "tpchgen-cli")
    if os.path.exists(local):
        return local
    found = shutil.which("tpchgen-cli")
    if found is None:
        raise FileNotFoundError("tpchgen-cli is not installed (pip install tpchgen-cli)")
    return found


def generate_parquet(scale_factor: float, out_dir: str, tables=TABLES) -> dict[str, str]:
    """Run tpchgen-cli once per missing table; table name -> Parquet path."""
    os.makedirs(out_dir, exist_ok=True)
    paths = {name: os.path.join(out_dir, f"{name}.parquet") for name in tables}
    missing = [name for name, path in paths.items() if not os.path.exists(path)]
    if missing:
        subprocess.run([tpchgen_binary(), "parquet", "-s", str(scale_factor), "-o", out_dir,
                        "--tables", ",".join(missing)], check=True, capture_output=True)
    return paths


# -- normalisation -------------------------------------------------------------------------------


def decimal_to_float(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """decimal128(p, s) -> float64 as unscaled_int / 10**s (correctly rounded division)."""
    scale = 10.0 ** column.type.scale
    chunks = []
    for chunk in column.chunks:
        words = np.frombuffer(chunk.buffers()[1], dtype="<i8").reshape(-1, 2)
        unscaled = words[chunk.offset:chunk.offset + len(chunk), 0]  # values fit in the low word
        chunks.append(pa.array(unscaled / scale, mask=_null_mask(chunk)))
    return pa.chunked_array(chunks, pa.float64())


def _null_mask(chunk: pa.Array):
    if chunk.null_count == 0:
        return None
    return np.asarray(chunk.is_null().to_numpy(zero_copy_only=False))


def normalize(table: pa.Table) -> pa.Table:
    """The shared, engine-neutral form of a TPC-H table (see the module docstring)."""
    columns = []
    for column in table.columns:
        if pa.types.is_decimal(column.type):
            column = decimal_to_float(column)
        elif pa.types.is_string_view(column.type) or pa.types.is_large_string(column.type):
            column = column.cast(pa.string())
        columns.append(column)
    return pa.Table.from_arrays(columns, names=table.column_names).combine_chunks()


def load_tables(parquet: dict[str, str]) -> dict[str, pa.Table]:
    return {name: normalize(pq.read_table(path)) for name, path in parquet.items()}


# -- TileDB arrays (written with tiledb: the test oracle) ----------------------------------------


def _dimension(tiledb, name: str, arrow_type: pa.DataType, layout: Layout, zstd):
    if pa.types.is_date32(arrow_type):
        return tiledb.Dim(name, domain=DATE_DOMAIN, tile=np.timedelta64(layout.date_tile, "D"),
                          dtype="datetime64[D]", filters=zstd)
    return tiledb.Dim(name, domain=(0, KEY_DOMAIN_HIGH - 1), tile=layout.key_tile,
                      dtype=np.int64, filters=zstd)


def _attribute(tiledb, name: str, arrow_type: pa.DataType, zstd):
    if pa.types.is_string(arrow_type):
        dtype = str if name in UTF8_COLUMNS else "ascii"
        return tiledb.Attr(name, dtype=dtype, var=True, filters=zstd)
    if pa.types.is_date32(arrow_type):
        return tiledb.Attr(name, dtype="datetime64[D]", filters=zstd)
    return tiledb.Attr(name, dtype=arrow_type.to_pandas_dtype(), filters=zstd)


def array_schema(tiledb, table: pa.Table, dims, layout: Layout):
    zstd = tiledb.FilterList([tiledb.ZstdFilter(level=layout.zstd_level)])
    schema = table.schema
    domain = tiledb.Domain(*[_dimension(tiledb, d, schema.field(d).type, layout, zstd)
                             for d in dims])
    attrs = [_attribute(tiledb, f.name, f.type, zstd) for f in schema if f.name not in dims]
    return tiledb.ArraySchema(domain=domain, attrs=attrs, sparse=True, capacity=layout.capacity,
                              allows_duplicates=True)


def numpy_column(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """A numpy array tiledb-py can write: fixed-width bytes for strings (no Python objects),
    datetime64[D] for dates, the plain dtype otherwise."""
    arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if pa.types.is_string(arr.type):
        return _fixed_width_bytes(arr)
    if pa.types.is_date32(arr.type):
        return np.asarray(arr.cast(pa.int32()).to_numpy(), dtype=np.int64).astype("datetime64[D]")
    return arr.to_numpy(zero_copy_only=False)


def _fixed_width_bytes(arr: pa.StringArray) -> np.ndarray:
    """Arrow strings -> numpy 'S<w>' (tiledb-py stores each without its NUL padding)."""
    offsets = np.frombuffer(arr.buffers()[1], dtype="<i4")[arr.offset:arr.offset + len(arr) + 1]
    values = arr.buffers()[2]
    data = np.frombuffer(values, dtype=np.uint8) if values is not None else np.zeros(0, np.uint8)
    lengths = np.diff(offsets).astype(np.int64)
    width = max(int(lengths.max(initial=0)), 1)
    out = np.zeros((len(arr), width), dtype=np.uint8)
    rows = np.repeat(np.arange(len(arr)), lengths)
    cols = np.arange(int(lengths.sum())) - np.repeat(offsets[:-1] - offsets[0], lengths)
    out[rows, cols] = data[offsets[0]:offsets[-1]]
    return out.view(f"S{width}").reshape(len(arr))


def build_array(path: str, table: pa.Table, dims, layout: Layout = Layout(),
                builder: str = "tiledb") -> str:
    """Create (with ``tiledb``) and write the sparse array for ``table`` at ``path`` in one
    fragment, written by ``tiledb`` or, with ``builder="tdbsql"``, by tdbsql's own writer."""
    import tiledb

    tiledb.Array.create(path, array_schema(tiledb, table, dims, layout))
    if builder == "tdbsql":
        from tdbsql.storage.writer import write

        write(path, table)
        return path
    coords = tuple(numpy_column(table.column(d)) for d in dims)
    values = {n: numpy_column(table.column(n)) for n in table.column_names if n not in dims}
    with tiledb.open(path, "w") as array:
        array[coords] = values
    return path


def read_array(path: str, column_names) -> pa.Table:
    """Every cell of the array at ``path`` read back with ``tiledb``, as Arrow, columns in
    ``column_names`` order (rows in TileDB's order, not the generator's)."""
    import tiledb

    with tiledb.open(path) as array:
        cells = array.query(order="G")[:]
    columns = []
    for name in column_names:
        values = cells[name]
        if values.dtype == object:
            columns.append(pa.array([_decode(v) for v in values], pa.string()))
        else:
            columns.append(pa.array(values))
    return pa.Table.from_arrays(columns, names=list(column_names))


def _decode(value) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else value


def build_all(scale_factor: float, root: str, layouts: dict[str, Layout] | None = None,
              tables=TABLES, builder: str = "tiledb") -> TpchData:
    """Parquet under ``root/parquet``, arrays under ``root/arrays``; reuses what exists."""
    parquet = generate_parquet(scale_factor, os.path.join(root, "parquet"), tables)
    loaded = load_tables(parquet)
    arrays = {}
    for name, table in loaded.items():
        path = os.path.join(root, "arrays", name)
        if not os.path.exists(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            build_array(path, table, DIMENSIONS[name], (layouts or {}).get(name, Layout()),
                        builder)
        arrays[name] = path
    return TpchData(tables=loaded, arrays=arrays, parquet=parquet)
