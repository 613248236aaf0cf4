"""``INSERT OR REPLACE``, ``INSERT OR IGNORE`` and ``INSERT ... ON CONFLICT [(key)] DO NOTHING
| DO UPDATE SET col = expr, ... [WHERE ...]``, as DuckDB runs them on a table whose PRIMARY
KEY is the array's dimensions.

Only a sparse array that allows no duplicates has a key: its dimensions (a cell is its
coordinates).  A row whose key already holds a cell -- one the statement reads: not deleted,
visible at the array's registered timestamp -- conflicts: DO NOTHING (OR IGNORE) drops it; DO
UPDATE changes the cell as an UPDATE would, the SET values and the WHERE worked out by the
engine over the cell's columns (unqualified, or by the table's name or alias) and the row's
as ``excluded.col``; OR REPLACE is DO UPDATE setting each inserted column that is not a key to
``excluded``'s value (the columns a column list leaves out keep theirs).  The other rows are
inserted.  As DuckDB 2.0 does, of several rows of one statement with one key the first is
taken and the others dropped.  The answer counts the rows inserted and the cells updated;
RETURNING lists them (the updated ones first, as DuckDB).

The cells are found by one read pruned to the inserted keys (each dimension's values as an IN
list, or their range when there are many), matched exactly to them afterwards -- one read a
part for an INSERT ... SELECT streamed in parts (``insert_query``; ``Resolver``); the inserted
and updated cells are then written as one fragment, which hides the old versions (newest
wins).  Everything is worked out before that fragment is committed, so a statement that fails
writes nothing.

Without a key -- a sparse array that allows duplicates, a table made by CREATE TABLE -- these
clauses are DuckDB's error for a table without a PRIMARY KEY or UNIQUE index.  A dense array
has every cell of its domain (those never written read their fill values), so every row would
conflict: the clauses are refused (``UnsupportedSql``) -- a plain INSERT already replaces the
cells it writes, and UPDATE changes cells.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp
from sqlglot.optimizer.scope import find_in_scope

from .errors import SqlError, UnsupportedSql
from .planner.parse import span_of, span_over

NO_KEY = ("there are no UNIQUE/PRIMARY KEY constraints that refer to this table, specify ON "
          "CONFLICT columns manually")
NOT_KEY = ("the specified columns as conflict target are not referenced by a UNIQUE/PRIMARY "
           "KEY CONSTRAINT or INDEX")
IN_LIST_MAX = 1024  # distinct values of a dimension read as an IN list; more: their range
_EXCLUDED = "__tdbsql_excluded_"  # excluded.col, beside the cell's columns while SET runs
_HIT = "__tdbsql_conflict_hit"  # the DO UPDATE's WHERE, TRUE
_LENT = "__tdbsql_conflicts"


@dataclass(frozen=True)
class Conflicts:
    """What an INSERT does with a row whose key holds a cell: ``update`` None drops it (DO
    NOTHING), else the SET column -> value (``excluded.col`` for the row's values) where
    ``where`` (None: always) holds; ``replace``: the SET is each inserted column's value
    (OR REPLACE), known once the inserted columns are."""

    key: list[str]
    update: dict[str, exp.Expression] | None
    where: exp.Expression | None = None
    replace: bool = False


def has_conflict_clause(tree: exp.Insert) -> bool:
    return bool(tree.args.get("conflict") or tree.args.get("alternative"))


def refuse_without_key(tree: exp.Insert, what: str, sql: str) -> None:
    """The clauses on a target without a key (``what``: why it has none): DuckDB's error."""
    if not has_conflict_clause(tree):
        return
    _check_form(tree, sql)
    conflict = tree.args.get("conflict")
    message = NOT_KEY if conflict is not None and conflict.args.get("conflict_keys") else NO_KEY
    raise SqlError(f"{_clause(tree)}: {message} ({what})", sql)


def conflict_action(tree: exp.Insert, array, sql: str) -> Conflicts | None:
    """The INSERT's conflict clause on ``array`` (None without one)."""
    if not has_conflict_clause(tree):
        return None
    _check_form(tree, sql)
    schema = array.schema
    if schema.dense:
        raise UnsupportedSql(f"{_clause(tree)} on a dense array: every cell of its domain "
                             "exists (cells never written read their fill values), so every "
                             "row would conflict; a plain INSERT replaces the cells it writes, "
                             "and UPDATE changes cells")
    if schema.allows_duplicates:
        refuse_without_key(tree, "an array that allows duplicates has no key; a sparse array "
                           "without duplicates has its dimensions", sql)
    key = [d.name for d in schema.dimensions]
    attributes = [a.name for a in schema.attributes]
    alternative = (tree.args.get("alternative") or "").upper()
    if alternative:
        return Conflicts(key, {} if alternative == "REPLACE" else None,
                         replace=alternative == "REPLACE")
    conflict = tree.args["conflict"]
    _check_target(conflict, key, sql)
    if str(conflict.args.get("action")).upper() == "DO NOTHING":
        return Conflicts(key, None)
    from .update_statement import assignments

    values = assignments(conflict, attributes, key, sql)
    where = conflict.args.get("where")
    where = where.this if where is not None else None
    for node in [*values.values(), *([where] if where is not None else [])]:
        _check_expression(node, node is where, sql)
    return Conflicts(key, values, where)


def _clause(tree: exp.Insert) -> str:
    alternative = tree.args.get("alternative")
    return f"INSERT OR {alternative.upper()}" if alternative else "INSERT ... ON CONFLICT"


def _check_form(tree: exp.Insert, sql: str) -> None:
    """What DuckDB refuses whatever the table: both OR REPLACE|IGNORE and ON CONFLICT, another
    OR alternative, ON CONSTRAINT, a WHERE on the conflict target."""
    alternative = tree.args.get("alternative")
    conflict = tree.args.get("conflict")
    if alternative and alternative.upper() not in ("REPLACE", "IGNORE"):
        raise SqlError(f"SQL syntax error: INSERT OR {alternative.upper()} is not DuckDB SQL "
                       "(OR REPLACE and OR IGNORE are)", sql)
    if alternative and conflict is not None:
        raise SqlError("you can not provide both OR REPLACE|IGNORE and an ON CONFLICT clause "
                       "(as in DuckDB)", sql, span_of(conflict))
    if conflict is None:
        return
    if conflict.args.get("constraint") is not None:
        raise UnsupportedSql("ON CONFLICT ON CONSTRAINT is not supported (nor in DuckDB): name "
                             "the key's columns, or none")
    if conflict.args.get("index_predicate") is not None:
        raise SqlError("ON CONFLICT WHERE clause is only supported in DO UPDATE SET ... WHERE "
                       "... (as in DuckDB)", sql, span_of(conflict.args["index_predicate"]))
    if conflict.args.get("duplicate"):
        raise SqlError("ON DUPLICATE KEY is not DuckDB SQL (ON CONFLICT is)", sql)


def _check_target(conflict: exp.OnConflict, key: list[str], sql: str) -> None:
    """``ON CONFLICT (cols)`` must name the key's columns, each in any case (repeats allowed,
    as in DuckDB)."""
    named = conflict.args.get("conflict_keys") or []
    if not named:
        return
    columns = []
    for item in named:
        node = item.this if isinstance(item, exp.Ordered) else item
        if not isinstance(node, (exp.Column, exp.Identifier)):
            raise SqlError("ON CONFLICT (...) takes column names", sql, span_of(node))
        columns.append(node.name.lower())
    if set(columns) != {k.lower() for k in key}:
        raise SqlError(f"ON CONFLICT ({', '.join(columns)}): {NOT_KEY} (the array's key is "
                       f"its dimensions: {', '.join(key)})", sql, span_of(named[0]))


def _check_expression(node: exp.Expression, is_where: bool, sql: str) -> None:
    """DuckDB's errors in DO UPDATE: a subquery, an aggregate in the WHERE."""
    found = node.find(exp.Subquery, exp.Select, exp.Exists)
    if found is not None:
        raise SqlError("DO UPDATE SET clause cannot contain a subquery (as in DuckDB)", sql,
                       span_of(found))
    found = find_in_scope(node, (exp.AggFunc, exp.Window)) if is_where else None
    if found is not None:
        raise SqlError("WHERE clause cannot contain aggregate functions (as in DuckDB)", sql,
                       span_of(found))


def _excluded_checked(conflicts: Conflicts, inserted: list[str], excluded: list[str],
                      sql: str) -> Conflicts:
    """``conflicts`` once the ``inserted`` columns are known: OR REPLACE's SET made, and an
    ``excluded.col`` not among the ``excluded`` ones refused (DuckDB's error)."""
    if conflicts.replace:
        return Conflicts(conflicts.key, {c: exp.column(c, "excluded", quoted=True)
                                         for c in inserted if c not in conflicts.key})
    spelled = {c.lower() for c in excluded}
    for node in [*(conflicts.update or {}).values(), conflicts.where]:
        for column in node.find_all(exp.Column) if node is not None else ():
            if column.table.lower() == "excluded" and column.name.lower() not in spelled:
                raise SqlError(f'values list "excluded" does not have a column named '
                               f'"{column.name}"', sql, span_over(column))
    return conflicts


class Resolver:
    """The cells an INSERT writes under ``conflicts``, worked out a batch of rows at a time
    (an INSERT ... SELECT streamed in parts, ``insert_query``; else all at once): the cells
    it updates, then the rows it inserts.  ``inserted``: the columns the statement gives;
    ``excluded``: those ``excluded.col`` may name (every column, those left out NULL, as
    DuckDB's; with BY NAME the inserted ones).  The keys of the batches before are kept, so
    a key repeated in a later batch is dropped as one repeated within a batch."""

    def __init__(self, connection, target: exp.Table, array, conflicts: Conflicts,
                 inserted: list[str], excluded: list[str], sql: str):
        self.connection, self.target, self.array, self.sql = connection, target, array, sql
        self.conflicts = _excluded_checked(conflicts, inserted, excluded, sql)
        self.excluded = excluded
        self.seen: pa.Table | None = None  # the keys of the batches so far

    def __call__(self, rows: pa.Table) -> pa.Table:
        """The cells to write for ``rows`` (every column, cast as stored)."""
        from .update_statement import one_per_key

        key = self.conflicts.key
        rows = self._unseen(one_per_key(rows, key, last=False))
        if not rows.num_rows:
            return rows
        cells, matched = _existing(self.connection, self.target, self.array, rows.select(key),
                                   self.sql)
        inserted = rows.filter(pa.array(~matched))
        if inserted.num_rows:
            _check_given(self.array, inserted, self.sql)
        if self.conflicts.update is None or not cells.num_rows:
            return inserted
        updated = _updated(self.connection, self.target, self.array, cells,
                           rows.filter(pa.array(matched)), self.conflicts, self.excluded,
                           self.sql)
        return pa.concat_tables([updated.select(inserted.column_names).cast(inserted.schema),
                                 inserted])

    def _unseen(self, rows: pa.Table) -> pa.Table:
        """``rows`` but those whose key an earlier batch had; their keys noted."""
        key = self.conflicts.key
        if self.seen is not None and rows.num_rows:
            numbered = rows.select(key).append_column(
                "__row", pa.array(np.arange(rows.num_rows, dtype=np.int64)))
            fresh = numbered.join(self.seen, keys=key, join_type="left anti",
                                  use_threads=False).column("__row")
            rows = rows.take(np.sort(fresh.to_numpy()))
        keys = rows.select(key).combine_chunks()
        self.seen = keys if self.seen is None else pa.concat_tables([self.seen, keys])
        return rows


def _check_given(array, inserted: pa.Table, sql: str) -> None:
    """A non-nullable attribute the INSERT left out (``dml.with_omitted``) is an error once a
    row is inserted (DuckDB's NOT NULL constraint), not while every row updates a cell."""
    from .dml import not_given

    for attribute in array.schema.attributes:
        if not attribute.nullable and inserted.column(attribute.name).null_count:
            raise not_given("attribute", attribute.name, sql)


def _existing(connection, target: exp.Table, array, keys: pa.Table,
              sql: str) -> tuple[pa.Table, np.ndarray]:
    """The cells at ``keys`` (in the order of the keys that hold one) and where ``keys``
    hold one: a read pruned by each dimension's values (or range), matched exactly."""
    from .dml import typed_rows

    fields = [d.name for d in array.schema.dimensions] + [a.name for a in array.schema.attributes]
    name = target.alias_or_name
    read = exp.select(*(exp.column(f, name, quoted=True) for f in fields)).from_(
        target.copy()).where(exp.and_(*(_values_test(keys.column(k), k, name)
                                        for k in keys.column_names)))
    found = connection._rows_of(sql)(read)
    numbered = keys.append_column("__row", pa.array(np.arange(keys.num_rows, dtype=np.int64)))
    cells = pa.table({**{k: found.column(k).cast(keys.schema.field(k).type)
                         for k in keys.column_names},
                      "__cell": pa.array(np.arange(found.num_rows, dtype=np.int64))})
    pairs = numbered.join(cells, keys=keys.column_names, join_type="inner",
                          use_threads=False).sort_by("__row")
    matched = np.zeros(keys.num_rows, dtype=bool)
    matched[pairs.column("__row").to_numpy()] = True
    cells = found.take(pairs.column("__cell"))
    return typed_rows(cells, array, sql, kept=set(fields)), matched


def _values_test(values: pa.ChunkedArray, column: str, table: str) -> exp.Expression:
    """A condition every value of ``values`` passes, on the dimension ``column``: an IN list
    of few whole numbers or strings, else a BETWEEN of their range (both prune the read)."""
    from .planner.parameters import constant
    from .update_statement import sql_bound

    ref = exp.column(column, table, quoted=True)
    distinct = pc.unique(values)
    kind = values.type
    if len(distinct) <= IN_LIST_MAX and (pa.types.is_integer(kind) or pa.types.is_string(kind)
                                         or pa.types.is_large_string(kind)):
        return exp.In(this=ref, expressions=[constant(v, "key") for v in distinct.to_pylist()])
    lo, hi = pc.min_max(values).values()
    return exp.Between(this=ref, low=sql_bound(lo, False), high=sql_bound(hi, True))


def _updated(connection, target: exp.Table, array, cells: pa.Table, rows: pa.Table,
             conflicts: Conflicts, excluded: list[str], sql: str) -> pa.Table:
    """``cells`` with the DO UPDATE's SET values, where its WHERE holds; ``rows``: the
    inserted row of each (``excluded``)."""
    from .dml import typed_rows
    from .returning import decoded

    spelled = {c.lower(): f"{_EXCLUDED}{i}" for i, c in enumerate(excluded)}
    values = {c: _rebound(v, spelled) for c, v in conflicts.update.items()}
    if not values and conflicts.where is None:
        return cells
    beside = pa.table([decoded(c) for c in cells.columns] +
                      [decoded(rows.column(c)) for c in excluded],
                      names=cells.column_names + [spelled[c.lower()] for c in excluded])
    items = [exp.alias_(v, c, quoted=True) for c, v in values.items()]
    where = conflicts.where
    truth = exp.true() if where is None else \
        exp.Is(this=exp.paren(_rebound(where, spelled)), expression=exp.true())
    with connection.catalog.lent(_LENT, beside) as name:
        new = connection._rows_of(sql)(exp.select(*items, exp.alias_(truth, _HIT)).from_(
            exp.alias_(exp.to_table(name), target.alias_or_name, table=True)))
    hit = new.column(_HIT).to_numpy(zero_copy_only=False).astype(bool)
    new = typed_rows(new.drop_columns([_HIT]), array, sql, "ON CONFLICT DO UPDATE")
    columns = [new.column(c) if c in values else cells.column(c) for c in cells.column_names]
    return pa.table(columns, names=cells.column_names).filter(pa.array(hit))


def _rebound(node: exp.Expression, spelled: dict[str, str]) -> exp.Expression:
    """``node`` with each ``excluded.col`` naming the column beside the cell's that holds it."""
    def rebind(part):
        if isinstance(part, exp.Column) and part.table.lower() == "excluded":
            return exp.column(spelled[part.name.lower()], quoted=True)
        return part

    return node.copy().transform(rebind)
