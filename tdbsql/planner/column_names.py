"""Result column names as DuckDB writes them.

A select item without an alias is named by DuckDB after its expression, printed the way
DuckDB's parser prints it back (``ParsedExpression::ToString``), not as written: every operator
in parentheses (``x + 1`` -> ``(x + 1)``, ``s LIKE 'a%'`` -> ``(s ~~ 'a%')``), function names in
lower case as called (``string_agg(s)``, never sqlglot's ``listagg(s, ',')``), DuckDB keywords
in double quotes (``"year"(d)``), ``count(*)`` as ``count_star()``, ``CAST(x AS VARCHAR)``,
``CASE  WHEN (c) THEN (v) ELSE NULL END``.  A column is named by itself, an aliased item by its
alias.

sqlglot's tree forgets how a call was written (``string_agg``, ``listagg`` and
``group_concat`` are one node; ``date_trunc('month', d)`` keeps its unit as ``MONTH``), so the
parser (``planner.parse``) notes on each call its name and its arguments, printed here, on
each INTERVAL the tokens it had, on each ``NULLS LAST`` that it was written, on each EXTRACT
its part as written (``note_call``, ``note_interval``, ``note_nulls_last``,
``note_extract``).  A call over a named window prints the window it stands for
(``planner.named_windows``).  A subquery prints as DuckDB prints a SELECT; what is not
modelled here (a set operation in a subquery, rare types) falls back to sqlglot's DuckDB SQL.
"""

from __future__ import annotations

from sqlglot import exp

from ..errors import SqlError
from .duckdb_keywords import KEYWORDS
from .named_windows import definitions, resolved

_CALL = "tdbsql_call"  # meta on a call: (name as written, its arguments printed | None, parens?)
_INTERVAL = "tdbsql_interval"  # meta on an INTERVAL: (the value's text | None, unit | None)
_NULLS_LAST = "tdbsql_nulls_last"  # meta on an ORDER BY key written with NULLS LAST
_PART = "tdbsql_part"  # meta on an EXTRACT: its part as written


def column_name(item: exp.Expression) -> str:
    """The name DuckDB gives the result column of select item ``item``."""
    if isinstance(item, (exp.Alias, exp.Column)):
        return item.alias_or_name
    text = _rendered(item)
    return text if text is not None else item.sql(dialect="duckdb", normalize_functions="lower")


def _rendered(node: exp.Expression) -> str | None:
    """``render(node)``, or None for a tree shape it does not know: a name is never worth
    failing a query over."""
    try:
        return render(node)
    except (AttributeError, KeyError, TypeError, ValueError):
        return None


def note_call(call: exp.Func, name: str, args: list[exp.Expression] | None,
              parens: bool) -> None:
    """Record how ``call`` was written: its name, and its arguments (None: not read as a
    plain argument list)."""
    if _CALL not in call.meta:
        printed = None if args is None else [_rendered(a) for a in args]
        if printed is not None and None in printed:
            printed = None
        call.meta[_CALL] = (name, printed, parens)


def note_nulls_last(ordered: exp.Ordered) -> None:
    """Record that ``ordered`` was written with ``NULLS LAST`` (sqlglot drops the default)."""
    ordered.meta[_NULLS_LAST] = True


def note_extract(extract: exp.Extract, part: str) -> None:
    """Record an EXTRACT's part as written (sqlglot upper-cases it)."""
    extract.meta[_PART] = part


def note_interval(interval: exp.Interval, value: str | None, unit: str | None) -> None:
    """Record an INTERVAL's written value (a number or a quoted string; None: an expression)
    and unit (None: the string holds it, ``INTERVAL '1 day'``)."""
    interval.meta[_INTERVAL] = (value, unit)


def written_interval(interval: exp.Interval) -> tuple[str | None, str | None] | None:
    """How an INTERVAL was written, (value, unit), when the parser noted it."""
    return interval.meta.get(_INTERVAL)


def written_call(node: exp.Expression) -> tuple[str, bool] | None:
    """How a call was written: (its name, with parentheses?), when the parser noted it."""
    noted = node.meta.get(_CALL)
    return None if noted is None else (noted[0], noted[2])


def written_arguments(node: exp.Expression) -> list[str] | None:
    """A call's arguments as written (printed as DuckDB prints them), when the parser noted
    them."""
    noted = node.meta.get(_CALL)
    return None if noted is None else noted[1]


