"""Wide differential test: random SQL beyond test_differential.py's shapes, tdbsql against DuckDB.

hypothesis builds queries over ``dw(id, g?, v?, f?, s?, d?, ts?, flag?)`` and the pair
``da(id, a?, b?, x?, s?)`` / ``db(id, k?, y?, t?)`` (tests/sql_fixtures.py; ``?`` = nullable):

- window functions over the arrays: ranking, lag / lead / first / last / nth_value, aggregates
  over ROWS / RANGE / GROUPS frames, PARTITION BY and ORDER BY with NULLS FIRST / LAST, windows
  inside expressions, over grouped rows and under QUALIFY;
- subqueries: scalar, IN / NOT IN (with NULLs on either side), EXISTS, correlated ones, CTEs;
- string functions and LIKE / ILIKE with ``_``, ``%`` and ESCAPE over UTF-8 strings;
- CASE / COALESCE / NULLIF / greatest / least / IS DISTINCT FROM;
- date and timestamp functions and INTERVAL-literal arithmetic;
- ORDER BY + LIMIT / OFFSET (compared in order: every ORDER BY ends with the unique ``id``);
- DISTINCT, count(DISTINCT), stddev / variance, bool_and / bool_or, string_agg with ORDER BY.

Every generated query has one correct answer: orders that matter are made total with ``id``,
and rows are compared as multisets unless the query's ORDER BY is total.  An error on one side
only is a failure, a raw Python exception from tdbsql always is.  Examples are derandomized.

Bug hunting: copy this file to ``tests/_big_wide.py`` (never committed) with a larger
``MAX_EXAMPLES`` and ``derandomize=False``; with ``TDBSQL_DIFF_LOG=FILE`` every mismatch is
appended to FILE instead of stopping the run.
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
MAX_EXAMPLES = 40


@pytest.fixture(scope="module")
def engines(sql_arrays):  # noqa: F811 - pytest fixture injection
    return sqllogic.differential_engines(sql_arrays, "dw", "da", "db")


def _neg(v) -> str:
    return f"({v})" if str(v).startswith("-") else str(v)


# -- expressions over dw ----------------------------------------------------------------------

INT_EXPRS = ["v", "g", "id", "v + g", "v * 2", "abs(v)", "v % 3", "coalesce(v, 0)", "g - 1",
             "length(s)", "year(d)", "month(d)"]
FLOAT_EXPRS = ["f", "f * 2", "f + v", "abs(f)", "coalesce(f, 0.5)", "f / 4", "round(f)"]
WORDS = ["abc", "ABC", "a_c", "a%c", "x\\y", "  pad ", "Ärger", "straße", "東京", "", "b", "a"]


@st.composite
def bool_expr(draw):
    form = draw(st.sampled_from([
        "v > {i}", "v IS NULL", "f < {i}", "s = {w}", "s < {w}", "flag", "NOT flag",
        "g IN (1, 2)", "g NOT IN (1, NULL)", "d > DATE '2024-01-15'", "s LIKE 'a%'",
        "(v > {i} OR flag)", "(f >= {i} AND s IS NOT NULL)", "v BETWEEN {i} AND 5",
        "s IS DISTINCT FROM {w}", "ts < TIMESTAMP '2024-02-29 06:00:00'",
    ]))
    return form.format(i=_neg(draw(st.integers(-6, 6))), w=sql_string(draw(st.sampled_from(WORDS))))


def _where(draw, p: float = 0.5) -> str:
    if draw(st.integers(0, 15)) == 0:  # no rows at all
        return " WHERE id < 0"
    return f" WHERE {draw(bool_expr())}" if draw(st.floats(0, 1)) < p else ""


# -- window functions -------------------------------------------------------------------------

RANK_FUNCS = ["rank()", "dense_rank()", "percent_rank()", "cume_dist()"]
ORDERED_FUNCS = ["row_number()", "ntile(3)", "lag(v)", "lead(s, 2)", "lag(f, 1, -1.5)",
                 "lead(v, 1, 0)", "first_value(s)", "last_value(v)", "nth_value(f, 2)",
                 "lag(d)", "first_value(v IGNORE NULLS)", "last_value(s IGNORE NULLS)",
                 "string_agg(s, ',')", "string_agg(v, '-')"]
AGG_FUNCS = ["count(*)", "count(v)", "sum(v)", "avg(f)", "min(s)", "max(d)", "sum(f)",
             "min(v * 2)", "max(ts)", "count(s)", "avg(v)"]
WHOLE_ONLY = ["stddev_samp(f)", "var_pop(v)", "bool_and(flag)", "bool_or(v > 0)",
              "count(DISTINCT g)", "sum(DISTINCT v)", "median(f)", "quantile_disc(s, 0.6)",
              "corr(v, f)", "arg_max(s, v)", "product(g)", "skewness(f)", "bit_xor(v)"]
WIN_KEYS = ["v", "f", "s", "d", "g", "lower(s)", "v % 3", "flag", "ts"]
BOUNDS = ["UNBOUNDED PRECEDING", "2 PRECEDING", "1 PRECEDING", "CURRENT ROW", "1 FOLLOWING",
          "3 FOLLOWING", "UNBOUNDED FOLLOWING"]


def _key(draw, keys) -> str:
    key = draw(st.sampled_from(keys))
    return (key + draw(st.sampled_from(["", " ASC", " DESC"]))
            + draw(st.sampled_from(["", " NULLS FIRST", " NULLS LAST"])))


@st.composite
def window(draw) -> str:
    partition = draw(st.sampled_from(["", "PARTITION BY g", "PARTITION BY flag", "PARTITION BY s",
                                      "PARTITION BY lower(s), g", "PARTITION BY d",
                                      "PARTITION BY g, flag", "PARTITION BY v % 2",
                                      "PARTITION BY s IS NULL"]))
    kind = draw(st.integers(0, 9))
    keys = [_key(draw, WIN_KEYS) for _ in range(draw(st.integers(1, 2)))]
    if kind == 0:  # aggregates over the whole partition
        fn = draw(st.sampled_from(AGG_FUNCS + WHOLE_ONLY))
        return f"{fn} OVER ({partition})"
    if kind <= 2:  # ranking: ties are peers, no tie break needed
        fn = draw(st.sampled_from(RANK_FUNCS))
        return f"{fn} OVER ({partition} ORDER BY {', '.join(keys)})"
    if kind <= 4:  # order-dependent functions: the order is total
        fn = draw(st.sampled_from(ORDERED_FUNCS))
        if fn.startswith(("first_value", "last_value", "nth_value")) and draw(st.booleans()):
            frame = " ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING"
        else:
            frame = ""
        return f"{fn} OVER ({partition} ORDER BY {', '.join(keys)}, id{frame})"
    if kind <= 6:  # ROWS / GROUPS frames
        fn = draw(st.sampled_from(AGG_FUNCS + ["first_value(v)", "last_value(s)"]))
        start = draw(st.sampled_from(BOUNDS[:-1]))
        later = BOUNDS[max(BOUNDS.index(start), 1):]
        if start.endswith("FOLLOWING"):
            later = later[1:]
        end = draw(st.sampled_from(later))
        unit = draw(st.sampled_from(["ROWS", "GROUPS"]))
        tail = ", id" if unit == "ROWS" or fn.startswith(("first", "last")) else ""
        return (f"{fn} OVER ({partition} ORDER BY {', '.join(keys)}{tail} "
                f"{unit} BETWEEN {start} AND {end})")
    if kind == 7:  # default RANGE frame: peers included
        fn = draw(st.sampled_from(AGG_FUNCS))
        return f"{fn} OVER ({partition} ORDER BY {', '.join(keys)})"
    # RANGE with offsets over one numeric / date key
    fn = draw(st.sampled_from(AGG_FUNCS))
    key, offsets = draw(st.sampled_from([
        ("v", ["0", "1", "3"]), ("f", ["0.5", "1", "2.25"]),
        ("d", ["INTERVAL 3 DAY", "INTERVAL 1 MONTH", "7"]),
        ("ts", ["INTERVAL 6 HOUR", "INTERVAL 1 DAY"])]))
    direction = draw(st.sampled_from(["", " DESC", " NULLS FIRST", " DESC NULLS LAST"]))
    lo = draw(st.sampled_from(["UNBOUNDED PRECEDING", "CURRENT ROW"] +
                              [f"{o} PRECEDING" for o in offsets]))
    hi = draw(st.sampled_from(["UNBOUNDED FOLLOWING", "CURRENT ROW"] +
                              [f"{o} FOLLOWING" for o in offsets]))
    return f"{fn} OVER ({partition} ORDER BY {key}{direction} RANGE BETWEEN {lo} AND {hi})"


@st.composite
def window_query(draw):
    wins = draw(st.lists(window(), min_size=1, max_size=2))
    shape = draw(st.integers(0, 5))
    cols = ", ".join(f"{w} AS w{i}" for i, w in enumerate(wins))
    where = _where(draw)
    if shape == 0:  # a window inside an expression
        return f"SELECT id, v - ({wins[0]}) AS w FROM dw{where}", False
    if shape == 1:  # windows over grouped rows
        fn = draw(st.sampled_from(["rank() OVER (ORDER BY count(*) DESC, g)",
                                   "sum(sum(v)) OVER (ORDER BY g NULLS FIRST)",
                                   "count(*) * 100.0 / sum(count(*)) OVER ()",
                                   "lag(max(s)) OVER (ORDER BY g)"]))
        return f"SELECT g, count(*) AS n, {fn} AS w FROM dw{where} GROUP BY g", False
    if shape == 2:  # QUALIFY
        return (f"SELECT id, s FROM dw{where} QUALIFY row_number() OVER "
                f"({draw(st.sampled_from(['PARTITION BY g ', '']))}ORDER BY "
                f"{_key(draw, WIN_KEYS)}, id) <= {draw(st.integers(1, 3))}"), False
    if shape == 4 and draw(st.booleans()):
        return draw(st.sampled_from([
            (f"SELECT da.id, db.id AS id2, {draw(st.sampled_from(RANK_FUNCS))} OVER "
             f"(PARTITION BY da.a ORDER BY db.y) AS w FROM da JOIN db ON da.a = db.k"),
            (f"WITH q AS (SELECT g, v, s FROM dw{where}) SELECT g, v, s, sum(v) OVER "
             f"(PARTITION BY g) AS w, count(*) OVER (PARTITION BY s) AS n FROM q"),
            f"SELECT DISTINCT g, count(*) OVER (PARTITION BY g) AS n FROM dw{where}",
            (f"SELECT id, sum(v) FILTER (WHERE flag) OVER (PARTITION BY g) AS w, "
             f"count(*) FILTER (WHERE v > 0) OVER (ORDER BY id) AS n FROM dw{where}"),
            (f"SELECT q.id, q.p FROM (SELECT id, lag(v) OVER (ORDER BY {_key(draw, WIN_KEYS)}, "
             f"id) AS p FROM dw{where}) q WHERE q.p > 0"),
            (f"SELECT id, {wins[0]} AS w FROM dw WHERE id IN (SELECT id FROM dw WHERE "
             f"{draw(bool_expr())})"),
        ])), False
    if shape == 4:  # a window in ORDER BY
        return (f"SELECT id, v FROM dw{where} ORDER BY row_number() OVER (ORDER BY "
                f"{_key(draw, WIN_KEYS)}, id DESC) LIMIT {draw(st.integers(1, 12))}"), True
    if shape == 3:  # ordered by id, with a limit
        limit = draw(st.integers(0, 15))
        return f"SELECT id, {cols} FROM dw{where} ORDER BY id LIMIT {limit}", True
    return f"SELECT id, {cols} FROM dw{where}", False


# -- subqueries and CTEs ------------------------------------------------------------------------


@st.composite
def da_pred(draw):
    return draw(st.sampled_from(["a > 0", "b < 100", "x IS NOT NULL", "s = 'a'", "a IS NULL",
                                 "a IN (1, 2, 3)", "s LIKE '%b%'"]))


@st.composite
def db_pred(draw):
    return draw(st.sampled_from(["k > 0", "y < 10", "t IS NOT NULL", "k IS NOT NULL",
                                 "t = 'ab'", "k IN (-1, 0, 1)", "y > 50"]))


@st.composite
def subquery_query(draw):
    inner_where = f" WHERE {draw(db_pred())}" if draw(st.booleans()) else ""
    # correlated on equalities only: other correlations are UnsupportedSql (see the report)
    corr = draw(st.sampled_from(["db.k = da.a", "db.t = da.s", "db.k = da.a AND db.t = da.s"]))
    exists_corr = draw(st.sampled_from([corr, "db.k = da.a AND db.y > da.x"]))
    outer = f" AND {draw(da_pred())}" if draw(st.booleans()) else ""
    forms = [
        f"SELECT id, a FROM da WHERE a IN (SELECT k FROM db{inner_where}){outer}",
        f"SELECT id, a FROM da WHERE a NOT IN (SELECT k FROM db{inner_where}){outer}",
        f"SELECT id, s FROM da WHERE s NOT IN (SELECT t FROM db{inner_where}){outer}",
        f"SELECT id, a IN (SELECT k FROM db{inner_where}) AS c FROM da",
        f"SELECT id, a NOT IN (SELECT k FROM db{inner_where}) AS c FROM da",
        f"SELECT id FROM da WHERE EXISTS (SELECT 1 FROM db WHERE {exists_corr}){outer}",
        f"SELECT id FROM da WHERE NOT EXISTS (SELECT 1 FROM db WHERE {exists_corr}){outer}",
        f"SELECT id, (SELECT count(*) FROM db WHERE {corr}) AS c FROM da",
        f"SELECT id, (SELECT max(y) FROM db WHERE {corr}) AS c FROM da",
        f"SELECT id, (SELECT min(t) FROM db WHERE {corr}) AS c FROM da WHERE a > -3",
        f"SELECT id, b FROM da WHERE b > (SELECT avg(b) FROM da){outer}",
        f"SELECT id FROM da WHERE a = (SELECT max(k) FROM db{inner_where})",
        f"SELECT id, a FROM da WHERE x > (SELECT avg(y) FROM db WHERE {corr})",
        f"SELECT id, a FROM da WHERE a > ALL (SELECT k FROM db{inner_where})",
        f"SELECT id, a FROM da WHERE a = ANY (SELECT k FROM db{inner_where})",
        f"SELECT id, a FROM da WHERE a < ANY (SELECT k FROM db{inner_where}){outer}",
        f"SELECT id, EXISTS (SELECT 1 FROM db WHERE {corr}) AS e FROM da",
        (f"WITH c AS (SELECT k, count(*) AS n, sum(y) AS sy FROM db{inner_where} GROUP BY k) "
         f"SELECT da.id, c.n, c.sy FROM da JOIN c ON da.a = c.k"),
        ("WITH c AS (SELECT a, max(b) AS mb FROM da GROUP BY a), d AS (SELECT * FROM c "
         "WHERE mb > 0) SELECT d.a, d.mb, (SELECT count(*) FROM db WHERE db.k = d.a) AS n "
         "FROM d"),
        (f"WITH t AS (SELECT id, a FROM da WHERE {draw(da_pred())}) SELECT x.id, y.id AS id2 "
         f"FROM t x JOIN t y ON x.a = y.a AND x.id < y.id"),
        (f"SELECT s, n FROM (SELECT s, count(*) AS n FROM da{' WHERE ' + draw(da_pred())} "
         f"GROUP BY s) q WHERE n > 1"),
        (f"SELECT q.k, q.m FROM (SELECT k, max(y) AS m FROM db GROUP BY k) q "
         f"WHERE q.k IN (SELECT a FROM da WHERE {draw(da_pred())})"),
        f"SELECT id FROM da WHERE (a, s) IN (SELECT k, t FROM db{inner_where})",
        "SELECT id, (SELECT t FROM db WHERE db.id = (SELECT min(id) FROM db)) AS c FROM da",
        f"SELECT id FROM da WHERE a IN (SELECT k FROM db ORDER BY y DESC, id LIMIT 3){outer}",
        f"SELECT id FROM da WHERE a IN (SELECT k FROM db{inner_where} UNION SELECT 1)",
        f"SELECT id FROM da WHERE s IN (SELECT t FROM db{inner_where}) OR a IS NULL",
        (f"SELECT id, CASE WHEN EXISTS (SELECT 1 FROM db WHERE {corr}) THEN 'y' ELSE 'n' END "
         f"AS c FROM da"),
        f"SELECT id FROM da WHERE a NOT IN (SELECT k FROM db WHERE k IS NOT NULL){outer}",
        "SELECT id, a FROM da WHERE a NOT IN (SELECT k FROM db WHERE k > 100)",
        "SELECT id, a NOT IN (SELECT k FROM db WHERE k > 100) AS c FROM da",
        (f"SELECT da.id, q.n FROM da JOIN (SELECT k, count(*) AS n FROM db{inner_where} "
         f"GROUP BY k) q ON q.k = da.a WHERE q.n > 1"),
        "SELECT id FROM da WHERE b > (SELECT avg(b) FROM da AS d2 WHERE d2.a = da.a)",
        f"SELECT id FROM da WHERE (SELECT count(*) FROM db WHERE {corr}) = 0{outer}",
        "SELECT id FROM da WHERE a IN (1, 2) AND EXISTS (SELECT 1 FROM db WHERE db.t = da.s)",
        (f"WITH c AS (SELECT k FROM db{inner_where}) SELECT count(*) AS n FROM da WHERE a IN "
         f"(SELECT k FROM c) AND a NOT IN (SELECT k + 1 FROM c WHERE k IS NOT NULL)"),
        "SELECT id, (SELECT y FROM db WHERE id = -1) AS c FROM da",
        f"SELECT id FROM da WHERE a >= ALL (SELECT k FROM db WHERE k IS NOT NULL){outer}",
        f"SELECT id FROM da WHERE a <> ALL (SELECT k FROM db{inner_where})",
        f"SELECT id, a = ANY (SELECT k FROM db{inner_where}) AS c FROM da",
        f"SELECT id, s > ALL (SELECT t FROM db{inner_where}) AS c FROM da",
        (f"SELECT id FROM da WHERE EXISTS (SELECT 1 FROM db WHERE {corr}) OR "
         f"a IN (SELECT k + 1 FROM db{inner_where})"),
        (f"SELECT id FROM da WHERE NOT EXISTS (SELECT 1 FROM db WHERE {corr}) AND "
         f"a NOT IN (SELECT k FROM db WHERE {draw(db_pred())})"),
        (f"SELECT k, (SELECT count(*) FROM da WHERE da.a = db.k) AS n FROM db{inner_where}"),
        "SELECT * FROM (SELECT a, count(*) AS n FROM da GROUP BY a) q WHERE n > (SELECT 4)",
    ]
    return draw(st.sampled_from(forms)), False


# -- strings ------------------------------------------------------------------------------------

STRING_FORMS = [
    "lower(s)", "upper(s)", "substr(s, {p}, {n})", "substr(s, {p})", "substring(s, {p}, {n})",
    "trim(s)", "ltrim(s)", "rtrim(s)", "trim(s, 'a')", "ltrim(s, ' a')", "replace(s, 'a', 'XY')",
    "replace(s, '', 'q')", "concat(s, 'x', NULL)", "s || 'z'", "s || NULL", "length(s)",
    "starts_with(s, 'a')", "ends_with(s, 'c')", "contains(s, 'b')", "strpos(s, 'b')",
    "left(s, {n})", "right(s, {n})", "reverse(s)", "lpad(s, 5, '*')", "rpad(s, 4, 'ab')",
    "repeat(s, 2)", "repeat(s, 0)", "substr(s, NULL)", "substr(s, {p}, NULL)",
    "lpad(s, 2, 'xy')", "rpad(s, 0, '-')", "replace(s, 'ß', 'ss')", "upper('ß' || s)",
    "lower('ÄÖÜ' || s)", "trim(s, ' a%')", "rtrim(s, 'c%')", "s ILIKE 'ä%'", "s ILIKE '%RGER'",
    "coalesce(s, 'x') LIKE '_' || '%'", "length(s) > 3", "right(s, -1)", "strpos(s, '')", "contains(s, '')",
    "s = upper(s)", "reverse(upper(s))", "concat(s, v, f, d)", "s || v",
    "position('a' IN s)", "instr(s, 'c')", "prefix(s, 'ab')", "suffix(s, '%')",
    "s LIKE {pat}", "s NOT LIKE {pat}", "s ILIKE {pat}", "s NOT ILIKE {pat}",
    "s LIKE {epat} ESCAPE '\\'", "s LIKE {epat2} ESCAPE '#'", "upper(s) LIKE {pat}",
    "lower(s) = {w}", "s < {w}", "s >= {w}", "least(s, {w})", "greatest(s, {w})",
    "length(s) + length(lower(s))", "strlen(s)",
    "s || '-' || CAST(v AS VARCHAR)", "CAST(f AS VARCHAR)", "CAST(d AS VARCHAR)",
    "upper(substr(s, 2))", "lower(s) || upper(s)", "left(s, -1)",
]
PATTERNS = ["a%", "%c", "a_c", "_", "%", "", "%a%", "__", "ä%", "%Ä%", "A%", "a%c%", "%_%",
            "straße", "%ß%", "東%", " %", "%\\%", "x\\\\y"]
ESC_PATTERNS = ["a\\_c", "a\\%c", "%\\%", "\\_", "%\\_%", "50\\%", "x\\\\y"]


@st.composite
def string_query(draw):
    exprs = []
    for _ in range(draw(st.integers(1, 3))):
        form = draw(st.sampled_from(STRING_FORMS))
        exprs.append(form.format(
            p=_neg(draw(st.integers(-4, 5))), n=draw(st.integers(0, 4)),
            pat=sql_string(draw(st.sampled_from(PATTERNS))),
            epat=sql_string(draw(st.sampled_from(ESC_PATTERNS))),
            epat2=sql_string(draw(st.sampled_from(ESC_PATTERNS)).replace("\\", "#")),
            w=sql_string(draw(st.sampled_from(WORDS)))))
    cols = ", ".join(f"{e} AS c{i}" for i, e in enumerate(exprs))
    if draw(st.integers(0, 3)) == 0:
        return f"SELECT id, {exprs[-1]} AS c FROM dw WHERE {exprs[0]} IS NOT NULL", False
    return f"SELECT id, {cols} FROM dw{_where(draw, 0.3)}", False


# -- CASE / COALESCE / NULLIF / greatest / least -------------------------------------------------

COND_FORMS = [
    "CASE WHEN {b} THEN {i} WHEN {b2} THEN {fl} ELSE {i2} END",
    "CASE WHEN {b} THEN s END",
    "CASE g WHEN 1 THEN 'one' WHEN 2 THEN s ELSE 'other' END",
    "CASE v WHEN NULL THEN 1 ELSE 0 END",
    "CASE WHEN {b} THEN {fl} ELSE {i} END",
    "CASE {i} WHEN 0 THEN d ELSE DATE '2024-01-01' END",
    "coalesce(v, g, {c})", "coalesce(f, v)", "coalesce(s, 'none')", "coalesce(NULL, f, 1)",
    "coalesce(d, DATE '2000-01-01')", "nullif(v, {c})", "nullif(s, '')", "nullif(f, 0.0)",
    "nullif({i}, {i2})", "greatest(v, g, {c})", "least(f, v)", "greatest(v, NULL)",
    "least(d, DATE '2024-01-15')", "greatest({i}, {fl})", "least(s, 'b', NULL)",
    "ifnull(v, -1)", "v IS DISTINCT FROM g", "f IS NOT DISTINCT FROM {c}",
    "CASE WHEN v > 0 THEN v / 2 WHEN v < 0 THEN v // 2 END", "coalesce(v // nullif(g, 0), -99)",
    "CASE WHEN g <> 0 THEN v // g END", "if(g = 0, -1, v % g)", "CASE g WHEN 0 THEN 0 ELSE f // g END",
    "CASE WHEN flag THEN 'y' WHEN NOT flag THEN 'n' END", "NOT flag", "flag AND v > 0",
    "flag OR v > 0", "(v > 0) = flag", "if(v > {c}, s, 'no')",
]


@st.composite
def cond_query(draw):
    exprs = []
    for _ in range(draw(st.integers(1, 3))):
        form = draw(st.sampled_from(COND_FORMS))
        exprs.append(form.format(
            b=draw(bool_expr()), b2=draw(bool_expr()), i=draw(st.sampled_from(INT_EXPRS)),
            i2=draw(st.sampled_from(INT_EXPRS)), fl=draw(st.sampled_from(FLOAT_EXPRS)),
            c=_neg(draw(st.integers(-3, 3)))))
    cols = ", ".join(f"{e} AS c{i}" for i, e in enumerate(exprs))
    return f"SELECT id, {cols} FROM dw{_where(draw, 0.3)}", False


# -- random typed expression trees ------------------------------------------------------------

LEAVES = {
    "int": ["v", "g", "id", "2", "(-3)", "0", "CAST(NULL AS BIGINT)", "length(s)"],
    "float": ["f", "CAST(0.5 AS DOUBLE)", "CAST(-2.25 AS DOUBLE)", "CAST(v AS DOUBLE)"],
    "str": ["s", "'ab'", "''", "'Ä'", "CAST(NULL AS VARCHAR)", "CAST(g AS VARCHAR)"],
    "bool": ["flag", "true", "false", "CAST(NULL AS BOOLEAN)", "v > 0", "s IS NULL"],
    "date": ["d", "DATE '2024-02-29'", "CAST(ts AS DATE)"],
}
NODES = {
    "int": ["({int} + {int})", "({int} - {int})", "({int} * {int})", "abs({int})",
            "CASE WHEN {bool} THEN {int} ELSE {int} END", "coalesce({int}, {int})",
            "nullif({int}, {int})", "greatest({int}, {int})", "least({int}, {int}, {int})",
            "length({str})", "strpos({str}, 'a')", "year({date})", "({int} // 3)",
            "({int} % 4)", "CASE {int} WHEN 1 THEN {int} WHEN {int} THEN 0 END", "-{int}",
            "({int} // nullif({int}, 0))", "({int} % nullif({int}, 0))",
            "CAST({float} AS BIGINT)", "sign({float})", "({date} - {date})"],
    "float": ["({float} + {int})", "({float} * {float})", "({int} / 4)", "round({float}, 1)",
              "floor({float})", "coalesce({float}, {int})", "greatest({float}, {int})",
              "CASE WHEN {bool} THEN {float} ELSE {int} END", "abs({float})",
              "({float} - {float})", "nullif({float}, {float})", "sqrt(abs({float}))",
              "({float} / {int})", "({int} / {float})", "({float} // nullif({float}, 0))"],
    "str": ["lower({str})", "upper({str})", "({str} || {str})", "concat({str}, {int})",
            "coalesce({str}, {str})", "substr({str}, 2)", "trim({str})", "replace({str}, 'a', 'b')",
            "CASE WHEN {bool} THEN {str} END", "nullif({str}, {str})", "left({str}, 2)",
            "reverse({str})", "greatest({str}, {str})", "CAST({int} AS VARCHAR)",
            "lpad({str}, 3, '.')", "CAST({date} AS VARCHAR)", "repeat({str}, 2)"],
    "bool": ["({int} > {int})", "({float} <= {float})", "({str} = {str})", "({str} < {str})",
             "({bool} AND {bool})", "({bool} OR {bool})", "NOT {bool}", "({int} IS NULL)",
             "({int} IN (1, 2, NULL))", "({int} NOT IN (0, 3))", "({str} LIKE 'a%')",
             "({int} BETWEEN {int} AND {int})", "({bool} IS NOT TRUE)", "({bool} = {bool})",
             "({int} IS DISTINCT FROM {int})", "starts_with({str}, 'a')",
             "contains({str}, 'b')", "({date} > {date})", "coalesce({bool}, {bool})",
             "({str} ILIKE '%A%')", "({float} = {int})", "({bool} IS NULL)"],
    "date": ["({date} + CAST({int} AS INTEGER))", "coalesce({date}, {date})", "greatest({date}, {date})",
             "CASE WHEN {bool} THEN {date} END", "CAST(date_trunc('month', {date}) AS DATE)",
             "CAST({date} + INTERVAL 1 MONTH AS DATE)"],
}


@st.composite
def typed_expr(draw, kind: str, depth: int):
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from(LEAVES[kind]))
    form = draw(st.sampled_from(NODES[kind]))
    out, rest = "", form
    while "{" in rest:
        head, _, tail = rest.partition("{")
        slot, _, rest = tail.partition("}")
        out += head + f"({draw(typed_expr(slot, depth - 1))})"
    return out + rest


def _fill(draw, form: str) -> str:
    """``form`` with each ``{kind}`` slot replaced by a drawn expression of that kind."""
    out, rest = "", form
    while "{" in rest:
        head, _, tail = rest.partition("{")
        slot, _, rest = tail.partition("}")
        out += head + draw(typed_expr(slot, 2))
    return out + rest


@st.composite
def expr_query(draw):
    kinds = draw(st.lists(st.sampled_from(sorted(LEAVES)), min_size=1, max_size=3))
    exprs = [draw(typed_expr(kind, 3)) for kind in kinds]
    shape = draw(st.integers(0, 5))
    if shape == 4:  # aggregates of expressions, grouped by an expression
        aggs = [draw(st.sampled_from([
            "sum({int})", "max({str})", "min({date})", "count(DISTINCT {str})", "avg({float})",
            "bool_and({bool})", "bool_or({bool})", "string_agg({str}, ',' ORDER BY id)",
            "count({bool})", "sum(DISTINCT {int})", "max({float}) - min({int})"]))
            for _ in range(draw(st.integers(1, 2)))]
        cols = ", ".join(_fill(draw, a) + f" AS a{i}" for i, a in enumerate(aggs))
        key = draw(typed_expr(draw(st.sampled_from(["int", "str", "bool", "date"])), 2))
        return f"SELECT {key} AS k, {cols} FROM dw GROUP BY 1", False
    if shape == 5:  # windows over expressions
        fn = _fill(draw, draw(st.sampled_from([
            "sum({int})", "max({str})", "count({bool})", "rank()", "lag({str})",
            "first_value({date})", "avg({float})", "row_number()"])))
        part = draw(typed_expr(draw(st.sampled_from(["int", "str", "bool"])), 1))
        order = draw(typed_expr(draw(st.sampled_from(["int", "str", "float", "date"])), 2))
        return (f"SELECT id, {fn} OVER (PARTITION BY {part} ORDER BY {order} "
                f"{draw(st.sampled_from(['', 'DESC', 'NULLS FIRST']))}, id) AS w FROM dw"), False
    if shape == 0:  # as GROUP BY key
        return (f"SELECT {exprs[0]} AS k, count(*) AS n, min(id) AS m FROM dw "
                f"GROUP BY 1"), False
    if shape == 1:  # as a filter
        return (f"SELECT id FROM dw WHERE {draw(typed_expr('bool', 3))}"), False
    cols = ", ".join(f"{e} AS c{i}" for i, e in enumerate(exprs))
    return f"SELECT id, {cols} FROM dw{_where(draw, 0.3)}", False


# -- nested relations -------------------------------------------------------------------------
# Every relation has the columns (id, k, s, x): id unique, so any ORDER BY ending in id is total.

BASES = ["SELECT id, v AS k, s, f AS x FROM dw", "SELECT id, a AS k, s, x FROM da",
         "SELECT id, k, t AS s, y AS x FROM db", "SELECT id, g AS k, lower(s) AS s, f AS x FROM dw"]
REL_PREDICATES = ["k > 0", "s IS NOT NULL", "x < 2", "k IS NULL OR x > 0", "s LIKE '%a%'",
                  "k IN (1, 2, 3)", "NOT (x >= 0)"]


@st.composite
def relation(draw, depth: int):
    if depth == 0 or draw(st.integers(0, 4)) == 0:
        base = draw(st.sampled_from(BASES))
        return base + (f" WHERE {draw(st.sampled_from(REL_PREDICATES))}"
                       if draw(st.booleans()) else "")
    inner = draw(relation(depth - 1))
    form = draw(st.integers(0, 12))
    pred = draw(st.sampled_from(REL_PREDICATES))
    if form == 0:
        return f"SELECT * FROM ({inner}) q WHERE {pred}"
    if form == 1:
        return f"SELECT id, k + 1 AS k, upper(s) AS s, x * 2 AS x FROM ({inner}) q"
    if form == 2:
        return (f"SELECT id, k, s, sum(x) OVER (PARTITION BY k) AS x FROM ({inner}) q")
    if form == 3:
        return (f"SELECT id, row_number() OVER (ORDER BY s DESC NULLS LAST, id) AS k, s, "
                f"lag(x) OVER (PARTITION BY k ORDER BY id) AS x FROM ({inner}) q")
    if form == 4:
        return (f"SELECT min(id) AS id, k, max(s) AS s, sum(x) AS x FROM ({inner}) q "
                f"GROUP BY k")
    if form == 5:
        return f"SELECT DISTINCT ON (k) id, k, s, x FROM ({inner}) q ORDER BY k, id"
    if form == 6:
        return (f"SELECT * FROM ({inner}) q ORDER BY x DESC NULLS LAST, id "
                f"LIMIT {draw(st.integers(0, 12))}")
    other = draw(relation(depth - 1))
    if form == 7:
        return (f"SELECT id, k, s, x FROM ({inner}) q UNION ALL "
                f"SELECT id + 1000000, k, s, x FROM ({other}) r")
    if form == 8:
        how = draw(st.sampled_from(["JOIN", "LEFT JOIN"]))
        return (f"SELECT l.id * 1000000 + coalesce(r.id, 0) AS id, r.k, l.s, r.x "
                f"FROM ({inner}) l {how} ({other}) r ON l.k = r.k")
    if form == 9:
        return (f"WITH c AS ({inner}) SELECT * FROM c WHERE k IN (SELECT k FROM c WHERE "
                f"{pred})")
    if form == 10:
        neg = draw(st.sampled_from(["", "NOT "]))
        return f"SELECT * FROM ({inner}) q WHERE k {neg}IN (SELECT k FROM ({other}) r)"
    if form == 11:
        return (f"SELECT id, k, s, x - (SELECT avg(x) FROM ({other}) r) AS x "
                f"FROM ({inner}) q")
    return (f"SELECT id, k, s, x FROM ({inner}) q WHERE EXISTS (SELECT 1 FROM ({other}) r "
            f"WHERE r.s = q.s)")


@st.composite
def nested_query(draw):
    rel = draw(relation(3))
    if draw(st.booleans()):
        return (f"SELECT * FROM ({rel}) q ORDER BY {draw(st.sampled_from(['k', 's', 'x']))} "
                f"{draw(st.sampled_from(['ASC', 'DESC']))} NULLS FIRST, id "
                f"LIMIT {draw(st.integers(1, 20))}"), True
    return f"SELECT * FROM ({rel}) q", False


# -- dates and timestamps ---------------------------------------------------------------------

DATE_FORMS = [
    "d + INTERVAL {n} DAY", "d - INTERVAL {n} MONTH", "d + INTERVAL 1 YEAR", "d + {n}",
    "d - {n}", "d - DATE '2024-01-01'",
    "date_trunc('month', d)", "date_trunc('week', d)", "date_trunc('year', d)",
    "date_trunc('quarter', d)", "extract(year FROM d)", "extract(month FROM d)",
    "extract(day FROM d)", "extract(dow FROM d)", "extract(doy FROM d)", "year(d)",
    "month(d)", "day(d)", "dayofweek(d)", "dayofyear(d)", "week(d)", "quarter(d)",
    "isodow(d)", "yearweek(d)", "date_part('month', d)", "isoyear(d)", "decade(d)",
    "d + INTERVAL '1 year 2 months'", "d - INTERVAL 29 DAY",
    "extract(epoch FROM ts)", "second(ts)", "minute(ts)", "date_part('week', ts)",
    "date_trunc('minute', ts)", "date_trunc('month', ts)", "ts + INTERVAL 1 MONTH",
    "CAST(d AS TIMESTAMP) + INTERVAL 36 HOUR", "d + INTERVAL 3 HOUR", "ts = d",
    "ts < d + INTERVAL 12 HOUR", "d + INTERVAL 1 DAY = CAST(ts AS DATE)", "d - {n} < d",
    "date_trunc('day', ts) = d", "weekday(d)", "dayofmonth(d)", "millisecond(ts)", "d < DATE '2024-01-15'",
    "d BETWEEN DATE '2024-01-01' AND DATE '2024-01-31'", "CAST(d AS TIMESTAMP)",
    "d + INTERVAL 1 MONTH - INTERVAL 1 DAY",
    "ts + INTERVAL 90 MINUTE", "ts - INTERVAL 1 DAY", "date_trunc('hour', ts)",
    "date_trunc('day', ts)", "extract(hour FROM ts)", "extract(minute FROM ts)",
    "hour(ts)", "CAST(ts AS DATE)", "d - DATE '2024-02-28'",
    "epoch(ts)",
    "ts > TIMESTAMP '2024-02-29 12:00:00'", "CAST(d AS VARCHAR)", "CAST(ts AS VARCHAR)",
    "d = CAST(ts AS DATE)", "date_part('epoch', d)",
    "d + INTERVAL '1 month'", "greatest(d, CAST(ts AS DATE))", "CAST(ts AS TIME)",
]


@st.composite
def date_query(draw):
    exprs = [draw(st.sampled_from(DATE_FORMS)).format(n=draw(st.integers(0, 40)))
             for _ in range(draw(st.integers(1, 3)))]
    if draw(st.integers(0, 3)) == 0:
        key = draw(st.sampled_from(["date_trunc('month', d)", "year(d)", "dayofweek(d)",
                                    "date_trunc('day', ts)", "CAST(ts AS DATE)"]))
        agg = draw(st.sampled_from(["count(*)", "min(d)", "max(ts)", "count(DISTINCT d)",
                                    "max(d) - min(d)"]))
        return f"SELECT {key} AS k, {agg} AS n FROM dw GROUP BY 1", False
    cols = ", ".join(f"{e} AS c{i}" for i, e in enumerate(exprs))
    return f"SELECT id, {cols} FROM dw{_where(draw, 0.3)}", False


# -- ORDER BY + LIMIT / OFFSET ------------------------------------------------------------------

ORDER_KEYS = ["v", "f", "s", "d", "ts", "g", "flag", "lower(s)", "v % 3", "-v", "length(s)",
              "coalesce(f, 0)", "abs(v)", "v + f", "2"]


@st.composite
def order_query(draw):
    keys = [_key(draw, ORDER_KEYS) for _ in range(draw(st.integers(1, 3)))]
    limit = draw(st.sampled_from(["", " LIMIT 0", " LIMIT 1", " LIMIT 3", " LIMIT 7",
                                  " LIMIT 100"]))
    offset = draw(st.sampled_from(["", " OFFSET 1", " OFFSET 5", " OFFSET 39", " OFFSET 50"]))
    shape = draw(st.integers(0, 6))
    if shape == 5:  # top-N over groups, ties broken by the key
        agg = draw(st.sampled_from(["count(*)", "sum(v)", "max(s)", "avg(f)", "min(d)"]))
        key = draw(st.sampled_from(["g", "s", "flag", "v % 4", "d"]))
        return (f"SELECT {key} AS k, {agg} AS n FROM dw{_where(draw)} GROUP BY 1 ORDER BY 2 "
                f"{draw(st.sampled_from(['ASC', 'DESC NULLS LAST', 'DESC']))}, 1 NULLS FIRST"
                f"{limit}{offset}"), True
    if shape == 6:  # a join, ordered by both ids
        return (f"SELECT da.id, db.id AS id2, da.s, db.y FROM da "
                f"{draw(st.sampled_from(['JOIN', 'LEFT JOIN', 'FULL JOIN']))} db ON da.a = db.k "
                f"ORDER BY {draw(st.sampled_from(['db.y DESC', 'da.s', 'da.x NULLS FIRST']))}, "
                f"da.id NULLS LAST, db.id NULLS LAST{limit}{offset}"), True
    if shape == 4:  # DISTINCT: ordered by every output column
        col = draw(st.sampled_from(["g", "flag", "s", "v % 4", "d"]))
        return (f"SELECT DISTINCT {col} AS c FROM dw{_where(draw)} ORDER BY "
                f"{_key(draw, ['c'])}{limit}{offset}"), True
    return (f"SELECT id, v, s, d FROM dw{_where(draw)} ORDER BY {', '.join(keys)}, id"
            f"{limit}{offset}"), True


@st.composite
def setop_query(draw):
    """Set operations of dw with itself, ordered by every column (LIMIT / OFFSET too)."""
    op = draw(st.sampled_from(["UNION", "UNION ALL", "INTERSECT", "EXCEPT", "EXCEPT ALL",
                               "INTERSECT ALL"]))
    col = draw(st.sampled_from(["g", "s", "d", "v % 3", "flag", "lower(s)"]))
    sides = [f"SELECT {col} AS c, g AS h FROM dw{_where(draw, 0.7)}" for _ in range(2)]
    limit = draw(st.sampled_from(["", " LIMIT 4", " LIMIT 2 OFFSET 1"]))
    return (f"{sides[0]} {op} {sides[1]} ORDER BY c {draw(st.sampled_from(['', 'DESC']))} "
            f"NULLS {draw(st.sampled_from(['FIRST', 'LAST']))}, h NULLS FIRST{limit}"), True


# -- aggregates ------------------------------------------------------------------------------

AGGREGATES = [
    "count(DISTINCT s)", "count(DISTINCT v)", "sum(DISTINCT v)", "avg(DISTINCT v)",
    "count(DISTINCT d)", "stddev(f)", "stddev_pop(f)", "stddev_samp(v)", "variance(f)",
    "var_samp(v)", "var_pop(f)", "bool_and(flag)", "bool_or(flag)", "bool_and(v > -5)",
    "bool_or(s LIKE 'a%')", "string_agg(s, ',' ORDER BY id)", "string_agg(s ORDER BY s, id)",
    "string_agg(DISTINCT s, '|' ORDER BY s)", "min(d)", "max(ts)", "min(s)", "max(s)",
    "count(*) FILTER (WHERE v > 0)", "sum(v) FILTER (WHERE flag)", "avg(f)", "sum(f)",
    "count(flag)", "listagg(s, ';' ORDER BY id DESC)", "count(DISTINCT lower(s))",
    "min(v) + max(v)", "sum(v) / count(v)", "string_agg(CAST(v AS VARCHAR), '+' ORDER BY id)",
    "max(length(s))", "first(s ORDER BY id)", "count(DISTINCT f)", "sum(DISTINCT f)",
    "avg(v) FILTER (WHERE s IS NOT NULL)", "count(DISTINCT v) FILTER (WHERE flag)",
    "stddev(v) FILTER (WHERE g > 0)", "string_agg(DISTINCT lower(s), ',' ORDER BY lower(s))",
    "bool_and(s IS NOT NULL)", "min(flag)", "max(flag)", "sum(CASE WHEN flag THEN 1 END)",
    "count(*) - count(v)", "avg(d - DATE '2024-01-01')", "var_samp(f) * 2",
    "median(v)", "median(d)", "quantile_disc(s, 0.25)", "quantile_cont(f, -0.4)",
    "percentile_disc(0.5) WITHIN GROUP (ORDER BY ts DESC)", "median(f) FILTER (WHERE flag)",
    "mode(v ORDER BY v DESC)", "product(v) FILTER (WHERE v <> 0)", "bit_or(v)", "bit_and(g)",
    "corr(f, v)", "regr_intercept(v, f)", "regr_r2(f, g)", "covar_pop(v, f) * 2",
    "kurtosis(f)", "skewness(v)", "arg_max(s, d)", "min_by(ts, f)", "max_by(v, s)",
    "last(s ORDER BY id)", "geomean(f)", "kahan_sum(f)", "entropy(d)",
    "median(DISTINCT v)", "product(DISTINCT g)",
]


@st.composite
def aggregate_query(draw):
    keys = draw(st.sampled_from([[], ["g"], ["flag"], ["g", "flag"], ["v % 2"],
                                 ["s IS NULL"], ["year(d)"]]))
    aggs = draw(st.lists(st.sampled_from(AGGREGATES), min_size=1, max_size=3))
    cols = [f"{k} AS k{i}" for i, k in enumerate(keys)] + \
           [f"{a} AS a{i}" for i, a in enumerate(aggs)]
    group = f" GROUP BY {', '.join(str(i + 1) for i in range(len(keys)))}" if keys else ""
    having = ""
    if keys and draw(st.integers(0, 3)) == 0:
        having = f" HAVING {draw(st.sampled_from(['count(*) > 3', 'bool_or(flag)', 'sum(v) > 0', 'count(DISTINCT s) >= 2']))}"
    if draw(st.integers(0, 5)) == 0:
        col = draw(st.sampled_from(["g, flag", "s", "v % 3, s IS NULL", "d"]))
        return f"SELECT DISTINCT {col} FROM dw{_where(draw)}", False
    return f"SELECT {', '.join(cols)} FROM dw{_where(draw)}{group}{having}", False


# -- comparing -------------------------------------------------------------------------------


@settings(max_examples=MAX_EXAMPLES, **SETTINGS)
@given(query=window_query())
def test_windows(engines, query):
    sqllogic.differential_check(engines, *query)


@settings(max_examples=MAX_EXAMPLES, **SETTINGS)
@given(query=subquery_query())
def test_subqueries(engines, query):
    sqllogic.differential_check(engines, *query)


@settings(max_examples=MAX_EXAMPLES, **SETTINGS)
@given(query=string_query())
def test_strings(engines, query):
    sqllogic.differential_check(engines, *query)


@settings(max_examples=MAX_EXAMPLES, **SETTINGS)
@given(query=cond_query())
def test_conditionals(engines, query):
    sqllogic.differential_check(engines, *query)


@settings(max_examples=MAX_EXAMPLES, **SETTINGS)
@given(query=expr_query())
def test_expression_trees(engines, query):
    sqllogic.differential_check(engines, *query)


@settings(max_examples=MAX_EXAMPLES, **SETTINGS)
@given(query=nested_query())
def test_nested_relations(engines, query):
    sqllogic.differential_check(engines, *query)


@settings(max_examples=MAX_EXAMPLES, **SETTINGS)
@given(query=date_query())
def test_dates(engines, query):
    sqllogic.differential_check(engines, *query)


@settings(max_examples=MAX_EXAMPLES, **SETTINGS)
@given(query=order_query())
def test_order_limit(engines, query):
    sqllogic.differential_check(engines, *query)


@settings(max_examples=MAX_EXAMPLES, **SETTINGS)
@given(query=setop_query())
def test_set_operations_ordered(engines, query):
    sqllogic.differential_check(engines, *query)


@settings(max_examples=MAX_EXAMPLES, **SETTINGS)
@given(query=aggregate_query())
def test_aggregates(engines, query):
    sqllogic.differential_check(engines, *query)
