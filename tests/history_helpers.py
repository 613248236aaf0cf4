"""Helpers for the history conformance tests: build arrays with ``tiledb`` and compare what
tdbsql reads with what ``tiledb`` reads, cell for cell.

In: an array URI and a timestamp (``None``, ``t`` or ``(t1, t2)``).  Out: Arrow tables sorted by
the dimensions, with enumerations decoded to their labels, so that tables of both readers can
be compared with ``==`` on ``to_pylist()``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

import tdbsql

warnings.filterwarnings("ignore", category=FutureWarning)
warnings.filterwarnings("ignore", category=DeprecationWarning)

import tiledb  # noqa: E402  (after the warning filters: pandas/pyarrow warn on import)


def decoded(column) -> list:
    """Python values of an Arrow column; dictionary arrays become their labels."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if pa.types.is_dictionary(column.type):
        column = column.dictionary_decode()
    return column.to_pylist()


def sorted_rows(table: pa.Table, keys: list[str]) -> dict[str, list]:
    """Columns of ``table`` as Python lists, rows sorted by ``keys`` (the dimensions)."""
    if table.num_rows:
        order = pc.sort_indices(table, sort_keys=[(k, "ascending") for k in keys])
        table = table.take(order)
    return {name: decoded(table.column(name)) for name in table.column_names}


def duckdb_after_delete(source: pa.Table, where: str) -> pa.Table:
    """The rows DuckDB keeps of ``source`` after ``DELETE FROM t WHERE where``."""
    import duckdb

    con = duckdb.connect()
    con.register("src", source)
    con.sql("CREATE TABLE t AS SELECT * FROM src")
    con.sql(f"DELETE FROM t WHERE {where}")
    return con.sql("SELECT * FROM t").to_arrow_table()


def assert_deleted_as_duckdb(path: str, source: pa.Table, where: str) -> None:
    """After a DELETE of ``where`` from the array at ``path`` (cells ``source``, with ``x``):
    ``tiledb`` and tdbsql read the ``x`` DuckDB's DELETE keeps, ascending."""
    import tdbsql

    want = sorted(duckdb_after_delete(source, where).column("x").to_pylist())
    with tiledb.open(path) as A:
        assert sorted(A[:]["x"].tolist()) == want
    assert tdbsql.query("SELECT x FROM array ORDER BY x", path).column("x").to_pylist() == want


def delete_as_duckdb(path: str, where: str, timestamp: int | None = 20):
    """Delete ``where`` from the array at ``path`` with tdbsql and check, as
    ``assert_deleted_as_duckdb``, that the cells kept are DuckDB's; returns the commit."""
    import tdbsql
    from tdbsql.storage.writer import delete

    source = tdbsql.query("SELECT * FROM array", path)  # the SQL types DuckDB compares
    commit = delete(path, where, timestamp=timestamp)
    assert_deleted_as_duckdb(path, source, where)
    return commit


def tiledb_table(uri: str, timestamp=None, key=None, attrs=None) -> pa.Table:
    """What ``tiledb`` returns for the whole array (dense: its non-empty domain) at ``timestamp``;
    an empty table with the array's columns when nothing was written in the window."""
    with tiledb.open(uri, timestamp=timestamp, key=key) as A:
        dims = [A.schema.domain.dim(i).name for i in range(A.schema.domain.ndim)]
        names = [A.schema.attr(i).name for i in range(A.schema.nattr)] if attrs is None else attrs
        if A.schema.sparse:
            table = A.query(attrs=names, return_arrow=True).df[:]
        else:
            ned = A.nonempty_domain()
            if ned is None:
                return None
            query = A.query(dims=dims, attrs=names, return_arrow=True)
            table = query.df[tuple(slice(lo, hi) for lo, hi in ned)]
    return table.select(dims + list(names))


def tdbsql_table(uri: str, timestamp=None, key=None, attrs=None) -> pa.Table:
    with tiledb.open(uri, timestamp=timestamp, key=key) as A:
        dims = [A.schema.domain.dim(i).name for i in range(A.schema.domain.ndim)]
    cols = "*" if attrs is None else ", ".join(dims + list(attrs))
    return tdbsql.query(f"SELECT {cols} FROM array", uri, timestamp=timestamp, key=key)