def render(node: exp.Expression) -> str:
    """``node`` printed as DuckDB prints a parsed expression."""
    if _CALL in node.meta and isinstance(node, _CALLS_BY_NAME):
        return _call(node)
    handler = _HANDLERS.get(type(node))
    if handler is not None:
        return handler(node)
    op = _BINARY.get(type(node))
    if op is not None:
        return f"({render(node.this)} {op} {render(node.expression)})"
    if isinstance(node, exp.Func):
        return _call(node)
    return node.sql(dialect="duckdb", normalize_functions="lower")


def quote(name: str) -> str:
    """An identifier as DuckDB prints it: in double quotes when it is a keyword or not a
    plain name."""
    plain = name.replace("_", "a").isalnum() and not name[:1].isdigit()
    if plain and name.isascii() and name.lower() not in KEYWORDS:
        return name
    return '"' + name.replace('"', '""') + '"'


_BINARY = {
    exp.Add: "+", exp.Sub: "-", exp.Mul: "*", exp.Div: "/", exp.IntDiv: "//", exp.Mod: "%",
    exp.Pow: "^", exp.DPipe: "||", exp.EQ: "=", exp.NEQ: "!=", exp.GT: ">", exp.GTE: ">=",
    exp.LT: "<", exp.LTE: "<=", exp.NullSafeEQ: "IS NOT DISTINCT FROM",
    exp.NullSafeNEQ: "IS DISTINCT FROM",
    exp.BitwiseAnd: "&", exp.BitwiseOr: "|", exp.BitwiseLeftShift: "<<",
    exp.BitwiseRightShift: ">>",
}
# written as calls (``mod(x, 2)``, ``power(x, 2)``) these print as calls, not operators
_CALLS_BY_NAME = (exp.Mod, exp.Pow, exp.If, exp.Nullif)


def _literal(node: exp.Literal) -> str:
    if node.is_string:
        return "'" + node.this.replace("'", "''") + "'"
    return node.this


def _column(node: exp.Column) -> str:
    return ".".join("*" if isinstance(part, exp.Star) else quote(part.name)
                    for part in node.parts)


def _neg(node: exp.Neg) -> str:
    if isinstance(node.this, exp.Literal) and not node.this.is_string:
        return "-" + node.this.this  # a negative constant
    return f"(-({render(node.this)}))"


def _connective(node: exp.Connector) -> str:
    """``a AND b AND c`` is one conjunction in DuckDB: ``(a AND b AND c)``."""
    word = " AND " if isinstance(node, exp.And) else " OR "
    parts, stack = [], [node]
    while stack:
        part = stack.pop()
        if type(part) is type(node):
            stack += [part.expression, part.this]
        else:
            parts.append(render(part))
    return "(" + word.join(parts) + ")"


def _like(node: exp.Like | exp.ILike) -> str:
    op = "~~" if isinstance(node, exp.Like) else "~~*"
    if node.args.get("negate"):
        op = "!" + op
    return f"({render(node.this)} {op} {render(node.expression)})"


def _not(node: exp.Not) -> str:
    inner = node.this
    if isinstance(inner, exp.Paren):
        inner = inner.unnest()
    if isinstance(inner, (exp.Like, exp.ILike)):
        op = "!~~" if isinstance(inner, exp.Like) else "!~~*"
        return f"({render(inner.this)} {op} {render(inner.expression)})"
    if isinstance(inner, exp.Is):
        return _is(inner, negated=True)
    return f"(NOT {render(node.this)})"


def _is(node: exp.Is, negated: bool = False) -> str:
    if isinstance(node.expression, exp.Boolean):  # x IS [NOT] TRUE
        op = "IS DISTINCT FROM" if negated else "IS NOT DISTINCT FROM"
        return f"(CAST({render(node.this)} AS BOOLEAN) {op} {render(node.expression)})"
    return f"({render(node.this)} IS {'NOT ' if negated else ''}{render(node.expression)})"


def _between(node: exp.Between) -> str:
    return f"({render(node.this)} BETWEEN {render(node.args['low'])} AND " \
           f"{render(node.args['high'])})"


def _in(node: exp.In) -> str:
    query = node.args.get("query")
    if query is not None:
        return f"({render(node.this)} = ANY{render(query)})"
    return f"({render(node.this)} IN ({', '.join(map(render, node.expressions))}))"


