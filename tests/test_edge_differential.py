"""Edge-value differential test: window and scalar functions over ``dx``, tdbsql against DuckDB.

``dx(id, g?, v?, f?, r?, s?, d?, ts?)`` (tests/sql_fixtures.py) holds the values the other
differential tests avoid: NaN, +-inf, -0.0 and 1e300 among ties in ``f``, a float32 ``r``,
strings with combining marks, ``ß`` / ``İ``, emoji, blanks and '', month ends and leap days
centuries from 1970, timestamps before 1970 with fractions of a second.  hypothesis builds

- window calls: ranking with ties and NULLs first or last, ascending or descending; ntile /
  lag / lead (offsets and defaults, constants or columns) / first / last / nth_value (IGNORE NULLS, ROWS frames)
  over total orders; sums, averages, counts and extremes over ROWS / GROUPS frames and RANGE
  frames with offsets over numbers, dates and timestamps; whole-partition aggregates;
- scalar expressions: substr / left / right / lpad / rpad / trim / replace / strpos /
  split_part / LIKE / ILIKE with ESCAPE over UTF-8; date_trunc / date_part / date_diff /
  strftime / INTERVAL arithmetic at month ends and before 1970; CASE / CAST / coalesce /
  nullif over mixed types, integer // and % with negative operands, FLOAT arithmetic, round.

Every query has one right answer (orders that matter end with the unique ``id``); rows
compare as multisets.  Both engines refusing a query passes; one refusing fails, as does
any raw (non-tdbsql) exception.  Derandomized, with modest example counts.  The queries
steer clear of documented differences (INTEGER overflow, ``typeof`` of integer literals,
INTERVAL results of ``ts - ts``).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sqllogic
from sqllogic import sql_string
from sql_fixtures import sql_arrays  # noqa: F401 - the session fixture, used by name

SETTINGS = dict(deadline=None, derandomize=True, print_blob=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.fixture(scope="module")
def engines(sql_arrays):  # noqa: F811 - pytest fixture injection
    return sqllogic.differential_engines(sql_arrays, "dx")


def _int(value: int) -> str:
    return f"({value})" if value < 0 else str(value)


# -- window calls -------------------------------------------------------------------------------

PARTITIONS = ["", "PARTITION BY g", "PARTITION BY v % 3", "PARTITION BY s IS NULL",
              "PARTITION BY f", "PARTITION BY d IS NULL, g", "PARTITION BY r"]
KEYS = ["f", "r", "s", "d", "ts", "v", "g", "-f", "lower(s)", "length(s)"]
DIRECTIONS = ["", " DESC", " NULLS FIRST", " DESC NULLS LAST", " DESC NULLS FIRST"]
RANKING = ["rank()", "dense_rank()", "percent_rank()", "cume_dist()"]
ORDERED = ["row_number()", "ntile(2)", "ntile(5)", "ntile(100)", "lag(v)", "lag(f, 2)",
           "lead(s, 1, '?')", "lag(d, 3, DATE '2000-01-01')", "lead(ts, 2)", "lag(r)",
           "lead(v, 1, -1)", "first_value(f)", "last_value(s)", "nth_value(d, 2)",
           "first_value(s IGNORE NULLS)", "last_value(f IGNORE NULLS)", "lag(v, 0)",
           "ntile(g + 1)", "lag(f, g)", "lead(s, v % 3, '?')", "lag(d, v IGNORE NULLS)",
           "lead(ts, g - 1 IGNORE NULLS)"]
FRAMED = ["count(*)", "count(f)", "sum(v)", "sum(f)", "avg(f)", "sum(r)", "avg(v)", "min(s)",
          "max(s)", "min(f)", "max(f)", "min(d)", "max(ts)", "max(r)"]
WHOLE = FRAMED + ["stddev_samp(v)", "count(DISTINCT s)", "bool_or(f > 0)", "median(f)"]
ROWS = ["UNBOUNDED PRECEDING", "3 PRECEDING", "1 PRECEDING", "CURRENT ROW", "1 FOLLOWING",
        "2 FOLLOWING", "UNBOUNDED FOLLOWING"]
RANGE_OFFSETS = [("v", ["0", "1", "4"]), ("f", ["0.5", "2", "1e300"]), ("r", ["1", "0.25"]),
                 ("d", ["INTERVAL 1 MONTH", "INTERVAL 40 YEAR", "31"]),
                 ("ts", ["INTERVAL 12 HOUR", "INTERVAL 1 DAY"])]


@st.composite
def order_key(draw) -> str:
    return draw(st.sampled_from(KEYS)) + draw(st.sampled_from(DIRECTIONS))


@st.composite
def window_call(draw) -> str:
    part = draw(st.sampled_from(PARTITIONS))
    keys = ", ".join(draw(st.lists(order_key(), min_size=1, max_size=2)))
    kind = draw(st.integers(0, 5))
    if kind == 0:
        return f"{draw(st.sampled_from(RANKING))} OVER ({part} ORDER BY {keys})"
    if kind == 1:
        call = draw(st.sampled_from(ORDERED))
        frame = ""
        if call.startswith(("first", "last", "nth")) and draw(st.booleans()):
            start = draw(st.sampled_from(ROWS[:-1]))
            frame = f" ROWS BETWEEN {start} AND {draw(st.sampled_from(_after(start)))}"
        return f"{call} OVER ({part} ORDER BY {keys}, id{frame})"
    if kind == 2:  # ROWS / GROUPS frames
        start = draw(st.sampled_from(ROWS[:-1]))
        unit = draw(st.sampled_from(["ROWS", "GROUPS"]))
        tail = ", id" if unit == "ROWS" else ""
        return (f"{draw(st.sampled_from(FRAMED))} OVER ({part} ORDER BY {keys}{tail} {unit} "
                f"BETWEEN {start} AND {draw(st.sampled_from(_after(start)))})")
    if kind == 3:  # RANGE with offsets over one key
        key, offsets = draw(st.sampled_from(RANGE_OFFSETS))
        low = draw(st.sampled_from(["UNBOUNDED PRECEDING", "CURRENT ROW"]
                                   + [f"{o} PRECEDING" for o in offsets]))
        high = draw(st.sampled_from(["UNBOUNDED FOLLOWING", "CURRENT ROW"]
                                    + [f"{o} FOLLOWING" for o in offsets]))
        if low == "CURRENT ROW" and high == "CURRENT ROW":
            high = "UNBOUNDED FOLLOWING"
        direction = draw(st.sampled_from(DIRECTIONS))
        return (f"{draw(st.sampled_from(FRAMED))} OVER ({part} ORDER BY {key}{direction} "
                f"RANGE BETWEEN {low} AND {high})")
    if kind == 4:  # the default frame: peers included
        return f"{draw(st.sampled_from(FRAMED))} OVER ({part} ORDER BY {keys})"
    return f"{draw(st.sampled_from(WHOLE))} OVER ({part})"


def _after(start: str) -> list[str]:
    """The frame ends that may follow ``start`` (DuckDB refuses an end before the start)."""
    later = ROWS[max(ROWS.index(start), 1):]
    return later[1:] if start.endswith("FOLLOWING") else later


@st.composite
def window_query(draw) -> str:
    calls = draw(st.lists(window_call(), min_size=1, max_size=3))
    where = draw(st.sampled_from(["", "", " WHERE v > 0", " WHERE f IS NOT NULL",
                                  " WHERE NOT isnan(f)", " WHERE id < 0"]))
    if draw(st.integers(0, 4)) == 0:  # inside an expression
        return f"SELECT id, coalesce(v, 0) - ({calls[0]}) AS w FROM dx{where}"
    cols = ", ".join(f"{call} AS w{i}" for i, call in enumerate(calls))
    return f"SELECT id, {cols} FROM dx{where}"


# -- scalar expressions -------------------------------------------------------------------------

WORDS = ["", "a", "ab", "ä", "東", "🙂", " ", ",", "ß", "A"]
PATTERNS = ["a%", "%b%", "_", "%", "", "%ä%", "Ä%", "__", "%_%", "東_", "%🙂", "a\\_b",
            "x\\\\y", "%\\%%", "İ%", "STRASSE", "%ß", "e_", "%c_%"]
TRUNC_UNITS = ["millennium", "century", "decade", "year", "quarter", "month", "week", "day",
               "hour", "minute", "second", "millisecond", "isoyear"]
PARTS = ["year", "month", "day", "quarter", "week", "dow", "isodow", "doy", "decade",
         "century", "millennium", "isoyear", "yearweek", "epoch", "era", "julian"]
CLOCK_PARTS = ["hour", "minute", "second", "millisecond", "microsecond"]
DIFF_PARTS = ["day", "week", "month", "quarter", "year", "decade", "century", "isoyear",
              "hour", "minute", "second", "millisecond"]
FORMATS = ["%Y-%m-%d", "%c", "%x %X", "%a %A %b %B", "%j %-j %U %W %V %G %u %w",
           "%I:%M %p", "%H:%M:%S.%g", "%y/%-m/%-d", "%f %%", "%z%Z|%T"]
STAMPS = ["d", "ts", "DATE '2024-02-29'", "DATE '1970-01-01'", "TIMESTAMP '1969-12-31 23:59:59.5'",
          "TIMESTAMP '1969-12-31 12:00:00'"]
NUMBERS = ["v", "g", "f", "r"]
CONSTANTS = ["3", "(-2)", "0.5"]
CAST_TYPES = ["INTEGER", "BIGINT", "DOUBLE", "DECIMAL(12,2)", "VARCHAR", "FLOAT"]
INTERVALS = ["INTERVAL 1 MONTH", "INTERVAL (-1) MONTH", "INTERVAL 1 YEAR", "INTERVAL 13 MONTH",
             "INTERVAL '-1 year -2 months'", "INTERVAL 1 DAY", "INTERVAL 36 HOUR",
             "INTERVAL '1 month -1 day'", "INTERVAL 90 MINUTE", "INTERVAL 1 QUARTER"]


def _forms(draw) -> list:
    """Each a function of nothing giving one scalar expression over dx."""
    word = lambda: sql_string(draw(st.sampled_from(WORDS)))  # noqa: E731
    small = lambda low, high: _int(draw(st.integers(low, high)))  # noqa: E731
    pick = lambda options: draw(st.sampled_from(options))  # noqa: E731
    return [
        lambda: f"substr(s, {small(-4, 4)})",
        lambda: f"substr(s, {small(-4, 4)}, {small(-1, 3)})",
        lambda: f"{pick(['left', 'right'])}(s, {small(-3, 3)})",
        lambda: f"{pick(['lpad', 'rpad'])}(s, {small(-1, 6)}, {pick(['*', 'ab', 'é'])!r})",
        lambda: f"{pick(['trim', 'ltrim', 'rtrim'])}(s)",
        lambda: f"{pick(['trim', 'ltrim', 'rtrim'])}(s, {pick(['a ', ' p', 'äa', 'x'])!r})",
        lambda: f"trim({pick(['BOTH', 'LEADING', 'TRAILING'])} {pick([' ', 'a'])!r} FROM s)",
        lambda: f"replace(s, {pick(['a', 'ä', ',', 'ab'])!r}, {word()})",
        lambda: f"{pick(['strpos', 'instr'])}(s, {word()})",
        lambda: f"position({word()} IN s)",
        lambda: f"split_part(s, {pick([',', '', '.', ',,'])!r}, {small(-3, 3)})",
        lambda: f"{pick(['reverse', 'upper', 'lower', 'length'])}(s)",
        lambda: f"s {pick(['LIKE', 'NOT LIKE', 'ILIKE', 'NOT ILIKE'])} "
                f"{sql_string(pick(PATTERNS))}",
        lambda: f"s LIKE {sql_string(pick(['a#_b', 'a#%b', '%#%', '#_']))} ESCAPE '#'",
        lambda: f"concat_ws({pick([',', '', ' - '])!r}, s, {pick(['s', 'lower(s)', 'NULL'])})",
        lambda: f"concat(s, v, {word()})",
        lambda: f"{pick(['starts_with', 'contains', 'ends_with'])}(s, {word()})",
        lambda: f"s {pick(['=', '<', '>='])} {word()}",
        lambda: f"date_trunc({pick(TRUNC_UNITS)!r}, {pick(['d', 'ts'])})",
        lambda: f"date_part({pick(PARTS)!r}, {pick(['d', 'ts'])})",
        lambda: f"extract({pick(CLOCK_PARTS)} FROM ts)",
        lambda: f"{pick(['d', 'ts'])} {pick(['+', '-'])} {pick(INTERVALS)}",
        lambda: f"{pick(INTERVALS)} + {pick(['d', 'ts'])}",
        lambda: f"d {pick(['+', '-'])} {small(-40, 40)}",
        lambda: f"d - DATE {pick(['2024-02-29', '1970-01-01', '1600-03-01'])!r}",
        lambda: f"date_diff({pick(DIFF_PARTS)!r}, {pick(['d', 'ts'])}, {pick(STAMPS)})",
        lambda: f"strftime({pick(['d', 'ts'])}, {pick(FORMATS)!r})",
        lambda: f"{pick(['dayname', 'monthname', 'last_day'])}({pick(['d', 'ts'])})",
        lambda: f"{pick(['d', 'ts'])} {pick(['<', '=', '>='])} {pick(STAMPS)}",
        lambda: f"CAST(ts AS {pick(['DATE', 'TIMESTAMP_S', 'TIMESTAMP_MS', 'VARCHAR'])})",
        lambda: f"v {pick(['//', '%'])} {pick(['2', '3', '(-2)', '(-3)'])}",
        lambda: f"{pick(NUMBERS)} {pick(['+', '-', '*', '/'])} {pick(NUMBERS + CONSTANTS)}",
        lambda: f"CASE WHEN f > {small(-2, 2)} THEN v WHEN s LIKE 'a%' THEN g "
                f"ELSE {small(-5, 5)} END",
        lambda: f"CASE g WHEN 0 THEN {pick(NUMBERS)} WHEN 1 THEN {pick(NUMBERS + CONSTANTS)} END",
        lambda: f"coalesce({pick(['v', 'f', 'r'])}, {pick(['g', 'f', '-1', '2.5'])})",
        lambda: f"nullif({pick(['v', 'f', 's', 'g'])}, {pick(['0', '1.5', repr(''), 'g'])})",
        lambda: f"{pick(['greatest', 'least'])}(f, {pick(['v', 'r', '0', '1e300'])})",
        lambda: f"round({pick(['f', 'r', 'v'])}, {small(-2, 2)})",
        lambda: f"{pick(['floor', 'ceil', 'trunc', 'abs', 'sign'])}({pick(['f', 'r', 'v'])})",
        lambda: f"TRY_CAST({pick(['f', 'r', 's'])} AS {pick(CAST_TYPES[:4])})",
        lambda: f"CAST({pick(['v', 'g', 'r'])} AS {pick(CAST_TYPES[2:])})",
        lambda: f"{pick(['isnan', 'isinf', 'isfinite'])}(f)",
        lambda: f"f {pick(['=', '<', '>'])} {pick(['NaN', 'inf', '-inf', '-0.0'])!r}::DOUBLE",
    ]


@st.composite
def scalar_query(draw) -> str:
    forms = _forms(draw)
    exprs = [draw(st.sampled_from(forms))() for _ in range(draw(st.integers(1, 3)))]
    shape = draw(st.integers(0, 3))
    if shape == 0:
        return f"SELECT {exprs[0]} AS k, count(*) AS n, min(id) AS m FROM dx GROUP BY 1"
    if shape == 1:
        return f"SELECT id, {exprs[-1]} AS c FROM dx WHERE ({exprs[0]}) IS NOT NULL"
    return f"SELECT id, {', '.join(f'{e} AS c{i}' for i, e in enumerate(exprs))} FROM dx"


# -- comparing -------------------------------------------------------------------------------


@settings(max_examples=45, **SETTINGS)
@given(query=window_query())
def test_window_functions_on_edge_values(engines, query):
    sqllogic.differential_check(engines, query, False)


@settings(max_examples=60, **SETTINGS)
@given(query=scalar_query())
def test_scalar_functions_on_edge_values(engines, query):
    sqllogic.differential_check(engines, query, False)
