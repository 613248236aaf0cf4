"""SQL behaviour as data files (sqllogictest style), checked in tdbsql AND in DuckDB.

Files live in ``tests/sql/<feature>/*.test``.  A file is a sequence of records separated by
blank lines; ``#`` starts a comment line.  Records:

    array NAME FIXTURE [timestamp=MS | timestamp=START,END]
        Register the fixture array FIXTURE (see tests/sql_fixtures.py) as table NAME for the
        records below it in this file; tdbsql opens it with ``con.register(NAME, path,
        timestamp=...)``, DuckDB gets the same cells read by ``tiledb`` at that timestamp.

    query <types> [nosort|rowsort|valuesort]
    SELECT ...
    ----
    expected rows, one a line, values tab-separated

        <types> has one letter per output column and is checked against the Arrow type:
        I integer (DuckDB's HUGEINT/DECIMAL(p,0) counts), R float or decimal, T string,
        B boolean, D date/time/timestamp/interval, L list (rendered as DuckDB prints one,
        ``[1, NULL, a]``, compared exactly; a MAP is T, rendered ``{a=1, b=2}``), S struct
        (rendered as DuckDB prints one, ``{'a': 1, 'b': x}``, compared exactly).  A value
        renders as NULL for null, (empty) for '', strings with \\t \\n \\\\ escaped, booleans
        true/false, dates ISO (2024-01-31), timestamps '2024-01-31 10:00:00[.ffffff]', floats
        as Python's repr (compared with rel/abs tolerance 1e-9).  nosort (the default)
        compares rows in order (use it with ORDER BY); rowsort sorts the rows; valuesort
        sorts all values.

    statement ok | statement error [message substring]
    SQL
        The SQL must run (DuckDB too) / must raise a tdbsql error containing the substring.

    error <ErrorClass> [span=TEXT] [message substring]
    SQL
        tdbsql must raise ``tdbsql.<ErrorClass>`` (or a subclass) whose message contains the
        substring; with ``span=TEXT`` the error's span must cover exactly TEXT in the SQL.
        Unless the class is UnsupportedSql, DuckDB must reject the SQL too.

    explain [analyze]
    SQL
    ----
    lines that must appear, in order, each as a substring of a line of ``con.explain(SQL)``

    explain error <ErrorClass> [message substring]
    SQL
        ``con.explain(SQL)`` must raise that error.

Time travel: ``FROM t FOR SYSTEM_TIME AS OF 2000`` (or ``BETWEEN a AND b``) runs as written in
tdbsql; for DuckDB the table reference is rewritten to a table read by ``tiledb`` at that
timestamp, keeping the table name as alias, so two versions of one array can be joined.

``python tests/sqllogic.py --complete FILE...`` runs every query record in DuckDB and writes
its types (when missing) and expected rows into the file: the oracle generates the expected
text, a human reviews it.  It also reports error records DuckDB accepts.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import math
import os
import sys
from pathlib import Path

import pyarrow as pa

SQL_DIR = Path(__file__).parent / "sql"
SORTS = ("nosort", "rowsort", "valuesort")
TYPE_LETTERS = set("ITRBDLS")
TOLERANCE = 1e-9


# -- records ----------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ArrayDecl:
    name: str
    fixture: str
    timestamp: int | tuple[int, int] | None = None


@dataclasses.dataclass(frozen=True)
class Record:
    """One record of a file; ``kind`` is query, statement, error, explain or explain_error."""

    kind: str
    sql: str
    path: str
    line: int
    arrays: tuple[ArrayDecl, ...]
    types: str = ""
    sort: str = "nosort"
    expected: tuple[str, ...] = ()
    error_class: str = ""
    message: str = ""
    span: str | None = None
    ok: bool = True
    analyze: bool = False
    end_line: int = 0  # one past the record's last line (for --complete)

    @property
    def feature(self) -> str:
        return Path(self.path).parent.name

    @property
    def ident(self) -> str:
        return f"{self.feature}/{Path(self.path).name}:{self.line}"


class FormatError(ValueError):
    """A malformed .test file."""


def parse_file(path: str | os.PathLike) -> list[Record]:
    lines = Path(path).read_text(encoding="utf-8").split("\n")
    records: list[Record] = []
    arrays: dict[str, ArrayDecl] = {}
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        if not line or line.lstrip().startswith("#"):
            i += 1
            continue
        start = i
        words = line.split()
        head = words[0]
        if head == "array":
            if len(words) < 3:
                raise FormatError(f"{path}:{i + 1}: array NAME FIXTURE [timestamp=..]")
            arrays[words[1]] = ArrayDecl(words[1], words[2], _parse_stamp(words[3:], path, i))
            i += 1
            continue
        if head not in ("query", "statement", "error", "explain"):
            raise FormatError(f"{path}:{i + 1}: unknown record {head!r}")
        i += 1
        sql_lines = []
        while i < len(lines) and lines[i].strip() and lines[i].rstrip() != "----":
            sql_lines.append(lines[i].rstrip())
            i += 1
        expected: list[str] = []
        has_results = i < len(lines) and lines[i].rstrip() == "----"
        if has_results:
            i += 1
            while i < len(lines) and lines[i].strip():
                expected.append(lines[i].rstrip("\n"))
                i += 1
        sql = "\n".join(sql_lines).strip()
        if not sql:
            raise FormatError(f"{path}:{start + 1}: record without SQL")
        common = dict(sql=sql, path=str(path), line=start + 1, arrays=tuple(arrays.values()),
                      end_line=i)
        records.append(_record(head, words[1:], expected, has_results, common, path, start))
    return records


def _parse_stamp(words, path, i):
    if not words:
        return None
    if len(words) != 1 or not words[0].startswith("timestamp="):
        raise FormatError(f"{path}:{i + 1}: expected timestamp=MS or timestamp=START,END")
    parts = [int(x) for x in words[0].split("=", 1)[1].split(",")]
    return parts[0] if len(parts) == 1 else (parts[0], parts[1])


def _record(head, args, expected, has_results, common, path, start) -> Record:
    where = f"{path}:{start + 1}"
    if head == "query":
        types, sort = "", "nosort"
        for word in args:
            if word in SORTS:
                sort = word
            elif set(word) <= TYPE_LETTERS:
                types = word
            else:
                raise FormatError(f"{where}: bad query option {word!r}")
        return Record("query", types=types, sort=sort, expected=tuple(expected), **common)
    if head == "statement":
        if not args or args[0] not in ("ok", "error"):
            raise FormatError(f"{where}: statement ok|error")
        return Record("statement", ok=args[0] == "ok", message=" ".join(args[1:]), **common)
    if head == "error":
        cls, span, message = _error_args(args, where)
        return Record("error", error_class=cls, span=span, message=message, **common)
    # explain
    if args and args[0] == "error":
        cls, span, message = _error_args(args[1:], where)
        return Record("explain_error", error_class=cls, span=span, message=message, **common)
    if not has_results:
        raise FormatError(f"{where}: explain needs ---- and expected lines")
    return Record("explain", analyze=bool(args and args[0] == "analyze"),
                  expected=tuple(expected), **common)


def _error_args(args, where):
    if not args:
        raise FormatError(f"{where}: error needs an error class")
    cls, rest = args[0], list(args[1:])
    span = None
    if rest and rest[0].startswith("span="):
        span = rest.pop(0)[len("span="):]
    return cls, span, " ".join(rest)


def collect(root: Path = SQL_DIR) -> list[Record]:
    out: list[Record] = []
    for path in sorted(root.glob("*/*.test")):
        out.extend(parse_file(path))
    return out


# -- rendering results ------------------------------------------------------------------------


def type_letter(t: pa.DataType) -> str:
    """The letter a column of Arrow type ``t`` renders under (the oracle's --complete)."""
    if pa.types.is_integer(t) or (pa.types.is_decimal(t) and t.scale == 0):
        return "I"
    if pa.types.is_floating(t) or pa.types.is_decimal(t):
        return "R"
    if pa.types.is_boolean(t):
        return "B"
    if pa.types.is_temporal(t) or pa.types.is_interval(t):
        return "D"
    if _is_list(t):
        return "L"
    if pa.types.is_struct(t):
        return "S"
    return "T"


def _is_list(t: pa.DataType) -> bool:
    return pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)


