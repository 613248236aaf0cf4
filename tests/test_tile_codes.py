"""Dictionary codes kept beside cached tiles (``storage.tile_codes``, ``kernels.tile_codes``):
codes decode to exactly the stored cells, and aggregates summed from coded tiles
(``engine.scan_sums``) equal DuckDB over the cells ``tiledb`` reads."""

from __future__ import annotations

import math

import duckdb
import numpy as np
import pyarrow as pa
import pytest
import tiledb
from hypothesis import given, settings
from hypothesis import strategies as st

import tdbsql
from sql_fixtures import oracle_table
from tdbsql.engine import scan_step
from tdbsql.kernels import tile_codes as K
from tdbsql.storage.tile_cache import tile_cache

SPECIAL = [0.0, -0.0, math.inf, -math.inf, math.nan, 5e-324, 1.7976931348623157e308, 0.1]


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from(SPECIAL) | st.floats(-1e6, 1e6), min_size=0, max_size=600),
       st.integers(1, 300))
def test_float_codes_decode_to_the_same_bits(pool, distinct):
    values = np.array(pool + [float(i) for i in range(distinct)], np.float64)
    codes = np.empty(len(values), np.uint8)
    dictionary = np.empty(K.MOST, np.float64)
    count = K.float_codes(values, codes, dictionary)
    kinds = len(np.unique(values.view(np.uint64)))
    if kinds > K.MOST:
        assert count == -1
    else:
        assert count == kinds
        assert np.array_equal(dictionary[codes].view(np.uint64), values.view(np.uint64))


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.text(max_size=4) | st.sampled_from(["", "seven77", "über", "eight888"]),
                max_size=400))
def test_string_codes_decode_to_the_same_cells(cells):
    data = [c.encode() for c in cells]
    offsets = np.zeros(len(data) + 1, np.int64)
    offsets[1:] = np.cumsum([len(d) for d in data])
    raw = np.frombuffer(b"".join(data) + b"\0", np.uint8)[:offsets[-1]].copy()
    codes = np.empty(len(data), np.uint8)
    dictionary = np.empty(K.MOST, np.int64)
    count = K.string_codes(offsets, raw, codes, dictionary)
    if any(len(d) > 7 for d in data) or len(set(data)) > K.MOST:
        assert count == -1
        return
    assert count == len(set(data))
    for cell, code in zip(data, codes):  # a packed cell: its bytes, its length in the top byte
        packed = int(dictionary[code])
        assert packed >> 56 == len(cell)
        assert (packed & ((1 << 56) - 1)).to_bytes(7, "little")[:len(cell)] == cell


