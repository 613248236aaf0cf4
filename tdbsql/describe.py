"""Descriptions of arrays and tables: human and JSON schemas and the fragment list (for
``tdbsql schema`` / ``fragments``), and the results of ``DESCRIBE``, ``SHOW TABLES`` and ``SHOW
ALL TABLES`` in DuckDB's columns and type names (``describe_table``, ``describe_columns``,
``show_tables``; ``Connection.sql`` runs the statements)."""

from __future__ import annotations

import datetime as dt
import math

import pyarrow as pa

from .datatypes import VAR_NUM, Datatype


def _pipeline(p) -> list:
    return [type(f).__name__.replace("Filter", "").upper() for f in p.filters]


def _cells(n: int) -> str:
    return "var" if n == VAR_NUM else str(n)


def _plain(value):
    """JSON-friendly: bytes bounds (string dimensions) as text."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "backslashreplace")
    return value.item() if hasattr(value, "item") else value


def _current_domain(schema):
    cd = schema.current_domain
    if cd is None or cd.empty:
        return None
    return [[_plain(lo), _plain(hi)] for lo, hi in cd.ranges]


def schema_dict(schema, enumerations: dict | None = None) -> dict:
    """The schema as plain data; ``enumerations`` (name -> Enumeration) adds their labels."""
    return {
        "type": "sparse" if schema.sparse else "dense",
        "version": schema.version,
        "tile_order": schema.tile_order.name, "cell_order": schema.cell_order.name,
        "capacity": schema.capacity, "allows_duplicates": schema.allows_duplicates,
        "dimensions": [
            {"name": d.name, "type": Datatype(d.datatype).name, "cells": _cells(d.cell_val_num),
             "domain": list(d.domain) if d.domain is not None else None,
             "tile": d.tile_extent, "filters": _pipeline(d.filters)}
            for d in schema.dimensions
        ],
        "attributes": [
            {"name": a.name, "type": Datatype(a.datatype).name, "cells": _cells(a.cell_val_num),
             "nullable": a.nullable, "filters": _pipeline(a.filters),
             "enumeration": a.enumeration_name}
            for a in schema.attributes
        ],
        "coords_filters": _pipeline(schema.coords_filters),
        "offsets_filters": _pipeline(schema.offsets_filters),
        "validity_filters": _pipeline(schema.validity_filters),
        "enumerations": [
            {"name": e.name, "values": [_plain(v) for v in enumerations[e.name].values()]}
            if enumerations else {"name": e.name}
            for e in schema.enumerations
        ],
        "current_domain": _current_domain(schema),
        "dimension_labels": [
            {"name": label.name, "dimension": schema.dimensions[label.dimension_index].name,
             "type": Datatype(label.datatype).name, "order": label.order.name, "uri": label.uri}
            for label in schema.dimension_labels
        ],
    }


def schema_text(schema, enumerations: dict | None = None) -> str:
    d = schema_dict(schema, enumerations)
    lines = [f"{d['type']} array (format version {d['version']}), tile order {d['tile_order']}, "
             f"cell order {d['cell_order']}, capacity {d['capacity']}, "
             f"duplicates {'allowed' if d['allows_duplicates'] else 'not allowed'}",
             "dimensions:"]
    for dim in d["dimensions"]:
        lines.append(f"  {dim['name']}: {dim['type']} domain={dim['domain']} tile={dim['tile']}"
                     + (f" filters={dim['filters']}" if dim["filters"] else ""))
    lines.append("attributes:")
    for a in d["attributes"]:
        extra = [f"cells={a['cells']}"] if a["cells"] != "1" else []
        extra += ["nullable"] if a["nullable"] else []
        extra += [f"filters={a['filters']}"] if a["filters"] else []
        extra += [f"enumeration={a['enumeration']}"] if a["enumeration"] else []
        lines.append(f"  {a['name']}: {a['type']} " + " ".join(extra))
    if d["current_domain"] is not None:
        lines.append(f"current domain: {d['current_domain']}")
    for e in d["enumerations"]:
        lines.append(f"enumeration {e['name']}: {e.get('values', '')}")
    for label in d["dimension_labels"]:
        lines.append(f"dimension label {label['name']} on {label['dimension']}: {label['type']} "
                     f"{label['order']}")
    return "\n".join(lines)


def fragments_table(array) -> pa.Table:
    rows = []
    for frag in array.fragments:
        meta = frag.metadata
        rows.append({
            "name": frag.name,
            "timestamp_start": frag.timestamp_range[0],
            "timestamp_end": frag.timestamp_range[1],
            "version": meta.version,
            "cells": int(meta.cell_count),
            "non_empty_domain": str(meta.non_empty_domain),
            "has_timestamps": bool(meta.has_timestamps),
        })
    return pa.Table.from_pylist(rows, schema=pa.schema([
        ("name", pa.string()), ("timestamp_start", pa.uint64()), ("timestamp_end", pa.uint64()),
        ("version", pa.uint32()), ("cells", pa.uint64()), ("non_empty_domain", pa.string()),
        ("has_timestamps", pa.bool_())]))


# -- DESCRIBE / SHOW: DuckDB's columns -------------------------------------------------------

DESCRIBE_SCHEMA = pa.schema([(name, pa.string()) for name in
                             ("column_name", "column_type", "null", "key", "default", "extra")])


def column_type(t: pa.DataType) -> str:
    """DuckDB's name for the SQL type of Arrow type ``t``, as ``typeof`` gives it."""
    from .engine.value_types import type_name

    return type_name(t)


