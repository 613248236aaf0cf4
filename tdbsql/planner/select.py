"""Bind a single-table SELECT to an array: resolve the table and columns, find the scan's
window, the columns to read and the dimension ranges to prune with.

The result, ``SelectPlan``, is what ``engine.execute`` runs.  Constructs beyond this shape
(joins, aggregates, GROUP BY, subqueries, set operations) raise ``UnsupportedSql`` naming them.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from sqlglot import exp

from ..errors import SqlError, UnsupportedSql
from .parse import span_of, timestamp_window
from .pruning import Ranges
from .ranges import dimension_ranges, finalize


@dataclass(frozen=True)
class TableRef:
    name: str
    window: tuple[int | None, int | None] | None


@dataclass(frozen=True)
class SelectPlan:
    table: TableRef
    read_fields: tuple[str, ...]  # columns the scan must produce
    outputs: tuple[tuple[str, exp.Expression], ...]  # (output name, expression)
    where: exp.Expression | None
    ranges: Ranges
    order_by: tuple[tuple[exp.Expression, bool, bool | None], ...]  # (expr, desc, nulls_first)
    limit: int | None
    offset: int
    distinct: bool


def table_ref(tree: exp.Expression, sql: str) -> TableRef:
    """The single table a SELECT reads, with its FOR SYSTEM_TIME window."""
    _refuse_unsupported(tree, sql)
    from_ = tree.args.get("from") or tree.args.get("from_")
    if from_ is None:
        raise UnsupportedSql("SELECT without FROM is not supported")
    table = from_.this
    if not isinstance(table, exp.Table):
        raise UnsupportedSql(f"FROM {table.sql()!r}: only an array name or path is supported here")
    name = table.name if not table.args.get("db") else table.sql(identify=False).replace('"', "")
    return TableRef(name, timestamp_window(table.args.get("version"), sql))


def bind_select(tree: exp.Select, schema, sql: str) -> SelectPlan:
    """Resolve ``tree`` against ``schema`` (an ArraySchema)."""
    columns = [d.name for d in schema.dimensions] + [a.name for a in schema.attributes]
    outputs = _outputs(tree, columns, sql)
    where = tree.args.get("where")
    where = where.this if where is not None else None
    order_by = _order_by(tree, outputs, sql)
    used = _column_names(where) + [c for _, e in outputs for c in _column_names(e)] + \
        [c for e, _, _ in order_by for c in _column_names(e) if c not in dict(outputs)]
    for node in _columns(tree):
        if node.name not in columns and node.name not in dict(outputs):
            raise SqlError(_unknown_column(node.name, columns), sql, span_of(node))
    read_fields = tuple(dict.fromkeys(c for c in used if c in columns))
    dims = {d.name: _literal_kind(d) for d in schema.dimensions}
    ranges = dimension_ranges(where, {k: v for k, v in dims.items() if v is not None})
    domains = {d.name: d.domain for d in schema.dimensions if d.domain is not None}
    ranges = _in_dimension_types(finalize(ranges, domains), schema)
    return SelectPlan(
        TableRef("", None), read_fields, tuple(outputs), where, ranges,
        tuple(order_by), _int_clause(tree, "limit", sql), _int_clause(tree, "offset", sql) or 0,
        bool(tree.args.get("distinct")),
    )


def _refuse_unsupported(tree, sql):
    if not isinstance(tree, exp.Select):
        raise UnsupportedSql(f"only SELECT statements are supported here, not {tree.key.upper()}")
    for key, what in (("joins", "JOIN"), ("group", "GROUP BY"), ("having", "HAVING"),
                      ("with", "WITH (CTE)"), ("windows", "WINDOW")):
        if tree.args.get(key):
            raise UnsupportedSql(f"{what} is not supported yet")
    for node in tree.find_all(exp.AggFunc):
        raise UnsupportedSql(f"aggregate function {node.sql()!r} is not supported yet")
    for node in tree.find_all(exp.Subquery, exp.Union):
        raise UnsupportedSql(f"subquery {node.sql()!r} is not supported yet")


def _outputs(tree, columns, sql):
    outputs = []
    for proj in tree.expressions:
        if isinstance(proj, exp.Star):
            outputs.extend((c, exp.column(c)) for c in columns)
        elif isinstance(proj, exp.Alias):
            outputs.append((proj.alias, proj.this))
        elif isinstance(proj, exp.Column):
            if proj.name not in columns:
                raise SqlError(_unknown_column(proj.name, columns), sql, span_of(proj))
            outputs.append((proj.name, proj))
        else:
            outputs.append((proj.sql(), proj))
    return outputs


def _order_by(tree, outputs, sql):
    order = tree.args.get("order")
    if order is None:
        return []
    items = []
    names = dict(outputs)
    for ordered in order.expressions:
        node = ordered.this
        if isinstance(node, exp.Literal) and not node.is_string:
            position = int(node.this)
            if not 1 <= position <= len(outputs):
                raise SqlError(f"ORDER BY position {position} is not in the select list", sql,
                               span_of(node))
            node = exp.column(outputs[position - 1][0])
        elif isinstance(node, exp.Column) and node.name in names and not node.table:
            node = exp.column(node.name)
        desc = bool(ordered.args.get("desc"))
        nulls_first = ordered.args.get("nulls_first")
        items.append((node, desc, nulls_first))
    return items


def _columns(tree) -> list[exp.Column]:
    return [c for c in tree.find_all(exp.Column)]


def _column_names(node) -> list[str]:
    if node is None:
        return []
    return [c.name for c in node.find_all(exp.Column)]


def _unknown_column(name: str, columns: list[str]) -> str:
    close = difflib.get_close_matches(name, columns, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else f"; columns are {', '.join(columns)}"
    return f"unknown column {name!r}{hint}"


def _in_dimension_types(ranges, schema):
    """Float bounds in the dimension's own float type (float32 dims compare in float32, as
    TileDB casts ranges), so pruning and the WHERE agree on values like 0.1."""
    out = {}
    for name, rs in ranges.items():
        info = schema.dimension(name).info
        if info.kind == "float":
            cast = info.numpy.type
            rs = [(float(cast(lo)), float(cast(hi))) for lo, hi in rs]
        out[name] = rs
    return out


def _literal_kind(dim):
    info = dim.info
    if info.kind == "int":
        return int
    if info.kind == "float":
        return float
    if info.kind == "string":
        return str
    return None  # datetime dims: ranges from typed literals are not pushed down


def _int_clause(tree, key: str, sql: str) -> int | None:
    clause = tree.args.get(key)
    if clause is None:
        return None
    node = clause.expression if isinstance(clause, (exp.Limit, exp.Offset)) else clause
    if isinstance(node, exp.Literal) and not node.is_string and node.this.isdigit():
        return int(node.this)
    raise SqlError(f"{key.upper()} needs a non-negative integer", sql, span_of(clause))