def _type_fits(letter: str, t: pa.DataType) -> bool:
    if pa.types.is_null(t):
        return True
    if pa.types.is_dictionary(t):
        t = t.value_type
    if letter == "L":
        return _is_list(t)
    if letter == "S":
        return pa.types.is_struct(t)
    if letter == "T":
        return pa.types.is_string(t) or pa.types.is_large_string(t) or \
            pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_map(t) or \
            getattr(pa.types, "is_string_view", lambda _: False)(t)
    return type_letter(t) == letter


def render(value, letter: str) -> str:
    if value is None:
        return "NULL"
    if letter == "R" and isinstance(value, decimal.Decimal):
        return str(value)  # every digit: DECIMAL columns compare exactly (``same_value``)
    if letter == "R":
        f = float(value)
        if math.isnan(f):
            return "NaN"
        if math.isinf(f):
            return "inf" if f > 0 else "-inf"
        return repr(f + 0.0)  # -0.0 -> 0.0
    if letter == "I":
        return str(int(value))
    if letter == "L":  # DuckDB's text of a list: [1, NULL, a b], compared exactly
        return "[" + ", ".join(_element(v) for v in value) + "]"
    if isinstance(value, dict):  # a STRUCT: DuckDB's text {'a': 1, 'b': x}
        return "{" + ", ".join(f"'{k}': {_element(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):  # a MAP, as (key, value) pairs: DuckDB's text {a=1, b=2}
        return "{" + ", ".join(f"{_element(k)}={_element(v)}" for k, v in value) + "}"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat(sep=" ") if isinstance(value, dt.datetime) else value.isoformat()
    if isinstance(value, bytes):
        value = value.decode("utf-8", "backslashreplace")
    if isinstance(value, decimal.Decimal):
        return str(value)
    text = str(value)
    if text == "":
        return "(empty)"
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def _element(value) -> str:
    if isinstance(value, list):
        return render(value, "L")
    if isinstance(value, dict):
        return render(value, "S")
    if isinstance(value, float):
        return render(value, "R")
    return render(value, "T") if value is not None else "NULL"


def table_rows(table: pa.Table, types: str) -> list[list[str]]:
    """Render an Arrow result under ``types``; raises AssertionError on a type mismatch."""
    if table.num_columns != len(types):
        raise AssertionError(f"{table.num_columns} result columns {table.column_names}, "
                             f"the record's types {types!r} say {len(types)}")
    for letter, field in zip(types, table.schema):
        if not _type_fits(letter, field.type):
            raise AssertionError(f"column {field.name!r} has type {field.type}, "
                                 f"the record says {letter!r}")
    columns = [col.to_pylist() for col in table.columns]
    return [[render(col[r], letter) for col, letter in zip(columns, types)]
            for r in range(table.num_rows)]


def _sort_key(value: str, letter: str) -> str:
    """Floats sort by 9 significant digits, so last-digit noise cannot reorder rows."""
    if letter == "R":
        try:
            return format(float(value), ".9g")
        except ValueError:  # NULL, or a non-float value in a valuesort
            return value
    return value


def arrange(rows: list[list[str]], types: str, sort: str) -> list[list[str]]:
    """Rows in the order a record compares them (valuesort: one value a row)."""
    if sort == "rowsort":
        return sorted(rows, key=lambda r: [_sort_key(v, t) for v, t in zip(r, types)])
    if sort == "valuesort":
        values = sorted((_sort_key(v, t), v) for r in rows for v, t in zip(r, types))
        return [[v] for _, v in values]
    return rows


def same_value(got: str, want: str, letter: str, exact: bool = False) -> bool:
    """``exact``: a DECIMAL column (DuckDB's type), whose values must be equal as decimal
    numbers -- 0.30000000000000004 is not 0.3 there, though within the float tolerance."""
    if got == want:
        return True
    if letter != "R" or "NULL" in (got, want):
        return False
    if exact:
        try:
            return decimal.Decimal(got) == decimal.Decimal(want)
        except decimal.InvalidOperation:
            return False
    try:
        a, b = float(got), float(want)
    except ValueError:
        return False
    return math.isclose(a, b, rel_tol=TOLERANCE, abs_tol=TOLERANCE)


def exact_columns(table: pa.Table) -> tuple[bool, ...]:
    """Which of DuckDB's result columns are DECIMAL (compared exactly, ``same_value``)."""
    return tuple(pa.types.is_decimal(f.type) for f in table.schema)


def compare(got_rows, expected: tuple[str, ...], types: str, sort: str,
            exact: tuple[bool, ...] = ()) -> str | None:
    """None if the rendered rows match the expected lines, else a readable difference;
    ``exact`` flags the DECIMAL columns (``same_value``)."""
    got = arrange(got_rows, types, sort)
    want = [line.split("\t") for line in expected]
    letters = types
    exact = tuple(exact) + (False,) * (len(types) - len(exact))
    if sort == "valuesort":  # values of several columns mixed: floats compare with tolerance
        want = arrange(want, "R" * len(want[0]) if want else "", sort)
        letters = "R" if "R" in types else "T"
        exact = (all(exact) and bool(exact),)
    elif sort == "rowsort":
        want = arrange(want, types, sort)
    problems = []
    if len(got) != len(want):
        problems.append(f"{len(got)} rows, expected {len(want)}")
    for n, (g, w) in enumerate(zip(got, want)):
        if len(g) != len(w) or not all(same_value(a, b, t, e)
                                       for a, b, t, e in zip(g, w, letters, exact)):
            problems.append(f"row {n}: got {g!r}, expected {w!r}")
            if len(problems) > 6:
                break
    if not problems:
        return None
    shown = "\n".join("\t".join(r) for r in got[:40])
    return "; ".join(problems) + f"\n-- got ({len(got)} rows):\n{shown}"


# -- the two engines ----------------------------------------------------------------------------


class Oracle:
    """DuckDB over the fixture arrays read by ``tiledb`` (at the declared timestamps)."""

    def __init__(self, arrays: tuple[ArrayDecl, ...], paths: dict[str, str]):
        import duckdb

        self.paths = paths
        self.con = duckdb.connect()
        self.decls = {d.name: d for d in arrays}
        self._loaded: set[str] = set()
        for d in arrays:
            self._register(d.name, d.fixture, d.timestamp)

    def _register(self, table: str, fixture: str, timestamp) -> None:
        from sql_fixtures import oracle_table

        if table in self._loaded:
            return
        self.con.register(table, oracle_table(self.paths[fixture], timestamp))
        self._loaded.add(table)

    def rewrite(self, sql: str) -> str:
        """Replace ``t FOR SYSTEM_TIME ...`` by a table read at that timestamp, aliased ``t``."""
        if "system_time" not in sql.lower():
            return sql
        import sqlglot
        from sqlglot import exp

        tree = sqlglot.parse_one(sql, read="duckdb")
        for table in list(tree.find_all(exp.Table)):
            version = table.args.get("version")
            if version is None:
                continue
            stamp = _version_stamp(version)
            decl = self.decls.get(table.name)
            if decl is None:
                raise KeyError(f"time travel on undeclared table {table.name!r}")
            suffix = "_".join(str(s) for s in (stamp if isinstance(stamp, tuple) else (stamp,)))
            name = f"{table.name}__at_{suffix}"
            self._register(name, decl.fixture, stamp)
            alias = table.alias or table.name
            table.set("version", None)
            table.set("this", exp.to_identifier(name))
            table.set("alias", exp.TableAlias(this=exp.to_identifier(alias)))
        return tree.sql("duckdb")

    def run(self, sql: str) -> pa.Table:
        return self.con.sql(self.rewrite(sql)).to_arrow_table()

    def execute(self, sql: str) -> None:
        # fetched to the end: DuckDB 2.0 refuses the next query while a result is unfinished
        self.con.execute(self.rewrite(sql)).fetchall()


def _version_stamp(version):
    from sqlglot import exp

    kind = str(version.args.get("kind", "")).upper()
    target = version.expression
    if kind == "AS OF":
        return _millis(target)
    if isinstance(target, exp.Tuple):
        return tuple(_millis(e) for e in target.expressions)
    raise ValueError(f"unsupported time travel form {kind}")


def _millis(node) -> int:
    from sqlglot import exp

    if isinstance(node, exp.Literal) and not node.is_string:
        return int(node.this)
    text = node.this.this if isinstance(node, exp.Cast) else node.this
    when = dt.datetime.fromisoformat(text)
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    return int(round(when.timestamp() * 1000))


def tdbsql_connection(arrays: tuple[ArrayDecl, ...], paths: dict[str, str]):
    """A tdbsql connection with the declared arrays registered (tests may replace this)."""
    import tdbsql

    con = tdbsql.connect()
    for d in arrays:
        con.register(d.name, paths[d.fixture], timestamp=d.timestamp)
    return con


def differential_engines(paths: dict[str, str], *names: str):
    """(``Oracle``, tdbsql connection) over the fixture arrays ``names``, each registered
    under its own name, for ``differential_check``; the connection is the error itself when
    it cannot be made, so that every example reports it as a failure."""
    decls = tuple(ArrayDecl(name, name) for name in names)
    try:
        con = tdbsql_connection(decls, paths)
    except Exception as err:  # noqa: BLE001 - reported by every example
        con = err
    return Oracle(decls, paths), con


def sql_string(text: str) -> str:
    """``text`` as a SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def tdbsql_table(con, sql: str) -> pa.Table:
    result = con.sql(sql)
    return result.arrow() if hasattr(result, "arrow") else pa.table(result)


# -- checking one record ----------------------------------------------------------------------


def differential_check(engines, sql: str, ordered: bool) -> None:
    """Run ``sql`` through DuckDB and tdbsql (``engines``: (``Oracle``, connection)) and fail
    unless both refuse it (tdbsql with its own error) or both give the same rows (in order
    when ``ordered``).  With ``$TDBSQL_DIFF_LOG`` set, a difference is appended to that file
    instead, so a long randomized run logs every mismatch rather than stopping at the first."""
    import tdbsql

    oracle, con = engines
    if isinstance(con, Exception):
        raise AssertionError(f"tdbsql.connect()/register failed: {type(con).__name__}: {con}")
    try:
        want_table = oracle.run(sql)
    except Exception:  # noqa: BLE001 - DuckDB refuses it: tdbsql must refuse it too
        try:
            tdbsql_table(con, sql)
        except tdbsql.TdbsqlError:
            return
        except Exception as err:  # noqa: BLE001
            return _mismatch(sql, f"raw {type(err).__name__} where DuckDB errs: {err}")
        return _mismatch(sql, "tdbsql ran a query DuckDB refuses")
    types = "".join(type_letter(f.type) for f in want_table.schema)
    want = table_rows(want_table, types)
    try:
        got_table = tdbsql_table(con, sql)
    except Exception as err:  # noqa: BLE001
        return _mismatch(sql, f"tdbsql raised {type(err).__name__}: {err}")
    try:
        got = table_rows(got_table, types)
    except AssertionError as err:
        return _mismatch(sql, f"types: {err}")
    sort = "nosort" if ordered else "rowsort"
    diff = compare(got, tuple("\t".join(r) for r in arrange(want, types, sort)), types, sort,
                   exact_columns(want_table))
    if diff is not None:
        _mismatch(sql, diff)


def _mismatch(sql: str, message: str) -> None:
    log = os.environ.get("TDBSQL_DIFF_LOG")
    if not log:
        raise AssertionError(f"{message}\n{sql}")
    with open(log, "a", encoding="utf-8") as out:
        out.write(f"{sql}\n  {message.splitlines()[0][:300]}\n")


class Engines:
    """Connections per distinct array declaration set, made on first use."""

    def __init__(self, paths: dict[str, str]):
        self.paths = paths
        self._oracles: dict = {}
        self._tdbsql: dict = {}

    def oracle(self, arrays) -> Oracle:
        if arrays not in self._oracles:
            self._oracles[arrays] = Oracle(arrays, self.paths)
        return self._oracles[arrays]

    def tdbsql(self, arrays):
        if arrays not in self._tdbsql:
            self._tdbsql[arrays] = tdbsql_connection(arrays, self.paths)
        return self._tdbsql[arrays]


class RecordFailure(AssertionError):
    pass


def check_record(record: Record, engines: Engines) -> None:
    """Check ``record`` in DuckDB (the file must match the oracle) and then in tdbsql."""
    where = f"{record.ident}\n{record.sql}\n"
    if record.kind == "query":
        _check_query(record, engines, where)
    elif record.kind == "statement":
        _check_statement(record, engines, where)
    elif record.kind == "error":
        _check_error(record, engines, where)
    elif record.kind == "explain":
        _check_explain(record, engines, where)
    else:
        _check_raises(record, lambda: engines.tdbsql(record.arrays).explain(record.sql), where)


def _check_query(record: Record, engines: Engines, where: str) -> None:
    if not record.types:
        raise RecordFailure(f"{where}query record without types: run --complete")
    oracle_table = engines.oracle(record.arrays).run(record.sql)
    exact = exact_columns(oracle_table)
    oracle_rows = table_rows(oracle_table, record.types)
    diff = compare(oracle_rows, record.expected, record.types, record.sort, exact)
    if diff:
        raise RecordFailure(f"{where}DuckDB disagrees with the file (fix the file): {diff}")
    con = engines.tdbsql(record.arrays)
    try:
        table = tdbsql_table(con, record.sql)
    except Exception as err:  # noqa: BLE001 - the failure message is the point
        raise RecordFailure(f"{where}tdbsql raised {type(err).__name__}: {err}") from err
    try:
        rows = table_rows(table, record.types)
    except AssertionError as err:
        raise RecordFailure(f"{where}tdbsql result: {err}") from None
    diff = compare(rows, record.expected, record.types, record.sort, exact)
    if diff:
        raise RecordFailure(f"{where}tdbsql differs from DuckDB: {diff}")


def _check_statement(record: Record, engines: Engines, where: str) -> None:
    con = engines.tdbsql(record.arrays)
    if record.ok:
        engines.oracle(record.arrays).execute(record.sql)
        try:
            tdbsql_table(con, record.sql)
        except Exception as err:  # noqa: BLE001
            raise RecordFailure(f"{where}tdbsql raised {type(err).__name__}: {err}") from err
        return
    _check_raises(record, lambda: tdbsql_table(con, record.sql), where, any_tdbsql=True)


def _check_error(record: Record, engines: Engines, where: str) -> None:
    if record.error_class != "UnsupportedSql":
        try:
            engines.oracle(record.arrays).run(record.sql)
        except Exception:  # noqa: BLE001 - DuckDB rejects it too: good
            pass
        else:
            raise RecordFailure(f"{where}DuckDB accepts this SQL; an {record.error_class} "
                                "record needs SQL both engines reject")
    con = engines.tdbsql(record.arrays)
    _check_raises(record, lambda: tdbsql_table(con, record.sql), where)


def _check_raises(record: Record, run, where: str, any_tdbsql: bool = False) -> None:
    import tdbsql

    wanted = tdbsql.TdbsqlError if any_tdbsql else getattr(tdbsql, record.error_class, None)
    if wanted is None:
        import tdbsql.errors as errors

        wanted = getattr(errors, record.error_class, None)
    if wanted is None:
        raise RecordFailure(f"{where}unknown error class {record.error_class!r}")
    try:
        run()
    except wanted as err:
        text = str(err)
        if record.message and record.message.lower() not in text.lower():
            raise RecordFailure(f"{where}{type(err).__name__} message lacks "
                                f"{record.message!r}: {text}") from None
        if record.span is not None:
            span = getattr(err, "span", None)
            got = None if span is None else record.sql[span[0]:span[1]]
            if got != record.span:
                raise RecordFailure(f"{where}error span covers {got!r}, expected "
                                    f"{record.span!r}: {text}") from None
        return
    except Exception as err:  # noqa: BLE001
        raise RecordFailure(f"{where}expected {wanted.__name__}, got "
                            f"{type(err).__name__}: {err}") from err
    raise RecordFailure(f"{where}expected {wanted.__name__}, but the SQL ran")


def _check_explain(record: Record, engines: Engines, where: str) -> None:
    con = engines.tdbsql(record.arrays)
    try:
        text = con.explain(record.sql, analyze=record.analyze)
    except Exception as err:  # noqa: BLE001
        raise RecordFailure(f"{where}explain raised {type(err).__name__}: {err}") from err
    lines = str(text).split("\n")
    pos = 0
    for want in record.expected:
        want = want.strip()
        while pos < len(lines) and want not in lines[pos]:
            pos += 1
        if pos == len(lines):
            raise RecordFailure(f"{where}EXPLAIN lacks (in order) {want!r}:\n{text}")
        pos += 1


# -- --complete: fill expected results from DuckDB ---------------------------------------------


def complete_file(path: str, paths: dict[str, str]) -> list[str]:
    """Rewrite ``path`` with DuckDB's types and rows for every query record; return warnings."""
    records = parse_file(path)
    lines = Path(path).read_text(encoding="utf-8").split("\n")
    engines = Engines(paths)
    out: list[str] = []
    warnings: list[str] = []
    pos = 0
    for rec in records:
        start = rec.line - 1
        out.extend(lines[pos:start])
        pos = rec.end_line
        if rec.kind == "error" and rec.error_class != "UnsupportedSql":
            try:
                engines.oracle(rec.arrays).run(rec.sql)
                warnings.append(f"{rec.ident}: DuckDB accepts an {rec.error_class} record")
            except Exception:  # noqa: BLE001
                pass
        if rec.kind != "query":
            out.extend(lines[start:rec.end_line])
            continue
        try:
            table = engines.oracle(rec.arrays).run(rec.sql)
        except Exception as err:  # noqa: BLE001
            warnings.append(f"{rec.ident}: DuckDB raised {type(err).__name__}: {err}")
            out.extend(lines[start:rec.end_line])
            continue
        types = "".join(type_letter(f.type) for f in table.schema)
        if rec.types and rec.types != types:
            warnings.append(f"{rec.ident}: types {rec.types!r} -> {types!r}")
        rows = arrange(table_rows(table, types), types, rec.sort)
        if rec.sort == "nosort" and "order by" not in rec.sql.lower() and len(rows) > 1:
            warnings.append(f"{rec.ident}: nosort without ORDER BY")
        header = f"query {types}" + ("" if rec.sort == "nosort" else f" {rec.sort}")
        out.append(header)
        out.extend(rec.sql.split("\n"))
        out.append("----")
        out.extend("\t".join(r) for r in rows)
    out.extend(lines[pos:])
    Path(path).write_text("\n".join(out), encoding="utf-8")
    return warnings


def main(argv: list[str]) -> int:
    import argparse
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--complete", nargs="+", metavar="FILE", required=True,
                        help="fill in types and expected rows from DuckDB")
    parser.add_argument("--arrays", help="directory for the fixture arrays (default: temp)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).parent))
    from sql_fixtures import build_fixtures

    root = args.arrays or tempfile.mkdtemp(prefix="sqllogic_")
    paths = build_fixtures(root)
    status = 0
    for path in args.complete:
        for warning in complete_file(path, paths):
            print(warning)
            status = 1
        print(f"completed {path}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
