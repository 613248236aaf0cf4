"""Writing a result table in the CLI's formats: table, csv, json, line, markdown (text),
parquet, arrow (IPC file)."""

from __future__ import annotations

import decimal
import json
import sys

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

MAX_CELL = 60


def write_table(table: pa.Table | pa.RecordBatchReader, fmt: str, output: str | None) -> None:
    """Write a result in ``fmt`` to ``output`` (a path; None: standard output).  A
    ``RecordBatchReader`` (a streamed result) is written batch by batch."""
    schema = table.schema
    parts = (pa.Table.from_batches([b], schema) for b in table) \
        if isinstance(table, pa.RecordBatchReader) else iter([table])
    if fmt in ("parquet", "arrow"):
        if output is None and sys.stdout.isatty():
            from .errors import InterfaceError

            raise InterfaceError(f"--format {fmt} is binary: give --output FILE")
        sink = output if output is not None else sys.stdout.buffer
        if fmt == "parquet":
            import pyarrow.parquet as pq

            with pq.ParquetWriter(sink, schema) as writer:
                for part in parts:
                    writer.write_table(part)
        else:
            with pa.ipc.new_file(sink, schema) as writer:
                for part in parts:
                    writer.write_table(part)
        return
    if output is None:
        write_text(sys.stdout, parts, fmt)
    else:
        with open(output, "w", encoding="utf-8") as f:
            write_text(f, parts, fmt)


def write_text(out, parts, fmt: str) -> None:
    """The tables ``parts`` (the parts of one result) rendered in the text format ``fmt``
    and written to the stream ``out``: a header only before the first."""
    render = TEXT_FORMATS[fmt]
    for number, part in enumerate(parts):
        part = _end_of_day_as_text(part)
        out.write(render(part, header=False) if number and render in _CONTINUED else
                  render(part))


def _end_of_day_as_text(table: pa.Table) -> pa.Table:
    """A TIME column holding DuckDB's 24:00:00 (no Python time, no Arrow text) as its text,
    as DuckDB prints it; other columns as they are."""
    for i, column_type in enumerate(table.schema.types):
        if pa.types.is_time(column_type):
            from .engine.datetime_ops import end_of_day

            column = table.column(i)
            if pc.any(end_of_day(column)).as_py():
                table = table.set_column(i, table.field(i).name, _text_of()(column))
    return table


def _cell(value, single: bool = False) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bytes):
        return "0x" + value.hex()
    if isinstance(value, decimal.Decimal):  # every digit of the scale, never 0E-10
        text = format(value, "f")
    else:
        text = _single(value) if single else str(value)
    return text if len(text) <= MAX_CELL else text[: MAX_CELL - 1] + "…"


def _single(value: float) -> str:
    """A FLOAT (float32) value in the fewest digits that read back as it (12.7, as DuckDB
    prints it, not the float64 12.699999809265137 it widens to)."""
    return str(np.float32(value))


def _is_single(data_type: pa.DataType) -> bool:
    return pa.types.is_float32(data_type) or pa.types.is_float16(data_type)


def _text_cells(table: pa.Table) -> tuple[list[list[str]], list[bool]]:
    """Each row's cells as text (``_cell``; a list, MAP or STRUCT in DuckDB's text: ``[a,
    NULL]``, ``{a=1, b=2}``, ``[{'a': 1, 'b': NULL}]``), and which columns are numbers."""
    table = _nested_as_text(table, _is_nested)
    single = [_is_single(t) for t in table.schema.types]
    columns = [column.to_pylist() for column in table.columns]  # by position: names may repeat
    rows = [[_cell(column[r], f) for column, f in zip(columns, single)]
            for r in range(table.num_rows)]
    numeric = [pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t)
               for t in table.schema.types]
    return rows, numeric


def _widths(names: list[str], rows: list[list[str]]) -> list[int]:
    return [max([len(n)] + [len(r[i]) for r in rows]) for i, n in enumerate(names)]


def render_table(table: pa.Table) -> str:
    """An aligned text table with a row count, numbers right-aligned."""
    names = table.column_names
    rows, numeric = _text_cells(table)
    widths = _widths(names, rows)

    def line(cells):
        return " | ".join(c.rjust(w) if num else c.ljust(w)
                          for c, w, num in zip(cells, widths, numeric)).rstrip()

    out = [line(names), "-+-".join("-" * w for w in widths)]
    out.extend(line(r) for r in rows)
    out.append(f"({table.num_rows} row{'s' if table.num_rows != 1 else ''})")
    return "\n".join(out) + "\n"