def _case(node: exp.Case) -> str:
    subject = node.this
    text = "CASE "
    for branch in node.args.get("ifs") or []:
        when = render(branch.this)
        if subject is not None:
            when = f"({render(subject)} = {when})"
        text += f" WHEN ({when}) THEN ({render(branch.args['true'])})"
    default = node.args.get("default")
    return text + f" ELSE {'NULL' if default is None else render(default)} END"


def _cast(node: exp.Cast) -> str:
    word = "TRY_CAST" if isinstance(node, exp.TryCast) or node.args.get("safe") else "CAST"
    return f"{word}({render(node.this)} AS {type_sql(node.to)})"


_TYPE_NAMES = {
    "TEXT": "VARCHAR", "VARCHAR": "VARCHAR", "INT": "INTEGER", "UINT": "UINTEGER",
    "INT128": "HUGEINT", "UINT128": "UHUGEINT",
    "VARBINARY": "BLOB", "TIMESTAMPNTZ": "TIMESTAMP",
}


def type_sql(data_type: exp.DataType) -> str:
    """A type as DuckDB prints it; sqlglot reads VARCHAR, TEXT and STRING alike: VARCHAR."""
    if data_type.expressions and data_type.this == exp.DataType.Type.DECIMAL:
        return "DECIMAL(" + ", ".join(render(e.this) if isinstance(e, exp.DataTypeParam)
                                      else render(e) for e in data_type.expressions) + ")"
    if data_type.this == exp.DataType.Type.STRUCT and data_type.expressions:
        return "STRUCT(" + ", ".join(f"{quote(field.name)} {type_sql(field.args['kind'])}"
                                     for field in data_type.expressions) + ")"
    if data_type.args.get("nested") or data_type.expressions:
        return data_type.sql(dialect="duckdb")
    name = data_type.this.value
    return _TYPE_NAMES.get(name, name)


# INTERVAL n UNIT: DuckDB's parser writes a to_<units>(...) call; the sub-day ones take BIGINT,
# seconds and milliseconds a DOUBLE as it is
_INTERVAL_CALLS = {
    "YEAR": "to_years", "MONTH": "to_months", "DAY": "to_days", "WEEK": "to_weeks",
    "QUARTER": "to_quarters", "HOUR": "to_hours", "MINUTE": "to_minutes",
    "SECOND": "to_seconds", "MILLISECOND": "to_milliseconds",
    "MICROSECOND": "to_microseconds", "DECADE": "to_decades", "CENTURY": "to_centuries",
    "MILLENNIUM": "to_millennia",
}


def _interval(node: exp.Interval) -> str:
    value, unit = node.meta.get(_INTERVAL, (None, "?"))
    if unit is None and value is not None:
        return f"CAST({value} AS INTERVAL)"
    unit = (unit or "").upper()
    unit = {"CENTURIES": "CENTURY", "MILLENNIA": "MILLENNIUM"}.get(unit, unit.rstrip("S"))
    call = _INTERVAL_CALLS.get(unit)
    if call is None:
        return node.sql(dialect="duckdb")
    value = value if value is not None else render(node.this)
    if unit in ("SECOND", "MILLISECOND"):
        return f"{call}(CAST({value} AS DOUBLE))"
    width = "BIGINT" if unit in ("HOUR", "MINUTE", "MICROSECOND") else "INTEGER"
    return f"{call}(CAST(trunc(CAST({value} AS DOUBLE)) AS {width}))"


# EXTRACT's parts that are SQL keywords: DuckDB's parser names them so, whatever their
# spelling; any other part (``dow``, ``ms``, ``Epoch``) keeps the text written
_EXTRACT_KEYWORDS = {
    **{word: word.upper() for word in ("year", "month", "day", "hour", "minute", "second",
                                       "week", "quarter", "decade")},
    **{word + "s": word.upper() for word in ("year", "month", "day", "hour", "minute",
                                             "second", "week", "quarter", "decade")},
    "millisecond": "MILLISECONDS", "milliseconds": "MILLISECONDS",
    "microsecond": "MICROSECONDS", "microseconds": "MICROSECONDS",
    "century": "CENTURY", "centuries": "CENTURY",
    "millennium": "MILLENNIUM", "millennia": "MILLENNIUM",
}


def _extract(node: exp.Extract) -> str:
    written = node.meta.get(_PART, node.this.name)
    part = _EXTRACT_KEYWORDS.get(written.lower(), written)
    return f"date_part('{part}', {render(node.expression)})"


