"""Shared helpers for conformance tests: read an array with ``tiledb`` as raw cells (the oracle)
and turn a tdbsql Arrow table back into the same raw cells, then compare cell for cell.

A *cell* is the exact bytes TileDB stores for it (``bytes``), or ``None`` for a NULL (validity 0,
or a datetime/time value equal to NaT, which tdbsql documents as NULL).  The oracle reads raw
query buffers (data, offsets, validity) through TileDB-Py's multi-range indexer, so nothing is
lost to numpy conversion (trailing NULs, NULLs, NaN payloads).  The inverse mapping from Arrow
back to bytes is written here independently of ``tdbsql.engine.arrow_convert``.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

try:  # the oracle is a test-only dependency; modules using it importorskip("tiledb")
    import tiledb
    from tiledb.multirange_indexing import MultiRangeIndexer
except ImportError:  # pragma: no cover - CI installs the test extra
    tiledb = None
    MultiRangeIndexer = object

NAT = np.iinfo(np.int64).min

SIZES = {
    "INT8": 1, "UINT8": 1, "INT16": 2, "UINT16": 2, "INT32": 4, "UINT32": 4, "INT64": 8,
    "UINT64": 8, "FLOAT32": 4, "FLOAT64": 8, "BOOL": 1, "CHAR": 1, "STRING_ASCII": 1,
    "STRING_UTF8": 1, "STRING_UTF16": 2, "STRING_UCS2": 2, "STRING_UTF32": 4, "STRING_UCS4": 4,
    "BLOB": 1, "ANY": 1, "GEOM_WKB": 1, "GEOM_WKT": 1,
}
NUMPY = {"INT8": "<i1", "UINT8": "<u1", "INT16": "<i2", "UINT16": "<u2", "INT32": "<i4",
         "UINT32": "<u4", "INT64": "<i8", "UINT64": "<u8", "FLOAT32": "<f4", "FLOAT64": "<f8"}
STRING_CODECS = {"CHAR": "utf-8", "STRING_ASCII": "utf-8", "STRING_UTF8": "utf-8",
                 "GEOM_WKT": "utf-8", "STRING_UTF16": "utf-16-le", "STRING_UCS2": "utf-16-le",
                 "STRING_UTF32": "utf-32-le", "STRING_UCS4": "utf-32-le"}
BINARY = {"BLOB", "ANY", "GEOM_WKB"}
# Arrow unit and the factor from the TileDB unit to it (the README's Arrow table).
TEMPORAL = {
    "DATETIME_DAY": (pa.date32(), 1), "DATETIME_WEEK": (pa.date32(), 7),
    "DATETIME_HR": (pa.timestamp("s"), 3600), "DATETIME_MIN": (pa.timestamp("s"), 60),
    "DATETIME_SEC": (pa.timestamp("s"), 1), "DATETIME_MS": (pa.timestamp("ms"), 1),
    "DATETIME_US": (pa.timestamp("us"), 1), "DATETIME_NS": (pa.timestamp("ns"), 1),
    "DATETIME_YEAR": (pa.int64(), 1), "DATETIME_MONTH": (pa.int64(), 1),
    "DATETIME_PS": (pa.int64(), 1), "DATETIME_FS": (pa.int64(), 1),
    "DATETIME_AS": (pa.int64(), 1),
    "TIME_HR": (pa.time32("s"), 3600), "TIME_MIN": (pa.time32("s"), 60),
    "TIME_SEC": (pa.time32("s"), 1), "TIME_MS": (pa.time32("ms"), 1),
    "TIME_US": (pa.time64("us"), 1), "TIME_NS": (pa.time64("ns"), 1),
    "TIME_PS": (pa.int64(), 1), "TIME_FS": (pa.int64(), 1), "TIME_AS": (pa.int64(), 1),
}
VAR = 0xFFFFFFFF


# -- field facts, from tiledb's own schema ---------------------------------------------------


class FieldFacts:
    """What the oracle needs to split a raw buffer into cells."""

    def __init__(self, obj, is_dim: bool):
        self.name = obj.name
        self.type = obj._tiledb_dtype.name
        self.var = bool(obj.isvar)
        self.ncells = VAR if self.var else int(getattr(obj, "ncells", 1) or 1)
        self.nullable = (not is_dim) and bool(obj.isnullable)
        self.is_dim = is_dim

    @property
    def value_size(self) -> int:
        return SIZES.get(self.type, 8)  # every temporal type is int64

    @property
    def temporal(self) -> bool:
        return self.type in TEMPORAL


def field_facts(schema, name: str) -> FieldFacts:
    dom = schema.domain
    for i in range(dom.ndim):
        if dom.dim(i).name == name:
            return FieldFacts(dom.dim(i), True)
    return FieldFacts(schema.attr(name), False)


def expected_arrow_type(facts: FieldFacts) -> pa.DataType:
    """The README's Arrow table, written out independently."""
    t = facts.type
    if t == "CHAR":  # bytes, as tiledb reads CHAR, whatever they hold
        return pa.binary()
    if t in STRING_CODECS:
        return pa.string()
    if t in BINARY:
        return pa.binary()
    if t == "BOOL":
        value = pa.bool_()
    elif t in TEMPORAL:
        value = TEMPORAL[t][0]
    else:
        value = pa.from_numpy_dtype(np.dtype(NUMPY[t]))
    if facts.ncells == VAR:
        return pa.list_(value)
    if facts.ncells > 1:
        return pa.list_(value, facts.ncells)
    return value


