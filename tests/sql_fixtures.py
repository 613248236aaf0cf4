"""Fixture arrays for the SQL behaviour files and the differential test, built with ``tiledb``.

``build_fixtures(root)`` writes every array below ``root`` and returns ``{name: path}``;
``oracle_table(path, timestamp)`` reads one back with ``tiledb`` (the oracle, never tdbsql) as a
pyarrow Table in the Arrow types tdbsql documents (DATETIME_DAY -> date32, DATETIME_MS ->
timestamp[ms], strings -> string), NULLs intact.  Test modules import the ``sql_arrays``
fixture from here (``from sql_fixtures import sql_arrays``); conftest.py is not touched.

The arrays (all small, deterministic):

- ``items``  sparse, dim ``id`` int64; attrs ``grp`` str, ``qty`` int32?, ``price`` float64?,
  ``name`` utf-8 str? (non-ASCII), ``day`` date?, ``ts`` timestamp[ms], ``big`` int64,
  ``ok`` bool?  (``?`` = nullable).  Two fragments, small capacity so several tiles.
- ``grid``   dense 6x5, dims ``r``, ``c`` int32; attrs ``v`` float64, ``n`` int64, ``label`` str.
- ``hist``   sparse, dim ``k`` int32; attrs ``v`` int64, ``tag`` str.  Writes at 1000, 2000
  (overwrites k 5..8, adds 13..15), a delete at 2500 (``v < 35``: k 1..3), a write at 3000
  (re-adds k 2, overwrites k 10, adds k 20).
- ``dept`` / ``emp``  a join pair: ``dept(dept_id, dname, city?, budget)``,
  ``emp(emp_id, dept_id?, ename, salary?, hired, manager_id?)``; some emp.dept_id NULL or
  pointing at a missing department, one department without employees.
- ``da`` / ``db``  random-ish arrays for the differential test: ``da(id, a?, b?, x?, s?)``,
  ``db(id, k?, y?, t?)`` with small value ranges so groups and join keys collide.
- ``dw``  for the wide differential test (windows, strings, dates): ``dw(id, g?, v?, f?, s?,
  d?, ts?, flag?)``; ``s`` holds LIKE metacharacters, a backslash, padding and UTF-8, ``d``
  spans a year end and a leap day, ``f`` quarters with ties.
- ``dx``  edge values for the edge differential test: ``dx(id, g?, v?, f?, r?, s?, d?, ts?)``;
  ``v`` int64 with negatives and ties, ``f`` double with NaN, +-inf, -0.0, 1e300 and ties,
  ``r`` float32, ``s`` UTF-8 with combining marks, ``ß``/``İ``, emoji, blanks and '', ``d``
  month ends, leap days and dates centuries from 1970, ``ts`` before 1970 with fractions.
- ``grown``  sparse, dim ``k`` int64 (domain 1..1000), attr ``v`` int64, made with the current
  domain 1..10: a write at 1000 (k 1..10), ``expand_current_domain`` to 1..100 stamped 2000, a
  write at 3000 (k 50..52) and then one stamped 500 (k 70, 71: outside the older domain).
"""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pytest

tiledb = pytest.importorskip("tiledb")

TIME_TRAVEL_STAMPS = (1000, 2000, 2500, 3000)

NAMES = ["Zürich", "São Paulo", "Ωmega", "東京", "straße", "", "naïve café", "Oslo",
         "oslo", "ÅSE", "Éire", "x_y%z", "Łódź", "Kyiv", "emoji 🙂", "ñandú"]
GROUPS = ["alpha", "beta", "gamma", "Beta", "δelta"]


def _arr(values, mask=None, type=None):
    return pa.array(values, mask=None if mask is None else np.asarray(mask), type=type)