def dim_names(uri: str, key=None) -> list[str]:
    with tiledb.open(uri, key=key) as A:
        return [A.schema.domain.dim(i).name for i in range(A.schema.domain.ndim)]


def assert_same(uri: str, timestamp=None, key=None, attrs=None) -> dict[str, list]:
    """tdbsql's result equals tiledb's cell for cell (sorted by the dimensions); returns it."""
    dims = dim_names(uri, key)
    expected = tiledb_table(uri, timestamp, key, attrs)
    got = tdbsql_table(uri, timestamp, key, attrs)
    got_rows = sorted_rows(got, dims)
    if expected is None:  # dense array with nothing written in the window
        assert got.num_rows == 0, f"at {timestamp}: expected no cells, got {got.num_rows}"
        return got_rows
    want_rows = sorted_rows(expected, dims)
    assert list(got_rows) == list(want_rows), f"at {timestamp}: columns differ"
    for name in want_rows:
        assert _comparable(got_rows[name]) == _comparable(want_rows[name]), \
            f"at {timestamp}: column {name!r} differs"
    return got_rows


def _comparable(values: list) -> list:
    """NaN equals NaN here (both readers return NaN fill values), and bytes equal the str
    they decode to: tdbsql maps CHAR to Arrow strings where tiledb gives binary (the types are
    test_read_types.py's business; these tests compare values)."""
    return [_plain(v) for v in values]


def _plain(v):
    if isinstance(v, float) and v != v:
        return "NaN"
    if isinstance(v, bytes):
        return v.decode("utf-8", "surrogateescape")
    return v


def sql_window(uri: str, timestamp, columns: str = "*") -> pa.Table:
    """The same read through the SQL clause instead of the ``timestamp=`` argument."""
    if isinstance(timestamp, tuple):
        clause = f"FOR SYSTEM_TIME BETWEEN {timestamp[0]} AND {timestamp[1]}"
    else:
        clause = f"FOR SYSTEM_TIME AS OF {timestamp}"
    return tdbsql.query(f"SELECT {columns} FROM array {clause}", uri)


def int_dim(name="x", lo=0, hi=99, tile=10, dtype=np.int64):
    return tiledb.Dim(name, domain=(lo, hi), tile=tile, dtype=dtype)


def create(uri: str, dims, attrs, *, sparse=True, allows_duplicates=False, capacity=4,
           key=None, **kw) -> str:
    schema = tiledb.ArraySchema(domain=tiledb.Domain(*dims), attrs=attrs, sparse=sparse,
                                allows_duplicates=allows_duplicates,
                                capacity=capacity if sparse else 10000, **kw)
    tiledb.Array.create(uri, schema, key=key)
    return uri


def write_sparse(uri: str, t: int, coords, key=None, **values) -> None:
    with tiledb.open(uri, "w", timestamp=t, key=key) as A:
        A[coords] = values


def delete(uri: str, t: int, cond: str, key=None) -> None:
    """``DELETE WHERE cond`` at ``t`` (TileDB-Py 0.36 reopens the array to parse a condition
    without the key, so an encrypted array needs the key in the context config too)."""
    ctx = tiledb.Ctx(encryption_config(key)) if key is not None else None
    with tiledb.open(uri, "d", timestamp=t, key=key, ctx=ctx) as A:
        A.query(cond=cond).submit()


def encryption_config(key) -> dict:
    return {"sm.encryption_type": "AES_256_GCM", "sm.encryption_key": key}


def consolidate(uri: str, config: dict | None = None, key=None) -> None:
    """``tiledb.consolidate`` with config keys such as ``sm.consolidation.mode`` (small
    consolidation buffers: the default ones cost ~1.5 s of allocation per call)."""
    settings = {"sm.consolidation.buffer_size": 1 << 16, **(config or {})}
    cfg = tiledb.Config({k: str(v) for k, v in settings.items()})
    for k, v in (encryption_config(key) if key is not None else {}).items():
        cfg[k] = v
    tiledb.consolidate(uri, config=cfg)


def vacuum(uri: str, mode: str = "fragments", key=None) -> None:
    cfg = tiledb.Config({"sm.vacuum.mode": mode})
    for k, v in (encryption_config(key) if key is not None else {}).items():
        cfg[k] = v
    tiledb.vacuum(uri, config=cfg)
