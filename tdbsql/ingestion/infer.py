"""Arrow source schema -> TileDB array schema, and source batches -> the columns a fragment takes.

In: a source's Arrow schema, the dimension choice (names, optional domains and tile extents),
per-column statistics (min/max/null count from file footers or one streaming pass).
Out: a ``Plan`` (one ``ColumnPlan`` per column: the TileDB datatype, cell_val_num, nullability,
the Arrow type the writer takes, which is the type the reader returns) that becomes a
``tdbsql.schema.Schema``, and ``convert_table`` which casts each batch to those types.

Type choices (Arrow -> TileDB):

- integers, float32/64, bool: the same; float16 -> FLOAT32
- string / large_string / string_view -> STRING_UTF8 (var); as a dimension STRING_ASCII (var)
- binary / large_binary / binary_view / fixed_size_binary -> BLOB (var)
- date32 -> DATETIME_DAY; date64 -> DATETIME_MS; timestamp[unit] -> DATETIME_<unit>;
  time32/time64 -> TIME_<unit>
- timestamp[unit, tz] -> DATETIME_<unit> holding the UTC instants (Arrow's stored values; the
  zone name is not kept): they read back as TIMESTAMPs in UTC, what DuckDB's
  ``timezone('UTC', ts)`` gives for the TIMESTAMPTZ it reads from the same source
- duration[unit] -> INT64, the count of units, with an ``IngestWarning`` naming the unit:
  TileDB has no duration type, and its TIME_* types are times of day to tdbsql's reader (an
  INTERVAL of a day or more, or negative, is none), so no TileDB type reads back as DuckDB's
  INTERVAL.  (A Parquet file holds a duration as a plain INT64 to DuckDB too.)
- decimal -> FLOAT64, correctly rounded (TileDB has no decimal type)
- dictionary -> the type of its values (decoded)
- list<number> -> var-sized numeric cells; fixed_size_list<number>[n] -> cell_val_num n
- null, struct, map, union, lists of strings: refused, naming the column

An attribute is nullable when the source column holds NULLs (statistics say so) or, when the
statistics are unknown, when the Arrow field is nullable.  Dimensions may not hold NULLs.
Default filters: Zstd on every attribute, dimension and offsets tile.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..datatypes import VAR_NUM, Datatype, arrow_type, type_info
from ..errors import DataError, ProgrammingError
from .. import schema as sch
from .sources import ColumnStats

ROW_DIM = "rowid"  # the dimension of a source ingested without --dims (row number from 0)
ROW_DIM_DOMAIN = (0, 2**62 - 1)  # room to append: rows continue after the non-empty domain
DEFAULT_ZSTD_LEVEL = 3
DEFAULT_DENSE_TILE = 100_000  # cells per space tile of a dense row dimension

_DIM_KINDS = ("int", "float", "datetime", "time", "string")


class IngestError(DataError):
    """The source cannot become (or does not match) the array: names the column and problem."""


class IngestWarning(UserWarning):
    """A source column stored with less than its Arrow type says (names the column)."""


_UNIT_NAMES = {"s": "seconds", "ms": "milliseconds", "us": "microseconds", "ns": "nanoseconds"}


@dataclass(frozen=True)
class ColumnPlan:
    """One source column and what it becomes."""

    name: str
    source_type: pa.DataType
    datatype: Datatype
    cell_val_num: int  # 1, n, or VAR_NUM
    nullable: bool = False

    @property
    def target_type(self) -> pa.DataType:
        """The Arrow type the writer takes (= what the reader returns for the field)."""
        return arrow_type(self.datatype, self.cell_val_num)

    @property
    def var(self) -> bool:
        return self.cell_val_num == VAR_NUM


@dataclass(frozen=True)
class DimPlan:
    """A dimension: a source column (or the generated row index), its domain and tile extent."""

    column: ColumnPlan
    domain: tuple | None  # (lo, hi) in the numpy form of the type; None for string dims
    tile: object | None


@dataclass(frozen=True)
class Plan:
    dims: tuple[DimPlan, ...]
    attrs: tuple[ColumnPlan, ...]
    sparse: bool
    row_dim: bool  # True: the dimension is the generated row index

    @property
    def dim_names(self) -> tuple[str, ...]:
        return tuple(d.column.name for d in self.dims)

    @property
    def source_columns(self) -> list[str]:
        names = [] if self.row_dim else list(self.dim_names)
        return names + [a.name for a in self.attrs]


# --- types --------------------------------------------------------------------------------


def column_plan(field: pa.Field, *, as_dim: bool = False, nullable: bool = False) -> ColumnPlan:
    """What ``field`` becomes (raises IngestError naming the column for types TileDB lacks)."""
    datatype, cell_val_num = _map_type(field.name, field.type, as_dim)
    return ColumnPlan(field.name, field.type, datatype, cell_val_num, nullable)


def warn_durations(schema: pa.Schema) -> None:
    """An ``IngestWarning`` for each duration column of a source: stored as a count."""
    for field in schema:
        t = field.type.value_type if pa.types.is_dictionary(field.type) else field.type
        if pa.types.is_duration(t):
            warnings.warn(f"column {field.name!r} is a {t}: TileDB has no duration type (its "
                          f"TIME_* types are times of day), so it is stored as an INT64 count "
                          f"of {_UNIT_NAMES[t.unit]}", IngestWarning, stacklevel=3)


def _map_type(name: str, t: pa.DataType, as_dim: bool) -> tuple[Datatype, int]:
    """(TileDB datatype, cell_val_num) of an Arrow type (see the module docstring)."""
    if pa.types.is_dictionary(t):
        return _map_type(name, t.value_type, as_dim)
    numeric = _numeric_datatype(t)
    if numeric is not None:
        return numeric, 1
    if pa.types.is_float16(t):
        return Datatype.FLOAT32, 1
    if pa.types.is_decimal(t):
        return Datatype.FLOAT64, 1
    if _is_string(t):
        return Datatype.STRING_ASCII if as_dim else Datatype.STRING_UTF8, VAR_NUM
    if _is_binary(t):
        return Datatype.BLOB, VAR_NUM
    if pa.types.is_date32(t):
        return Datatype.DATETIME_DAY, 1
    if pa.types.is_date64(t):
        return Datatype.DATETIME_MS, 1
    if pa.types.is_timestamp(t):
        return sch.to_datatype(np.dtype(f"datetime64[{t.unit}]")), 1
    if pa.types.is_time32(t) or pa.types.is_time64(t):
        return sch.to_datatype(np.dtype(f"timedelta64[{t.unit}]")), 1
    if pa.types.is_duration(t):
        return Datatype.INT64, 1  # see warn_durations
    if not as_dim and (pa.types.is_list(t) or pa.types.is_large_list(t)
                       or pa.types.is_fixed_size_list(t)):
        return _map_list(name, t)
    what = "a dimension" if as_dim else "an attribute"
    if pa.types.is_null(t):
        raise IngestError(f"column {name!r} holds only NULLs, so its type is unknown; "
                          "drop it or give the source a typed column")
    raise IngestError(f"column {name!r} has type {t}, which cannot be {what} of a TileDB array")


def _map_list(name: str, t: pa.DataType) -> tuple[Datatype, int]:
    value = _numeric_datatype(t.value_type)
    if value is None or value == Datatype.BOOL:
        raise IngestError(f"column {name!r} has type {t}: TileDB multi-value cells must hold "
                          "numbers")
    return value, t.list_size if pa.types.is_fixed_size_list(t) else VAR_NUM


def _numeric_datatype(t: pa.DataType) -> Datatype | None:
    """INT8..UINT64, FLOAT32/64 or BOOL for the Arrow type of the same name, else None."""
    if (pa.types.is_integer(t) or pa.types.is_boolean(t) or pa.types.is_float32(t)
            or pa.types.is_float64(t)):
        return sch.to_datatype(np.dtype(t.to_pandas_dtype()))
    return None


def _is_string(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)


def _is_binary(t: pa.DataType) -> bool:
    return (pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t)
            or pa.types.is_fixed_size_binary(t))


# --- the plan -----------------------------------------------------------------------------


def normalize_dims(dims) -> tuple[list[str], dict, dict]:
    """``dims`` as names, ``{name: (lo, hi) | None}``, or a "a,b" string -> (names, domains, tiles).

    ``tdbsql.schema.Dim`` objects are accepted too: their domain and tile are taken as given.
    """
    if dims is None:
        return [], {}, {}
    if isinstance(dims, str):
        dims = [d.strip() for d in dims.split(",") if d.strip()]
    if isinstance(dims, dict):
        names = list(dims)
        return names, {n: tuple(v) for n, v in dims.items() if v is not None}, {}
    names, domains, tiles = [], {}, {}
    for d in dims:
        if isinstance(d, str):
            names.append(d)
        else:  # a tdbsql.schema.Dim
            names.append(d.name)
            if getattr(d, "domain", None) is not None:
                domains[d.name] = tuple(d.domain)
            if getattr(d, "tile", None) is not None:
                tiles[d.name] = d.tile
    if len(set(names)) != len(names):
        raise ProgrammingError(f"a dimension is named twice in {names}")
    if not names:
        raise ProgrammingError("dims is empty: name at least one column")
    return names, domains, tiles


def normalize_tiles(tile, names: list[str]) -> dict:
    """``tile`` as one number (every dim), a sequence (per dim, in order), or a dict."""
    if tile is None:
        return {}
    if isinstance(tile, dict):
        return dict(tile)
    if isinstance(tile, int | float):
        return {n: tile for n in names}
    tile = list(tile)
    if len(tile) != len(names):
        raise ProgrammingError(f"{len(tile)} tile extents for {len(names)} dimensions {names}")
    return dict(zip(names, tile))


def build_plan(schema: pa.Schema, dims, *, sparse: bool, tile=None, stats=None) -> Plan:
    """The array a source becomes.  ``stats`` maps column -> ColumnStats (domains, nulls)."""
    stats = stats or {}
    names, domains, tiles = normalize_dims(dims)
    tiles.update(normalize_tiles(tile, names or [ROW_DIM]))
    for name in names:
        if name not in schema.names:
            raise IngestError(f"dimension column {name!r} is not in the source "
                              f"(columns: {', '.join(schema.names)})")
    if len(set(schema.names)) != len(schema.names):
        dup = next(n for n in schema.names if schema.names.count(n) > 1)
        raise IngestError(f"the source has two columns named {dup!r}")
    if not names:
        dim_plans = (_row_dim(sparse, tiles.get(ROW_DIM)),)
        if ROW_DIM in schema.names:
            raise IngestError(f"the source has a column named {ROW_DIM!r}; pass dims=")
    else:
        dim_plans = tuple(_dim_plan(schema.field(n), stats.get(n), domains.get(n), tiles.get(n),
                                    sparse) for n in names)
    attrs = tuple(_attr_plan(f, stats.get(f.name)) for f in schema if f.name not in names)
    if not attrs and not sparse:
        raise IngestError("a dense array needs at least one attribute column")
    return Plan(dim_plans, attrs, sparse, not names)


def _row_dim(sparse: bool, tile) -> DimPlan:
    column = ColumnPlan(ROW_DIM, pa.uint64(), Datatype.UINT64, 1)
    if tile is None and not sparse:
        tile = DEFAULT_DENSE_TILE
    return DimPlan(column, ROW_DIM_DOMAIN, tile)


def _attr_plan(field: pa.Field, stats: ColumnStats | None) -> ColumnPlan:
    nullable = field.nullable if stats is None else stats.null_count > 0
    return column_plan(field, nullable=nullable)


def _dim_plan(field: pa.Field, stats: ColumnStats | None, domain, tile, sparse: bool) -> DimPlan:
    column = column_plan(field, as_dim=True)
    kind = _kind(column.datatype)
    if kind not in _DIM_KINDS:
        raise IngestError(f"column {field.name!r} ({field.type}) cannot be a dimension: "
                          "dimensions are numbers, dates/times or strings")
    if not sparse and kind not in ("int", "datetime", "time"):
        raise IngestError(f"dense dimension {field.name!r} must hold integers or dates "
                          f"(it holds {field.type}); use --sparse")
    if stats is not None and stats.null_count:
        raise IngestError(f"dimension column {field.name!r} holds {stats.null_count} NULL "
                          "value(s); dimensions cannot be NULL")
    if kind == "string":
        if domain is not None or tile is not None:
            raise IngestError(f"string dimension {field.name!r} takes no domain or tile extent")
        return DimPlan(column, None, None)
    if domain is None:
        if stats is None or stats.min is None:
            raise IngestError(f"dimension column {field.name!r} is empty: give its domain")
        domain = (stats_value(stats.min, column), stats_value(stats.max, column))
    else:
        domain = (given_value(domain[0], column), given_value(domain[1], column))
    _check_domain(field.name, domain, kind)
    if tile is None and not sparse:
        tile = _default_dense_tile(domain, column)
    return DimPlan(column, domain, tile)


def _kind(datatype: Datatype) -> str:
    return type_info(datatype).kind


def _check_domain(name: str, domain: tuple, kind: str) -> None:
    lo, hi = domain
    if kind == "float" and not (math.isfinite(lo) and math.isfinite(hi)):
        raise IngestError(f"dimension column {name!r} holds NaN or infinite values")
    if hi < lo:
        raise IngestError(f"dimension {name!r}: domain low {lo} is above high {hi}")


def _default_dense_tile(domain, column: ColumnPlan) -> int:
    """The whole domain up to DEFAULT_DENSE_TILE cells, split to fit a narrow type (INT8)."""
    lo, hi = (int(np.asarray(v).astype(np.int64)) for v in domain)
    if hi - lo + 1 > DEFAULT_DENSE_TILE:
        return DEFAULT_DENSE_TILE
    return sch.whole_domain_tile(lo, hi, type_info(column.datatype).numpy)


def storage_dtype(column: ColumnPlan) -> np.dtype:
    """The numpy dtype of one value as TileDB stores it (datetimes as datetime64[unit])."""
    info = type_info(column.datatype)
    if info.kind == "datetime":
        return np.dtype(f"datetime64[{info.unit}]")
    return info.numpy


def stats_value(value, column: ColumnPlan):
    """A footer/pass statistic (Python value of the source type) -> the dim's numpy value."""
    if isinstance(value, pa.Scalar):
        array = pa.array([value.as_py()], type=value.type)
    else:
        array = pa.array([value], type=column.source_type
                         if not pa.types.is_dictionary(column.source_type)
                         else column.source_type.value_type)
    converted = convert_array(array, column)
    return _numpy_scalar(converted, column)


