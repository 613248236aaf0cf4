"""``UPDATE t SET a = expr, ... [FROM ...] [WHERE ...]``: the cells the WHERE picks, written
again with their new values -- the only way a TileDB array changes is by new fragments.

* A sparse array without duplicates: the picked cells, with their new values, become one
  fragment.  Newest wins: at each of its coordinates it hides the older versions, in tdbsql as
  in TileDB.
* A dense array: a fragment is a box of cells, so the smallest box around the picked cells of
  each band of space tiles along the first dimension is read and written again whole -- the
  picked cells with their new values, the others as they are (cells never written read as
  their fill values, and are written as such).  The boxes' fragments are all written before
  any is committed.
* A sparse array that allows duplicates: its cells have no identity a newer version could
  hide, so the picked cells are deleted (a delete commit with the WHERE,
  ``storage.delete_writer``, which keeps every cell SQL keeps) and written again after it
  (checked and written before the delete, seen only after it).
  The WHERE must then be one a delete commit can hold (comparisons of the array's own columns
  with constants, AND/OR/NOT, IN, BETWEEN, NULL tests), and FROM is refused.

The new values are worked out by the engine from the cells as they are now, every SET from the
old values (``SET a = b, b = a`` swaps them), and cast to the columns' types as INSERT casts
them.  SET names attributes only: a cell's coordinates are its place in the array (DELETE it
and INSERT it elsewhere).  With FROM, a cell that several FROM rows match takes one of them,
as in DuckDB.  The answer is DuckDB's one row ``Count``: the cells updated; with RETURNING,
its list over their new values (``returning``), worked out before anything is written.

Timestamps: the new fragment is written after every fragment and delete commit the UPDATE read
(``storage.write_order``), so it is the newest version, and the statement returns once the
clock has passed it, so the next read sees it.  Time travel before that sees the array as it
was.  (With duplicates, the delete commit comes
two milliseconds earlier: a read in between sees the cells deleted, not yet written again.)
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp
from sqlglot.optimizer.scope import find_in_scope

from .dml import answer, array_source, refuse_clauses, typed_rows
from .errors import SqlError, UnsupportedSql
from .planner.parse import span_of
from .returning import returned_rows
from .storage.write_order import wait_past, write_after


def run_update(connection, tree: exp.Update, sql: str, run_query) -> pa.Table:
    """Run ``tree``; ``run_query(select)`` gives a SELECT tree's rows (a ``pa.Table``)."""
    refuse_clauses(tree, "UPDATE", sql)
    target = tree.this
    source = array_source(connection, target, sql)
    if source.timestamp is not None:
        raise UnsupportedSql(f"UPDATE of {target.name!r}, registered at timestamp "
                             f"{source.timestamp}: an UPDATE reads and writes the array as it "
                             "is now (register it without a timestamp)")
    array = source.open()
    schema = array.schema
    dims = [d.name for d in schema.dimensions]
    values = assignments(tree, [a.name for a in schema.attributes], dims, sql)
    joined = _from_items(tree, sql)
    dups = schema.sparse and schema.allows_duplicates
    if dups and joined:
        raise UnsupportedSql("UPDATE ... FROM on an array that allows duplicates: its cells are "
                             "deleted and written again, and a delete commit can only test "
                             "the array's own columns")
    name = target.alias_or_name
    where = tree.args.get("where")
    picked = _select(target, joined, where,
                     [_column(d, name) for d in dims]
                     + [exp.Alias(this=values[a.name].copy(),
                                  alias=exp.to_identifier(a.name, quoted=True))
                        if a.name in values else _column(a.name, name)
                        for a in schema.attributes])
    rows = run_query(picked)
    if joined:
        rows = one_per_key(rows, dims)
    rows = typed_rows(rows, array, sql, "UPDATE", kept=set(rows.column_names) - set(values))
    returned = returned_rows(connection, tree, rows, sql)
    updated = rows.num_rows
    if not updated:
        return answer(returned, 0)
    when = write_after(array)
    from .storage.writer import write

    if schema.dense:  # a box a band of space tiles
        with _committed_together(source.path) as fragments:
            for band in _bands(rows, schema):
                fragments.append(write(source.path, _with_box(band, dims, target, name,
                                                              run_query, schema),
                                       timestamp=when, key=source.key, commit=False))
    elif dups:  # the cells again (checked and written, not yet seen), the delete, the commit
        from .storage.delete_writer import write_delete

        with _committed_together(source.path) as fragments:
            fragments.append(write(source.path, rows, timestamp=when + 1, key=source.key,
                                   commit=False))
            write_delete(source.path, where.this if where is not None else
                         _every_cell(schema), timestamp=when, key=source.key, sql=sql)
        when += 1
    else:
        write(source.path, rows, timestamp=when, key=source.key)
    wait_past(when)  # a read that starts after the UPDATE sees it
    return answer(returned, updated)


