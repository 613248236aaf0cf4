"""What DuckDB's binder (or parser) refuses in aggregate and window calls: an SqlError here,
before planning, never ``UnsupportedSql`` from deep in the engine nor an answer.

* an aggregate inside an aggregate's arguments, ORDER BY or FILTER (``sum(count(*))``) --
  as an argument of a *window* call it is fine (``sum(count(*)) OVER ()``);
* a window call inside an aggregate or its FILTER (``sum(row_number() OVER ())``), inside
  another window call, or in a window's PARTITION BY / ORDER BY;
* ``WITHIN GROUP (ORDER BY ...)`` on anything but an ordered-set aggregate (``listagg(x, ',')
  WITHIN GROUP (ORDER BY y)``: write ``listagg(x, ',' ORDER BY y)``);
* a subquery as ``string_agg``'s separator (it must be a constant);
* ``count`` of two arguments (``count(a, b)``); ``max`` / ``min`` / ``arg_max`` / ``arg_min``
  with a count (DuckDB's n top values as a list) are UnsupportedSql, not the plain value;
* ``IGNORE NULLS`` / ``RESPECT NULLS`` anywhere but in a window's navigation function
  (``lag``, ``lead``, ``first_value``, ``last_value``, ``nth_value``; ``first`` / ``last``
  read as those): not on an aggregate, over a window or not (``sum(x IGNORE NULLS)``);
* ``ORDER BY`` a constant that is not an integer (``'x'``, ``NULL``, ``1.5``, ``TRUE``), in an
  aggregate call or the query, which DuckDB calls a mistake ("has no effect"); in the query's
  ORDER BY an integer is a position and must be one (``ORDER BY 0`` is out of range).
"""

from __future__ import annotations

from sqlglot import exp

from ..errors import SqlError, UnsupportedSql
from .column_names import written_call
from .parse import WITHIN_GROUP, span_of

_ORDERED_SET = frozenset({"percentile_cont", "percentile_disc", "mode"})
_SCOPES = (exp.Select, exp.Subquery)
_GROUPING = (exp.Grouping, exp.GroupingId)  # no aggregates: refused apart (grouping_sets)
_NAVIGATION = (exp.Lag, exp.Lead, exp.FirstValue, exp.LastValue, exp.NthValue, exp.First,
               exp.Last)
_NULL_OPTIONS = (exp.IgnoreNulls, exp.RespectNulls)
_RANKING = (exp.RowNumber, exp.Rank, exp.DenseRank, exp.PercentRank, exp.CumeDist, exp.Ntile)


def check_calls(tree: exp.Expression, sql: str) -> None:
    """Raise an SqlError for the first call DuckDB would refuse (see the module docstring)."""
    for call in tree.find_all(exp.AggFunc):
        if _window_of(call) is None and not isinstance(call, _GROUPING):
            _check_aggregate(call, sql)
    for window in tree.find_all(exp.Window):
        _check_window(window, sql)
    for node in tree.find_all(exp.Filter):
        _check_filter(node, sql)
    for node in tree.find_all(exp.GroupConcat, exp.WithinGroup):
        _check_ordered_set(node, sql)
    for order in tree.find_all(exp.Order):
        _check_order(order, sql)
    for option in tree.find_all(*_NULL_OPTIONS):
        _check_null_option(option, sql)


def _window_of(call: exp.Expression) -> exp.Window | None:
    """The window whose function ``call`` is (through FILTER / IGNORE NULLS), or None."""
    child, parent = call, call.parent
    while isinstance(parent, (exp.Filter, exp.IgnoreNulls, exp.RespectNulls)) \
            and parent.this is child:
        child, parent = parent, parent.parent
    return parent if isinstance(parent, exp.Window) and parent.this is child else None


def _inside(node: exp.Expression):
    """What is below ``node`` in its own query: not inside subqueries, and a window call as a
    whole (not what is inside it)."""
    for sub in node.walk(prune=lambda n: n is not node and isinstance(n, (*_SCOPES, exp.Window))):
        if sub is not node and not isinstance(sub, _SCOPES):
            yield sub


def _error(message: str, sql: str, node: exp.Expression) -> SqlError:
    return SqlError(message, sql, call_span(node, sql))


def call_span(node: exp.Expression, sql: str) -> tuple[int, int] | None:
    """From the first to the last place ``node``'s parts recorded, through the parentheses
    that closes (sqlglot records names and constants, not parentheses): ``count(*)``."""
    spans = [s for s in map(span_of, node.walk()) if s is not None]
    if not spans:
        return None
    start, end = min(s[0] for s in spans), max(s[1] for s in spans)
    if not isinstance(node, (exp.Func, exp.Window)):
        return start, end
    if sql[end:].lstrip().startswith("("):
        end = len(sql) - len(sql[end:].lstrip()) + 1  # into a call's arguments after its name
    depth = sql.count("(", start, end) - sql.count(")", start, end)
    while depth > 0 and end < len(sql):
        depth += {"(": 1, ")": -1}.get(sql[end], 0)
        end += 1
    return start, end


_TOP_N = (exp.Max, exp.Min, exp.ArgMax, exp.ArgMin)  # DuckDB's f(x, n): the top n as a list