def given_value(value, column: ColumnPlan):
    """A user-given domain bound (number, date string, datetime) -> the dim's numpy value."""
    dtype = storage_dtype(column)
    try:
        if dtype.kind == "M":
            return np.datetime64(value, np.datetime_data(dtype)[0])
        if isinstance(value, str):
            value = float(value) if dtype.kind == "f" else int(value)
        result = dtype.type(value)
    except (ValueError, TypeError, OverflowError) as exc:
        raise IngestError(f"dimension {column.name!r}: bad domain bound {value!r} ({exc})") from None
    if dtype.kind in "iu" and result != value:
        raise IngestError(f"dimension {column.name!r}: domain bound {value!r} does not fit "
                          f"{dtype}")
    return result


def _numpy_scalar(array: pa.Array, column: ColumnPlan):
    dtype = storage_dtype(column)
    narrow = pa.types.is_date32(array.type) or pa.types.is_time32(array.type)
    if dtype.kind == "M" or pa.types.is_time32(array.type) or pa.types.is_time64(array.type):
        count = int(array.cast(pa.int32() if narrow else pa.int64())[0].as_py())
        return np.datetime64(count, np.datetime_data(dtype)[0]) if dtype.kind == "M" else np.int64(count)
    return dtype.type(array[0].as_py())


