"""``COPY`` statements, as DuckDB runs them.

* ``COPY (query) TO 'file' [(options)]`` and ``COPY t TO 'file'`` write a result, streamed
  batch by batch, as CSV, Parquet or newline-delimited JSON: ``FORMAT`` names it, else the
  file's extension does (``.parquet``; ``.json``, ``.ndjson``, ``.jsonl``; anything else is
  CSV), before a ``.gz`` or ``.zst`` that compresses a CSV or JSON file (``COMPRESSION``
  gzip, zstd, none or auto).  CSV is DuckDB's: every value as its VARCHAR text
  (``engine.functions_text.text_of``), quoted only where it holds the delimiter, the quote, a
  line break or is the NULL text, a quote or escape inside escaped; a header of the column
  names (``HEADER false``: none); ``DELIMITER`` / ``SEP``, ``QUOTE``, ``ESCAPE`` and
  ``NULLSTR`` / ``NULL`` change them.  JSON is ``duckdb_json``'s.  Parquet takes
  ``COMPRESSION`` / ``CODEC`` and ``ROW_GROUP_SIZE``.  Repeated column names are made
  unique as DuckDB makes them (``a, a_1``).
* ``COPY t FROM 'f.parquet'`` appends the file's rows to the array ``t``, as ``INSERT INTO t
  SELECT * FROM 'f.parquet'`` does (columns by position).

Each answers DuckDB's one row, ``Count``: the rows written.  A file is written beside its
name and moved there once whole, so a COPY reading the file it writes reads it as it was.
Other options, other formats and ``COPY ... FROM`` a CSV or JSON file are ``UnsupportedSql``.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from .duckdb_json import json_text, json_values
from .engine.functions import registered_text_of
from .errors import InterfaceError, SqlError, UnsupportedSql
from .planner.parse import span_of
from .result import unique_names

_JSON_SUFFIXES = (".json", ".ndjson", ".jsonl")
_TEXT_CODECS = {".gz": "gzip", ".zst": "zstd"}  # a CSV or JSON file's compression by its name
_CODECS = {"snappy": "snappy", "zstd": "zstd", "gzip": "gzip", "brotli": "brotli",
           "lz4": "lz4", "lz4_raw": "lz4", "uncompressed": "none", "none": "none"}


@dataclass
class _Options:
    format: str
    header: bool = True
    delimiter: str = ","
    quote: str = '"'
    escape: str = '"'
    null: str = ""
    compression: str = "snappy"  # Parquet's codec; CSV and JSON: "none", "gzip" or "zstd"
    row_group_size: int | None = None


def run_copy(tree: exp.Copy, sql: str, run_query, run_insert) -> pa.Table:
    """Run a COPY statement: ``run_query(tree)`` gives a query tree's ``Result`` (planned
    against ``sql``, for spans), ``run_insert(tree)`` runs an INSERT tree."""
    files = tree.args.get("files") or []
    if len(files) != 1 or not (isinstance(files[0], exp.Literal) and files[0].is_string):
        raise UnsupportedSql("COPY takes one file name, written as a string")
    path = files[0].this
    if tree.args.get("kind"):
        return _copy_from(tree, path, sql, run_insert)
    options = _options(tree.args.get("params") or [], path, sql)
    source = tree.this
    query = exp.select("*").from_(source.copy()) if isinstance(source, exp.Table) else \
        source.this if isinstance(source, exp.Subquery) else source
    reader = run_query(query).fetch_record_batch()
    return pa.table({"Count": pa.array([_written(path, options, reader)], pa.int64())})


def _written(path: str, options: _Options, reader: pa.RecordBatchReader) -> int:
    """Write the result into a temporary file beside ``path``, then move it there (as
    DuckDB's USE_TMP_FILE does): a query reading ``path`` itself reads it whole, and a
    failure leaves ``path`` as it was.  The rows written."""
    folder, name = os.path.split(os.path.abspath(path))
    temporary = os.path.join(folder, f"tmp_{name}.{uuid.uuid4().hex}")  # made as ``path`` is
    try:
        names = unique_names(reader.schema.names)  # a, a_1: DuckDB's COPY renames so too
        written = _WRITERS[options.format](reader, temporary, names, options)
        os.replace(temporary, path)
    except OSError as err:
        raise InterfaceError(f"COPY cannot write {path!r}: {err.strerror or err}") from None
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)
    return written


def _copy_from(tree: exp.Copy, path: str, sql: str, run_insert) -> pa.Table:
    """``COPY t FROM 'f.parquet'``: ``INSERT INTO t SELECT * FROM 'f.parquet'``."""
    from .parquet_source import is_parquet_path

    if tree.args.get("params") or not is_parquet_path(path):
        raise UnsupportedSql("COPY ... FROM reads Parquet files ('f.parquet'), without "
                             "options")
    if not isinstance(tree.this, (exp.Table, exp.Schema)):  # t, or t(a, b)
        raise SqlError("COPY ... FROM copies into a table", sql, span_of(tree.this))
    rows = exp.select("*").from_(exp.Table(this=exp.Identifier(this=path, quoted=True)))
    return run_insert(exp.Insert(this=tree.this.copy(), expression=rows))


def _options(params: list, path: str, sql: str) -> _Options:
    """The COPY TO options, checked; the format by name or by the file's extension."""
    given = {}
    for param in params:
        name = param.name.upper()
        if name in given:
            raise SqlError(f"COPY option {name} is given twice", sql, span_of(param))
        given[name] = param
    compressed = _TEXT_CODECS.get(os.path.splitext(path.lower())[1])  # x.csv.gz, x.json.zst
    named = path.lower()[:-len(os.path.splitext(path)[1])] if compressed else path.lower()
    fmt = given.pop("FORMAT", None)
    fmt = _word(_value(fmt, sql), sql).lower() if fmt is not None else \
        "parquet" if named.endswith(".parquet") else \
        "json" if named.endswith(_JSON_SUFFIXES) else "csv"
    if fmt not in _WRITERS:
        raise UnsupportedSql(f"COPY TO writes csv, parquet or json, not {fmt!r}")
    options = _Options(fmt, compression="snappy" if fmt == "parquet" else compressed or "none")
    for name, param in given.items():
        if fmt == "csv" and name == "HEADER":  # HEADER alone: true
            options.header = True if param.expression is None else \
                _flag(param.expression, name, sql)
            continue
        value = _value(param, sql)
        if fmt != "parquet" and name == "COMPRESSION":
            codec = _word(value, sql).lower()
            if codec not in ("none", "gzip", "zstd", "auto"):
                raise SqlError(f"COPY option COMPRESSION: unknown compression {codec!r} "
                               "(none, gzip, zstd, auto)", sql, span_of(param))
            options.compression = compressed or "none" if codec == "auto" else codec
        elif fmt == "csv" and name in ("DELIMITER", "SEP", "QUOTE", "ESCAPE"):
            text = _word(value, sql)
            if len(text) != 1 or not text.isascii():
                raise UnsupportedSql(f"COPY option {name} takes one ASCII character here, "
                                     f"not {text!r}")
            setattr(options, "delimiter" if name == "SEP" else name.lower(), text)
        elif fmt == "csv" and name in ("NULLSTR", "NULL"):
            options.null = _word(value, sql)
        elif fmt == "parquet" and name in ("COMPRESSION", "CODEC"):
            codec = _word(value, sql).lower()
            if codec not in _CODECS:
                raise SqlError(f"COPY option {name}: unknown compression {codec!r} "
                               f"({', '.join(sorted(_CODECS))})", sql, span_of(param))
            options.compression = _CODECS[codec]
        elif fmt == "parquet" and name == "ROW_GROUP_SIZE":
            if not (isinstance(value, exp.Literal) and not value.is_string and
                    value.this.isdigit() and int(value.this) > 0):
                raise SqlError("COPY option ROW_GROUP_SIZE takes a positive whole number",
                               sql, span_of(param))
            options.row_group_size = int(value.this)
        else:
            raise UnsupportedSql(f"COPY TO option {name} is not supported for {fmt}")
    if options.delimiter == options.quote:
        raise SqlError("COPY: the DELIMITER and the QUOTE must differ", sql, None)
    return options


def _value(param: exp.Expression, sql: str) -> exp.Expression:
    """An option's value; one written without a value is DuckDB's error."""
    if param.expression is None:
        raise SqlError(f"COPY option {param.name.upper()} needs a value", sql, span_of(param))
    return param.expression


def _word(node: exp.Expression, sql: str) -> str:
    """An option's value written as a word or a string."""
    if isinstance(node, (exp.Var, exp.Identifier)) or (
            isinstance(node, exp.Literal) and node.is_string):
        return node.name
    if isinstance(node, exp.Column) and not node.table:
        return node.name
    raise SqlError(f"COPY option value {node.sql(dialect='duckdb')!r}: expected a word or a "
                   "string", sql, span_of(node))


def _flag(node: exp.Expression, name: str, sql: str) -> bool:
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    text = node.this if isinstance(node, exp.Literal) else _word(node, sql).lower()
    if text in ("true", "1", "on"):
        return True
    if text in ("false", "0", "off"):
        return False
    raise SqlError(f"COPY option {name} takes true or false", sql, span_of(node))


# -- CSV ------------------------------------------------------------------------------------


def _text_file(path: str, options: _Options):
    """``path`` opened to write UTF-8 text, compressed as ``options`` say."""
    if options.compression == "gzip":
        import gzip

        return gzip.open(path, "wt", encoding="utf-8", newline="")
    if options.compression == "zstd":
        import zstandard

        return zstandard.open(path, "wt", encoding="utf-8", newline="")
    return open(path, "w", encoding="utf-8", newline="")


def _write_csv(reader: pa.RecordBatchReader, path: str, names: list[str],
               options: _Options) -> int:
    """DuckDB's CSV (see the module text); the rows written."""
    text_of = registered_text_of()
    rows = 0
    with _text_file(path, options) as out:
        if options.header:
            header = _csv_fields(pa.array(names, pa.string()), options).to_pylist()
            out.write(options.delimiter.join(header) + "\n")
        for batch in reader:
            if not batch.num_rows:
                continue
            fields = [_csv_fields(text_of(column), options) for column in batch.columns]
            lines = pc.binary_join_element_wise(*fields, options.delimiter) if fields else \
                pa.array([""] * batch.num_rows)
            out.write("\n".join(lines.to_pylist()) + "\n")
            rows += batch.num_rows
    return rows


def _csv_fields(texts: pa.Array, options: _Options) -> pa.Array:
    """Each text as a CSV field: quoted (its quotes and escapes escaped) where it holds the
    delimiter, the quote or a line break, or is the NULL text; a NULL as the NULL text."""
    texts = texts.cast(pa.string()) if texts.type != pa.string() else texts
    needs = pc.equal(texts, options.null)
    for char in {options.delimiter, options.quote, "\n", "\r"}:
        needs = pc.or_(needs, pc.match_substring(texts, char))
    escaped = pc.replace_substring(texts, options.escape, options.escape * 2)
    if options.escape != options.quote:
        escaped = pc.replace_substring(escaped, options.quote, options.escape + options.quote)
    quoted = pc.binary_join_element_wise(options.quote, escaped, options.quote, "")
    return pc.fill_null(pc.if_else(needs, quoted, texts), options.null)


# -- JSON -----------------------------------------------------------------------------------


def _write_json(reader: pa.RecordBatchReader, path: str, names: list[str],
                options: _Options) -> int:
    """One JSON object a row (see the module text); the rows written."""
    text_of = registered_text_of()
    rows = 0
    with _text_file(path, options) as out:
        for batch in reader:
            columns = [json_values(column, text_of) for column in batch.columns]
            for values in zip(*columns):
                out.write(json_text(dict(zip(names, values))) + "\n")
            rows += batch.num_rows
    return rows


# -- Parquet --------------------------------------------------------------------------------


def _write_parquet(reader: pa.RecordBatchReader, path: str, names: list[str],
                   options: _Options) -> int:
    """The result as one Parquet file; the rows written."""
    import pyarrow.parquet as pq

    schema = pa.schema([field.with_name(name) for field, name in zip(reader.schema, names)])
    rows = 0
    try:
        with pq.ParquetWriter(path, schema, compression=options.compression) as writer:
            for batch in reader:
                batch = pa.RecordBatch.from_arrays(batch.columns, schema=schema)
                writer.write_batch(batch, row_group_size=options.row_group_size)
                rows += batch.num_rows
    except pa.ArrowNotImplementedError as err:
        raise UnsupportedSql(f"COPY TO Parquet of this result: {err}") from None
    return rows


_WRITERS = {"csv": _write_csv, "json": _write_json, "parquet": _write_parquet}
