"""TPC-H for the conformance suite and the benchmark.

- ``queries/qNN.sql``: the 22 queries with the specification's validation substitution
  parameters, in DuckDB's dialect (``query_sql(n)`` reads one).
- ``data``: tpchgen-cli Parquet -> Arrow tables (decimals as float64, dates as date32, strings as
  string) -> one sparse TileDB array per table, built with ``tiledb`` (the oracle's writer).
- ``compare``: a tdbsql result against DuckDB's, with a readable diff.
"""

from __future__ import annotations

from pathlib import Path

QUERY_DIR = Path(__file__).parent / "queries"
QUERY_NUMBERS = tuple(range(1, 23))


def query_sql(number: int) -> str:
    """The text of TPC-H query ``number`` (1..22), without its trailing semicolon."""
    return (QUERY_DIR / f"q{number:02d}.sql").read_text().strip().rstrip(";")
