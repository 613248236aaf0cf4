"""Human and JSON descriptions of schemas and fragments (for ``tdbsql schema`` / ``fragments``)."""

from __future__ import annotations

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