def _check_aggregate(call: exp.AggFunc, sql: str) -> None:
    if isinstance(call, _TOP_N) and call.args.get("count") is not None:
        written = written_call(call)
        name = written[0] if written else call.sql_name().lower()
        args = "x, y" if isinstance(call, (exp.ArgMax, exp.ArgMin)) else "x"
        raise UnsupportedSql(f"{name}({args}, n) (the top n as a list) is not supported; "
                             f"{name}({args}) is")
    if isinstance(call, exp.Count) and call.expressions:
        raise _error("count() takes one argument (count(*), count(x) or count(DISTINCT x))",
                     sql, call)
    for sub in _inside(call):
        if isinstance(sub, exp.Window):
            raise _error("aggregate function calls cannot contain window function calls",
                         sql, sub)
        if isinstance(sub, exp.AggFunc) and _window_of(sub) is None \
                and not isinstance(sub, _GROUPING):
            raise _error("aggregate function calls cannot be nested", sql, sub)
    separator = call.args.get("separator") if isinstance(call, exp.GroupConcat) else None
    if separator is not None and separator.find(*_SCOPES) is not None:
        raise _error('The "separator" argument of string_agg must be a constant expression',
                     sql, separator)


def _check_window(window: exp.Window, sql: str) -> None:
    for sub in _inside(window.this):
        if isinstance(sub, exp.Window):
            raise _error("window function calls cannot be nested", sql, sub)
    definition = [*(window.args.get("partition_by") or []), window.args.get("order")]
    for part in filter(None, definition):
        for sub in [part, *_inside(part)]:
            if isinstance(sub, exp.Window):
                raise _error("window functions are not allowed in window definitions", sql,
                             sub)


def _check_null_option(option: exp.Expression, sql: str) -> None:
    """IGNORE / RESPECT NULLS, written after a call's arguments (sqlglot moves it out of an
    aggregate's parentheses) or after one of them, belongs to a window's navigation
    function; sqlglot reads every plain ``any_value(x)`` as ``any_value(x) IGNORE NULLS``."""
    call = option.this if isinstance(option.this, exp.Func) else option.parent
    if not isinstance(call, exp.Func):
        return
    window = _window_of(call)
    if isinstance(call, _NAVIGATION) and window is not None:
        return
    if isinstance(call, exp.AnyValue) and option.this is call:
        return
    if isinstance(call, _RANKING) and window is not None:  # DuckDB ignores it, or reads it oddly
        raise UnsupportedSql(f"RESPECT/IGNORE NULLS on the ranking function "
                             f"{call.sql_name().lower()}() is not supported")
    where = "windowed aggregates" if window is not None else "non-window functions"
    raise _error(f"RESPECT/IGNORE NULLS is not supported for {where}", sql, call)


def _check_filter(node: exp.Filter, sql: str) -> None:
    """A FILTER condition holds no window call, and an aggregate's no aggregate (a window
    call's may: it runs over grouped rows)."""
    in_window = _window_of(node.this) is not None
    for sub in _inside(node.expression):
        if isinstance(sub, exp.Window):
            raise _error("window function calls cannot be nested" if in_window else
                         "aggregate function calls cannot contain window function calls",
                         sql, sub)
        if isinstance(sub, exp.AggFunc) and not in_window and _window_of(sub) is None \
                and not isinstance(sub, _GROUPING):
            raise _error("aggregate functions are not allowed in FILTER", sql, sub)


def _check_ordered_set(node: exp.Expression, sql: str) -> None:
    """WITHIN GROUP only on DuckDB's ordered-set aggregates (sqlglot folds ``listagg(...)
    WITHIN GROUP (ORDER BY ...)`` into an ordered listagg: the parser noted it)."""
    if isinstance(node, exp.GroupConcat):
        if not node.meta.get(WITHIN_GROUP):
            return
        call = node
    else:
        call = node.this
    written = written_call(call)
    name = (written[0] if written else call.sql_name()).lower()
    if isinstance(node, exp.GroupConcat) or name not in _ORDERED_SET:
        raise _error(f'Unknown ordered aggregate "{name}" (WITHIN GROUP is for '
                     "percentile_cont, percentile_disc and mode; order other aggregates "
                     f"inside the call: {name}(x ORDER BY y))", sql, call)


def _check_order(order: exp.Order, sql: str) -> None:
    """ORDER BY in an aggregate call or a query: no non-integer constant; a query's integer
    is an output position, 1 to the number of columns."""
    owner = order.parent
    in_call = isinstance(owner, exp.AggFunc)
    if not in_call and not isinstance(owner, (exp.Select, exp.SetOperation)):
        return  # a window's ORDER BY, WITHIN GROUP
    for ordered in order.expressions:
        key = ordered.this
        if _non_integer_constant(key):
            raise _error("ORDER BY non-integer literal has no effect", sql, key)
        position = _integer(key)
        if not in_call and position is not None and position < 1:
            width = _width(owner)
            limits = f" - should be between 1 and {width}" if width else ""
            raise _error(f"ORDER term out of range{limits}", sql, key)


def _non_integer_constant(node: exp.Expression) -> bool:
    if isinstance(node, (exp.Null, exp.Boolean)):
        return True
    if isinstance(node, exp.Neg):
        node = node.this
    return isinstance(node, exp.Literal) and (node.is_string or _integer(node) is None)


def _integer(node: exp.Expression) -> int | None:
    """The value of an integer constant (``3``, ``-1``), or None."""
    sign = 1
    if isinstance(node, exp.Neg):
        node, sign = node.this, -1
    if isinstance(node, exp.Literal) and not node.is_string and node.this.isdigit():
        return sign * int(node.this)
    return None


def _width(query: exp.Expression) -> int | None:
    """How many columns a query's select list has, when it has no ``*``."""
    while isinstance(query, exp.SetOperation):
        query = query.this
    if not isinstance(query, exp.Select) or any(e.is_star for e in query.expressions):
        return None
    return len(query.expressions)