# --- batches ------------------------------------------------------------------------------


def convert_array(array, column: ColumnPlan):
    """Cast one source column (Array or ChunkedArray) to ``column.target_type``."""
    if isinstance(array, pa.ChunkedArray):
        return pa.chunked_array([convert_array(c, column) for c in array.chunks],
                                type=column.target_type)
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    if pa.types.is_decimal(array.type):
        return decimal_to_float64(array)
    if array.type == column.target_type:
        return array
    try:  # a zoned timestamp casts to its UTC values; a duration to its count
        return array.cast(column.target_type)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise IngestError(f"column {column.name!r}: cannot convert {array.type} to "
                          f"{column.target_type} ({exc})") from None


def decimal_to_float64(array: pa.Array) -> pa.Array:
    """Decimals to the nearest float64 (pyarrow's own cast can be off by one ulp).

    Up to 15 digits the unscaled integer is exact in a float64 and one IEEE division by the
    exact power of ten rounds correctly; wider decimals go through pyarrow's cast.
    """
    t = array.type
    if not pa.types.is_decimal128(t) or t.precision > 15 or t.scale < 0 or t.scale > 22:
        return array.cast(pa.float64())
    words = np.frombuffer(array.buffers()[1], dtype=np.int64)
    unscaled = words[2 * array.offset: 2 * (array.offset + len(array)): 2]  # low words (LE)
    values = unscaled.astype(np.float64) / float(10 ** t.scale)
    if array.null_count:
        return pa.array(values, mask=array.is_null().to_numpy(zero_copy_only=False))
    return pa.array(values)


