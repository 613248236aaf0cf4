"""The rows a recursive CTE keeps, round by round (``recursive_ctes`` runs the rounds).

Each round's rows go into the CTE's union table, which gives back the working table, the rows
the next round's step reads (none: the recursion has ended).  As DuckDB keeps them:

* UNION ALL (``AllRows``): every row, all of them the working table.
* UNION (``DistinctRows``): a row only if no earlier round (nor the same one) gave it.
* ``USING KEY (k, ...)`` (``KeyedRows``): one row per key, a round's row replacing the one of
  its key (of one round's rows with a key, the last); UNION ALL passes every row of the round
  on as the working table, UNION only the last of each key and only if it changed the row
  of its key (a step giving back the row it read ends there).

Rows are compared as Python tuples of their values, with NULL equal to NULL, NaN to NaN and
lists by value, as UNION and the keys compare them: a set or a dict holds the rows seen, and a
round costs the time of its own rows.  (An EXCEPT against every row kept so far made the rounds
quadratic: 5,000 rounds of one row took 378 s.)  INTERVAL values, equal where their parts
differ (1 day = 24 hours), are compared by the engine's EXCEPT instead (UNION), or refused
(USING KEY).
"""

from __future__ import annotations

import pyarrow as pa

from .engine.nested_types import holds
from .errors import SqlError, UnsupportedSql

_NAN = object()  # NaN in a row tuple: equal to itself there, as UNION has it


class AllRows:
    """UNION ALL: every row kept."""

    def __init__(self):
        self.parts: list[pa.Table] = []
        self.total = 0  # rows kept

    def add(self, rows: pa.Table) -> pa.Table:
        """``rows`` kept; the next round's working table returned."""
        self.parts.append(rows)
        self.total += rows.num_rows
        return rows

    def table(self) -> pa.Table:
        return pa.concat_tables(self.parts)


class DistinctRows(AllRows):
    """UNION: the distinct rows (of ``schema``, every round's), each kept once.
    ``excepted(rows, kept or None)`` gives the distinct ``rows`` that ``kept`` does not hold,
    for rows holding an INTERVAL."""

    def __init__(self, schema: pa.Schema, excepted):
        super().__init__()
        self.seen: set[tuple] = set()
        self.excepted = excepted if any(has_interval(field.type) for field in schema) else None

    def add(self, rows: pa.Table) -> pa.Table:
        if self.excepted is not None:
            if len(self.parts) > 1:  # one kept table: a round concatenates two, not all
                self.parts = [self.table()]
            new = self.excepted(rows, self.parts[0] if self.parts else None)
        else:
            keep = []
            for i, row in enumerate(row_tuples(rows)):
                if row not in self.seen:
                    self.seen.add(row)
                    keep.append(i)
            new = rows.take(pa.array(keep, pa.int64()))
        return super().add(new)


class KeyedRows:
    """USING KEY: a row per key, the latest one given."""

    def __init__(self, schema: pa.Schema, keys: list[str], distinct: bool, name: str,
                 sql: str):
        names = [n.lower() for n in schema.names]
        self.positions = []
        for key in keys:
            if key.lower() not in names:
                raise SqlError(f'recursive CTE {name!r}: USING KEY column "{key}" is not one '
                               f"of its columns ({', '.join(schema.names)})", sql)
            self.positions.append(names.index(key.lower()))
        if any(has_interval(field.type) for field in schema):
            raise UnsupportedSql(f"recursive CTE {name!r}: USING KEY over INTERVAL values is "
                                 "not supported")
        self.distinct = distinct
        self.parts: list[pa.Table] = []
        self.rows = 0  # rows in ``parts``, live or replaced
        self.live: dict[tuple, int] = {}  # key -> its row's position in ``parts``
        self.values: dict[tuple, tuple] = {}  # key -> its row's values

    @property
    def total(self) -> int:
        return len(self.live)

    def add(self, rows: pa.Table) -> pa.Table:
        """``rows`` put in, each replacing the row of its key; the next round's working
        table returned."""
        tuples = row_tuples(rows)
        last = {tuple(row[p] for p in self.positions): i for i, row in enumerate(tuples)}
        changed = []
        for key, i in last.items():
            if self.distinct and self.values.get(key) == tuples[i]:
                continue
            changed.append(i)
            self.values[key] = tuples[i]
            self.live[key] = self.rows + i
        self.parts.append(rows)
        self.rows += rows.num_rows
        if self.rows > 2 * len(self.live) + 1024:  # mostly replaced rows: drop them
            self.parts, self.rows = [self.table()], len(self.live)
            self.live = {key: n for n, key in enumerate(self._keys_in_order())}
        return rows.take(pa.array(sorted(changed), pa.int64())) if self.distinct else rows

    def table(self) -> pa.Table:
        """The rows kept, in the order they were put in."""
        return pa.concat_tables(self.parts).take(
            pa.array(sorted(self.live.values()), pa.int64()))

    def _keys_in_order(self) -> list[tuple]:
        return sorted(self.live, key=self.live.__getitem__)


def row_tuples(rows: pa.Table) -> list[tuple]:
    """The rows as tuples of Python values, equal where UNION has the rows equal."""
    return list(zip(*(_comparable(column) for column in rows.columns)))


def _comparable(column: pa.ChunkedArray) -> list:
    values = column.to_pylist()
    if pa.types.is_floating(column.type) or pa.types.is_nested(column.type):
        values = [_plain(value) for value in values]
    return values


def _plain(value):
    if isinstance(value, float) and value != value:
        return _NAN
    if isinstance(value, (list, tuple)):
        return tuple(_plain(item) for item in value)
    if isinstance(value, dict):
        return tuple((key, _plain(item)) for key, item in value.items())
    return value


def has_interval(arrow_type: pa.DataType) -> bool:
    """Does the type hold an INTERVAL (an Arrow interval or duration) at any depth?"""
    return holds(arrow_type, _is_interval)


def _is_interval(arrow_type: pa.DataType) -> bool:
    return pa.types.is_interval(arrow_type) or pa.types.is_duration(arrow_type)