def _build_items(uri: str) -> None:
    dom = tiledb.Domain(tiledb.Dim("id", domain=(1, 1000), tile=16, dtype=np.int64))
    schema = tiledb.ArraySchema(domain=dom, sparse=True, capacity=8, attrs=[
        tiledb.Attr("grp", dtype=str, var=True),
        tiledb.Attr("qty", dtype=np.int32, nullable=True),
        tiledb.Attr("price", dtype=np.float64, nullable=True),
        tiledb.Attr("name", dtype=str, var=True, nullable=True),
        tiledb.Attr("day", dtype="datetime64[D]", nullable=True),
        tiledb.Attr("ts", dtype="datetime64[ms]"),
        tiledb.Attr("big", dtype=np.int64),
        tiledb.Attr("ok", dtype=np.bool_, nullable=True),
    ])
    tiledb.Array.create(uri, schema)
    rng = np.random.default_rng(7)
    n = 48
    ids = np.arange(1, n + 1, dtype=np.int64) * 3 - (np.arange(n) % 3)  # gaps, unique
    grp = np.array([GROUPS[i] for i in rng.integers(0, len(GROUPS), n)], dtype=object)
    qty = rng.integers(-20, 60, n).astype(np.int32)
    qty_null = rng.random(n) < 0.15
    price = rng.integers(0, 100000, n) / 100.0
    price_null = rng.random(n) < 0.12
    name = np.array([NAMES[i % len(NAMES)] for i in rng.permutation(n)], dtype=object)
    name_null = rng.random(n) < 0.1
    base = np.datetime64("2023-11-20", "D")
    day = base + rng.integers(0, 120, n).astype("timedelta64[D]")
    day_null = rng.random(n) < 0.1
    ts = (np.datetime64("2024-01-01T00:00:00", "ms")
          + (rng.integers(0, 90 * 24 * 3600, n) * 1000).astype("timedelta64[ms]"))
    big = rng.integers(-10**6, 10**6, n).astype(np.int64)
    big[:4] = [2**62, 2**62 + 12345, -(2**62), 9_000_000_000_000_000_000]
    ok = rng.random(n) < 0.6
    ok_null = rng.random(n) < 0.15
    halves = (slice(0, n // 2), slice(n // 2, n))
    for stamp, part in zip((100, 200), halves):
        with tiledb.open(uri, "w", timestamp=stamp) as A:
            A[ids[part]] = {
                "grp": grp[part],
                "qty": _arr(qty[part], qty_null[part], pa.int32()),
                "price": _arr(price[part], price_null[part], pa.float64()),
                "name": _arr(list(name[part]), name_null[part], pa.string()),
                "day": _arr(day[part], day_null[part], pa.date32()),
                "ts": ts[part],
                "big": big[part],
                "ok": _arr(ok[part], ok_null[part], pa.bool_()),
            }


def _build_grid(uri: str) -> None:
    dom = tiledb.Domain(tiledb.Dim("r", domain=(1, 6), tile=3, dtype=np.int32),
                        tiledb.Dim("c", domain=(1, 5), tile=5, dtype=np.int32))
    schema = tiledb.ArraySchema(domain=dom, sparse=False, attrs=[
        tiledb.Attr("v", dtype=np.float64),
        tiledb.Attr("n", dtype=np.int64),
        tiledb.Attr("label", dtype=str, var=True),
    ])
    tiledb.Array.create(uri, schema)
    r, c = np.meshgrid(np.arange(1, 7), np.arange(1, 6), indexing="ij")
    v = (r * 10 + c) / 4.0
    n = (r * c) % 7 - 2
    labels = np.array([["n", "e", "s", "w", "ü"][(i + j) % 5] + str(i)
                       for i in range(1, 7) for j in range(1, 6)], dtype=object).reshape(6, 5)
    with tiledb.open(uri, "w", timestamp=100) as A:
        A[:, :] = {"v": v.astype(np.float64), "n": n.astype(np.int64), "label": labels}


def _build_hist(uri: str) -> None:
    dom = tiledb.Domain(tiledb.Dim("k", domain=(1, 100), tile=10, dtype=np.int32))
    schema = tiledb.ArraySchema(domain=dom, sparse=True, capacity=4, allows_duplicates=False,
                                attrs=[tiledb.Attr("v", dtype=np.int64),
                                       tiledb.Attr("tag", dtype=str, var=True)])
    tiledb.Array.create(uri, schema)

    def write(stamp, keys, values, tag):
        keys = np.asarray(keys, dtype=np.int32)
        with tiledb.open(uri, "w", timestamp=stamp) as A:
            A[keys] = {"v": np.asarray(values, dtype=np.int64),
                       "tag": np.array([tag] * len(keys), dtype=object)}

    write(1000, range(1, 13), [k * 10 for k in range(1, 13)], "v1")
    write(2000, [5, 6, 7, 8, 13, 14, 15], [51, 61, 71, 81, 130, 140, 150], "v2")
    with tiledb.open(uri, "d", timestamp=2500) as A:
        A.query(cond="v < 35").submit()
    write(3000, [2, 10, 20], [222, 1003, 200], "v3")


def _build_dept_emp(dept_uri: str, emp_uri: str) -> None:
    dom = tiledb.Domain(tiledb.Dim("dept_id", domain=(1, 50), tile=10, dtype=np.int32))
    tiledb.Array.create(dept_uri, tiledb.ArraySchema(domain=dom, sparse=True, attrs=[
        tiledb.Attr("dname", dtype=str, var=True),
        tiledb.Attr("city", dtype=str, var=True, nullable=True),
        tiledb.Attr("budget", dtype=np.float64),
    ]))
    with tiledb.open(dept_uri, "w", timestamp=100) as A:
        A[np.array([1, 2, 3, 4, 5], dtype=np.int32)] = {
            "dname": np.array(["Engineering", "Sales", "Façade", "R&D", "Empty"], dtype=object),
            "city": _arr(["Zürich", "Oslo", None, "東京", "Oslo"], type=pa.string()),
            "budget": np.array([1_250_000.5, 480_000.0, 75_000.25, 990_000.0, 10.0]),
        }
    dom = tiledb.Domain(tiledb.Dim("emp_id", domain=(1, 1000), tile=32, dtype=np.int32))
    tiledb.Array.create(emp_uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=5, attrs=[
        tiledb.Attr("dept_id", dtype=np.int32, nullable=True),
        tiledb.Attr("ename", dtype=str, var=True),
        tiledb.Attr("salary", dtype=np.int64, nullable=True),
        tiledb.Attr("hired", dtype="datetime64[D]"),
        tiledb.Attr("manager_id", dtype=np.int32, nullable=True),
    ]))
    rows = [  # emp_id, dept_id, ename, salary, hired, manager_id
        (1, 1, "Ada", 9100, "2015-03-01", None),
        (2, 1, "Björn", 7200, "2018-07-15", 1),
        (3, 1, "Chloé", 7200, "2019-01-02", 1),
        (4, 2, "Dmitri", 5100, "2016-11-30", None),
        (5, 2, "Eun-ji", None, "2021-05-05", 4),
        (6, 2, "Fatima", 4800, "2022-02-28", 4),
        (7, 3, "Grzegorz", 6100, "2017-08-08", 1),
        (8, 4, "Hana", 8800, "2014-12-31", 1),
        (9, 4, "Iñaki", 6600, "2020-10-10", 8),
        (10, None, "Jürgen", 3000, "2023-04-01", None),
        (11, 9, "Kwame", 4100, "2023-06-15", 4),
        (12, 4, "李娜", None, "2024-01-20", 8),
        (13, 1, "Mårten", 7200, "2020-02-29", 2),
        (14, None, "Noor", None, "2024-02-01", 99),
    ]
    with tiledb.open(emp_uri, "w", timestamp=100) as A:
        A[np.array([r[0] for r in rows], dtype=np.int32)] = {
            "dept_id": _arr([r[1] for r in rows], type=pa.int32()),
            "ename": np.array([r[2] for r in rows], dtype=object),
            "salary": _arr([r[3] for r in rows], type=pa.int64()),
            "hired": np.array([r[4] for r in rows], dtype="datetime64[D]"),
            "manager_id": _arr([r[5] for r in rows], type=pa.int32()),
        }


def _by_id(uri: str, tile: int, capacity: int, columns: dict) -> None:
    """A sparse array over one int64 dimension ``id`` (1..10,000) with ``columns`` ({name:
    dtype}) as nullable attributes (``str``: var-sized UTF-8)."""
    dom = tiledb.Domain(tiledb.Dim("id", domain=(1, 10_000), tile=tile, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=capacity, attrs=[
        tiledb.Attr(name, dtype=dtype, var=dtype is str, nullable=True)
        for name, dtype in columns.items()]))


def _build_differential(a_uri: str, b_uri: str) -> None:
    rng = np.random.default_rng(2024)
    words = np.array(["a", "b", "ab", "Ä", "bä", "", "zz"], dtype=object)
    _by_id(a_uri, 64, 16, {"a": np.int32, "b": np.int64, "x": np.float64, "s": str})
    n = 60
    ids = np.sort(rng.choice(np.arange(1, 500), n, replace=False)).astype(np.int64)
    with tiledb.open(a_uri, "w", timestamp=100) as A:
        A[ids] = {
            "a": _arr(rng.integers(-5, 6, n).astype(np.int32), rng.random(n) < 0.15, pa.int32()),
            "b": _arr(rng.integers(-1000, 1000, n), rng.random(n) < 0.15, pa.int64()),
            "x": _arr(rng.integers(-500, 500, n) / 8.0, rng.random(n) < 0.15, pa.float64()),
            "s": _arr(list(words[rng.integers(0, len(words), n)]), rng.random(n) < 0.15,
                      pa.string()),
        }
    _by_id(b_uri, 64, 16, {"k": np.int32, "y": np.float64, "t": str})
    m = 25
    ids = np.sort(rng.choice(np.arange(1, 500), m, replace=False)).astype(np.int64)
    with tiledb.open(b_uri, "w", timestamp=100) as A:
        A[ids] = {
            "k": _arr(rng.integers(-5, 6, m).astype(np.int32), rng.random(m) < 0.15, pa.int32()),
            "y": _arr(rng.integers(-500, 500, m) / 4.0, rng.random(m) < 0.15, pa.float64()),
            "t": _arr(list(words[rng.integers(0, len(words), m)]), rng.random(m) < 0.15,
                      pa.string()),
        }


WIDE_WORDS = ["abc", "ABC", "a_c", "a%c", "50%", "x\\y", "  pad ", "Ärger", "straße", "東京",
              "", "ñandú", "MiXeD Case", "a.b", "abcabc", "_", "%"]


def _build_wide(uri: str) -> None:
    rng = np.random.default_rng(99)
    _by_id(uri, 32, 8, {"g": np.int32, "v": np.int64, "f": np.float64, "s": str,
                        "d": "datetime64[D]", "ts": "datetime64[ms]", "flag": np.bool_})
    n = 40
    ids = np.sort(rng.choice(np.arange(1, 300), n, replace=False)).astype(np.int64)
    day = np.datetime64("2023-12-20", "D") + rng.integers(0, 80, n).astype("timedelta64[D]")
    ts = (np.datetime64("2024-02-27T00:00:00", "ms")
          + (rng.integers(0, 4 * 24 * 60, n) * 60_000).astype("timedelta64[ms]"))
    words = np.array(WIDE_WORDS, dtype=object)
    with tiledb.open(uri, "w", timestamp=100) as A:
        A[ids] = {
            "g": _arr(rng.integers(0, 4, n).astype(np.int32), rng.random(n) < 0.12, pa.int32()),
            "v": _arr(rng.integers(-10, 11, n), rng.random(n) < 0.15, pa.int64()),
            "f": _arr(rng.integers(-40, 41, n) / 4.0, rng.random(n) < 0.15, pa.float64()),
            "s": _arr(list(words[rng.integers(0, len(words), n)]), rng.random(n) < 0.12,
                      pa.string()),
            "d": _arr(day, rng.random(n) < 0.12, pa.date32()),
            "ts": _arr(ts, rng.random(n) < 0.12, pa.timestamp("ms")),
            "flag": _arr(rng.random(n) < 0.5, rng.random(n) < 0.15, pa.bool_()),
        }


EDGE_STRINGS = ["", " ", "abc", "ABC", "ÄÖü", "東京", "emoji 🙂", "a_b", "a%b", "x\\y",
                "  pad  ", "Straße", "İstanbul", "naïve café", "ab,cd,,ef", "a.b.c", "aaa",
                "e\u0301", "ß", "Ωmega", "tab\tx"]
EDGE_FLOATS = [0.0, -0.0, 1.5, -1.5, 2.5, -2.5, 0.5, 3.0, 1e300, -1e-300, float("nan"),
               float("inf"), float("-inf"), 0.1, 7.25, 1.5, 100.125, -7.75]
EDGE_DATES = ["2024-01-31", "2024-02-29", "2023-02-28", "2024-03-31", "2023-12-31", "1969-12-31",
              "1900-03-01", "2000-02-29", "1970-01-01", "1960-06-15", "2100-02-28", "1600-02-29",
              "2024-08-31", "2021-01-02", "2024-11-30"]
EDGE_STAMPS = ["2024-01-31T23:59:59.999", "2024-02-29T12:00:00", "1969-12-31T23:59:59.500",
               "1969-12-31T00:00:00.001", "1970-01-01T00:00:00", "2023-12-31T23:00:00",
               "1900-01-01T12:34:56.789", "2000-02-29T23:59:59", "1950-06-15T06:07:08.009",
               "2024-06-30T18:45:00"]


def _build_edges(uri: str) -> None:
    rng = np.random.default_rng(1234)
    _by_id(uri, 32, 8, {"g": np.int32, "v": np.int64, "f": np.float64, "r": np.float32,
                        "s": str, "d": "datetime64[D]", "ts": "datetime64[ms]"})
    n = 48
    ids = np.arange(1, n + 1, dtype=np.int64) * 2
    pick = lambda values: [values[k] for k in rng.integers(0, len(values), n)]  # noqa: E731
    with tiledb.open(uri, "w", timestamp=100) as A:
        A[ids] = {
            "g": _arr(rng.integers(0, 3, n).astype(np.int32), rng.random(n) < 0.1, pa.int32()),
            "v": _arr(rng.integers(-9, 10, n), rng.random(n) < 0.12, pa.int64()),
            "f": _arr(np.array(pick(EDGE_FLOATS)), rng.random(n) < 0.1, pa.float64()),
            "r": _arr(np.array(pick(EDGE_FLOATS[:8] + [0.1, 7.25]), np.float32),
                      rng.random(n) < 0.1, pa.float32()),
            "s": _arr(pick(EDGE_STRINGS), rng.random(n) < 0.1, pa.string()),
            "d": _arr(np.array(pick(EDGE_DATES), "datetime64[D]"), rng.random(n) < 0.1,
                      pa.date32()),
            "ts": _arr(np.array(pick(EDGE_STAMPS), "datetime64[ms]"), rng.random(n) < 0.1,
                       pa.timestamp("ms")),
        }


def _build_market(trades_uri: str, quotes_uri: str) -> None:
    """Two time series over (sym, ts): trades (a nullable quantity) and quotes (bid, ask),
    the quotes in two fragments (the second overwrites three of them), for ASOF joins."""
    syms = ["ABC", "XYZ", "Q", "ZZ"]
    start = np.datetime64("2024-03-01T09:30:00", "ms")
    rng = np.random.default_rng(99)
    for uri, attrs in ((trades_uri, [tiledb.Attr("qty", dtype=np.int32, nullable=True)]),
                       (quotes_uri, [tiledb.Attr("bid", dtype=np.float64),
                                     tiledb.Attr("ask", dtype=np.float64)])):
        dom = tiledb.Domain(
            tiledb.Dim("sym", domain=(None, None), tile=None, dtype="ascii"),
            tiledb.Dim("ts", domain=(start, start + np.timedelta64(10**8, "ms")),
                       tile=np.timedelta64(10**6, "ms"), dtype="datetime64[ms]"))
        tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=8,
                                                    attrs=attrs))
    n = 60
    sym = np.array([syms[i] for i in rng.integers(0, 3, n)])  # ZZ never trades
    ts = start + (rng.choice(10**6, n, replace=False) * 37).astype("timedelta64[ms]")
    with tiledb.open(trades_uri, "w", timestamp=100) as A:
        A[sym, ts] = {"qty": _arr(rng.integers(1, 500, n).astype(np.int32),
                                  rng.random(n) < 0.1, pa.int32())}
    m = 80
    qsym = np.array([syms[i] for i in rng.integers(0, 4, m)])  # ZZ only quotes
    qts = start + (rng.choice(10**6, m, replace=False) * 41).astype("timedelta64[ms]")
    bid = np.round(rng.uniform(10, 20, m), 2)
    with tiledb.open(quotes_uri, "w", timestamp=100) as A:
        A[qsym, qts] = {"bid": bid, "ask": bid + 0.05}
    with tiledb.open(quotes_uri, "w", timestamp=200) as A:
        A[qsym[:3], qts[:3]] = {"bid": bid[:3] + 1, "ask": bid[:3] + 1.05}


