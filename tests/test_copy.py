"""``COPY ... TO`` writes the files DuckDB writes (CSV and JSON byte for byte, Parquet the same
values), over the sample array and over values of every kind; ``COPY t FROM 'f.parquet'``
appends to an array as ``tiledb`` then reads it; and the errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import tiledb
from hypothesis import given, settings
from hypothesis import strategies as st

import tdbsql
from sql_fixtures import duckdb_over

SAMPLE = Path(__file__).resolve().parents[1] / "examples" / "stations"

VALUES = ("SELECT 1.0::DOUBLE f, 'nan'::DOUBLE nan, 1e300::DOUBLE big, 0.1::FLOAT fl, "
          "12.50::DECIMAL(9,2) dec, TIMESTAMPTZ '2024-01-01 01:02:03+00' tz, TIME '01:02:03' t, "
          "INTERVAL 3 DAY i, '\\xAA'::BLOB bl, {'a': 1, 'b': 'x'} st, MAP {'k': 1} m, "
          "-0.0::DOUBLE nz, 1e-7::DOUBLE small, ['a,b', NULL] ls, DATE '2024-02-29' d, "
          "TIMESTAMP '2024-01-01 01:02:03.5' ts, true b, NULL n, 'ñé' u, 'inf'::DOUBLE inf, "
          "123456789012::BIGINT i8, [{'x': [1, NULL]}, NULL] nest")
TEXTS = ("SELECT * FROM (VALUES ('', 'a b ', 'q\"uote', 'new\nline', NULL, ' lead', 'x;y', "
         "'it''s', 'NA', 'cr\rhere')) t(e, sp, q, nl, n, l, sc, ap, na, cr)")

COPIES = [
    f"COPY ({VALUES}) TO '{{out}}.csv'",
    f"COPY ({VALUES}) TO '{{out}}.json'",
    f"COPY ({TEXTS}) TO '{{out}}.csv'",
    f"COPY ({TEXTS}) TO '{{out}}.csv' (DELIMITER ';', QUOTE '''', NULLSTR 'NA')",
    f"COPY ({TEXTS}) TO '{{out}}.csv' (HEADER false, SEP '|', ESCAPE '\\')",
    f"COPY ({TEXTS}) TO '{{out}}.ndjson'",
    f"COPY ({TEXTS}) TO '{{out}}.txt' (FORMAT json)",
    "COPY (SELECT 1 AS \"a,b\", 2 AS \"c\"\"d\", 3 AS \"e f\") TO '{out}.csv'",
    "COPY (SELECT * FROM st ORDER BY day, station) TO '{out}.csv'",
    "COPY (SELECT city, avg(temp_c) AS t, list(day ORDER BY day) AS days FROM st "
    "GROUP BY city ORDER BY city) TO '{out}.jsonl'",
    "COPY st TO '{out}.dat' (FORMAT 'csv', HEADER 0)",
    "COPY (SELECT * FROM st WHERE day < 0) TO '{out}.csv'",
    "COPY (SELECT i, i * 0.5 AS h, 'row ' || i AS s FROM range(150000) t(i)) TO '{out}.csv'",
    "COPY (SELECT 1 AS a, 2 AS a, 3 AS A, 4 AS a_1) TO '{out}.csv' (HEADER)",
    "COPY (SELECT 1 AS a, 2 AS a, 3 AS A, 4 AS a_1) TO '{out}.json'",
    "COPY (SELECT 1.00::DECIMAL(3,2) a, 12.50::DECIMAL(9,2) b, -0.5::DECIMAL(20,3) c, "
    "123456789012345678.5::DECIMAL(20,1) e, 1234567890123456789::DECIMAL(38,0) f, "
    "1e-10::DECIMAL(38,12) h, [1.50::DECIMAL(5,2)] l) TO '{out}.json'",
]


@pytest.fixture(scope="module")
def engines():
    con = tdbsql.connect()
    con.register("st", str(SAMPLE))
    return con, duckdb_over(str(SAMPLE), "st")


@pytest.mark.parametrize("copy", COPIES)
def test_a_copy_writes_duckdbs_bytes(tmp_path, engines, copy):
    ours, duck = engines
    got = ours.sql(copy.replace("{out}", str(tmp_path / "ours"))).fetchall()
    want = duck.execute(copy.replace("{out}", str(tmp_path / "duck"))).fetchall()
    assert got == want  # [(rows written,)]
    [mine] = [p for p in tmp_path.iterdir() if p.name.startswith("ours")]
    [theirs] = [p for p in tmp_path.iterdir() if p.name.startswith("duck")]
    assert mine.read_bytes() == theirs.read_bytes()


@settings(max_examples=40, deadline=None)
@given(values=st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64),
                       min_size=1, max_size=20))
def test_doubles_in_json_are_written_as_duckdb_writes_them(tmp_path_factory, values):
    root = tmp_path_factory.mktemp("doubles")
    rows = pa.table({"v": pa.array(values, pa.float64())})
    ours, duck = tdbsql.connect().register("t", rows), duckdb_over_table(rows)
    ours.sql(f"COPY t TO '{root / 'ours.json'}'")
    duck.execute(f"COPY t TO '{root / 'duck.json'}'")
    assert (root / "ours.json").read_text() == (root / "duck.json").read_text()


def duckdb_over_table(table: pa.Table):
    import duckdb

    con = duckdb.connect()
    con.register("t", table)
    return con


def test_parquet_holds_duckdbs_values(tmp_path, engines):
    ours, duck = engines
    query = ("SELECT st.*, [day, station] AS pair, {'c': city} AS s, 2.5::DECIMAL(5, 1) AS d "
             "FROM st ORDER BY day, station")
    assert ours.sql(f"COPY ({query}) TO '{tmp_path / 'ours.parquet'}'").fetchall() == \
        duck.execute(f"COPY ({query}) TO '{tmp_path / 'duck.parquet'}'").fetchall()
    got, want = pq.read_table(tmp_path / "ours.parquet"), pq.read_table(tmp_path / "duck.parquet")
    assert got.column_names == want.column_names
    assert got.to_pylist() == want.to_pylist()
    meta = pq.ParquetFile(tmp_path / "ours.parquet").metadata
    assert meta.row_group(0).column(0).compression == "SNAPPY"


def test_parquet_options(tmp_path):
    path = tmp_path / "t.parquet"
    tdbsql.connect().sql(f"COPY (SELECT * FROM range(1000) t(i)) TO '{path}' "
                         "(FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 300)")
    meta = pq.ParquetFile(path).metadata
    assert meta.num_rows == 1000 and meta.num_row_groups == 4
    assert meta.row_group(0).column(0).compression == "ZSTD"
    assert pq.read_table(path).column("i").to_pylist() == list(range(1000))


@pytest.fixture
def target(tmp_path) -> str:
    """An empty sparse array (k INT64 dimension; v FLOAT64, s string attributes)."""
    uri = str(tmp_path / "target")
    tiledb.Array.create(uri, tiledb.ArraySchema(
        domain=tiledb.Domain(tiledb.Dim("k", domain=(0, 1000), tile=10, dtype=np.int64)),
        sparse=True, allows_duplicates=True,
        attrs=[tiledb.Attr("v", dtype=np.float64), tiledb.Attr("s", dtype=str)]))
    return uri


def test_copy_from_a_parquet_file_appends_to_an_array(tmp_path, target):
    rows = tmp_path / "rows.parquet"
    pq.write_table(pa.table({"k": [3, 1, 2], "v": [0.5, 1.5, 2.5], "s": ["c", "a", "b"]}), rows)
    con = tdbsql.connect().register("t", target)
    assert con.sql(f"COPY t FROM '{rows}'").fetchall() == [(3,)]
    assert con.sql(f"COPY t(k, v, s) FROM '{rows}'").fetchall() == [(3,)]  # a column list
    with tiledb.open(target) as A:
        cells = A[:]
    assert sorted(zip(cells["k"].tolist(), cells["v"].tolist(), cells["s"].tolist())) == \
        [(1, 1.5, "a"), (1, 1.5, "a"), (2, 2.5, "b"), (2, 2.5, "b"), (3, 0.5, "c"),
         (3, 0.5, "c")]


@pytest.mark.parametrize("copy,error,message", [
    ("COPY (SELECT 1) TO '{d}/x.xlsx' (FORMAT xlsx)", tdbsql.UnsupportedSql,
     "writes csv, parquet or json, not 'xlsx'"),
    ("COPY (SELECT 1) TO '{d}/x.csv' (FORCE_QUOTE *)", tdbsql.UnsupportedSql,
     "option FORCE_QUOTE is not supported"),
    ("COPY (SELECT 1) TO '{d}/x.parquet' (HEADER true)", tdbsql.UnsupportedSql,
     "option HEADER is not supported for parquet"),
    ("COPY (SELECT 1) TO '{d}/x.csv' (HEADER true, HEADER false)", tdbsql.SqlError,
     "HEADER is given twice"),
    ("COPY (SELECT 1) TO '{d}/x.csv' (DELIMITER ';;')", tdbsql.UnsupportedSql,
     "takes one ASCII character"),
    ("COPY (SELECT 1) TO '{d}/x.csv' (DELIMITER)", tdbsql.SqlError, "DELIMITER needs a value"),
    ("COPY (SELECT 1) TO '{d}/x.csv' (FORMAT)", tdbsql.SqlError, "FORMAT needs a value"),
    ("COPY (SELECT 1) TO '{d}/x.csv' (COMPRESSION lzma)", tdbsql.SqlError,
     "unknown compression 'lzma'"),
    ("COPY (SELECT 1) TO '{d}/x.parquet' (COMPRESSION fancy)", tdbsql.SqlError,
     "unknown compression 'fancy'"),
    ("COPY (SELECT 1) TO '{d}/no/such/dir/x.csv'", tdbsql.InterfaceError,
     "COPY cannot write"),
    ("COPY t FROM '{d}/x.csv'", tdbsql.UnsupportedSql, "COPY ... FROM reads Parquet files"),
    ("COPY (SELECT nope) TO '{d}/x.csv'", tdbsql.SqlError, "nope"),
    ("COPY (SELECT INTERVAL 1 DAY AS i) TO '{d}/x.parquet'", tdbsql.UnsupportedSql,
     "COPY TO Parquet of this result"),
])
def test_copy_errors(tmp_path, target, copy, error, message):
    con = tdbsql.connect().register("t", target)
    with pytest.raises(error, match=message):
        con.sql(copy.format(d=tmp_path))
    assert not (tmp_path / "x.parquet").exists()


def test_a_copy_may_read_the_file_it_writes(tmp_path):
    """Written beside the name and moved there once whole (DuckDB's USE_TMP_FILE): a query
    reading the file reads it as it was, and a failing COPY leaves it as it was."""
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"v": [1, 2, 3]}), path)
    con = tdbsql.connect()
    assert con.sql(f"COPY (SELECT v * 10 AS v FROM '{path}') TO '{path}'").fetchall() == [(3,)]
    assert pq.read_table(path).column("v").to_pylist() == [10, 20, 30]
    with pytest.raises(tdbsql.UnsupportedSql):
        con.sql(f"COPY (SELECT v, INTERVAL 1 DAY AS i FROM '{path}') TO '{path}'")
    assert pq.read_table(path).column("v").to_pylist() == [10, 20, 30]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.parquet"]


def test_tuples_and_nested_maps_in_json(tmp_path):
    """A TUPLE (unnamed struct) is a JSON array, as DuckDB writes it; the CLI's JSON lines
    write nested values the same way."""
    import duckdb

    query = ("SELECT (1, 'a') AS t, [(2, 'b')] AS l, [MAP {'k': DATE '2024-01-01'}] AS m, "
             "{'s': (3, NULL)} AS s")
    tdbsql.connect().sql(f"COPY ({query}) TO '{tmp_path / 'ours.json'}'")
    duckdb.execute(f"COPY ({query}) TO '{tmp_path / 'duck.json'}'")
    assert (tmp_path / "ours.json").read_text() == (tmp_path / "duck.json").read_text()
    from tdbsql.output import render_json

    line = render_json(tdbsql.query(query)).strip()
    assert json.loads(line) == json.loads((tmp_path / "duck.json").read_text())


@pytest.mark.parametrize("name,options", [("t.csv.gz", ""), ("t.json.zst", ""),
                                          ("t.csv", " (COMPRESSION gzip)"),
                                          ("t.ndjson.gz", " (COMPRESSION none)")])
def test_compressed_text_files(tmp_path, name, options):
    """A .gz / .zst name (or COMPRESSION) compresses a CSV or JSON file as DuckDB does; the
    text inside is DuckDB's."""
    import duckdb

    query = "SELECT i, 'x' || i AS s FROM range(1000) t(i)"
    (tmp_path / "ours").mkdir()
    (tmp_path / "duck").mkdir()
    tdbsql.connect().sql(f"COPY ({query}) TO '{tmp_path / 'ours' / name}'{options}")
    duckdb.execute(f"COPY ({query}) TO '{tmp_path / 'duck' / name}'{options}")
    ours, theirs = (tmp_path / "ours" / name).read_bytes(), (tmp_path / "duck" / name).read_bytes()
    assert ours[:2] == theirs[:2]  # the same compression (or none): its magic bytes
    assert _plain(ours) == _plain(theirs)


def _plain(data: bytes) -> bytes:
    import gzip

    import zstandard

    if data[:2] == b"\x1f\x8b":
        return gzip.decompress(data)
    if data[:4] == b"\x28\xb5\x2f\xfd":
        return zstandard.ZstdDecompressor().decompressobj().decompress(data)
    return data


def test_json_of_a_sliced_batch_reads_its_own_rows():
    """A result past one batch comes in slices whose nested children are whole: lists, MAPs,
    fixed-size lists and structs of lists give the slice's own values."""
    from tdbsql.duckdb_json import json_values
    from tdbsql.engine.functions import registry
    from tdbsql.engine.functions_text import text_of

    registry()
    lists = pa.array([[1, 2], [3], [4, 5, 6], [7]]).slice(2)
    maps = pa.array([[("a", 1)], [("b", 2)], [("c", 3)]], pa.map_(pa.string(), pa.int64()))
    fixed = pa.array([[1, 2], [3, 4], [5, 6]], pa.list_(pa.int64(), 2)).slice(1)
    structs = pa.array([{"s": [1]}, {"s": [2, 3]}, None]).slice(1)
    assert json_values(lists, text_of) == [[4, 5, 6], [7]]
    assert json_values(maps.slice(1), text_of) == [{"b": 2}, {"c": 3}]
    assert json_values(fixed, text_of) == [[3, 4], [5, 6]]
    assert json_values(structs, text_of) == [{"s": [2, 3]}, None]
