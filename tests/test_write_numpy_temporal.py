"""numpy datetime64 / timedelta64 columns written by tdbsql and read by ``tiledb``: every numpy
unit reaches its TileDB datetime/time field exactly (units Arrow lacks too), NaT is NULL, and
a value without an exact equivalent in the field's unit is a ``DataError``."""

from __future__ import annotations

import numpy as np
import pytest

tiledb = pytest.importorskip("tiledb")

from tdbsql import schema as S  # noqa: E402
from tdbsql.errors import DataError, SchemaError  # noqa: E402
from tdbsql.storage.writer import create, write  # noqa: E402

DATES = ["2020-01-01", "1970-01-01", "1900-01-01", "NaT"]


def _create(path, dtype, sparse, nullable=False):
    attr = S.Attr("a", dtype, nullable=nullable)
    create(str(path), S.Schema([S.Dim("x", "int64", (0, 9), 4)], [attr], sparse=sparse))


def _write(path, values, sparse):
    if sparse:
        write(str(path), {"x": np.arange(len(values)), "a": values})
    else:
        write(str(path), {"a": values}, subarray=((0, len(values) - 1),))


def _tiledb_values(path, n):
    with tiledb.open(str(path)) as A:
        return A.multi_index[0:n - 1]["a"]


@pytest.mark.parametrize("sparse", [True, False])
@pytest.mark.parametrize("unit", ["Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps",
                                  "fs", "as"])
def test_every_datetime64_unit_round_trips(tmp_path, unit, sparse):
    values = np.array(DATES, dtype=f"datetime64[{unit}]")
    _create(tmp_path / "a", f"datetime64[{unit}]", sparse)
    _write(tmp_path / "a", values, sparse)
    got = _tiledb_values(tmp_path / "a", len(values))
    assert got.dtype == values.dtype
    assert got.view(np.int64).tolist() == values.view(np.int64).tolist()  # NaT stays NaT


@pytest.mark.parametrize("sparse", [True, False])
@pytest.mark.parametrize("unit", ["h", "m", "s", "ms", "us", "ns", "ps"])
def test_every_timedelta64_unit_round_trips(tmp_path, unit, sparse):
    values = np.array([1, 0, -5, 2**40], dtype=f"timedelta64[{unit}]")
    _create(tmp_path / "a", f"timedelta64[{unit}]", sparse)
    _write(tmp_path / "a", values, sparse)
    assert _tiledb_values(tmp_path / "a", 4).view(np.int64).tolist() == [1, 0, -5, 2**40]


def test_units_convert_exactly_to_the_field(tmp_path):
    _create(tmp_path / "a", "datetime64[s]", True, nullable=True)
    hours = np.array(["2020-01-01T05", "NaT"], dtype="datetime64[h]")
    write(str(tmp_path / "a"), {"x": [0, 1], "a": hours})
    with tiledb.open(str(tmp_path / "a")) as A:
        got = A.query(return_arrow=True).df[0:1]
    assert got.column("a").to_pylist()[1] is None
    assert got.column("a").cast("int64").to_pylist()[0] == hours[0].astype("M8[s]").astype(int)
    with pytest.raises(DataError, match=r"row 1: datetime64\[ms\] value .* exactly to unit 's'"):
        write(str(tmp_path / "a"), {"x": [2, 3], "a": np.array([0, 1], dtype="datetime64[ms]")})
    with pytest.raises(DataError, match=r"timedelta64\[s\] values cannot be stored as DATETIME_SEC"):
        write(str(tmp_path / "a"), {"x": [2], "a": np.array([1], dtype="timedelta64[s]")})


@pytest.mark.parametrize("unit", ["D", "W", "Y", "M"])
def test_timedelta_units_without_a_tiledb_type_are_schema_errors(unit):
    with pytest.raises(SchemaError, match=rf"timedelta64\[{unit}\] has no TileDB equivalent"):
        S.Attr("a", f"timedelta64[{unit}]").datatype