def _build_grown(uri: str) -> None:
    dom = tiledb.Domain(tiledb.Dim("k", domain=(1, 1000), tile=10, dtype=np.int64))
    schema = tiledb.ArraySchema(domain=dom, sparse=True, attrs=[tiledb.Attr("v", dtype=np.int64)])
    schema.set_current_domain(_current_domain(dom, 10))
    tiledb.Array.create(uri, schema)

    def write(stamp, keys):
        with tiledb.open(uri, "w", timestamp=stamp) as A:
            A[np.asarray(keys, dtype=np.int64)] = {"v": np.asarray(keys, dtype=np.int64) * 10}

    write(1000, range(1, 11))
    evolution = tiledb.ArraySchemaEvolution(tiledb.default_ctx())
    evolution.expand_current_domain(_current_domain(dom, 100))
    evolution.timestamp(2000)
    evolution.array_evolve(uri)
    write(3000, [50, 51, 52])
    write(500, [70, 71])


def _current_domain(dom, hi: int):
    box = tiledb.NDRectangle(tiledb.default_ctx(), dom)
    box.set_range(0, 1, hi)
    current = tiledb.CurrentDomain(tiledb.default_ctx())
    current.set_ndrectangle(box)
    return current


FIXTURES = ("items", "grid", "hist", "dept", "emp", "da", "db", "dw", "dx", "trades", "quotes",
            "grown")