def assignments(tree: exp.Update, attributes: list[str], dims: list[str],
                sql: str) -> dict[str, exp.Expression]:
    """SET's column (as the schema spells it; names match in any case, as DuckDB's) -> new
    value; a dimension, an unknown name, a qualified name, a name set twice, DEFAULT, an
    aggregate or a window function is an error."""
    spelled = {n.lower(): n for n in [*dims, *attributes]}
    values: dict[str, exp.Expression] = {}
    for item in tree.expressions:
        column = item.this if isinstance(item, exp.EQ) else None
        if not isinstance(column, exp.Column):
            raise SqlError("UPDATE ... SET takes column = value pairs", sql, span_of(item))
        if column.table:
            raise SqlError("qualified column names in UPDATE ... SET are not supported (as in "
                           "DuckDB): name the column alone", sql, span_of(column))
        field = spelled.get(column.name.lower(), column.name)
        if field in dims:
            raise UnsupportedSql(f"UPDATE cannot SET dimension {field!r}: a cell's "
                                 "coordinates are its place in the array (DELETE the cell and "
                                 "INSERT it at its new coordinates)")
        if field not in attributes:
            raise SqlError(f"UPDATE: {column.name!r} is not a column of the table "
                           f"({', '.join([*dims, *attributes])})", sql, span_of(column))
        if field in values:
            raise SqlError(f"UPDATE sets column {field!r} twice", sql, span_of(column))
        value = item.expression
        if isinstance(value, exp.Var) and value.name.upper() == "DEFAULT" or \
                isinstance(value, exp.Column) and value.name.upper() == "DEFAULT" and \
                not value.table and value.name.lower() not in spelled:
            raise UnsupportedSql("UPDATE ... SET col = DEFAULT is not supported: its columns "
                                 "have no default (set a value, or NULL)")
        found = find_in_scope(value, (exp.AggFunc, exp.Window))  # not in a subquery
        if found is not None:
            kind = "window" if isinstance(found, exp.Window) else "aggregate"
            raise SqlError(f"{kind} functions are not allowed in UPDATE (as in DuckDB)", sql,
                           span_of(found))
        values[field] = value
    return values


def _from_items(tree: exp.Update, sql: str) -> list[exp.Join]:
    """UPDATE's FROM as joins after the updated table: each item crossed with it, and the
    joins written inside FROM after their item (``FROM a JOIN b ON ..``).  A RIGHT or FULL
    join there would null-extend the updated table's cells too, so it is refused."""
    from_ = tree.args.get("from_")
    if from_ is None:
        return []
    first = from_.this.copy()
    inner = first.args.get("joins") or []
    first.set("joins", None)
    for join in inner:
        if join.side in ("RIGHT", "FULL"):
            raise UnsupportedSql(f"UPDATE ... FROM with a {join.side} JOIN is not supported "
                                 "(write it as a subquery in FROM)")
    return [exp.Join(this=first, kind="CROSS"), *inner]


def _column(name: str, table: str) -> exp.Column:
    return exp.column(name, table, quoted=True)


def _select(target: exp.Table, joins: list, where, columns: list) -> exp.Select:
    select = exp.Select(expressions=columns).from_(target.copy(), copy=False)
    if joins:
        select.set("joins", joins)
    if where is not None:
        select.set("where", where.copy())
    return select


def one_per_key(rows: pa.Table, dims: list[str], last: bool = True) -> pa.Table:
    """One row per coordinate, in their order: the last (UPDATE ... FROM's match: DuckDB
    takes one of them, unspecified) or the first (an INSERT's row, as DuckDB's ON CONFLICT
    keeps it)."""
    index = pa.table({**{d: rows.column(d) for d in dims},
                      "__row": pa.array(np.arange(rows.num_rows, dtype=np.int64))})
    which = "max" if last else "min"
    kept = index.group_by(dims, use_threads=False).aggregate([("__row", which)])
    if kept.num_rows == rows.num_rows:
        return rows
    return rows.take(np.sort(kept.column(f"__row_{which}").to_numpy()))


