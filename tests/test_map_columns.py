"""MAP functions over the MAP and STRUCT-list columns of registered Arrow tables, checked
against DuckDB over the same table (the sqllogic records in tests/sql/maps/ cover literals,
per-row MAPs and histogram() results; fixture arrays hold no MAPs)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from sql_fixtures import arrow_engines

_MAPS = pa.array([[("a", 1), ("b", None)], None, [], [("c", 3), ("a", 4)], [("b", 2)]],
                 pa.map_(pa.string(), pa.int64()))
_ENTRIES = pa.array([[{"k": 1, "v": "x"}, {"k": 2, "v": None}], None, [], [{"k": 3, "v": "z"}],
                     [{"k": 1, "v": "y"}]],
                    pa.list_(pa.struct([("k", pa.int32()), ("v", pa.string())])))
_TABLE = pa.table({"i": pa.array([1, 2, 3, 4, 5], pa.int32()), "m": _MAPS, "e": _ENTRIES,
                   "k": ["a", "b", None, "a", "b"]})


@pytest.mark.parametrize("sql", [
    "SELECT i, m, typeof(m) FROM t ORDER BY i",
    "SELECT i, m['a'], m[k], element_at(m, k), map_extract_value(m, 'b') FROM t ORDER BY i",
    "SELECT i, map_keys(m), map_values(m), map_entries(m), cardinality(m) FROM t ORDER BY i",
    "SELECT i, map_contains(m, k), map_contains_value(m, 4), map_contains_entry(m, 'b', NULL) "
    "FROM t ORDER BY i",
    "SELECT i, map_concat(m, MAP {'a': 0::BIGINT}), map_concat(MAP {'z': 9::BIGINT}, m) "
    "FROM t ORDER BY i",
    "SELECT i, CAST(m AS VARCHAR), m = MAP {'b': 2::BIGINT}, m IS DISTINCT FROM NULL "
    "FROM t ORDER BY i",
    "SELECT i, map_from_entries(e) f, typeof(f), f[1] FROM t ORDER BY i",
    "SELECT m, count(*) FROM t GROUP BY m ORDER BY cardinality(m), m['a'], m['b'] NULLS FIRST",
    "SELECT i FROM t WHERE m['a'] > 1 OR map_contains(m, 'b') ORDER BY i",
])
def test_map_columns_as_duckdb(sql):
    ours, oracle = arrow_engines(_TABLE)
    assert ours.sql(sql).fetchall() == oracle.sql(sql).fetchall()


def test_map_from_entries_repeated_key_is_duckdbs_error():
    ours, oracle = arrow_engines(pa.table({"e": pa.array(
        [[{"k": 1, "v": 2}, {"k": 1, "v": 3}]],
        pa.list_(pa.struct([("k", pa.int32()), ("v", pa.int32())])))}))
    sql = "SELECT map_from_entries(e) FROM t"
    with pytest.raises(Exception, match="Map keys must be unique"):
        oracle.sql(sql).fetchall()
    import tdbsql

    with pytest.raises(tdbsql.SqlError, match="Map keys must be unique"):
        ours.sql(sql).fetchall()
