"""Human and JSON descriptions of schemas and fragments (for ``tdbsql schema`` / ``fragments``)."""

from __future__ import annotations

import pyarrow as pa

from .datatypes import VAR_NUM, Datatype


def _pipeline(p) -> list:
    return [type(f).__name__.replace("Filter", "").upper() for f in p.filters]


def _cells(n: int) -> str:
    return "var" if n == VAR_NUM else str(n)


def schema_dict(schema) -> dict:
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
        "enumerations": [e.name for e in schema.enumerations],
    }


def schema_text(schema) -> str:
    d = schema_dict(schema)
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