# -- the oracle --------------------------------------------------------------------------------


class _RawIndexer(MultiRangeIndexer):
    """``multi_index`` returning the raw (data, offsets, validity) buffers of every field."""

    def _run_query(self):
        if self.pyquery is None:
            return {}
        self.pyquery.submit()
        return {name: tuple(np.array(b, copy=True) for b in item)
                for name, item in self.pyquery.results().items()}


def oracle_raw(path, ranges=None, *, cond=None, attrs=None, dims=None, timestamp=None,
               dense_box=True):
    """Raw buffers of the cells ``tiledb`` returns for ``ranges`` (a multi_index key: a tuple
    with one slice / list of slices per dimension, inclusive).  Dense arrays read the non-empty
    domain by default (row-major), sparse arrays everything (unordered)."""
    with tiledb.open(str(path), timestamp=timestamp) as A:
        schema = A.schema
        if ranges is None:
            if schema.sparse:
                ranges = tuple(slice(None) for _ in range(schema.domain.ndim))
            else:
                ned = A.nonempty_domain()
                if ned is None:
                    return None
                ranges = tuple(slice(lo, hi) for lo, hi in ned)
        kwargs = {"order": "U" if schema.sparse else "C", "cond": cond}
        if attrs is not None:
            kwargs["attrs"] = attrs
        if dims is not None:
            kwargs["dims"] = dims
        elif not schema.sparse:
            kwargs["dims"] = [schema.domain.dim(i).name for i in range(schema.domain.ndim)]
        q = A.query(**kwargs)
        return _RawIndexer(A, q)[ranges]


def raw_to_cells(facts: FieldFacts, data, offsets, validity) -> list:
    """Split raw query buffers into cells: bytes, or None for a NULL."""
    data = np.asarray(data).view(np.uint8).tobytes()
    if facts.var:
        starts = [int(o) for o in offsets] + [len(data)]
        cells = [data[starts[i]:starts[i + 1]] for i in range(len(starts) - 1)]
    else:
        width = facts.value_size * facts.ncells
        cells = [data[i:i + width] for i in range(0, len(data), width)]
    if facts.nullable and len(validity):
        cells = [c if v else None for c, v in zip(cells, validity)]
    if facts.temporal and facts.ncells == 1:
        nat = NAT.to_bytes(8, "little", signed=True)
        cells = [None if c == nat else c for c in cells]
    return cells