def _every_cell(schema) -> exp.Expression:
    """A delete condition true on every cell: its first dimension is not NULL (a dimension
    never is)."""
    return exp.Not(this=exp.Is(this=exp.column(schema.dimensions[0].name, quoted=True),
                               expression=exp.Null()))


def _bands(rows: pa.Table, schema) -> list[pa.Table]:
    """A dense array's updated cells by band of space tiles along the first dimension (the
    cells whose first coordinate lies in one tile extent), so that cells far apart along it
    are rewritten in boxes of their own, not in one box spanning everything between."""
    dim = schema.dimensions[0]
    first = rows.column(dim.name).to_numpy(zero_copy_only=False)
    if first.dtype.kind in "mM":
        first = first.view(np.int64)
    band = (first.astype(np.float64) - float(dim.domain[0])) // float(dim.tile_extent) \
        if dim.tile_extent else np.zeros(len(first))
    keys, inverse = np.unique(band, return_inverse=True)
    if len(keys) == 1:
        return [rows]
    order = np.argsort(inverse, kind="stable")
    cuts = np.flatnonzero(np.diff(inverse[order])) + 1
    return [rows.take(part) for part in np.split(order, cuts)]


def _with_box(rows: pa.Table, dims: list[str], target: exp.Table, name: str,
              run_query, schema) -> pa.Table:
    """A dense array's updated cells with every other cell of the smallest box around them,
    as they are now: the cells of one dense write.  A cell of a non-nullable attribute that
    reads NULL (never written, an enumerated attribute's fill value is no label) could not
    be written back as it is: refused, before anything is written."""
    bounds = {d: pc.min_max(rows.column(d)).values() for d in dims}
    inside = exp.and_(*(exp.Between(this=_column(d, name), low=sql_bound(lo, False),
                                    high=sql_bound(hi, True))
                        for d, (lo, hi) in bounds.items()))
    box = run_query(_select(target, [], exp.Where(this=inside), [exp.Star()]))
    keep = np.ones(box.num_rows, dtype=bool)
    for d, (lo, hi) in bounds.items():  # exact, where the SQL bounds were widened
        column = box.column(d)
        keep &= pc.and_(pc.greater_equal(column, lo), pc.less_equal(column, hi)) \
            .to_numpy(zero_copy_only=False)
    box = box.filter(pa.array(keep))
    numbered = box.select(dims).append_column(
        "__row", pa.array(np.arange(box.num_rows, dtype=np.int64)))
    others = numbered.join(rows.select(dims), keys=dims, join_type="left anti",
                           use_threads=False).column("__row")
    kept = box.take(others).select(rows.column_names)
    for attribute in schema.attributes:
        if not attribute.nullable and kept.column(attribute.name).null_count:
            raise UnsupportedSql(
                f"UPDATE of a dense array writes the box around the cells it changes again, "
                f"and cells there of attribute {attribute.name!r} hold no value it can write "
                "back (never written: an enumerated attribute's fill value is no label); "
                "update those cells too, or write the array with tdbsql.write")
    return pa.concat_tables([kept.cast(rows.schema), rows])


@contextmanager
def _committed_together(path: str):
    """Collect the names of fragments written uncommitted; commit them all at the end of the
    block, or remove them all if it fails (no reader ever saw them)."""
    from .storage.fragment_writer import commit_fragment, discard_fragment

    fragments: list[str] = []
    try:
        yield fragments
    except BaseException:
        for fragment in fragments:
            discard_fragment(path, fragment)
        raise
    for fragment in fragments:
        commit_fragment(path, fragment)


def sql_bound(scalar: pa.Scalar, upper: bool) -> exp.Expression:
    """A dimension's bound as an SQL constant; a nanosecond value is widened outwards to the
    microseconds SQL's TIMESTAMP / TIME literals hold."""
    from .planner.parameters import constant

    kind = scalar.type
    if (pa.types.is_timestamp(kind) or pa.types.is_time(kind)) and kind.unit == "ns":
        raw = pa.array([scalar]).view(pa.int64())[0].as_py()
        micros = -(-raw // 1000) if upper else raw // 1000
        wide = pa.scalar(micros, pa.int64()).cast(
            pa.timestamp("us") if pa.types.is_timestamp(kind) else pa.time64("us"))
        return constant(wide.as_py(), "bound")
    return constant(scalar.as_py(), "bound")