def _ordered(node: exp.Ordered) -> str:
    text = render(node.this)
    desc = node.args.get("desc")
    if desc:
        text += " DESC"
    elif desc is False:
        text += " ASC"
    if node.args.get("nulls_first"):
        return text + " NULLS FIRST"
    return text + (" NULLS LAST" if node.meta.get(_NULLS_LAST) else "")


def _order(node: exp.Order) -> str:
    """ORDER BY inside an aggregate call: after its arguments."""
    return f"{render(node.this)} ORDER BY {', '.join(map(render, node.expressions))}"


def _within_group(node: exp.WithinGroup) -> str:
    """DuckDB names ``percentile_cont(q) WITHIN GROUP (ORDER BY x)`` by the call it binds,
    ``quantile_cont(q ORDER BY x)``; a ``mode()`` keeps its clause."""
    keys = ", ".join(map(render, node.expression.expressions)) \
        if isinstance(node.expression, exp.Order) else render(node.expression)
    call = node.this
    if isinstance(call, (exp.PercentileCont, exp.PercentileDisc)):
        name = "quantile_cont" if isinstance(call, exp.PercentileCont) else "quantile_disc"
        return f"{name}({render(call.this)} ORDER BY {keys})"
    return f"{render(call)} WITHIN GROUP ( ORDER BY {keys})"


def _filter(node: exp.Filter) -> str:
    return f"{render(node.this)} FILTER (WHERE {render(node.expression.this)})"


def _ignore_nulls(node: exp.Expression) -> str:
    """``first_value(x IGNORE NULLS)``: the option goes inside the call's parentheses; RESPECT
    NULLS, the default, is not printed.  sqlglot reads a plain ``any_value(x)`` as
    ``any_value(x) IGNORE NULLS``."""
    call = render(node.this)
    if isinstance(node, exp.RespectNulls) or isinstance(node.this, exp.AnyValue):
        return call
    return call[:-1] + " IGNORE NULLS)" if call.endswith(")") else call + " IGNORE NULLS"


def _window(node: exp.Window) -> str:
    """``f(x) OVER (...)``; over a named window DuckDB prints the window it stands for."""
    if node.args.get("alias") is not None:
        try:
            node = resolved(node, definitions(node.find_ancestor(exp.Select)))
        except SqlError:  # refused by planner.named_windows
            return node.sql(dialect="duckdb", normalize_functions="lower")
    parts = []
    if node.args.get("partition_by"):
        parts.append("PARTITION BY " + ", ".join(map(render, node.args["partition_by"])))
    order = node.args.get("order")
    if order is not None:
        parts.append("ORDER BY " + ", ".join(map(render, order.expressions)))
    frame = _frame(node.args.get("spec"))
    if frame:
        parts.append(frame)
    return f"{_window_function(node.this)} OVER ({' '.join(parts)})"


def _window_function(function: exp.Expression) -> str:
    """A window's function (with its FILTER / IGNORE NULLS); DuckDB reads ``first`` /
    ``last`` over a window as ``first_value`` / ``last_value`` and prints them so."""
    noted = _called(function).meta.get(_CALL)
    if noted is None or noted[0].lower() not in ("first", "last"):
        return render(function)
    function = function.copy()  # renamed in a copy: the parsed tree keeps what was written
    _called(function).meta[_CALL] = (noted[0].lower() + "_value", *noted[1:])
    return render(function)


def _called(function: exp.Expression) -> exp.Expression:
    """The call under a window function's FILTER / IGNORE NULLS."""
    while isinstance(function, (exp.Filter, exp.IgnoreNulls, exp.RespectNulls)):
        function = function.this
    return function


def _frame(spec: exp.WindowSpec | None) -> str:
    """A frame as ``ROWS BETWEEN ... AND ...``; DuckDB's default frame is not printed."""
    if spec is None:
        return ""
    start = _bound(spec.args.get("start"), spec.args.get("start_side"))
    end = _bound(spec.args.get("end") or "CURRENT ROW", spec.args.get("end_side"))
    kind = str(spec.args.get("kind") or "RANGE").upper()
    if kind == "RANGE" and start == "UNBOUNDED PRECEDING" and end == "CURRENT ROW":
        return ""
    return f"{kind} BETWEEN {start} AND {end}"


def _bound(value, side) -> str:
    text = value.upper() if isinstance(value, str) else render(value)
    return text if text == "CURRENT ROW" else f"{text} {str(side or '').upper()}".strip()


