"""Dictionary codes kept beside cached tiles (``storage.tile_codes``, ``kernels.tile_codes``):
codes decode to exactly the stored cells, and aggregates summed from coded tiles
(``engine.scan_sums``) equal DuckDB over the cells ``tiledb`` reads."""

from __future__ import annotations

import math

import numpy as np
import pytest
import tiledb
from hypothesis import given, settings
from hypothesis import strategies as st

import tdbsql
from sql_fixtures import assert_same_table, duckdb_over
from tdbsql.engine import scan_step, stored_filter
from tdbsql.kernels import tile_codes as K
from tdbsql.storage.tile_cache import tile_cache
from tdbsql.datatypes import Datatype
from tdbsql.engine.column import Column
from tdbsql.format.filter_pipeline import FilterPipeline
from tdbsql.storage.tile_codes import string_dictionary, with_codes
from tdbsql.storage.tiles import FieldSpec

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
@given(st.lists(st.sampled_from(SPECIAL) | st.integers(-99, 99).map(float), min_size=256,
                max_size=600), st.data())
def test_rows_taken_from_a_coded_tile_keep_their_bits_and_codes(pool, data):
    """``Column.take`` of a coded tile reads the codes and looks the values up: the same bits
    as the stored cells (-0.0, NaN), and codes that still decode to them."""
    values = np.array(pool, np.float64)
    spec = FieldSpec("f", "f", Datatype.FLOAT64, 1, FilterPipeline())
    coded = with_codes(Column(values), spec)
    assert coded.codes is not None  # at most 8 + 199 distinct values
    picks = np.array(data.draw(st.lists(st.integers(0, len(values) - 1), max_size=300)),
                     np.int64)
    taken = coded.take(picks)
    assert np.array_equal(taken.values.view(np.uint64), values[picks].view(np.uint64))
    assert np.array_equal(taken.dictionary[taken.codes].view(np.uint64),
                          values[picks].view(np.uint64))


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
    # and unpacked again, as the stored filter's text tests read a dictionary
    strings, ends = string_dictionary(dictionary[:count])
    unpacked = [bytes(strings[ends[i]:ends[i + 1]]) for i in range(count)]
    assert [unpacked[code] for code in codes] == data


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
    return duckdb_over(table)


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
    # text tests over short strings' codes: each dictionary entry matched once
    "SELECT count(*), sum(qty) FROM t WHERE flag IN ('A', 'über') AND status = 'F'",
    "SELECT status, count(*), sum(price) FROM t WHERE flag NOT LIKE '%b%' GROUP BY status",
    "SELECT count(*) FROM t WHERE flag <> 'N' AND status LIKE 'F%' AND qty > 10",
    "SELECT flag, count(*) FROM t WHERE status NOT IN ('O', 'X') AND flag LIKE '_' "
    "GROUP BY flag",
    "SELECT count(*) FROM t WHERE flag = 'zz' AND qty > 0",
]


def _explained(con, sql: str) -> str:
    return con.sql(f"EXPLAIN ANALYZE {sql}").arrow()[0][0].as_py()


@pytest.mark.parametrize("sql", QUERIES)
def test_sums_over_coded_tiles_equal_duckdb(table, oracle, sql):
    tile_cache().clear()
    con = tdbsql.connect().register("t", table)
    first = con.sql(sql).arrow()  # reads the tiles into the cache
    again = con.sql(sql).arrow()  # the cache's first hit: the tiles get their codes, read
    for got in (first, again):
        assert_same_table(got, oracle.sql(sql).arrow())


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
    monkeypatch.setattr(tile_cache(), "configured", 0)  # as TDBSQL_TILE_CACHE_MB=0
    monkeypatch.setattr(tile_cache(), "budget", 0)
    con = tdbsql.connect().register("t", table)
    line = next(line for line in _explained(con, QUERIES[0]).splitlines() if "Summed" in line)
    assert "dictionary codes" not in line


def test_text_tests_read_the_codes(table, oracle, monkeypatch):
    """Once its tiles have codes, a text test matches each dictionary entry once and keeps
    rows by their codes (``stored_filter._test_like_codes``), with DuckDB's rows."""
    calls = []
    by_codes = stored_filter._test_like_codes

    def counted(*args):
        calls.append(args[0].column)
        return by_codes(*args)

    monkeypatch.setattr(stored_filter, "_test_like_codes", counted)
    tile_cache().clear()
    con = tdbsql.connect().register("t", table)
    sql = "SELECT d FROM t WHERE flag IN ('A', 'über') AND status <> 'F' ORDER BY d"
    assert con.sql(sql).fetchall() == oracle.sql(sql).fetchall()
    assert not calls  # read once: no codes yet
    assert con.sql(sql).fetchall() == oracle.sql(sql).fetchall()
    assert set(calls) == {"flag", "status"}