def convert_table(table: pa.Table, plan: Plan, row_start: int | None = None) -> pa.Table:
    """The columns a fragment takes: dims first (the row index from ``row_start``), then attrs."""
    arrays, names = [], []
    for dim in plan.dims:
        if plan.row_dim:
            arrays.append(pa.array(np.arange(row_start, row_start + table.num_rows,
                                             dtype=np.uint64)))
        else:
            arrays.append(convert_array(table.column(dim.column.name), dim.column))
        names.append(dim.column.name)
    for attr in plan.attrs:
        arrays.append(convert_array(table.column(attr.name), attr))
        names.append(attr.name)
    return pa.table(arrays, names=names)


def check_no_nan(table: pa.Table, plan: Plan | None, names: list[str] | None = None) -> None:
    """Float dimensions may not hold NaN (TileDB cannot order them)."""
    for name in names if names is not None else plan.dim_names:
        column = table.column(name)
        if pa.types.is_floating(column.type) and pc.any(pc.is_nan(column)).as_py():
            raise IngestError(f"dimension column {name!r} holds NaN")


# --- filters and the schema ---------------------------------------------------------------

_FILTER_NAMES = {
    "zstd": "Zstd", "gzip": "Gzip", "lz4": "Lz4", "bzip2": "Bzip2", "rle": "Rle",
    "doubledelta": "DoubleDelta", "double-delta": "DoubleDelta", "delta": "Delta",
    "bitshuffle": "BitShuffle", "byteshuffle": "ByteShuffle", "bitwidth": "BitWidthReduction",
    "bit-width-reduction": "BitWidthReduction", "positivedelta": "PositiveDelta",
    "xor": "Xor", "dictionary": "Dictionary", "md5": "ChecksumMD5", "sha256": "ChecksumSHA256",
}
_LEVELLED = ("Zstd", "Gzip", "Lz4", "Bzip2")
_WINDOWED = ("BitWidthReduction", "PositiveDelta")