def build_fixtures(root: str) -> dict[str, str]:
    """Write every fixture array under ``root`` (once) and return ``{name: path}``."""
    paths = {name: os.path.join(root, name) for name in FIXTURES}
    if not os.path.isdir(paths["dw"]):  # added later: built on its own in an older root
        _build_wide(paths["dw"])
    if not os.path.isdir(paths["dx"]):
        _build_edges(paths["dx"])
    if not os.path.isdir(paths["trades"]):
        _build_market(paths["trades"], paths["quotes"])
    if not os.path.isdir(paths["grown"]):
        _build_grown(paths["grown"])
    if all(os.path.isdir(p) for p in paths.values()):
        return paths
    _build_items(paths["items"])
    _build_grid(paths["grid"])
    _build_hist(paths["hist"])
    _build_dept_emp(paths["dept"], paths["emp"])
    _build_differential(paths["da"], paths["db"])
    return paths


# -- the oracle's view of an array ------------------------------------------------------------

_TEMPORAL = {"datetime64[D]": pa.date32(), "datetime64[ms]": pa.timestamp("ms"),
             "datetime64[s]": pa.timestamp("s"), "datetime64[us]": pa.timestamp("us"),
             "datetime64[ns]": pa.timestamp("ns")}


def oracle_of(paths: dict):
    """A DuckDB connection with each array of ``paths`` ({name: path}) as a table, read by
    tiledb (``oracle_table``)."""
    import duckdb

    con = duckdb.connect()
    for name, path in paths.items():
        con.register(name, oracle_table(path))
    return con


