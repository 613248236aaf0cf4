"""UNPIVOT's columns must have a type in common that DuckDB casts each of them to unasked.

DuckDB refuses ``UNPIVOT t ON i, s`` over an INTEGER and a VARCHAR ("Cannot unpivot columns of
types INTEGER and VARCHAR - an explicit cast is required"), where the UNION ALL that
``planner.pivots`` makes of it would give VARCHAR.  Its rule, folded over the columns in
order: numbers unify (a BOOLEAN with integers only, not with a DOUBLE or a DECIMAL), a DATE
with a TIMESTAMP; text, times, intervals and blobs each only with their own kind.  The
columns' types are sqlglot's (``qualify`` and ``annotate_types`` over the schema); where one
is not known here, or of a kind not listed, only two columns of kinds no chain unifies (a
number and a text) are refused.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.qualify import qualify
from sqlglot.schema import MappingSchema

from ..errors import SqlError

_T = exp.DataType.Type
_KINDS = [
    ({_T.BOOLEAN}, "bool"),
    (exp.DataType.INTEGER_TYPES, "int"),
    (exp.DataType.FLOAT_TYPES, "float"),
    (exp.DataType.REAL_TYPES, "decimal"),  # after FLOAT_TYPES, which it holds too
    (exp.DataType.TEXT_TYPES, "text"),
    ({_T.DATE, _T.DATE32}, "date"),
    ({_T.TIMESTAMP, _T.TIMESTAMPTZ, _T.TIMESTAMPLTZ, _T.TIMESTAMPNTZ, _T.TIMESTAMP_S,
      _T.TIMESTAMP_MS, _T.TIMESTAMP_NS, _T.DATETIME}, "timestamp"),
    ({_T.TIME, _T.TIMETZ}, "time"),
    ({_T.INTERVAL}, "interval"),
    ({_T.BLOB, _T.VARBINARY, _T.BINARY}, "blob"),
]
# two kinds -> the kind both are cast to (a pair not here, of two kinds, has none)
_UNIFIED = {
    frozenset({"bool", "int"}): "int",
    frozenset({"int", "float"}): "float",
    frozenset({"int", "decimal"}): "decimal",
    frozenset({"float", "decimal"}): "float",
    frozenset({"date", "timestamp"}): "timestamp",
}
# the kinds some chain of the pairs above unifies (the others: each a family of its own)
_FAMILIES = {"bool": "number", "int": "number", "float": "number", "decimal": "number",
             "date": "point in time", "timestamp": "point in time"}


def check_unpivot_types(source: exp.Expression, columns: list[exp.Expression],
                        schema: dict) -> None:
    """Raise DuckDB's error if ``columns`` of ``source`` have no common type to unpivot in."""
    types = column_types(source, columns, schema)
    known = [(kind, t) for t in types if (kind := _kind(t)) is not None]
    if len(known) < len(types):  # one not known: only kinds of two families surely clash
        families: dict[str, exp.DataType] = {}
        for kind, data_type in known:
            families.setdefault(_FAMILIES.get(kind, kind), data_type)
        if len(families) > 1:
            _refuse(*list(families.values())[:2])
        return
    if not known:
        return
    (kind, first), rest = known[0], known[1:]
    for other, data_type in rest:
        unified = kind if other == kind else _UNIFIED.get(frozenset({kind, other}))
        if unified is None:
            _refuse(first, data_type)
        if unified != kind:
            kind, first = unified, data_type


def _refuse(a: exp.DataType, b: exp.DataType) -> None:
    raise SqlError(f"Cannot unpivot columns of types {a.sql(dialect='duckdb')} and "
                   f"{b.sql(dialect='duckdb')} - an explicit cast is required")


def column_types(source, columns, schema, dialect: str = "duckdb") -> list[exp.DataType | None]:
    """The types of ``columns`` (expressions) over ``source`` (None: not known here), names
    read as ``dialect`` reads them."""
    mapping = MappingSchema(schema, dialect=dialect, normalize=False)
    query = exp.select(*[column.copy() for column in columns]).from_(source.copy())
    try:
        typed = annotate_types(qualify(query, schema=mapping, dialect=dialect,
                                       quote_identifiers=False,
                                       validate_qualify_columns=False), schema=mapping)
    except SqlglotError:  # the statement's own planning reports what is wrong
        return [None] * len(columns)
    return [item.type for item in typed.selects]


def _kind(data_type: exp.DataType | None) -> str | None:
    if data_type is None:
        return None
    for types, kind in _KINDS:
        if data_type.this in types:
            return kind
    return None