def parse_filters(spec: str):
    """A filter pipeline from text: ``"zstd"``, ``"zstd:7"``, ``"bitshuffle,lz4"``, ``"none"``.

    A number after a colon is the level of a compressor or the window of bit-width reduction
    and positive delta.
    """
    spec = spec.strip()
    if spec.lower() in ("", "none"):
        return sch.FilterList([])
    filters = []
    for item in spec.split(","):
        name, _, arg = item.strip().partition(":")
        cls_name = _FILTER_NAMES.get(name.strip().lower())
        if cls_name is None:
            raise ProgrammingError(f"unknown filter {name!r} in {spec!r} (known: "
                                   f"{', '.join(sorted(set(_FILTER_NAMES) - {'double-delta', 'bit-width-reduction'}))}, none)")
        cls = getattr(sch, cls_name)
        if arg:
            if cls_name not in _LEVELLED + _WINDOWED:
                raise ProgrammingError(f"filter {name!r} takes no number (in {spec!r})")
            try:
                number = int(arg)
            except ValueError:
                raise ProgrammingError(f"filter {name!r}: {arg!r} is not a whole number") from None
            filters.append(cls(number))
        else:
            filters.append(cls())
    return sch.FilterList(filters)


def default_filters():
    return sch.FilterList([sch.Zstd(DEFAULT_ZSTD_LEVEL)])


def _as_filters(value):
    if isinstance(value, str):
        return parse_filters(value)
    return sch.as_filter_list(value)


def resolve_filters(filters, names: list[str]) -> dict:
    """``filters`` (None, one pipeline for every attribute, or {column: pipeline}) per column;
    a dict may also name dimensions (their own pipelines) and "*" (every other attribute)."""
    if filters is None:
        return {}
    if isinstance(filters, dict):
        unknown = [n for n in filters if n != "*" and n not in names]
        if unknown:
            raise ProgrammingError(f"filters name unknown column(s) {unknown}")
        return {n: _as_filters(v) for n, v in filters.items()}
    return {"*": _as_filters(filters)}


def to_schema(plan: Plan, *, capacity=None, filters=None, allows_duplicates: bool = True,
              cell_order: str = "row-major"):
    """The ``tdbsql.schema.Schema`` of a plan (Zstd everywhere unless ``filters`` says)."""
    chosen = resolve_filters(filters, list(plan.dim_names) + [a.name for a in plan.attrs])
    attr_default = chosen.get("*", default_filters())
    dims = [sch.Dim(d.column.name, "ascii" if d.domain is None else d.column.datatype,
                    d.domain, d.tile, filters=chosen.get(d.column.name, ()))
            for d in plan.dims]
    attrs = [sch.Attr(a.name, a.datatype, var=a.var,
                      cell_val_num=None if a.var else a.cell_val_num, nullable=a.nullable,
                      filters=chosen.get(a.name, attr_default))
             for a in plan.attrs]
    return sch.Schema(dims, attrs, sparse=plan.sparse,
                      capacity=capacity if capacity is not None else 10000,
                      cell_order=cell_order, allows_duplicates=allows_duplicates and plan.sparse,
                      coords_filters=default_filters(), offsets_filters=default_filters())