def oracle_table(path: str, timestamp=None) -> pa.Table:
    """All cells of the array at ``timestamp`` read by ``tiledb``, as Arrow (dims first).

    Read through numpy masked arrays (TileDB-Py's Arrow path fails on a nullable
    DATETIME_DAY attribute), then typed as tdbsql documents.
    """
    with tiledb.open(path, timestamp=timestamp) as A:
        schema = A.schema
        if schema.sparse:
            raw = A.query(coords=True, return_arrow=False)[:]
        else:
            raw = A.query(coords=True, return_arrow=False)[tuple(
                slice(None) for _ in range(schema.ndim))]
        fields = [schema.domain.dim(i) for i in range(schema.ndim)] + \
                 [schema.attr(i) for i in range(schema.nattr)]
        columns, names = [], []
        for f in fields:
            values = raw[f.name]
            mask = None
            if isinstance(values, np.ma.MaskedArray):
                mask = np.ma.getmaskarray(values).ravel()
                values = values.data
            values = np.asarray(values).ravel()
            kind = np.dtype(f.dtype).kind
            if kind in "USO" or f.dtype is str:
                # an ASCII attribute reads as bytes: its text, not the bytes' repr
                col = pa.array([None if mask is not None and m else
                                v.decode() if isinstance(v, bytes) else str(v)
                                for v, m in zip(values, mask if mask is not None
                                                else [False] * len(values))], pa.string())
            elif kind == "M":
                target = _TEMPORAL[str(np.dtype(f.dtype))]
                unit = "D" if pa.types.is_date32(target) else target.unit
                ints = values.astype(f"datetime64[{unit}]").astype(np.int64)
                storage = pa.int32() if pa.types.is_date32(target) else pa.int64()
                col = pa.array(ints, storage, mask=mask).cast(target) \
                    if not pa.types.is_date32(target) else \
                    pa.array(ints.astype(np.int32), pa.int32(), mask=mask).view(target)
            else:
                col = pa.array(values, mask=mask)
            columns.append(col)
            names.append(f.name)
    return pa.table(columns, names=names)


