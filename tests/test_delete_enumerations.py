"""DELETE comparing an enumerated attribute: SQL compares its labels, the delete commit the
stored indices, so the condition becomes an IN list of the indices of the labels it holds for.
``tiledb`` and tdbsql read what DuckDB's DELETE leaves on a table of the labels themselves."""

from __future__ import annotations

import pyarrow as pa
import pytest

from history_helpers import duckdb_after_delete, sorted_rows, tiledb
import tdbsql
from tdbsql import schema as S
from tdbsql.errors import SqlError
from tdbsql.storage.writer import create, delete, write

COLUMNS = ["x", "w", "c", "k"]


def _array(path: str) -> pa.Table:
    create(path, S.Schema([S.Dim("x", "int64", (0, 99), 10)],
                          [S.Attr("w", "int8", enumeration="weight"),
                           S.Attr("c", "uint8", enumeration="colour", nullable=True),
                           S.Attr("k", "int16", enumeration="size")],
                          enumerations=[S.Enumeration("weight", [0.5, 1.5, 2.5, -1.0]),
                                        S.Enumeration("colour", ["red", "green", "blue"]),
                                        S.Enumeration("size", [30, 10, 20])]))
    source = pa.table({"x": pa.array(range(6), pa.int64()),
                       "w": pa.array([0.5, 1.5, 2.5, -1.0, 1.5, 0.5]),
                       "c": pa.array(["red", "green", "blue", None, "red", "blue"]),
                       "k": pa.array([30, 10, 20, 30, 20, 10], pa.int32())})
    labelled = {n: source.column(n).combine_chunks().dictionary_encode() for n in "wck"}
    write(path, {"x": source.column("x"), **labelled}, timestamp=10)  # labels, not indices
    return source


WHERES = ["w = 1", "w = 1.5", "w = 1.5e0", "w > 1", "w <= 0.5", "w IN (1, 2.5)", "w IN (7)",
          "w NOT IN (7)", "w NOT IN (0.5, -1)", "w BETWEEN 0 AND 2", "NOT (w = 0.5)",
          "1 < w", "c = 'red'", "c <> 'red'", "c < 'green'", "c IN ('blue', 'nope')",
          "c = 'nope'", "c NOT IN ('red')", "NOT (c > 'blue')", "k = 20", "k > 15",
          "k < 10.5", "k IN (10, 30.0)", "k = 0", "w = 1.5 AND c = 'red'",
          "x = 0 OR k >= 20", "k <> 30", "c IS NULL", "c IS NOT NULL AND w > 1",
          "NOT (c IS NULL) OR k = 10"]


@pytest.mark.parametrize("where", WHERES)
def test_delete_matches_duckdb(tmp_path, where):
    path = str(tmp_path / "a")
    source = _array(path)
    tdbsql.connect().register("t", path).sql(f"DELETE FROM t WHERE {where}")
    want = sorted_rows(duckdb_after_delete(source, where), ["x"])
    with tiledb.open(path) as A:
        assert sorted_rows(A.query(return_arrow=True).df[:].select(COLUMNS), ["x"]) == want
    assert sorted_rows(tdbsql.query("SELECT * FROM array", path), ["x"]) == want


def test_a_string_label_compared_with_a_number_is_refused(tmp_path):
    path = str(tmp_path / "a")
    _array(path)
    with pytest.raises(SqlError, match="column 'c' is a string"):
        delete(path, "c = 1")
