"""``DELETE ... WHERE`` -> a ``__commits/__t_t_<uuid>_22.del`` delete commit TileDB honours.

In: an array path and a SQL boolean expression over its dimensions and attributes.
Out: the delete file (one generic tile holding a condition tree, see
``tdbsql.format.delete_condition``).  TileDB stores the NEGATION of the delete condition (the
cells that survive), so the parsed tree is negated before it is written, exactly as TileDB's
``Query::set_condition`` does for deletes.

Supported: comparisons (``= != <> < <= > >=``, either side a column), ``AND``/``OR``/``NOT``,
``IN``/``NOT IN``, ``BETWEEN``, a BOOLEAN column alone (``WHERE b`` is ``b = TRUE``),
``x IS [NOT] TRUE / FALSE`` of a BOOLEAN or number column (``b = TRUE``, ``x <> 0``; the NOT
forms also where x is NULL: ``b = FALSE OR b IS NULL``); literals
are numbers, strings (dates and timestamps as DuckDB reads them for datetime fields, numbers
and booleans as it casts them to a number or BOOLEAN field: ``storage.text_constants``; NaN as
SQL orders it: ``storage.nan_comparisons``), TRUE/FALSE, typed date/time literals
(``DATE '...'``, ``TIMESTAMP '...'``, ``TIME '...'``: ``storage.typed_instants``).  Anything
else raises
``UnsupportedSql`` naming the construct.
``x IS [NOT] NULL`` (and ``ISNULL`` / ``NOTNULL``) is written without TileDB's own NULL
test, an empty value its readers refuse on fixed-size fields and take for ``''`` on strings:
a value node is false on a NULL cell, so the commit keeps the cells where ``x`` is not NULL
with ``x IN (m) OR x NOT IN (m)`` (any member ``m`` of a cell's size), and keeps none with
``x IN (m) AND x NOT IN (m)`` -- which removes the NULL cells too: SQL keeps those where the
condition is not TRUE, and they are written back as below (``DELETE ... WHERE x IS NOT NULL``
writes back every cell where ``x`` is NULL).
A number field with several values a cell (a list to SQL) is refused as an ``SqlError``, as
DuckDB refuses ``DOUBLE[] > 1.5``; ``tiledb`` cannot even read a commit comparing one.  Nor
one on any other field of several bytes a cell but CHAR / ASCII / UTF-8 text (a BLOB, WKB,
UTF-16 text ...): such a condition is ``UnsupportedSql``.
For the same reason a delete commit removes the cells on which the condition is NULL, which
SQL keeps, and compares a NaN as IEEE floats do where SQL orders it above every number: such
cells are written back in a fragment one millisecond after the commit, which it does not apply
to, so every reader -- ``tiledb`` too -- sees SQL's result (``storage.delete_write_back``: how,
what time travel to the delete's own millisecond shows, and when it is refused instead).

Constants mean what they mean to DuckDB: an integer field compared with a fraction or a number
past its range (``storage.integer_comparisons``), a datetime field with a string cast to its
SQL type (``storage.temporal_comparisons``; a number compared with a field SQL reads as a DATE,
TIMESTAMP or TIME is an ``SqlError``, as DuckDB refuses it), a FLOAT field with a DOUBLE exactly
(``storage.float_comparisons``), an enumerated attribute by its labels
(``storage.enumerated_comparisons``), both float zeros in an IN list, whole cells of a
fixed-size string field (``_Builder._fixed_text``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from decimal import Decimal

import numpy as np
import pyarrow as pa
from sqlglot import exp

from ..datatypes import VAR_NUM, Datatype, arrow_value_type, string_codec, type_info
from ..engine.value_types import blob_of, type_name
from ..errors import NotSupportedError, SqlError, UnsupportedSql
from ..format.delete_condition import (
    CombinationOp, ConditionOp, ExprNode, Node, NullTest, ValueNode, encode_delete_condition,
    negate,
)
from ..format.fragment_metadata import WRITE_VERSION
from ..format.names import new_name
from .array import Array, write_timestamp
from .delete_write_back import judge, write_back
from .write_order import wait_past
from .enumerated_comparisons import on_indices
from .temporal_comparisons import SQL_UNITS, in_field_units
from .nan_comparisons import is_nan, nan_comparison
from .text_constants import read_strings, unwrapped
from .typed_instants import (
    TypedInstant, compares_instants, instant_in_field_units, typed_instant,
)
from . import float_comparisons, integer_comparisons, vfs
from ..format.names import COMMITS_DIR

# The types whose var-sized or multi-value cells TileDB's query conditions compare
# (``supported_string_type`` in TileDB's query_ast.cc).
_CONDITION_TEXT_TYPES = (Datatype.CHAR, Datatype.STRING_ASCII, Datatype.STRING_UTF8)
_OPS = {exp.EQ: ConditionOp.EQ, exp.NEQ: ConditionOp.NE, exp.LT: ConditionOp.LT,
        exp.LTE: ConditionOp.LE, exp.GT: ConditionOp.GT, exp.GTE: ConditionOp.GE}
_FLIPPED = {ConditionOp.LT: ConditionOp.GT, ConditionOp.GT: ConditionOp.LT,
            ConditionOp.LE: ConditionOp.GE, ConditionOp.GE: ConditionOp.LE,
            ConditionOp.EQ: ConditionOp.EQ, ConditionOp.NE: ConditionOp.NE}


@dataclass(frozen=True)
class DeleteCommit:
    """What a DELETE wrote and did: the delete commit's file name (in ``__commits``) and the
    rows it deleted -- those visible at its timestamp on which the condition is TRUE, DuckDB's
    ``Count``."""

    name: str
    deleted: int


def write_delete(path: str, where: str | exp.Expression, *, timestamp: int | None = None,
                 key=None, sql: str | None = None) -> DeleteCommit:
    """Parse, negate and write the delete commit.

    ``where`` is the condition as SQL text, or already parsed (the WHERE of a DELETE
    statement) with ``sql`` the statement it was parsed from, so that errors underline the
    culprit there.  A condition that does not parse is refused before the array is opened.

    Dense arrays are refused before anything is written: their reads never apply delete
    commits, and TileDB refuses them too ("Only supported for sparse arrays").  The cells SQL
    keeps but the commit would remove (a NULL or NaN compared, an attribute a fragment lacks)
    are written back first; the rows deleted are counted in the same read
    (``storage.delete_write_back``)."""
    tree, sql = _condition_tree(where, sql)
    array = Array(path, None, key)
    if array.schema.dense:
        raise NotSupportedError(f"cannot delete from {array.path}: it is a dense array, and "
                                f"deletes are only supported for sparse arrays (as in TileDB)")
    fields = {a.name: a for a in array.schema.attributes}
    fields.update({d.name: d for d in array.schema.dimensions})
    condition = parse_condition(tree, fields, sql, _labelled(array))
    t = write_timestamp(timestamp)
    judged = judge(array, condition, t, tree.sql(dialect="duckdb"))
    if judged.kept_at_risk is not None:
        write_back(array, judged.kept_at_risk, t)
        if timestamp is None:
            wait_past(t)  # a read that starts after the DELETE sees the cells written back
    name = new_name(t, t, WRITE_VERSION, ".del")
    stored = flatten(without_null_tests(negate(condition), fields))
    data = encode_delete_condition(stored, key=array.key)
    vfs.atomic_write(array.path, f"{COMMITS_DIR}/{name}", data)
    return DeleteCommit(name, judged.deleted)


def without_null_tests(node: Node, fields: dict) -> Node:
    """The stored condition with each ``NullTest`` as value nodes (the module docstring): the
    cells where the field is not NULL, or no cell."""
    if isinstance(node, ExprNode):
        return ExprNode(node.op, tuple(without_null_tests(c, fields) for c in node.children))
    if not isinstance(node, NullTest):
        return node
    field = fields[node.field]
    info = type_info(field.datatype)
    return _every_cell_or_none(node.field, 1 if field.cell_val_num == VAR_NUM else
                               field.cell_val_num * np.dtype(info.numpy).itemsize,
                               every=not node.is_null)


def _every_cell_or_none(column: str, size: int, every: bool) -> ExprNode:
    """A condition every cell of ``column`` satisfies (``every``) or none does, as TileDB
    stores one: ``IN x OR NOT IN x`` / ``IN x AND NOT IN x`` of a ``size``-byte member."""
    filler = [b"\0" * size]
    both = (ValueNode.member_set(column, filler), ValueNode.member_set(column, filler, True))
    return ExprNode(CombinationOp.OR if every else CombinationOp.AND, both)


def flatten(node: Node) -> Node:
    """Merge nested AND-in-AND / OR-in-OR nodes into one node, as TileDB's ``combine`` builds
    them: TileDB evaluates a combination node nested in one of the same op wrongly."""
    if isinstance(node, ValueNode):
        return node
    children = []
    for child in (flatten(c) for c in node.children):
        if isinstance(child, ExprNode) and child.op == node.op:
            children.extend(child.children)
        else:
            children.append(child)
    return ExprNode(node.op, tuple(children))


def parse_condition(where: str | exp.Expression, fields: dict, sql: str | None = None,
                    labelled: dict | None = None) -> Node:
    """The user's condition as a TileDB condition tree (not yet negated).

    ``where`` is SQL text (a syntax error in it is an ``SqlError`` that names what was found
    and what was expected, underlined, as for a statement) or a parsed condition taken from
    ``sql``.  ``labelled``: enumerated attribute -> (the field its labels are, the labels),
    compared by label (``storage.enumerated_comparisons``)."""
    tree, sql = _condition_tree(where, sql)
    return _Builder(sql, fields, labelled or {}).node(tree)


def _labelled(array: Array) -> dict:
    """Enumerated attribute -> (its labels as a field of their own type, the labels)."""
    from .writer import enumeration_labels

    labels = enumeration_labels(array)
    found = {}
    for attr in array.schema.attributes:
        if attr.name in labels:
            enumeration = array.enumerations[attr.enumeration_name]
            as_field = replace(attr, datatype=enumeration.datatype, nullable=False,
                               cell_val_num=enumeration.cell_val_num, enumeration_name=None)
            found[attr.name] = as_field, labels[attr.name]
    return found


def _condition_tree(where: str | exp.Expression, sql: str | None):
    if isinstance(where, exp.Expression):
        return where, sql
    from ..planner.parse import parse_condition as parse_sql_condition

    return parse_sql_condition(where), where


def _span(node) -> tuple[int, int] | None:
    from ..planner.parse import span_over

    return span_over(node) if isinstance(node, exp.Expression) else None


class _Builder:
    def __init__(self, sql: str | None, fields: dict, labelled: dict):
        self.sql, self.fields, self.labelled = sql, fields, labelled

    def node(self, e) -> Node:
        labelled = self.labelled.get(_compared_column(e))
        if labelled is not None:
            label_field, labels = labelled
            on_labels = _Builder(self.sql, {label_field.name: label_field}, {}).node(e)
            return on_indices(on_labels, self.fields[label_field.name], label_field, labels)
        if isinstance(e, exp.Paren):
            return self.node(e.this)
        if isinstance(e, (exp.And, exp.Or)):
            op = CombinationOp.AND if isinstance(e, exp.And) else CombinationOp.OR
            return ExprNode(op, (self.node(e.left), self.node(e.right)))
        if isinstance(e, exp.Not):
            if isinstance(e.this, exp.In):
                return self._in(e.this, negated=True)
            if _truth_test(e.this):  # x IS NOT TRUE: also where x is NULL
                return ExprNode(CombinationOp.OR, (negate(self.node(e.this)),
                                                   self._null_test(e.this.this)))
            return negate(self.node(e.this))
        if type(e) in _OPS:
            return self._compare(e)
        if isinstance(e, exp.In):
            return self._in(e, negated=False)
        if isinstance(e, exp.Between):  # both bounds in DuckDB's one type
            bounds = self._constants(e.this, [e.args["low"], e.args["high"]])
            return ExprNode(CombinationOp.AND, (bounds.compared(ConditionOp.GE, 0),
                                                bounds.compared(ConditionOp.LE, 1)))
        if isinstance(e, exp.Is) and isinstance(e.expression, exp.Null):
            return self._null_test(e.this)
        if _truth_test(e):
            return self._is_truth(e.this, e.expression.this)
        if isinstance(e, exp.Column):
            return self._truth_of(e)
        raise UnsupportedSql(f"DELETE conditions do not support {e.key.upper()} "
                             f"({e.sql()!r}); use comparisons, AND/OR/NOT, IN and BETWEEN")

    def _truth_of(self, e: exp.Column) -> Node:
        """A bare BOOLEAN column (``WHERE b``, ``WHERE NOT b``): ``b = TRUE``."""
        name = self._column(e)
        if type_info(self.fields[name].datatype).kind != "bool":
            raise UnsupportedSql(f"DELETE ... WHERE {name}: a column alone as the condition "
                                 "is supported for BOOLEAN columns; compare it instead")
        return self._constants(e, [exp.true()]).compared(ConditionOp.EQ)

    def _is_truth(self, e, truth: bool) -> Node:
        """``x IS TRUE`` / ``x IS FALSE``: ``x = TRUE`` / ``x = FALSE`` of a BOOLEAN column, of
        a number ``x <> 0`` / ``x = 0`` (DuckDB casts it to BOOLEAN); false where x is NULL,
        as those comparisons are."""
        if not isinstance(e, exp.Column):
            raise UnsupportedSql(f"DELETE ... IS TRUE / IS FALSE tests a column, not {e.sql()!r}")
        name = self._column(e)
        kind = type_info(self.fields[name].datatype).kind
        if kind == "bool":
            return self._constants(e, [exp.Boolean(this=truth)]).compared(ConditionOp.EQ)
        if kind not in ("int", "uint", "float") or self.fields[name].cell_val_num != 1:
            raise UnsupportedSql(f"DELETE ... WHERE {name} IS [NOT] TRUE / FALSE is supported "
                                 "on BOOLEAN and number columns")
        zero = self._constants(e, [exp.Literal.number(0)])
        return zero.compared(ConditionOp.NE if truth else ConditionOp.EQ)

    def _refuse_null(self, in_list: bool = False):
        if in_list:  # dropping it is sound only outside every NOT, which is not tracked
            raise UnsupportedSql("DELETE: a NULL in an IN list is not supported (x IN (1, "
                                 "NULL) is NULL, not FALSE, where x is not 1; a NOT around it "
                                 "keeps it NULL): leave the NULL out of the list")
        raise UnsupportedSql("DELETE: a comparison with NULL is NULL on every row; "
                             "test for NULL with IS NULL or IS NOT NULL")

    def _null_test(self, e) -> NullTest:
        if not isinstance(e, exp.Column):
            raise UnsupportedSql(f"DELETE ... IS NULL tests a column, not {e.sql()!r}")
        field = self.fields[self._name(e)]
        if field.cell_val_num != 1 and type_info(field.datatype).kind not in ("string", "binary"):
            raise UnsupportedSql(f"DELETE ... WHERE {field.name} IS [NOT] NULL on a column "
                                 "holding a list of numbers per cell is not supported")
        return NullTest(self._column(e), is_null=True)

    def _compare(self, e) -> Node:
        op = _OPS[type(e)]
        left, right = e.this, e.expression
        if isinstance(left, exp.Column):
            return self._constants(left, [right]).compared(op)
        if isinstance(right, exp.Column):
            return self._constants(right, [left]).compared(_FLIPPED[op])
        raise UnsupportedSql(f"DELETE comparison {e.sql()!r} needs a column on one side")

    def _in(self, e: exp.In, negated: bool) -> Node:
        if e.args.get("query") is not None:
            raise UnsupportedSql("DELETE ... IN (SELECT ...) is not supported")
        return self._constants(e.this, e.expressions, in_list=True).member_set(negated)

    def _constants(self, column, items: list, in_list: bool = False) -> "_Constants":
        """The constants ``column`` is compared with (``in_list``: an IN list's), each read
        once (a NULL refused)."""
        name = self._column(column)
        values = []
        for item in items:
            if isinstance(item, exp.Null):
                self._refuse_null(in_list)
            values.append(_literal(item))
        if any(isinstance(v, TypedInstant) for v in values):
            return _Constants(self, name, items, self._typed_instants(name, values, items),
                              stored_counts=True)
        values = read_strings(self.fields[name], values, items, self._unreadable(name))
        return _Constants(self, name, items, values)

    def _typed_instants(self, column: str, values: list, items: list) -> list:
        """Constants beside a typed date/time literal (``DATE '...'``), each in the field's
        stored units: the literal exact, in its own type (``storage.typed_instants``), a
        string cast to the column's type as anywhere else."""
        field = self.fields[column]
        if not compares_instants(field.datatype) or field.cell_val_num != 1:
            raise UnsupportedSql(f"DELETE: column {column!r} ({field.datatype.name}) compared "
                                 "with a typed date/time literal is not supported")
        counts = []
        for value, item in zip(values, items):
            if isinstance(value, str):
                counts.append(self._instant(column, value, item))
                continue
            if not isinstance(value, TypedInstant):
                self._refuse_numbers_as_instants(column, [value], [item])
            try:
                counts.append(instant_in_field_units(value, field.datatype))
            except TypeError:
                raise SqlError(f"column {column!r} is a {field.datatype.name} field: it cannot "
                               f"be compared with a {value.sql_type}", self.sql,
                               _span(item)) from None
            except ValueError:
                raise SqlError(f"cannot read {value.text!r} as a {value.sql_type}", self.sql,
                               _span(item)) from None
            except OverflowError:
                raise UnsupportedSql(f"DELETE conditions with the infinite {value.sql_type} "
                                     f"{value.text!r} are not supported") from None
        return counts

    def _unreadable(self, column: str):
        def refuse(item, message: str):
            raise SqlError(f"column {column!r}: {message}", self.sql, _span(item))
        return refuse

    def _fixed_text_size(self, column: str) -> int | None:
        """The bytes of a cell of a fixed-size string field, else None."""
        field = self.fields[column]
        info = type_info(field.datatype)
        if info.kind not in ("string", "binary") or field.cell_val_num == VAR_NUM:
            return None
        return field.cell_val_num * np.dtype(info.numpy).itemsize

    def _fixed_text(self, column: str, op: ConditionOp, members: list[bytes],
                    size: int) -> Node:
        """``=`` / ``<>`` / IN / NOT IN on a fixed-size string field, as an IN or NOT IN of
        the members that fill a cell: TileDB compares a CHAR cell by its first byte only (as
        a signed char) except in IN / NOT IN, and refuses to read an array whose delete
        condition has a member of another size.  A string of another size equals no cell, as
        in SQL.  ``<`` ``<=`` ``>`` ``>=`` on CHAR cells cannot be expressed."""
        field = self.fields[column]
        if op not in (ConditionOp.EQ, ConditionOp.NE):
            if field.datatype == Datatype.CHAR:
                raise UnsupportedSql(
                    f"DELETE: TileDB compares the fixed-size CHAR column {column!r} by its "
                    "first byte only (as a signed char), so <, <=, >, >= on it cannot match "
                    "SQL; use =, <> or IN")
            return ValueNode(column, op, members[0])
        fitting = list(dict.fromkeys(m for m in members if len(m) == size))
        negated = op == ConditionOp.NE
        if fitting:
            return ValueNode.member_set(column, fitting, negated)
        return _every_cell_or_none(column, size, every=negated)  # no member fills a cell

    def _refuse_numbers_as_instants(self, column: str, values: list, items: list) -> None:
        """A number or boolean compared with a field SQL reads as a DATE, TIMESTAMP or TIME:
        DuckDB refuses it ("Cannot compare values of type DATE and type INTEGER_LITERAL - an
        explicit cast is required"), and so does DELETE, before anything is written."""
        field = self.fields[column]
        sql_type = arrow_value_type(field.datatype)
        if not pa.types.is_temporal(sql_type) or field.cell_val_num != 1:
            return
        for value, item in zip(values, items):
            if not isinstance(value, str):
                raise SqlError(f"column {column!r} is a {type_name(sql_type)}: it cannot be "
                               f"compared with {item.sql(dialect='duckdb')} without an "
                               "explicit cast; compare it with a date/time string",
                               self.sql, _span(item))

    def _refuse_text_as_count(self, column: str, value: str) -> None:
        """A string compared with a datetime or time field SQL reads as a raw count (years,
        months, ps, fs, as): not supported."""
        raise UnsupportedSql(f"DELETE: column {column!r} reads as a raw count in SQL; "
                             f"compare it with numbers, not with the string {value!r}")

    def _instant(self, column: str, value: str, item):
        """The string as DuckDB casts it to the field's SQL type, in stored units (a
        fraction when it falls between two: ``storage.temporal_comparisons``)."""
        field = self.fields[column]
        try:
            return in_field_units(value, field.datatype, type_info(field.datatype).unit)
        except ValueError:
            raise SqlError(f"column {column!r}: cannot read {value!r} as a "
                           f"{field.datatype.name} value", self.sql, _span(item)) from None

    def _name(self, e: exp.Column) -> str:
        """The field ``e`` names: as written, else the one field whose name matches in any
        case, as DuckDB's names do (two such fields: the name is ambiguous)."""
        name = e.name
        if name in self.fields:
            return name
        found = [f for f in self.fields if f.lower() == name.lower()]
        if len(found) == 1:
            return found[0]
        what = "ambiguous" if found else "unknown"
        raise SqlError(f"{what} column {name!r} in the DELETE condition "
                       f"(fields: {', '.join(self.fields)})", self.sql, _span(e))

    def _column(self, e) -> str:
        if not isinstance(e, exp.Column):
            raise UnsupportedSql(f"DELETE conditions compare columns with literals, not {e.sql()!r}")
        name = self._name(e)
        field = self.fields[name]
        if field.cell_val_num != 1 and type_info(field.datatype).kind not in ("string", "binary"):
            # SQL reads the cell as a list (DuckDB: "Cannot compare values of type DOUBLE[]"),
            # and TileDB cannot read a delete commit comparing a var-sized number
            raise SqlError(f"column {name!r} holds a list of {field.datatype.name} values per "
                           "cell: a DELETE condition cannot compare it with a single value",
                           self.sql, _span(e))
        if field.cell_val_num != 1 and field.datatype not in _CONDITION_TEXT_TYPES:
            # TileDB's query conditions compare no other type of several bytes a cell: a
            # commit naming one leaves the whole array unreadable to tiledb ("may only be
            # var-sized for ASCII strings"), NULL tests written as value nodes included
            raise UnsupportedSql(f"DELETE conditions on column {name!r} ({field.datatype.name}, "
                                 "several bytes a cell) are not supported: TileDB's delete "
                                 "conditions compare only CHAR, ASCII and UTF-8 text so")
        return name

    def _value(self, column: str, value, item) -> bytes:
        """A constant as the field's stored bytes, for a field compared as stored (strings,
        booleans, floats but FLOAT against a DOUBLE)."""
        field = self.fields[column]
        info = type_info(field.datatype)
        if info.kind in ("string", "binary"):
            if not isinstance(value, str):
                raise SqlError(f"column {column!r} is a string: compare it with a string literal",
                               self.sql, _span(item))
            if field.datatype == Datatype.CHAR:  # a BLOB in SQL: the string read as one
                try:
                    return blob_of(value)
                except ValueError as err:
                    raise SqlError(f"column {column!r}: {err}", self.sql, _span(item)) from None
            return value.encode(string_codec(field.datatype))
        if info.kind == "bool":
            if value != int(value):
                raise SqlError(f"column {column!r} holds booleans: {value} is not one", self.sql,
                               _span(item))
            return np.array([int(value)], dtype=info.numpy).tobytes()
        return np.array([value], dtype=info.numpy).tobytes()


def _written_as_text(item) -> bool:
    """Was the constant ``item`` written as a string literal (``'1'``, ``('1')``)?"""
    item = unwrapped(item)
    return isinstance(item, exp.Literal) and item.is_string


class _Constants:
    """The constants one field is compared with -- one for a comparison, two for BETWEEN, the
    IN list -- and the one way they all compare with it, as DuckDB gives them one type:

    * a fixed-size string field: whole cells (``_Builder._fixed_text``);
    * a FLOAT field beside a DOUBLE constant: as DOUBLEs (``storage.float_comparisons``);
    * an integer field, or a datetime or time field's stored count, with numbers: as DuckDB
      compares them (``storage.integer_comparisons``; ``y < 2.5`` is ``y < 3``);
    * a field SQL reads as a DATE or TIMESTAMP with strings: each cast as DuckDB casts it, in
      stored units (``storage.temporal_comparisons``), then as a count;
    * beside a typed date/time literal: counts of the field's unit already, each exact
      (``stored_counts``; ``_Builder._typed_instants``);
    * anything else as the stored bytes (``_Builder._value``)."""

    def __init__(self, builder: _Builder, column: str, items: list, values: list,
                 stored_counts: bool = False):
        if not stored_counts:  # else the values are counts of the field's unit already
            builder._refuse_numbers_as_instants(column, values, items)
        self.builder, self.column, self.field = builder, column, builder.fields[column]
        self.items = items
        info = type_info(self.field.datatype)
        single = self.field.cell_val_num == 1
        strings = [v for v in values if isinstance(v, str)]
        self.text_size = builder._fixed_text_size(column)
        self.numbers, self.dtype = None, None
        if self.text_size is not None:
            pass
        elif self.field.datatype == Datatype.FLOAT32 and single and not strings and \
                any(isinstance(v, float) and not _written_as_text(i) for v, i in zip(values, items)):
            # a DOUBLE constant: compared as DOUBLEs (a string read as the FLOAT column's
            # value is no DOUBLE: '1' beside 16777217 compares as FLOATs, as in DuckDB)
            self.numbers, self.dtype = values, np.dtype(np.float32)
        elif info.kind in ("int", "datetime", "time") and single and not strings:
            self.numbers = values  # a datetime or time field: its stored count
            self.dtype = np.dtype(info.numpy) if info.kind == "int" else np.dtype(np.int64)
        elif self.field.datatype in SQL_UNITS and single and len(strings) == len(values):
            self.numbers = [builder._instant(column, v, i) for v, i in zip(values, items)]
            self.dtype = np.dtype(np.int64)
        elif info.kind in ("datetime", "time"):
            builder._refuse_text_as_count(column, strings[0])
        self.stored = None if self.numbers is not None else \
            [None if is_nan(v) else builder._value(column, v, i) for v, i in zip(values, items)]
        self.values = values

    def compared(self, op: ConditionOp, index: int = 0) -> Node:
        """``column op constant``, the constant at ``index``."""
        if is_nan(self.values[index]):
            return nan_comparison(self.column, op, type_info(self.field.datatype).numpy)
        if self.text_size is not None:
            return self.builder._fixed_text(self.column, op, [self.stored[index]],
                                            self.text_size)
        if self.numbers is None:
            return ValueNode(self.column, op, self.stored[index])
        op, number = self._rules.comparison(op, self.numbers[index], self.dtype)
        return ValueNode(self.column, op, number.tobytes())

    def member_set(self, negated: bool) -> Node:
        """``column [NOT] IN (constants)``."""
        nan = next((i for i, v in enumerate(self.values) if is_nan(v)), None)
        if nan is not None:  # column = NaN OR column IN (the others)
            found = self.compared(ConditionOp.EQ, nan)
            others = [i for i, v in enumerate(self.values) if not is_nan(v)]
            if others:
                rest = _Constants(self.builder, self.column, [self.items[i] for i in others],
                                  [self.values[i] for i in others])
                found = ExprNode(CombinationOp.OR, (found, rest.member_set(False)))
            return negate(found) if negated else found
        if self.text_size is not None:
            op = ConditionOp.NE if negated else ConditionOp.EQ
            return self.builder._fixed_text(self.column, op, self.stored, self.text_size)
        if self.numbers is None:
            members = list(self.stored)
        else:
            found = self._rules.members(self.numbers, self.dtype)
            if not found:
                return self._nowhere(negated)
            members = list(dict.fromkeys(n.tobytes() for n in found))
        members += _other_zeros(members, self.field)
        return ValueNode.member_set(self.column, members, negated)

    @property
    def _rules(self):
        """How the numbers compare with the field's ``dtype``: ``float_comparisons`` (a
        FLOAT field) or ``integer_comparisons``."""
        return float_comparisons if self.dtype.kind == "f" else integer_comparisons

    def _nowhere(self, negated: bool) -> ValueNode:
        """IN when no member is a value of the field: a comparison no value satisfies (NOT
        IN: one every value does)."""
        op, number = (self._rules.every_value if negated else self._rules.no_value)(self.dtype)
        return ValueNode(self.column, op, number.tobytes())


def _truth_test(e) -> bool:
    """Is ``e`` ``x IS TRUE`` / ``x IS FALSE``?"""
    return isinstance(e, exp.Is) and isinstance(e.expression, exp.Boolean)


def _compared_column(e) -> str | None:
    """The column a comparison, IN or BETWEEN (or NOT IN) compares, else None."""
    if isinstance(e, exp.Not) and isinstance(e.this, exp.In):
        e = e.this
    if isinstance(e, (exp.In, exp.Between)):
        sides = [e.this]
    elif type(e) in _OPS:
        sides = [e.this, e.expression]
    else:
        return None
    return next((side.name for side in sides if isinstance(side, exp.Column)), None)


def _other_zeros(members: list[bytes], field) -> list[bytes]:
    """TileDB tests IN / NOT IN on raw bytes, where SQL finds -0.0 in (0.0) and 0.0 in
    (-0.0): each float zero of an IN list brings the other one along."""
    info = type_info(field.datatype)
    if info.kind != "float" or field.cell_val_num != 1:
        return []
    values = np.frombuffer(b"".join(members), dtype=info.numpy)
    zeros = {z.tobytes() for z in (np.array([0.0, -0.0], dtype=info.numpy))}
    return sorted(zeros - set(members)) if (values == 0).any() else []


def _literal(e):
    if isinstance(e, exp.Neg):
        inner = _literal(e.this)
        if isinstance(inner, (str, TypedInstant)):
            raise UnsupportedSql(f"cannot negate {e.sql()!r}")
        return -inner
    if isinstance(e, exp.Boolean):
        return 1 if e.this else 0
    if isinstance(e, exp.Literal):
        if e.is_string:
            return e.this
        text = e.this  # DuckDB: 10 an integer, 2.5 a DECIMAL (exact), 2.5e0 a DOUBLE
        if "e" in text.lower():
            return float(text)
        try:
            return int(text)
        except ValueError:
            return Decimal(text)
    if isinstance(e, exp.Paren):
        return _literal(e.this)
    instant = typed_instant(e)
    if instant is not None:
        return instant
    raise UnsupportedSql(f"DELETE conditions take literal values, not {e.sql()!r}")