def _count(node: exp.Count) -> str:
    """``count(*)`` / ``count()`` is DuckDB's ``count_star()`` -- ``count()`` in a window."""
    arg = node.this
    if arg is not None and not isinstance(arg, exp.Star):
        return _call(node)
    parent = node.parent.parent if isinstance(node.parent, exp.Filter) else node.parent
    return "count()" if isinstance(parent, exp.Window) else "count_star()"


def _group_concat(node: exp.GroupConcat) -> str:
    """``string_agg`` / ``listagg`` / ``group_concat`` by the name written, with the
    separator only when one was given."""
    arg, order = node.this, None
    if isinstance(arg, exp.Order):
        arg, order = arg.this, arg.expressions
    text = render(arg)
    if node.args.get("separator") is not None:
        text += ", " + render(node.args["separator"])
    if order:
        text += " ORDER BY " + ", ".join(map(render, order))
    return f"{_name(node, 'string_agg')}({text})"


def _trim(node: exp.Trim) -> str:
    args = [render(node.this)] + ([render(node.expression)] if node.expression else [])
    return f"{_name(node, 'trim')}({', '.join(args)})"


def _named_args(name: str):
    def handler(node: exp.Expression) -> str:
        args = [node.this, *node.expressions] if node.this is not None else node.expressions
        return f"{name}({', '.join(map(render, args))})"
    return handler


def _name(node: exp.Func, default: str) -> str:
    written = node.meta.get(_CALL, (default,))[0]
    return quote(written.lower())


def _call(node: exp.Func) -> str:
    """A function call by the name written, with its arguments as written when the parser
    noted them, else in sqlglot's order."""
    written, args, parens = node.meta.get(_CALL, (None, None, True))
    if isinstance(node, exp.Anonymous):
        name = written or node.name
    else:
        name = written or node.sql_name()
    if not parens:
        return written  # current_date, CURRENT_TIMESTAMP: as written
    if args is None:
        args = [render(value) for key in node.arg_types
                for value in _listed(node.args.get(key))
                if isinstance(value, exp.Expression)]
    return f"{quote(name.lower())}({', '.join(args)})"


def _listed(value) -> list:
    return value if isinstance(value, list) else [value]


def _escape(node: exp.Escape) -> str:
    """``s LIKE p ESCAPE e`` is DuckDB's ``like_escape(s, p, e)``."""
    like = node.this
    name = {exp.Like: "like_escape", exp.ILike: "ilike_escape"}.get(type(like))
    if name is None:
        return node.sql(dialect="duckdb")
    return f"{name}({render(like.this)}, {render(like.expression)}, {render(node.expression)})"


def _distinct(node: exp.Distinct) -> str:
    return "DISTINCT " + ", ".join(map(render, node.expressions))


def _subquery(node: exp.Subquery) -> str:
    return f"({_query(node.this)})"


def _query(query: exp.Expression) -> str:
    """A nested query as DuckDB prints it: a SELECT through ``_select``, other shapes (UNION
    ...) in sqlglot's DuckDB SQL."""
    if isinstance(query, exp.Select):
        try:
            return _select(query)
        except ValueError:  # a FROM clause _source / _join do not print
            pass
    return query.sql(dialect="duckdb")


def _select(select: exp.Select) -> str:
    """``SELECT [DISTINCT [ON (...)]] items FROM ... WHERE ... GROUP BY ... HAVING ...
    QUALIFY ... ORDER BY ... LIMIT ... OFFSET ...``, each part printed as DuckDB prints it;
    ``ValueError`` for a SELECT with a clause this does not print (WITH)."""
    if select.args.get("with_") is not None:
        raise ValueError("a nested WITH")
    distinct = select.args.get("distinct")
    head = "SELECT "
    if distinct is not None:
        on = distinct.args.get("on")
        head += "DISTINCT " + (f"ON ({', '.join(map(render, on.expressions))}) "
                               if on is not None else "")
    parts = [head + ", ".join(f"{render(e.this)} AS {quote(e.alias)}" if isinstance(e, exp.Alias)
                              else render(e) for e in select.expressions)]
    if select.args.get("from_") is not None:
        source = _source(select.args["from_"].this)
        for join in select.args.get("joins") or []:
            source = _join(source, join)
        parts.append(f"FROM {source}")
    if select.args.get("where") is not None:
        parts.append(f"WHERE {render(select.args['where'].this)}")
    group = select.args.get("group")
    if group is not None:
        parts.append("GROUP BY " + ("ALL" if group.args.get("all")
                                    else ", ".join(map(render, group.expressions))))
    for key in ("having", "qualify"):
        if select.args.get(key) is not None:
            parts.append(f"{key.upper()} {render(select.args[key].this)}")
    if select.args.get("order") is not None:
        parts.append("ORDER BY " + ", ".join(map(render, select.args["order"].expressions)))
    for key in ("limit", "offset"):
        if select.args.get(key) is not None:
            parts.append(f"{key.upper()} {render(select.args[key].expression)}")
    return " ".join(parts)