def describe_columns(schema: pa.Schema) -> pa.Table:
    """DESCRIBE of a query's result or of an Arrow table: names and types; every column may be
    NULL ('YES'), no key, default or extra."""
    rows = [(f.name, column_type(f.type), "YES", None, None, None) for f in schema]
    return _describe_rows(rows)


def describe_table(source, array=None) -> pa.Table:
    """DESCRIBE of a registered table: an Arrow table's columns, or an array's dimensions then
    attributes.  Dimensions are the array's key (``PRI``, never NULL) unless the sparse array
    allows duplicate coordinates; an attribute is NULL-able if the schema says so; a dense
    array's attribute has its fill value as default (what a cell never written reads as);
    extra says which dimension and its domain and tile extent, or the enumeration."""
    schema = source.arrow_schema(array)
    if array is None:
        return describe_columns(schema)
    tiledb_schema = array.schema
    unique = not tiledb_schema.sparse or not tiledb_schema.allows_duplicates
    dims = list(tiledb_schema.dimensions)
    rows = []
    for index, dim in enumerate(dims):
        note = f"dimension {index + 1} of {len(dims)}, domain {_bounds(dim.domain)}"
        note += f", tile {_plain(dim.tile_extent)}" if dim.tile_extent is not None else ""
        note += "" if unique else ", duplicates allowed"
        rows.append((dim.name, column_type(schema.field(dim.name).type), "NO",
                     "PRI" if unique else None, None, note))
    for attr in tiledb_schema.attributes:
        default = None if tiledb_schema.sparse else _fill_literal(array, attr)
        extra = f"enumeration {attr.enumeration_name}" if attr.enumeration_name else None
        rows.append((attr.name, column_type(schema.field(attr.name).type),
                     "YES" if attr.nullable else "NO", None, default, extra))
    return _describe_rows(rows)


def _describe_rows(rows: list[tuple]) -> pa.Table:
    columns = list(zip(*rows)) if rows else [()] * len(DESCRIBE_SCHEMA)
    return pa.Table.from_arrays([pa.array(list(c), pa.string()) for c in columns],
                                schema=DESCRIBE_SCHEMA)


def _bounds(domain) -> str:
    if domain is None:
        return "unbounded"
    return "[" + ", ".join(repr(_plain(v)) if isinstance(v, bytes) else str(_plain(v))
                           for v in domain) + "]"


def _fill_literal(array, attr) -> str:
    """The attribute's fill value as DuckDB prints a column default."""
    from .engine.fields import column_to_arrow
    from .engine.fill import fill_column

    value = column_to_arrow(array, attr.name, fill_column(attr, 1))
    return sql_literal(value[0].as_py(), column_type(value.type))


def sql_literal(value, type_name: str) -> str:
    """``value`` as DuckDB prints a constant of type ``type_name`` (a column's default):
    ``42``, ``'it''s'``, ``CAST('2024-01-31' AS DATE)``, ``list_value(1, 2)``."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else f"CAST('{value}' AS {type_name})"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, bytes):
        text = "".join(chr(b) if 32 <= b < 127 and b != 39 else f"\\x{b:02X}" for b in value)
        return f"CAST('{text}' AS BLOB)"
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        text = value.isoformat(sep=" ") if isinstance(value, dt.datetime) else value.isoformat()
        return f"CAST('{text}' AS {type_name})"
    if isinstance(value, list):
        element = type_name.rsplit("[", 1)[0]
        return "list_value(" + ", ".join(sql_literal(v, element) for v in value) + ")"
    return "'" + str(value).replace("'", "''") + "'"


def show_tables(catalog, views, *, all_tables: bool = False) -> pa.Table:
    """SHOW TABLES (``name``) or SHOW ALL TABLES (DuckDB's columns: a registered table is a
    temporary view in DuckDB's ``temp.main``, a view made by CREATE VIEW is in ``memory.main``
    unless TEMP, with its columns when made) over the connection's tables and views
    (``views.View``), sorted by name (SHOW ALL TABLES: by database first)."""
    if not all_tables:
        names = sorted([*catalog.sources, *(view.name for view in views)])
        return pa.table({"name": pa.array(names, pa.string())})
    rows = sorted([("temp", name, catalog.sources[name].arrow_schema(), True)
                   for name in catalog.sources] +
                  [("temp" if view.temporary else "memory", view.name, view.schema,
                    view.temporary) for view in views], key=lambda row: (row[0], row[1]))
    return pa.table({
        "database": pa.array([row[0] for row in rows], pa.string()),
        "schema": pa.array(["main"] * len(rows), pa.string()),
        "name": pa.array([row[1] for row in rows], pa.string()),
        "column_names": pa.array([row[2].names for row in rows], pa.list_(pa.string())),
        "column_types": pa.array([[column_type(f.type) for f in row[2]] for row in rows],
                                 pa.list_(pa.string())),
        "temporary": pa.array([row[3] for row in rows], pa.bool_()),
    })