def oracle_cells(path, ranges=None, **kwargs) -> dict[str, list]:
    """``tiledb``'s cells for ``ranges``: field name -> list of cells (see ``raw_to_cells``)."""
    raw = oracle_raw(path, ranges, **kwargs)
    if raw is None:
        return {}
    with tiledb.open(str(path)) as A:
        return {name: raw_to_cells(field_facts(A.schema, name), *bufs)
                for name, bufs in raw.items()}


# -- tdbsql's Arrow, back to raw cells ---------------------------------------------------------


def _scalar_values_to_raw(arr: pa.Array, facts: FieldFacts) -> list:
    """Flat Arrow values -> bytes per value (None for NULL)."""
    t = facts.type
    if t in STRING_CODECS or t in BINARY:
        codec = STRING_CODECS.get(t)
        out = []
        for v in arr.to_pylist():
            if v is None or isinstance(v, bytes):
                out.append(v)
            else:
                out.append(v.encode(codec, errors="surrogatepass"))
        return out
    nulls = np.asarray(arr.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    if t == "BOOL":
        vals = np.asarray(arr.fill_null(False).to_numpy(zero_copy_only=False), dtype=np.uint8)
    elif t in TEMPORAL:
        arrow_type, scale = TEMPORAL[t]
        storage = pa.int32() if arrow_type.bit_width == 32 else pa.int64()
        ints = arr.view(storage) if arrow_type != pa.int64() else arr
        vals = np.asarray(pc.cast(ints, pa.int64()).fill_null(0).to_numpy(), dtype=np.int64)
        assert not np.any(vals % scale), f"{facts.name}: value not a whole {t} count"
        vals = vals // scale
    else:
        vals = np.asarray(arr.to_numpy(zero_copy_only=False))
        if nulls.any():
            vals = np.asarray(arr.fill_null(0).to_numpy(zero_copy_only=False))
        vals = vals.astype(np.dtype(NUMPY[t]), copy=False)
    raw = vals.tobytes()
    size = vals.dtype.itemsize
    return [None if nulls[i] else raw[i * size:(i + 1) * size] for i in range(len(vals))]


def arrow_to_cells(column, facts: FieldFacts) -> list:
    """tdbsql's Arrow column -> cells comparable with ``raw_to_cells``."""
    arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if not (pa.types.is_list(arr.type) or pa.types.is_fixed_size_list(arr.type)):
        return _scalar_values_to_raw(arr, facts)
    nat = NAT.to_bytes(8, "little", signed=True)
    flat = _scalar_values_to_raw(arr.values, facts)
    flat = [nat if v is None and facts.temporal else v for v in flat]
    out = []
    for i in range(len(arr)):
        if not arr[i].is_valid:
            out.append(None)
            continue
        if pa.types.is_fixed_size_list(arr.type):
            lo = (arr.offset + i) * arr.type.list_size
            hi = lo + arr.type.list_size
        else:
            lo, hi = arr.offsets[i].as_py(), arr.offsets[i + 1].as_py()
        out.append(b"".join(flat[lo:hi]))
    return out


def tdbsql_cells(table: pa.Table, path, names) -> dict[str, list]:
    with tiledb.open(str(path)) as A:
        return {n: arrow_to_cells(table.column(n), field_facts(A.schema, n)) for n in names}


# -- comparison --------------------------------------------------------------------------------


def _row_key(row):
    return tuple((v is None, v or b"") for v in row)


def assert_same_cells(table: pa.Table, expected: dict[str, list], dims, attrs, *, path,
                      ordered: bool | None = None, check_types: bool = True):
    """tdbsql's ``table`` holds exactly the oracle's cells for ``dims + attrs``.

    ``ordered`` defaults to True for dense arrays (row-major order is part of the contract) and
    False for sparse ones (rows are compared as a multiset, sorted by all fields)."""
    names = list(dims) + list(attrs)
    with tiledb.open(str(path)) as A:
        schema = A.schema
        facts = {n: field_facts(schema, n) for n in names}
    if ordered is None:
        ordered = not schema.sparse
    if check_types:
        for n in names:
            _check_type(table.schema.field(n).type, facts[n], expected.get(n, []))
    got_cols = {n: arrow_to_cells(table.column(n), facts[n]) for n in names}
    n_expected = len(expected[names[0]]) if expected else 0
    assert table.num_rows == n_expected, f"{table.num_rows} rows, tiledb has {n_expected}"
    got = list(zip(*(got_cols[n] for n in names)))
    want = list(zip(*(expected[n] for n in names)))
    if not ordered:
        got.sort(key=_row_key)
        want.sort(key=_row_key)
    bad = [i for i, (g, w) in enumerate(zip(got, want)) if g != w]
    assert not bad, (f"{len(bad)} of {len(want)} rows differ ({names}); first: "
                     + "; ".join(f"row {i}: tdbsql {got[i]} tiledb {want[i]}" for i in bad[:3]))


def _check_type(got: pa.DataType, facts: FieldFacts, cells: list):
    want = expected_arrow_type(facts)
    if want == pa.string() and got == pa.binary() and STRING_CODECS[facts.type] == "utf-8":
        # documented: string columns whose bytes are not valid UTF-8 come back as binary
        assert any(not _valid_utf8(c) for c in cells if c is not None), \
            f"{facts.name}: binary although every {facts.type} cell is valid UTF-8"
        return
    assert got == want, f"{facts.name}: Arrow type {got}, expected {want} for {facts.type}"


def _valid_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def check_query(path, sql: str, dims, attrs, ranges=None, **oracle_kwargs):
    """Run ``sql`` with tdbsql and compare with the oracle read of ``ranges``."""
    import tdbsql

    table = tdbsql.query(sql, str(path))
    expected = oracle_cells(path, ranges, **oracle_kwargs)
    assert_same_cells(table, expected, dims, attrs, path=path)
    return table


def normalize_domain(ned):
    """A non-empty domain as plain Python values (ints, floats, str) for comparison."""
    if ned is None:
        return None
    out = []
    for lo, hi in ned:
        out.append(tuple(_plain(v) for v in (lo, hi)))
    return tuple(out)


def _plain(v):
    if isinstance(v, np.datetime64):
        return int(v.astype(np.int64))
    if isinstance(v, bytes | bytearray):
        return bytes(v).decode("utf-8", "surrogateescape")
    if isinstance(v, np.generic):
        return v.item()
    return v


# -- writing -----------------------------------------------------------------------------------


def dense_write(path, box, data, timestamp=None, nullmaps=None):
    """Write ``data`` (dict of attribute -> array shaped like the box, or one array) to the dense
    box ``[(lo, hi), ...]`` (inclusive, real coordinates: negative domains work, unlike
    ``A[lo:hi]``, which wraps negative numbers around).  ``nullmaps``: attribute -> uint8
    validity per cell; object arrays of nullable attributes get theirs from their ``None``s."""
    nullmaps = dict(nullmaps or {})
    with tiledb.open(str(path), "w", timestamp=timestamp) as A:
        data = dict(data) if isinstance(data, dict) else {A.schema.attr(0).name: data}
        for name, values in data.items():
            values = np.asarray(values)
            if A.schema.attr(name).isnullable and values.dtype == object:
                flat = values.ravel()
                if name not in nullmaps:
                    nullmaps[name] = np.array([v is not None for v in flat], np.uint8)
                if any(v is None for v in flat):
                    # tiledb-py's dense path cannot convert None: write an empty string
                    empty = b"" if any(isinstance(v, bytes) for v in flat) else ""
                    data[name] = np.array([empty if v is None else v for v in flat],
                                          dtype=object).reshape(values.shape)
        sub = tiledb.Subarray(A)
        sub.add_ranges([[(lo, hi)] for lo, hi in box])
        A._setitem_impl(sub, data, nullmaps)
