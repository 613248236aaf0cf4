"""The query surface of the reader: projections, WHERE forms, ORDER BY, LIMIT, time travel in SQL.

Every result is checked against DuckDB running the same SQL over the same cells (read by
`tiledb`), so the SQL semantics (three-valued logic, NULL ordering) are DuckDB's.
"""

from __future__ import annotations

import duckdb
import numpy as np
import pyarrow as pa
import pytest
import tiledb

import tdbsql


@pytest.fixture(scope="module")
def weather(tmp_path_factory):
    """A sparse array with NULLs and strings, in two overlapping fragments."""
    uri = str(tmp_path_factory.mktemp("sql") / "weather")
    dom = tiledb.Domain(tiledb.Dim("day", domain=(0, 999), tile=50, dtype=np.int32),
                        tiledb.Dim("station", domain=(1, 20), tile=5, dtype=np.int32))
    schema = tiledb.ArraySchema(domain=dom, sparse=True, capacity=37, attrs=[
        tiledb.Attr("temp", dtype=np.float64, nullable=True),
        tiledb.Attr("count", dtype=np.int64),
        tiledb.Attr("city", dtype=str, var=True),
    ])
    tiledb.Array.create(uri, schema)
    rng = np.random.default_rng(1)
    cities = np.array(["Oslo", "Lima", "pune", "Kyiv", "Perth", ""], dtype=object)
    for t, lo, hi in ((10, 0, 300), (20, 250, 400)):
        day = np.repeat(np.arange(lo, hi, dtype=np.int32), 4)
        station = np.tile(np.array([1, 3, 7, 20], dtype=np.int32), hi - lo)
        temp = rng.normal(10, 5, len(day)).round(2)
        with tiledb.open(uri, "w", timestamp=t) as A:
            A[day, station] = {
                "temp": pa.array(temp, mask=rng.random(len(day)) < 0.1),
                "count": rng.integers(-50, 50, len(day)),
                "city": cities[rng.integers(0, len(cities), len(day))],
            }
    return uri


def oracle(uri: str, timestamp=None) -> pa.Table:
    with tiledb.open(uri, timestamp=timestamp) as A:
        return pa.Table.from_pandas(A.df[:], preserve_index=False)


def duck(sql: str, table: pa.Table) -> pa.Table:
    """DuckDB's answer to ``sql`` over ``table`` (``array`` is a DuckDB keyword: renamed)."""
    con = duckdb.connect()
    con.register("cells", table)
    return con.sql(sql.replace("FROM array", "FROM cells")).to_arrow_table()


def rows(table: pa.Table, ordered: bool):
    data = [tuple(_norm(v) for v in row.values()) for row in table.to_pylist()]
    return data if ordered else sorted(data, key=repr)


def _norm(v):
    return round(v, 9) if isinstance(v, float) else v


QUERIES = [
    ("SELECT * FROM array", False),
    ("SELECT day, city FROM array WHERE day BETWEEN 240 AND 260", False),
    ("SELECT * FROM array WHERE day >= 100 AND day < 120 AND station IN (3, 20)", False),
    ("SELECT * FROM array WHERE (day < 5 OR day > 395) AND station = 7", False),
    ("SELECT day, station, temp FROM array WHERE temp IS NULL", False),
    ("SELECT day, station FROM array WHERE temp IS NOT NULL AND temp > 12.5", False),
    ("SELECT day, station FROM array WHERE NOT (temp > 5)", False),
    ("SELECT day, city FROM array WHERE city LIKE 'P%'", False),
    ("SELECT day, city FROM array WHERE city ILIKE 'p%'", False),
    ("SELECT day, city FROM array WHERE city = ''", False),
    ("SELECT day, count * 2 + 1 AS x, temp / 2 AS half FROM array WHERE day < 20", False),
    ("SELECT DISTINCT city FROM array", False),
    ("SELECT day, station, temp FROM array ORDER BY temp DESC NULLS LAST, day, station LIMIT 15", True),
    ("SELECT day, station, temp FROM array ORDER BY temp, day, station LIMIT 20 OFFSET 5", True),
    ("SELECT day, station FROM array ORDER BY 1 DESC, 2 LIMIT 7", True),
    ("SELECT * FROM array WHERE day = 999", False),
    ("SELECT day FROM array WHERE station BETWEEN 4 AND 6", False),
]


@pytest.mark.parametrize("sql,ordered", QUERIES)
def test_matches_duckdb(weather, sql, ordered):
    ours = tdbsql.query(sql, weather)
    expected = duck(sql, oracle(weather))
    assert ours.column_names == expected.column_names
    assert rows(ours, ordered) == rows(expected, ordered)


@pytest.mark.parametrize("clause,window", [
    ("FOR SYSTEM_TIME AS OF 15", 15),
    ("FOR SYSTEM_TIME AS OF 25", 25),
    ("FOR SYSTEM_TIME BETWEEN 15 AND 25", (15, 25)),
    ("FOR SYSTEM_TIME AS OF TIMESTAMP '1970-01-01 00:00:00.015'", 15),
])
def test_time_travel_in_sql(weather, clause, window):
    ours = tdbsql.query(f"SELECT * FROM array {clause} WHERE day > 240", weather)
    expected = duck("SELECT * FROM array WHERE day > 240", oracle(weather, window))
    assert rows(ours, False) == rows(expected, False)


def test_directory_name_and_quoted_path(weather):
    by_name = tdbsql.query("SELECT day FROM weather", weather)
    by_path = tdbsql.query(f"SELECT day FROM '{weather}'")
    assert by_name.num_rows == by_path.num_rows == oracle(weather).num_rows


def test_python_timestamp_argument(weather):
    ours = tdbsql.query("SELECT * FROM array", weather, timestamp=15)
    assert rows(ours, False) == rows(oracle(weather, 15), False)


def test_open_string_ranges_keep_high_bytes(tmp_path):
    """An open-ended range on a string dimension must keep keys whose bytes sort past any
    UTF-8 text (e.g. 0xff): ranges are compared bytewise, as TileDB orders them."""
    uri = str(tmp_path / "s")
    dom = tiledb.Domain(tiledb.Dim("s", domain=(None, None), tile=None, dtype="ascii"))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=2,
                                                attrs=[tiledb.Attr("v", dtype=np.int32)]))
    keys = np.array([b"a", b"m", b"z", b"\xf4\x8f\xbf\xbf" * 9, b"\xff\xfe"], dtype=object)
    with tiledb.open(uri, "w") as A:
        A[keys] = np.arange(len(keys), dtype=np.int32)
    ours = tdbsql.query("SELECT v FROM array WHERE s >= 'm'", uri)
    assert sorted(ours.column("v").to_pylist()) == [1, 2, 3, 4]
    ours = tdbsql.query("SELECT v FROM array WHERE s < 'z'", uri)
    assert sorted(ours.column("v").to_pylist()) == [0, 1]


@pytest.mark.parametrize("order", ["f", "f DESC", "f NULLS FIRST", "f DESC NULLS FIRST"])
def test_order_by_puts_nan_above_every_number(order):
    """Arrow sorts NaN next to the NULLs; DuckDB above every number, both ways."""
    table = pa.table({"id": pa.array(range(6), pa.int64()),
                      "f": pa.array([1.0, float("nan"), None, -2.0, float("inf"), 0.5])})
    sql = f"SELECT id FROM t ORDER BY {order}"
    con = tdbsql.connect()
    con.register_arrow("t", table)
    oracle = duckdb.connect()
    oracle.register("t", table)
    assert con.sql(sql).fetchall() == oracle.sql(sql).fetchall()
