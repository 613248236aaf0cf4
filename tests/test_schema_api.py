"""The public schema API: TileDB's validation rules, and to_format / from_format round trips."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from tdbsql import schema as S
from tdbsql.datatypes import VAR_NUM, Datatype, Layout


@pytest.mark.parametrize("build, message", [
    (lambda: S.Schema([], [S.Attr("a", "int32")]), "at least one dimension"),
    (lambda: S.Schema([S.Dim("x", "int32", (0, 9), 5)], [S.Attr("x", "int32")]), "duplicate name"),
    (lambda: S.Schema([S.Dim("__x", "int32", (0, 9), 5)], []), "reserved"),
    (lambda: S.Schema([S.Dim("x", "float64", (0, 9), 5)], [S.Attr("a", "int8")], sparse=False),
     "dense arrays do not support"),
    (lambda: S.Schema([S.Dim("s", "ascii")], [S.Attr("a", "int8")], sparse=False), "string dimensions"),
    (lambda: S.Schema([S.Dim("x", "int32", (0, 9), 5)], [], sparse=False), "at least one attribute"),
    (lambda: S.Schema([S.Dim("x", "int32", (0, 9), 5)], [S.Attr("a", "int8")], sparse=False,
                      cell_order="hilbert"), "Hilbert"),
    (lambda: S.Schema([S.Dim("x", "int32", (9, 0), 5)], []), "greater than the upper"),
    (lambda: S.Schema([S.Dim("x", "int32", (0, 9), 11)], []), "exceeds the domain"),
    (lambda: S.Schema([S.Dim("x", "int32", (0, 9), 0)], []), "greater than 0"),
    (lambda: S.Schema([S.Dim("x", "int8", (0, 300), 5)], []), "does not fit"),
    (lambda: S.Schema([S.Dim("x", "uint8", (0, 255), 256)], []), "tile extent 256 does not fit UINT8"),
    (lambda: S.Schema([S.Dim("x", "int32", (0, 9), "five")], []), "tile extent 'five' does not fit"),
    (lambda: S.Schema([S.Dim("x", "uint64", (5, 2**64 - 6), 2048)], []), "exceeds the UINT64 range"),
    (lambda: S.Schema([S.Dim("x", "int8", (0, 127), 22)], [S.Attr("a", "int8")], sparse=False),
     "exceeds the INT8 range"),
    (lambda: S.Schema([S.Dim("x", "int32")], []), "domain (lo, hi) is required"),
    (lambda: S.Schema([S.Dim("s", "utf8")], []), "must be 'ascii'"),
    (lambda: S.Schema([S.Dim("x", "int32", (0, 9), 5)], [S.Attr("a", "int32", var=True, cell_val_num=2)]),
     "conflicts"),
    (lambda: S.Schema([S.Dim("x", "int32", (0, 9), 5)], [S.Attr("a", "float32", filters=[S.DoubleDelta()])]),
     "floating point"),
    (lambda: S.Schema([S.Dim("x", "int32", (0, 9), 5)], [S.Attr("a", "utf8", filters=[S.Zstd(), S.Rle()])]),
     "RLE must be the first"),
    (lambda: S.Schema([S.Dim("x", "int32", (0, 9), 5)], [S.Attr("a", "float64", enumeration="e")],
                      enumerations=[S.Enumeration("e", ["a"])]), "integer type"),
    (lambda: S.Schema([S.Dim("x", "int32", (0, 9), 5)], [S.Attr("a", "int8", enumeration="nope")]),
     "unknown enumeration"),
    (lambda: S.Schema([S.Dim("x", "int32", (0, 9), 5)], [S.Attr("a", "int8")], capacity=0), "capacity"),
    (lambda: S.Schema([S.Dim("x", "int32", (0, 9), 5)], [], cell_order="diagonal"), "cell_order"),
    (lambda: S.Schema([S.Dim("x", "int32", (0, 9), 5)], [], tile_order="hilbert"), "tile_order"),
    (lambda: S.Schema([S.Dim("x", "int32", (0, 9), 5)], [S.Attr("a", "int16", fill=b"abc")]), "fill value"),
    (lambda: S.Schema([S.Dim("x", "int32", (0, 9), 5)], [S.Attr("t", "timedelta64[ms]", fill=[1.5])]),
     "not a date, time or integer count of ms"),
])
def test_schemas_tiledb_refuses(build, message):
    with pytest.raises(S.SchemaError) as info:
        build()
    assert message in str(info.value)


def test_to_format_and_back():
    schema = S.Schema(
        [S.Dim("t", "datetime64[ms]", (0, 10**12), 10**9), S.Dim("s", "ascii")],
        [S.Attr("a", "uint8", fill=3, filters=[S.BitWidthReduction(128), S.Zstd(7)],
                enumeration="e"),
         S.Attr("b", str, nullable=True), S.Attr("c", "int16", cell_val_num=4),
         S.Attr("d", "float32", filters=S.FilterList([S.FloatScale(0.5, 1.0, 2)], 1024))],
        capacity=9, cell_order="hilbert", allows_duplicates=True,
        enumerations=[S.Enumeration("e", ["x", "y"], ordered=True)])
    stored = schema.to_format("__1_1_abc", {"e": "__f_0"}, 1)
    assert stored.cell_order == Layout.HILBERT and stored.capacity == 9
    assert stored.dimensions[0].datatype == Datatype.DATETIME_MS
    assert stored.dimensions[1].is_var and stored.dimensions[1].tile_extent is None
    assert stored.attributes[1].cell_val_num == VAR_NUM and stored.attributes[1].nullable
    assert stored.attributes[2].cell_val_num == 4
    assert stored.attributes[0].fill_value == b"\x03"
    assert stored.enumerations[0].filename == "__f_0"
    back = S.Schema.from_format(stored, schema.format_enumerations())
    assert back.to_format("__1_1_abc", {"e": "__f_0"}, 1).to_bytes() == stored.to_bytes()


@pytest.mark.parametrize("dtype, python, numpy_value", [
    ("timedelta64[ms]", dt.timedelta(seconds=3, microseconds=4000), np.timedelta64(3004, "ms")),
    ("datetime64[s]", dt.datetime(2020, 1, 2, 3, 4, 5), np.datetime64("2020-01-02T03:04:05")),
    ("datetime64[D]", dt.date(2020, 1, 2), np.datetime64("2020-01-02")),
])
def test_python_date_and_time_fill_values(dtype, python, numpy_value):
    """A fill value (or domain bound) given as a Python date, datetime or timedelta is stored
    as the numpy value's count (it was a raw TypeError)."""
    def stored(value):
        schema = S.Schema([S.Dim("x", "int32", (0, 9), 5)], [S.Attr("a", dtype, fill=value)],
                          sparse=False)
        return schema.to_format().attributes[0].fill_value
    assert stored(python) == stored(numpy_value)
    dim = S.Schema([S.Dim("t", dtype, (python, python), 1)], [S.Attr("a", "int8")]).to_format()
    assert np.int64(dim.dimensions[0].domain[0]).tobytes() == stored(numpy_value)


def test_null_tile_extent_becomes_the_domain_range():
    stored = S.Schema([S.Dim("x", "int32", (1, 10)), S.Dim("y", "float64", (0.0, 2.0))], []).to_format()
    assert stored.dimensions[0].tile_extent == 10 and stored.dimensions[1].tile_extent == 2.0
    hilbert = S.Schema([S.Dim("x", "int32", (1, 10))], [], cell_order="hilbert").to_format()
    assert hilbert.dimensions[0].tile_extent is None


def test_datatype_names():
    assert S.to_datatype("ascii") == Datatype.STRING_ASCII
    assert S.to_datatype(str) == Datatype.STRING_UTF8
    assert S.to_datatype("datetime64[ns]") == Datatype.DATETIME_NS
    assert S.to_datatype("TIME_HR") == Datatype.TIME_HR
    assert S.to_datatype(bool) == Datatype.BOOL
    with pytest.raises(S.SchemaError):
        S.to_datatype("complex128")