@pytest.fixture(scope="session")
def sql_arrays(tmp_path_factory) -> dict[str, str]:
    """``{fixture name: path}`` of the arrays above, built once per test session."""
    return build_fixtures(str(tmp_path_factory.mktemp("sql_arrays")))


def assert_same_rows(got: list[tuple], want: list[tuple], rel: float = 1e-12,
                     absolute: float = 0.0) -> None:
    """Rows equal in order: floats to ``rel`` (and ``absolute``; NaN equals NaN), everything
    else exactly."""
    assert len(got) == len(want), (got[:5], want[:5])
    for got_row, want_row in zip(got, want):
        for ours, theirs in zip(got_row, want_row):
            if isinstance(theirs, float):
                assert ours == pytest.approx(theirs, rel=rel, abs=absolute, nan_ok=True)
            else:
                assert ours == theirs


def assert_same_table(got: pa.Table, want, rel: float = 1e-12, absolute: float = 1e-9) -> None:
    """``got`` (tdbsql's result) has DuckDB's column names and, in any order, its rows
    (``assert_same_rows``).  ``want``: a DuckDB Arrow result (table or batch reader)."""
    want = want.read_all() if isinstance(want, pa.RecordBatchReader) else want
    assert got.column_names == want.column_names
    assert_same_rows(_sorted_rows(got), _sorted_rows(want), rel, absolute)


def _sorted_rows(table: pa.Table) -> list[tuple]:
    key = lambda row: tuple((v is None, str(v)) for v in row)  # noqa: E731
    return sorted(zip(*[c.to_pylist() for c in table.columns]), key=key)


def duckdb_over(path: str, name: str = "t"):
    """A DuckDB connection holding the cells ``tiledb`` reads from the array at ``path`` as
    table ``name``."""
    import duckdb

    con = duckdb.connect()
    con.register(name, oracle_table(path))
    return con


def arrow_engines(table: pa.Table, name: str = "t"):
    """(tdbsql, DuckDB) connections that both hold the Arrow ``table`` as table ``name``, for
    differential tests over generated rows."""
    import duckdb

    import tdbsql

    ours, oracle = tdbsql.connect(), duckdb.connect()
    ours.register(name, table)
    oracle.register(name, table)
    return ours, oracle
