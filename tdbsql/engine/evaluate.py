"""Evaluate scalar SQL expressions (sqlglot nodes) over an Arrow table, with SQL NULL logic.

Comparisons and arithmetic come from ``pyarrow.compute``; AND/OR use Kleene (three-valued) logic,
so a WHERE keeps a row only when its predicate is TRUE (not NULL).
"""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from ..errors import SqlError, UnsupportedSql
from ..planner.parse import span_of

_COMPARE = {exp.EQ: "equal", exp.NEQ: "not_equal", exp.GT: "greater", exp.GTE: "greater_equal",
            exp.LT: "less", exp.LTE: "less_equal"}
_INT64_MAX = 2**63 - 1
_ARITH = {exp.Add: "add_checked", exp.Sub: "subtract_checked", exp.Mul: "multiply_checked",
          exp.Mod: "mod"}


class Evaluator:
    def __init__(self, table: pa.Table, sql: str):
        self.table = table
        self.sql = sql

    def __call__(self, node: exp.Expression):
        method = getattr(self, f"_{type(node).__name__.lower()}", None)
        if method is None:
            raise UnsupportedSql(f"unsupported SQL expression: {node.sql()!r} "
                                 f"({type(node).__name__})")
        return method(node)

    # -- leaves --------------------------------------------------------------------------

    def _column(self, node: exp.Column):
        return self.table.column(node.name)

    def _literal(self, node: exp.Literal):
        if node.is_string:
            return pa.scalar(node.this)
        text = node.this
        try:
            value = int(text)
        except ValueError:
            return pa.scalar(float(text))
        if value > _INT64_MAX:  # e.g. uint64 coordinates past 2**63
            return pa.scalar(value, pa.uint64()) if value < 2**64 else pa.scalar(float(value))
        return pa.scalar(value)

    def _null(self, node):
        return pa.scalar(None)

    def _boolean(self, node: exp.Boolean):
        return pa.scalar(bool(node.this))

    def _paren(self, node):
        return self(node.this)

    def _neg(self, node):
        return pc.negate_checked(self(node.this))

    def _cast(self, node: exp.Cast):
        to = node.to.this
        value = node.this
        if isinstance(value, exp.Literal) and value.is_string:
            text = value.this
            try:
                if to == exp.DataType.Type.DATE:
                    return pa.scalar(dt.date.fromisoformat(text))
                if to in (exp.DataType.Type.TIMESTAMP, exp.DataType.Type.DATETIME):
                    return pa.scalar(dt.datetime.fromisoformat(text))
            except ValueError:
                raise SqlError(f"cannot read {text!r} as {to.value}", self.sql,
                               span_of(value)) from None
        target = _arrow_cast_type(to)
        if target is None:
            raise UnsupportedSql(f"unsupported CAST target type {to.value}")
        return pc.cast(self(value), target)

    # -- logic ---------------------------------------------------------------------------

    def _and(self, node):
        return pc.and_kleene(self(node.this), self(node.expression))

    def _or(self, node):
        return pc.or_kleene(self(node.this), self(node.expression))

    def _not(self, node):
        return pc.invert(self(node.this))

    def _is(self, node: exp.Is):
        if isinstance(node.expression, exp.Null):
            return pc.is_null(self(node.this))
        raise UnsupportedSql(f"unsupported IS form: {node.sql()!r}")

    def _between(self, node: exp.Between):
        value = self(node.this)
        return pc.and_kleene(pc.greater_equal(value, self(node.args["low"])),
                             pc.less_equal(value, self(node.args["high"])))

    def _in(self, node: exp.In):
        if node.args.get("query"):
            raise UnsupportedSql("IN (subquery) is not supported yet")
        value = self(node.this)
        items = [self(e) for e in node.expressions]
        result = None
        for item in items:  # SQL semantics: x IN (a, NULL) is NULL when no match
            eq = pc.equal(value, item)
            result = eq if result is None else pc.or_kleene(result, eq)
        return result

    def _like(self, node):
        return self._match(node, ignore_case=False)

    def _ilike(self, node):
        return self._match(node, ignore_case=True)

    def _match(self, node, ignore_case: bool):
        pattern = node.expression
        if not (isinstance(pattern, exp.Literal) and pattern.is_string):
            raise UnsupportedSql("LIKE needs a string literal pattern")
        return pc.match_like(self(node.this), pattern.this, ignore_case=ignore_case)

    # -- comparisons and arithmetic --------------------------------------------------------

    def _binary(self, node, function: str):
        left, right = _literal_to_column_type(self(node.this), self(node.expression))
        try:
            return getattr(pc, function)(left, right)
        except (pa.ArrowNotImplementedError, pa.ArrowTypeError, pa.ArrowInvalid) as err:
            raise SqlError(f"cannot apply {node.key.upper()} to these operands ({err})",
                           self.sql, span_of(node)) from None

    def _div(self, node):
        left, right = self(node.this), self(node.expression)
        left = pc.cast(left, pa.float64()) if pa.types.is_integer(left.type) else left
        return pc.divide(left, right)


for _cls, _fn in list(_COMPARE.items()) + list(_ARITH.items()):
    setattr(Evaluator, f"_{_cls.__name__.lower()}",
            (lambda fn: lambda self, node: self._binary(node, fn))(_fn))


def _literal_to_column_type(left, right):
    """A float literal compared with a FLOAT (float32) column is cast to FLOAT first, as DuckDB
    and TileDB do -- otherwise ``f = 0.3`` misses float32(0.3)."""
    def fix(scalar, other):
        if (isinstance(scalar, pa.Scalar) and not isinstance(other, pa.Scalar)
                and pa.types.is_float32(other.type) and pa.types.is_floating(scalar.type)
                and scalar.is_valid):
            return pa.scalar(scalar.as_py(), pa.float32())
        return scalar
    return fix(left, right), fix(right, left)


def _arrow_cast_type(t: exp.DataType.Type):
    T = exp.DataType.Type
    return {
        T.TINYINT: pa.int8(), T.SMALLINT: pa.int16(), T.INT: pa.int32(), T.BIGINT: pa.int64(),
        T.UTINYINT: pa.uint8(), T.USMALLINT: pa.uint16(), T.UINT: pa.uint32(),
        T.UBIGINT: pa.uint64(), T.FLOAT: pa.float32(), T.DOUBLE: pa.float64(),
        T.VARCHAR: pa.string(), T.TEXT: pa.string(), T.BOOLEAN: pa.bool_(),
        T.DATE: pa.date32(), T.TIMESTAMP: pa.timestamp("us"), T.BLOB: pa.binary(),
    }.get(t)


def evaluate(table: pa.Table, node: exp.Expression, sql: str):
    return Evaluator(table, sql)(node)


def where_mask(table: pa.Table, node: exp.Expression, sql: str) -> pa.Array:
    """Boolean mask of the rows whose predicate is TRUE (NULL counts as false)."""
    result = evaluate(table, node, sql)
    if isinstance(result, pa.Scalar):
        keep = bool(result.as_py()) if result.is_valid else False
        return pa.array([keep] * table.num_rows, type=pa.bool_())
    if isinstance(result, pa.ChunkedArray):
        result = result.combine_chunks()
    if not pa.types.is_boolean(result.type):
        raise SqlError("WHERE needs a boolean condition", sql, span_of(node))
    return pc.fill_null(result, False)