N = 20_000


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> str:
    """Tiles of 2,000 cells: few-valued floats and flags (coded), a many-valued float (not),
    a float that has few values in the first tiles only, and a flag over 7 bytes late on."""
    uri = str(tmp_path_factory.mktemp("tile_codes") / "t")
    rng = np.random.default_rng(3)
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 10**6), tile=10**4, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=2000, attrs=[
        tiledb.Attr("flag", dtype=str, var=True, filters=[tiledb.ZstdFilter()]),
        tiledb.Attr("status", dtype="ascii", var=True),
        tiledb.Attr("qty", dtype=np.float64, filters=[tiledb.ZstdFilter()]),
        tiledb.Attr("disc", dtype=np.float64),
        tiledb.Attr("price", dtype=np.float64),
        tiledb.Attr("mixed", dtype=np.float64),
    ]))
    d = np.arange(N, dtype=np.int64) * 7
    flags = np.array(["A", "N", "R", "über"], dtype=object)[rng.integers(0, 4, N)]
    flags[N - 3000:] = "a longer flag"
    mixed = rng.integers(0, 20, N) / 4.0
    mixed[N // 2:] = rng.random(N - N // 2)
    with tiledb.open(uri, "w") as A:
        A[d] = {"flag": flags,
                "status": np.array(["F", "O"], dtype=object)[rng.integers(0, 2, N)],
                "qty": rng.integers(1, 51, N).astype(np.float64),
                "disc": np.array([0.0, -0.0, 0.05, 0.1, math.inf, math.nan])[
                    rng.integers(0, 6, N)],
                "price": rng.integers(10**5, 10**7, N) / 100.0,
                "mixed": mixed}
    return uri


@pytest.fixture(autouse=True)
def tile_chunks(monkeypatch):
    monkeypatch.setattr(scan_step, "CHUNK_CELLS", 2000)  # a chunk a tile


@pytest.fixture(scope="module")
def oracle(table):
    con = duckdb.connect()
    con.register("t", oracle_table(table))
    return con


QUERIES = [
    "SELECT flag, status, sum(qty), sum(price), sum(price * (1 - disc)), "
    "sum(price * (1 - disc) * (1 + qty)), avg(qty), avg(disc), count(*) FROM t "
    "GROUP BY flag, status",
    "SELECT status, sum(mixed), sum(mixed * qty - disc), min(qty), max(mixed) FROM t "
    "GROUP BY status",
    "SELECT sum(qty * disc), avg(mixed), count(*) FROM t WHERE d BETWEEN 7000 AND 100000",
    "SELECT flag, sum(-qty + 0.5 * disc) FROM t WHERE qty > 10 GROUP BY flag",
    # tests over the codes: each dictionary entry once, then a byte a row
    "SELECT sum(price * disc), count(*) FROM t WHERE disc BETWEEN 0.05 AND 0.1 AND qty < 24",
    "SELECT count(*), sum(qty) FROM t WHERE disc > 0.05 OR disc IS NULL",
    "SELECT status, count(*), sum(price) FROM t WHERE disc IN (0.0, 0.1) AND qty <> 3 "
    "GROUP BY status",
    "SELECT count(*) FROM t WHERE disc NOT IN (0.05, 0.1) AND mixed >= 2.5",
    "SELECT count(*), sum(qty) FROM t WHERE disc >= 'inf'::DOUBLE",
    "SELECT count(*), min(price) FROM t WHERE disc > 1e300 AND qty BETWEEN 2 AND 40",
]


def _explained(con, sql: str) -> str:
    return con.sql(f"EXPLAIN ANALYZE {sql}").arrow()[0][0].as_py()


@pytest.mark.parametrize("sql", QUERIES)
def test_sums_over_coded_tiles_equal_duckdb(table, oracle, sql):
    tile_cache().clear()
    con = tdbsql.connect().register("t", table)
    first = con.sql(sql).arrow()  # reads the tiles into the cache, with their codes
    again = con.sql(sql).arrow()  # sums them by their codes
    want = oracle.sql(sql).arrow()
    want = want.read_all() if isinstance(want, pa.RecordBatchReader) else want
    for got in (first, again):
        assert got.column_names == want.column_names
        assert _close(_rows(got), _rows(want)), sql


def test_explain_analyze_counts_the_coded_tiles(table):
    tile_cache().clear()
    con = tdbsql.connect().register("t", table)
    sql = QUERIES[0]
    # a tile read once is not encoded: its codes come with the cache's first hit
    line = next(line for line in _explained(con, sql).splitlines() if "Summed" in line)
    assert line.strip() == "Summed in the scan: 8 tiles"
    line = next(line for line in _explained(con, sql).splitlines() if "Summed" in line)
    # 10 tiles: 8 with flags of at most 7 bytes (coded), 2 with the long flag (not)
    assert line.strip() == "Summed in the scan: 8 tiles, 8 of them by their dictionary codes"


def test_tiles_are_coded_only_in_the_cache(table, monkeypatch):
    """With the cache off, no tile gets codes (nothing would read them twice); the sums are
    the same."""
    monkeypatch.setattr(tile_cache(), "budget", 0)
    con = tdbsql.connect().register("t", table)
    line = next(line for line in _explained(con, QUERIES[0]).splitlines() if "Summed" in line)
    assert "dictionary codes" not in line


def _rows(table: pa.Table) -> list[tuple]:
    key = lambda row: tuple((v is None, str(v)) for v in row)  # noqa: E731
    return sorted(zip(*[c.to_pylist() for c in table.columns]), key=key)


def _close(rows: list[tuple], expected: list[tuple]) -> bool:
    if len(rows) != len(expected):
        return False
    for a, b in zip(rows, expected):
        for u, v in zip(a, b):
            if isinstance(v, float):
                if math.isnan(v):
                    if not (isinstance(u, float) and math.isnan(u)):
                        return False
                elif u != pytest.approx(v, rel=1e-12, abs=1e-9):
                    return False
            elif u != v:
                return False
    return True


def test_filters_test_the_dictionary_not_the_cells(table, oracle, monkeypatch):
    """A float64 test over a coded tile runs once per dictionary entry and then reads one
    byte a row: a range of codes for an interval (the dictionary is sorted), a lookup for
    entries that pass apart (``kernels.predicate``)."""
    from tdbsql.engine import stored_filter
    calls = {"keep_code_range": [], "keep_coded": []}
    for name, rows in calls.items():
        def counted(*args, original=getattr(stored_filter.kernels, name), rows=rows):
            rows.append(len(args[0]))
            return original(*args)
        monkeypatch.setattr(stored_filter.kernels, name, counted)
    con = tdbsql.connect().register("t", table)
    for sql, kernel in ((QUERIES[4], "keep_code_range"), (QUERIES[6], "keep_coded")):
        tile_cache().clear()
        con.sql(sql).arrow()
        calls[kernel].clear()
        got = con.sql(sql).arrow()
        assert sum(calls[kernel]) >= N // 2, sql  # every tile once cached
        want = oracle.sql(sql).arrow()
        want = want.read_all() if isinstance(want, pa.RecordBatchReader) else want
        assert _close(_rows(got), _rows(want)), sql


def test_float_dictionaries_are_sorted_in_sql_order(table):
    from tdbsql.storage.tiles import FieldSpec
    from tdbsql.storage.tile_codes import with_codes
    from tdbsql.engine.column import Column
    from tdbsql.datatypes import Datatype
    values = np.array([0.1, math.nan, -0.0, -math.inf, 0.0, 0.1, 5.0, -0.0] * 64)
    spec = FieldSpec("x", "a0", Datatype.FLOAT64, 1, None)
    coded = with_codes(Column(values), spec)
    assert np.array_equal(coded.dictionary[coded.codes].view(np.uint64), values.view(np.uint64))
    ordered = coded.dictionary[~np.isnan(coded.dictionary)]
    assert list(ordered) == sorted(ordered) and math.isnan(coded.dictionary[-1])