def _source(node: exp.Expression) -> str:
    """A table (``t AS u``) or a derived table (``(SELECT ...) AS q``, LATERAL or not) in a
    FROM clause."""
    if isinstance(node, exp.Table) and isinstance(node.this, exp.Identifier):
        text = ".".join(quote(part.name) for part in node.parts)
    elif isinstance(node, exp.Subquery):
        text = f"({_query(node.this)})"
    elif isinstance(node, exp.Lateral) and isinstance(node.this, exp.Subquery):
        text = f"({_query(node.this.this)})"  # DuckDB does not print LATERAL
    else:
        raise ValueError(f"no DuckDB rendering of {node.key}")
    return f"{text} AS {quote(node.alias)}" if node.alias else text


def _join(left: str, join: exp.Join) -> str:
    """``left`` joined: ``t , u`` for a comma, else ``(t INNER JOIN u ON (cond))``."""
    right = _source(join.this)
    on, using = join.args.get("on"), join.args.get("using")
    kind = (join.side or join.kind or "").upper()
    if kind == "CROSS" or (not kind and on is None and not using):
        return f"{left} , {right}" if not kind else f"({left} CROSS JOIN {right})"
    if kind not in ("", "INNER", "LEFT", "RIGHT", "FULL"):
        raise ValueError(f"no DuckDB rendering of a {kind} join")
    condition = f"ON ({render(on)})" if on is not None else \
        f"USING ({', '.join(quote(u.name) for u in using)})"
    return f"({left} {kind or 'INNER'} JOIN {right} {condition})"


_HANDLERS = {
    exp.Paren: lambda node: render(node.this),
    exp.Column: _column,
    exp.Literal: _literal,
    exp.Null: lambda node: "NULL",
    exp.Boolean: lambda node: "true" if node.this else "false",
    exp.Star: lambda node: "*",
    exp.Neg: _neg,
    exp.BitwiseNot: lambda node: f"(~({render(node.this)}))",
    exp.And: _connective,
    exp.Or: _connective,
    exp.Like: _like,
    exp.ILike: _like,
    exp.Not: _not,
    exp.Is: _is,
    exp.Between: _between,
    exp.In: _in,
    exp.Case: _case,
    exp.Cast: _cast,
    exp.TryCast: _cast,
    exp.Interval: _interval,
    exp.Extract: _extract,
    exp.Ordered: _ordered,
    exp.Order: _order,
    exp.Filter: _filter,
    exp.WithinGroup: _within_group,
    exp.IgnoreNulls: _ignore_nulls,
    exp.RespectNulls: _ignore_nulls,
    exp.Window: _window,
    exp.Count: _count,
    exp.GroupConcat: _group_concat,
    exp.Trim: _trim,
    exp.Coalesce: _named_args("COALESCE"),
    exp.Grouping: _named_args("GROUPING"),
    exp.GroupingId: _named_args("GROUPING"),
    exp.Array: _named_args("list_value"), exp.Struct: _named_args("struct_pack"),
    exp.Tuple: _named_args('"row"'),
    exp.ToMap: lambda node: '"map"(' + ", ".join(
        "list_value(" + ", ".join(render(getattr(e, side)) for e in node.this.expressions) + ")"
        for side in ("this", "expression")) + ")",
    exp.PropertyEQ: lambda node: f"{quote(node.this.name)} := {render(node.expression)}",
    exp.Distinct: _distinct,
    exp.Subquery: _subquery,
    exp.Any: lambda node: "ANY" + render(node.this),
    exp.Glob: lambda node: f"({render(node.this)} ~~~ {render(node.expression)})",
    exp.SimilarTo: lambda node: f"regexp_full_match({render(node.this)}, "
                                f"{render(node.expression)})",
    exp.Escape: _escape,
    exp.Exists: lambda node: f"EXISTS({_query(node.this)})",
}
