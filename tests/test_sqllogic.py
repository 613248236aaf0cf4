"""Run every record of tests/sql/<feature>/*.test (format: tests/sqllogic.py) as its own test.

Each query record is checked twice: DuckDB over the same cells (read by ``tiledb``) must give
the rows written in the file, and tdbsql must give them too.  A record tdbsql cannot run fails;
nothing is skipped.
"""

from __future__ import annotations

import pytest

import sqllogic
from sql_fixtures import sql_arrays  # noqa: F401 - the session fixture, used by name

RECORDS = sqllogic.collect()


@pytest.fixture(scope="module")
def engines(sql_arrays):  # noqa: F811 - pytest fixture injection
    return sqllogic.Engines(sql_arrays)


@pytest.mark.parametrize("record", RECORDS, ids=[r.ident for r in RECORDS])
def test_record(record, engines):
    sqllogic.check_record(record, engines)


def test_files_hold_enough_records():
    queries = [r for r in RECORDS if r.kind == "query"]
    assert len(queries) >= 250, len(queries)
    assert {r.feature for r in RECORDS} >= {
        "select", "where", "null_logic", "expressions", "aggregates", "group_by", "joins",
        "subqueries", "cte", "set_ops", "time_travel", "explain", "errors"}