def render_markdown(table: pa.Table, header: bool = True) -> str:
    """A Markdown (GitHub) table: numbers right-aligned (``---:``), ``|`` in a cell escaped."""
    names = [name.replace("|", "\\|") for name in table.column_names]
    rows, numeric = _text_cells(table)
    rows = [[cell.replace("|", "\\|") for cell in row] for row in rows]
    widths = [max(w, 3) for w in _widths(names, rows)]

    def line(cells):
        return "| " + " | ".join(c.rjust(w) if num else c.ljust(w)
                                 for c, w, num in zip(cells, widths, numeric)) + " |"

    rule = "|" + "|".join("-" * (w + 1) + ":" if num else "-" * (w + 2)
                          for w, num in zip(widths, numeric)) + "|"
    out = [line(names), rule] if header else []
    out.extend(line(r) for r in rows)
    return "".join(f"{text}\n" for text in out)


def render_line(table: pa.Table, header: bool = True) -> str:
    """One ``name = value`` line a column, the names right-aligned (to 5 at least), a blank
    line between rows: SQLite's and DuckDB's shell ``line`` mode.  ``header`` False: the
    rows follow earlier ones (a blank line first)."""
    names = table.column_names
    rows, _ = _text_cells(table)
    width = max([5, *(len(name) for name in names)])
    blocks = ["".join(f"{name.rjust(width)} = {cell}\n" for name, cell in zip(names, row))
              for row in rows]
    text = "\n".join(blocks)
    return "\n" + text if text and not header else text


def render_csv(table: pa.Table, header: bool = True) -> str:
    """CSV with a header; a list, MAP or STRUCT column as DuckDB writes one, in its text
    (``[1.5, 2.0]``, ``{a=1}``, ``{'a': 1}``, quoted): Arrow's CSV writer has no such types (a quantile list was an
    internal error).  A DECIMAL of more than 6 digits of scale is written as its text too
    (quoted), every digit of the scale: Arrow would write its values under 10**-6 with an
    exponent (``1.500E-9``)."""
    import io

    import pyarrow.csv as pcsv

    table = _nested_as_text(table, _is_nested)
    for i, column_type in enumerate(table.schema.types):
        if pa.types.is_decimal(column_type) and column_type.scale > 6:
            from .engine.decimal_values import to_text

            table = table.set_column(i, table.field(i).name, to_text(table.column(i)))
    buf = io.BytesIO()
    pcsv.write_csv(table, buf, pcsv.WriteOptions(include_header=header))
    return buf.getvalue().decode("utf-8")


def _is_nested(data_type: pa.DataType) -> bool:
    """A list, MAP or STRUCT type (printed as DuckDB's text of it)."""
    return pa.types.is_list(data_type) or pa.types.is_large_list(data_type) or \
        pa.types.is_fixed_size_list(data_type) or pa.types.is_map(data_type) or \
        pa.types.is_struct(data_type)


def _nested_as_text(table: pa.Table, nested) -> pa.Table:
    """``table`` with the columns whose type ``nested`` picks as DuckDB's text of them."""
    picked = [i for i, t in enumerate(table.schema.types) if nested(t)]
    for i in picked:  # the engine's functions, only for such a column
        table = table.set_column(i, table.field(i).name,
                                 _text_of()(table.column(i).combine_chunks()))
    return table


def _text_of():
    """The engine's ``text_of`` (CAST to VARCHAR), every function family registered."""
    from .engine.functions import registered_text_of

    return registered_text_of()


def render_json(table: pa.Table) -> str:
    def default(value):
        if isinstance(value, bytes):
            return value.hex()
        return str(value)

    singles = [name for name, t in zip(table.column_names, table.schema.types) if _is_single(t)]
    decimals = [name for name, t in zip(table.column_names, table.schema.types)
                if pa.types.is_decimal(t)]
    rows = table.to_pylist()
    for name, column_type in zip(table.column_names, table.schema.types):
        if _is_nested(column_type):  # as COPY TO json writes them: a MAP an object, a TUPLE
            from .duckdb_json import json_values  # an array, other values their text

            values = json_values(table.column(name).combine_chunks(), _text_of())
            for row, value in zip(rows, values):
                row[name] = value
    for row in rows:
        for name in singles:
            value = row[name]
            if value is not None and np.isfinite(value):
                row[name] = float(_single(value))
        for name in decimals:  # a JSON number, as DuckDB writes one
            if row[name] is not None:
                row[name] = float(row[name])
    return "\n".join(json.dumps(row, default=default) for row in rows) + "\n"


TEXT_FORMATS = {"table": render_table, "csv": render_csv, "json": render_json,
                "line": render_line, "markdown": render_markdown}
_CONTINUED = (render_csv, render_markdown, render_line)  # a part after the first: no header
